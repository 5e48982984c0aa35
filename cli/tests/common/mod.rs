//! What the checker's integration tests share: running the built binary
//! and comparing with snapshots.

#![allow(dead_code)] // Each test file uses its own part.

pub mod lsp;

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the checker from `directory`, so paths print as given.
pub fn run_in(directory: &Path, arguments: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_redis-script-check"))
        .args(arguments)
        .current_dir(directory)
        .output()
        .expect("run redis-script-check");
    Run {
        status: output.status.code().expect("exit status"),
        stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    }
}

/// Runs the checker from `tests/`, where the fixtures are.
pub fn run(arguments: &[&str]) -> Run {
    run_in(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
        arguments,
    )
}

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace directory")
        .to_path_buf()
}

/// `actual` equals `tests/snapshots/<name>`; `SNAPSHOTS=overwrite` writes
/// it there instead.
pub fn assert_snapshot(name: &str, actual: &str) {
    let snapshot = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("SNAPSHOTS").is_some_and(|mode| mode == "overwrite") {
        std::fs::write(&snapshot, actual).expect("write the snapshot");
    }
    let expected = std::fs::read_to_string(&snapshot).expect("read the snapshot");
    assert_eq!(actual, expected);
}
