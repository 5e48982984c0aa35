//! The analysis in its phases, in order: the source (syntax, `#!lua`
//! line, header, opt-outs), what the declaration says of it, the walk with
//! the findings observing it, and the diagnostics put in order.

pub(crate) mod library;
mod requirements;

use crate::domain::analysis::Analysis;
use crate::domain::signature::{self, Signature};
use crate::source::code::Code;
use crate::source::diagnostic::{Diagnostic, SourceEnd};
use crate::source::syntax::Prepared;
use crate::source::{allow, header, shebang};
use crate::{findings, interp};

/// Whether `source` parses as Lua 5.1, the language Redis compiles
/// scripts with: for tools deciding whether a text is a script at all.
pub fn parses_as_lua(source: &str) -> bool {
    Prepared::new(source).parse().is_ok()
}

/// Parses `source` as Lua 5.1 and checks it against `signature`.
///
/// Never panics; every problem becomes a [`Diagnostic`].
pub fn analyze(source: &str, signature: &Signature) -> Analysis {
    let prepared = Prepared::new(source);
    guarded(&prepared, internal_error, || {
        analyze_here(source, &prepared, signature)
    })
}

/// Runs an analysis so that it never takes the compiler down. The parser
/// recurses once per nesting level and, in the unoptimised builds proc
/// macros get, needs far more stack per level than a compiler thread may
/// have left. Real scripts nest a handful of levels: they run here. Deeper
/// ones (the nesting is capped, see `syntax`) run on a thread with room for
/// the cap; spawning it costs milliseconds.
pub(super) fn guarded<T: Send>(
    prepared: &Prepared,
    on_panic: fn() -> T,
    run: impl Fn() -> T + Send + Sync,
) -> T {
    if prepared.depth() <= SHALLOW_NESTING {
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(&run))
            .unwrap_or_else(|_panic| on_panic());
    }
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("redis-script-lua-analysis".into())
            .stack_size(ANALYSIS_STACK_BYTES)
            .spawn_scoped(scope, &run)
            .map(|handle| handle.join())
    });
    match outcome {
        Ok(Ok(result)) => result,
        Ok(Err(_panic)) => on_panic(),
        // No thread to be had: the caller's stack, still never a panic.
        Err(_no_thread) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(&run))
            .unwrap_or_else(|_panic| on_panic()),
    }
}

/// Nesting analysed on the caller's stack: about 80 KiB per level
/// unoptimised, so well under the smallest stack a compiler thread has.
pub(crate) const SHALLOW_NESTING: usize = 24;

const ANALYSIS_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Prefix of the diagnostic reporting a bug of the analysis itself.
pub const INTERNAL_ERROR: &str = "internal error in the Lua analysis";

fn internal_error() -> Analysis {
    Analysis {
        diagnostics: vec![internal_error_diagnostic()],
        ..Analysis::default()
    }
}

pub(super) fn internal_error_diagnostic() -> Diagnostic {
    Diagnostic::error(
        Code::InternalError,
        1,
        1,
        1,
        format!("{INTERNAL_ERROR}: it stopped on this script"),
    )
    .with_help("please report this script to the redis-script maintainers")
}

fn analyze_here(source: &str, prepared: &Prepared, signature: &Signature) -> Analysis {
    // The source: its first line, header and opt-outs.
    let first_line = shebang::parse(source);
    if let Some(name) = &first_line.library_name {
        return Analysis {
            diagnostics: vec![shebang::given_as_script(source, name)],
            ..Analysis::default()
        };
    }
    let header = header::parse(source);
    let (silenced, mut diagnostics) = allow::silenced(source, &signature.allow);
    diagnostics.extend(first_line.diagnostics);
    let flags = first_line.flags;
    if flags.has_shebang {
        diagnostics.extend(requirements::shebang(source, &signature.target));
    }
    diagnostics.extend(requirements::read_only(
        signature.read_only,
        &signature.target,
    ));
    // What the declaration says against what the header documents.
    diagnostics.extend(signature::contradictions(&header, signature));

    let mut analysis = Analysis {
        flags: flags.clone(),
        header,
        ..Analysis::default()
    };
    match prepared.parse() {
        Ok(ast) => {
            let outcome = interp::run(
                source,
                &ast,
                signature,
                &flags,
                &analysis.header,
                findings::ALL,
            );
            diagnostics.extend(outcome.diagnostics);
            let script = outcome.script;
            analysis.returns = script.returns;
            analysis.error_codes = script.error_codes;
            analysis.review = script.review;
            analysis.key_prefixes = script.key_prefixes;
            analysis.json_reads = script.json_reads;
            analysis.read_only = flags.no_writes || !script.may_write;
            analysis.chunk_varargs = outcome.chunk_varargs;
        }
        Err(syntax_errors) => {
            diagnostics.extend(syntax_errors);
            analysis.error_codes.unknown = true;
            analysis.read_only = flags.no_writes;
        }
    }
    diagnostics.retain(|diagnostic| !silenced.covers(diagnostic));
    analysis.diagnostics = finish_diagnostics(source, diagnostics);
    analysis
}

/// Keeps every position inside the source, sorts by position and drops
/// duplicates (a callback registered twice is walked twice).
pub(super) fn finish_diagnostics(
    source: &str,
    mut diagnostics: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let end = SourceEnd::of(source);
    for diagnostic in &mut diagnostics {
        diagnostic.keep_within(&end);
    }
    diagnostics.sort_by_key(|diagnostic| (diagnostic.line, diagnostic.column));
    diagnostics.dedup();
    diagnostics
}
