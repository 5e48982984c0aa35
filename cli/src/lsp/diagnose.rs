//! One document's verdict: the diagnostics the build gives it when a Rust
//! declaration names the file, else the ones the command line gives it
//! (header, configuration, includes), in the protocol's terms; and what
//! hover and go-to need to know about its parameters and declarations.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Position, Range,
};
use redis_script_analysis::{
    self as analysis, COMMANDS_VARIABLE, DENY_WARNINGS_VARIABLE, DeclaredCommands, Diagnostic,
    Header, Parameter, Severity, TARGET_VARIABLE, Target, TargetScope,
};
use redis_script_declaration::shown::type_text;
use redis_script_declaration::{
    Declaration, LibraryDeclaration, Model, SignatureBuilder, library_signature, registered_name,
    script_target,
};

use super::rust_crate::{CrateDeclarations, DeclaredKind, RustSpan, crate_root, search_root};
use super::text;
use super::uri;
use crate::check;
use crate::config::Config;
use crate::options::{Options, setting};

/// What one analysis of a document found.
#[derive(Debug, Default)]
pub struct Verdict {
    pub diagnostics: Vec<lsp_types::Diagnostic>,
    /// What `KEYS[n]` and `ARGV[n]` stand for, by (is a key, 1-based
    /// index); a variadic list's entry stands for every index from its own.
    pub parameters: Vec<ParameterInfo>,
    /// The target the file is checked for (the first declaration's).
    pub target: Target,
    /// The Rust declarations naming the file.
    pub declarations: Vec<RustSpan>,
}

/// What one `KEYS[n]` or `ARGV[n]` is, for hover.
#[derive(Debug, Clone)]
pub struct ParameterInfo {
    pub key: bool,
    pub index: usize,
    pub variadic: bool,
    /// Markdown: the Rust parameter and its type, or the header's text.
    pub description: String,
}

/// The settings `cargo build` gives the attribute for one crate: `None`
/// when unset, an error when they do not read.
struct CrateSettings {
    target: Result<Option<Target>, String>,
    declared_commands: Result<Option<DeclaredCommands>, String>,
    deny_warnings: bool,
}

impl CrateSettings {
    /// The process environment, else `[env]` of Cargo's configuration, as
    /// the build sees them from `directory`; a relative commands file is
    /// relative to `directory`, as the attribute reads it.
    fn read(directory: &Path) -> CrateSettings {
        let target = setting(TARGET_VARIABLE, directory).and_then(|found| {
            found
                .map(|(text, source)| {
                    Target::parse(&text).map_err(|error| format!("invalid `{source}`: {error}"))
                })
                .transpose()
        });
        let declared_commands = setting(COMMANDS_VARIABLE, directory).and_then(|found| {
            found
                .map(|(file, _)| {
                    DeclaredCommands::read_file(
                        &directory.join(&file),
                        &file,
                        "the crate's directory (the one with Cargo.toml)",
                    )
                    .map_err(|messages| messages.join("\n"))
                })
                .transpose()
        });
        let deny_warnings = matches!(
            setting(DENY_WARNINGS_VARIABLE, directory),
            Ok(Some((value, _))) if analysis::denies_warnings(&value)
        );
        CrateSettings {
            target,
            declared_commands,
            deny_warnings,
        }
    }
}

/// A setting's value; one that does not read is an error at the top of
/// the file, as the build reports it.
fn reported<T: Clone>(
    setting: &Result<Option<T>, String>,
    diagnostics: &mut Vec<lsp_types::Diagnostic>,
) -> Option<T> {
    match setting {
        Ok(value) => value.clone(),
        Err(message) => {
            diagnostics.push(top_error(message.clone()));
            None
        }
    }
}

/// The crates seen so far, by root.
#[derive(Debug, Default)]
pub struct Crates {
    by_root: HashMap<PathBuf, CrateDeclarations>,
}

impl Crates {
    /// The declarations of the workspace or crate holding `file` (up to
    /// date with the disk), if any.
    pub fn of(&mut self, file: &Path) -> Option<&mut CrateDeclarations> {
        let root = search_root(file)?;
        let declarations = self
            .by_root
            .entry(root.clone())
            .or_insert_with(|| CrateDeclarations::new(root));
        declarations.refresh_if_stale();
        Some(declarations)
    }

    /// Files changed on disk: the next look at each crate reads them.
    pub fn mark_stale(&mut self) {
        self.by_root
            .values_mut()
            .for_each(CrateDeclarations::mark_stale);
    }

    /// An editor's text of a Rust file, which wins over the disk's.
    pub fn update_rust_file(&mut self, file: &Path, text: &str) {
        if let Some(declarations) = self.of(file) {
            declarations.update(file, text);
        }
    }

