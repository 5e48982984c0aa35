//! The layers of the crate, kept apart: `source`, `model` and `domain`
//! never import the walk (`interp`), the findings or what is emitted, so
//! that the facts the walk computes with stay independent of how it walks.

use std::fs;
use std::path::{Path, PathBuf};

/// The folders of the lower layers, and the modules none of their files
/// may name.
const LOWER: &[&str] = &["source", "model", "domain"];
const HIGHER: &[&str] = &["interp", "findings", "emit"];

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files.push(path);
            }
        }
    }
    files
}

#[test]
fn lower_layers_never_import_the_walk() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut leaks = Vec::new();
    for layer in LOWER {
        for file in rust_files(&src.join(layer)) {
            let text = fs::read_to_string(&file).expect("a source file");
            for (number, line) in text.lines().enumerate() {
                for higher in HIGHER {
                    if line.contains(&format!("crate::{higher}"))
                        || line.contains(&format!("super::super::{higher}"))
                    {
                        leaks.push(format!(
                            "{}:{}: {}",
                            file.display(),
                            number + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "lower layers import higher ones:\n{}",
        leaks.join("\n")
    );
}
