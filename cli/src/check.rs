//! Finding the scripts and checking each one.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use redis_script_analysis::acl::AclRules;
use redis_script_analysis::{
    self as analysis, DeclaredBy, Diagnostic, Header, Severity, Signature,
};
use redis_script_declaration::{Model, SignatureBuilder};

use crate::assemble::{self, Assembled, Includes, Origin};
use crate::config::{Config, FILE_NAME, ScriptSettings};
use crate::embedded::{self, Embedded, Host};
use crate::options::{Count, Options};

/// One script and what the check found.
#[derive(Debug)]
pub struct CheckedFile {
    /// The path as the user will recognise it: the argument it was found
    /// under, joined with its place below that directory.
    pub path: String,
    /// The text, for source excerpts.
    pub source: String,
    /// The files its includes and prelude brought in, which diagnostics
    /// may point into.
    pub includes: Vec<SourceFile>,
    /// The keys and arguments it was checked against; `None` when neither
    /// the header nor the options declare them.
    pub signature: Option<Signature>,
    /// A function library (`#!lua name=…`) rather than a script.
    pub library: bool,
    /// The servers it was checked for.
    pub target: analysis::Target,
    pub diagnostics: Vec<Located>,
    /// What the analysis proved of a script, for `--report`; `None` for a
    /// library and for a script whose parameters are not declared.
    pub facts: Option<Facts>,
    /// The ACL rules calling it needs, for `--acl`; `None` for a script
    /// whose parameters are not declared.
    pub acl: Option<AclRules>,
    /// For a script embedded in a host file: where, and which counts were
    /// guessed.
    pub embedded_in: Option<EmbeddedIn>,
}

/// Where a script embedded in a host file stands, and what its counts
/// rest on.
#[derive(Debug)]
pub struct EmbeddedIn {
    /// The host file.
    pub path: String,
    /// The host line the script's text starts at.
    pub line: usize,
    /// The counts nothing states (no call, configuration or header), which
    /// the checker took from the indices the script reads.
    pub guessed: Guessed,
}

/// Which of a script's two counts are guesses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Guessed {
    pub keys: bool,
    pub args: bool,
}

impl Guessed {
    pub fn any(self) -> bool {
        self.keys || self.args
    }

    /// `keys`, `arguments`, or `keys and arguments`; empty when neither.
    pub fn describe(self) -> &'static str {
        match (self.keys, self.args) {
            (true, true) => "keys and arguments",
            (true, false) => "keys",
            (false, true) => "arguments",
            (false, false) => "",
        }
    }
}

/// A file a diagnostic can point into.
#[derive(Debug)]
pub struct SourceFile {
    pub path: String,
    pub source: String,
}

