//! A script as its loader sends it: the configured prelude files, then the
//! script with each `--- @include "file"` line replaced by that file (its
//! own includes resolved the same way, each file once). The analysis reads
//! the whole text; each of its lines remembers the file and line it came
//! from, so that a diagnostic points into the file that holds the line.
//!
//! Without a configured include syntax, bullmq's include lines are still
//! read the way its loader reads them: a script holding one works only as
//! the loader sends it, and read as written it calls functions it never
//! defines, one error each.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use redis_script_analysis::{Code, Diagnostic};

use crate::config::IncludeSyntax;

/// A file that is part of a script as sent.
#[derive(Debug, Clone)]
pub struct Fragment {
    /// As the user will recognise it: relative to the script's directory
    /// as given on the command line.
    pub path: String,
    pub source: String,
    /// The file on disk.
    pub file: PathBuf,
    /// Its canonical path, when it has one: the same file, however an
    /// include or the command line names it.
    pub identity: PathBuf,
    pub origin: Origin,
}

/// Why a fragment is part of the script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The configuration's `prelude` puts it before the script.
    Prelude,
    /// Fragment `by` includes it at that line.
    Include { by: usize, line: usize },
}

/// How a script's include lines are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Includes {
    /// `--includes` or the configuration's `includes` names the syntax.
    Configured(IncludeSyntax),
    /// Nothing names one: bullmq's lines are read as its loader reads
    /// them, the only syntax the checker knows, and the run says so.
    Detected,
}

impl Includes {
    /// The command line's or the configuration's syntax, else detection.
    pub fn from(configured: Option<IncludeSyntax>) -> Includes {
        configured.map_or(Includes::Detected, Includes::Configured)
    }
}

/// The script's text as sent, and where each line came from.
#[derive(Debug)]
pub struct Assembled {
    pub text: String,
    /// Index 0 is the script itself (origin unused).
    pub fragments: Vec<Fragment>,
    /// For each line of `text`: its fragment and 1-based line there.
    lines: Vec<(usize, usize)>,
    /// What the loader would refuse (an include not found, a cycle), each
    /// in the fragment holding the include.
    pub problems: Vec<(usize, Diagnostic)>,
    /// No configuration names an include syntax, and the script (or a file
    /// it includes) has include lines, read as bullmq's loader reads them.
    pub includes_detected: bool,
    /// The first include line whose file is not in the text (not found,
    /// not readable, a path mapping or a pattern), as its index in
    /// `problems`: names the script reads without defining them may be
    /// that file's.
    pub missing_include: Option<usize>,
}

impl Assembled {
    /// The fragment and line that line `line` of `text` came from.
    pub fn locate(&self, line: usize) -> (usize, usize) {
        match self.lines.get(line.wrapping_sub(1)) {
            Some(&place) => place,
            // Past the end (a diagnostic at the end of the text): the last
            // line's fragment, one line on.
            None => self
                .lines
                .last()
                .map_or((0, line), |&(fragment, last)| (fragment, last + 1)),
        }
    }

    /// Whether anything besides the script itself went into the text.
    pub fn is_plain(&self) -> bool {
        self.fragments.len() == 1
    }
}

/// Assembles the script at `file` (shown as `shown`, text `source`).
pub fn assemble(
    file: &Path,
    shown: &str,
    source: String,
    prelude: &[PathBuf],
    includes: Includes,
) -> Assembled {
    let mut builder = Builder {
        assembled: Assembled {
            text: String::new(),
            fragments: vec![Fragment {
                path: shown.to_owned(),
                source,
                file: file.to_path_buf(),
                identity: identity(file),
                origin: Origin::Prelude,
            }],
            lines: Vec::new(),
            problems: Vec::new(),
            includes_detected: false,
            missing_include: None,
        },
        includes,
        emitted: HashSet::new(),
        shown_base: Path::new(shown).parent().map(Path::to_path_buf),
        script_dir: file.parent().map(Path::to_path_buf),
    };
    for part in prelude {
        match std::fs::read(part) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let index = builder.add(part, identity(part), text, Origin::Prelude);
                builder.emit(index, &mut Vec::new());
            }
            Err(error) => builder.problem(
                0,
                1,
                1,
                1,
                format!(
                    "the prelude file `{}` cannot be read: {error}",
                    part.display()
                ),
                "the configuration's `prelude` names it; fix the path, relative to the configuration's directory",
            ),
        }
    }
    let own = builder.assembled.fragments[0].identity.clone();
    builder.emitted.insert(own);
    builder.emit(0, &mut Vec::new());
    builder.assembled
}

