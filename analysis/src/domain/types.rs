//! The Lua types the value analysis proves: which types a value may have at
//! a point of the script, and, where it matters for a message, why it may
//! be nil or false.
//!
//! A type is a set of [`Kinds`]. The set of every kind is "unknown": a
//! finding never fires on it. Kinds split Lua's types where the
//! difference is a bug: numbers into integers and possibly fractional
//! numbers (Redis truncates a fraction in a reply and refuses one where an
//! integer is expected), strings into numeric and other text (`'5' + 1`
//! works, `'five' + 1` raises), booleans into `true` and `false`.

use std::fmt;
use std::rc::Rc;

use crate::domain::analysis::ReplyForm;
use crate::domain::json::{JsonEncoded, JsonOrigin, JsonStep};

/// Which of Lua's values a value may be.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct Kinds(u16);

impl Kinds {
    pub const NONE: Self = Self(0);
    pub const NIL: Self = Self(1 << 0);
    pub const FALSE: Self = Self(1 << 1);
    pub const TRUE: Self = Self(1 << 2);
    /// A number with an integer value.
    pub const INTEGER: Self = Self(1 << 3);
    /// A number that may have a fractional part.
    pub const FRACTION: Self = Self(1 << 4);
    /// A string that Lua converts to a number (`'12'`, `'1.5'`).
    pub const NUMERIC_STRING: Self = Self(1 << 5);
    /// A string that is not a number.
    pub const TEXT: Self = Self(1 << 6);
    pub const TABLE: Self = Self(1 << 7);
    pub const FUNCTION: Self = Self(1 << 8);
    /// Userdata and coroutines.
    pub const OTHER: Self = Self(1 << 9);

    pub const NUMBER: Self = Self(Self::INTEGER.0 | Self::FRACTION.0);
    pub const STRING: Self = Self(Self::NUMERIC_STRING.0 | Self::TEXT.0);
    pub const BOOLEAN: Self = Self(Self::TRUE.0 | Self::FALSE.0);
    /// `nil` and `false`: what a test finds false.
    pub const FALSY: Self = Self(Self::NIL.0 | Self::FALSE.0);
    pub const ANY: Self = Self((1 << 10) - 1);

    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    pub const fn intersection(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    pub const fn without(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Every kind of `self` is one of `other`.
    pub const fn within(self, other: Self) -> bool {
        !self.is_empty() && self.0 & !other.0 == 0
    }

    pub const fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }

    pub const fn is_unknown(self) -> bool {
        self.0 == Self::ANY.0
    }

    /// The Lua type names these kinds cover (`number`, `string`, …).
    pub fn lua_types(self) -> Vec<&'static str> {
        let mut names = Vec::new();
        for (kinds, name) in [
            (Self::NIL, "nil"),
            (Self::BOOLEAN, "boolean"),
            (Self::NUMBER, "number"),
            (Self::STRING, "string"),
            (Self::TABLE, "table"),
            (Self::FUNCTION, "function"),
            (Self::OTHER, "userdata"),
        ] {
            if self.intersects(kinds) {
                names.push(name);
            }
        }
        names
    }
}

impl std::ops::BitOr for Kinds {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        self.union(other)
    }
}

impl fmt::Debug for Kinds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_unknown() {
            return f.write_str("Kinds(any)");
        }
        let names = [
            (Self::NIL, "nil"),
            (Self::FALSE, "false"),
            (Self::TRUE, "true"),
            (Self::INTEGER, "integer"),
            (Self::FRACTION, "fraction"),
            (Self::NUMERIC_STRING, "numeric-string"),
            (Self::TEXT, "text"),
            (Self::TABLE, "table"),
            (Self::FUNCTION, "function"),
            (Self::OTHER, "other"),
        ];
        let shown: Vec<&str> = names
            .iter()
            .filter(|(kind, _)| self.intersects(*kind))
            .map(|(_, name)| *name)
            .collect();
        write!(f, "Kinds({})", shown.join("|"))
    }
}

/// Why a value may be nil or false, for messages: "when the key does not
/// exist", named after what produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Absence {
    /// What produced the value: "`GET`", "`tonumber(ARGV[1])`".
    pub source: String,
    /// When it is nil or false: "when the key does not exist".
    pub when: String,
    /// Which of nil and false it explains: a test that rules them out
    /// rules the reason out too.
    pub kinds: Kinds,
}

/// When a local that one path leaves nil is nil.
const UNSET_ON_SOME_PATH: &str = "is nil where the code that sets it does not run";