/// A diagnostic and the file it points into.
#[derive(Debug)]
pub struct Located {
    pub diagnostic: Diagnostic,
    /// `None`: the script's own file; else the index of one of its
    /// `includes`.
    pub file: Option<usize>,
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

impl Facts {
    /// An analysis as its diagnostics and what the report shows.
    fn split(analysis: analysis::Analysis) -> (Vec<Diagnostic>, Facts) {
        let facts = Facts {
            review: analysis.review,
            read_only: analysis.read_only,
            header: analysis.header,
            flags: analysis.flags,
            returns: analysis.returns,
        };
        (analysis.diagnostics, facts)
    }
}

impl CheckedFile {
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|located| located.diagnostic.severity == severity)
            .count()
    }

    /// The path and text of the file `located` points into.
    pub fn place(&self, located: &Located) -> (&str, &str) {
        match located.file.and_then(|index| self.includes.get(index)) {
            Some(file) => (&file.path, &file.source),
            None => (&self.path, &self.source),
        }
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
    /// A configuration said `deny_warnings = true`.
    pub deny_warnings: bool,
    /// Where host files build a script at run time (`path:line`): not
    /// checked.
    pub built_at_run_time: Vec<String>,
    /// How many scripts had include lines that no configuration said how
    /// to read, read as bullmq's loader reads them.
    pub includes_detected: usize,
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

/// A script to check, and how it was found.
#[derive(Debug)]
pub struct Found {
    pub path: PathBuf,
    /// Named on the command line, rather than found in a directory: it is
    /// checked even when the configuration excludes it or another script
    /// includes it.
    pub named: bool,
    pub config: Option<Arc<Config>>,
}

/// The scripts named by the command line, in a stable order: files as
/// given, directories searched recursively, less what their configuration
/// excludes; each with the configuration that applies to it (`--config`,
/// else the nearest `redis-script.toml` above it). The error is a usage
/// error.
pub fn find_scripts(options: &Options) -> Result<Vec<Found>, String> {
    let explicit = options
        .config
        .as_deref()
        .map(Config::read)
        .transpose()?
        .map(Arc::new);
    let mut configs = Configs {
        explicit,
        by_directory: HashMap::new(),
    };
    let mut scripts = Vec::new();
    for path in &options.paths {
        let metadata = std::fs::metadata(path)
            .map_err(|error| format!("cannot read `{}`: {error}", path.display()))?;
        if !metadata.is_dir() {
            scripts.push(Found {
                config: configs.of(path)?,
                path: path.clone(),
                named: true,
            });
            continue;
        }
        let embedded = options.embedded
            || configs
                .of(&path.join(FILE_NAME))?
                .is_some_and(|config| config.embedded);
        let mut files = Vec::new();
        collect_directory(path, embedded, &mut files)
            .map_err(|error| format!("cannot read `{}`: {error}", path.display()))?;
        let before = scripts.len();
        for file in files {
            let config = configs.of(&file)?;
            if !config.as_ref().is_some_and(|config| config.excludes(&file)) {
                scripts.push(Found {
                    path: file,
                    named: false,
                    config,
                });
            }
        }
        if scripts.len() == before {
            let what = if embedded { "script" } else { ".lua file" };
            return Err(format!("no {what} in `{}`", path.display()));
        }
    }
    Ok(scripts)
}

/// The configurations read so far, by the directory they apply to.
struct Configs {
    explicit: Option<Arc<Config>>,
    by_directory: HashMap<PathBuf, Option<Arc<Config>>>,
}

impl Configs {
    /// The configuration that applies to `file`.
    fn of(&mut self, file: &Path) -> Result<Option<Arc<Config>>, String> {
        if let Some(config) = &self.explicit {
            return Ok(Some(Arc::clone(config)));
        }
        let directory = file.parent().unwrap_or(Path::new("")).to_path_buf();
        if let Some(found) = self.by_directory.get(&directory) {
            return Ok(found.clone());
        }
        // One file read once, whichever directory finds it.
        let found = Config::find(file)?.map(|config| {
            self.by_directory
                .values()
                .flatten()
                .find(|known| known.file == config.file)
                .cloned()
                .unwrap_or_else(|| Arc::new(config))
        });
        self.by_directory.insert(directory, found.clone());
        Ok(found)
    }
}

/// The `.lua` files below `directory`, and with `embedded` the sources of
/// the host languages too (outside dependency folders).
fn collect_directory(
    directory: &Path,
    embedded: bool,
    scripts: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    let mut entries = std::fs::read_dir(directory)?.collect::<Result<Vec<_>, _>>()?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let skipped =
            name.starts_with('.') || (embedded && DEPENDENCY_FOLDERS.contains(&name.as_str()));
        // The entry's own type: a symbolic link to a directory is not
        // followed, so a link cycle cannot recurse forever.
        let file_type = entry.file_type()?;
        if file_type.is_dir() && !skipped {
            collect_directory(&path, embedded, scripts)?;
        } else if !file_type.is_dir()
            && (path.extension().is_some_and(|ext| ext == "lua")
                || (embedded && Host::of(&path).is_some()))
        {
            scripts.push(path);
        }
    }
    Ok(())
}

