//! The value findings on small scripts: each class fires where the bug is
//! proven, stays silent where it is not, and yields to its opt-outs.

use crate::Code;
use crate::{Severity, Signature, analyze};

/// `(finding, severity, line)` of every value finding of `source`, checked
/// with 2 keys and 3 arguments, none of them required to be read.
fn findings(source: &str) -> Vec<(&'static str, Severity, usize)> {
    let signature = Signature {
        keys: 2,
        args: 3,
        allow_unused: true,
        ..Signature::default()
    };
    findings_with(source, &signature)
}

/// `(finding, severity, line)` of every value finding of `source`, checked
/// with `signature`.
fn findings_with(source: &str, signature: &Signature) -> Vec<(&'static str, Severity, usize)> {
    analyze(source, signature)
        .diagnostics
        .iter()
        .filter_map(|diagnostic| {
            diagnostic
                .finding()
                .map(|name| (name, diagnostic.severity, diagnostic.line))
        })
        .collect()
}

fn names(source: &str) -> Vec<&'static str> {
    findings(source)
        .into_iter()
        .map(|(name, _, _)| name)
        .collect()
}

/// `finding` is the one finding of `script`, a warning at `line`.
#[track_caller]
fn warned(finding: &str, script: &str, line: usize) {
    assert_eq!(findings(script), [(finding, WARNING, line)], "{script}");
}

#[track_caller]
fn silent(source: &str) {
    assert_eq!(findings(source), [], "{source}");
}

const ERROR: Severity = Severity::Error;
const WARNING: Severity = Severity::Warning;

#[test]
fn ordering_comparisons_between_strings_and_numbers_raise() {
    assert_eq!(
        findings("if ARGV[2] >= 10 then return 1 end"),
        [("mismatched_comparison", ERROR, 1)]
    );
    assert_eq!(
        findings("local limit = 5\nif ARGV[1] < limit then return 1 end"),
        [("mismatched_comparison", ERROR, 2)]
    );
    assert_eq!(
        findings("if true > 1 then return 1 end"),
        [("mismatched_comparison", ERROR, 1)]
    );
    // Converted first, both strings, both numbers, or unknown: fine.
    silent("if tonumber(ARGV[2]) >= 10 then return 1 end");
    silent("if ARGV[1] < ARGV[2] then return 1 end");
    silent("local n = #ARGV if n > 2 then return 1 end");
    silent("local function f(x) return x < 3 end return f(1)");
}

#[test]
fn equality_the_types_decide() {
    let found = findings("local n = #KEYS\nif n == '2' then return 1 end");
    assert_eq!(found, [("constant_equality", ERROR, 2)]);
    assert_eq!(
        names("if ARGV[1] == 2 then return 1 end\nif ARGV[1] ~= 2 then return 2 end"),
        ["constant_equality", "constant_equality"]
    );
    // A value that is never nil against nil.
    assert_eq!(
        names("local v = ARGV[1] .. 'x'\nif v == nil then return 1 end"),
        ["constant_equality"]
    );
    // Same types, or nil possible: fine.
    silent("if ARGV[1] == '2' then return 1 end");
    silent("local n = tonumber(ARGV[1]) if n == nil then return 1 end");
    silent("local v if ARGV[1] == 'a' then v = 1 end if v == nil then return 2 end");
}

#[test]
fn a_function_that_returns_nil_on_one_path_gives_nil_to_its_calls() {
    // The other paths return what its parameters are: nil stays the known
    // reason, whatever they hold.
    let capacity = "local capacity = function (limit, used)\n  if limit ~= nil then\n    return limit - used\n  end\n  return nil\nend\n";
    assert_eq!(
        findings(&format!(
            "{capacity}local left = capacity(tonumber(ARGV[1]), 0)\nredis.call('PUBLISH', KEYS[1], 'capacity:' .. left)"
        )),
        [("nil_value", WARNING, 8)]
    );
    // Tested, defaulted, or no nil path: nothing to say.
    silent(&format!(
        "{capacity}local left = capacity(tonumber(ARGV[1]), 0)\nif left ~= nil then redis.call('PUBLISH', KEYS[1], 'capacity:' .. left) end"
    ));
    silent(&format!(
        "{capacity}local left = capacity(tonumber(ARGV[1]), 0)\nif left ~= nil and left > 0 then return left end\nreturn 0"
    ));
    silent(&format!(
        "{capacity}redis.call('PUBLISH', KEYS[1], 'capacity:' .. (capacity(tonumber(ARGV[1]), 0) or ''))"
    ));
    silent(
        "local twice = function (n) return n * 2 end\nreturn 'x' .. twice(tonumber(ARGV[1]) or 0)",
    );
}

#[test]
fn arguments_compared_with_text_their_rust_type_never_sends() {
    use crate::{ArgType, SentAs};
    let typed = |source: &str, types: &[&str]| {
        let signature = Signature {
            keys: 1,
            args: types.len(),
            allow_unused: true,
            arg_names: (1..=types.len()).map(|n| format!("p{n}")).collect(),
            arg_types: types
                .iter()
                .map(|rust| ArgType {
                    rust: (*rust).to_owned(),
                    sent: SentAs::of_rust_type(rust),
                })
                .collect(),
            ..Signature::default()
        };
        findings_with(source, &signature)
    };
    let never = [("constant_equality", ERROR, 2)];
    // A `bool` sends "1" or "0".
    assert_eq!(
        typed(
            "local enabled = ARGV[1]\nif enabled == 'true' then return 1 end\nreturn 0",
            &["bool"]
        ),
        never
    );
    assert_eq!(
        typed(
            "local _ = 0\nif ARGV[1] ~= 'false' then return 1 end\nreturn 0",
            &["bool"]
        ),
        never
    );
    // An integer sends its digits; a float always a `.` or an exponent.
    assert_eq!(
        typed(
            "local _ = 0\nif ARGV[1] == 'all' then return 1 end\nreturn 0",
            &["u64"]
        ),
        never
    );
    assert_eq!(
        typed(
            "local _ = 0\nif ARGV[1] == '-1' then return 1 end\nreturn 0",
            &["u32"]
        ),
        never
    );
    assert_eq!(
        typed(
            "local _ = 0\nif ARGV[1] == '1' then return 1 end\nreturn 0",
            &["f64"]
        ),
        never
    );
    // What the type does send, text of any kind, and unknown types.
    for (source, types) in [
        (
            "if ARGV[1] == '1' then return 1 end return 0",
            &["bool"][..],
        ),
        ("if ARGV[1] == '-1' then return 1 end return 0", &["i64"]),
        ("if ARGV[1] == '1.5' then return 1 end return 0", &["f64"]),
        ("if ARGV[1] == 'true' then return 1 end return 0", &["&str"]),
        (
            "if ARGV[1] == 'true' then return 1 end return 0",
            &["MyFlag"],
        ),
        (
            "if ARGV[2] == 'true' then return 1 end return 0",
            &["bool", "String"],
        ),
    ] {
        assert_eq!(typed(source, types), [], "{source} with {types:?}");
    }
    // Opted out.
    assert_eq!(
        typed(
            "if ARGV[1] == 'true' then return 1 end -- redis-script: allow(constant_equality)\nreturn 0",
            &["bool"]
        ),
        []
    );
}

