//! Property tests: the analysis never panics and keeps its invariants on
//! random bytes, random token soups and mutated corpus scripts.
//!
//! The seed is fixed so the suite is reproducible; explore new inputs with
//! `PROPTEST_RNG_SEED=<n> PROPTEST_CASES=<many> cargo test -p redis-script-macros proptests`.

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

use crate::{INTERNAL_ERROR, Signature, analyze};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/lua/corpus");

fn runner(cases: u32) -> TestRunner {
    let defaults = Config::default();
    let rng_seed = match std::env::var_os("PROPTEST_RNG_SEED") {
        Some(_) => defaults.rng_seed,
        None => RngSeed::Fixed(0x7265_6469_735f_6c75),
    };
    let cases = match std::env::var_os("PROPTEST_CASES") {
        Some(_) => defaults.cases,
        None => cases,
    };
    TestRunner::new(Config {
        cases,
        rng_seed,
        failure_persistence: None,
        ..defaults
    })
}

/// Analyses `source` under a few signatures and checks the invariants.
fn check(source: &str) -> Result<(), TestCaseError> {
    let signatures = [
        Signature::default(),
        Signature {
            keys: 2,
            args: 1,
            variadic_keys: true,
            ..Signature::default()
        },
    ];
    // The same code as the callback of a library function, whose
    // parameters are named like the script's globals.
    let library = format!(
        "#!lua name=fuzz\nredis.register_function('f', function(KEYS, ARGV)\n{source}\nend)"
    );
    let declaration = crate::LibrarySignature {
        functions: vec![crate::DeclaredFunction {
            name: "f".to_string(),
            signature: signatures[1].clone(),
        }],
        ..crate::LibrarySignature::default()
    };
    let as_function = crate::analyze_library(&library, &declaration).diagnostics;
    check_diagnostics(&library, &as_function)?;
    for signature in &signatures {
        let analysis = analyze(source, signature);
        check_diagnostics(source, &analysis.diagnostics)?;
    }
    check_sent_wrappers(source)
}

/// Any script that parses, also as a function body, still parses wrapped
/// as it is sent (plain and `exactly_once`), and each of its lines keeps
/// its number. (The parser
/// accepts some text at the top level only, such as `return return`,
/// which Lua itself refuses anywhere.)
fn check_sent_wrappers(source: &str) -> Result<(), TestCaseError> {
    let parses = |text: &str| crate::source::syntax::Prepared::new(text).parse().is_ok();
    let (_, body) = source.split_at(if source.starts_with("#!") {
        source.find('\n').map_or(source.len(), |end| end + 1)
    } else {
        0
    });
    if !parses(source) || !parses(&format!("local function f(...) {body}\nend")) {
        return Ok(());
    }
    let analysis = analyze(source, &Signature::default());
    for exactly_once in [false, true] {
        let wrapped = crate::emit::sent::script(source, &analysis, exactly_once);
        prop_assert!(
            crate::source::syntax::Prepared::new(&wrapped)
                .parse()
                .is_ok(),
            "the wrapper of {source:?} does not parse:\n{wrapped}"
        );
        let mut wrapped_lines = wrapped.lines();
        for (index, line) in source.lines().enumerate() {
            let kept = wrapped_lines
                .next()
                .is_some_and(|wrapped| wrapped.ends_with(line));
            prop_assert!(kept, "line {} of {source:?} moved:\n{wrapped}", index + 1);
        }
    }
    Ok(())
}

/// No internal error, positions inside the file and sorted, a hint each.
fn check_diagnostics(source: &str, diagnostics: &[crate::Diagnostic]) -> Result<(), TestCaseError> {
    for diagnostic in diagnostics {
        prop_assert!(
            !diagnostic.message.starts_with(INTERNAL_ERROR),
            "panicked on {source:?}"
        );
        prop_assert!(diagnostic.line >= 1 && diagnostic.column >= 1 && diagnostic.width >= 1);
        prop_assert!(diagnostic.help.is_some(), "{diagnostic:?}");
        let _ = diagnostic.render("fuzz.lua", source);
    }
    let positions: Vec<_> = diagnostics.iter().map(|d| (d.line, d.column)).collect();
    prop_assert!(positions.windows(2).all(|pair| pair[0] <= pair[1]));
    Ok(())
}

fn corpus() -> Vec<String> {
    let mut scripts: Vec<_> = std::fs::read_dir(CORPUS)
        .expect("corpus directory")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "lua"))
        .collect();
    scripts.sort();
    scripts
        .iter()
        .map(|path| std::fs::read_to_string(path).expect("script"))
        .collect()
}