/// Folders of other projects' code, which `--embedded` does not search.
const DEPENDENCY_FOLDERS: &[&str] = &[
    "node_modules",
    "vendor",
    "site-packages",
    "__pycache__",
    "target",
];

/// How one script is checked: the options, over its configuration.
#[derive(Debug)]
pub struct ScriptOptions {
    /// `--keys`/`--args`, which take both counts from the command line.
    command_line: Option<(Option<Count>, Option<Count>)>,
    settings: ScriptSettings,
    allow_unused: bool,
    dynamic_keys: bool,
    read_only: bool,
    key_prefix_args: std::collections::BTreeSet<usize>,
    model: Model,
    allow: Vec<String>,
    includes: Includes,
}

impl ScriptOptions {
    fn new(options: &Options, config: Option<&Config>, path: &Path) -> ScriptOptions {
        let settings = config
            .map(|config| config.settings_for(path))
            .unwrap_or_default();
        let command_line = (options.keys.is_some() || options.args.is_some())
            .then_some((options.keys, options.args));
        let mut allow = options.allow.clone();
        allow.extend(settings.allow.iter().cloned());
        ScriptOptions {
            command_line,
            allow_unused: options.allow_unused || settings.allow_unused,
            dynamic_keys: options.dynamic_keys || settings.dynamic_keys,
            read_only: options.read_only || settings.read_only,
            key_prefix_args: options
                .key_prefix_args
                .union(&settings.key_prefix_args)
                .copied()
                .collect(),
            model: Model {
                target: options
                    .target
                    .clone()
                    .or_else(|| config.and_then(|config| config.target.clone()))
                    .unwrap_or_default(),
                declared_commands: options
                    .declared_commands
                    .clone()
                    .or_else(|| config.and_then(|config| config.declared_commands.clone()))
                    .unwrap_or_default(),
            },
            allow,
            includes: Includes::from(
                options
                    .includes
                    .or(config.and_then(|config| config.includes)),
            ),
            settings,
        }
    }
}

/// Reads and checks every script. A script another one includes, or takes
/// as its prelude, is checked as part of that one, not on its own, unless
/// the command line names it.
pub fn check_all(scripts: &[Found], options: &Options) -> CheckRun {
    let mut outcome = CheckRun {
        deny_warnings: scripts.iter().any(|found| {
            found
                .config
                .as_ref()
                .is_some_and(|config| config.deny_warnings)
        }),
        ..CheckRun::default()
    };
    let mut assembled = Vec::new();
    let mut fragments = HashSet::new();
    for found in scripts {
        let shown = found.path.display().to_string();
        // Lua strings may hold any bytes; the checks only read the code
        // around them.
        let source = match std::fs::read(&found.path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(error) => {
                outcome.unreadable.push(Unreadable {
                    path: shown,
                    reason: error.to_string(),
                });
                continue;
            }
        };
        let script_options = ScriptOptions::new(options, found.config.as_deref(), &found.path);
        if let Some(host) = Host::of(&found.path) {
            let found = embedded::scripts(host, &source);
            outcome.built_at_run_time.extend(
                found
                    .built_at_run_time
                    .iter()
                    .map(|line| format!("{shown}:{line}")),
            );
            for script in found.scripts {
                let checked = check_embedded(&shown, &source, script, &script_options);
                outcome.scripts.push(checked);
            }
            continue;
        }
        let script = assemble::assemble(
            &found.path,
            &shown,
            source,
            &script_options.settings.prelude,
            script_options.includes,
        );
        fragments.extend(
            script
                .fragments
                .iter()
                .skip(1)
                .map(|fragment| fragment.identity.clone()),
        );
        assembled.push((found, script, script_options));
    }
    for (found, script, script_options) in assembled {
        if !found.named && fragments.contains(&script.fragments[0].identity) {
            continue;
        }
        outcome.includes_detected += usize::from(script.includes_detected);
        outcome.scripts.push(check(script, &script_options));
    }
    report_shared_lines_once(&mut outcome.scripts);
    outcome
}

