//! Where a declaration sits in its source file, for the one mistake rustc
//! would otherwise report in its own words: a declaration without `self`
//! inside an `impl` or `trait` block. The companion type and the contract
//! checks the attribute generates are module items, which such a block
//! cannot hold, and rustc answers each with an error of its own.
//!
//! An attribute macro is not told what encloses it, so this reads the
//! file the attribute is in and looks for the declaration there. It
//! answers only when every `#[redis_script]` declaration of that name in
//! the file is in such a block; anything it cannot read (another crate's
//! macro expanding to the declaration, a file that does not lex) leaves
//! the expansion as it is.

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// The kind of block directly around a declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enclosing {
    Impl,
    Trait,
}

impl Enclosing {
    /// The block, as a message names it.
    pub fn described(self) -> &'static str {
        match self {
            Self::Impl => "an `impl` block",
            Self::Trait => "a `trait` definition",
        }
    }
}

/// The block around every `#[redis_script]` declaration of `function` in
/// `source`, when all of them are in `impl` or `trait` blocks.
pub fn enclosing_block(source: &str, function: &str) -> Option<Enclosing> {
    let tokens: TokenStream = source.parse().ok()?;
    let mut found = Vec::new();
    visit(tokens, None, function, &mut found);
    let first = *found.first()?;
    found.iter().all(|block| *block == first).then_some(first)?
}

/// Records in `found` the block kind of each declaration of `function`
/// among `tokens`, whose own block is `block` (`None`: a module or a
/// function body, where declarations belong).
fn visit(
    tokens: TokenStream,
    block: Option<Enclosing>,
    function: &str,
    found: &mut Vec<Option<Enclosing>>,
) {
    // The item being read at this level: its leading keyword, and whether
    // it carries the attribute.
    let mut keyword: Option<String> = None;
    let mut attributed = false;
    let mut after_fn = false;
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            TokenTree::Punct(punct) if punct.as_char() == '#' => {
                if let Some(TokenTree::Group(attribute)) = tokens.peek()
                    && attribute.delimiter() == Delimiter::Bracket
                {
                    attributed |= names_the_attribute(attribute.stream());
                    tokens.next();
                }
            }
            TokenTree::Punct(punct) if punct.as_char() == ';' => {
                (keyword, attributed, after_fn) = (None, false, false);
            }
            TokenTree::Ident(ident) => {
                let word = ident.to_string();
                if after_fn && word == function && attributed {
                    found.push(block);
                }
                after_fn = word == "fn";
                if keyword.is_none() && !MODIFIERS.contains(&word.as_str()) {
                    keyword = Some(word);
                }
            }
            TokenTree::Group(group) if group.delimiter() == Delimiter::Brace => {
                let inner = match keyword.as_deref() {
                    Some("impl") => Some(Enclosing::Impl),
                    Some("trait") => Some(Enclosing::Trait),
                    _ => None,
                };
                visit(group.stream(), inner, function, found);
                (keyword, attributed, after_fn) = (None, false, false);
            }
            _ => after_fn = false,
        }
    }
}

/// Words that may come before an item's keyword.
const MODIFIERS: &[&str] = &[
    "pub", "unsafe", "default", "auto", "const", "async", "extern",
];

/// Whether an attribute's tokens (inside `#[…]`) name `redis_script`, as
/// `redis_script(…)` or through a path.
fn names_the_attribute(attribute: TokenStream) -> bool {
    let mut last_ident = None;
    for token in attribute {
        match token {
            TokenTree::Ident(ident) => last_ident = Some(ident.to_string()),
            TokenTree::Punct(punct) if punct.as_char() == ':' => {}
            _ => break,
        }
    }
    last_ident.as_deref() == Some("redis_script")
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECLARATION: &str =
        r#"#[redis_script(path = "lua/x.lua", keys = 1)] pub async fn admit(key: &str) -> i64;"#;

    fn enclosing(wrapped: &str) -> Option<Enclosing> {
        enclosing_block(&wrapped.replace("DECLARATION", DECLARATION), "admit")
    }

    #[test]
    fn finds_impl_and_trait_blocks() {
        assert_eq!(
            enclosing("struct S; impl S { DECLARATION }"),
            Some(Enclosing::Impl)
        );
        assert_eq!(
            enclosing("impl<T: Clone> Store<T> where T: Send { fn other() {} DECLARATION }"),
            Some(Enclosing::Impl)
        );
        assert_eq!(
            enclosing("unsafe impl S { DECLARATION }"),
            Some(Enclosing::Impl)
        );
        assert_eq!(
            enclosing("pub trait Store { DECLARATION }"),
            Some(Enclosing::Trait)
        );
        assert_eq!(
            enclosing("mod m { #[cfg(test)] impl S { DECLARATION } }"),
            Some(Enclosing::Impl)
        );
        assert_eq!(
            enclosing(
                r#"impl S { #[redis_script::redis_script(path = "x.lua", keys = 1)] async fn admit(); }"#
            ),
            Some(Enclosing::Impl)
        );
    }

    #[test]
    fn places_where_a_declaration_belongs_are_left_alone() {
        assert_eq!(enclosing("DECLARATION"), None);
        assert_eq!(enclosing("mod m { DECLARATION }"), None);
        assert_eq!(enclosing("fn f() -> impl Fn() { DECLARATION || {} }"), None);
        assert_eq!(enclosing("impl S { fn f() { DECLARATION } }"), None);
        assert_eq!(enclosing("impl S { const C: () = { DECLARATION }; }"), None);
        // The same name elsewhere: not this declaration for certain.
        assert_eq!(
            enclosing("impl S { DECLARATION } mod m { DECLARATION }"),
            None
        );
        // Another function of that name, or the name without the attribute.
        assert_eq!(enclosing("impl S { fn admit() {} } DECLARATION"), None);
        assert_eq!(enclosing("impl S { fn admit() {} }"), None);
        assert_eq!(enclosing("impl S { #[other] async fn admit(); }"), None);
        // Source that does not lex.
        assert_eq!(enclosing_block("impl S { \"unterminated", "admit"), None);
    }
}