#[test]
fn replies_of_one_element_per_argument_have_no_nil_within_them() {
    // `HMGET` answers one element per field: false for a missing one, never
    // nil; a test for nil holds for it too.
    let found = findings(
        "local fields = redis.call('HMGET', KEYS[1], 'weight', 'owner')\nif fields[2] ~= nil then return fields[2] end\nreturn ''",
    );
    assert_eq!(found, [("constant_equality", ERROR, 2)]);
    assert_eq!(
        names(
            "local values = redis.call('MGET', KEYS[1], KEYS[2])\nif values[1] == nil then return 0 end\nreturn 1"
        ),
        ["constant_equality"]
    );
    // Past the end, at an index the script computes, or after an
    // `unpack(…)` of fields: nil is possible.
    silent(
        "local fields = redis.call('HMGET', KEYS[1], 'a', 'b')\nif fields[3] == nil then return 0 end\nreturn 1",
    );
    silent(
        "local fields = redis.call('HMGET', KEYS[1], 'a', 'b')\nlocal i = tonumber(ARGV[1])\nif fields[i] == nil then return 0 end\nreturn 1",
    );
    silent(
        "local names = {'a', 'b'}\nlocal fields = redis.call('HMGET', KEYS[1], unpack(names))\nif fields[1] == nil then return 0 end\nreturn 1",
    );
    // A missing field's false is no finding of its own: fields are read
    // that exist by design.
    silent(
        "local fields = redis.call('HMGET', KEYS[1], 'limit', 'used')\nreturn tonumber(fields[1]) - tonumber(fields[2])",
    );
}

#[test]
fn a_number_tested_for_truth_is_always_true() {
    assert_eq!(
        findings("if redis.call('EXISTS', KEYS[1]) then return 1 end"),
        [("always_true", ERROR, 1)]
    );
    assert_eq!(
        findings("local n = redis.call('INCR', KEYS[1]) - 1\nif n then return 1 end\nreturn 0"),
        [("always_true", ERROR, 2)]
    );
    // Since a number is never false, this loop never ends either.
    assert_eq!(
        names("local n = #ARGV\nwhile n do n = n - 1 end"),
        ["endless_loop", "always_true"]
    );
    assert_eq!(names("return not #ARGV"), ["always_true"]);
    assert_eq!(
        names("local ok = #ARGV and 'yes' or 'no' return ok"),
        ["always_true"]
    );
    // Literal loops are written on purpose; `or` defaults are no test.
    silent("while true do if ARGV[1] then break end end");
    silent("while 1 do break end");
    silent("local n = #ARGV or 0 return n");
    silent("local n = tonumber(ARGV[1]) if not n then return 0 end return n");
}

/// `n and n < 1` guards a use of `n` against nil: for a number the guard
/// is redundant, never wrong, since the right side decides (a fixed
/// version of a shipped script does this after `HLEN`). Where the right
/// side uses something else, the author meant the number's truth.
#[test]
fn a_nil_guard_before_a_use_of_the_same_value_is_no_finding() {
    silent(
        "local n = redis.call('HLEN', KEYS[1])
if n and n < 1 then return 0 end
return n",
    );
    silent(
        "local n = redis.call('LLEN', KEYS[1])
while n and n > 0 do n = n - 1 end",
    );
    silent(
        "local n = redis.call('SCARD', KEYS[1])
return n and tostring(n)",
    );
    assert_eq!(
        findings(
            "local n = redis.call('HLEN', KEYS[1])
if n and ARGV[1] == 'x' then return 0 end
return n"
        ),
        [("always_true", ERROR, 2)]
    );
}

/// A default given to a number that cannot be nil (redis-py's lock
/// extension, `if not expiration then expiration = 0 end` after `PTTL`)
/// is harmless: a warning. A branch that does more, or an `else`, keeps
/// the error, since the author meant it to depend on the value.
#[test]
fn a_default_never_needed_is_a_warning() {
    let extend = "local expiration = redis.call('PTTL', KEYS[1])\nif not expiration then\n  expiration = 0\nend\nreturn expiration";
    assert_eq!(findings(extend), [("always_true", WARNING, 2)]);
    assert_eq!(
        findings(
            "local ttl = redis.call('PTTL', KEYS[1])\nif not ttl then\n  redis.call('DEL', KEYS[1])\nend\nreturn ttl"
        ),
        [("always_true", ERROR, 2)]
    );
    assert_eq!(
        findings(
            "local ttl = redis.call('PTTL', KEYS[1])\nif not ttl then ttl = 0 else ttl = 1 end\nreturn ttl"
        ),
        [("always_true", ERROR, 2)]
    );
}

#[test]
fn arguments_redis_refuses() {
    assert_eq!(
        findings("redis.call('HSET', KEYS[1], 'seen', true)"),
        [("refused_argument", ERROR, 1)]
    );
    assert_eq!(
        names("redis.call('SET', KEYS[1], {})\nredis.call('SET', KEYS[2], nil)"),
        ["refused_argument", "refused_argument"]
    );
    silent("redis.call('SET', KEYS[1], ARGV[1])\nredis.call('SET', KEYS[2], 5)");
    silent("redis.call('SET', KEYS[1], tostring(#ARGV > 1))");
}

