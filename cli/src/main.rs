//! `redis-script-check`: checks Redis Lua scripts outside any Rust crate,
//! for CI. The checks are the ones `#[redis_script]` runs at compile time;
//! the keys and arguments come from each script's header comment
//! (`-- KEYS[1] = …`) or from `--keys`/`--args`.
//!
//! Exit status: 0 when no script has an error, 1 when one has (or has a
//! warning, with `--deny-warnings`), 2 on a usage error.

use std::io::Write as _;
use std::process::ExitCode;

mod acl;
mod assemble;
mod baseline;
mod cargo_config;
mod check;
mod config;
mod embedded;
mod glob;
mod lsp;
mod options;
mod report;
mod review;
mod sarif;

use options::{Command, Format};

fn main() -> ExitCode {
    let options = match options::parse(std::env::args_os().skip(1)) {
        Ok(Command::Check(options)) => options,
        Ok(Command::Help) => return print(options::USAGE),
        Ok(Command::Version) => {
            return print(&format!(
                "redis-script-check {}\n",
                env!("CARGO_PKG_VERSION")
            ));
        }
        Ok(Command::Explain(code)) => return print(code.explanation()),
        Ok(Command::ExplainAll) => return print(&options::code_list()),
        Ok(Command::Lsp) => return lsp::run(),
        Err(message) => return usage_error(&message),
    };
    let scripts = match check::find_scripts(&options) {
        Ok(scripts) => scripts,
        Err(message) => return usage_error(&message),
    };
    let mut outcome = check::check_all(&scripts, &options);
    let mut baseline_summary = None;
    if let Some(file) = &options.baseline {
        let result = if options.update_baseline {
            baseline::write(file, &outcome).map(|recorded| {
                eprintln!("{}", baseline::written_message(file, recorded));
                outcome
                    .scripts
                    .iter_mut()
                    .for_each(|script| script.diagnostics.clear());
                None
            })
        } else {
            baseline::apply(file, &mut outcome).map(Some)
        };
        match result {
            Ok(summary) => baseline_summary = summary,
            Err(message) => return usage_error(&message),
        }
    }
    let deny_warnings = options.deny_warnings || outcome.deny_warnings;
    let mut report = match options.format {
        Format::Human => report::human(&outcome, deny_warnings),
        Format::Json => report::json(&outcome),
        Format::Sarif => sarif::log(&outcome),
        Format::Report => review::markdown(&outcome),
        Format::Acl => acl::rules(&outcome),
    };
    if let (Some(summary), Format::Human) = (baseline_summary, options.format) {
        report.push_str(&summary.describe());
    }
    let failed = outcome.errors() > 0 || (deny_warnings && outcome.warnings() > 0);
    match (print(&report), failed) {
        (ExitCode::SUCCESS, true) => ExitCode::from(1),
        (status, _) => status,
    }
}

/// Writes to stdout; a closed pipe or a full disk is a failure, not a
/// panic.
fn print(text: &str) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!(
        "error: {message}\n\nUsage: redis-script-check [OPTIONS] <PATH>...\nFor more information, try `--help`."
    );
    ExitCode::from(2)
}