/// Checks the text of one `.lua` file (as an editor holds it, perhaps not
/// yet saved) as a directory scan would check that file: with its
/// configuration, its includes and its prelude.
pub fn check_lua_text(
    path: &Path,
    source: String,
    options: &Options,
    config: Option<&Config>,
) -> CheckedFile {
    let script_options = ScriptOptions::new(options, config, path);
    let script = assemble::assemble(
        path,
        &path.display().to_string(),
        source,
        &script_options.settings.prelude,
        script_options.includes,
    );
    check(script, &script_options)
}

/// A line of an included file is checked with every script including it;
/// the same diagnostic there is shown once, with how many scripts have it.
fn report_shared_lines_once(scripts: &mut [CheckedFile]) {
    /// The file, line, column, code and message of a diagnostic.
    type Shared = (String, usize, usize, String);
    // Where it was first kept (script, diagnostic), and how many have it.
    let mut first: HashMap<Shared, (usize, usize, usize)> = HashMap::new();
    for (script_index, script) in scripts.iter_mut().enumerate() {
        let mut kept = Vec::new();
        for located in std::mem::take(&mut script.diagnostics) {
            let Some(file) = located.file else {
                kept.push(located);
                continue;
            };
            let diagnostic = &located.diagnostic;
            let key = (
                script.includes[file].path.clone(),
                diagnostic.line,
                diagnostic.column,
                format!("{}{}", diagnostic.code, diagnostic.message),
            );
            match first.get_mut(&key) {
                Some((_, _, count)) => *count += 1,
                None => {
                    first.insert(key, (script_index, kept.len(), 1));
                    kept.push(located);
                }
            }
        }
        script.diagnostics = kept;
    }
    for (script_index, diagnostic_index, count) in first.into_values() {
        if count > 1 {
            let others = count - 1;
            let more = match others {
                1 => "1 more script includes".to_owned(),
                _ => format!("{others} more scripts include"),
            };
            scripts[script_index].diagnostics[diagnostic_index]
                .diagnostic
                .notes
                .push(format!("reported once: {more} this line"));
        }
    }
}

fn check(script: Assembled, options: &ScriptOptions) -> CheckedFile {
    let own = &script.fragments[0];
    let (path, own_source) = (own.path.clone(), own.source.clone());
    let (library, signature, diagnostics, facts, acl) = if analysis::is_library(&script.text) {
        let (diagnostics, acl) = check_library(&script.text, options);
        (true, None, diagnostics, None, Some(acl))
    } else {
        let signature = signature_for(&Header::parse(&own_source), &script.text, options);
        match &signature {
            Some(signature) => {
                let analysis = analysis::analyze(&script.text, signature);
                let acl = AclRules::of_script(&analysis, signature);
                let (diagnostics, facts) = Facts::split(analysis);
                (
                    false,
                    signature.clone().into(),
                    diagnostics,
                    Some(facts),
                    Some(acl),
                )
            }
            None => (false, None, vec![undeclared(options)], None, None),
        }
    };
    let mut problems = script.problems.clone();
    let mut diagnostics = diagnostics;
    if let Some(missing) = script.missing_include.filter(|_| script.includes_detected) {
        withhold_undefined_names(&mut diagnostics, problems.get_mut(missing).map(|(_, p)| p));
    }
    let mut located: Vec<Located> = problems
        .into_iter()
        .map(|(fragment, diagnostic)| Located {
            diagnostic,
            file: fragment.checked_sub(1),
        })
        .collect();
    located.extend(
        diagnostics
            .into_iter()
            .map(|diagnostic| locate(&script, diagnostic)),
    );
    let includes = script
        .fragments
        .iter()
        .skip(1)
        .map(|fragment| SourceFile {
            path: fragment.path.clone(),
            source: fragment.source.clone(),
        })
        .collect();
    CheckedFile {
        path,
        source: own_source,
        includes,
        signature,
        library,
        target: options.model.target.clone(),
        diagnostics: located,
        facts,
        acl,
        embedded_in: None,
    }
}

