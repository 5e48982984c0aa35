//! The `#[redis_script]` and `#[redis_library]` declarations of a Rust
//! crate, read from its sources with the attribute's own parser, so that
//! a `.lua` file a declaration names is checked in the editor against the
//! declaration `cargo build` checks it against.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use redis_script_declaration::{Declaration, LibraryDeclaration};

/// A place in a Rust file: 0-based line and character column, as the
/// protocol counts lines (the column is converted by the caller).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RustPlace {
    pub line: usize,
    pub column: usize,
}

/// A span of a Rust file, from its start to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustSpan {
    pub file: PathBuf,
    pub start: RustPlace,
    pub end: RustPlace,
}

impl RustSpan {
    /// Where `span` lies in `file`.
    pub fn of(file: &Path, span: Span) -> RustSpan {
        let (start, end) = (span.start(), span.end());
        RustSpan {
            file: file.to_path_buf(),
            // proc-macro2 counts lines from 1.
            start: RustPlace {
                line: start.line.saturating_sub(1),
                column: start.column,
            },
            end: RustPlace {
                line: end.line.saturating_sub(1),
                column: end.column,
            },
        }
    }
}

/// One declaration naming a `.lua` file.
#[derive(Debug)]
pub struct Declared {
    /// The directory of the declaring crate's `Cargo.toml`: what `path` is
    /// relative to, and where the build reads its settings from.
    pub crate_root: PathBuf,
    /// The `.lua` file, absolute, as the attribute resolves `path`.
    pub lua: PathBuf,
    /// The `path = "…"` literal: where go-to leads.
    pub path_span: RustSpan,
    /// The function's or module's name.
    pub name: String,
    pub kind: DeclaredKind,
}

/// What a declaration says, as the attribute reads it.
pub enum DeclaredKind {
    Script(Box<Declaration>),
    Library(Box<LibraryDeclaration>),
    /// The attribute refuses the declaration before any analysis (its
    /// first message): the build fails on the Rust side.
    Refused(String),
}

impl std::fmt::Debug for DeclaredKind {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self {
            DeclaredKind::Script(_) => "Script",
            DeclaredKind::Library(_) => "Library",
            DeclaredKind::Refused(_) => "Refused",
        })
    }
}

/// The declarations of one workspace (or crate), read again from a file
/// only when it changed on disk.
#[derive(Debug)]
pub struct CrateDeclarations {
    /// The directory searched: the workspace's, else the crate's.
    pub root: PathBuf,
    files: HashMap<PathBuf, (Option<SystemTime>, Vec<Declared>)>,
    /// Files open in the editor: their text there wins over the disk's.
    in_editor: HashSet<PathBuf>,
    /// When the sources were last looked at; `None`: look now.
    refreshed: Option<Instant>,
}

/// How old a look at a crate's sources may be on an edit of a script: a
/// keystroke does not walk the crate, and a Rust file saved by another
/// editor is seen within this time (the editor's file events, when it
/// sends them, are seen at once).
const FRESH_FOR: Duration = Duration::from_secs(1);

/// Folders of a crate that hold no sources of its own.
const SKIPPED: &[&str] = &["target", "node_modules", "vendor"];

impl CrateDeclarations {
    pub fn new(root: PathBuf) -> CrateDeclarations {
        CrateDeclarations {
            root,
            files: HashMap::new(),
            in_editor: HashSet::new(),
            refreshed: None,
        }
    }

    /// The next [`CrateDeclarations::refresh_if_stale`] looks at the
    /// sources whatever their age.
    pub fn mark_stale(&mut self) {
        self.refreshed = None;
    }

    /// Reads the crate's `.rs` files that changed since the last look,
    /// unless that look is younger than [`FRESH_FOR`].
    pub fn refresh_if_stale(&mut self) {
        if self
            .refreshed
            .is_some_and(|refreshed| refreshed.elapsed() < FRESH_FOR)
        {
            return;
        }
        self.refresh();
        self.refreshed = Some(Instant::now());
    }

    /// Reads the crate's `.rs` files that changed since the last call
    /// (and forgets the ones gone).
    fn refresh(&mut self) {
        let mut present = Vec::new();
        rust_files(&self.root, &mut present);
        self.files
            .retain(|file, _| present.contains(file) || self.in_editor.contains(file));
        for file in present {
            if self.in_editor.contains(&file) {
                continue;
            }
            let modified = std::fs::metadata(&file)
                .and_then(|metadata| metadata.modified())
                .ok();
            if let Some((known, _)) = self.files.get(&file)
                && known.is_some()
                && *known == modified
            {
                continue;
            }
            let declared = std::fs::read_to_string(&file)
                .map(|text| declarations(&file, &text))
                .unwrap_or_default();
            self.files.insert(file, (modified, declared));
        }
    }

    /// Reads one file's text as the editor holds it (perhaps not saved).
    pub fn update(&mut self, file: &Path, text: &str) {
        let declared = declarations(file, text);
        self.in_editor.insert(file.to_path_buf());
        self.files.insert(file.to_path_buf(), (None, declared));
    }

