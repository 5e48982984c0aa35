//! A function library's analysis in its phases: the `#!lua name=` line and
//! the header, the registrations, the walk of the top level and of each
//! callback, and which declarations the registrations cover.

use crate::domain::library::{LibraryAnalysis, LibrarySignature, RegisteredFunction};
use crate::findings;
use crate::interp::{self, library::Plan};
use crate::source::code::Code;
use crate::source::diagnostic::{Diagnostic, Severity};
use crate::source::span::{SourceMap, Span};
use crate::source::syntax::Prepared;
use crate::source::text::quoted_list;
use crate::source::{allow, header, shebang};

/// Parses `source` as a function library and checks it, and each function
/// it registers, against `declaration`.
///
/// Never panics; every problem becomes a [`Diagnostic`].
///
/// ```
/// use redis_script_analysis::{DeclaredFunction, LibrarySignature, Signature, analyze_library};
///
/// let source = "#!lua name=counters\n\
///     redis.register_function('bump', function(keys, args)\n\
///       return redis.call('INCRBY', keys[1], args[1])\n\
///     end)";
/// let declaration = LibrarySignature {
///     functions: vec![DeclaredFunction {
///         name: "bump".into(),
///         signature: Signature { keys: 1, args: 1, ..Signature::default() },
///     }],
///     ..LibrarySignature::default()
/// };
/// let analysis = analyze_library(source, &declaration);
/// assert_eq!(analysis.errors().count(), 0);
/// assert_eq!(analysis.name.as_deref(), Some("counters"));
/// assert!(!analysis.functions[0].read_only);
/// ```
pub fn analyze_library(source: &str, declaration: &LibrarySignature) -> LibraryAnalysis {
    let prepared = Prepared::new(source);
    super::guarded(
        &prepared,
        || LibraryAnalysis {
            diagnostics: vec![super::internal_error_diagnostic()],
            ..LibraryAnalysis::default()
        },
        || analyze_here(source, &prepared, declaration),
    )
}

fn analyze_here(
    source: &str,
    prepared: &Prepared,
    declaration: &LibrarySignature,
) -> LibraryAnalysis {
    // The source: its first line, header and opt-outs.
    let Some(first_line) = shebang::parse_library(source) else {
        return LibraryAnalysis {
            diagnostics: vec![shebang::given_as_library(source)],
            ..LibraryAnalysis::default()
        };
    };
    let mut analysis = LibraryAnalysis {
        name: first_line.name,
        header: header::parse(source),
        ..LibraryAnalysis::default()
    };
    let (silenced, mut diagnostics) = allow::silenced(source, &declaration.library.allow);
    diagnostics.extend(first_line.diagnostics);
    // A server without Functions never runs a line of it: nothing else is
    // worth saying until the target changes.
    if let Some(refused) = super::requirements::functions(&declaration.library.target) {
        diagnostics.push(refused);
        analysis.diagnostics = super::finish_diagnostics(source, diagnostics);
        return analysis;
    }
    match prepared.parse() {
        Ok(ast) => {
            let map = SourceMap::new(source);
            let (plan, plan_diagnostics) = interp::library::plan(&ast, &map, declaration);
            let registration_failed = !plan_diagnostics.is_empty();
            diagnostics.extend(plan_diagnostics);
            let outcome = interp::run_library(
                source,
                &ast,
                &plan,
                &declaration.library,
                &analysis.header,
                findings::ALL,
            );
            diagnostics.extend(outcome.diagnostics);
            // A load that raises first never gets to count the functions.
            let load_fails = diagnostics
                .iter()
                .any(|diagnostic| diagnostic.severity == Severity::Error);
            if plan.registrations.is_empty() && !registration_failed && !load_fails {
                diagnostics.push(Span::TOP.error(
                    Code::RegisterFunction,
                    "the library registers no function: FUNCTION LOAD fails with \"No functions registered\"",
                    "register each function at the top level: `redis.register_function('name', function(keys, args) … end)`",
                ));
            }
            // A registration FUNCTION LOAD refuses is reported once, not
            // again as a declared function the library lacks.
            if !registration_failed {
                diagnostics.extend(coverage(&plan, declaration));
            }
            analysis.functions = plan
                .registrations
                .into_iter()
                .zip(outcome.functions)
                .map(|(registration, outcome)| RegisteredFunction {
                    // FCALL_RO refuses every function registered without
                    // `no-writes`, whether or not it writes.
                    read_only: registration.flags.no_writes,
                    name: registration.name,
                    line: registration.span.line,
                    column: registration.span.column,
                    flags: registration.flags,
                    description: registration.description,
                    declaration: registration.declaration,
                    returns: outcome.returns,
                    review: outcome.review,
                    error_codes: outcome.error_codes,
                    key_prefixes: outcome.key_prefixes,
                    callback: registration.callback,
                })
                .collect();
        }
        Err(syntax_errors) => diagnostics.extend(syntax_errors),
    }
    diagnostics.retain(|diagnostic| !silenced.covers(diagnostic));
    analysis.diagnostics = super::finish_diagnostics(source, diagnostics);
    analysis
}

/// Declarations the file does not register (errors) and registrations no
/// declaration covers (notes, when there are declarations at all: a
/// library checked or deployed without typed calls declares none).
fn coverage(plan: &Plan, declaration: &LibrarySignature) -> Vec<Diagnostic> {
    let registered: Vec<&str> = plan
        .registrations
        .iter()
        .map(|registration| registration.name.as_str())
        .collect();
    let mut diagnostics = Vec::new();
    for (index, declared) in declaration.functions.iter().enumerate() {
        if registered.contains(&declared.name.as_str()) {
            continue;
        }
        let hint = match crate::source::suggest::closest(&declared.name, registered.iter().copied())
        {
            Some(near) => format!("did you mean `{near}`?"),
            None if registered.is_empty() => {
                "register it with `redis.register_function`".to_string()
            }
            None => format!("the library registers {}", quoted_list(&registered)),
        };
        let mut diagnostic = Span::TOP.error(
            Code::UnregisteredFunction,
            format!(
                "the library registers no function `{}`: FCALL would fail with \"Function not found\"",
                declared.name
            ),
            hint,
        );
        diagnostic.function = Some(index);
        diagnostics.push(diagnostic);
    }
    for registration in &plan.registrations {
        if registration.declaration.is_none() && !declaration.functions.is_empty() {
            diagnostics.push(registration.span.warning(
                Code::UndeclaredFunction,
                format!(
                    "`{}` is registered by the library but not declared, so it has no typed call",
                    registration.name
                ),
                "declare it next to the others (with its keys and reply type), or remove it from the library",
            ));
        }
    }
    diagnostics
}