/// With include lines no configuration asked for and one whose file is
/// missing, the names the script reads without defining may be that
/// file's: one error at the include (`missing`), saying how many uses it
/// leaves unreported, rather than one per name.
fn withhold_undefined_names(diagnostics: &mut Vec<Diagnostic>, missing: Option<&mut Diagnostic>) {
    let before = diagnostics.len();
    diagnostics.retain(|diagnostic| diagnostic.code != analysis::Code::UndefinedGlobal);
    let uses = match before - diagnostics.len() {
        0 => return,
        1 => "1 use of a name the script does not define is".to_owned(),
        withheld => format!("{withheld} uses of names the script does not define are"),
    };
    if let Some(missing) = missing {
        missing.notes.push(format!(
            "{uses} not reported: the file it cannot include may define them"
        ));
    }
}

/// `diagnostic`, found in the assembled text, moved to the file and line
/// holding its line; one in an included file says how the script got it.
fn locate(script: &Assembled, mut diagnostic: Diagnostic) -> Located {
    if script.is_plain() {
        return Located {
            diagnostic,
            file: None,
        };
    }
    // A diagnostic about the script as a whole stands at its first line
    // and column; it belongs to the script, even behind a prelude.
    let whole_script = (diagnostic.line, diagnostic.column) == (1, 1);
    let (fragment, line) = match whole_script {
        true => (0, 1),
        false => script.locate(diagnostic.line),
    };
    diagnostic.line = line;
    move_lines_mentioned(&mut diagnostic, |mentioned| {
        let (holder, line) = script.locate(mentioned);
        match holder == fragment {
            true => line.to_string(),
            false => format!("{line} of `{}`", script.fragments[holder].path),
        }
    });
    if fragment > 0 {
        let name = &script.fragments[0].path;
        let how = match script.fragments[fragment].origin {
            Origin::Prelude => {
                format!("the configuration's prelude puts this file before `{name}`")
            }
            Origin::Include { by: 0, line } => {
                format!("this file is part of `{name}`, which includes it at line {line}")
            }
            Origin::Include { by, line } => format!(
                "this file is part of `{name}`: `{}` includes it at line {line}",
                script.fragments[by].path
            ),
        };
        diagnostic.notes.push(how);
    }
    Located {
        diagnostic,
        file: fragment.checked_sub(1),
    }
}

/// Each "line N" the diagnostic's message and notes mention (a line of
/// the text analysed) written as `place(N)` says: the line in the file
/// that holds it.
fn move_lines_mentioned(diagnostic: &mut Diagnostic, place: impl Fn(usize) -> String) {
    diagnostic.message = replace_line_numbers(&diagnostic.message, &place);
    for note in &mut diagnostic.notes {
        *note = replace_line_numbers(note, &place);
    }
}

/// `text` with the number of each "line N" it mentions replaced.
pub fn replace_line_numbers(text: &str, replace: impl Fn(usize) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("line ") {
        let (before, after) = rest.split_at(at + "line ".len());
        out.push_str(before);
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        rest = &after[digits..];
        if let Ok(mentioned) = after[..digits].parse::<usize>() {
            out.push_str(&replace(mentioned));
        }
    }
    out.push_str(rest);
    out
}

