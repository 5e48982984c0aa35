//! The layers of the crate, read from its module graph: every `use` tree
//! (re-exports included) and every path in code is parsed and resolved to
//! the module it names, and each layer may name only the layers below it.
//!
//! | layer | may name |
//! | --- | --- |
//! | `source` (the text: syntax, spans, header, opt-outs, diagnostics) | itself |
//! | `model` (the servers as data) | `source` |
//! | `domain` (what the walk computes with, and what the analysis reports) | `source`, `model` |
//! | `interp` (the walk, and the hooks findings observe it through) | `source`, `model`, `domain` |
//! | `findings` (the observers) | `source`, `model`, `domain`, and of the walk only `interp::observe` |
//! | `emit` (what is sent and reviewed, from what the analysis reports) | `source`, `model`, `domain` |
//! | `pipeline` (the phases in order) | every layer |
//!
//! The crate root is the façade: it declares the layers and re-exports
//! their items, and holds nothing else; and no layer names an item through
//! it (`crate::Signature`), only where the item is defined. Code under
//! `#[cfg(test)]` is exempt: tests may exercise the crate through its
//! public API.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The layers, each with what it may name: a whole layer (`"model"`) or
/// one module of it (`"interp::observe"`).
const LAYERS: &[(&str, &[&str])] = &[
    ("source", &[]),
    ("model", &["source"]),
    ("domain", &["source", "model"]),
    ("interp", &["source", "model", "domain"]),
    (
        "findings",
        &["source", "model", "domain", "interp::observe"],
    ),
    ("emit", &["source", "model", "domain"]),
    (
        "pipeline",
        &["source", "model", "domain", "interp", "findings", "emit"],
    ),
];

/// A module of the crate: its path from the root (empty for the root) and
/// the file it is written in.
struct ModuleFile {
    path: Vec<String>,
    text: String,
    shown: String,
}

/// Every `.rs` file under `src`, with its module path.
fn crate_files(src: &Path) -> Vec<ModuleFile> {
    let mut files = Vec::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                let relative: PathBuf = path.strip_prefix(src).unwrap_or(&path).to_path_buf();
                let text = fs::read_to_string(&path).unwrap_or_default();
                files.push(ModuleFile {
                    path: module_path(&relative),
                    text,
                    shown: relative.display().to_string(),
                });
            }
        }
    }
    files.sort_by(|a, b| a.shown.cmp(&b.shown));
    files
}

/// `interp/calls.rs` → `interp::calls`; `interp/mod.rs` → `interp`;
/// `lib.rs` → the root.
fn module_path(relative: &Path) -> Vec<String> {
    let mut path: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|component| component.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path
        .last()
        .is_some_and(|last| last == "mod" || last == "lib")
    {
        path.pop();
    }
    path
}

/// One name of another module, as written and as resolved.
#[derive(Debug)]
struct Reference {
    module: Vec<String>,
    target: Vec<String>,
    line: usize,
    written: String,
}

/// Collects the crate paths a file names, in `use` trees and in code,
/// outside `#[cfg(test)]` items.
struct References<'a> {
    /// The modules of the crate, to tell `use interp::x` (a child module)
    /// from `use std::x`.
    modules: &'a BTreeSet<Vec<String>>,
    /// The module being read (inline `mod` blocks push onto it).
    module: Vec<String>,
    found: Vec<Reference>,
    /// Items of the root other than `mod` declarations and `use`
    /// re-exports.
    root_items: Vec<(usize, String)>,
}