    /// The editor closed a Rust file.
    pub fn close_rust_file(&mut self, file: &Path) {
        if let Some(declarations) = self.of(file) {
            declarations.close(file);
        }
    }
}

/// The verdict on `text`, the content of the `.lua` file `path`.
pub fn diagnose(path: &Path, text: &str, crates: &mut Crates) -> Verdict {
    if let Some(declarations) = crates.of(path) {
        let naming = declarations.naming(path);
        if !naming.is_empty() {
            // Each declaring crate's settings, as its build reads them.
            let mut settings_of: HashMap<&Path, CrateSettings> = HashMap::new();
            let mut verdict = Verdict::default();
            for (index, declared) in naming.into_iter().enumerate() {
                let settings = settings_of
                    .entry(&declared.crate_root)
                    .or_insert_with(|| CrateSettings::read(&declared.crate_root));
                let mut found = match &declared.kind {
                    DeclaredKind::Script(declaration) => {
                        script(text, declaration, &declared.path_span, settings)
                    }
                    DeclaredKind::Library(declaration) => {
                        library(text, declaration, &declared.path_span, settings)
                    }
                    DeclaredKind::Refused(message) => Verdict {
                        diagnostics: vec![refused(&declared.name, message, &declared.path_span)],
                        ..Verdict::default()
                    },
                };
                if index == 0 {
                    verdict.target = found.target;
                }
                for diagnostic in found.diagnostics.drain(..) {
                    merge(&mut verdict.diagnostics, diagnostic);
                }
                verdict.parameters.append(&mut found.parameters);
                verdict.declarations.push(declared.path_span.clone());
            }
            return verdict;
        }
    }
    by_header(path, text)
}

/// Adds `diagnostic`, unless the same one (place, code, message) is there
/// already from another declaration: that one then names both.
fn merge(diagnostics: &mut Vec<lsp_types::Diagnostic>, diagnostic: lsp_types::Diagnostic) {
    let same = diagnostics.iter_mut().find(|known| {
        (&known.range, &known.code, &known.message)
            == (&diagnostic.range, &diagnostic.code, &diagnostic.message)
    });
    let Some(known) = same else {
        diagnostics.push(diagnostic);
        return;
    };
    let related = known.related_information.get_or_insert_with(Vec::new);
    for information in diagnostic.related_information.into_iter().flatten() {
        if !related.contains(&information) {
            related.push(information);
        }
    }
}

/// A declaration the attribute refuses: the build's error is on the Rust
/// side; the file says where.
fn refused(name: &str, message: &str, at: &RustSpan) -> lsp_types::Diagnostic {
    lsp_types::Diagnostic {
        range: Range::default(),
        severity: Some(DiagnosticSeverity::INFORMATION),
        source: Some(SOURCE.to_owned()),
        message: format!(
            "the declaration `{name}` names this file, but the attribute refuses it: {message}"
        ),
        related_information: Some(related(at, "the declaration").into_iter().collect()),
        ..lsp_types::Diagnostic::default()
    }
}

/// What publishes the diagnostics.
pub const SOURCE: &str = "redis-script";

fn related(at: &RustSpan, message: &str) -> Option<DiagnosticRelatedInformation> {
    Some(DiagnosticRelatedInformation {
        location: rust_location(at)?,
        message: message.to_owned(),
    })
}

pub fn rust_location(at: &RustSpan) -> Option<Location> {
    let place = |place: super::rust_crate::RustPlace| {
        Position::new(
            u32::try_from(place.line).unwrap_or(u32::MAX),
            u32::try_from(place.column).unwrap_or(u32::MAX),
        )
    };
    Some(Location {
        uri: uri::from_path(&at.file)?,
        range: Range::new(place(at.start), place(at.end)),
    })
}

/// The model options of one declaration: its own `target`, else the
/// crate's; the crate's declared commands. Problems with them are errors
/// at the top of the file, as the build reports them.
fn model(
    target: Option<&syn::LitStr>,
    settings: &CrateSettings,
    diagnostics: &mut Vec<lsp_types::Diagnostic>,
) -> Model {
    let target = match target {
        Some(literal) => script_target(&literal.value()).unwrap_or_else(|error| {
            diagnostics.push(top_error(format!("invalid `target`: {error}")));
            Target::any()
        }),
        None => reported(&settings.target, diagnostics).unwrap_or_default(),
    };
    Model {
        target,
        declared_commands: reported(&settings.declared_commands, diagnostics).unwrap_or_default(),
    }
}

