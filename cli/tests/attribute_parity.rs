//! The command-line checker runs the attribute's checks: every `.lua` case
//! of the compile-fail suite (`tests/ui/*/*.rs` and the `.lua` files they
//! name) goes through `redis-script-check` with the declaration its `.rs`
//! case gives the attribute (keys, arguments, variadic lists, options,
//! the suite's declared commands), and the diagnostics placed in the
//! `.lua` file must be the same in both: code, message, line and column.
//!
//! The only difference allowed is who declares the parameters ("the Rust
//! function declares 1 key" / "the command line declares 1 key").
//! Diagnostics about a declared parameter itself (a key never read) point
//! at the Rust parameter in the attribute's output, so they are compared
//! by the suite itself, not here; so are library functions' declarations,
//! which a library file's header cannot give the command line.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::quote;

/// What an attribute case declares for its script.
#[derive(Debug, Default)]
struct Declared {
    lua: String,
    keys: usize,
    variadic_keys: bool,
    args: usize,
    variadic_args: bool,
    dynamic_keys: bool,
    allow_unused: bool,
    /// ARGV positions of the parameters marked `#[key_prefix]`.
    key_prefix_args: Vec<usize>,
    target: Option<String>,
    library: bool,
    /// The attribute refuses the declaration itself (no `keys`, an option
    /// it does not know, more keys than parameters) before the analysis.
    refused: bool,
}

/// The options of `#[redis_script]` and `#[redis_library]`.
const OPTIONS: &[&str] = &[
    "path",
    "keys",
    "returns",
    "errors",
    "allow_unused",
    "dynamic_keys",
    "target",
    "exactly_once",
];

/// One diagnostic placed in a `.lua` file: line, column, code, message,
/// and whether it is an error (else a warning).
type Placed = (usize, usize, String, String, bool);

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .join("tests")
}

/// `&[T]`, `&mut [T]`, `Vec<T>` and `&Vec<T>` spread into one element each
/// (the attribute's rule), except byte strings.
fn is_variadic(ty: &syn::Type) -> bool {
    let is_u8 = |ty: &syn::Type| quote!(#ty).to_string() == "u8";
    let vec_element = |ty: &syn::Type| -> Option<syn::Type> {
        let syn::Type::Path(path) = ty else {
            return None;
        };
        let segment = path.path.segments.last()?;
        if segment.ident != "Vec" {
            return None;
        }
        match &segment.arguments {
            syn::PathArguments::AngleBracketed(arguments) => match arguments.args.first()? {
                syn::GenericArgument::Type(element) => Some(element.clone()),
                _ => None,
            },
            _ => None,
        }
    };
    match ty {
        syn::Type::Reference(reference) => match &*reference.elem {
            syn::Type::Slice(slice) => !is_u8(&slice.elem),
            other => vec_element(other).is_some_and(|element| !is_u8(&element)),
        },
        other => vec_element(other).is_some_and(|element| !is_u8(&element)),
    }
}

/// The declarations of a `.rs` case: each `#[redis_script(…)]` function,
/// and each `#[redis_library(path = …)]` module (checked without function
/// declarations, as the command line checks a library).
fn declarations(source: &str) -> Vec<Declared> {
    let tokens: Vec<TokenTree> = source
        .parse::<TokenStream>()
        .expect("the case tokenizes")
        .into_iter()
        .collect();
    let mut found = Vec::new();
    for (index, token) in tokens.iter().enumerate() {
        let TokenTree::Group(group) = token else {
            continue;
        };
        if group.delimiter() != Delimiter::Bracket || index == 0 {
            continue;
        }
        let Ok(attribute) = syn::parse2::<syn::Meta>(group.stream()) else {
            continue;
        };
        let syn::Meta::List(list) = attribute else {
            continue;
        };
        let name = list
            .path
            .segments
            .last()
            .map(|segment| segment.ident.to_string());
        let mut declared = Declared {
            library: name.as_deref() == Some("redis_library"),
            ..Declared::default()
        };
        if !declared.library && name.as_deref() != Some("redis_script") {
            continue;
        }
        let mut keys_given = false;
        let parsed = list.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            declared.refused |= !OPTIONS.contains(&key.as_str());
            keys_given |= key == "keys";
            match key.as_str() {
                "path" => declared.lua = meta.value()?.parse::<syn::LitStr>()?.value(),
                "target" => declared.target = Some(meta.value()?.parse::<syn::LitStr>()?.value()),
                "keys" => declared.keys = meta.value()?.parse::<syn::LitInt>()?.base10_parse()?,
                "dynamic_keys" => declared.dynamic_keys = true,
                "allow_unused" => declared.allow_unused = true,
                _ => {
                    // Options the command line has no use for.
                    if meta.input.peek(syn::Token![=]) {
                        meta.value()?.parse::<syn::Expr>()?;
                    } else if meta.input.peek(syn::token::Paren) {
                        let _: TokenStream = meta.input.parse::<proc_macro2::Group>()?.stream();
                    }
                }
            }
            Ok(())
        });
        if parsed.is_err() || declared.lua.is_empty() {
            continue;
        }
        if !declared.library {
            let Some(parameters) = function_parameters(&tokens[index + 1..]) else {
                continue;
            };
            declared.refused |= !keys_given || declared.keys > parameters.len();
            // A parameter attribute the attribute refuses: anything but a
            // bare `#[key_prefix]` on a single argument after a fixed key.
            let fixed_keys = parameters
                .iter()
                .take(declared.keys)
                .filter(|parameter| !parameter.variadic)
                .count();
            declared.refused |= parameters.iter().enumerate().any(|(index, parameter)| {
                parameter.odd_attribute
                    || parameter.key_prefix
                        && (index < declared.keys || fixed_keys == 0 || parameter.variadic)
            });
            declared.key_prefix_args = parameters
                .iter()
                .skip(declared.keys)
                .enumerate()
                .filter(|(_, parameter)| parameter.key_prefix)
                .map(|(index, _)| index + 1)
                .collect();
            let variadic: Vec<bool> = parameters
                .iter()
                .map(|parameter| parameter.variadic)
                .collect();
            let (key_parameters, arg_parameters) =
                variadic.split_at(declared.keys.min(variadic.len()));
            let count = |parameters: &[bool]| {
                let variadic = parameters.last().copied().unwrap_or(false);
                (parameters.len() - usize::from(variadic), variadic)
            };
            (declared.keys, declared.variadic_keys) = count(key_parameters);
            (declared.args, declared.variadic_args) = count(arg_parameters);
        }
        found.push(declared);
    }
    found
}

