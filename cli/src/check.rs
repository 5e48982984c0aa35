//! Finding the scripts and checking each one.

use std::path::{Path, PathBuf};

use redis_script_analysis::acl::AclRules;
use redis_script_analysis::{
    self as analysis, DeclaredBy, Diagnostic, Header, Severity, Signature,
};

use crate::options::{Count, Options};

/// One script and what the check found.
#[derive(Debug)]
pub struct CheckedFile {
    /// The path as the user will recognise it: the argument it was found
    /// under, joined with its place below that directory.
    pub path: String,
    /// The text, for source excerpts.
    pub source: String,
    /// The keys and arguments it was checked against; `None` when neither
    /// the header nor the options declare them.
    pub signature: Option<Signature>,
    /// A function library (`#!lua name=…`) rather than a script.
    pub library: bool,
    pub diagnostics: Vec<Diagnostic>,
    /// What the analysis proved of a script, for `--report`; `None` for a
    /// library and for a script whose parameters are not declared.
    pub facts: Option<Facts>,
    /// The ACL rules calling it needs, for `--acl`; `None` for a script
    /// whose parameters are not declared.
    pub acl: Option<AclRules>,
}

/// What the review report shows of a script besides its findings.
#[derive(Debug)]
pub struct Facts {
    pub review: analysis::Review,
    pub read_only: bool,
    pub header: Header,
    pub flags: analysis::ScriptFlags,
    pub returns: Vec<analysis::ReturnSite>,
}

impl CheckedFile {
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.severity == severity)
            .count()
    }
}

/// A script that could not be read (the message says why).
#[derive(Debug)]
pub struct Unreadable {
    pub path: String,
    pub reason: String,
}

/// Everything one run found.
#[derive(Debug, Default)]
pub struct CheckRun {
    pub scripts: Vec<CheckedFile>,
    pub unreadable: Vec<Unreadable>,
}

impl CheckRun {
    pub fn errors(&self) -> usize {
        self.unreadable.len()
            + self
                .scripts
                .iter()
                .map(|script| script.count(Severity::Error))
                .sum::<usize>()
    }

    pub fn warnings(&self) -> usize {
        self.scripts
            .iter()
            .map(|script| script.count(Severity::Warning))
            .sum()
    }
}

/// The `.lua` files named by the command line, in a stable order: files
/// as given, directories searched recursively. The error is a usage error.
pub fn find_scripts(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut scripts = Vec::new();
    for path in paths {
        let metadata = std::fs::metadata(path)
            .map_err(|error| format!("cannot read `{}`: {error}", path.display()))?;
        if metadata.is_dir() {
            let before = scripts.len();
            collect_directory(path, &mut scripts)
                .map_err(|error| format!("cannot read `{}`: {error}", path.display()))?;
            if scripts.len() == before {
                return Err(format!("no .lua file in `{}`", path.display()));
            }
        } else {
            scripts.push(path.clone());
        }
    }
    Ok(scripts)
}

fn collect_directory(directory: &Path, scripts: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries = std::fs::read_dir(directory)?.collect::<Result<Vec<_>, _>>()?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        let is_hidden = entry.file_name().to_string_lossy().starts_with('.');
        // The entry's own type: a symbolic link to a directory is not
        // followed, so a link cycle cannot recurse forever.
        let file_type = entry.file_type()?;
        if file_type.is_dir() && !is_hidden {
            collect_directory(&path, scripts)?;
        } else if !file_type.is_dir() && path.extension().is_some_and(|ext| ext == "lua") {
            scripts.push(path);
        }
    }
    Ok(())
}

/// Reads and checks every script.
pub fn check_all(scripts: &[PathBuf], options: &Options) -> CheckRun {
    let mut outcome = CheckRun::default();
    for path in scripts {
        let shown = path.display().to_string();
        match std::fs::read(path) {
            // Lua strings may hold any bytes; the checks only read the
            // code around them.
            Ok(bytes) => {
                let source = String::from_utf8_lossy(&bytes).into_owned();
                outcome.scripts.push(check(shown, source, options));
            }
            Err(error) => outcome.unreadable.push(Unreadable {
                path: shown,
                reason: error.to_string(),
            }),
        }
    }
    outcome
}

