//! Phase 2: read the `.lua` file and check it against the declaration.

use std::path::{Path, PathBuf};

use crate::contract::{self, ContractCheck};
use crate::errors::Errors;
use crate::parse::Declaration;
use redis_script_analysis as lua;

/// Environment variable that overrides the directory `path` is relative to.
/// Cargo sets `CARGO_MANIFEST_DIR`; tools that compile a crate from another
/// directory (such as compile-fail test harnesses) set this one.
const BASE_DIR_OVERRIDE: &str = "REDIS_SCRIPT_BASE_DIR";

/// Environment variable with the crate-wide target (`redis-7.2`, `any`, ...),
/// usually set in `.cargo/config.toml` under `[env]`.
pub const TARGET_VARIABLE: &str = "REDIS_SCRIPT_TARGET";

/// Environment variable naming the file of declared commands, relative to
/// the crate's directory.
pub const COMMANDS_VARIABLE: &str = "REDIS_SCRIPT_COMMANDS";

/// What the generator needs about a script that passed every check.
pub struct CheckedScript {
    /// Absolute path, for `include_str!` (so an edit triggers a rebuild).
    pub absolute_path: String,
    /// Lowercase hex SHA1 of the source, for `EVALSHA`.
    pub sha1: String,
    pub read_only: bool,
    /// The script declares `#!lua flags=allow-cross-slot-keys`.
    pub allow_cross_slot_keys: bool,
    /// The script's leading comment block.
    pub header: lua::Header,
    /// Assertions tying the script's replies to the Rust types.
    pub contract: Vec<ContractCheck>,
    /// Rendered notes: findings worth a warning, not an error.
    pub notes: Vec<String>,
    /// Every way the script can reply.
    pub returns: Vec<lua::ReturnSite>,
    /// The error codes the script can return unmarked.
    pub error_codes: lua::ErrorCodes,
    /// Absolute path of the declared-commands file, so that editing it
    /// rebuilds the crate.
    pub declared_commands_path: Option<String>,
}

pub fn check(declaration: &Declaration) -> Result<CheckedScript, syn::Error> {
    let path_literal = &declaration.options.path;
    let relative = path_literal.value();
    let absolute = resolve(&relative);
    let source = std::fs::read_to_string(&absolute).map_err(|error| {
        syn::Error::new(
            path_literal.span(),
            format!(
                "cannot read the Lua script `{}`: {error}\n = hint: `path` is relative to the crate's directory (the one with Cargo.toml)",
                absolute.display()
            ),
        )
    })?;

    let mut errors = Errors::default();
    let target = target(declaration).unwrap_or_else(|error| {
        errors.push(error);
        lua::Target::any()
    });
    let (declared_commands, declared_commands_path) = declared_commands(path_literal.span())
        .unwrap_or_else(|error| {
            errors.push(error);
            (lua::DeclaredCommands::default(), None)
        });
    let mut signature = lua_signature(declaration);
    signature.target = target;
    signature.declared_commands = declared_commands;
    let analysis = lua::analyze(&source, &signature);
    for diagnostic in analysis.errors() {
        errors.push(match parameter_ident(declaration, diagnostic.parameter) {
            // About a parameter rather than a place in the script: point at
            // its name in the signature.
            Some(ident) => syn::Error::new(ident.span(), parameter_message(&relative, diagnostic)),
            None => syn::Error::new(path_literal.span(), diagnostic.render(&relative, &source)),
        });
    }
    errors.finish()?;

    Ok(CheckedScript {
        absolute_path: absolute.to_string_lossy().into_owned(),
        sha1: sha1_smol::Sha1::from(source.as_bytes())
            .digest()
            .to_string(),
        read_only: analysis.read_only,
        allow_cross_slot_keys: analysis.flags.allow_cross_slot_keys,
        error_codes: analysis.error_codes.clone(),
        contract: contract::checks(
            &analysis.returns,
            &declaration.signature.reply,
            declaration.options.errors.as_ref(),
            &relative,
            &source,
        ),
        notes: analysis
            .diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.severity == lua::Severity::Note)
            .map(|diagnostic| diagnostic.render(&relative, &source))
            .collect(),
        header: analysis.header,
        returns: analysis.returns,
        declared_commands_path,
    })
}