/// A script embedded in a host file: checked as its call sends it, each
/// diagnostic at the host line and column of the literal's text.
fn check_embedded(
    host_path: &str,
    host_source: &str,
    script: Embedded,
    options: &ScriptOptions,
) -> CheckedFile {
    let header = Header::parse(&script.text);
    let (signature, guessed) = embedded_signature(&script, &header, options);
    let analysis = analysis::analyze(&script.text, &signature);
    let acl = AclRules::of_script(&analysis, &signature);
    let (diagnostics, facts) = Facts::split(analysis);
    let diagnostics = diagnostics
        .into_iter()
        .map(|mut diagnostic| {
            // A diagnostic about the whole script stands at its first code.
            let (line, column) = match (diagnostic.line, diagnostic.column) {
                (1, 1) => script.first_code(host_source),
                (line, column) => script.host_position(host_source, line, column),
            };
            move_lines_mentioned(&mut diagnostic, |mentioned| {
                script
                    .host_position(host_source, mentioned, 1)
                    .0
                    .to_string()
            });
            diagnostic.line = line;
            diagnostic.column = column;
            Located {
                diagnostic,
                file: Some(0),
            }
        })
        .collect();
    let line = script.host_line(host_source);
    CheckedFile {
        path: format!("{host_path}:{line}"),
        embedded_in: Some(EmbeddedIn {
            path: host_path.to_owned(),
            line,
            guessed,
        }),
        includes: vec![SourceFile {
            path: host_path.to_owned(),
            source: host_source.to_owned(),
        }],
        target: signature.target.clone(),
        signature: Some(signature),
        library: false,
        diagnostics,
        facts: Some(facts),
        acl: Some(acl),
        source: script.text,
    }
}

/// The counts of an embedded script: the command line's; else, side by
/// side, what the call passes, the configuration, the header, and where
/// none says, the indices the script reads, a guess said as such.
fn embedded_signature(
    script: &Embedded,
    header: &Header,
    options: &ScriptOptions,
) -> (Signature, Guessed) {
    let documented = header.documented_signature();
    let from_header = |keys: bool| {
        documented.as_ref().map(|signature| match keys {
            true => Count::keys_of(signature),
            false => Count::args_of(signature),
        })
    };
    if let Some((keys, args)) = options.command_line {
        let signature = counted(keys, args, DeclaredBy::CommandLine);
        return (with_options(signature, header, options), Guessed::default());
    }
    let stated = script.keys.is_some() || script.args.is_some();
    let configured = options.settings.keys.is_some() || options.settings.args.is_some();
    // A count and whether it is a guess.
    let side = |host: Option<Count>, configured: Option<Count>, keys: bool, table: &str| match host
        .or(configured)
        .or_else(|| from_header(keys))
    {
        Some(count) => (count, false),
        None => (read_counts(&script.text, table), true),
    };
    let (keys, keys_guessed) = side(script.keys, options.settings.keys, true, "KEYS");
    let (args, args_guessed) = side(script.args, options.settings.args, false, "ARGV");
    let guessed = Guessed {
        keys: keys_guessed,
        args: args_guessed,
    };
    let declared_by = match (stated, configured, &documented) {
        (true, _, _) => DeclaredBy::HostCall,
        (false, true, _) => DeclaredBy::Configuration,
        (false, false, Some(_)) => DeclaredBy::Header,
        (false, false, None) => DeclaredBy::ScriptReads,
    };
    let signature = counted(Some(keys), Some(args), declared_by);
    (with_options(signature, header, options), guessed)
}

/// What a script reads of `KEYS` or `ARGV`: up to its highest literal
/// index, followed by a variadic list when it also reads the table some
/// other way (`KEYS[i]`, `#ARGV`, `unpack(KEYS)`).
fn read_counts(text: &str, table: &str) -> Count {
    let mut count = Count {
        fixed: 0,
        variadic: false,
    };
    for (at, _) in text.match_indices(table) {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let after = &text[at + table.len()..];
        let index = after
            .strip_prefix('[')
            .and_then(|rest| rest.split_once(']'))
            .and_then(|(index, _)| index.trim().parse::<usize>().ok());
        match index {
            Some(index) => count.fixed = count.fixed.max(index),
            None if after.starts_with(|c: char| c.is_alphanumeric() || c == '_') => {}
            None => count.variadic = true,
        }
    }
    if count.variadic {
        count.fixed = 0;
    }
    count
}

