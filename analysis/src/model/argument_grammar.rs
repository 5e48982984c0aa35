//! Which argument of a command's grammar each operand of a `redis.call`
//! fills, as far as the literal words of the call decide it.
//!
//! A grammar ([`Argument`]s from the server model) has optional parts,
//! alternatives and repetitions; a call's operands are partly literals
//! (`'EX'`, `'WITHSCORES'`) and partly values known only at run time. The
//! matcher walks both from the left and stops at the first operand it
//! cannot place for certain: a value where an optional word may stand, a
//! repetition that is not the grammar's last argument, an `unpack(…)`. What
//! it returns is therefore always right, and may be short. A repeated group
//! of plain values at the end (`field value …`) is placed value by value,
//! and [`broken_groups`] says when the call gives it a count that is no
//! whole number of groups.

use crate::model::commands::shapes::{Argument, ArgumentKind, ShapeForm};

/// One operand the matcher placed: its index among the operands given and
/// the argument it fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placed {
    pub operand: usize,
    pub argument: &'static Argument,
}

/// The operands `words` (each the literal text of an operand, `None` for a
/// value known only at run time) placed on `grammar`. `spread_from` is the
/// index of an `unpack(…)` operand, whose count of values is unknown.
pub(crate) fn place(
    grammar: &'static [Argument],
    words: &[Option<&str>],
    spread_from: Option<usize>,
) -> Vec<Placed> {
    let end = spread_from.unwrap_or(words.len()).min(words.len());
    let mut matcher = Matcher {
        words: words.get(..end).unwrap_or_default(),
        next: 0,
        placed: Vec::new(),
        tokens: Vec::new(),
        broken: None,
    };
    matcher.sequence(grammar);
    matcher.placed
}

