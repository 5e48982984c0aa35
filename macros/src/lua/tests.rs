//! Rule-by-rule tests of the analysis: known-bad snippets with their exact
//! messages, scope edge cases that must not be flagged, the corpus of
//! correct scripts, and property tests that it never panics.

use super::*;

fn signature(keys: usize, args: usize) -> Signature {
    Signature {
        keys,
        args,
        ..Signature::default()
    }
}

/// `line:column+width message` of every error.
fn errors(source: &str, signature: &Signature) -> Vec<String> {
    analyze(source, signature)
        .errors()
        .map(|d| format!("{}:{}+{} {}", d.line, d.column, d.width, d.message))
        .collect()
}

fn error_messages(source: &str, signature: &Signature) -> Vec<String> {
    analyze(source, signature)
        .errors()
        .map(|d| d.message.clone())
        .collect()
}

#[track_caller]
fn assert_clean(source: &str, signature: &Signature) {
    let analysis = analyze(source, signature);
    let errors: Vec<String> = analysis
        .errors()
        .map(|d| d.render("test.lua", source))
        .collect();
    assert!(
        errors.is_empty(),
        "unexpected errors:\n{}",
        errors.join("\n")
    );
}

#[test]
fn smoke() {
    assert_clean(
        "local v = redis.call('GET', KEYS[1])\nif v == ARGV[1] then return redis.call('DEL', KEYS[1]) end\nreturn 0\n",
        &signature(1, 1),
    );
    println!(
        "{:?}",
        errors("x = 1\nreturn redsi.call('GET', KEYS[2])", &signature(1, 0))
    );
    println!("{:?}", error_messages("return 1", &signature(0, 0)));
}