/// A function library: the file as FUNCTION LOAD runs it and each
/// registered function as FCALL runs it, with the keys and arguments each
/// callback reads (the command line declares no functions).
fn check_library(source: &str, options: &ScriptOptions) -> (Vec<Diagnostic>, AclRules) {
    let library = SignatureBuilder::default()
        .dynamic_keys(options.dynamic_keys)
        .model(options.model.clone())
        .allow(options.allow.iter().cloned())
        .build();
    let declaration = analysis::LibrarySignature {
        library,
        functions: Vec::new(),
    };
    let library = analysis::analyze_library(source, &declaration);
    let acl = AclRules::of_library(&library, &declaration);
    (library.diagnostics, acl)
}

/// The keys and arguments to check a script against: `--keys`/`--args`
/// when given (the one not given is 0); else the configuration's counts,
/// each falling back to the header's; else what the header documents. A
/// script that never mentions KEYS or ARGV needs no declaration.
pub fn signature_for(header: &Header, source: &str, options: &ScriptOptions) -> Option<Signature> {
    let mentions_parameters = source.contains("KEYS") || source.contains("ARGV");
    let documented = header.documented_signature();
    let configured = (options.settings.keys, options.settings.args);
    let signature = if let Some((keys, args)) = options.command_line {
        counted(keys, args, DeclaredBy::CommandLine)
    } else if configured.0.is_some() || configured.1.is_some() {
        let from_header = |count: Option<Count>, counted: fn(&Signature) -> Count| {
            count.or_else(|| documented.as_ref().map(counted))
        };
        let signature = counted(
            from_header(configured.0, Count::keys_of),
            from_header(configured.1, Count::args_of),
            DeclaredBy::Configuration,
        );
        // Counts that agree with the header leave the header the
        // declaration, which the messages then name.
        match documented {
            Some(documented) if same_counts(&documented, &signature) => documented,
            _ => signature,
        }
    } else if let Some(documented) = documented {
        documented
    } else if !mentions_parameters {
        SignatureBuilder::new(DeclaredBy::Header).build()
    } else {
        return None;
    };
    Some(with_options(signature, header, options))
}

/// The counts declared, with what else the options and the header say.
fn with_options(signature: Signature, header: &Header, options: &ScriptOptions) -> Signature {
    SignatureBuilder::from_signature(signature)
        .allow_unused(options.allow_unused)
        .dynamic_keys(options.dynamic_keys)
        .key_prefix_args(header.key_prefix_args())
        .key_prefix_args(options.key_prefix_args.iter().copied())
        .read_only(options.read_only)
        .model(options.model.clone())
        .allow(options.allow.iter().cloned())
        .build()
}

fn same_counts(one: &Signature, other: &Signature) -> bool {
    (Count::keys_of(one), Count::args_of(one)) == (Count::keys_of(other), Count::args_of(other))
}

/// The counts given (none: 0), declared by `declared_by`.
fn counted(keys: Option<Count>, args: Option<Count>, declared_by: DeclaredBy) -> Signature {
    SignatureBuilder::new(declared_by)
        .keys(keys.unwrap_or_default())
        .args(args.unwrap_or_default())
        .build()
}

fn undeclared(options: &ScriptOptions) -> Diagnostic {
    let diagnostic = Diagnostic::error(
        analysis::Code::UndeclaredInterface,
        1,
        1,
        1,
        "the script does not declare the keys and arguments it takes",
    );
    if options.settings.keys_from_unnamed_file {
        return diagnostic.with_help(
            "the configuration takes the key count from the file name (`keys = \"file-name\"`), but this name has no number after a `-` (as in `addJob-6.lua`): rename it, or document the keys in its header (`-- KEYS[1] = …`)",
        );
    }
    diagnostic.with_help(
        "document them in its header comment (`-- KEYS[1] = …`, `-- ARGV[1] = …`, `-- ARGV[2..] = …` for a variadic list), pass `--keys N --args N`, or set `keys` and `args` for it in `redis-script.toml`",
    )
}
