//! The guide's page of diagnostic codes (`runtime/src/doc/guide/codes.md`)
//! is the `Code` enum rendered: a table of every code, then every long
//! explanation; and the checks page's table of findings is its findings.
//! `SNAPSHOTS=overwrite` writes them anew after a change.

use std::path::Path;

use crate::Code;

const INTRO: &str = "\
# Diagnostic codes

Every diagnostic about a script carries a stable code: the attribute's
compile errors and warnings (`[RS011] lua/x.lua:3:28: …`), the command-line
checker (`error[RS011]: …`) and its JSON output (`\"code\": \"RS011\"`). A
code keeps its meaning across releases. `redis-script-check --explain RS011`
prints its explanation below, and `--explain all` the table.

The findings (the `RS1xx` codes) can be silenced where they are intended:
`-- redis-script: allow(name)` at the end of the line or on the line before
it, in the header comment for the whole script, `allow(name)` in the
attribute, or `--allow name` on the command line. An error is reported when
the problem happens on every run that reaches the line, a warning when it
depends on data, input or the servers of the target.

";

/// The page: the introduction, the table, the explanations one heading
/// level down.
fn page() -> String {
    let mut out = String::from(INTRO);
    out.push_str("| code | name | level | what it finds |\n| --- | --- | --- | --- |\n");
    for code in Code::ALL {
        out.push_str(&format!(
            "| {code} | `{}` | {} | {} |\n",
            code.name(),
            code.level().describe(),
            code.summary().replace('|', "\\|")
        ));
    }
    for code in Code::ALL {
        out.push('\n');
        let mut in_code = false;
        for line in code.explanation().lines() {
            if line.starts_with("```") {
                in_code = !in_code;
            } else if !in_code && line.starts_with('#') {
                out.push('#');
            }
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The findings' table of the checks page: each finding's name, level
/// and summary.
fn findings_table() -> String {
    let mut out = String::from("| finding | level | what it finds |\n| --- | --- | --- |\n");
    for code in Code::findings() {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            code.name(),
            code.level().describe(),
            code.summary().replace('|', "\\|")
        ));
    }
    out
}

/// `page` with the text between `<!-- findings -->` and `<!-- end of
/// findings -->` replaced by `table`.
fn with_findings(page: &str, table: &str) -> Option<String> {
    const START: &str = "<!-- findings -->\n";
    const END: &str = "<!-- end of findings -->";
    let start = page.find(START)? + START.len();
    let end = page[start..].find(END)? + start;
    Some(format!("{}{table}{}", &page[..start], &page[end..]))
}

#[test]
fn the_checks_page_lists_every_finding() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/src/doc/guide/checks.md");
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    let expected = with_findings(&written, &findings_table())
        .expect("the checks page marks where the findings' table goes");
    if std::env::var_os("SNAPSHOTS").is_some_and(|mode| mode == "overwrite") {
        std::fs::write(&path, &expected).expect("write the guide page");
    }
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        written == expected,
        "{} does not list the findings of the codes table: run the analysis tests with SNAPSHOTS=overwrite",
        path.display()
    );
}

#[test]
fn the_guide_lists_every_code_with_its_explanation() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/src/doc/guide/codes.md");
    let expected = page();
    if std::env::var_os("SNAPSHOTS").is_some_and(|mode| mode == "overwrite") {
        std::fs::write(&path, &expected).expect("write the guide page");
    }
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        written == expected,
        "{} is not the rendering of the codes: run the analysis tests with SNAPSHOTS=overwrite",
        path.display()
    );
}
