#!/usr/bin/env python3
"""Measure the value checker's recall on the corpus of real scripts.

Each mutation operator injects one class of value bug into the fetched
scripts (corpus/fetch.py) the way people write it: `== false` turned into
`== nil`, a `tonumber` dropped from a comparison, a default (`or 0`)
dropped, `== '1'` turned into `== 1`, a `#t > 0` guard dropped, a
`math.floor` dropped around a division, `== 1` dropped from a test of an
integer reply, the `break` or `return` of a `while true` loop dropped (the
mutant then runs until the server answers BUSY). A mutant counts only when it really misbehaves: the
original and the mutant run on a live redis-server with the same inputs
(an empty database, then the same keys with several argument vectors) and
differ in reply, error or data, on inputs where two runs of the original
agree (each comparison is made twice; keys about to expire are left out of
the data compared). A dropped `math.floor` counts only where Redis refuses
the fraction on a line that uses the mutated value itself, and a dropped
length guard only where Redis refuses the empty spread. Then the
checker runs on the mutant, and the mutant is caught when
it has a finding of the operator's classes that the original does not
have, on the mutated line (or, for a dropped default or guard, where the
value it changed is used).

    python3 corpus/mutate.py [--server PATH] [--verbose]

Prints a table per operator: mutants, kept (misbehave live), caught, and
every kept mutant that is missed. Exit status 1 when one is missed.
Python 3, standard library only; redis-server from PATH (or --server).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "target" / "corpus"
CHECKER = ROOT / "target" / "release" / "redis-script-check"

# The argument vectors every script runs with.
# Numbers only: a caller of a typed signature passes numbers where the
# script converts them, and any string where it does not.
ARGUMENT_VALUES = ["1", "0", "10"]


@dataclass
class Mutant:
    operator: str
    project: str
    script: str
    line: int
    before: str
    after: str
    text: str
    # The local the mutated line assigns, when a finding may name it where
    # it is used instead.
    assigned: str | None = None


@dataclass(frozen=True)
class Operator:
    name: str
    classes: frozenset[str]
    describe: str


OPERATORS = {
    "eq_false_to_nil": Operator(
        "eq_false_to_nil", frozenset({"constant_equality"}), "`== false` becomes `== nil`"
    ),
    "string_to_number": Operator(
        "string_to_number", frozenset({"constant_equality"}), "`== '1'` becomes `== 1`"
    ),
    "drop_tonumber": Operator(
        "drop_tonumber",
        frozenset({"mismatched_comparison", "constant_equality", "nil_value"}),
        "`tonumber(x) < n` becomes `x < n`",
    ),
    "drop_default": Operator(
        "drop_default",
        frozenset({"nil_value", "refused_argument", "reply_hole"}),
        "`x or 0` becomes `x`",
    ),
    "drop_length_guard": Operator(
        "drop_length_guard", frozenset({"empty_unpack"}), "`#t > 0` becomes `true`"
    ),
    "drop_floor": Operator(
        "drop_floor",
        frozenset({"fractional_argument", "fractional_reply"}),
        "`math.floor(a / b)` becomes `a / b`",
    ),
    "compare_to_truth": Operator(
        "compare_to_truth", frozenset({"always_true"}), "`if n == 1 then` becomes `if n then`"
    ),
    "drop_exit": Operator(
        "drop_exit", frozenset({"endless_loop"}), "`while true` loses its `break`/`return`"
    ),
}


def code_part(line: str) -> int:
    """Where the comment of `line` starts (or its length): mutations stay
    in code. Strings with `--` inside are rare enough to skip whole."""
    index = line.find("--")
    return len(line) if index < 0 else index


def balanced(text: str, open_at: int) -> int | None:
    """The index just past the `)` that closes the `(` at `open_at`."""
    depth = 0
    quote = None
    for index in range(open_at, len(text)):
        char = text[index]
        if quote:
            if char == "\\":
                continue
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


COMPARISON = r"(?:==|~=|<=|>=|<|>)"
LOCAL_ASSIGNED = re.compile(r"^\s*(?:local\s+)?([A-Za-z_]\w*)\s*=[^=]")


def line_mutations(line: str, text: str, later: str):
    """Yields (operator, mutated line) for one line of code."""
    end = code_part(line)
    code = line[:end]

    for match in re.finditer(r"(==|~=)\s*false\b", code):
        yield "eq_false_to_nil", line[: match.start()] + match.group(1) + " nil" + line[match.end():]

    for match in re.finditer(r"(==|~=)\s*(['\"])(-?\d+)\2", code):
        yield "string_to_number", line[: match.start()] + f"{match.group(1)} {match.group(3)}" + line[match.end():]

    for match in re.finditer(r"\btonumber\s*\(", code):
        close = balanced(line, match.end() - 1)
        if close is None or close > end:
            continue
        inner = line[match.end(): close - 1]
        after = line[close:end]
        before = line[: match.start()]
        if re.match(rf"\s*{COMPARISON}\s*[\w(#'\"-]", after) or re.search(rf"{COMPARISON}\s*$", before):
            # A second argument (a base) would change the meaning.
            if _top_level_comma(inner):
                continue
            yield "drop_tonumber", before + inner + line[close:]

    for match in re.finditer(r"\s+or\s+(-?\d+|'[^']*'|\"[^\"]*\")", code):
        # `c and a or b` is a conditional, not a default.
        if re.search(r"\band\b", code[: match.start()]):
            continue
        yield "drop_default", line[: match.start()] + line[match.end():]

    for match in re.finditer(r"#\s*([A-Za-z_]\w*)\s*>\s*0\b", code):
        if re.search(rf"unpack\s*\(\s*{re.escape(match.group(1))}\b", later):
            yield "drop_length_guard", line[: match.start()] + "true" + line[match.end():]

    for match in re.finditer(r"\bmath\.floor\s*\(", code):
        close = balanced(line, match.end() - 1)
        if close is None or close > end:
            continue
        inner = line[match.end(): close - 1]
        if "/" in inner:
            yield "drop_floor", line[: match.start()] + "(" + inner + ")" + line[close:]

    for match in re.finditer(r"\b(if|elseif|while)\s+(.+?)\s*(==\s*1|~=\s*0|>\s*0)\s+(then|do)\b", code):
        tested = match.group(2)
        if tested.startswith("(") or "==" in tested or " and " in tested or " or " in tested:
            continue
        yield "compare_to_truth", line[: match.start(2)] + tested + " " + match.group(4) + line[match.end():]


def _top_level_comma(inner: str) -> bool:
    depth = 0
    for char in inner:
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        elif char == "," and depth == 0:
            return True
    return False


def comment_lines(lines: list[str]) -> set[int]:
    """The (1-based) lines inside `--[[ … ]]` comments or starting with `--`."""
    inside = set()
    closing = None
    for number, line in enumerate(lines, start=1):
        if closing:
            inside.add(number)
            if closing in line:
                closing = None
            continue
        stripped = line.lstrip()
        opened = re.match(r"--\[(=*)\[", stripped)
        if opened:
            inside.add(number)
            closing = "]" + opened.group(1) + "]"
            if closing in stripped[opened.end():]:
                closing = None
        elif stripped.startswith("--"):
            inside.add(number)
    return inside


def enclosing_loop(lines: list[str], number: int) -> int | None:
    """The (1-based) line of the innermost loop around line `number`, read
    from the indentation: the nearest line above, less indented, that opens
    a `while`, `for` or `repeat`."""
    indent = len(lines[number - 1]) - len(lines[number - 1].lstrip())
    for above in range(number - 1, 0, -1):
        line = lines[above - 1]
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if depth < indent:
            if re.match(r"\s*(while|for|repeat)\b", line):
                return above
            indent = depth
            if re.match(r"\s*(local\s+)?function\b", line):
                return None
    return None


def mutants(project: str, script: str, text: str):
    lines = text.split("\n")
    comments = comment_lines(lines)
    for number, line in enumerate(lines, start=1):
        if number in comments:
            continue
        later = "\n".join(lines[number - 1:])
        mutations = list(line_mutations(line, text, later))
        loop = enclosing_loop(lines, number)
        if loop is not None and re.fullmatch(r"\s*while\s+(true|1)\s+do\s*", lines[loop - 1]):
            code = line[: code_part(line)]
            for match in re.finditer(r"\bbreak\b", code):
                mutations.append(("drop_exit", line[: match.start()] + line[match.end():]))
            # A `return` alone on its line (its value complete on it).
            returned = re.fullmatch(r"(\s*)return\b(.*)", code)
            if returned and returned.group(2).count("(") == returned.group(2).count(")"):
                mutations.append(("drop_exit", returned.group(1)))
        for operator, mutated in mutations:
            if mutated == line:
                continue
            changed = lines[: number - 1] + [mutated] + lines[number:]
            assigned = LOCAL_ASSIGNED.match(line)
            yield Mutant(
                operator, project, script, number, line.strip(), mutated.strip(), "\n".join(changed),
                assigned.group(1) if assigned else None,
            )


# --- the checker ---------------------------------------------------------

def signature(text: str) -> list[str]:
    """The keys and arguments the script reads, as checker options: the
    highest literal index of each, variadic when it is also read whole or
    at a computed index."""
    options = []
    for table, option in (("KEYS", "--keys"), ("ARGV", "--args")):
        literal = [int(n) for n in re.findall(rf"\b{table}\s*\[\s*(\d+)\s*\]", text)]
        variadic = bool(re.search(rf"\b{table}\s*\[\s*[^\d\s]|#\s*{table}\b|\b{table}\s*[,)]", text))
        options += [option, f"{max(literal, default=0)}{'+' if variadic else ''}"]
    return options


def findings(path: Path, text: str) -> set[tuple[str, int]]:
    run = subprocess.run(
        [str(CHECKER), *signature(text), "--allow-unused", "--dynamic-keys", "--format", "json", str(path)],
        capture_output=True, text=True, check=False,
    )
    report = json.loads(run.stdout)
    return {
        (diagnostic["finding"], diagnostic["line"])
        for diagnostic in report["diagnostics"]
        if diagnostic.get("finding")
    }


def caught(mutant: Mutant, found: set, original: set) -> bool:
    classes = OPERATORS[mutant.operator].classes
    new = {(name, line) for name, line in found - original if name in classes}
    if any(line == mutant.line for _, line in new):
        return True
    # A loop with no way out is reported at its head, above the break.
    if mutant.operator == "drop_exit" and any(line < mutant.line for _, line in new):
        return True
    # A dropped default or guard shows where the value it changed is used.
    if mutant.operator in ("drop_default", "drop_length_guard"):
        lines = mutant.text.split("\n")
        for _, line in new:
            if line <= mutant.line:
                continue
            if mutant.operator == "drop_length_guard" or (
                mutant.assigned and re.search(rf"\b{re.escape(mutant.assigned)}\b", lines[line - 1])
            ):
                return True
    return False


# --- the live server -----------------------------------------------------

class RedisError(Exception):
    pass


class Connection:
    def __init__(self, port: int, timeout: float = 5.0):
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buffer = b""

    def close(self):
        self.socket.close()

    def command(self, *parts):
        encoded = [part if isinstance(part, bytes) else str(part).encode() for part in parts]
        payload = b"*%d\r\n" % len(encoded) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in encoded)
        self.socket.sendall(payload)
        return self.reply()

    def line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            chunk = self.socket.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def exactly(self, count: int) -> bytes:
        while len(self.buffer) < count + 2:
            chunk = self.socket.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count + 2:]
        return data

    def reply(self):
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return ("status", rest)
        if kind == b"-":
            return RedisError(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            length = int(rest)
            return None if length < 0 else self.exactly(length)
        if kind == b"*":
            length = int(rest)
            return None if length < 0 else [self.reply() for _ in range(length)]
        raise ConnectionError(f"unexpected reply {line!r}")


class Server:
    def __init__(self, binary: str):
        self.binary = binary
        self.directory = tempfile.mkdtemp(prefix="mutate-")
        self.process = None
        self.port = 0
        self.start()

    def start(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.directory, "--busy-reply-threshold", "1000"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for _ in range(200):
            try:
                Connection(self.port).close()
                return
            except OSError:
                time.sleep(0.02)
        raise SystemExit(f"{self.binary} did not start")

    def restart(self):
        self.stop()
        self.start()

    def stop(self):
        if self.process:
            self.process.kill()
            self.process.wait()
            self.process = None

    def outcome(self, text: str, keys: list[str], args: list[str], setup: list[str] | None = None):
        """What one run does: the reply or error, then the data it left.
        `setup` first runs the original once with those arguments, so the
        run finds the data the script itself keeps."""
        try:
            connection = Connection(self.port)
        except OSError:
            self.restart()
            connection = Connection(self.port)
        try:
            connection.command("FLUSHALL")
            if setup is not None:
                connection.command("EVAL", setup[0], len(keys), *keys, *setup[1])
            reply = connection.command("EVAL", text, len(keys), *keys, *args)
            if isinstance(reply, RedisError):
                # The script's name carries its SHA1, which every mutant changes.
                reply = re.sub(r"[0-9a-f]{40}", "<sha1>", str(reply))
            data = []
            for key in sorted(connection.command("KEYS", "*") or []):
                ttl = connection.command("PTTL", key)
                # A key about to expire may be gone by the next run's
                # snapshot: it tells nothing.
                if not isinstance(ttl, int) or 0 <= ttl < 5000 or ttl == -2:
                    continue
                data.append((key, connection.command("TYPE", key), connection.command("DUMP", key), ttl > 0))
            return (repr(reply), tuple(data))
        except (socket.timeout, ConnectionError):
            self.restart()
            return ("timeout",)
        finally:
            connection.close()


def inputs(text: str):
    """The keys and argument vectors a script runs with."""
    options = signature(text)
    keys = int(options[1].rstrip("+")) + (2 if options[1].endswith("+") else 0)
    args = int(options[3].rstrip("+")) + (2 if options[3].endswith("+") else 0)
    key_names = [f"{{m}}:k{index}" for index in range(1, keys + 1)]
    for value in ARGUMENT_VALUES:
        yield key_names, [value] * args, None
    # After a first call of the original: what the script finds on its
    # second call (a limiter's counter, a lock's owner).
    for first in ARGUMENT_VALUES:
        for value in ARGUMENT_VALUES:
            yield key_names, [value] * args, (text, [first] * args)


def value_names(mutant: "Mutant") -> set[str]:
    """The names that carry the mutated value: the local the mutated line
    assigns, or the local function it returns from, and the locals
    assigned from those."""
    lines = mutant.text.split("\n")
    names = {mutant.assigned} if mutant.assigned else set()
    if re.match(r"\s*return\b", lines[mutant.line - 1]):
        for line in reversed(lines[: mutant.line - 1]):
            function = re.match(r"\s*local\s+function\s+([A-Za-z_]\w*)", line)
            if function:
                names.add(function.group(1))
                break
    for line in lines:
        assigned = LOCAL_ASSIGNED.match(line)
        if assigned and any(re.search(rf"\b{re.escape(name)}\b", line.split("=", 1)[1]) for name in names):
            names.add(assigned.group(1))
    return names


def raised_where_used(mutant: "Mutant", error: str) -> bool:
    """The error names a line of the script that uses the mutated value
    itself, not one that reads back what it stored."""
    place = re.search(r"user_script:(\d+)", error)
    if not place:
        return False
    line = int(place.group(1))
    if line == mutant.line:
        return True
    text = mutant.text.split("\n")[line - 1]
    return any(re.search(rf"\b{re.escape(name)}\b", text) for name in value_names(mutant))


def differs(server: Server, mutant: "Mutant", original: str, keys, args, setup) -> bool:
    """One trial: the original, the mutant, the original, the mutant; the
    mutant differs when each run agrees with its own twin and not with the
    other (time and randomness make a twin disagree)."""
    expected = server.outcome(original, keys, args, setup)
    got = server.outcome(mutant.text, keys, args, setup)
    if expected != server.outcome(original, keys, args, setup):
        return False
    if got != server.outcome(mutant.text, keys, args, setup) or got == expected:
        return False
    # A fraction is this class's bug only where Redis refuses it (a double
    # argument takes it and stores another number), and only where the
    # script passes it on itself: a fraction stored in a score and read
    # back later is the reading line's assumption, there in the original.
    if mutant.operator == "drop_floor":
        return "not an integer" in got[0] and raised_where_used(mutant, got[0])
    # Likewise a dropped length guard is this class's bug where the server
    # refuses the empty spread; without the guard a script may also do
    # other work on an empty table (emit an event, set a marker), which no
    # check of values can tell from intended work.
    if mutant.operator == "drop_length_guard":
        return "Wrong number of args" in got[0]
    return True


def misbehaves(server: Server, original: str, mutant: "Mutant") -> bool:
    """The mutant does something else than the original on some input, in
    two trials out of two."""
    return any(
        all(differs(server, mutant, original, keys, args, setup) for _ in range(2))
        for keys, args, setup in inputs(original)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default=shutil.which("redis-server") or "redis-server")
    parser.add_argument("--verbose", action="store_true", help="list every kept mutant")
    options = parser.parse_args()
    index_path = CORPUS / "index.json"
    if not index_path.exists():
        raise SystemExit("run corpus/fetch.py first")
    if not CHECKER.exists():
        subprocess.run(["cargo", "build", "-q", "--release", "-p", "redis-script-check"], cwd=ROOT, check=True)

    out = CORPUS / "mutants"
    shutil.rmtree(out, ignore_errors=True)
    server = Server(options.server)
    counts = collections.defaultdict(collections.Counter)
    missed = []
    kept_list = []
    try:
        for entry in json.loads(index_path.read_text()):
            path = ROOT / entry["file"]
            text = path.read_text()
            original = None
            for number, mutant in enumerate(mutants(entry["project"], path.name, text)):
                counts[mutant.operator]["mutants"] += 1
                if not misbehaves(server, text, mutant):
                    continue
                counts[mutant.operator]["kept"] += 1
                if original is None:
                    original = findings(path, text)
                mutant_path = out / entry["project"] / f"{path.stem}.{number}.lua"
                mutant_path.parent.mkdir(parents=True, exist_ok=True)
                mutant_path.write_text(mutant.text)
                found = findings(mutant_path, mutant.text)
                where = f"{entry['project']}/{path.name}:{mutant.line}"
                if caught(mutant, found, original):
                    counts[mutant.operator]["caught"] += 1
                    kept_list.append(f"caught {mutant.operator:18} {where}: {mutant.after}")
                else:
                    missed.append(f"missed {mutant.operator:18} {where}: {mutant.before}  =>  {mutant.after}")
    finally:
        server.stop()
        shutil.rmtree(server.directory, ignore_errors=True)

    print(f"{'operator':18} {'injects':40} {'mutants':>7} {'kept':>5} {'caught':>6} {'recall':>7}")
    total = collections.Counter()
    for name, operator in OPERATORS.items():
        row = counts[name]
        total.update(row)
        recall = f"{100 * row['caught'] / row['kept']:.0f}%" if row["kept"] else "-"
        print(f"{name:18} {operator.describe:40} {row['mutants']:7} {row['kept']:5} {row['caught']:6} {recall:>7}")
    recall = f"{100 * total['caught'] / total['kept']:.0f}%" if total["kept"] else "-"
    print(f"{'all':18} {'':40} {total['mutants']:7} {total['kept']:5} {total['caught']:6} {recall:>7}")
    if options.verbose:
        print("\n".join(kept_list))
    print("\n".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