const TOKENS: &[&str] = &[
    "local",
    "function",
    "end",
    "if",
    "then",
    "else",
    "elseif",
    "for",
    "in",
    "do",
    "while",
    "repeat",
    "until",
    "return",
    "break",
    "and",
    "or",
    "not",
    "nil",
    "true",
    "false",
    "=",
    "==",
    "~=",
    "<",
    ">",
    "..",
    "...",
    "+",
    "-",
    "*",
    "/",
    "%",
    "^",
    "#",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    ":",
    ".",
    "KEYS",
    "ARGV",
    "redis",
    "call",
    "pcall",
    "x",
    "y",
    "1",
    "0",
    "-1",
    "'GET'",
    "'SET'",
    "'k'",
    "unpack",
    "ipairs",
    "error",
    "err",
    "ok",
    "//",
    "&",
    "|",
    "~",
    "<<",
    "goto",
    "::",
    "<const>",
    "\n",
    "--[[",
    "]]",
    "[[",
    "\"",
    "'",
    "#!lua",
    "flags=no-writes",
];

#[test]
fn never_panics_on_random_bytes() {
    let ran = AtomicUsize::new(0);
    runner(1500)
        .run(&proptest::collection::vec(any::<u8>(), 0..400), |bytes| {
            ran.fetch_add(1, Ordering::Relaxed);
            check(&String::from_utf8_lossy(&bytes))
        })
        .expect("no failure");
    println!("random bytes: {} inputs", ran.load(Ordering::Relaxed));
}

#[test]
fn never_panics_on_token_soup() {
    let ran = AtomicUsize::new(0);
    let token = proptest::sample::select(TOKENS);
    runner(2500)
        .run(&proptest::collection::vec(token, 0..120), |tokens| {
            ran.fetch_add(1, Ordering::Relaxed);
            check(&tokens.join(" "))
        })
        .expect("no failure");
    println!("token soup: {} inputs", ran.load(Ordering::Relaxed));
}

/// One edit of a script: delete, insert or duplicate a character, or
/// delete or duplicate a whitespace-separated token.
#[derive(Debug, Clone)]
enum Mutation {
    DeleteChar(usize),
    InsertChar(usize, char),
    DuplicateChar(usize),
    DeleteToken(usize),
    DuplicateToken(usize),
    InsertToken(usize, &'static str),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteChar),
        (any::<usize>(), any::<char>()).prop_map(|(at, c)| Mutation::InsertChar(at, c)),
        any::<usize>().prop_map(Mutation::DuplicateChar),
        any::<usize>().prop_map(Mutation::DeleteToken),
        any::<usize>().prop_map(Mutation::DuplicateToken),
        (any::<usize>(), proptest::sample::select(TOKENS))
            .prop_map(|(at, token)| Mutation::InsertToken(at, token)),
    ]
}

fn apply(source: &str, mutation: &Mutation) -> String {
    let mut chars: Vec<char> = source.chars().collect();
    let mut tokens: Vec<&str> = source.split(' ').collect();
    let char_at = |at: usize| at % chars.len().max(1);
    let token_at = |at: usize| at % tokens.len().max(1);
    match mutation {
        Mutation::DeleteChar(at) if !chars.is_empty() => {
            chars.remove(char_at(*at));
        }
        Mutation::InsertChar(at, c) => chars.insert(char_at(*at), *c),
        Mutation::DuplicateChar(at) if !chars.is_empty() => {
            let at = char_at(*at);
            chars.insert(at, chars[at]);
        }
        Mutation::DeleteToken(at) if !tokens.is_empty() => {
            tokens.remove(token_at(*at));
            return tokens.join(" ");
        }
        Mutation::DuplicateToken(at) if !tokens.is_empty() => {
            let at = token_at(*at);
            tokens.insert(at, tokens[at]);
            return tokens.join(" ");
        }
        Mutation::InsertToken(at, token) => {
            let at = token_at(*at);
            tokens.insert(at, token);
            return tokens.join(" ");
        }
        _ => {}
    }
    chars.into_iter().collect()
}

#[test]
fn never_panics_on_mutated_corpus_scripts() {
    let scripts = corpus();
    let ran = AtomicUsize::new(0);
    let strategy = (
        0..scripts.len(),
        proptest::collection::vec(mutation(), 1..4),
    );
    runner(1200)
        .run(&strategy, |(index, mutations)| {
            ran.fetch_add(1, Ordering::Relaxed);
            let mut source = scripts[index].clone();
            for mutation in &mutations {
                source = apply(&source, mutation);
            }
            check(&source)
        })
        .expect("no failure");
    println!(
        "mutated corpus scripts: {} inputs",
        ran.load(Ordering::Relaxed)
    );
}