    /// The editor closed the file: the disk's text counts again.
    pub fn close(&mut self, file: &Path) {
        self.in_editor.remove(file);
        self.files.remove(file);
        self.refreshed = None;
    }

    /// The declarations naming `lua`, in file order.
    pub fn naming(&self, lua: &Path) -> Vec<&Declared> {
        let mut files: Vec<&PathBuf> = self.files.keys().collect();
        files.sort();
        files
            .into_iter()
            .flat_map(|file| &self.files[file].1)
            .filter(|declared| same_file(&declared.lua, lua))
            .collect()
    }
}

/// Whether two paths name the same file.
pub fn same_file(one: &Path, other: &Path) -> bool {
    one == other
        || matches!(
            (std::fs::canonicalize(one), std::fs::canonicalize(other)),
            (Ok(one), Ok(other)) if one == other
        )
}

/// The directory of the nearest `Cargo.toml` above `file`.
pub fn crate_root(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .find(|directory| directory.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
}

/// Where to look for the declarations naming `file`: the nearest
/// workspace at or above its crate (a `Cargo.toml` with `[workspace]`),
/// whose members may name a script anywhere in it (`path =
/// "../lua/x.lua"`), else its crate.
pub fn search_root(file: &Path) -> Option<PathBuf> {
    let nearest = crate_root(file)?;
    let workspace = nearest.ancestors().find(|directory| {
        // A crate in build output or a hidden folder (a test's scratch
        // crate) is no member of the workspace around it.
        let member = nearest.strip_prefix(directory).is_ok_and(|inside| {
            inside.components().all(|component| {
                let name = component.as_os_str().to_string_lossy();
                !name.starts_with('.') && !SKIPPED.contains(&name.as_ref())
            })
        });
        member
            && std::fs::read_to_string(directory.join("Cargo.toml")).is_ok_and(|manifest| {
                manifest
                    .lines()
                    .any(|line| line.trim_start().starts_with("[workspace]"))
            })
    });
    Some(workspace.map_or(nearest.clone(), Path::to_path_buf))
}

/// The `.rs` files below `directory`, outside build output, dependency
/// and hidden folders.
fn rust_files(directory: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            if !name.starts_with('.') && !SKIPPED.contains(&name.as_str()) {
                rust_files(&path, found);
            }
        } else if name.ends_with(".rs") {
            found.push(path);
        }
    }
}

/// The declarations in the text of the Rust file `file`, its paths
/// resolved against its crate's directory.
pub fn declarations(file: &Path, text: &str) -> Vec<Declared> {
    let root = crate_root(file).unwrap_or_else(|| file.parent().unwrap_or(file).to_path_buf());
    declarations_in(&root, file, text)
}

/// The declarations in `text`, the Rust file `file` of the crate at `root`.
fn declarations_in(root: &Path, file: &Path, text: &str) -> Vec<Declared> {
    // Most files of a workspace declare nothing: not tokenized.
    if !text.contains("redis_script") && !text.contains("redis_library") {
        return Vec::new();
    }
    let Ok(tokens) = text.parse::<TokenStream>() else {
        // A file that does not tokenize does not build either; its
        // declarations come back with the next edit that does.
        return Vec::new();
    };
    let mut found = Vec::new();
    walk(root, file, tokens, &mut found);
    found
}

/// Finds `#[redis_script(…)]` and `#[redis_library(…)]` in `tokens` and in
/// every group inside them (modules, function bodies, `impl` blocks).
fn walk(root: &Path, file: &Path, tokens: TokenStream, found: &mut Vec<Declared>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (index, token) in tokens.iter().enumerate() {
        let TokenTree::Group(group) = token else {
            continue;
        };
        let after_pound = index > 0
            && matches!(&tokens[index - 1], TokenTree::Punct(punct) if punct.as_char() == '#');
        if group.delimiter() == Delimiter::Bracket
            && after_pound
            && let Some(declared) = declaration(root, file, group.stream(), &tokens[index + 1..])
        {
            found.push(declared);
        }
        walk(root, file, group.stream(), found);
    }
}

