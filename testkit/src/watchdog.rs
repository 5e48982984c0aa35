//! Servers never outlive the test process, however it ends.
//!
//! Dropping a server's handle kills it, also while a panicking test
//! unwinds. A process killed outright (`SIGKILL`, a test harness's timeout,
//! an aborting panic) runs no destructor: for that, every server gets a
//! watchdog, a shell that waits on a pipe whose only writer is the test
//! process. When the test process dies, the kernel closes its end, the
//! shell's `read` returns, and it kills the server and removes its
//! directory. The pipe is never written to.

use std::path::Path;
use std::process::{Child, Command, Stdio};

/// The script the watchdog shell runs: `$1` is the server's pid, `$2` its
/// directory. `read` ends only when the pipe closes. It ignores the
/// signals that end a process group (a harness stopping its tests with
/// `SIGTERM`): the server may outlive a `SIGTERM` of its own, as one
/// running a script that cannot be killed does, so the watchdog must
/// outlive the test process to kill it.
const WATCH: &str = "trap '' TERM INT HUP; read -r _; kill -9 \"$1\" 2>/dev/null; rm -rf \"$2\"";

/// A shell watching the test process on behalf of one server process.
#[derive(Debug)]
pub(crate) struct Watchdog {
    shell: Child,
}

impl Watchdog {
    /// Watches over `pid`, whose files are in `dir`. `None` when no shell
    /// can be started: the handle's destructor still stops the server.
    pub(crate) fn guard(pid: u32, dir: &Path) -> Option<Watchdog> {
        Command::new("sh")
            .arg("-c")
            .arg(WATCH)
            .arg("redis-script-test-watchdog")
            .arg(pid.to_string())
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()
            .map(|shell| Watchdog { shell })
    }

    /// Stands down before the server is stopped by its handle: killed
    /// first, so that it never signals a pid the system may have reused.
    pub(crate) fn stand_down(mut self) {
        let _ = self.shell.kill();
        let _ = self.shell.wait();
    }
}