fn check(path: String, source: String, options: &Options) -> CheckedFile {
    if analysis::is_library(&source) {
        return check_library(path, source, options);
    }
    let signature = signature_for(&Header::parse(&source), &source, options);
    let (diagnostics, facts, acl) = match &signature {
        Some(signature) => {
            let analysis = analysis::analyze(&source, signature);
            let acl = AclRules::of_script(&analysis, signature);
            let facts = Facts {
                review: analysis.review,
                read_only: analysis.read_only,
                header: analysis.header,
                flags: analysis.flags,
                returns: analysis.returns,
            };
            (analysis.diagnostics, Some(facts), Some(acl))
        }
        None => (vec![undeclared()], None, None),
    };
    CheckedFile {
        path,
        source,
        signature,
        library: false,
        diagnostics,
        facts,
        acl,
    }
}

/// A function library: the file as FUNCTION LOAD runs it and each
/// registered function as FCALL runs it, with the keys and arguments each
/// callback reads (the command line declares no functions).
fn check_library(path: String, source: String, options: &Options) -> CheckedFile {
    let library = Signature {
        dynamic_keys: options.dynamic_keys,
        target: options.target.clone(),
        declared_commands: options.declared_commands.clone(),
        allow: options.allow.clone(),
        ..Signature::default()
    };
    let declaration = analysis::LibrarySignature {
        library,
        functions: Vec::new(),
    };
    let library = analysis::analyze_library(&source, &declaration);
    let acl = AclRules::of_library(&library, &declaration);
    CheckedFile {
        path,
        source,
        signature: None,
        library: true,
        diagnostics: library.diagnostics,
        facts: None,
        acl: Some(acl),
    }
}

/// The keys and arguments to check a script against: `--keys`/`--args`
/// when given (the one not given is 0), else what the header documents.
/// A script that never mentions KEYS or ARGV needs no declaration.
pub fn signature_for(header: &Header, source: &str, options: &Options) -> Option<Signature> {
    let mentions_parameters = source.contains("KEYS") || source.contains("ARGV");
    let signature = if options.keys.is_some() || options.args.is_some() {
        let (keys, variadic_keys) = split(options.keys);
        let (args, variadic_args) = split(options.args);
        Signature {
            keys,
            args,
            variadic_keys,
            variadic_args,
            declared_by: DeclaredBy::CommandLine,
            ..Signature::default()
        }
    } else if let Some(documented) = header.documented_signature() {
        documented
    } else if !mentions_parameters {
        Signature {
            declared_by: DeclaredBy::Header,
            ..Signature::default()
        }
    } else {
        return None;
    };
    let key_prefix_args = header
        .key_prefix_args()
        .union(&options.key_prefix_args)
        .copied()
        .collect();
    Some(Signature {
        allow_unused: options.allow_unused,
        dynamic_keys: options.dynamic_keys,
        key_prefix_args,
        read_only: options.read_only,
        target: options.target.clone(),
        declared_commands: options.declared_commands.clone(),
        allow: options.allow.clone(),
        ..signature
    })
}

fn split(count: Option<Count>) -> (usize, bool) {
    count.map_or((0, false), |count| (count.fixed, count.variadic))
}

fn undeclared() -> Diagnostic {
    Diagnostic::error(
        analysis::Code::UndeclaredInterface,
        1,
        1,
        1,
        "the script does not declare the keys and arguments it takes",
    )
    .with_help(
        "document them in its header comment (`-- KEYS[1] = …`, `-- ARGV[1] = …`, `-- ARGV[2..] = …` for a variadic list), or pass `--keys N --args N`",
    )
}