impl Absence {
    /// A local that some path leaves nil (`local r` … `if c then r = …
    /// end`). Whether that path runs often depends on other values the
    /// analysis does not relate (`if not found then return end` guards
    /// it), so only the reply-hole finding, where the cost of a lost
    /// element is high, reports it.
    pub fn unset_on_some_path() -> Absence {
        Absence {
            source: "it".to_owned(),
            when: UNSET_ON_SOME_PATH.to_owned(),
            kinds: Kinds::NIL,
        }
    }

    /// Whether it is [`Self::unset_on_some_path`].
    pub fn is_unset_on_some_path(&self) -> bool {
        self.when == UNSET_ON_SOME_PATH
    }
}

/// A read whose reply grows with the data (`SMEMBERS`, `LRANGE … 0 -1`,
/// `ZRANGEBYSCORE` without `LIMIT`): where it is, for the finding that
/// reports the loop, `unpack` or `return` that uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnboundedRead {
    /// The command name as written in the call.
    pub command: String,
    /// What it reads: "the whole set", "every element in the range".
    pub reads: &'static str,
    /// The command name's place in the script.
    pub span: crate::source::span::Span,
    /// How to bound it.
    pub bound: String,
}

/// Why a table's length is set by the data or by an argument, not by the
/// request's own length (as `KEYS` and `ARGV` are): the reply of a range
/// whose end the script computes, a table filled in a loop that runs once
/// per element of the data or up to a computed count.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Growth {
    /// For a message, after "a table that": "gets an element on each pass
    /// of the loop at line 17, which runs up to `amount`".
    pub why: String,
}

/// Where a value that is no key of the call was read: a command's reply,
/// a decoded payload, an element of ARGV past the fixed ones; for the key
/// check ("a value read from the reply of `GET` at line 2"). A key name
/// read there may hash to any slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataRead {
    /// "a value read from the reply of `GET`", "an element of ARGV".
    pub what: String,
    /// Where it is read.
    pub line: usize,
    /// It is an element of `ARGV`: the request holds it, so the caller
    /// sizes what is made of such elements.
    pub in_request: bool,
}

impl DataRead {
    /// For a message: "a value read from the reply of `GET` at line 2".
    pub fn describe(&self) -> String {
        format!("{} at line {}", self.what, self.line)
    }
}

/// What a table holds, as far as the analysis knows.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct TableType {
    /// The type of every element of its array part, when they share one.
    pub elements: Option<Type>,
    /// The types of the first elements, when known one by one (a reply
    /// of fixed shape, such as `SCAN`'s cursor and keys).
    pub positions: Vec<Type>,
    /// The array part may be empty.
    pub may_be_empty: bool,
    /// Its length is even: a map or a list of pairs sent flat (RESP2
    /// `HGETALL`, `ZRANGE … WITHSCORES`), so `#t / 2` is whole.
    pub even_length: bool,
    /// The keys a constructor of keys made it of (`{KEYS[1], prefix ..
    /// ':b'}`, a helper's parameters), while nothing has changed its
    /// elements since: where its elements go as keys, these are checked.
    pub keys: Option<Rc<[crate::domain::value::Value]>>,
    /// It holds keys and values in turn, appended one by one from empty
    /// (`t[#t + 1] = KEYS[i]; t[#t + 1] = ARGV[i]`): its odd elements are
    /// keys, as `MSET` and `MSETNX` take them.
    pub pairs: Option<Rc<Pairs>>,
    /// Its named fields (`{id = …}`, `t.id = …`), while every write to it
    /// is one the walk sees: what `cjson.encode` writes of it.
    pub fields: Option<Rc<TableFields>>,
}

/// The named fields of a table, as the constructor and the assignments
/// since made them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TableFields {
    pub known: Vec<KnownField>,
    /// No other field is set: no key was computed at run time, and the
    /// array part is empty.
    pub complete: bool,
}

/// One named field of [`TableFields`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KnownField {
    pub name: String,
    pub ty: Type,
    /// Where its value is written.
    pub span: crate::source::span::Span,
    /// Set on every path here.
    pub always: bool,
}

impl TableFields {
    /// The fields after `name = ty`, written at `span`.
    pub fn with(&self, name: &str, ty: Type, span: crate::source::span::Span) -> TableFields {
        let mut known: Vec<KnownField> = self
            .known
            .iter()
            .filter(|field| field.name != name)
            .cloned()
            .collect();
        known.push(KnownField {
            name: name.to_owned(),
            ty,
            span,
            always: true,
        });
        TableFields {
            known,
            complete: self.complete,
        }
    }