impl References<'_> {
    /// Resolves a path written in the current module to the module path
    /// it names, when it names the crate's own items.
    fn resolve(&self, segments: &[String]) -> Option<Vec<String>> {
        let (first, rest) = segments.split_first()?;
        let mut resolved = match first.as_str() {
            "crate" => Vec::new(),
            "self" => self.module.clone(),
            "super" => {
                let mut base = self.module.clone();
                base.pop();
                let mut rest = rest;
                while let Some(("super", after)) =
                    rest.split_first().map(|(head, tail)| (head.as_str(), tail))
                {
                    base.pop();
                    rest = after;
                }
                base.extend(rest.iter().cloned());
                return Some(base);
            }
            _ => {
                // A child module of the current one, named without `self`.
                let mut child = self.module.clone();
                child.push(first.clone());
                if !self.modules.contains(&child) {
                    return None;
                }
                child
            }
        };
        resolved.extend(rest.iter().cloned());
        Some(resolved)
    }

    fn record(&mut self, segments: Vec<String>, line: usize) {
        if let Some(target) = self.resolve(&segments) {
            self.found.push(Reference {
                module: self.module.clone(),
                target,
                line,
                written: segments.join("::"),
            });
        }
    }

    /// Every path a `use` tree imports, `prefix` being the segments above.
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>, line: usize) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(&path.tree, prefix, line);
                prefix.pop();
            }
            syn::UseTree::Name(name) => {
                let mut full = prefix.clone();
                full.push(name.ident.to_string());
                self.record(full, line);
            }
            syn::UseTree::Rename(rename) => {
                let mut full = prefix.clone();
                full.push(rename.ident.to_string());
                self.record(full, line);
            }
            syn::UseTree::Glob(_) => self.record(prefix.clone(), line),
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.use_tree(tree, prefix, line);
                }
            }
        }
    }
}

/// Whether the attributes put an item under `#[cfg(test)]`.
fn is_test_only(attributes: &[syn::Attribute]) -> bool {
    attributes.iter().any(|attribute| {
        attribute.path().is_ident("cfg")
            && attribute
                .parse_args::<syn::Meta>()
                .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

impl<'ast> Visit<'ast> for References<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attributes: &[syn::Attribute] = match item {
            syn::Item::Mod(item) => &item.attrs,
            syn::Item::Fn(item) => &item.attrs,
            syn::Item::Impl(item) => &item.attrs,
            syn::Item::Use(item) => &item.attrs,
            syn::Item::Struct(item) => &item.attrs,
            syn::Item::Enum(item) => &item.attrs,
            syn::Item::Const(item) => &item.attrs,
            syn::Item::Static(item) => &item.attrs,
            syn::Item::Trait(item) => &item.attrs,
            syn::Item::Type(item) => &item.attrs,
            syn::Item::Macro(item) => &item.attrs,
            _ => &[],
        };
        if is_test_only(attributes) {
            return;
        }
        if self.module.is_empty() {
            match item {
                syn::Item::Mod(module) if module.content.is_none() => {}
                syn::Item::Use(item) => {
                    if !matches!(item.vis, syn::Visibility::Public(_)) {
                        self.root_items
                            .push((line_of(item.use_token.span), "a private `use`".to_owned()));
                    }
                }
                other => {
                    let line = line_of(syn::spanned::Spanned::span(other));
                    self.root_items.push((line, item_kind(other).to_owned()));
                }
            }
        }
        match item {
            syn::Item::Use(item) => {
                let line = line_of(item.use_token.span);
                let mut prefix = Vec::new();
                self.use_tree(&item.tree, &mut prefix, line);
            }
            syn::Item::Mod(module) if module.content.is_some() => {
                self.module.push(module.ident.to_string());
                syn::visit::visit_item_mod(self, module);
                self.module.pop();
            }
            other => syn::visit::visit_item(self, other),
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path
            .segments
            .iter()
            .map(|segment| segment.ident.to_string())
            .collect();
        if matches!(
            segments.first().map(String::as_str),
            Some("crate" | "super" | "self")
        ) && segments.len() > 1
        {
            let line = path
                .segments
                .first()
                .map_or(0, |segment| line_of(segment.ident.span()));
            self.record(segments, line);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // Paths inside macro calls (`format!`, `matches!`) are tokens;
        // read the ones that parse as expressions.
        if let Ok(arguments) = mac.parse_body_with(
            syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
        ) {
            for argument in &arguments {
                self.visit_expr(argument);
            }
        }
        syn::visit::visit_macro(self, mac);
    }
}

fn item_kind(item: &syn::Item) -> &'static str {
    match item {
        syn::Item::Fn(_) => "a function",
        syn::Item::Struct(_) => "a struct",
        syn::Item::Enum(_) => "an enum",
        syn::Item::Const(_) => "a constant",
        syn::Item::Static(_) => "a static",
        syn::Item::Impl(_) => "an impl block",
        syn::Item::Trait(_) => "a trait",
        syn::Item::Type(_) => "a type alias",
        syn::Item::Mod(_) => "an inline module",
        syn::Item::Macro(_) => "a macro",
        _ => "an item",
    }
}

/// The modules declared `#[cfg(test)] mod name;` in `file`.
fn test_modules(file: &ModuleFile) -> Vec<Vec<String>> {
    let Ok(syntax) = syn::parse_file(&file.text) else {
        return Vec::new();
    };
    syntax
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(module) if module.content.is_none() && is_test_only(&module.attrs) => {
                let mut path = file.path.clone();
                path.push(module.ident.to_string());
                Some(path)
            }
            _ => None,
        })
        .collect()
}

