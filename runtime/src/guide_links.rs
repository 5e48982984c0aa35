//! The guide pages' links work in both places they are read: in rustdoc,
//! where a link to an item is an intra-doc path, and on the code host, where
//! the same link must reach a page or a source file of the repository.
//! Each link to an item is a reference link whose label has two
//! definitions: `doc/guide/intra_doc_links.md` (read first by rustdoc,
//! prepended to every page) and the page's own (read by the code host).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn guide_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/doc/guide")
}

/// `[label]: destination` lines of `text`, in order.
fn definitions(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix('[')?;
            let (label, destination) = rest.split_once("]: ")?;
            Some((label.to_owned(), destination.trim().to_owned()))
        })
        .collect()
}

/// The labels of the full reference links (`[text][label]`) in `text`.
fn reference_labels(text: &str) -> BTreeSet<String> {
    text.match_indices("][")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            let end = rest.find(']')?;
            Some(rest[..end].to_owned())
        })
        .filter(|label| !label.is_empty())
        .collect()
}

fn pages() -> Vec<(String, String)> {
    let mut pages: Vec<_> = std::fs::read_dir(guide_dir())
        .expect("the guide directory")
        .map(|entry| entry.expect("a guide entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .filter(|path| !path.ends_with("intra_doc_links.md"))
        .map(|path| {
            let name = path
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read_to_string(&path).expect("a guide page"))
        })
        .collect();
    pages.sort();
    pages
}

#[test]
fn every_link_to_an_item_is_defined_for_rustdoc_and_for_the_code_host() {
    let rustdoc_text = std::fs::read_to_string(guide_dir().join("intra_doc_links.md"))
        .expect("intra_doc_links.md");
    let rustdoc: Vec<_> = definitions(&rustdoc_text);
    for (label, destination) in &rustdoc {
        assert_eq!(
            destination,
            &format!("crate::{label}"),
            "intra_doc_links.md: [{label}] must point at crate::{label}"
        );
    }
    let rustdoc_labels: BTreeSet<_> = rustdoc.into_iter().map(|(label, _)| label).collect();
    let mut used = BTreeSet::new();
    for (name, text) in pages() {
        assert!(
            !text.contains("](crate::"),
            "{name}: an inline link to `crate::…` is dead on the code host; write it as a reference link [text][path] defined in intra_doc_links.md and at the end of the page"
        );
        let own: Vec<_> = definitions(&text);
        for label in reference_labels(&text) {
            // `KEYS[1][2]` in code reads like a reference; an item's label
            // is a Rust path or has a rustdoc definition.
            if !label.contains("::") && !rustdoc_labels.contains(&label) {
                continue;
            }
            assert!(
                rustdoc_labels.contains(&label),
                "{name}: [{label}] has no definition in intra_doc_links.md"
            );
            let destination = own
                .iter()
                .find(|(defined, _)| *defined == label)
                .map(|(_, destination)| destination)
                .unwrap_or_else(|| panic!("{name}: [{label}] has no definition at the end of the page for the code host"));
            let file = destination.split('#').next().unwrap_or_default();
            assert!(
                guide_dir().join(file).exists(),
                "{name}: [{label}]: {destination} names no file of the repository"
            );
            used.insert(label);
        }
    }
    let unused: Vec<_> = rustdoc_labels.difference(&used).collect();
    assert!(
        unused.is_empty(),
        "intra_doc_links.md defines labels no page uses: {unused:?}"
    );
}

#[test]
fn the_link_readers_read_definitions_and_references() {
    let text = "See [the guide][guide::codes] and [x][y].\n\n[guide::codes]: codes.md#top\n";
    assert_eq!(
        definitions(text),
        [("guide::codes".to_owned(), "codes.md#top".to_owned())]
    );
    assert_eq!(
        reference_labels(text),
        BTreeSet::from(["guide::codes".to_owned(), "y".to_owned()])
    );
}