/// One parameter of a declared function.
struct Parameter {
    variadic: bool,
    /// Marked `#[key_prefix]`.
    key_prefix: bool,
    /// Carries an attribute other than a bare `#[key_prefix]`.
    odd_attribute: bool,
}

/// The parameters of the bodyless function that follows an attribute: its
/// tokens up to `;`, given a body so that syn reads them.
fn function_parameters(tokens: &[TokenTree]) -> Option<Vec<Parameter>> {
    let end = tokens
        .iter()
        .position(|token| matches!(token, TokenTree::Punct(punct) if punct.as_char() == ';'))?;
    let signature: TokenStream = tokens[..end].iter().cloned().collect();
    let function = syn::parse2::<syn::ItemFn>(quote!(#signature {})).ok()?;
    Some(
        function
            .sig
            .inputs
            .iter()
            .filter_map(|input| match input {
                syn::FnArg::Typed(typed) => Some(Parameter {
                    variadic: is_variadic(&typed.ty),
                    key_prefix: typed
                        .attrs
                        .iter()
                        .any(|attribute| attribute.path().is_ident("key_prefix")),
                    odd_attribute: typed.attrs.iter().any(|attribute| {
                        !attribute.path().is_ident("key_prefix")
                            || attribute.meta.require_path_only().is_err()
                    }),
                }),
                syn::FnArg::Receiver(_) => None,
            })
            .collect(),
    )
}

/// What the attribute reported in `lua`, from the case's `.stderr`:
/// `error: [RS001] <lua>:L:C: message` and the warnings it shows as
/// deprecation notes.
fn attribute_diagnostics(stderr: &str, lua: &str) -> BTreeSet<Placed> {
    attribute_diagnostics_of(stderr, lua, true)
}

/// The same, without what only a Rust declaration knows (an argument's
/// type), which the command line cannot be told.
fn attribute_diagnostics_without_rust_types(stderr: &str, lua: &str) -> BTreeSet<Placed> {
    attribute_diagnostics_of(stderr, lua, false)
}

fn attribute_diagnostics_of(stderr: &str, lua: &str, rust_types: bool) -> BTreeSet<Placed> {
    let note = "warning: use of deprecated constant `_::redis_script_note`: ";
    let lines: Vec<&str> = stderr.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter_map(|(at, line)| {
            let (rest, error) = match line.strip_prefix("error: ") {
                Some(rest) => (rest, true),
                None => (line.strip_prefix(note)?, false),
            };
            let mut block = lines[at + 1..]
                .iter()
                .take_while(|next| next.starts_with(' '));
            if !rust_types && block.any(|next| next.contains("is the Rust parameter")) {
                return None;
            }
            let (code, rest) = rest.strip_prefix('[')?.split_once("] ")?;
            placed(code, rest.strip_prefix(lua)?.strip_prefix(':')?, error)
        })
        .collect()
}

/// `L:C: message`.
fn placed(code: &str, text: &str, error: bool) -> Option<Placed> {
    let mut parts = text.splitn(3, ':');
    let line = parts.next()?.parse().ok()?;
    let column = parts.next()?.parse().ok()?;
    let message = parts.next()?.strip_prefix(' ')?.to_owned();
    Some((line, column, code.to_owned(), message, error))
}

/// A message of the command line in the words the attribute uses for the
/// same finding: only who declares the parameters differs.
fn in_the_attributes_words(message: &str) -> String {
    for option in ["`--keys ", "`--args "] {
        if let Some(rest) = message.strip_prefix(option)
            && let Some((_, after)) = rest.split_once("+` declares a variadic list")
        {
            return format!("the Rust function passes a variadic list{after}");
        }
    }
    message.replace("the command line declares", "the Rust function declares")
}

/// What the command line reports in `declared.lua`, checked as declared,
/// from the suite's directory with its declared commands.
fn command_line_diagnostics(declared: &Declared) -> Option<BTreeSet<Placed>> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_redis-script-check"));
    command
        .current_dir(suite())
        .env("REDIS_SCRIPT_COMMANDS", "ui/targets/declared.commands")
        .env_remove("REDIS_SCRIPT_TARGET")
        .args(["--format", "json"]);
    if !declared.library {
        let count =
            |fixed: usize, variadic: bool| format!("{fixed}{}", if variadic { "+" } else { "" });
        command
            .arg("--keys")
            .arg(count(declared.keys, declared.variadic_keys))
            .arg("--args")
            .arg(count(declared.args, declared.variadic_args));
    }
    if declared.dynamic_keys {
        command.arg("--dynamic-keys");
    }
    if !declared.key_prefix_args.is_empty() {
        let positions: Vec<String> = declared
            .key_prefix_args
            .iter()
            .map(ToString::to_string)
            .collect();
        command.arg("--key-prefix-args").arg(positions.join(","));
    }
    if declared.allow_unused {
        command.arg("--allow-unused");
    }
    if let Some(target) = &declared.target {
        command.arg("--target").arg(target);
    }
    let output = command
        .arg(&declared.lua)
        .output()
        .expect("run redis-script-check");
    if output.status.code() == Some(2) {
        // A declaration the command line refuses as a usage error (an
        // unknown target); the attribute refuses it on the Rust side.
        return None;
    }
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
            panic!(
                "{}: not JSON ({error}): {}{}",
                declared.lua,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )
        });
    let diagnostics = report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|diagnostic| diagnostic["parameter"].is_null())
        .filter_map(|diagnostic| {
            Some((
                usize::try_from(diagnostic["line"].as_u64()?).ok()?,
                usize::try_from(diagnostic["column"].as_u64()?).ok()?,
                diagnostic["code"].as_str()?.to_owned(),
                in_the_attributes_words(diagnostic["message"].as_str()?),
                diagnostic["severity"] == "error",
            ))
        })
        .collect();
    Some(diagnostics)
}

