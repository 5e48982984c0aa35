//! What a script does with the JSON of a `Json<T>` argument: the fields
//! it reads from `cjson.decode(ARGV[n])` and how it uses each. The
//! analysis does not know `T`; the attribute compares these reads with
//! the shape `#[derive(JsonShape)]` publishes for it, at compile time.

use std::fmt;

use crate::source::text::is_lua_name;

/// One step from a decoded value into a part of it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JsonStep {
    /// `value.name`, `value['name']`.
    Field(String),
    /// `value[i]`: an element of an array.
    Element,
}

/// A path from the decoded argument: `job.tags[i]`, written for messages
/// after the parameter's name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct JsonPath(pub Vec<JsonStep>);

impl JsonPath {
    /// The path one step further.
    pub fn then(&self, step: JsonStep) -> JsonPath {
        let mut steps = self.0.clone();
        steps.push(step);
        JsonPath(steps)
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for step in &self.0 {
            match step {
                JsonStep::Field(name) if is_lua_name(name) => write!(f, ".{name}")?,
                JsonStep::Field(name) => write!(f, "[{name:?}]")?,
                JsonStep::Element => f.write_str("[i]")?,
            }
        }
        Ok(())
    }
}

/// Where a decoded value comes from: the `ARGV` position of a `Json<T>`
/// argument, and the path into it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct JsonOrigin {
    /// 1-based, as in `ARGV[n]`.
    pub argument: usize,
    pub path: JsonPath,
}

/// What the script does with a part of a decoded argument: what its JSON
/// type must allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JsonUse {
    /// Reads it: the field exists (a missing one is always nil).
    Read,
    /// Indexes it (`part.field`, `part[i]`): an object or an array.
    Indexed,
    /// Arithmetic (`+`, `-`, `*`, `/`, `%`, `^`, unary `-`): a number.
    Arithmetic,
    /// Concatenation (`..`): a string or a number.
    Concatenated,
    /// `<`, `<=`, `>`, `>=`: a number or a string.
    Ordered,
    /// `==` or `~=` with a literal of this kind: a comparison that can
    /// hold.
    ComparedWith(LiteralKind),
    /// Tested for truth (`if part then`, `not part`, `part and …`): JSON
    /// `null` decodes as `cjson.null`, which is true.
    Tested,
    /// The argument's JSON text itself, not decoded, used as a number
    /// (`tonumber(ARGV[1])`, `ARGV[1] + 0`): only the text of a number is
    /// one. The path is empty.
    TextAsNumber,
}

/// The kind of a literal a decoded value is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LiteralKind {
    Nil,
    Boolean,
    Number,
    String,
    /// `cjson.null`, what JSON `null` decodes as.
    JsonNull,
}

/// One use of a part of a decoded `Json<T>` argument.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JsonRead {
    /// The argument's position, 1-based (`ARGV[n]`).
    pub argument: usize,
    pub path: JsonPath,
    pub used: JsonUse,
    /// Where the use is written.
    pub line: usize,
    pub column: usize,
    pub width: usize,
}

/// A value the script encodes with `cjson.encode`: the fields of the
/// table, as far as the walk knows them (none for a value it does not
/// follow). The attribute checks them against `T` where the reply is
/// declared `Json<T>`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JsonEncoded {
    /// Its named fields, each as last written on some path.
    pub fields: Vec<EncodedField>,
    /// No other field can be there: the table was built from a
    /// constructor and named fields only, and never left the script's
    /// sight (passed to a function, aliased).
    pub complete: bool,
}

/// One named field of a [`JsonEncoded`] table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedField {
    pub name: String,
    pub kind: EncodedKind,
    /// It is set on every path to the encoding; otherwise some path
    /// leaves it out.
    pub always: bool,
    /// Where its value is written.
    pub line: usize,
    pub column: usize,
    pub width: usize,
}

/// What cjson writes for a field's value, where its Lua type is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodedKind {
    /// A number with no fraction: a JSON integer.
    Integer,
    /// A number literal with a fraction (`2.5`).
    Fraction,
    /// A number that may have a fraction.
    Number,
    /// A string.
    String,
    /// `true` or `false`.
    Boolean,
    /// A string, or `false` where a command found nothing (`GET` of a
    /// missing key): JSON `false` then.
    StringOrFalse,
    /// A table: an array or an object.
    Table,
    /// Nothing: the field is left out.
    Nil,
    /// `cjson.null`: JSON `null`.
    Null,
    /// A number, or nil (`tonumber(ARGV[1])`): left out when nil.
    NumberOrNil,
    /// Not known.
    Unknown,
}

/// Keeps one use of each kind per path, the first in the source: a
/// loop's silent passes and repeated reads add the same fact again.
///
/// A test for truth of a part the script also compares with `cjson.null`
/// is left out: the script handles `null` there. So is a read of a part
/// the script writes itself (`written`, by argument), or of anything in
/// it: what it finds there may be the script's own.
pub(crate) fn deduplicated(
    mut reads: Vec<JsonRead>,
    written: &[(usize, JsonPath)],
) -> Vec<JsonRead> {
    let null_checked: Vec<(usize, JsonPath)> = reads
        .iter()
        .filter(|read| read.used == JsonUse::ComparedWith(LiteralKind::JsonNull))
        .map(|read| (read.argument, read.path.clone()))
        .collect();
    // Indexing a part the script reads further into is that read's
    // first step, which its path check covers.
    let paths: Vec<(usize, JsonPath)> = reads
        .iter()
        .map(|read| (read.argument, read.path.clone()))
        .collect();
    reads.retain(|read| {
        read.used != JsonUse::Indexed
            || !paths.iter().any(|(argument, path)| {
                *argument == read.argument
                    && path.0.len() > read.path.0.len()
                    && path.0.starts_with(&read.path.0)
            })
    });
    reads.retain(|read| {
        read.used == JsonUse::TextAsNumber
            || !written.iter().any(|(argument, path)| {
                *argument == read.argument && read.path.0.starts_with(&path.0)
            })
    });
    reads.retain(|read| {
        read.used != JsonUse::Tested
            || !null_checked
                .iter()
                .any(|(argument, path)| *argument == read.argument && *path == read.path)
    });
    reads.sort_by(|a, b| {
        (a.argument, &a.path, a.used, a.line, a.column)
            .cmp(&(b.argument, &b.path, b.used, b.line, b.column))
    });
    reads.dedup_by(|later, first| {
        later.argument == first.argument && later.path == first.path && later.used == first.used
    });
    reads.sort_by_key(|read| (read.line, read.column));
    reads
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_as_lua() {
        let path = JsonPath::default()
            .then(JsonStep::Field("job".into()))
            .then(JsonStep::Field("retry-at".into()))
            .then(JsonStep::Element);
        assert_eq!(path.to_string(), ".job[\"retry-at\"][i]");
    }

    #[test]
    fn one_use_per_path_and_kind_is_kept() {
        let read = |line, used| JsonRead {
            argument: 1,
            path: JsonPath(vec![JsonStep::Field("id".into())]),
            used,
            line,
            column: 1,
            width: 2,
        };
        let kept = deduplicated(
            vec![
                read(4, JsonUse::Read),
                read(2, JsonUse::Read),
                read(3, JsonUse::Arithmetic),
            ],
            &[],
        );
        assert_eq!(
            kept.iter()
                .map(|read| (read.line, read.used))
                .collect::<Vec<_>>(),
            vec![(2, JsonUse::Read), (3, JsonUse::Arithmetic)]
        );
    }
}
