//! Phase 2: read the `.lua` file and check it against the declaration.

use std::path::{Path, PathBuf};

use crate::contract::{self, ContractCheck};
use crate::errors::Errors;
use crate::parse::{
    Declaration, LibraryDeclaration, Model, ReadFrom, SignatureBuilder, library_signature,
    registered_name, script_target,
};
use redis_script_analysis as lua;

/// Environment variable that overrides the directory `path` is relative to.
/// Cargo sets `CARGO_MANIFEST_DIR`; tools that compile a crate from another
/// directory (such as compile-fail test harnesses) set this one.
const BASE_DIR_OVERRIDE: &str = "REDIS_SCRIPT_BASE_DIR";

pub use lua::{COMMANDS_VARIABLE, DENY_WARNINGS_VARIABLE, TARGET_VARIABLE};

/// Whether the crate asks for warnings to fail the build
/// (`REDIS_SCRIPT_DENY_WARNINGS=1`, usually in `.cargo/config.toml`).
fn deny_warnings() -> bool {
    std::env::var(DENY_WARNINGS_VARIABLE).is_ok_and(|value| lua::denies_warnings(&value))
}

/// The diagnostics that fail the build: errors, and warnings too when the
/// crate denies them.
fn failing(diagnostics: &[lua::Diagnostic]) -> impl Iterator<Item = &lua::Diagnostic> {
    let deny = deny_warnings();
    diagnostics
        .iter()
        .filter(move |diagnostic| deny || diagnostic.severity == lua::Severity::Error)
}

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
    /// Assertions tying what the script reads from its `Json<T>`
    /// arguments to each `T`.
    pub json: Vec<crate::json_contract::JsonCheck>,
    /// Rendered notes: findings worth a warning, not an error.
    pub notes: Vec<String>,
    /// Every way the script can reply.
    pub returns: Vec<lua::ReturnSite>,
    /// The codes of the error replies the script can end with.
    pub error_codes: lua::ErrorCodes,
    /// Absolute path of the declared-commands file, so that editing it
    /// rebuilds the crate.
    pub declared_commands_path: Option<String>,
    /// The source sent instead of the file: it marks the error replies the
    /// script returns and, with `exactly_once`, records its replies (`sha1`
    /// is its SHA1). For a library function, the library's (see
    /// [`CheckedLibrary::sent_source`]).
    pub sent_source: String,
    /// The script is declared `exactly_once`.
    pub exactly_once: bool,
    /// The prefixes the script builds keys from, which each call checks.
    pub key_prefixes: lua::KeyPrefixes,
}

/// A `.lua` file as read for one declaration.
struct LuaFile {
    relative: String,
    absolute: PathBuf,
    source: String,
}

impl LuaFile {
    fn read(path_literal: &syn::LitStr, what: &str) -> Result<Self, syn::Error> {
        let relative = path_literal.value();
        let absolute = resolve(&relative);
        let source = std::fs::read_to_string(&absolute).map_err(|error| {
            let hint = match nearby_file(&absolute) {
                Some(near) => {
                    let directory = relative
                        .rsplit_once('/')
                        .map_or("", |(directory, _)| directory);
                    let written = if directory.is_empty() {
                        near
                    } else {
                        format!("{directory}/{near}")
                    };
                    format!("did you mean `path = \"{written}\"`?")
                }
                None => "`path` is relative to the crate's directory (the one with Cargo.toml)"
                    .to_owned(),
            };
            syn::Error::new(
                path_literal.span(),
                format!(
                    "cannot read the Lua {what} `{}`: {error}\n  |\n  = help: {hint}",
                    absolute.display()
                ),
            )
        })?;
        Ok(Self {
            relative,
            absolute,
            source,
        })
    }

    fn absolute_path(&self) -> String {
        self.absolute.to_string_lossy().into_owned()
    }
}

/// The name of a `.lua` file next to `missing` whose name is close to
/// its name (`claim_due.lua` for `claim-due.lua`).
fn nearby_file(missing: &std::path::Path) -> Option<String> {
    let wanted = missing.file_name()?.to_str()?;
    let directory = missing.parent()?;
    let names: Vec<String> = std::fs::read_dir(directory)
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".lua"))
        .collect();
    let near = lua::suggest::closest(wanted, names.iter().map(String::as_str))?;
    Some(near.to_owned())
}