fn top_error(message: String) -> lsp_types::Diagnostic {
    lsp_types::Diagnostic {
        range: Range::default(),
        severity: Some(DiagnosticSeverity::ERROR),
        source: Some(SOURCE.to_owned()),
        message,
        ..lsp_types::Diagnostic::default()
    }
}

/// The diagnostics the build gives, in the build's severities: a warning
/// fails the build, and is an error, when the crate denies warnings.
fn published(
    text: &str,
    diagnostics: &[Diagnostic],
    deny_warnings: bool,
    parameter_at: impl Fn(&Diagnostic) -> Option<RustSpan>,
    declared_at: &RustSpan,
) -> Vec<lsp_types::Diagnostic> {
    diagnostics
        .iter()
        .map(|diagnostic| {
            let mut published = convert(text, diagnostic, deny_warnings);
            let parameter = parameter_at(diagnostic);
            let related_information = parameter
                .and_then(|parameter| related(&parameter, "the parameter"))
                .into_iter()
                .chain(related(declared_at, "declared here"))
                .collect();
            published.related_information = Some(related_information);
            published
        })
        .collect()
}

/// One analysis diagnostic in the protocol's terms: the message, its
/// notes and help on the lines below, and what a code action can do
/// about it in `data`.
pub fn convert(text: &str, diagnostic: &Diagnostic, deny_warnings: bool) -> lsp_types::Diagnostic {
    let mut message = diagnostic.message.clone();
    for note in &diagnostic.notes {
        message.push_str("\nnote: ");
        message.push_str(note);
    }
    if let Some(help) = &diagnostic.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let severity = match diagnostic.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning if deny_warnings => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
    };
    let range = text::range(text, diagnostic.line, diagnostic.column, diagnostic.width);
    lsp_types::Diagnostic {
        range,
        severity: Some(severity),
        code: Some(NumberOrString::String(diagnostic.code.code().to_owned())),
        source: Some(SOURCE.to_owned()),
        message,
        data: super::actions::fixes(text, range, diagnostic),
        ..lsp_types::Diagnostic::default()
    }
}

fn script(
    text: &str,
    declaration: &Declaration,
    declared_at: &RustSpan,
    settings: &CrateSettings,
) -> Verdict {
    let mut diagnostics = Vec::new();
    let model = model(
        declaration.options.target.as_ref(),
        settings,
        &mut diagnostics,
    );
    let target = model.target.clone();
    let signature = SignatureBuilder::of_declaration(declaration)
        .model(model)
        .build();
    let found = analysis::analyze(text, &signature);
    let parameter_at = |diagnostic: &Diagnostic| {
        parameter_span(declaration, diagnostic.parameter, &declared_at.file)
    };
    diagnostics.extend(published(
        text,
        &found.diagnostics,
        settings.deny_warnings,
        parameter_at,
        declared_at,
    ));
    if let Some(once) = &declaration.options.exactly_once
        && let Some(reason) = analysis::exactly_once::refusal(&found)
    {
        let mut refusal = top_error(reason);
        refusal.related_information = Some(
            related(
                &RustSpan::of(&declared_at.file, once.span),
                "`exactly_once`",
            )
            .into_iter()
            .collect(),
        );
        diagnostics.push(refusal);
    }
    Verdict {
        diagnostics,
        parameters: rust_parameters(declaration, None),
        target,
        declarations: Vec::new(),
    }
}

fn library(
    text: &str,
    declaration: &LibraryDeclaration,
    declared_at: &RustSpan,
    settings: &CrateSettings,
) -> Verdict {
    let mut diagnostics = Vec::new();
    let model = model(declaration.target.as_ref(), settings, &mut diagnostics);
    let target = model.target.clone();
    let found = analysis::analyze_library(text, &library_signature(declaration, model));
    let parameter_at = |diagnostic: &Diagnostic| {
        let function = declaration.functions.get(diagnostic.function?)?;
        // About the function itself: its name.
        parameter_span(function, diagnostic.parameter, &declared_at.file)
            .or_else(|| Some(RustSpan::of(&declared_at.file, function.name_span())))
    };
    diagnostics.extend(published(
        text,
        &found.diagnostics,
        settings.deny_warnings,
        parameter_at,
        declared_at,
    ));
    // In a library, `KEYS`/`ARGV` are the callbacks' parameters: hover
    // names every declared function's.
    let parameters = declaration
        .functions
        .iter()
        .flat_map(|function| rust_parameters(function, Some(&registered_name(function))))
        .collect();
    Verdict {
        diagnostics,
        parameters,
        target,
        declarations: Vec::new(),
    }
}