struct Builder {
    assembled: Assembled,
    includes: Includes,
    /// Files already in the text: an include of one adds nothing.
    emitted: HashSet<PathBuf>,
    /// The directory the script was shown under, to show includes likewise.
    shown_base: Option<PathBuf>,
    script_dir: Option<PathBuf>,
}

impl Builder {
    fn add(&mut self, file: &Path, identity: PathBuf, source: String, origin: Origin) -> usize {
        self.emitted.insert(identity.clone());
        self.assembled.fragments.push(Fragment {
            path: self.shown(file),
            source,
            file: file.to_path_buf(),
            identity,
            origin,
        });
        self.assembled.fragments.len() - 1
    }

    /// `file` shown relative to where the script was shown, when it is
    /// below the script's directory; else as it is.
    fn shown(&self, file: &Path) -> String {
        let absolute = |path: &Path| {
            normalized(&std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()))
        };
        let relative = self.script_dir.as_deref().and_then(|directory| {
            absolute(file)
                .strip_prefix(absolute(directory))
                .ok()
                .map(Path::to_path_buf)
        });
        match (relative, &self.shown_base) {
            (Some(relative), Some(base)) => base.join(relative).display().to_string(),
            _ => file.display().to_string(),
        }
    }

    /// Appends fragment `index`'s lines, each include replaced by its file.
    /// `stack` holds the files being included, to find a cycle.
    fn emit(&mut self, index: usize, stack: &mut Vec<PathBuf>) {
        let source = self.assembled.fragments[index].source.clone();
        let here = self.assembled.fragments[index].file.clone();
        stack.push(self.assembled.fragments[index].identity.clone());
        let mut included_here = HashSet::new();
        for (number, line) in source.split_inclusive('\n').enumerate() {
            let line_number = number + 1;
            let directive = match self.includes {
                Includes::Configured(IncludeSyntax::Bullmq) | Includes::Detected => {
                    bullmq_include(line)
                }
            };
            let Some((reference, column)) = directive else {
                self.push_line(index, line_number, line);
                continue;
            };
            if self.includes == Includes::Detected {
                self.assembled.includes_detected = true;
            }
            let Some(target) = self.resolve(index, line_number, column, &here, reference) else {
                self.note_missing_include();
                continue;
            };
            let key = identity(&target);
            if !included_here.insert(key.clone()) {
                self.problem(
                    index,
                    line_number,
                    column,
                    reference.len() + 2,
                    format!("`{reference}` is already included in this file"),
                    "the loader refuses a file that includes the same file twice: remove this line",
                );
                continue;
            }
            if stack.contains(&key) {
                self.problem(
                    index,
                    line_number,
                    column,
                    reference.len() + 2,
                    format!(
                        "`{reference}` includes itself, through the files that include this one"
                    ),
                    "the loader refuses a circular include: move what both files need into a third",
                );
                continue;
            }
            if self.emitted.contains(&key) {
                continue;
            }
            match std::fs::read(&target) {
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    let origin = Origin::Include {
                        by: index,
                        line: line_number,
                    };
                    let child = self.add(&target, key, text, origin);
                    self.emit(child, stack);
                }
                Err(error) => {
                    self.problem(
                        index,
                        line_number,
                        column,
                        reference.len() + 2,
                        format!("the include `{reference}` cannot be read: {error}"),
                        "the path is relative to this file's directory, with `.lua` added when it has no extension",
                    );
                    self.note_missing_include();
                }
            }
        }
        stack.pop();
    }

    /// The file an include names, or `None` after reporting why not.
    fn resolve(
        &mut self,
        index: usize,
        line: usize,
        column: usize,
        here: &Path,
        reference: &str,
    ) -> Option<PathBuf> {
        let width = reference.len() + 2;
        if reference.starts_with('~') || reference.starts_with('<') {
            self.problem(
                index,
                line,
                column,
                width,
                format!("the include `{reference}` uses a path mapping, which the checker does not resolve"),
                "write the path relative to this file",
            );
            return None;
        }
        if reference.contains(['*', '?', '[', '{']) {
            self.problem(
                index,
                line,
                column,
                width,
                format!(
                    "the include `{reference}` is a pattern, which the checker does not expand"
                ),
                "include each file by its path",
            );
            return None;
        }
        let mut target = here.parent().unwrap_or(Path::new("")).join(reference);
        if target.extension().is_none() {
            target.set_extension("lua");
        }
        if !target.is_file() {
            self.problem(
                index,
                line,
                column,
                width,
                format!("the include `{reference}` names no file (looked for `{}`)", self.shown(&target)),
                "the path is relative to this file's directory, with `.lua` added when it has no extension",
            );
            return None;
        }
        Some(target)
    }

    /// The problem just reported leaves an included file out of the text.
    fn note_missing_include(&mut self) {
        let last = self.assembled.problems.len().checked_sub(1);
        self.assembled.missing_include = self.assembled.missing_include.or(last);
    }

    fn push_line(&mut self, fragment: usize, line: usize, text: &str) {
        self.assembled.text.push_str(text);
        if !text.ends_with('\n') {
            self.assembled.text.push('\n');
        }
        self.assembled.lines.push((fragment, line));
    }

    fn problem(
        &mut self,
        fragment: usize,
        line: usize,
        column: usize,
        width: usize,
        message: String,
        help: &str,
    ) {
        let diagnostic = Diagnostic::error(Code::UnresolvedInclude, line, column, width, message)
            .with_help(help);
        self.assembled.problems.push((fragment, diagnostic));
    }
}

