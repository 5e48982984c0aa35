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

/// Runs `scripts/ensure-ci-tools` once per test program (the SARIF schema
/// and its validator, pre-commit, Neovim and pyte, each fetched when
/// missing); the schema's path.
pub fn ci_tools() -> String {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let ensure = Command::new(workspace().join("scripts/ensure-ci-tools"))
            .output()
            .expect("run scripts/ensure-ci-tools");
        assert!(
            ensure.status.success(),
            "scripts/ensure-ci-tools failed (it needs npm and python3, and root for Neovim): {}",
            String::from_utf8_lossy(&ensure.stderr)
        );
        String::from_utf8(ensure.stdout).expect("a path")
    })
    .clone()
}

/// A crate of its own for one test, under Cargo's scratch directory:
/// `Cargo.toml`, `src/lib.rs` holding `rust`, and `lua/` holding
/// `scripts` (name, text).
pub fn scratch_crate(name: &str, rust: &str, scripts: &[(&str, &str)]) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("crates")
        .join(name);
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("src")).expect("create src/");
    std::fs::create_dir_all(root.join("lua")).expect("create lua/");
    std::fs::write(
        root.join("Cargo.toml"),
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n"),
    )
    .expect("write Cargo.toml");
    std::fs::write(root.join("src/lib.rs"), rust).expect("write src/lib.rs");
    for (file, text) in scripts {
        let path = root.join("lua").join(file);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).expect("create a folder under lua/");
        }
        std::fs::write(path, text).expect("write a script");
    }
    root
}