/// The operands `words` (as for [`place`]) that every one of `forms`
/// places at an argument of one of `kinds`, with that argument's name: the
/// operands a call takes as, say, a number whichever form it meets.
pub(crate) fn placed_in_every_form(
    forms: &[&'static ShapeForm],
    words: &[Option<&str>],
    spread_from: Option<usize>,
    kinds: &[ArgumentKind],
) -> Vec<(usize, &'static str)> {
    let mut common: Option<Vec<(usize, &'static str)>> = None;
    for form in forms {
        let here: Vec<(usize, &'static str)> = place(form.arguments, words, spread_from)
            .into_iter()
            .filter(|placed| kinds.contains(&placed.argument.kind))
            .map(|placed| (placed.operand, placed.argument.name))
            .collect();
        common = Some(match common {
            None => here,
            Some(before) => before
                .into_iter()
                .filter(|item| here.contains(item))
                .collect(),
        });
    }
    common.unwrap_or_default()
}

/// A call whose trailing repeated group of values (`field value` of
/// `HSET`, `key value` of `MSET`, `score member` of `ZADD`) gets a count
/// of operands that is no whole number of groups: the server refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BrokenGroups {
    /// The values of one group, in order.
    pub group: &'static [Argument],
    /// The index of the first operand of the groups.
    pub from: usize,
    /// How many operands the call passes there.
    pub passed: usize,
}

/// The broken groups of `words` (as for [`place`]) on `grammar`, when the
/// literals decide where the groups start and no `unpack(…)` makes the
/// count unknown.
pub(crate) fn broken_groups(
    grammar: &'static [Argument],
    words: &[Option<&str>],
    spread_from: Option<usize>,
) -> Option<BrokenGroups> {
    if spread_from.is_some() {
        return None;
    }
    let mut matcher = Matcher {
        words,
        next: 0,
        placed: Vec::new(),
        tokens: Vec::new(),
        broken: None,
    };
    matcher.sequence(grammar);
    matcher.broken
}

/// The option words (`NX`, `GET`, `EX`) `words` (as for [`place`]) pass
/// after the required values the grammar starts with (`key value` of
/// `SET`), in any order, as servers take them: `None` when some operand
/// there is no literal option word of the grammar (a value where an option
/// may stand, which may be any word), or `spread_from` says an
/// `unpack(…)` may pass more.
pub(crate) fn options_given(
    grammar: &'static [Argument],
    words: &[Option<&str>],
    spread_from: Option<usize>,
) -> Option<Vec<&'static str>> {
    if spread_from.is_some() {
        return None;
    }
    let leading = leading_values(grammar);
    let mut options = Vec::new();
    for argument in grammar.get(leading..).unwrap_or_default() {
        option_words(argument, &mut options);
    }
    let mut given = Vec::new();
    let mut rest = words.get(leading..)?.iter();
    while let Some(word) = rest.next() {
        let word = (*word)?;
        let (token, takes_value) = options
            .iter()
            .find(|(token, _)| token.eq_ignore_ascii_case(word))?;
        given.push(*token);
        if *takes_value {
            rest.next()?;
        }
    }
    Some(given)
}

/// The options of a call that one grammar (`newer`) takes and another
/// (`older`, the same command on another release) does not know at all,
/// each with the index of its operand: `GET` in `SET key value NX GET` on
/// Redis 6.0. Decided only where [`options_given`] decides the call on
/// `newer`, both grammars start with the same number of required values,
/// and `older` takes nothing but options after them: no value of `older`
/// can take the word instead, so its server meets an option it does not
/// know.
pub(crate) fn options_unknown_to(
    older: &'static [Argument],
    newer: &'static [Argument],
    words: &[Option<&str>],
    spread_from: Option<usize>,
) -> Vec<(usize, &'static str)> {
    let leading = leading_values(newer);
    if leading != leading_values(older)
        || older
            .get(leading..)
            .unwrap_or_default()
            .iter()
            .any(takes_bare_value)
    {
        return Vec::new();
    }
    let Some(given) = options_given(newer, words, spread_from) else {
        return Vec::new();
    };
    let mut known = Vec::new();
    for argument in older {
        tokens(argument, &mut known);
    }
    given
        .into_iter()
        .filter(|token| !known.iter().any(|other| other.eq_ignore_ascii_case(token)))
        .filter_map(|token| {
            let operand = words
                .iter()
                .enumerate()
                .skip(leading)
                .find(|(_, word)| word.is_some_and(|word| word.eq_ignore_ascii_case(token)))?
                .0;
            Some((operand, token))
        })
        .collect()
}

/// The option words of a call that one grammar (`newer`) places as
/// options and another (`older`, the same command on another release) does
/// not know at all, where `older` then takes the word for a value and the
/// call cannot run: the value is a number the word is not, or the count
/// of trailing groups it leaves is no whole number of them. Each with the
/// index of its operand and the name of the value `older` takes it for:
/// `GT` in `ZADD key GT 1 m` on Redis 6.0, which reads the word as a
/// `score` and answers "ERR syntax error". Only what both matchers place
/// for certain is decided.
pub(crate) fn options_misread_by(
    older: &'static [Argument],
    newer: &'static [Argument],
    words: &[Option<&str>],
    spread_from: Option<usize>,
) -> Vec<(usize, &'static str, &'static str)> {
    let end = spread_from.unwrap_or(words.len()).min(words.len());
    let mut newer_reading = Matcher {
        words: words.get(..end).unwrap_or_default(),
        next: 0,
        placed: Vec::new(),
        tokens: Vec::new(),
        broken: None,
    };
    newer_reading.sequence(newer);
    let unknown: Vec<(usize, &'static str)> = newer_reading
        .tokens
        .into_iter()
        .filter(|(_, token)| !has_token(older, token))
        .collect();
    if unknown.is_empty() {
        return Vec::new();
    }
    // Broken by the misreading, not whichever grammar reads the call.
    let broken = broken_groups(older, words, spread_from).is_some()
        && broken_groups(newer, words, spread_from).is_none();
    let older_reading = place(older, words, spread_from);
    unknown
        .into_iter()
        .filter_map(|(operand, token)| {
            let taken_for = older_reading
                .iter()
                .find(|placed| placed.operand == operand)?
                .argument;
            let word = words.get(operand).copied().flatten()?;
            let not_a_number = match taken_for.kind {
                ArgumentKind::Double => word.parse::<f64>().is_err(),
                ArgumentKind::Integer | ArgumentKind::UnixTime => word.parse::<i64>().is_err(),
                _ => false,
            };
            (broken || not_a_number).then_some((operand, token, taken_for.name))
        })
        .collect()
}

/// Whether `grammar` has the word `token` anywhere (case-insensitive).
pub(crate) fn has_token(grammar: &'static [Argument], token: &str) -> bool {
    let mut found = Vec::new();
    for argument in grammar {
        tokens(argument, &mut found);
    }
    found.iter().any(|word| word.eq_ignore_ascii_case(token))
}

/// How many required plain values a grammar starts with (`key value` of
/// `SET`): what comes before its options.
fn leading_values(grammar: &[Argument]) -> usize {
    grammar
        .iter()
        .take_while(|argument| {
            !argument.optional
                && !argument.multiple
                && argument.token.is_none()
                && argument.kind.is_value()
        })
        .count()
}

/// Whether `argument` (or a member of an untokened choice or group) is a
/// value without a word before it, which any word can fill.
fn takes_bare_value(argument: &Argument) -> bool {
    match (argument.token, argument.kind) {
        (Some(_), _) => false,
        (None, ArgumentKind::OneOf(inner) | ArgumentKind::Block(inner)) => {
            inner.iter().any(takes_bare_value)
        }
        (None, kind) => kind.is_value(),
    }
}

/// Every word of `argument`'s grammar: its token and its members'.
fn tokens(argument: &'static Argument, found: &mut Vec<&'static str>) {
    if let Some(token) = argument.token {
        found.push(token);
    }
    if let ArgumentKind::OneOf(inner) | ArgumentKind::Block(inner) = argument.kind {
        for member in inner {
            tokens(member, found);
        }
    }
}

/// The words that start an option of `argument` (through alternatives and
/// untokened groups), each with whether one value follows it. A tokened
/// group or a repeated option is left out: a call that passes it is not
/// decided.
fn option_words(argument: &'static Argument, found: &mut Vec<(&'static str, bool)>) {
    match (argument.token, argument.kind) {
        (Some(_), ArgumentKind::OneOf(_) | ArgumentKind::Block(_)) => {}
        (Some(_), _) if argument.multiple => {}
        (Some(token), ArgumentKind::PureToken) => found.push((token, false)),
        (Some(token), _) => found.push((token, true)),
        (None, ArgumentKind::OneOf(inner) | ArgumentKind::Block(inner)) => {
            for member in inner {
                option_words(member, found);
            }
        }
        (None, _) => {}
    }
}

struct Matcher<'w> {
    words: &'w [Option<&'w str>],
    next: usize,
    placed: Vec<Placed>,
    /// The option words met, each with its operand.
    tokens: Vec<(usize, &'static str)>,
    /// Set when the trailing groups get a count of operands that is no
    /// whole number of groups.
    broken: Option<BrokenGroups>,
}