#[test]
fn unpack_of_a_table_that_may_be_empty() {
    let script = "local ids = {}\nfor i = 1, #ARGV do\n  if ARGV[i] ~= '' then ids[#ids + 1] = ARGV[i] end\nend\nredis.call('SREM', KEYS[1], unpack(ids))";
    assert_eq!(findings(script), [("empty_unpack", WARNING, 5)]);
    // Guarded, filled unconditionally, or a fixed constructor: fine.
    silent(&script.replace(
        "redis.call('SREM', KEYS[1], unpack(ids))",
        "if #ids > 0 then redis.call('SREM', KEYS[1], unpack(ids)) end",
    ));
    silent("local ids = {}\nids[1] = ARGV[1]\nredis.call('SREM', KEYS[1], unpack(ids))");
    silent("local ids = {ARGV[1], ARGV[2]}\nredis.call('SREM', KEYS[1], unpack(ids))");
    // A command that needs nothing from the spread: fine.
    silent("local ids = {}\nredis.call('DEL', KEYS[1], unpack(ids))");
    // The length kept in a local guards as well, until the local changes.
    let members = "local ids = redis.call('LRANGE', KEYS[1], 0, 99)\n";
    silent(&format!(
        "{members}local n = #ids\nif n > 0 then redis.call('RPUSH', KEYS[2], unpack(ids)) end"
    ));
    silent(&format!(
        "{members}local n = table.getn(ids)\nif n == 0 then return 0 end\nredis.call('RPUSH', KEYS[2], unpack(ids))"
    ));
    silent(&format!(
        "{members}local n = 0\nn = #ids\nif n > 0 then redis.call('RPUSH', KEYS[2], unpack(ids)) end"
    ));
    silent(&format!(
        "{members}if next(ids) ~= nil then redis.call('RPUSH', KEYS[2], unpack(ids)) end"
    ));
    silent(&format!(
        "{members}if next(ids) then redis.call('RPUSH', KEYS[2], unpack(ids)) end"
    ));
    assert_eq!(
        findings(&format!(
            "{members}local n = #ids\nn = 5\nif n > 0 then redis.call('RPUSH', KEYS[2], unpack(ids)) end"
        )),
        [("empty_unpack", WARNING, 4)]
    );
    // A range the script computes passes what the range holds, whatever
    // the table: the loop's condition keeps it non-empty here.
    silent(&format!(
        "{members}local done = 0
while done < #ids do
  redis.call('SADD', KEYS[2], unpack(ids, done + 1, math.min(done + 100, #ids)))
  done = done + 100
end"
    ));
}

#[test]
fn nil_values_in_operations() {
    assert_eq!(findings("local x\nreturn x + 1"), [("nil_value", ERROR, 2)]);
    assert_eq!(
        findings("local x = nil\nreturn 'a' .. x"),
        [("nil_value", ERROR, 2)]
    );
    assert_eq!(
        findings("local t\nreturn t.field"),
        [("nil_value", ERROR, 2)]
    );
    // Where it may be nil for reasons the analysis cannot name, nothing.
    silent("local n = tonumber(ARGV[1])\nreturn n + 1");
    silent("local x if ARGV[1] == 'a' then x = 1 end return x + 1");
    // Narrowed by a test.
    silent("local x\nif x then return x + 1 end return 0");
}

#[test]
fn a_value_compared_with_false_is_false_where_that_test_does_not_guard_it() {
    let fields =
        "local fields = redis.call('HMGET', KEYS[1], 'opts', 'parent')\nlocal parent = fields[2]\n";
    // The first branch tests it; the second uses it untested.
    assert_eq!(
        findings(&format!(
            "{fields}if ARGV[1] == 'a' and parent ~= false then\n  return cjson.decode(parent).id\nelseif ARGV[1] == 'b' then\n  return cjson.decode(parent).id\nend\nreturn ''"
        )),
        [("nil_value", WARNING, 6)]
    );
    // Guarded on every path, or never compared with false: nothing.
    silent(&format!(
        "{fields}if parent ~= false then\n  return cjson.decode(parent).id\nend\nreturn ''"
    ));
    silent(&format!(
        "{fields}if parent == false then return '' end\nreturn cjson.decode(parent).id"
    ));
    silent(&format!("{fields}return cjson.decode(parent).id"));
}

#[test]
fn an_element_compared_with_nil_may_still_be_false() {
    // `HMGET` answers false for a missing field, which `~= nil` passes.
    let weights = "local ids = cjson.decode(ARGV[1])\nlocal weights = redis.call('HMGET', KEYS[1], unpack(ids))\nlocal total = 0\n";
    assert_eq!(
        findings(&format!(
            "{weights}for i = 1, #ids do\n  if weights[i] ~= nil then\n    total = total + tonumber(weights[i])\n  end\nend\nreturn total"
        )),
        [("nil_value", WARNING, 6)]
    );
    // Tested for truth, defaulted, or never compared with nil: nothing.
    silent(&format!(
        "{weights}for i = 1, #ids do\n  if weights[i] then\n    total = total + tonumber(weights[i])\n  end\nend\nreturn total"
    ));
    silent(&format!(
        "{weights}for i = 1, #ids do\n  if weights[i] ~= nil then\n    total = total + (tonumber(weights[i]) or 0)\n  end\nend\nreturn total"
    ));
    silent(&format!(
        "{weights}for i = 1, #ids do\n  total = total + tonumber(weights[i])\nend\nreturn total"
    ));
}

#[test]
fn replies_that_are_or_hold_tables_with_metatables() {
    let mt = "local mt = {__index = function() error('boom') end}\n";
    for (reply, line) in [
        ("return setmetatable({err = 'BOOM'}, mt)", 2),
        ("local t = {1, 2}\nsetmetatable(t, mt)\nreturn t", 4),
        ("return {1, setmetatable({err = 'BOOM'}, mt)}", 2),
    ] {
        assert_eq!(
            findings(&format!("{mt}{reply}")),
            [("returned_metatable", WARNING, line)],
            "{reply}"
        );
    }
    // A metatable on a table that is not returned, or a plain copy.
    silent(&format!("{mt}local t = setmetatable({{}}, mt)\nreturn 1"));
    silent(&format!(
        "{mt}local t = setmetatable({{}}, mt)\nreturn {{rawget(t, 1) or 0}}"
    ));
    silent(&format!(
        "{mt}return setmetatable({{err = 'BOOM'}}, mt) -- redis-script: allow(returned_metatable)"
    ));
}

#[test]
fn nil_values_into_library_functions_that_take_strings_or_numbers() {
    // `cjson.decode(false)` raises "bad argument #1 to 'decode'".
    let found = findings(
        "local raw = redis.call('GET', KEYS[1])\nlocal job = cjson.decode(raw)\nreturn job.id",
    );
    assert_eq!(found, [("nil_value", WARNING, 2)]);
    assert_eq!(
        findings("local raw\nreturn string.len(raw)"),
        [("nil_value", ERROR, 2)]
    );
    assert_eq!(
        names("local n = tonumber(redis.call('GET', KEYS[1]))\nreturn math.floor(n)"),
        ["nil_value"]
    );
    // Guarded, defaulted, or a function that takes nil (`tostring`).
    silent(
        "local raw = redis.call('GET', KEYS[1])\nif raw then return cjson.decode(raw).id end\nreturn ''",
    );
    silent(
        "local raw = redis.call('GET', KEYS[1]) or '{}'\nreturn cjson.encode(cjson.decode(raw))",
    );
    silent("return tostring(redis.call('GET', KEYS[1]))");
}

#[test]
fn replies_cut_by_nils_and_truncated_fractions() {
    assert_eq!(findings("return {1, nil, 3}"), [("reply_hole", ERROR, 1)]);
    silent("return {1, 2, nil}");
    assert_eq!(
        findings("local used = #KEYS\nlocal limit = #ARGV\nreturn used / limit"),
        [("fractional_reply", WARNING, 3)]
    );
    assert_eq!(findings("return 0.5"), [("fractional_reply", ERROR, 1)]);
    assert_eq!(
        findings("return {'OK', 1.5}"),
        [("fractional_reply", ERROR, 1)]
    );
    // Rounded, integral by construction, or read (not computed) numbers.
    silent("return math.floor(#KEYS / 2)");
    silent("return #KEYS * 2 + 1");
    silent("return tonumber(ARGV[1])");
}

#[test]
fn values_follow_branches_loops_and_functions() {
    // Joined after a branch: either.
    silent("local v = 1\nif ARGV[1] == 'x' then v = 'one' end\nif v > 0 then return 1 end");
    // Assigned on every path: the new value.
    assert_eq!(
        names(
            "local v = 1\nif ARGV[1] == 'x' then v = 'a' else v = 'b' end\nif v > 0 then return 1 end"
        ),
        ["mismatched_comparison"]
    );
    // A loop's body sees the values of every iteration.
    silent(
        "local v = 'a'\nfor i = 1, 3 do\n  if i > 1 then v = v .. 'x' else v = 0 end\nend\nreturn 1",
    );
    // A local function's summary is what its calls return.
    assert_eq!(
        names("local function count() return #KEYS end\nif count() then return 1 end"),
        ["always_true"]
    );
    // A closure cannot know when it runs: it reads what may have changed.
    silent("local v = 1\nlocal function f() return v .. 'x' end\nv = nil\nreturn f()");
}

#[test]
fn findings_yield_to_their_opt_outs() {
    let script = "if #KEYS then return 1 end";
    assert_eq!(names(script), ["always_true"]);
    silent(&format!("{script} -- redis-script: allow(always_true)"));
    silent(&format!("-- redis-script: allow(always_true)\n{script}"));
    silent(&format!(
        "-- header\n-- redis-script: allow(always_true, nil_value)\nlocal a = 1\n{script}"
    ));
    let signature = Signature {
        allow: vec!["always_true".to_owned()],
        ..Signature::default()
    };
    assert!(
        analyze(script, &signature)
            .diagnostics
            .iter()
            .all(|diagnostic| diagnostic.finding().is_none())
    );
    // Another name silences nothing.
    assert_eq!(
        names(&format!("{script} -- redis-script: allow(nil_value)")),
        ["always_true"]
    );
}

#[test]
fn every_message_names_its_finding_and_its_opt_out() {
    for source in [
        "if ARGV[2] >= 10 then return 1 end",
        "if ARGV[1] == 2 then return 1 end",
        "if #KEYS then return 1 end",
        "redis.call('SET', KEYS[1], true)",
        "local x\nreturn x + 1",
        "return {1, nil, 3}",
        "return 0.5",
    ] {
        let analysis = analyze(source, &Signature::default());
        let diagnostic = analysis
            .diagnostics
            .iter()
            .find(|diagnostic| diagnostic.finding().is_some())
            .unwrap_or_else(|| panic!("no finding for {source}"));
        let name = diagnostic.finding().unwrap_or_default();
        assert!(
            diagnostic
                .notes
                .iter()
                .any(|note| note.contains(&format!("-- redis-script: allow({name})"))),
            "{diagnostic:?}"
        );
    }
}

#[test]
fn command_replies_are_typed_from_the_server_model() {
    // HGET answers false for a missing field, never nil.
    assert_eq!(
        findings("if redis.call('HGET', KEYS[1], 'owner') == nil then return 1 end"),
        [("constant_equality", ERROR, 1)]
    );
    // SISMEMBER answers 0 or 1: both true.
    assert_eq!(
        findings("if redis.call('SISMEMBER', KEYS[1], ARGV[1]) then return 1 end"),
        [("always_true", ERROR, 1)]
    );
    // A string reply never equals a number.
    assert_eq!(
        findings("if redis.call('HGET', KEYS[1], 'state') == 2 then return 1 end"),
        [("constant_equality", ERROR, 1)]
    );
    assert_eq!(
        findings("if tonumber(ARGV[1]) > redis.call('HGET', KEYS[1], 'max') then return 1 end"),
        [("mismatched_comparison", ERROR, 1)]
    );
    // A missing key makes GET false.
    assert_eq!(
        findings("local n = redis.call('GET', KEYS[1]) + 1\nreturn n"),
        [("nil_value", WARNING, 1)]
    );
    assert_eq!(
        findings("return {'OK', tonumber(redis.call('GET', KEYS[2])), 5}"),
        [("reply_hole", WARNING, 1)]
    );
    // The right tests of the same replies.
    silent("if redis.call('HGET', KEYS[1], 'owner') == false then return 1 end");
    silent("if not redis.call('HGET', KEYS[1], 'owner') then return 1 end");
    silent("if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end");
    silent("if redis.call('HGET', KEYS[1], 'state') == '2' then return 1 end");
    silent("local n = tonumber(redis.call('GET', KEYS[1]) or '0') + 1\nreturn n");
    silent("local n = redis.call('INCR', KEYS[1])\nif n > 10 then return 0 end\nreturn n");
    silent("local v = redis.call('GET', KEYS[1])\nif v then return v .. 'x' end\nreturn 'none'");
    // Commands the model has no reply type for stay unknown.
    silent("local r = redis.call('EVALSHA', ARGV[1], 0)\nif r == nil then return 1 end\nreturn 2");
}

#[test]
fn pcall_may_return_an_error_table_and_resp3_replies_differ() {
    // pcall hands back {err = …} for a refused command: never nil either.
    assert_eq!(
        findings("if redis.pcall('GET', KEYS[1]) == nil then return 1 end"),
        [("constant_equality", ERROR, 1)]
    );
    // After setresp(3), a missing key is nil: both tests are meaningful.
    silent("redis.setresp(3)\nif redis.call('GET', KEYS[1]) == nil then return 1 end\nreturn 2");
    silent("redis.setresp(3)\nif redis.call('GET', KEYS[1]) == false then return 1 end\nreturn 2");
    // setresp(2) changes nothing.
    assert_eq!(
        findings("redis.setresp(2)\nif redis.call('GET', KEYS[1]) == nil then return 1 end"),
        [("constant_equality", ERROR, 2)]
    );
}

#[test]
fn flat_maps_have_even_lengths_and_guards_make_tables_non_empty() {
    silent("local h = redis.call('HGETALL', KEYS[1])\nreturn #h / 2");
    assert_eq!(
        findings("local h = redis.call('LRANGE', KEYS[1], 0, -1)\nreturn #h / 2"),
        [("fractional_reply", WARNING, 2)]
    );
    let guarded = |guard: &str| {
        format!(
            "local fields = {{}}\nfor f in string.gmatch(ARGV[1], '[^,]+') do fields[#fields + 1] = f end\n{guard}\nreturn redis.call('HMGET', KEYS[1], unpack(fields))"
        )
    };
    for guard in [
        "if #fields == 0 then return {} end",
        "if 0 == #fields then return {} end",
        "if not (#fields > 0) then return {} end",
        "if #fields < 1 then return {} end",
    ] {
        silent(&guarded(guard));
    }
    assert_eq!(
        names(&guarded("if #fields == 1 then return {} end")),
        ["empty_unpack"]
    );
}

#[test]
fn fractions_into_integer_arguments() {
    assert_eq!(
        findings("local ttl = tonumber(ARGV[1])\nredis.call('EXPIRE', KEYS[1], ttl / 2)\nreturn 1"),
        [("fractional_argument", WARNING, 2)]
    );
    assert_eq!(
        findings("redis.call('SET', KEYS[1], ARGV[1], 'EX', 1.5)\nreturn 1"),
        [("fractional_argument", ERROR, 1)]
    );
    assert_eq!(
        findings("local n = tonumber(ARGV[1])\nredis.call('LTRIM', KEYS[1], 0, n / 2)\nreturn 1"),
        [("fractional_argument", WARNING, 2)]
    );
    // Rounded, a double argument, a value read (not divided), or a string.
    silent(
        "local ttl = tonumber(ARGV[1])\nredis.call('EXPIRE', KEYS[1], math.floor(ttl / 2))\nreturn 1",
    );
    silent("local n = tonumber(ARGV[1])\nredis.call('INCRBYFLOAT', KEYS[1], n / 2)\nreturn 1");
    silent("redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) / 3, ARGV[2])\nreturn 1");
    silent("redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1]))\nreturn 1");
    silent("redis.call('SET', KEYS[1], tonumber(ARGV[1]) / 2)\nreturn 1");
    // An odd index of a list of pairs, one past it halved: whole.
    silent(
        "local r = redis.call('ZRANGE', KEYS[1], 0, 99, 'WITHSCORES')\nfor i = 1, #r, 2 do\n  redis.call('ZREMRANGEBYRANK', KEYS[1], (i + 1) / 2 - 1, (i + 1) / 2 - 1)\nend\nreturn 1",
    );
    assert_eq!(
        findings("for i = 1, 9, 2 do redis.call('EXPIRE', KEYS[1], i / 2) end\nreturn 1"),
        [("fractional_argument", WARNING, 1)]
    );
}

#[test]
fn a_length_tested_for_truth_is_a_warning() {
    assert_eq!(
        findings(
            "local r = redis.call('ZRANGE', KEYS[1], 0, 0)\nif #r then return r[1] end\nreturn 1"
        ),
        [("always_true", WARNING, 2)]
    );
}

/// A local that one path leaves nil, returned before another element,
/// is a reply hole; other uses of it say nothing, since the path that
/// leaves it nil is often ruled out by a test of another value.
#[test]
fn a_local_set_on_one_branch_only_is_a_reply_hole() {
    let hole = "local used = tonumber(redis.call('GET', KEYS[1]) or '0')\nlocal r = nil\nif used > 0 then\n  r = redis.call('PTTL', KEYS[1])\nend\nreturn {used, r, tonumber(ARGV[1])}";
    assert_eq!(findings(hole), [("reply_hole", WARNING, 6)]);
    silent("local r\nif ARGV[1] == 'x' then r = 1 end\nreturn {1, r}");
    silent(
        "local found\nlocal index\nfor i = 1, 3 do if ARGV[i] == 'x' then found = true index = i end end\nif not found then return 0 end\nreturn redis.call('ZREMRANGEBYRANK', KEYS[1], index, index)",
    );
}

#[test]
fn a_table_of_nothing_but_nils_loses_nothing() {
    silent("return {nil, nil}");
    assert_eq!(findings("return {nil, 1}"), [("reply_hole", ERROR, 1)]);
}

#[test]
fn a_test_repeating_an_earlier_guard_is_redundant_not_a_bug() {
    // Seen in production scripts: the second test only repeats the first.
    silent(
        "local id = redis.call('HGET', KEYS[1], 'id')\nif not id or id == false then return 0 end",
    );
    silent(
        "local ms = tonumber(ARGV[1])\nif not ms then ms = redis.call('TIME')[1] * 1000 end\nif ms and ms > 5 then return 1 end",
    );
    // The narrowing of one branch does not hide the bug after both meet.
    assert_eq!(
        findings(
            "local v = redis.call('GET', KEYS[1])\nif v then redis.call('SET', KEYS[2], v) end\nif v == nil then return 1 end"
        ),
        [("constant_equality", ERROR, 3)]
    );
    // A branch that never runs changes nothing, in a loop either.
    assert_eq!(
        findings(
            "local s = ARGV[1]\nfor i = 1, 3 do\n  if s == 1 then redis.call('DEL', KEYS[1]) end\nend"
        ),
        [("constant_equality", ERROR, 3)]
    );
    // An integer reply was never anything but a number.
    assert_eq!(
        findings(
            "local n = redis.call('SISMEMBER', KEYS[1], ARGV[1])\nif n == false then return 0 end\nif n then return 1 end"
        ),
        [("constant_equality", ERROR, 2), ("always_true", ERROR, 3)]
    );
}

#[test]
fn arguments_past_the_fixed_ones_of_a_variadic_signature_may_be_nil() {
    let signature = Signature {
        keys: 1,
        args: 1,
        variadic_args: true,
        allow_unused: true,
        ..Signature::default()
    };
    let found = |source: &str| -> Vec<&'static str> {
        analyze(source, &signature)
            .diagnostics
            .iter()
            .filter_map(|diagnostic| diagnostic.finding())
            .collect()
    };
    assert_eq!(
        found("if ARGV[3] == nil then return 0 end return ARGV[3]"),
        [] as [&str; 0]
    );
    assert_eq!(
        found("if ARGV[1] == nil then return 0 end"),
        ["constant_equality"]
    );
    assert_eq!(
        found("local i = 2\nif ARGV[i + 1] == nil then return 0 end"),
        [] as [&str; 0]
    );
    // Absent or not, it is never a number.
    assert_eq!(
        found("if ARGV[3] == 1 then return 0 end"),
        ["constant_equality"]
    );
}

#[test]
fn loops_that_nothing_ends() {
    for script in [
        "while true do redis.call('LPOP', KEYS[1]) end",
        "while 1 do redis.call('LPOP', KEYS[1]) end",
        "repeat redis.call('INCR', KEYS[1]) until false",
        "repeat redis.call('INCR', KEYS[1]) until nil",
        "for i = 1, math.huge do redis.call('INCR', KEYS[1]) end",
        "for i = 1, 1/0 do redis.call('INCR', KEYS[1]) end",
        "for i = 10, 1, 0 do redis.call('INCR', KEYS[1]) end",
        "for i = 1, -math.huge, -1 do redis.call('INCR', KEYS[1]) end",
        // A return of a nested function and a break of a nested loop do
        // not leave it; pcall does not raise.
        "while true do local f = function() return 1 end end",
        "while true do for i = 1, 3 do break end end",
        "while true do pcall(redis.call, 'INCR', KEYS[1]) end",
    ] {
        assert_eq!(findings(script), [("endless_loop", ERROR, 1)], "{script}");
    }
    // An integer tested for truth is always true: the loop never ends either.
    assert_eq!(
        findings(
            "local n = redis.call('LLEN', KEYS[1])\nwhile n do redis.call('RPOP', KEYS[1]) end"
        ),
        [("endless_loop", ERROR, 2), ("always_true", ERROR, 2)]
    );
    // A way out, or a condition that depends on data: fine.
    silent(
        "while true do\n  local job = redis.call('LPOP', KEYS[1])\n  if not job then break end\nend",
    );
    silent(
        "while true do\n  if redis.call('LLEN', KEYS[1]) == 0 then return 0 end\n  redis.call('RPOP', KEYS[1])\nend",
    );
    silent("while true do\n  local v = redis.call('LPOP', KEYS[1])\n  assert(v, 'empty')\nend");
    silent("while true do error('stop') end");
    silent(
        "local function step() return redis.call('LPOP', KEYS[1]) end\nwhile true do step() end",
    );
    silent("while redis.call('LPOP', KEYS[1]) do end");
    silent("repeat\n  local v = redis.call('LPOP', KEYS[1])\nuntil not v");
    silent("for i = 1, tonumber(ARGV[1]) do redis.call('INCR', KEYS[1]) end");
    // A step of 0 from below the bound never runs; to `math.huge` downwards
    // ends at once.
    silent("for i = 1, 10, 0 do redis.call('INCR', KEYS[1]) end");
    silent("for i = 1, math.huge, -1 do redis.call('INCR', KEYS[1]) end");
    silent("while true do redis.call('LPOP', KEYS[1]) end -- redis-script: allow(endless_loop)");
}

#[test]
fn commands_that_walk_the_keyspace_or_act_on_the_server() {
    assert_eq!(
        findings("for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end"),
        [("keyspace_walk", WARNING, 1)]
    );
    assert_eq!(
        findings(
            "local cursor = '0'\nrepeat\n  local page = redis.call('SCAN', cursor, 'MATCH', ARGV[1])\n  cursor = page[1]\nuntil cursor == '0'"
        ),
        [("keyspace_walk", WARNING, 3)]
    );
    assert_eq!(
        findings(
            "local cursor = '0'\nrepeat\n  local page = redis.call('HSCAN', KEYS[1], cursor)\n  cursor = page[1]\nuntil cursor == '0'"
        ),
        [("keyspace_walk", WARNING, 3)]
    );
    assert_eq!(
        findings("redis.call('FLUSHALL')"),
        [("dangerous_command", WARNING, 1)]
    );
    assert_eq!(
        findings("return redis.call('SORT', KEYS[1], 'BY', 'w_*', 'LIMIT', 0, 10)"),
        [("dangerous_command", WARNING, 1)]
    );
    // One page of a scan is bounded by its COUNT.
    silent("return redis.call('SSCAN', KEYS[1], ARGV[1], 'COUNT', 100)");
    silent("return redis.call('KEYS', ARGV[1]) -- redis-script: allow(keyspace_walk)");
}

#[test]
fn reads_that_grow_with_the_data() {
    let warned = |script: &str, line: usize| warned("unbounded_read", script, line);
    warned(
        "for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do redis.call('HDEL', KEYS[2], id) end",
        1,
    );
    warned(
        "local ids = redis.call('SMEMBERS', KEYS[1])\nfor i = 1, #ids do redis.call('DEL', ids[i]) end",
        1,
    );
    warned("return redis.call('HGETALL', KEYS[1])", 1);
    warned(
        "local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])\nfor i = 1, #due, 100 do redis.call('ZREM', KEYS[1], unpack(due, i, math.min(i + 99, #due))) end",
        1,
    );
    warned(
        "local all = redis.call('LRANGE', KEYS[1], 0, -1)\nreturn all",
        1,
    );
    warned(
        "return redis.call('ZRANGE', KEYS[1], '-inf', '+inf', 'BYSCORE')",
        1,
    );
    warned("return redis.call('XRANGE', KEYS[1], '-', '+')", 1);
    warned(
        "return redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE')",
        1,
    );
    // Bounded by a LIMIT or COUNT, by the range, by ARGV; or only measured.
    silent("return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 100)");
    silent("return redis.call('ZRANGE', KEYS[1], '-inf', '+inf', 'BYSCORE', 'LIMIT', 0, 10)");
    silent("return redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 10)");
    silent("return redis.call('LRANGE', KEYS[1], 0, 99)");
    silent("return redis.call('LRANGE', KEYS[1], -10, -1)");
    silent("return redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[1]))");
    silent("return #redis.call('SMEMBERS', KEYS[1])");
    silent(
        "local members = redis.call('SMEMBERS', KEYS[1])\nif #members == 0 then return 0 end\nreturn 1",
    );
    silent("return redis.call('HGETALL', KEYS[1]) -- redis-script: allow(unbounded_read)");
}

#[test]
fn unpacks_of_tables_the_data_sizes() {
    let warned = |script: &str, line: usize| warned("unbounded_unpack", script, line);
    // A whole read, at the `unpack` rather than at the read.
    warned(
        "local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])\nif #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end",
        2,
    );
    warned(
        "local active = redis.call('LRANGE', KEYS[1], 0, -1)\nif next(active) then redis.call('SADD', KEYS[2], unpack(active)) end",
        2,
    );
    // A range whose end the script computes.
    warned(
        "local jobs = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)\nif #jobs > 0 then redis.call('ZREM', KEYS[1], unpack(jobs)) end",
        2,
    );
    // Filled in a loop up to a count from an argument or the data.
    warned(
        "local n = tonumber(ARGV[1])\nlocal t = {}\nfor i = 1, n do t[i] = ARGV[2] .. i end\nif #t > 0 then redis.call('LPUSH', KEYS[1], unpack(t)) end",
        4,
    );
    warned(
        "local gap = math.floor((tonumber(ARGV[1]) - tonumber(redis.call('GET', KEYS[2]) or '0')) / 60)\nlocal points = {}\nfor i = 1, gap do points[#points + 1] = 0 end\nif #points > 0 then redis.call('LPUSH', KEYS[1], unpack(points)) end",
        4,
    );
    // Filled once per element of a whole read, through a table that grows.
    warned(
        "local ids = redis.call('SMEMBERS', KEYS[1]) -- redis-script: allow(unbounded_read)\nlocal found = {}\nfor _, id in ipairs(ids) do table.insert(found, 'job:' .. id) end\nif #found > 0 then redis.call('DEL', unpack(found)) end",
        4,
    );
    // In ranges, of the request's own elements, of literals and of capped
    // counts: nothing the data sizes (`empty_unpack` may still speak).
    let quiet = |script: &str| {
        assert!(!names(script).contains(&"unbounded_unpack"), "{script}");
    };
    quiet(
        "local ids = redis.call('SMEMBERS', KEYS[1]) -- redis-script: allow(unbounded_read)\nfor i = 1, #ids, 1000 do redis.call('SADD', KEYS[2], unpack(ids, i, math.min(i + 999, #ids))) end",
    );
    quiet("return redis.call('DEL', unpack(KEYS))");
    quiet(
        "local t = {}\nfor i = 2, #ARGV do t[#t + 1] = ARGV[i] end\nreturn redis.call('HMGET', KEYS[1], unpack(t))",
    );
    quiet(
        "local t = {}\nfor i = 1, 10 do t[i] = i end\nreturn redis.call('LPUSH', KEYS[1], unpack(t))",
    );
    quiet(
        "local n = math.min(tonumber(ARGV[1]), 1000)\nlocal t = {}\nfor i = 1, n do t[i] = i end\nreturn redis.call('LPUSH', KEYS[1], unpack(t))",
    );
    quiet("return redis.call('LPUSH', KEYS[1], unpack(redis.call('LRANGE', KEYS[2], 0, 99)))");
    // A table made anew on each pass holds one pass's elements.
    quiet(
        "for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do -- redis-script: allow(unbounded_read)\n  local batch = {}\n  for i = 1, 10 do batch[i] = id .. i end\n  redis.call('DEL', unpack(batch))\nend",
    );
    quiet(
        "local all = redis.call('LRANGE', KEYS[1], 0, -1) -- redis-script: allow(unbounded_read)\nredis.call('SADD', KEYS[2], unpack(all)) -- redis-script: allow(unbounded_unpack)",
    );
}

#[test]
fn opt_outs_are_read_in_scripts_with_a_stray_backtick() {
    // full_moon's lexer panics on a backtick: the opt-out reader must not
    // give it one either.
    let analysis = analyze(
        "-- redis-script: allow(nil_value)\n- `table.unpack` is tested first\nreturn 1",
        &Signature::default(),
    );
    assert!(
        analysis
            .diagnostics
            .iter()
            .all(|diagnostic| !diagnostic.message.starts_with(crate::INTERNAL_ERROR)),
        "{:?}",
        analysis.diagnostics
    );
}

#[test]
fn the_review_lists_commands_loops_and_growing_reads() {
    use crate::{CommandUse, LoopBound};
    let source = "local ids = redis.call('SMEMBERS', KEYS[1])\nfor _, id in ipairs(ids) do\n  redis.call('DEL', 'job:' .. id)\nend\nfor i = 1, tonumber(ARGV[1]) do redis.call('GET', KEYS[1]) end\nwhile true do redis.call('GET', KEYS[1]) end";
    let signature = Signature {
        keys: 1,
        args: 1,
        dynamic_keys: true,
        ..Signature::default()
    };
    let review = analyze(source, &signature).review;
    let command = |name: &str, line, writes| CommandUse {
        name: name.to_owned(),
        line,
        writes,
    };
    assert_eq!(
        review.commands,
        [
            command("SMEMBERS", 1, false),
            command("DEL", 3, true),
            command("GET", 5, false)
        ]
    );
    let bounds: Vec<(usize, &str, LoopBound)> = review
        .loops
        .iter()
        .map(|site| (site.line, site.kind, site.bound.clone()))
        .collect();
    assert_eq!(
        bounds,
        [
            (
                2,
                "for … in",
                LoopBound::GrowingRead {
                    command: "SMEMBERS".to_owned(),
                    line: 1
                }
            ),
            (
                5,
                "for",
                LoopBound::Written("i = 1, tonumber(ARGV[1])".to_owned())
            ),
            (6, "while", LoopBound::Never),
        ]
    );
    assert_eq!(review.growing_reads.len(), 1);
    assert_eq!(review.growing_reads[0].command, "SMEMBERS");
    // Opted out with `dynamic_keys`: not an error, still in the review.
    assert_eq!(review.keys_outside, [3]);
}

#[test]
fn opt_outs_in_long_comments_and_after_wide_characters() {
    let script = "if redis.call('EXISTS', KEYS[1]) then return 1 end";
    silent(&format!(
        "--[[ redis-script: allow(always_true) ]]\n{script}"
    ));
    silent(&format!(
        "--[==[\nredis-script: allow(always_true)\n]==]\n{script}"
    ));
    silent(&format!(
        "local s = 'é' -- redis-script: allow(always_true)\n{script} -- redis-script: allow(always_true)"
    ));
    assert_eq!(
        names(&format!(
            "local s = '-- redis-script: allow(always_true)'\n{script}"
        )),
        ["always_true"]
    );
}

/// The `single_command` findings of `source` under `target`: `(line, the
/// command named)`.
fn single_commands(source: &str, target: &str) -> Vec<(usize, String)> {
    let signature = Signature {
        keys: 2,
        args: 3,
        allow_unused: true,
        target: crate::Target::parse(target).expect("a target"),
        ..Signature::default()
    };
    analyze(source, &signature)
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.code == Code::SingleCommand)
        .map(|diagnostic| {
            assert_eq!(diagnostic.severity, WARNING, "{}", diagnostic.message);
            let text = diagnostic.text();
            let named = text
                .split(": if this is intended")
                .next()
                .unwrap_or_default()
                .split('`')
                .rev()
                .nth(1)
                .unwrap_or_default()
                .to_owned();
            (diagnostic.line, named)
        })
        .collect()
}

#[test]
fn a_compare_and_delete_is_one_command_where_every_server_has_it() {
    let direct = "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('DEL', KEYS[1])\nend\nreturn 0";
    let local = "local owner = redis.call('get', KEYS[1])\nif ARGV[1] == owner then\n  redis.call('UNLINK', KEYS[1])\n  return 1\nend\nreturn 0";
    // bull's and bullmq's releaseLock: an alias of `redis.call`, and an
    // `else` that answers a literal.
    let aliased = "local rcall = redis.call\nif rcall(\"GET\", KEYS[1]) == ARGV[1] then\n  return rcall(\"DEL\", KEYS[1])\nelse\n  return 0\nend";
    for source in [direct, local, aliased] {
        for target in ["valkey-9.0", "valkey-9.1"] {
            let found = single_commands(source, target);
            assert_eq!(found.len(), 1, "{target}: {source}");
            assert_eq!(found[0].1, "DELIFEQ", "{target}");
        }
        for target in ["redis-8.4", "redis-8.6"] {
            let found = single_commands(source, target);
            assert_eq!(found.len(), 1, "{target}: {source}");
            assert_eq!(found[0].1, "DELEX … IFEQ", "{target}");
        }
        // Some server of the target lacks both: nothing to say.
        for target in [
            "any",
            "redis-7.0",
            "redis-8.2",
            "valkey-8.1",
            "valkey-9.1,redis-8.0",
            "valkey-9.1,redis-8.6",
        ] {
            assert_eq!(single_commands(source, target), [], "{target}: {source}");
        }
    }
    for (target, sent) in [
        ("valkey-9.1", "`DELIFEQ KEYS[1] ARGV[1]`"),
        ("redis-8.4", "`DELEX KEYS[1] IFEQ ARGV[1]`"),
    ] {
        let signature = Signature {
            keys: 1,
            args: 1,
            target: crate::Target::parse(target).expect("a target"),
            ..Signature::default()
        };
        let message = analyze(direct, &signature)
            .diagnostics
            .into_iter()
            .find(|diagnostic| diagnostic.code == Code::SingleCommand)
            .expect("found");
        assert!(
            message
                .help
                .as_deref()
                .is_some_and(|hint| hint.contains(sent)),
            "{message:?}"
        );
    }
}

#[test]
fn a_compare_and_set_is_one_command_from_valkey_8_1_and_redis_8_4() {
    let source = "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('SET', KEYS[1], ARGV[2])\nend\nreturn false";
    for target in [
        "valkey-8.1",
        "valkey-9.1",
        "redis-8.4",
        "redis-8.6",
        "redis-8.4,valkey-8.1",
    ] {
        assert_eq!(
            single_commands(source, target),
            [(1, "SET … IFEQ".to_owned())],
            "{target}"
        );
    }
    for target in ["any", "valkey-8.0", "redis-8.2"] {
        assert_eq!(single_commands(source, target), [], "{target}");
    }
}

#[test]
fn a_script_that_does_more_is_left_alone() {
    for source in [
        // Something else on a match, or on a mismatch.
        "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  redis.call('DEL', KEYS[1])\n  redis.call('INCR', KEYS[2])\nend",
        "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('DEL', KEYS[1])\nelse\n  return redis.call('DEL', KEYS[2])\nend",
        // Another key deleted than the one read.
        "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('DEL', KEYS[2])\nend",
        // Options DELIFEQ and SET … IFEQ do not take.
        "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('SET', KEYS[1], ARGV[2], 'EX', 10)\nend",
        // Not equality, or a value computed by a call.
        "if redis.call('GET', KEYS[1]) ~= ARGV[1] then\n  return redis.call('DEL', KEYS[1])\nend",
        "if redis.call('GET', KEYS[1]) == redis.call('GET', KEYS[2]) then\n  return redis.call('DEL', KEYS[1])\nend",
        // `redis.pcall` hands errors back: not the same script.
        "if redis.pcall('GET', KEYS[1]) == ARGV[1] then\n  return redis.pcall('DEL', KEYS[1])\nend",
        // The local is not the GET's.
        "local owner = ARGV[2]\nif owner == ARGV[1] then\n  return redis.call('DEL', KEYS[1])\nend",
        // An `else` that does something, or a local named `redis`.
        "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('DEL', KEYS[1])\nelse\n  return redis.call('INCR', KEYS[2])\nend",
        "local rcall = function(...) return redis.call('ECHO', 'x') end\nif rcall('GET', KEYS[1]) == ARGV[1] then\n  return rcall('DEL', KEYS[1])\nend",
    ] {
        assert_eq!(single_commands(source, "valkey-9.1"), [], "{source}");
    }
}

#[test]
fn bit_constants_wider_than_32_bits() {
    // Wider than 32 bits, a fraction, a shift count past 31: errors where
    // they are written.
    assert_eq!(
        findings(
            "local a = bit.band(ARGV[1], 0x100000001)\nlocal b = bit.lshift(1, 40)\nlocal c = bit.tobit(2^32 + 5)\nlocal d = bit.bor(0, 2.5)\nreturn {a, b, c, d}"
        ),
        [
            ("bit_width", ERROR, 1),
            ("bit_width", ERROR, 2),
            ("bit_width", ERROR, 3),
            ("bit_width", ERROR, 4)
        ]
    );
    let shift = crate::analyze("return bit.rol(1, 33)", &Signature::default());
    let messages: Vec<String> = shift.diagnostics.iter().map(|d| d.text()).collect();
    assert!(
        messages.iter().any(|text| text
            .contains("`33` is not a count from 0 to 31: `bit.rol` shifts by its low 5 bits, 1")),
        "{messages:?}"
    );
    // What BitOp takes as written: signed and unsigned 32-bit constants,
    // shifts of 0 to 31, values computed at run time, other members.
    silent(
        "return {bit.band(ARGV[1], 0xFFFFFFFF), bit.bor(-1, -2147483648), bit.lshift(1, 31), bit.rshift(ARGV[1], 0)}",
    );
    silent("local n = tonumber(ARGV[1])\nreturn bit.band(n * 2^40, n)");
    silent("return bit.tohex(0xFF, 16)");
    silent("return bit.band(ARGV[1], 0x100000000) -- redis-script: allow(bit_width)");
}

/// A key the script wrote as a string earlier on the path is there: `GET`
/// of it is never false (a failed `SET … NX` means the key exists; scripts
/// see no key expire while they run). A write in between, a condition on
/// the `SET`, or a function body run at another time forget it.
#[test]
fn a_get_after_set_is_never_false() {
    let after = |set: &str, between: &str| {
        format!(
            "local ok = redis.call({set})\nif not ok then\n{between}\n  local holder = redis.call('GET', KEYS[1])\n  return 'held by ' .. holder\nend\nreturn 'acquired'"
        )
    };
    silent(&after("'SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]", ""));
    silent(&after(
        "'SET', KEYS[1], ARGV[1], 'NX'",
        "  redis.call('GET', KEYS[2])",
    ));
    // A redundant test for the missing value is no finding either.
    silent(
        "redis.call('SET', KEYS[1], 'x')\nif redis.call('GET', KEYS[1]) == false then return 0 end\nreturn 1",
    );
    // A key built from a prefix, a local holding it, a hash field.
    silent(
        "redis.call('SET', KEYS[1] .. ARGV[1], ARGV[2])\nreturn 'v' .. redis.call('GET', KEYS[1] .. ARGV[1])",
    );
    silent(
        "local job = KEYS[1] .. 'job:' .. ARGV[1]\nredis.call('HSET', job, 'payload', ARGV[2])\nreturn 'v' .. redis.call('HGET', job, 'payload')",
    );
    for unknown in [
        // The local names another key by the time it is read.
        "local key = KEYS[1]\nredis.call('SET', key, 'x')\nkey = KEYS[2]\nreturn 'v' .. redis.call('GET', key)".to_owned(),
        // Another field.
        "redis.call('HSET', KEYS[1], 'a', 1)\nreturn 'v' .. redis.call('HGET', KEYS[1], 'b')".to_owned(),
        after("'SET', KEYS[1], ARGV[1], 'XX'", ""),
        after("'SET', KEYS[1], ARGV[1], 'NX'", "  redis.call('DEL', KEYS[2])"),
        after("'SET', KEYS[2], ARGV[1], 'NX'", ""),
        after("'SET', KEYS[1], ARGV[1], 'NX'", "  redis.call('SELECT', 1)"),
        "redis.call('SET', KEYS[1], 'x')\nlocal function later() return 'v' .. redis.call('GET', KEYS[1]) end\nreturn later()".to_owned(),
    ] {
        assert_eq!(names(&unknown), ["nil_value"], "{unknown}");
    }
}

/// `(severity, line, column)` of each `key_as_value` finding of `source`,
/// checked with 6 keys and 3 arguments.
fn keys_as_values(source: &str) -> Vec<(Severity, usize, usize)> {
    let signature = Signature {
        keys: 6,
        args: 3,
        allow_unused: true,
        ..Signature::default()
    };
    analyze(source, &signature)
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.code == Code::KeyAsValue)
        .map(|diagnostic| (diagnostic.severity, diagnostic.line, diagnostic.column))
        .collect()
}

