"""What Neovim shows for a script with a mistake, as a terminal shows it.

Starts `nvim --clean` in a pseudo-terminal of 100 columns and 14 lines with
the checker's Neovim set-up (cli/editors/neovim.lua), opens FILE, waits
until the diagnostic's text is on the screen and the screen has been still
for a moment, opens the diagnostic's float on the cursor's line, and prints
the screen as text: what the README shows.

Usage: python3 screen.py SETUP FILE LINE WAITED_TEXT
(run from the crate holding FILE; the checker must be on PATH).
"""

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time

import pyte

COLUMNS, LINES = 100, 14
PATIENCE = 30.0


def main():
    setup, file, line, waited = sys.argv[1:5]
    screen = pyte.Screen(COLUMNS, LINES)
    stream = pyte.ByteStream(screen)
    leader, follower = pty.openpty()
    os.set_blocking(leader, False)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(COLUMNS), LINES=str(LINES))
    process = subprocess.Popen(
        ["nvim", "--clean", "--cmd", f"luafile {setup}", f"+{line}", file],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        close_fds=True,
    )
    os.close(follower)

    def pump(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([leader], [], [], 0.05)
            if ready:
                try:
                    stream.feed(os.read(leader, 65536))
                except OSError:
                    return

    def shown():
        return "\n".join(row.rstrip() for row in screen.display)

    def wait_for(text):
        end = time.monotonic() + PATIENCE
        while text not in shown():
            if time.monotonic() > end:
                process.kill()
                sys.exit(f"screen.py: `{text}` never appeared:\n{shown()}")
            pump(0.1)
        # Still for half a second: nothing left to draw.
        previous = None
        while previous != shown() and time.monotonic() < end:
            previous = shown()
            pump(0.5)

    try:
        wait_for(waited)
        os.write(leader, b":lua vim.diagnostic.open_float()\r")
        wait_for("help:")
        print(shown())
    finally:
        os.write(leader, b"\x1b:qa!\r")
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


if __name__ == "__main__":
    main()