/// Lowercase hex SHA1 of `text`: the id `EVALSHA` takes.
fn sha1_hex(text: &str) -> String {
    sha1_smol::Sha1::from(text.as_bytes()).digest().to_string()
}

/// The target and declared commands every analysis of one declaration
/// uses (errors reading them go to `errors`), and the declared-commands
/// file to watch.
fn model_options(
    target_literal: Option<&syn::LitStr>,
    path_literal: &syn::LitStr,
    errors: &mut Errors,
) -> (Model, Option<String>) {
    let target = target(target_literal, path_literal).unwrap_or_else(|error| {
        errors.push(error);
        lua::Target::any()
    });
    let (declared_commands, declared_commands_path) = declared_commands(path_literal.span())
        .unwrap_or_else(|error| {
            errors.push(error);
            (lua::DeclaredCommands::default(), None)
        });
    let model = Model {
        target,
        declared_commands,
    };
    (model, declared_commands_path)
}

/// The error for `read_from = "…"` asking replicas to run what may write
/// (`problem` says what, and what to do); `None` when the policy is
/// allowed.
fn replica_reads_refusal(
    read_from: Option<(ReadFrom, proc_macro2::Span)>,
    read_only: bool,
    problem: impl FnOnce() -> String,
) -> Option<syn::Error> {
    let (read_from, span) = read_from?;
    if read_from == ReadFrom::Primary || read_only {
        return None;
    }
    Some(syn::Error::new(
        span,
        format!(
            "`read_from = \"{}\"` sends the calls to replicas, which refuse writes: {}",
            read_from.written(),
            problem(),
        ),
    ))
}

/// Why a script may not run on replicas, and what to do.
fn script_writes(review: &lua::Review, exactly_once: bool, relative: &str) -> String {
    const HINT: &str = "remove `read_from` (the calls then run on the primary), or move the reads into a script of their own";
    if exactly_once {
        return format!("`exactly_once` records each call in a key; {HINT}");
    }
    match review.commands.iter().find(|command| command.writes) {
        Some(command) => format!(
            "this script may write, it calls `{}` at `{relative}:{}`; {HINT}",
            command.name, command.line
        ),
        None => format!("this script may write, it calls a command chosen at run time; {HINT}"),
    }
}

/// A declaration that failed its checks: the errors, and the warnings the
/// script has besides, which a failing build shows as well (fixing the
/// errors should not uncover them one build later).
pub struct Failed {
    pub errors: syn::Error,
    pub warnings: Vec<String>,
}

impl From<syn::Error> for Failed {
    fn from(errors: syn::Error) -> Self {
        Failed {
            errors,
            warnings: Vec::new(),
        }
    }
}

pub fn check(declaration: &Declaration) -> Result<CheckedScript, Failed> {
    let path_literal = &declaration.options.path;
    let file = LuaFile::read(path_literal, "script")?;
    let LuaFile {
        relative, source, ..
    } = &file;

    let mut errors = Errors::default();
    let (model, declared_commands_path) = model_options(
        declaration.options.target.as_ref(),
        path_literal,
        &mut errors,
    );
    let signature = SignatureBuilder::of_declaration(declaration)
        .model(model)
        .build();
    let analysis = lua::analyze(source, &signature);
    for diagnostic in failing(&analysis.diagnostics) {
        errors.push(match parameter_span(declaration, diagnostic.parameter) {
            // About a parameter rather than a place in the script: point at
            // its name in the signature (or at `keys =`).
            Some(span) => syn::Error::new(
                span,
                parameter_message(&format!("`{relative}`"), diagnostic),
            ),
            None => syn::Error::new(path_literal.span(), diagnostic.render(relative, source)),
        });
    }
    if let Some(once) = &declaration.options.exactly_once
        && let Some(reason) = lua::exactly_once::refusal(&analysis)
    {
        errors.push(syn::Error::new(
            once.span,
            format!("{reason} (`{relative}`)"),
        ));
    }
    if let Some(problem) = replica_reads_refusal(
        declaration.options.read_from,
        analysis.read_only && declaration.options.exactly_once.is_none(),
        || {
            let exactly_once = declaration.options.exactly_once.is_some();
            script_writes(&analysis.review, exactly_once, relative)
        },
    ) {
        errors.push(problem);
    }
    if let Err(errors) = errors.finish() {
        return Err(Failed {
            errors,
            warnings: notes(&analysis.diagnostics, relative, source),
        });
    }

    let exactly_once = declaration.options.exactly_once.is_some();
    let sent_source = lua::sent::script(source, &analysis, exactly_once);
    Ok(CheckedScript {
        absolute_path: file.absolute_path(),
        sha1: sha1_hex(&sent_source),
        sent_source,
        exactly_once,
        key_prefixes: analysis.key_prefixes.clone(),
        read_only: analysis.read_only,
        allow_cross_slot_keys: analysis.flags.allow_cross_slot_keys,
        error_codes: analysis.error_codes.clone(),
        contract: contract::checks(
            &analysis.returns,
            &declaration.signature.reply,
            declaration.options.errors.as_ref(),
            "the script",
            relative,
            source,
        ),
        json: {
            let mut checks = crate::json_contract::checks(
                &analysis.json_reads,
                &declaration.signature,
                relative,
                source,
            );
            checks.extend(crate::json_contract::reply_checks(
                &analysis.returns,
                &declaration.signature.reply,
                relative,
                source,
            ));
            checks
        },
        notes: notes(&analysis.diagnostics, relative, source),
        header: analysis.header,
        returns: analysis.returns,
        declared_commands_path,
    })
}