/// `--- @include "path"` (two or three dashes at the start of the line,
/// spaces or tabs, either quote, then only `;` and blanks): the path and
/// the 1-based column of its opening quote.
fn bullmq_include(line: &str) -> Option<(&str, usize)> {
    let line = line.trim_end_matches(['\n', '\r']);
    let dashes = line.len() - line.trim_start_matches('-').len();
    if !(2..=3).contains(&dashes) {
        return None;
    }
    let rest = line[dashes..].trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix("@include")?;
    let quoted = rest.trim_start_matches([' ', '\t']);
    if quoted.len() == rest.len() {
        return None;
    }
    let quote = quoted.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = &quoted[1..];
    let end = inner.find(quote)?;
    let tail = &inner[end + 1..];
    if end == 0 || !tail.chars().all(|c| matches!(c, ';' | ' ' | '\t')) {
        return None;
    }
    let column = line[..line.len() - quoted.len()].chars().count() + 1;
    Some((&inner[..end], column))
}

/// A file's identity: its canonical path when it has one.
fn identity(file: &Path) -> PathBuf {
    std::fs::canonicalize(file).unwrap_or_else(|_| normalized(file))
}

/// `a/./b/../c` as `a/c`, without touching the file system.
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_include_directive_as_the_loader_does() {
        assert_eq!(
            bullmq_include("--- @include \"includes/a\"\n"),
            Some(("includes/a", 14))
        );
        assert_eq!(bullmq_include("-- @include 'b.lua';"), Some(("b.lua", 13)));
        assert_eq!(
            bullmq_include("---\t@include\t\"c\" ;\r\n"),
            Some(("c", 14))
        );
        for not_one in [
            "---- @include \"a\"",
            " --- @include \"a\"",
            "--- @include\"a\"",
            "--- @include \"a' ",
            "--- @include \"\"",
            "--- @include \"a\" -- why",
            "--- @includes \"a\"",
            "local x = 1",
        ] {
            assert_eq!(bullmq_include(not_one), None, "{not_one}");
        }
    }

    fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let root = std::env::temp_dir().join(format!(
            "redis-script-assemble-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        for (path, text) in files {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().expect("a parent")).expect("a directory");
            std::fs::write(file, text).expect("write");
        }
        root
    }

    fn assembled_at(root: &Path, script: &str, prelude: &[&str]) -> Assembled {
        let file = root.join(script);
        let source = std::fs::read_to_string(&file).expect("read");
        let prelude: Vec<PathBuf> = prelude.iter().map(|part| root.join(part)).collect();
        assemble(
            &file,
            &format!("cmds/{script}"),
            source,
            &prelude,
            Includes::Configured(IncludeSyntax::Bullmq),
        )
    }

    #[test]
    fn includes_go_in_once_depth_first_and_lines_map_back() {
        let root = tree(
            "once",
            &[
                (
                    "main.lua",
                    "local a = 1\n--- @include \"inc/first\"\n--- @include \"inc/second.lua\"\nreturn a\n",
                ),
                (
                    "inc/first.lua",
                    "--- @include \"second\"\nlocal function first() end\n",
                ),
                ("inc/second.lua", "local function second() end"),
            ],
        );
        let assembled = assembled_at(&root, "main.lua", &[]);
        assert!(assembled.problems.is_empty(), "{:?}", assembled.problems);
        assert_eq!(
            assembled.text,
            "local a = 1\nlocal function second() end\nlocal function first() end\nreturn a\n"
        );
        let paths: Vec<&str> = assembled
            .fragments
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(
            paths,
            ["cmds/main.lua", "cmds/inc/first.lua", "cmds/inc/second.lua"]
        );
        assert_eq!(assembled.locate(1), (0, 1));
        assert_eq!(assembled.locate(2), (2, 1));
        assert_eq!(assembled.locate(3), (1, 2));
        assert_eq!(assembled.locate(4), (0, 4));
        assert_eq!(
            assembled.fragments[2].origin,
            Origin::Include { by: 1, line: 1 }
        );
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn the_loader_s_refusals_are_problems_in_the_including_file() {
        let root = tree(
            "refusals",
            &[
                (
                    "main.lua",
                    "--- @include \"missing\"\n--- @include \"loop\"\n--- @include \"<lib>/x\"\n--- @include \"*.lua\"\n",
                ),
                (
                    "loop.lua",
                    "--- @include \"main\"\n--- @include \"other\"\n--- @include \"other\"\n",
                ),
                ("other.lua", "return 1\n"),
            ],
        );
        let assembled = assembled_at(&root, "main.lua", &[]);
        let found: Vec<(usize, usize, &str)> = assembled
            .problems
            .iter()
            .map(|(fragment, d)| (*fragment, d.line, d.message.as_str()))
            .collect();
        assert_eq!(found.len(), 5, "{found:?}");
        assert!(
            found[0]
                .2
                .starts_with("the include `missing` names no file"),
            "{found:?}"
        );
        assert_eq!((found[1].0, found[1].1), (1, 1));
        assert!(found[1].2.contains("includes itself"));
        assert!(found[2].2.contains("already included"));
        assert!(found[3].2.contains("path mapping"));
        assert!(found[4].2.contains("pattern"));
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn include_lines_no_configuration_names_are_read_as_bullmq_reads_them() {
        let root = tree(
            "detected",
            &[
                ("main.lua", "--- @include \"inc\"\nreturn inc()\n"),
                ("inc.lua", "local function inc() return 1 end\n"),
                ("broken.lua", "--- @include \"gone\"\nreturn gone()\n"),
                ("plain.lua", "return 1\n"),
            ],
        );
        let read = |script: &str, includes: Includes| {
            let file = root.join(script);
            let source = std::fs::read_to_string(&file).expect("read");
            assemble(&file, script, source, &[], includes)
        };
        let main = read("main.lua", Includes::Detected);
        assert_eq!(
            main.text,
            "local function inc() return 1 end\nreturn inc()\n"
        );
        assert!(main.includes_detected && main.missing_include.is_none());
        let broken = read("broken.lua", Includes::Detected);
        assert!(broken.includes_detected && broken.missing_include == Some(0));
        assert_eq!(broken.problems.len(), 1);
        assert!(!read("plain.lua", Includes::Detected).includes_detected);
        // Asked for, the same text, and nothing detected.
        let configured = read("main.lua", Includes::Configured(IncludeSyntax::Bullmq));
        assert_eq!(configured.text, main.text);
        assert!(!configured.includes_detected);
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn the_prelude_comes_first() {
        let root = tree(
            "prelude",
            &[
                ("refs.lua", "local refs = {}\n"),
                ("main.lua", "return refs\n"),
            ],
        );
        let assembled = assembled_at(&root, "main.lua", &["refs.lua", "absent.lua"]);
        assert_eq!(assembled.text, "local refs = {}\nreturn refs\n");
        assert_eq!(assembled.locate(1), (1, 1));
        assert_eq!(assembled.locate(2), (0, 1));
        assert_eq!(assembled.problems.len(), 1);
        assert!(assembled.problems[0].1.message.contains("absent.lua"));
        let _ = std::fs::remove_dir_all(root);
    }
}