/// The Rust parameter a diagnostic is about.
fn parameter_span(
    declaration: &Declaration,
    parameter: Option<Parameter>,
    file: &Path,
) -> Option<RustSpan> {
    Some(RustSpan::of(file, declaration.parameter_span(parameter?)?))
}

/// What hover says of each declared parameter.
fn rust_parameters(declaration: &Declaration, function: Option<&str>) -> Vec<ParameterInfo> {
    let signature = &declaration.signature;
    let typed = |param: &redis_script_declaration::Param| {
        format!("{}: {}", param.ident, type_text(&param.ty))
    };
    let reply = &signature.reply;
    let declared = format!(
        "async fn {}({}) -> {}",
        signature.ident,
        signature
            .params
            .iter()
            .map(typed)
            .collect::<Vec<_>>()
            .join(", "),
        type_text(reply)
    );
    let owner = match function {
        Some(name) => format!("the library function `{name}`"),
        None => "the script".to_owned(),
    };
    let describe = |key: bool, params: &[redis_script_declaration::Param]| {
        let table = if key { "KEYS" } else { "ARGV" };
        params
            .iter()
            .enumerate()
            .map(|(position, param)| {
                let index = position + 1;
                let sent = if param.variadic {
                    format!("`{table}[{index}..]`, one element each")
                } else {
                    format!("`{table}[{index}]`")
                };
                let prefix = if param.key_prefix.is_some() {
                    "; `#[key_prefix]`: keys are built from it"
                } else {
                    ""
                };
                ParameterInfo {
                    key,
                    index,
                    variadic: param.variadic,
                    description: format!(
                        "```rust\n{}\n```\nsent as {sent} of {owner}{prefix}\n```rust\n{declared}\n```",
                        typed(param)
                    ),
                }
            })
            .collect::<Vec<_>>()
    };
    let mut parameters = describe(true, signature.key_params());
    parameters.extend(describe(false, signature.arg_params()));
    parameters
}

/// A file no declaration names: checked as the command line checks it,
/// with the settings of its crate (else of its directory), which win over
/// its `redis-script.toml` as the command line's do.
fn by_header(path: &Path, text: &str) -> Verdict {
    let directory =
        crate_root(path).unwrap_or_else(|| path.parent().unwrap_or(Path::new(".")).to_path_buf());
    let settings = CrateSettings::read(&directory);
    let mut diagnostics = Vec::new();
    let options = Options {
        target: reported(&settings.target, &mut diagnostics)
            .map(|target| target.with_scope(TargetScope::Script)),
        declared_commands: reported(&settings.declared_commands, &mut diagnostics),
        ..Options::default()
    };
    let config = match Config::find(path) {
        Ok(config) => config,
        Err(message) => {
            diagnostics.push(top_error(message));
            None
        }
    };
    let target = options
        .target
        .clone()
        .or_else(|| config.as_ref().and_then(|config| config.target.clone()))
        .unwrap_or_default();
    let checked = check::check_lua_text(path, text.to_owned(), &options, config.as_ref());
    let deny_warnings = settings.deny_warnings || config.as_ref().is_some_and(|c| c.deny_warnings);
    for located in &checked.diagnostics {
        match located.file.and_then(|index| checked.includes.get(index)) {
            None => diagnostics.push(convert(text, &located.diagnostic, deny_warnings)),
            // In a file the script includes: shown at the top, with the
            // place in that file.
            Some(included) => {
                let mut shown = convert(&included.source, &located.diagnostic, deny_warnings);
                let location = uri::from_path(Path::new(&included.path)).map(|uri| Location {
                    uri,
                    range: shown.range,
                });
                shown.range = Range::default();
                shown.data = None;
                shown.related_information = location.map(|location| {
                    vec![DiagnosticRelatedInformation {
                        location,
                        message: format!("in `{}`, which the script includes", included.path),
                    }]
                });
                diagnostics.push(shown);
            }
        }
    }
    Verdict {
        diagnostics,
        parameters: header_parameters(&Header::parse(text)),
        target,
        declarations: Vec::new(),
    }
}

fn header_parameters(header: &Header) -> Vec<ParameterInfo> {
    let describe = |key: bool, docs: &[analysis::ParamDoc]| {
        docs.iter()
            .map(move |doc| ParameterInfo {
                key,
                index: doc.index,
                variadic: doc.variadic,
                description: format!(
                    "{}[{}{}]: {} (from the header, line {})",
                    if key { "KEYS" } else { "ARGV" },
                    doc.index,
                    if doc.variadic { ".." } else { "" },
                    doc.text,
                    doc.line
                ),
            })
            .collect::<Vec<_>>()
    };
    let mut parameters = describe(true, &header.keys);
    parameters.extend(describe(false, &header.args));
    parameters
}
