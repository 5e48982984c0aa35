//! Where a key comes from: the prefixes a built key starts with (a KEYS
//! element, an argument declared a key prefix, a parameter of a local
//! function), and the prefixes each call must check.
//!
//! Redis Cluster hashes only the part of a key between the first `{` and
//! the first `}` after it, when there is one. A key built by appending to a
//! prefix that holds a complete hash tag (`bull:{emails}:` .. job id)
//! therefore lives in the prefix's slot, whatever is appended.

use std::collections::BTreeSet;

use crate::domain::value::Value;
use crate::source::span::Span;

/// A parameter of a function written in the script: the function's walk
/// (each walk of a function body gets its own number) and the parameter's
/// position, from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ParameterId {
    pub function: u32,
    pub index: usize,
}

/// What a built key starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Origin {
    /// `KEYS[n]` (1-based), or an element of KEYS at an index computed at
    /// run time (`None`).
    Key(Option<usize>),
    /// `ARGV[n]` (1-based).
    Arg(usize),
    /// A parameter of a local function: what the caller passes.
    Parameter(ParameterId),
}

/// The prefixes a built key may start with (one per way it may be built).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Derivation(Vec<Origin>);

impl Derivation {
    pub fn of(origin: Origin) -> Self {
        Self(vec![origin])
    }

    pub fn origins(&self) -> &[Origin] {
        &self.0
    }

    /// Either of two derivations: the prefixes of both.
    pub fn union(&self, other: &Derivation) -> Derivation {
        Derivation::from_origins(self.0.iter().chain(&other.0).copied())
            .unwrap_or_else(|| self.clone())
    }

    pub(crate) fn from_origins(origins: impl IntoIterator<Item = Origin>) -> Option<Derivation> {
        let mut collected: Vec<Origin> = origins.into_iter().collect();
        collected.sort_unstable();
        collected.dedup();
        (!collected.is_empty()).then_some(Derivation(collected))
    }
}

impl Value {
    /// The prefixes a string starting with this value starts with, when
    /// it is a key, a key built from a prefix, a literal `ARGV` element or
    /// a function's parameter: what `self .. suffix` derives from.
    pub fn derivation(&self) -> Option<Derivation> {
        match self {
            Value::Key(index) => Some(Derivation::of(Origin::Key(*index))),
            Value::DerivedKey(derivation) => Some(derivation.clone()),
            Value::Arg(Some(index)) => Some(Derivation::of(Origin::Arg(*index))),
            Value::Parameter(parameter) => Some(Derivation::of(Origin::Parameter(*parameter))),
            _ => None,
        }
    }

    /// `self` with the parameters of function `function` replaced by what a
    /// call passes (`argument(index)`): a key or built key keeps its
    /// provenance through a helper such as `local function job_key(id)
    /// return KEYS[1] .. id end`. `None` when a parameter is passed
    /// something that is no key prefix.
    pub fn substituted(&self, function: u32, argument: impl Fn(usize) -> Value) -> Option<Value> {
        match self {
            Value::Parameter(parameter) if parameter.function == function => {
                Some(argument(parameter.index))
            }
            Value::DerivedKey(derivation) => {
                let mut origins = Vec::new();
                for origin in derivation.origins() {
                    match origin {
                        Origin::Parameter(parameter) if parameter.function == function => {
                            origins.extend(argument(parameter.index).derivation()?.0);
                        }
                        other => origins.push(*other),
                    }
                }
                Derivation::from_origins(origins).map(Value::DerivedKey)
            }
            other => Some(other.clone()),
        }
    }
}

/// The prefixes a script builds keys from, which each call must check: a
/// prefix must hold a complete `{hash tag}` in the slot of the call's keys,
/// or the keys built from it may hash to another slot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyPrefixes {
    /// The positions (1-based) of the KEYS elements used as prefixes.
    pub keys: BTreeSet<usize>,
    /// Some key is built from a KEYS element whose index is computed at
    /// run time (`KEYS[i] .. suffix`): every key is a prefix.
    pub every_key: bool,
    /// The positions (1-based) of the ARGV elements used as prefixes; the
    /// declaration names each of them a key prefix.
    pub args: BTreeSet<usize>,
}

impl KeyPrefixes {
    /// No key is built from a prefix.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && !self.every_key && self.args.is_empty()
    }

    pub(crate) fn require(&mut self, origin: Origin) {
        match origin {
            Origin::Key(Some(index)) => {
                self.keys.insert(index);
            }
            Origin::Key(None) => self.every_key = true,
            Origin::Arg(index) => {
                self.args.insert(index);
            }
            Origin::Parameter(_) => {}
        }
    }
}