    /// What either holds: a field only one side sets is not always set.
    fn join(&self, other: &TableFields) -> TableFields {
        let mut known: Vec<KnownField> = self
            .known
            .iter()
            .map(
                |field| match other.known.iter().find(|o| o.name == field.name) {
                    Some(same) => KnownField {
                        ty: field.ty.join(&same.ty),
                        always: field.always && same.always,
                        ..field.clone()
                    },
                    None => KnownField {
                        always: false,
                        ..field.clone()
                    },
                },
            )
            .collect();
        known.extend(
            other
                .known
                .iter()
                .filter(|field| !self.known.iter().any(|mine| mine.name == field.name))
                .map(|field| KnownField {
                    always: false,
                    ..field.clone()
                }),
        );
        TableFields {
            known,
            complete: self.complete && other.complete,
        }
    }
}

/// What a table of keys and values in turn holds: every key appended
/// joined, every value joined; `None` before the first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pairs {
    pub key: Option<crate::domain::value::Value>,
    pub value: Option<crate::domain::value::Value>,
    /// Its length is even: each key has its value.
    pub complete: bool,
}

impl Pairs {
    /// An empty table.
    pub const EMPTY: Pairs = Pairs {
        key: None,
        value: None,
        complete: true,
    };

    /// After appending `element`: a key when the last pair is complete,
    /// its value otherwise. `None` when a pair would start with no key.
    pub fn appended(&self, element: &crate::domain::value::Value) -> Option<Pairs> {
        let joined = |known: &Option<crate::domain::value::Value>| match known {
            Some(known) => known.join(element),
            None => element.clone(),
        };
        if !self.complete {
            return Some(Pairs {
                key: self.key.clone(),
                value: Some(joined(&self.value)),
                complete: true,
            });
        }
        element.is_key_like().then(|| Pairs {
            key: Some(joined(&self.key)),
            value: self.value.clone(),
            complete: false,
        })
    }

    /// What either holds, when both are in the same phase.
    fn join(&self, other: &Pairs) -> Option<Pairs> {
        let either = |a: &Option<crate::domain::value::Value>,
                      b: &Option<crate::domain::value::Value>| match (a, b) {
            (Some(a), Some(b)) => Some(a.join(b)),
            (Some(one), None) | (None, Some(one)) => Some(one.clone()),
            (None, None) => None,
        };
        (self.complete == other.complete).then(|| Pairs {
            key: either(&self.key, &other.key),
            value: either(&self.value, &other.value),
            complete: self.complete,
        })
    }
}

impl TableType {
    /// What either table holds.
    pub fn join(&self, other: &TableType) -> TableType {
        let elements = match (&self.elements, &other.elements) {
            (Some(a), Some(b)) => Some(a.join(b)),
            _ => None,
        };
        let positions = self
            .positions
            .iter()
            .zip(&other.positions)
            .map(|(a, b)| a.join(b))
            .collect();
        TableType {
            elements,
            positions,
            may_be_empty: self.may_be_empty || other.may_be_empty,
            even_length: self.even_length && other.even_length,
            keys: self
                .keys
                .clone()
                .filter(|keys| Some(keys) == other.keys.as_ref()),
            pairs: match (&self.pairs, &other.pairs) {
                (Some(a), Some(b)) => a.join(b).map(Rc::new),
                _ => None,
            },
            fields: match (&self.fields, &other.fields) {
                (Some(a), Some(b)) if a == b => Some(a.clone()),
                (Some(a), Some(b)) => Some(Rc::new(a.join(b))),
                _ => None,
            },
        }
    }
}

