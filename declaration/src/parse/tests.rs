//! The parsers on their own: what each accepts, and every message a
//! mistake gets, without a build of a user crate.

use proc_macro2::TokenStream;
use quote::quote;

use super::{Declaration, LibraryDeclaration};

/// The messages of a declaration that fails to parse (none when it parses).
fn messages(attribute: TokenStream, item: TokenStream) -> Vec<String> {
    match Declaration::parse(attribute, item) {
        Ok(_) => Vec::new(),
        Err(failure) => failure
            .errors
            .into_iter()
            .map(|error| error.to_string())
            .collect(),
    }
}

fn signature() -> TokenStream {
    quote!(
        async fn release(lock: &str, token: &str) -> i64;
    )
}

#[test]
fn a_complete_declaration_parses() {
    let attribute = quote!(
        path = "lua/release_lock.lua",
        keys = 1,
        allow_unused,
        allow(always_true)
    );
    let declaration = match Declaration::parse(attribute, signature()) {
        Ok(declaration) => declaration,
        Err(failure) => panic!("{}", failure.errors),
    };
    let options = &declaration.options;
    assert_eq!(
        (options.path.value(), options.keys),
        ("lua/release_lock.lua".to_string(), 1)
    );
    assert!(options.allow_unused && !options.dynamic_keys);
    assert_eq!(options.allow, ["always_true"]);
    assert_eq!(declaration.signature.key_params().len(), 1);
    assert_eq!(declaration.signature.arg_params().len(), 1);
}

#[test]
fn a_repeated_argument_is_reported_once_and_the_first_value_kept() {
    assert_eq!(
        messages(
            quote!(
                path = "a.lua",
                keys = 1,
                keys = 2,
                allow_unused,
                allow_unused
            ),
            signature()
        ),
        [
            "duplicate `keys` argument: give it once",
            "duplicate `allow_unused` argument: give it once"
        ]
    );
    assert_eq!(
        messages(quote!(path = "a.lua", path = "", keys = 1), signature()),
        ["duplicate `path` argument: give it once"]
    );
}

#[test]
fn a_misspelt_argument_is_suggested_and_not_reported_missing() {
    assert_eq!(
        messages(quote!(path = "a.lua", kyes = 1), signature()),
        ["unknown argument `kyes`: did you mean `keys`?"]
    );
    let missing = messages(quote!(path = "a.lua"), signature());
    assert_eq!(missing.len(), 1);
    assert!(missing[0].starts_with("missing `keys`: say how many leading parameters are KEYS"));
}

#[test]
fn values_of_the_wrong_form_are_refused() {
    assert_eq!(
        messages(quote!(path = "a.lua", keys = one), signature()),
        [
            "`keys` must be an integer literal: how many leading parameters are sent as KEYS, e.g. `keys = 2`"
        ]
    );
    assert_eq!(
        messages(
            quote!(path = "a.lua", keys = 1, dynamic_keys = true),
            signature()
        ),
        ["`dynamic_keys` is a flag and takes no value: write just `dynamic_keys`"]
    );
    assert_eq!(
        messages(quote!(path = "", keys = 1), signature()),
        ["`path` is empty: name the .lua file, e.g. `path = \"lua/lock.lua\"`"]
    );
}

#[test]
fn exactly_once_settings_are_checked_one_by_one() {
    let with = |settings: TokenStream| {
        messages(
            quote!(path = "a.lua", keys = 1, exactly_once(#settings)),
            signature(),
        )
    };
    assert_eq!(
        with(quote!(ttl_secs = 600, prefix = "once:", retries = 3)),
        Vec::<String>::new()
    );
    assert_eq!(
        with(quote!(ttl_secs = 600, ttl_secs = 60)),
        ["duplicate `ttl_secs` in `exactly_once(…)`: give it once"]
    );
    assert_eq!(
        with(quote!(retries = 101)),
        [
            "`retries` must be between 0 and 100: how many times a call is sent again after a connection failure or a timeout"
        ]
    );
    assert_eq!(
        with(quote!(prefix = "{once}")),
        [
            "`prefix` must be non-empty and without `{` or `}`: the record key adds its own hash tag to share the call's slot"
        ]
    );
    assert_eq!(
        with(quote!(tll_secs = 5)),
        ["unknown `exactly_once` setting `tll_secs`: did you mean `ttl_secs`?"]
    );
}

#[test]
fn key_prefixes_belong_on_arguments_of_calls_with_keys() {
    let item = quote!(
        async fn add(queue: &str, #[key_prefix] prefix: &str) -> i64;
    );
    assert_eq!(
        messages(quote!(path = "a.lua", keys = 1), item),
        Vec::<String>::new()
    );
    let on_a_key = quote!(
        async fn add(#[key_prefix] queue: &str) -> i64;
    );
    assert_eq!(
        messages(quote!(path = "a.lua", keys = 1), on_a_key),
        [
            "`queue` is a key parameter: keys the script builds by appending to a key are checked without `#[key_prefix]`; remove it"
        ]
    );
    let without_keys = quote!(
        async fn add(#[key_prefix] prefix: &str) -> i64;
    );
    assert_eq!(
        messages(quote!(path = "a.lua", keys = 0), without_keys).len(),
        1
    );
}

#[test]
fn a_library_takes_its_own_arguments_and_sends_the_others_to_functions() {
    let module = quote!(
        mod lib {
            #[function(keys = 1)]
            pub async fn peek(key: &str) -> Option<i64>;
        }
    );
    let parsed = |attribute: TokenStream| match LibraryDeclaration::parse(attribute, module.clone())
    {
        Ok(library) => Ok(library.functions.len()),
        Err(failure) => Err(failure
            .errors
            .into_iter()
            .map(|error| error.to_string())
            .collect::<Vec<_>>()),
    };
    assert_eq!(
        parsed(quote!(path = "lua/lib.lua", target = "redis-7.2")),
        Ok(1)
    );
    assert_eq!(
        parsed(quote!(path = "lua/lib.lua", keys = 1)),
        Err(vec!["`keys` belongs to each function: write it in `#[function(keys …)]` on the function's signature inside the module".to_string()])
    );
    assert_eq!(
        parsed(quote!(path = "lua/lib.lua", path = "lua/other.lua")),
        Err(vec!["duplicate `path` argument: give it once".to_string()])
    );
    assert_eq!(
        parsed(quote!(pth = "lua/lib.lua")),
        Err(vec![
            "unknown argument `pth`: did you mean `path`?".to_string(),
            "missing `path`: name the library's Lua file; expected `#[redis_library(path = \"lua/library.lua\")]` on a module, optionally with `target = \"redis-7.2\"` and `allow(finding, …)`".to_string()
        ])
    );
}
