//! Scripts and library functions built at run time from their source, as
//! `#[redis_script]` and `#[redis_library]` embed them (the source sent,
//! its SHA1, the twin a function is called by), for the tests that
//! generate their scripts. Each is leaked: it lives as long as the test.

use redis_script::__private_v3::{
    exactly_once, new_function, new_library, new_script, with_exactly_once,
};
use redis_script::Script;
use redis_script_analysis::{
    Analysis, DeclaredFunction, LibrarySignature, Signature, analyze, analyze_library, sent,
};

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

fn sha1(text: &str) -> String {
    sha1_smol::Sha1::from(text).digest().to_string()
}

/// The script `name` of `source`, declared with `signature` (and
/// `exactly_once`), with its analysis.
pub fn script(
    name: &'static str,
    source: &str,
    signature: &Signature,
    once: bool,
) -> (&'static Script, Analysis) {
    let analysis = analyze(source, signature);
    let sent = sent::script(source, &analysis, once);
    let digest = sha1(&sent);
    let script = new_script(
        name,
        "generated.lua",
        leak(sent),
        leak(digest),
        analysis.read_only,
        false,
    );
    let script = if once {
        with_exactly_once(script, exactly_once(None, None, None))
    } else {
        script
    };
    (Box::leak(Box::new(script)), analysis)
}

/// The function `function`, declared with `signature`, of the library
/// `library` whose code is `source`.
pub fn function(
    library: &'static str,
    function: &'static str,
    source: &str,
    signature: &Signature,
) -> &'static Script {
    let analysis = analyze_library(
        source,
        &LibrarySignature {
            functions: vec![DeclaredFunction {
                name: function.to_owned(),
                signature: signature.clone(),
            }],
            ..LibrarySignature::default()
        },
    );
    let sent = sent::library(source, &analysis);
    let called_as = leak(sent.function_name(function));
    let digest = sha1(&sent.source);
    let library = Box::leak(Box::new(new_library(
        library,
        "generated_lib.lua",
        leak(sent.source),
        leak(digest),
        Box::leak(Box::new([function])),
    )));
    Box::leak(Box::new(new_function(
        library, function, called_as, false, false,
    )))
}