/// The type of a value: its possible kinds, and what else is known.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Type {
    pub kinds: Kinds,
    /// Why it may be nil or false, when one producer is known.
    pub absence: Option<Rc<Absence>>,
    /// For tables: what they hold.
    pub table: Option<Rc<TableType>>,
    /// For integers: the values they may take, when few are possible (a
    /// reply of `0` or `1`).
    pub integers: Option<Rc<[i64]>>,
    /// An operation of the script (`/`, `^`) makes a fraction possible:
    /// the evidence a finding about fractions needs. A number the script
    /// only reads (`tonumber` of a reply) may have a fraction too, but
    /// nothing says it does.
    pub divided: bool,
    /// For integers: the value is even (the length of an even-length
    /// table), so halving it keeps it whole.
    pub even: bool,
    /// For integers: the value is odd (a loop index counting from 1 in
    /// steps of 2), so the value after it halves whole.
    pub odd: bool,
    /// For integers: the length of the local table declared at this
    /// offset (`local n = #t`), so `n > 0` says `t` is not empty.
    pub length_of: Option<usize>,
    /// It holds (or measures, or iterates) the reply of a read that grows
    /// with the data.
    pub unbounded: Option<Rc<UnboundedRead>>,
    /// For tables (and their lengths): how many elements it holds is set by
    /// the data or an argument, for a reason other than `unbounded`.
    pub grows: Option<Rc<Growth>>,
    /// For numbers: the result of `math.min`, with which scripts cap a
    /// count; a loop up to it does not run as often as the data says.
    pub capped: bool,
    /// For tables: `setmetatable` gave it a metatable.
    pub metatable: bool,
    /// The kinds it had before the script's own tests narrowed it. A test
    /// that the narrowed kinds decide but these do not repeats an earlier
    /// guard (`if not id or id == false`): redundant, not a bug.
    pub unguarded: Kinds,
    /// It may have been read from data (a reply, a decoded payload, an
    /// element of one), and from where.
    pub read_from: Option<Rc<DataRead>>,
    /// It is a `Json<T>` argument decoded by `cjson.decode`, or a part of
    /// one: which, and where in it.
    pub json: Option<Rc<JsonOrigin>>,
    /// For strings: the text `cjson.encode` made of a table whose fields
    /// are known.
    pub encoded: Option<Rc<JsonEncoded>>,
    /// It is a command's reply as the server sent it, of a form that
    /// decides which Rust types decode it (a flat map, a status): kept
    /// while nothing changes the value, for the contract checks of a
    /// `return`.
    pub reply_form: Option<Rc<ReplyForm>>,
}

impl Type {
    pub fn of(kinds: Kinds) -> Self {
        Self {
            kinds,
            absence: None,
            table: None,
            integers: None,
            divided: false,
            even: false,
            odd: false,
            length_of: None,
            unbounded: None,
            grows: None,
            capped: false,
            metatable: false,
            unguarded: kinds,
            read_from: None,
            json: None,
            encoded: None,
            reply_form: None,
        }
    }

    /// A number that an operation of the script may have made fractional.
    pub fn divided() -> Self {
        Self {
            divided: true,
            ..Self::of(Kinds::NUMBER)
        }
    }

    pub fn unknown() -> Self {
        Self::of(Kinds::ANY)
    }

    pub fn is_unknown(&self) -> bool {
        self.kinds.is_unknown()
    }

    /// The kinds it may have, or had before a test of the script narrowed
    /// them: what a finding about a redundant test must also hold for.
    pub fn kinds_before_tests(&self) -> Kinds {
        self.kinds | self.unguarded
    }

    /// An integer of known parity.
    pub fn integer_with_parity(even: Option<bool>) -> Self {
        Self {
            even: even == Some(true),
            odd: even == Some(false),
            ..Self::of(Kinds::INTEGER)
        }
    }

    /// Whether it is an even integer, when that is known.
    pub fn parity(&self) -> Option<bool> {
        match (self.even, self.odd) {
            (true, false) => Some(true),
            (false, true) => Some(false),
            _ => None,
        }
    }

    /// The type with the reason it may be nil or false.
    pub fn absent(mut self, source: impl Into<String>, when: impl Into<String>) -> Self {
        let kinds = match self.kinds.intersection(Kinds::FALSY) {
            // Unknown values: both.
            none if none.is_empty() => Kinds::FALSY,
            some => some,
        };
        self.absence = Some(Rc::new(Absence {
            source: source.into(),
            when: when.into(),
            kinds,
        }));
        self
    }

    pub fn table(table: TableType) -> Self {
        Self {
            table: Some(Rc::new(table)),
            ..Self::of(Kinds::TABLE)
        }
    }