/// A key a function builds from one of its parameters (or uses as it is):
/// checked at each call, against what the call passes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KeyUse {
    pub parameter: ParameterId,
    /// The parameter is the start of a built key (`p .. suffix`), not the
    /// whole key.
    pub prefix: bool,
    pub site: KeySite,
}

/// Where a key goes: the command, as displayed, and the line of its call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeySite {
    pub command: String,
    pub line: usize,
    /// The command reads the key's value (key spec flag `access`).
    pub reads: bool,
    /// The command changes the key's value (`insert`, `update`, `delete`).
    pub writes: bool,
    /// The key is used in a function the call at hand calls, not here:
    /// as a whole key, or (`Some(true)`) as the start of one.
    pub in_function: Option<bool>,
}

impl KeySite {
    /// The subject of a message about the value `shown` written here.
    pub(crate) fn of(&self, shown: &str) -> String {
        let (command, line) = (&self.command, self.line);
        match self.in_function {
            Some(true) => format!(
                "`{shown}`, which the function called here appends to for a key of `{command}` (line {line}),"
            ),
            Some(false) => format!(
                "`{shown}`, which the function called here passes as a key of `{command}` (line {line}),"
            ),
            None => format!("key argument `{shown}` of `{command}`"),
        }
    }
}

/// How the code behind one reply uses the elements of KEYS it reads at
/// literal indices, for the findings about KEYS elements that are not
/// keys. Every read of an element is either followed to where it ends (a
/// command's argument, one side of `==` or `~=`, a local that names it,
/// whose own reads are reads again) or escapes where the walk cannot see
/// what becomes of it (a function's argument, a table, `..`, a `return`):
/// only an element whose every read is followed is known not to be used
/// as a key.
///
/// Its sets are keyed by byte offsets, so that the passes of a loop, which
/// read the same expressions again, add nothing new.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeyElements {
    /// Some element is read at an index computed at run time, or KEYS is
    /// used whole (`unpack(KEYS)`, a loop over it): any element may go
    /// anywhere.
    pub opaque: bool,
    /// The script reads how many keys it is passed (`#KEYS`): an element
    /// may be passed to some calls only.
    pub counted: bool,
    /// Each read of an element: its index and the expression's span.
    reads: BTreeSet<(usize, SpanAt)>,
    /// The reads the walk follows to their end.
    followed: BTreeSet<(usize, SpanAt)>,
    /// The elements a command takes as a key (or builds a key from).
    taken: BTreeSet<usize>,
    /// Where an element is passed as a number.
    numbers: Vec<NumberUse>,
}

/// A span, ordered by where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct SpanAt(usize, usize, usize, usize);

impl SpanAt {
    fn of(span: Span) -> Self {
        SpanAt(span.offset, span.line, span.column, span.width)
    }
}

/// An element of KEYS passed to a command where every form the call may
/// meet takes a number (`PEXPIRE key milliseconds`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NumberUse {
    /// Its position in KEYS, from 1.
    pub index: usize,
    /// The argument as written.
    pub span: Span,
    /// The command, as messages show it (`PEXPIRE`).
    pub command: String,
    /// The argument's name in the command's grammar (`milliseconds`).
    pub argument: &'static str,
}

impl KeyElements {
    /// `KEYS[index]` (or a local naming it) read at `span`.
    pub(crate) fn read(&mut self, index: usize, span: Span) {
        self.reads.insert((index, SpanAt::of(span)));
    }

    /// The read at `span` ends where the walk sees it all.
    pub(crate) fn follow(&mut self, index: usize, span: Span) {
        self.followed.insert((index, SpanAt::of(span)));
    }

    /// A command takes the element as a key, or builds one from it.
    pub(crate) fn take(&mut self, index: usize) {
        self.taken.insert(index);
    }

    pub(crate) fn number(&mut self, used: NumberUse) {
        if !self.numbers.contains(&used) {
            self.numbers.push(used);
        }
    }

    /// The places an element is passed as a number, for the elements that
    /// are never a key: no command takes them as one, and every read of
    /// them is followed. Nothing when any element may go anywhere.
    pub(crate) fn numbers_never_keys(&self) -> impl Iterator<Item = &NumberUse> {
        self.numbers.iter().filter(move |used| {
            !self.opaque && !self.taken.contains(&used.index) && self.all_followed(used.index)
        })
    }

    fn all_followed(&self, index: usize) -> bool {
        self.reads
            .iter()
            .filter(|(at, _)| *at == index)
            .all(|read| self.followed.contains(read))
    }
}