/// Every violation of the layering in `files`, one line each.
fn violations(files: &[ModuleFile]) -> Vec<String> {
    let modules: BTreeSet<Vec<String>> = files.iter().map(|file| file.path.clone()).collect();
    let tests: Vec<Vec<String>> = files.iter().flat_map(test_modules).collect();
    let layers: BTreeSet<&str> = LAYERS.iter().map(|(layer, _)| *layer).collect();
    let mut found = Vec::new();
    for file in files {
        if tests.iter().any(|test| file.path.starts_with(test)) {
            continue;
        }
        let Ok(syntax) = syn::parse_file(&file.text) else {
            found.push(format!("{}: does not parse", file.shown));
            continue;
        };
        let mut references = References {
            modules: &modules,
            module: file.path.clone(),
            found: Vec::new(),
            root_items: Vec::new(),
        };
        references.visit_file(&syntax);
        for (line, kind) in references.root_items {
            found.push(format!(
                "{}:{line}: the crate root holds {kind}: the root only declares the layers and re-exports their items",
                file.shown
            ));
        }
        for reference in references.found {
            let Some(from) = reference.module.first() else {
                continue;
            };
            let Some(to) = reference.target.first() else {
                continue;
            };
            if from == to {
                continue;
            }
            if !layers.contains(to.as_str()) {
                found.push(format!(
                    "{}:{}: `{}` names an item through the crate root; name it where it is defined",
                    file.shown, reference.line, reference.written
                ));
                continue;
            }
            let Some((_, allowed)) = LAYERS.iter().find(|(layer, _)| layer == from) else {
                found.push(format!(
                    "{}: the module `{from}` is in no layer",
                    file.shown
                ));
                continue;
            };
            let target = reference.target.join("::");
            let permitted = allowed
                .iter()
                .any(|allowed| target == *allowed || target.starts_with(&format!("{allowed}::")));
            if !permitted {
                found.push(format!(
                    "{}:{}: `{from}` names `{}` of the layer `{to}`",
                    file.shown, reference.line, reference.written
                ));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn each_layer_names_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = crate_files(&src);
    assert!(files.len() > 40, "the sources were not found");
    let found = violations(&files);
    assert!(
        found.is_empty(),
        "{} layering violations:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The rule itself: a planted violation of each kind is found.
#[test]
fn a_planted_violation_of_each_kind_is_found() {
    let file = |path: &str, text: &str| ModuleFile {
        path: module_path(Path::new(path)),
        text: text.to_owned(),
        shown: path.to_owned(),
    };
    let base = || {
        vec![
            file(
                "lib.rs",
                "mod source; mod model; mod domain; mod interp; mod findings; mod emit; mod pipeline;\npub use pipeline::analyze;\n",
            ),
            file("source/mod.rs", "pub(crate) mod span;\n"),
            file("source/span.rs", "pub struct Span;\n"),
            file("model/mod.rs", "pub(crate) mod commands;\n"),
            file("model/commands.rs", "use crate::source::span::Span;\n"),
            file("domain/mod.rs", "pub(crate) mod value;\n"),
            file("domain/value.rs", "pub struct Value;\n"),
            file("interp/mod.rs", "pub(crate) mod observe;\nmod calls;\n"),
            file("interp/observe.rs", "pub trait Finding {}\n"),
            file(
                "interp/calls.rs",
                "use super::observe::Finding;\nfn f() { crate::domain::value::Value; }\n",
            ),
            file("findings/mod.rs", "use crate::interp::observe::Finding;\n"),
            file("emit/mod.rs", "use crate::domain::value::Value;\n"),
            file(
                "pipeline.rs",
                "use crate::{interp, findings};\npub fn analyze() {}\n",
            ),
        ]
    };
    assert_eq!(violations(&base()), Vec::<String>::new());
    let planted: &[(&str, &str, &str)] = &[
        // A lower layer importing the walk, in a grouped `use` tree.
        (
            "source/header.rs",
            "use crate::{interp::calls};\n",
            "`source` names `crate::interp::calls`",
        ),
        // The model importing the domain.
        (
            "model/replies.rs",
            "use crate::domain::value::Value;\n",
            "`model` names `crate::domain::value::Value`",
        ),
        // The walk importing a finding, by a path in code.
        (
            "interp/stmt.rs",
            "fn f() { crate::findings::x(); }\n",
            "`interp` names `crate::findings::x`",
        ),
        // The walk importing what is emitted.
        (
            "interp/review.rs",
            "use crate::emit::Review;\n",
            "`interp` names `crate::emit::Review`",
        ),
        // A finding reaching the walk past its hooks.
        (
            "findings/truth.rs",
            "use crate::interp::calls::Operand;\n",
            "`findings` names `crate::interp::calls::Operand`",
        ),
        // What is emitted importing the walk, through `super`.
        (
            "emit/acl.rs",
            "use super::super::interp::calls;\n",
            "`emit` names `super::super::interp::calls`",
        ),
        // A re-export is an import too.
        (
            "domain/keys.rs",
            "pub(crate) use crate::interp::calls::*;\n",
            "`domain` names `crate::interp::calls`",
        ),
        // An item named through the façade.
        (
            "source/shebang.rs",
            "fn f(_: crate::Signature) {}\n",
            "`crate::Signature` names an item through the crate root",
        ),
        // The façade doing work.
        (
            "lib.rs",
            "mod source; mod model; mod domain; mod interp; mod findings; mod emit; mod pipeline;\npub fn analyze() { findings::allow(); }\n",
            "the crate root holds a function",
        ),
    ];
    for (path, text, expected) in planted {
        let mut files = base();
        files.retain(|existing| existing.shown != *path);
        files.push(file(path, text));
        let found = violations(&files);
        assert!(
            found.iter().any(|line| line.contains(expected)),
            "{path}: expected {expected:?} in {found:#?}"
        );
    }
}

/// The walk shows findings what it sees and names none of them: no
/// finding's code appears in `interp/`.
#[test]
fn the_walk_names_no_finding() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = crate_files(&src);
    let mut named = Vec::new();
    for file in files
        .iter()
        .filter(|file| file.path.first().is_some_and(|first| first == "interp"))
    {
        for code in crate::source::code::Code::findings() {
            let written = format!("Code::{code:?}");
            for (number, line) in file.text.lines().enumerate() {
                if line.contains(&written) {
                    named.push(format!("{}:{}: {}", file.shown, number + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        named.is_empty(),
        "the walk names findings:\n{}",
        named.join("\n")
    );
}

/// Every finding is registered once, with its own code, and nothing else
/// is.
#[test]
fn every_finding_is_registered_once() {
    let registered: Vec<crate::source::code::Code> =
        crate::findings::ALL.iter().map(|(code, _)| *code).collect();
    let mut expected: Vec<crate::source::code::Code> =
        crate::source::code::Code::findings().collect();
    let mut sorted = registered.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected);
}