    /// Either type: kinds united, the rest kept where both agree (or where
    /// only one side can have the part it describes).
    pub fn join(&self, other: &Type) -> Type {
        let kinds = self.kinds | other.kinds;
        let absence = match (&self.absence, &other.absence) {
            (Some(a), Some(b)) if a == b => Some(a.clone()),
            (Some(a), None) if !other.kinds.intersects(Kinds::FALSY) => Some(a.clone()),
            (None, Some(b)) if !self.kinds.intersects(Kinds::FALSY) => Some(b.clone()),
            _ => None,
        };
        let table = match (&self.table, &other.table) {
            (Some(a), Some(b)) if a == b => Some(a.clone()),
            (Some(a), Some(b)) => Some(Rc::new(a.join(b))),
            (Some(a), None) if !other.kinds.intersects(Kinds::TABLE) => Some(a.clone()),
            (None, Some(b)) if !self.kinds.intersects(Kinds::TABLE) => Some(b.clone()),
            _ => None,
        };
        let integers = match (&self.integers, &other.integers) {
            (Some(a), Some(b)) => {
                let mut values: Vec<i64> = a.iter().chain(b.iter()).copied().collect();
                values.sort_unstable();
                values.dedup();
                Some(Rc::from(values))
            }
            (Some(a), None) if !other.kinds.intersects(Kinds::NUMBER) => Some(a.clone()),
            (None, Some(b)) if !self.kinds.intersects(Kinds::NUMBER) => Some(b.clone()),
            _ => None,
        };
        Type {
            kinds,
            absence,
            table,
            integers,
            divided: self.divided || other.divided,
            even: self.even && other.even,
            odd: self.odd && other.odd,
            length_of: self
                .length_of
                .filter(|table| other.length_of == Some(*table)),
            unbounded: self.unbounded.clone().or_else(|| other.unbounded.clone()),
            grows: self.grows.clone().or_else(|| other.grows.clone()),
            capped: self.capped && other.capped,
            metatable: self.metatable || other.metatable,
            unguarded: self.unguarded | other.unguarded,
            read_from: self.read_from.clone().or_else(|| other.read_from.clone()),
            json: self
                .json
                .clone()
                .filter(|json| Some(json) == other.json.as_ref()),
            encoded: self
                .encoded
                .clone()
                .filter(|encoded| Some(encoded) == other.encoded.as_ref()),
            // Either value may be returned: the form holds only when both
            // are the same reply.
            reply_form: self
                .reply_form
                .clone()
                .filter(|form| Some(form) == other.reply_form.as_ref()),
        }
    }

    /// A table of `count` elements of the type its elements have: each
    /// position known, none of them past the end. The elements lose why
    /// they may be false (a missing field): scripts read fields that
    /// exist by design, and a default there is noise; a test for nil that
    /// false passes is what the kinds still show.
    pub fn with_length(mut self, count: usize) -> Type {
        let Some(table) = self.table.as_deref() else {
            return self;
        };
        let Some(elements) = table.elements.clone().map(|elements| Type {
            absence: None,
            ..elements
        }) else {
            return self;
        };
        self.table = Some(Rc::new(TableType {
            positions: vec![elements; count],
            may_be_empty: false,
            ..table.clone()
        }));
        self
    }

    /// The type where a test found the value true.
    pub fn truthy(&self) -> Type {
        Type {
            kinds: self.kinds.without(Kinds::FALSY),
            absence: None,
            ..self.clone()
        }
    }

    /// The type where a test found the value false (nil or false).
    pub fn falsy(&self) -> Type {
        Type {
            kinds: self.kinds.intersection(Kinds::FALSY),
            table: None,
            integers: None,
            ..self.clone()
        }
    }

    /// The type without these kinds.
    pub fn without(&self, kinds: Kinds) -> Type {
        let mut narrowed = self.clone();
        narrowed.kinds = self.kinds.without(kinds);
        let explained = self
            .absence
            .as_ref()
            .is_some_and(|absence| narrowed.kinds.intersects(absence.kinds));
        if !narrowed.kinds.intersects(Kinds::FALSY) || !explained {
            narrowed.absence = None;
        }
        narrowed
    }

    /// The type restricted to these kinds.
    pub fn only(&self, kinds: Kinds) -> Type {
        self.without(Kinds::ANY.without(kinds))
    }

    /// What it holds, when it is a table.
    /// The same, but a table known to hold something: for a spread whose
    /// range the script computes.
    pub fn non_empty_spread(mut self) -> Type {
        if let Some(table) = &mut self.table {
            Rc::make_mut(table).may_be_empty = false;
        }
        self
    }

    pub fn table_type(&self) -> Option<&TableType> {
        self.table.as_deref()
    }

    /// The type, read from data at `read`.
    pub fn read_from(mut self, read: DataRead) -> Type {
        self.read_from = Some(Rc::new(read));
        self
    }

    /// What a part of a value of this type is (an element, a field, a
    /// loop variable over it): `part`, read from the same data.
    pub fn part(&self, mut part: Type) -> Type {
        if part.read_from.is_none() {
            part.read_from.clone_from(&self.read_from);
        }
        part
    }

    /// The part of a decoded `Json<T>` argument one `step` into this one.
    pub fn json_part(&self, step: JsonStep) -> Option<Rc<JsonOrigin>> {
        self.json.as_ref().map(|origin| {
            Rc::new(JsonOrigin {
                argument: origin.argument,
                path: origin.path.then(step),
            })
        })
    }
}