/// The declaration's `target = "..."`, else the crate's
/// `REDIS_SCRIPT_TARGET`, else `any`.
fn target(
    target_literal: Option<&syn::LitStr>,
    path_literal: &syn::LitStr,
) -> Result<lua::Target, syn::Error> {
    if let Some(literal) = target_literal {
        return script_target(&literal.value()).map_err(|error| {
            syn::Error::new(literal.span(), format!("invalid `target`: {error}"))
        });
    }
    match std::env::var(TARGET_VARIABLE) {
        Ok(text) => lua::Target::parse(&text).map_err(|error| {
            syn::Error::new(
                path_literal.span(),
                format!(
                    "invalid {TARGET_VARIABLE}=`{text}` (set in the environment or `.cargo/config.toml` `[env]`): {error}"
                ),
            )
        }),
        Err(_) => Ok(lua::Target::any()),
    }
}

/// The notes among `diagnostics`, rendered.
fn notes(diagnostics: &[lua::Diagnostic], relative: &str, source: &str) -> Vec<String> {
    if deny_warnings() {
        return Vec::new();
    }
    diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.severity == lua::Severity::Warning)
        .map(|diagnostic| diagnostic.render(relative, source))
        .collect()
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
    let commands = lua::DeclaredCommands::read_file(
        &absolute,
        &shown,
        "the crate's directory (the one with Cargo.toml)",
    )
    .map_err(|messages| {
        let mut errors = Errors::default();
        for message in messages {
            errors.push(syn::Error::new(span, message));
        }
        match errors.finish() {
            Err(error) => error,
            Ok(()) => syn::Error::new(span, "invalid declared commands"),
        }
    })?;
    Ok((commands, Some(absolute.to_string_lossy().into_owned())))
}

/// The Rust parameter a diagnostic is about.
fn parameter_span(
    declaration: &Declaration,
    parameter: Option<lua::Parameter>,
) -> Option<proc_macro2::Span> {
    declaration.parameter_span(parameter?)
}

/// The message of a diagnostic about a declared parameter; `reader` is
/// what reads the parameters (`` `lua/x.lua` ``).
fn parameter_message(reader: &str, diagnostic: &lua::Diagnostic) -> String {
    let mut diagnostic = diagnostic.clone();
    if let Some(start) = diagnostic.message.strip_suffix(" by the script") {
        diagnostic.message = format!("{start} by {reader}");
    }
    diagnostic.render_detached()
}

fn resolve(relative: &str) -> PathBuf {
    let base = std::env::var_os(BASE_DIR_OVERRIDE)
        .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR"))
        .map(PathBuf::from)
        .unwrap_or_default();
    base.join(Path::new(relative))
}

/// What the generator needs about a library that passed every check.
pub struct CheckedLibrary {
    /// Absolute path, for `include_str!`.
    pub absolute_path: String,
    /// Lowercase hex SHA1 of the code sent: its version, compared by
    /// `deploy`.
    pub sha1: String,
    /// The code sent with `FUNCTION LOAD`: the file with a twin registered
    /// beside each function that marks every error it ends with.
    pub sent_source: String,
    /// The name from `#!lua name=…`.
    pub name: String,
    /// Every function the file registers.
    pub registered: Vec<String>,
    pub header: lua::Header,
    /// Rendered notes about the whole file.
    pub notes: Vec<String>,
    pub declared_commands_path: Option<String>,
    /// One per declared function, in declaration order.
    pub functions: Vec<CheckedFunction>,
}