#[test]
fn a_keys_element_passed_only_as_a_number() {
    // The lock's signal expiry passed in KEYS (python-redis-lock 3.5.0).
    let unlock = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\n\
                  redis.call('DEL', KEYS[2])\n\
                  redis.call('LPUSH', KEYS[2], 1)\n\
                  redis.call('PEXPIRE', KEYS[2], KEYS[3])\n\
                  return redis.call('DEL', KEYS[1])";
    assert_eq!(keys_as_values(unlock), [(ERROR, 4, 32)]);
    // Through a local, as a score, as an increment.
    assert_eq!(
        keys_as_values("local ttl = KEYS[2]\nreturn redis.call('EXPIRE', KEYS[1], ttl)"),
        [(ERROR, 2, 38)]
    );
    assert_eq!(
        keys_as_values("return redis.call('HINCRBY', KEYS[1], ARGV[1], KEYS[2])"),
        [(ERROR, 1, 48)]
    );
    // `ZADD key [NX|XX] … score member`: an operand known only at run time
    // may be an option there, so nothing is placed.
    assert_eq!(
        keys_as_values("return redis.call('ZADD', KEYS[1], KEYS[2], ARGV[1])"),
        []
    );
    assert_eq!(
        keys_as_values("return redis.call('INCRBY', KEYS[1], KEYS[2])"),
        [(ERROR, 1, 38)]
    );
    // A script that counts its keys may be passed this one sometimes.
    assert_eq!(
        keys_as_values("if #KEYS > 1 then redis.call('EXPIRE', KEYS[1], KEYS[2]) end\nreturn 1"),
        [(WARNING, 1, 49)]
    );
}