/// What matching one argument did.
enum Step {
    /// It matched (possibly nothing, for an optional argument left out).
    Matched,
    /// The operands cannot be placed further with certainty.
    Stop,
}

impl Matcher<'_> {
    fn sequence(&mut self, grammar: &'static [Argument]) -> Step {
        for (index, argument) in grammar.iter().enumerate() {
            let last = index + 1 == grammar.len();
            if let Step::Stop = self.argument(argument, last) {
                return Step::Stop;
            }
        }
        Step::Matched
    }

    /// The literal at the cursor, `None` for a value known only at run
    /// time, or the end of the operands.
    fn word(&self) -> Option<Option<&str>> {
        self.words.get(self.next).copied()
    }

    fn argument(&mut self, argument: &'static Argument, last: bool) -> Step {
        if let Some(group) = argument.plain_group().filter(|_| last) {
            // Groups of plain values at the end take every remaining
            // operand, a whole number of groups of them.
            let passed = self.words.len() - self.next.min(self.words.len());
            if !passed.is_multiple_of(group.len()) {
                self.broken = Some(BrokenGroups {
                    group,
                    from: self.next,
                    passed,
                });
            }
            while self.next < self.words.len() {
                for member in group {
                    if self.next < self.words.len() {
                        self.fill(member);
                    }
                }
            }
            return Step::Matched;
        }
        if argument.multiple {
            // Repeated values are placed only at the end of the grammar,
            // where they take every remaining operand.
            if !last || argument.token.is_some() || !argument.kind.is_value() {
                return Step::Stop;
            }
            while self.next < self.words.len() {
                self.fill(argument);
            }
            return Step::Matched;
        }
        if argument.optional {
            match self.starts(argument) {
                Some(true) => self.one(argument),
                Some(false) => Step::Matched,
                None => Step::Stop,
            }
        } else {
            self.one(argument)
        }
    }

    /// Whether the operands at the cursor begin `argument`: `None` when
    /// that is not decided by a literal.
    fn starts(&self, argument: &'static Argument) -> Option<bool> {
        let Some(word) = self.word() else {
            return Some(false);
        };
        let token = argument.token.or(match argument.kind {
            ArgumentKind::PureToken => Some(argument.name),
            _ => None,
        });
        if let Some(token) = token {
            return word.map(|word| word.eq_ignore_ascii_case(token));
        }
        match argument.kind {
            ArgumentKind::OneOf(alternatives) => {
                let mut undecided = false;
                for alternative in alternatives {
                    match self.starts(alternative) {
                        Some(true) => return Some(true),
                        Some(false) => {}
                        None => undecided = true,
                    }
                }
                (!undecided).then_some(false)
            }
            ArgumentKind::Block(inner) => inner.first().and_then(|first| self.starts(first)),
            // An optional plain value: whether it is there depends on what
            // follows, which literals rarely decide.
            _ => None,
        }
    }

    fn one(&mut self, argument: &'static Argument) -> Step {
        if let Some(token) = argument.token {
            match self.word() {
                Some(Some(word)) if word.eq_ignore_ascii_case(token) => {
                    self.tokens.push((self.next, token));
                    self.next += 1;
                }
                _ => return Step::Stop,
            }
            if argument.kind == ArgumentKind::PureToken {
                return Step::Matched;
            }
        }
        match argument.kind {
            // The specifications give every pure token its word.
            ArgumentKind::PureToken => Step::Stop,
            ArgumentKind::OneOf(alternatives) => {
                let chosen = alternatives
                    .iter()
                    .find(|alternative| self.starts(alternative) == Some(true));
                match chosen {
                    Some(alternative) => self.one(alternative),
                    None => Step::Stop,
                }
            }
            ArgumentKind::Block(inner) => self.sequence(inner),
            _ if self.next < self.words.len() => {
                self.fill(argument);
                Step::Matched
            }
            _ => Step::Stop,
        }
    }

    fn fill(&mut self, argument: &'static Argument) {
        self.placed.push(Placed {
            operand: self.next,
            argument,
        });
        self.next += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::commands::shapes::shape;
    use crate::model::target::ReleaseSet;

    /// The names of the arguments `words` fill, in order, for `command` on
    /// Redis 7.2.
    fn names(
        command: &str,
        words: &[Option<&str>],
        spread_from: Option<usize>,
    ) -> Vec<(usize, &'static str)> {
        let redis_7_2 = ReleaseSet::only(1);
        let Some(form) = shape(command).and_then(|shape| shape.form_for(redis_7_2)) else {
            panic!("{command}: no form on Redis 7.2")
        };
        place(form.arguments, words, spread_from)
            .into_iter()
            .map(|placed| (placed.operand, placed.argument.name))
            .collect()
    }

    /// What [`broken_groups`] finds for `command` on Redis 7.2: the
    /// group's names, where it starts and how many values it gets.
    fn broken(command: &str, words: &[Option<&str>]) -> Option<(Vec<&'static str>, usize, usize)> {
        let redis_7_2 = ReleaseSet::only(1);
        let form = shape(command).and_then(|shape| shape.form_for(redis_7_2))?;
        broken_groups(form.arguments, words, None).map(|broken| {
            (
                broken.group.iter().map(|member| member.name).collect(),
                broken.from,
                broken.passed,
            )
        })
    }

    #[test]
    fn trailing_groups_take_a_whole_number_of_groups() {
        assert_eq!(
            broken("hset", &[None, Some("a"), None, Some("b")]),
            Some((vec!["field", "value"], 1, 3))
        );
        assert_eq!(broken("hset", &[None, Some("a"), None]), None);
        assert_eq!(
            broken("mset", &[None, None, None]),
            Some((vec!["key", "value"], 0, 3))
        );
        // Literal options before the groups are placed first.
        assert_eq!(
            broken("zadd", &[None, Some("NX"), Some("1"), Some("a"), Some("2")]),
            Some((vec!["score", "member"], 2, 3))
        );
        // A value where an option may stand leaves the count undecided.
        assert_eq!(broken("zadd", &[None, None, Some("a"), Some("2")]), None);
        let form = shape("hset")
            .and_then(|shape| shape.form_for(ReleaseSet::only(1)))
            .expect("hset");
        assert_eq!(broken_groups(form.arguments, &[None, None], Some(1)), None);
        assert_eq!(
            names("hset", &[None, Some("a"), None], None),
            [(0, "key"), (1, "field"), (2, "value")]
        );
    }

    #[test]
    fn fixed_arguments_are_placed() {
        assert_eq!(
            names("expire", &[None, None], None),
            [(0, "key"), (1, "seconds")]
        );
        assert_eq!(
            names("hincrby", &[None, Some("f"), None], None),
            [(0, "key"), (1, "field"), (2, "increment")]
        );
    }

    #[test]
    fn literal_words_decide_optional_parts() {
        // SET key value EX seconds: the word decides.
        assert_eq!(
            names("set", &[None, None, Some("EX"), None], None),
            [(0, "key"), (1, "value"), (3, "seconds")]
        );
        assert_eq!(
            names("set", &[None, None, Some("px"), None], None),
            [(0, "key"), (1, "value"), (3, "milliseconds")]
        );
        // A value where a word may stand: placing stops.
        assert_eq!(
            names("set", &[None, None, None, None], None),
            [(0, "key"), (1, "value")]
        );
        // ZRANGEBYSCORE key min max LIMIT offset count.
        assert_eq!(
            names(
                "zrangebyscore",
                &[None, None, None, Some("LIMIT"), None, None],
                None
            ),
            [
                (0, "key"),
                (1, "min"),
                (2, "max"),
                (4, "offset"),
                (5, "count")
            ]
        );
    }

    #[test]
    fn repetitions_are_placed_only_at_the_end() {
        assert_eq!(
            names("srem", &[None, None, None], None),
            [(0, "key"), (1, "member"), (2, "member")]
        );
        assert_eq!(names("srem", &[None, None, None], Some(1)), [(0, "key")]);
        // HSET key field value [field value …]: a repeated group of plain
        // values at the end is placed value by value.
        assert_eq!(
            names("hset", &[None, None, None], None),
            [(0, "key"), (1, "field"), (2, "value")]
        );
    }
}