/// A declared function of a checked library.
pub struct CheckedFunction {
    /// The name the library registers it under.
    pub registered_name: String,
    /// The name of its twin in the code sent, which marks its errors:
    /// FCALL's first argument.
    pub called_as: String,
    /// The table form's `description`.
    pub description: Option<String>,
    /// The facts a script call has, for this function.
    pub facts: CheckedScript,
}

pub fn check_library(declaration: &LibraryDeclaration) -> Result<CheckedLibrary, Failed> {
    let path_literal = &declaration.path;
    let file = LuaFile::read(path_literal, "library")?;
    let LuaFile {
        relative, source, ..
    } = &file;
    let mut errors = Errors::default();
    let (model, declared_commands_path) =
        model_options(declaration.target.as_ref(), path_literal, &mut errors);
    let analysis = lua::analyze_library(source, &library_signature(declaration, model));
    for diagnostic in failing(&analysis.diagnostics) {
        let function = diagnostic
            .function
            .and_then(|index| declaration.functions.get(index));
        errors.push(match function {
            Some(function) => {
                let name = registered_name(function);
                let reader = format!("function `{name}` of `{relative}`");
                match parameter_span(function, diagnostic.parameter) {
                    Some(span) => syn::Error::new(span, parameter_message(&reader, diagnostic)),
                    // About the function itself: its name.
                    None => syn::Error::new(
                        function.name_span(),
                        parameter_message(&reader, diagnostic),
                    ),
                }
            }
            None => syn::Error::new(path_literal.span(), diagnostic.render(relative, source)),
        });
    }
    if let Err(errors) = errors.finish() {
        return Err(Failed {
            errors,
            warnings: notes(&analysis.diagnostics, relative, source),
        });
    }

    let sent = lua::sent::library(source, &analysis);
    let sha1 = sha1_hex(&sent.source);
    let absolute_path = file.absolute_path();
    let mut checked = Vec::new();
    for function in &declaration.functions {
        let name = registered_name(function);
        let Some(registered) = analysis.function(&name) else {
            // Reported above as a missing function.
            return Err(syn::Error::new(
                function.signature.ident.span(),
                format!("the library registers no function `{name}`"),
            )
            .into());
        };
        if let Some(problem) = replica_reads_refusal(
            function.options.read_from,
            registered.read_only,
            || {
                format!(
                    "a replica runs only functions registered with the `no-writes` flag (called with FCALL_RO), and `{name}` of `{relative}` is registered without it; add `flags = {{ 'no-writes' }}` to its `redis.register_function` table if it writes nothing, or remove `read_from`"
                )
            },
        ) {
            return Err(problem.into());
        }
        checked.push(CheckedFunction {
            called_as: sent.function_name(&name),
            registered_name: name,
            description: registered.description.clone(),
            facts: CheckedScript {
                absolute_path: absolute_path.clone(),
                sha1: sha1.clone(),
                read_only: registered.read_only,
                allow_cross_slot_keys: registered.flags.allow_cross_slot_keys,
                header: analysis.header.clone(),
                contract: contract::checks(
                    &registered.returns,
                    &function.signature.reply,
                    function.options.errors.as_ref(),
                    &format!("the function `{}`", registered.name),
                    relative,
                    source,
                ),
                // Library functions read `args`, which the analysis does
                // not follow into `cjson.decode` yet.
                json: Vec::new(),
                notes: Vec::new(),
                returns: registered.returns.clone(),
                error_codes: registered.error_codes.clone(),
                declared_commands_path: declared_commands_path.clone(),
                sent_source: sent.source.clone(),
                exactly_once: false,
                key_prefixes: registered.key_prefixes.clone(),
            },
        });
    }
    Ok(CheckedLibrary {
        absolute_path,
        sha1,
        sent_source: sent.source,
        name: analysis.name.clone().unwrap_or_default(),
        registered: analysis
            .functions
            .iter()
            .map(|function| function.name.clone())
            .collect(),
        notes: notes(&analysis.diagnostics, relative, source),
        header: analysis.header,
        declared_commands_path,
        functions: checked,
    })
}