#[test]
fn a_keys_element_that_is_a_key_somewhere_is_left_alone() {
    // Stored as a value and used as a key.
    assert_eq!(
        keys_as_values("redis.call('SADD', KEYS[1], KEYS[2])\nredis.call('DEL', KEYS[2])"),
        []
    );
    assert_eq!(
        keys_as_values("redis.call('EXPIRE', KEYS[1], KEYS[2])\nreturn redis.call('GET', KEYS[2])"),
        []
    );
    // A key built from it.
    assert_eq!(
        keys_as_values(
            "redis.call('EXPIRE', KEYS[1], KEYS[2])\nreturn redis.call('GET', KEYS[2] .. ':x')"
        ),
        []
    );
    // Passed to a function that uses it as a key, or whose use is unknown.
    assert_eq!(
        keys_as_values(
            "local function drop(k) redis.call('DEL', k) end\nredis.call('EXPIRE', KEYS[1], KEYS[2])\ndrop(KEYS[2])"
        ),
        []
    );
    assert_eq!(
        keys_as_values(
            "local function f(k) return k end\nredis.call('EXPIRE', KEYS[1], KEYS[2])\nreturn f(KEYS[2])"
        ),
        []
    );
    // Into a table, returned, tested for truth, converted.
    assert_eq!(
        keys_as_values(
            "local t = {KEYS[2]}\nredis.call('EXPIRE', KEYS[1], KEYS[2])\nreturn redis.call('DEL', unpack(t))"
        ),
        []
    );
    assert_eq!(
        keys_as_values("redis.call('EXPIRE', KEYS[1], KEYS[2])\nreturn KEYS[2]"),
        []
    );
    assert_eq!(
        keys_as_values(
            "local ms = tonumber(KEYS[2])\nreturn redis.call('PEXPIRE', KEYS[1], KEYS[2])"
        ),
        []
    );
    // KEYS used whole, or at a computed index: any element may go anywhere.
    assert_eq!(
        keys_as_values(
            "redis.call('EXPIRE', KEYS[1], KEYS[2])\nfor i = 1, #KEYS do redis.call('DEL', KEYS[i]) end"
        ),
        []
    );
    assert_eq!(
        keys_as_values(
            "redis.call('EXPIRE', KEYS[1], KEYS[2])\nreturn redis.call('DEL', unpack(KEYS))"
        ),
        []
    );
    // A local assigned again names something else.
    assert_eq!(
        keys_as_values(
            "local k = KEYS[2]\nredis.call('EXPIRE', KEYS[1], KEYS[2])\nif ARGV[1] then k = k .. ':x' end\nreturn redis.call('DEL', k)"
        ),
        []
    );
    // A string position (a member, a value) may hold a key's name.
    assert_eq!(
        keys_as_values("return redis.call('SADD', KEYS[1], KEYS[2])"),
        []
    );
    // A command the model does not know may take it as a key.
    assert_eq!(
        keys_as_values("local c = ARGV[1]\nreturn redis.call(c, KEYS[1], KEYS[2])"),
        []
    );
}

