//! The scripts of `tests/lua/corpus`, which the benchmark programs read.

use std::path::Path;

/// Every corpus script, `(name, source)`, by name.
pub fn scripts() -> Vec<(String, String)> {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/lua/corpus");
    let mut corpus: Vec<(String, String)> = std::fs::read_dir(&directory)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", directory.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "lua"))
        .map(|path| {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let source = std::fs::read_to_string(&path).unwrap_or_default();
            (name, source)
        })
        .collect();
    corpus.sort();
    corpus
}

/// One chunk holding every corpus script as a local function, repeated
/// until it has at least `min_lines` lines.
pub fn one_chunk(corpus: &[(String, String)], min_lines: usize) -> String {
    let mut chunk = String::new();
    let mut round = 0;
    while chunk.lines().count() < min_lines {
        for (name, source) in corpus {
            let body: String = source
                .lines()
                .filter(|line| !line.starts_with("#!"))
                .map(|line| format!("  {line}\n"))
                .collect();
            chunk.push_str(&format!("local function {name}_{round}()\n{body}end\n"));
        }
        round += 1;
    }
    chunk.push_str("return 1\n");
    chunk
}