/// The script's `target = "..."`, else the crate's `REDIS_SCRIPT_TARGET`,
/// else `any`.
fn target(declaration: &Declaration) -> Result<lua::Target, syn::Error> {
    if let Some(literal) = &declaration.options.target {
        return lua::Target::parse(&literal.value())
            .map(|target| target.with_scope(lua::TargetScope::Script))
            .map_err(|error| {
                syn::Error::new(literal.span(), format!("invalid `target`: {error}"))
            });
    }
    match std::env::var(TARGET_VARIABLE) {
        Ok(text) => lua::Target::parse(&text).map_err(|error| {
            syn::Error::new(
                declaration.options.path.span(),
                format!(
                    "invalid {TARGET_VARIABLE}=`{text}` (set in the environment or `.cargo/config.toml` `[env]`): {error}"
                ),
            )
        }),
        Err(_) => Ok(lua::Target::any()),
    }
}

/// The commands declared in the file named by `REDIS_SCRIPT_COMMANDS`.
fn declared_commands(
    span: proc_macro2::Span,
) -> Result<(lua::DeclaredCommands, Option<String>), syn::Error> {
    let Some(relative) = std::env::var_os(COMMANDS_VARIABLE) else {
        return Ok((lua::DeclaredCommands::default(), None));
    };
    let shown = relative.to_string_lossy().into_owned();
    let absolute = resolve(&shown);
    let text = std::fs::read_to_string(&absolute).map_err(|error| {
        syn::Error::new(
            span,
            format!(
                "cannot read the declared commands `{}` ({COMMANDS_VARIABLE}): {error}\n = hint: the path is relative to the crate's directory (the one with Cargo.toml)",
                absolute.display()
            ),
        )
    })?;
    let commands = lua::DeclaredCommands::parse(&text).map_err(|mistakes| {
        let mut errors = Errors::default();
        for mistake in mistakes {
            let line = text.lines().nth(mistake.line.saturating_sub(1)).unwrap_or_default();
            errors.push(syn::Error::new(
                span,
                format!(
                    "{shown}:{}:{}: {}\n  |\n  | {line}\n = hint: declare one command per line: `NAME arity=N keys=POSITIONS write|readonly` (see the redis-script docs, \"Commands the model does not know\")",
                    mistake.line, mistake.column, mistake.message
                ),
            ));
        }
        match errors.finish() {
            Err(error) => error,
            Ok(()) => syn::Error::new(span, "invalid declared commands"),
        }
    })?;
    Ok((commands, Some(absolute.to_string_lossy().into_owned())))
}

/// The Rust parameter a diagnostic is about.
fn parameter_ident(
    declaration: &Declaration,
    parameter: Option<lua::Parameter>,
) -> Option<&syn::Ident> {
    let signature = &declaration.signature;
    let param = match parameter? {
        lua::Parameter::Key(index) => signature.key_params().get(index.checked_sub(1)?),
        lua::Parameter::Arg(index) => signature.arg_params().get(index.checked_sub(1)?),
    }?;
    Some(&param.ident)
}

fn parameter_message(path: &str, diagnostic: &lua::Diagnostic) -> String {
    let message = diagnostic
        .message
        .strip_suffix(" by the script")
        .map_or_else(
            || diagnostic.message.clone(),
            |start| format!("{start} by `{path}`"),
        );
    match &diagnostic.hint {
        Some(hint) => format!("{message}\n = hint: {hint}"),
        None => message,
    }
}

fn resolve(relative: &str) -> PathBuf {
    let base = std::env::var_os(BASE_DIR_OVERRIDE)
        .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR"))
        .map(PathBuf::from)
        .unwrap_or_default();
    base.join(Path::new(relative))
}

fn lua_signature(declaration: &Declaration) -> lua::Signature {
    let signature = &declaration.signature;
    let count = |params: &[crate::parse::Param]| {
        let variadic = params.last().is_some_and(|param| param.variadic);
        (params.len() - usize::from(variadic), variadic)
    };
    let (keys, variadic_keys) = count(signature.key_params());
    let (args, variadic_args) = count(signature.arg_params());
    let names = |params: &[crate::parse::Param]| {
        params
            .iter()
            .filter(|param| !param.variadic)
            .map(|param| param.ident.to_string())
            .collect()
    };
    lua::Signature {
        key_names: names(signature.key_params()),
        arg_names: names(signature.arg_params()),
        keys,
        args,
        variadic_keys,
        variadic_args,
        allow_unused: declaration.options.allow_unused,
        dynamic_keys: declaration.options.dynamic_keys,
        ..lua::Signature::default()
    }
}