#[test]
fn a_keys_element_tested_against_the_empty_string() {
    // bullmq's drain: the delayed set passed as '' when not drained.
    assert_eq!(
        keys_as_values(
            "if KEYS[3] ~= \"\" then\n  redis.call('DEL', KEYS[3])\nend\nreturn redis.call('DEL', KEYS[1])"
        ),
        [(WARNING, 1, 4)]
    );
    // Through a local: reported where it takes the element from KEYS.
    assert_eq!(
        keys_as_values(
            "local parent = KEYS[2]\nif parent ~= '' then redis.call('SADD', parent, ARGV[1]) end\nif parent == '' then return 0 end\nreturn 1"
        ),
        [(WARNING, 1, 7)]
    );
    assert_eq!(
        keys_as_values("if '' == KEYS[2] then return 0 end\nreturn redis.call('GET', KEYS[2])"),
        [(WARNING, 1, 4)]
    );
    // Other comparisons, ARGV, a computed index, a count of keys.
    assert_eq!(
        keys_as_values("if ARGV[1] ~= '' then return redis.call('GET', KEYS[1]) end"),
        []
    );
    assert_eq!(
        keys_as_values("if KEYS[1] == 'x' then return 1 end\nreturn redis.call('GET', KEYS[1])"),
        []
    );
    assert_eq!(
        keys_as_values(
            "for i = 1, #KEYS do if KEYS[i] ~= '' then redis.call('DEL', KEYS[i]) end end"
        ),
        []
    );
    assert_eq!(
        keys_as_values("if #KEYS == 0 then return 0 end\nreturn redis.call('GET', KEYS[1])"),
        []
    );
}

#[test]
fn keys_as_values_yield_to_opt_outs() {
    assert_eq!(
        keys_as_values(
            "return redis.call('EXPIRE', KEYS[1], KEYS[2]) -- redis-script: allow(key_as_value)"
        ),
        []
    );
    assert_eq!(
        keys_as_values(
            "-- redis-script: allow(key_as_value)\nif KEYS[2] ~= '' then return redis.call('GET', KEYS[2]) end"
        ),
        []
    );
}