/// Every `.rs` case of the compile-fail suite, in order.
fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(suite().join("ui"))
        .expect("ui directory")
        .flat_map(|category| {
            std::fs::read_dir(category.expect("entry").path())
                .into_iter()
                .flatten()
        })
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "rs"))
        .collect();
    cases.sort();
    cases
}

#[test]
fn the_command_line_reports_what_the_attribute_reports() {
    let cases = cases();
    let mut compared = 0;
    let mut placed_diagnostics = 0;
    let mut mismatches = Vec::new();
    for case in &cases {
        let source = std::fs::read_to_string(case).expect("case");
        let stderr = std::fs::read_to_string(case.with_extension("stderr")).unwrap_or_default();
        for declared in declarations(&source) {
            let Ok(lua) = std::fs::read_to_string(suite().join(&declared.lua)) else {
                // A case about a missing or misspelled file.
                continue;
            };
            // The command line checks a file as what it is; the attribute
            // refuses a library declared as a script, and the reverse.
            if declared.refused || declared.library != redis_script_analysis::is_library(&lua) {
                continue;
            }
            let mut attribute = attribute_diagnostics_without_rust_types(&stderr, &declared.lua);
            if declared.library {
                // Which functions the Rust side declares, the command line
                // cannot be told.
                attribute.retain(|(_, _, code, ..)| !matches!(code.as_str(), "RS053" | "RS054"));
            }
            let Some(command_line) = command_line_diagnostics(&declared) else {
                assert!(
                    stderr.contains("invalid `target`"),
                    "{}: the command line refused the declaration",
                    case.display()
                );
                continue;
            };

            compared += 1;
            placed_diagnostics += attribute.len();
            if attribute != command_line {
                mismatches.push(format!(
                    "{} ({}):\n  only the attribute: {:#?}\n  only the command line: {:#?}",
                    case.display(),
                    declared.lua,
                    attribute.difference(&command_line).collect::<Vec<_>>(),
                    command_line.difference(&attribute).collect::<Vec<_>>(),
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
    assert!(compared >= 60, "only {compared} declarations compared");
    assert!(
        placed_diagnostics >= 40,
        "only {placed_diagnostics} diagnostics placed in .lua files"
    );
    eprintln!(
        "{compared} declarations of {} cases: {placed_diagnostics} diagnostics in .lua files, the same from both",
        cases.len()
    );
}

/// What the language server publishes for `lua`, in the attribute's
/// terms: the diagnostics placed in the file (those about a declared
/// parameter or function point at the Rust side in the build).
fn editor_diagnostics(published: &[serde_json::Value], text: &str) -> BTreeSet<Placed> {
    published
        .iter()
        .filter(|diagnostic| {
            !diagnostic["relatedInformation"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|related| related["message"] == "the parameter")
        })
        .filter_map(|diagnostic| {
            let code = diagnostic["code"].as_str()?.to_owned();
            let start = &diagnostic["range"]["start"];
            let line = usize::try_from(start["line"].as_u64()?).ok()?;
            let units = usize::try_from(start["character"].as_u64()?).ok()?;
            // The protocol counts UTF-16 units; the attribute characters.
            let mut column = 0;
            let mut counted = 0;
            for character in text.lines().nth(line).unwrap_or("").chars() {
                if counted >= units {
                    break;
                }
                counted += character.len_utf16();
                column += 1;
            }
            let message = diagnostic["message"].as_str()?.lines().next()?.to_owned();
            Some((
                line + 1,
                column + 1,
                code,
                message,
                diagnostic["severity"] == 1,
            ))
        })
        .collect()
}

/// Each `.lua` file of the suite opened in the language server, started
/// in the suite's crate: the server finds the cases' declarations naming
/// the file by itself, and shows what the build shows for all of them.
#[test]
fn the_editor_reports_what_the_attribute_reports() {
    // The `.lua` files the cases name, with the `.stderr` of each case.
    let mut naming: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for case in cases() {
        let source = std::fs::read_to_string(&case).expect("case");
        let stderr = std::fs::read_to_string(case.with_extension("stderr")).unwrap_or_default();
        for declared in declarations(&source) {
            naming.entry(declared.lua).or_default().push(stderr.clone());
        }
    }
    let mut client = common::lsp::Client::start(
        &suite(),
        &[("REDIS_SCRIPT_COMMANDS", "ui/targets/declared.commands")],
        false,
    );
    let (mut compared, mut placed_diagnostics) = (0, 0);
    let mut mismatches = Vec::new();
    for (lua, stderrs) in &naming {
        let path = suite().join(lua);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let mut expected: BTreeSet<Placed> = stderrs
            .iter()
            .flat_map(|stderr| attribute_diagnostics(stderr, lua))
            .collect();
        let mut editor = editor_diagnostics(&client.open(&path, &text), &text);
        // A file named by several cases with other options may have an error
        // in one case only: compared on its errors.
        if expected.iter().any(|(.., error)| *error) {
            expected.retain(|(.., error)| *error);
            editor.retain(|(.., error)| *error);
        }
        compared += 1;
        placed_diagnostics += expected.len();
        if expected != editor {
            mismatches.push(format!(
                "{lua}:\n  only the build: {:#?}\n  only the editor: {:#?}",
                expected.difference(&editor).collect::<Vec<_>>(),
                editor.difference(&expected).collect::<Vec<_>>(),
            ));
        }
    }
    client.stop();
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
    assert!(compared >= 100, "only {compared} files compared");
    assert!(
        placed_diagnostics >= 100,
        "only {placed_diagnostics} diagnostics placed in .lua files"
    );
    eprintln!(
        "{compared} .lua files: {placed_diagnostics} diagnostics, the same in the editor and the build"
    );
}
