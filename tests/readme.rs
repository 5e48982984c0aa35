//! The README's Getting started writes the example's files with shell
//! here-documents, so a reader copies nothing: these tests keep what it
//! writes identical to the example the README shows, and the script to the
//! one the examples crate compiles; the test crate's README shows the
//! compiled tests of examples/tests.

const README: &str = include_str!("../README.md");
const TESTING: &str = include_str!("../testkit/README.md");
const SCRIPT: &str = include_str!("../lua/rate_limit_fixed.lua");

/// The body of the first fenced block of `language` after `heading` in
/// the README.
fn block_after<'a>(heading: &str, language: &str) -> &'a str {
    block_in(README, heading, language)
}

/// The body of the first fenced block of `language` after `heading` in
/// `text`.
fn block_in<'a>(text: &'a str, heading: &str, language: &str) -> &'a str {
    let section = &text[text.find(heading).unwrap_or_else(|| panic!("no {heading}"))..];
    let fence = format!("```{language}\n");
    let start = section
        .find(&fence)
        .unwrap_or_else(|| panic!("no {fence} after {heading}"))
        + fence.len();
    let body = &section[start..];
    &body[..body
        .find("```\n")
        .unwrap_or_else(|| panic!("unclosed {fence}"))]
}

/// The body of the here-document that writes `path` in `commands`.
fn here_document<'a>(commands: &'a str, path: &str) -> &'a str {
    let opening = format!("cat > {path} <<'EOF'\n");
    let start = commands
        .find(&opening)
        .unwrap_or_else(|| panic!("nothing writes {path}"))
        + opening.len();
    let body = &commands[start..];
    &body[..body
        .find("\nEOF\n")
        .unwrap_or_else(|| panic!("unclosed here-document for {path}"))
        + 1]
}

/// A script without its leading comment lines.
fn code(script: &str) -> &str {
    let first_code = script
        .lines()
        .find(|line| !line.starts_with("--"))
        .unwrap_or_default();
    &script[script.find(first_code).unwrap_or_default()..]
}

#[test]
fn testing_your_scripts_shows_the_compiled_tests() {
    let compiled = include_str!("../examples/tests/testing_your_scripts.rs");
    assert_eq!(
        block_in(TESTING, "## Testing your scripts", "rust,ignore"),
        compiled.replace("\"../lua/", "\"lua/"),
        "the README's tests differ from examples/tests/testing_your_scripts.rs"
    );
}

#[test]
fn testing_on_a_cluster_shows_the_compiled_tests() {
    let section = &TESTING[TESTING
        .find("## Testing your scripts")
        .expect("the section")..];
    let details = &section[section.find("<details>").expect("the details")..];
    let compiled = include_str!("../examples/tests/testing_on_a_cluster.rs");
    let start = details.find("```rust,ignore\n").expect("the block") + "```rust,ignore\n".len();
    let end = start + details[start..].find("```\n").expect("the block's end");
    assert_eq!(
        &details[start..end],
        compiled.replace("\"../lua/", "\"lua/"),
        "the README's cluster tests differ from examples/tests/testing_on_a_cluster.rs"
    );
}

#[test]
fn the_cluster_section_shows_the_queue_script() {
    assert_eq!(
        code(block_after("## Redis Cluster", "lua")),
        code(include_str!("../lua/enqueue_job.lua")),
        "the README's queue script differs from lua/enqueue_job.lua"
    );
}

#[test]
fn getting_started_writes_the_example_script() {
    let commands = block_after("## Getting started", "sh");
    let shown = block_after("## Example", "lua");
    assert_eq!(here_document(commands, "lua/rate_limit_fixed.lua"), shown);
    assert_eq!(
        code(shown),
        code(SCRIPT),
        "the README's script differs from lua/rate_limit_fixed.lua"
    );
}

#[test]
fn getting_started_writes_the_example_program() {
    let commands = block_after("## Getting started", "sh");
    let shown = block_after("## Example", "rust,ignore");
    assert_eq!(here_document(commands, "src/main.rs"), shown);
}

#[test]
fn getting_started_sets_a_target() {
    let config = here_document(
        block_after("## Getting started", "sh"),
        ".cargo/config.toml",
    );
    assert!(config.contains("[env]\nREDIS_SCRIPT_TARGET = "), "{config}");
}