/// The declaration an attribute's tokens open, if it is one of ours;
/// `rest` is what follows the attribute.
fn declaration(
    root: &Path,
    file: &Path,
    attribute: TokenStream,
    rest: &[TokenTree],
) -> Option<Declared> {
    let mut attribute = attribute.into_iter().peekable();
    let mut last_name = None;
    // The attribute's path (`redis_script`, `redis_script::redis_script`).
    while let Some(token) = attribute.next_if(|token| !matches!(token, TokenTree::Group(_))) {
        if let TokenTree::Ident(ident) = token {
            last_name = Some(ident.to_string());
        }
    }
    let library = match last_name.as_deref() {
        Some("redis_script") => false,
        Some("redis_library") => true,
        _ => return None,
    };
    let TokenTree::Group(arguments) = attribute.next()? else {
        return None;
    };
    if arguments.delimiter() != Delimiter::Parenthesis {
        return None;
    }
    let (literal, literal_span) = path_literal(arguments.stream())?;
    let item = item_tokens(rest);
    let name = item_name(&item).unwrap_or_default();
    let kind = if library {
        match LibraryDeclaration::parse(arguments.stream(), item) {
            Ok(declaration) => DeclaredKind::Library(Box::new(declaration)),
            Err(failure) => DeclaredKind::Refused(first_message(&failure.errors)),
        }
    } else {
        match Declaration::parse(arguments.stream(), item) {
            Ok(declaration) => DeclaredKind::Script(Box::new(declaration)),
            Err(failure) => DeclaredKind::Refused(first_message(&failure.errors)),
        }
    };
    Some(Declared {
        crate_root: root.to_path_buf(),
        lua: resolve(root, &literal),
        path_span: RustSpan::of(file, literal_span),
        name,
        kind,
    })
}

fn first_message(error: &syn::Error) -> String {
    error
        .into_iter()
        .next()
        .map_or_else(|| error.to_string(), |first| first.to_string())
}

/// `path = "…"` among the attribute's arguments, read even when the rest
/// does not parse, so that a refused declaration still finds its file.
fn path_literal(arguments: TokenStream) -> Option<(String, Span)> {
    let tokens: Vec<TokenTree> = arguments.into_iter().collect();
    tokens.windows(3).find_map(|window| match window {
        [
            TokenTree::Ident(name),
            TokenTree::Punct(equals),
            TokenTree::Literal(literal),
        ] if name == "path" && equals.as_char() == '=' => {
            let literal =
                syn::parse2::<syn::LitStr>(TokenTree::Literal(literal.clone()).into()).ok()?;
            Some((literal.value(), literal.span()))
        }
        _ => None,
    })
}

/// The item an attribute applies to: its tokens up to the `;` of a
/// bodyless function or the braces of a module.
fn item_tokens(rest: &[TokenTree]) -> TokenStream {
    let mut item = TokenStream::new();
    for token in rest {
        item.extend([token.clone()]);
        let end = match token {
            TokenTree::Punct(punct) => punct.as_char() == ';',
            TokenTree::Group(group) => group.delimiter() == Delimiter::Brace,
            _ => false,
        };
        if end {
            break;
        }
    }
    item
}

/// The name after `fn` or `mod`.
fn item_name(item: &TokenStream) -> Option<String> {
    let mut tokens = item.clone().into_iter();
    while let Some(token) = tokens.next() {
        if let TokenTree::Ident(ident) = &token
            && (ident == "fn" || ident == "mod")
        {
            return match tokens.next() {
                Some(TokenTree::Ident(name)) => Some(name.to_string()),
                _ => None,
            };
        }
    }
    None
}

/// `path` as the attribute resolves it: relative to the crate's
/// directory, or to `REDIS_SCRIPT_BASE_DIR` when that is set.
fn resolve(root: &Path, relative: &str) -> PathBuf {
    let base =
        std::env::var_os("REDIS_SCRIPT_BASE_DIR").map_or_else(|| root.to_path_buf(), PathBuf::from);
    base.join(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_scripts_and_libraries_at_any_depth() {
        let text = r#"
            use redis_script::redis_script;

            /// Releases the lock.
            #[redis_script(path = "lua/release.lua", keys = 1)]
            pub async fn release(lock: &str, token: &str) -> i64;

            fn body() {
                #[redis_script::redis_script(path = "lua/inner.lua", keys = 0)]
                async fn inner(limit: i64) -> i64;
            }

            #[redis_library(path = "lua/lib.lua")]
            mod quota {
                #[function(keys = 1)]
                async fn take(bucket: &str) -> i64;
            }

            #[redis_script(path = "lua/refused.lua")]
            async fn refused(a: &str) -> i64;
        "#;
        let found = declarations_in(Path::new("/crate"), Path::new("/crate/src/lib.rs"), text);
        let names: Vec<(&str, String, &str)> = found
            .iter()
            .map(|declared| {
                let kind = match &declared.kind {
                    DeclaredKind::Script(_) => "script",
                    DeclaredKind::Library(_) => "library",
                    DeclaredKind::Refused(_) => "refused",
                };
                (
                    declared.name.as_str(),
                    declared.lua.display().to_string(),
                    kind,
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("release", "/crate/lua/release.lua".to_owned(), "script"),
                ("inner", "/crate/lua/inner.lua".to_owned(), "script"),
                ("quota", "/crate/lua/lib.lua".to_owned(), "library"),
                ("refused", "/crate/lua/refused.lua".to_owned(), "refused"),
            ]
        );
        assert_eq!(
            found[0].path_span.start,
            RustPlace {
                line: 4,
                column: 34
            }
        );
    }

    #[test]
    fn a_file_that_does_not_tokenize_declares_nothing() {
        assert!(
            declarations_in(Path::new("/c"), Path::new("/c/a.rs"), "fn x() { \"open").is_empty()
        );
    }
}
