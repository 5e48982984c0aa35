//! Rule-by-rule tests of the analysis: known-bad snippets with their exact
//! messages, scope edge cases that must not be flagged, the corpus of
//! correct scripts, and property tests that it never panics.

mod codes_guide;
mod derived_keys;
mod json_reads;
mod layers;
mod library;
mod proptests;
mod reply_forms;
mod server_rules;
mod target_checks;

use crate::source::syntax;
use crate::*;

fn signature(keys: usize, args: usize) -> Signature {
    Signature {
        keys,
        args,
        ..Signature::default()
    }
}

/// `line:column+width message` of every error.
fn errors(source: &str, signature: &Signature) -> Vec<String> {
    analyze(source, signature)
        .errors()
        .map(|d| format!("{}:{}+{} {}", d.line, d.column, d.width, d.text()))
        .collect()
}

fn error_messages(source: &str, signature: &Signature) -> Vec<String> {
    analyze(source, signature)
        .errors()
        .map(|d| d.text())
        .collect()
}

#[track_caller]
fn assert_clean(source: &str, signature: &Signature) {
    let analysis = analyze(source, signature);
    let errors: Vec<String> = analysis
        .errors()
        .map(|d| d.render("test.lua", source))
        .collect();
    assert!(
        errors.is_empty(),
        "unexpected errors:\n{}",
        errors.join("\n")
    );
}

#[test]
fn smoke() {
    assert_clean(
        "local v = redis.call('GET', KEYS[1])\nif v == ARGV[1] then return redis.call('DEL', KEYS[1]) end\nreturn 0\n",
        &signature(1, 1),
    );
    assert_eq!(
        error_messages("x = 1\nreturn redsi.call('GET', KEYS[2])", &signature(1, 0)),
        [
            "assignment to global variable `x`: Redis scripts cannot create or change globals (Attempt to modify a readonly table)",
            "key parameter 1 (`KEYS[1]`) is never read by the script",
            "`redsi` is not defined: Redis fails with \"Script attempted to access nonexistent global variable 'redsi'\"",
            "`KEYS[2]` is out of range: the Rust function declares 1 key",
        ]
    );
    assert!(error_messages("return 1", &signature(0, 0)).is_empty());
}

// ----- error codes the script can end with --------------------------------

fn codes(source: &str) -> (Vec<String>, bool) {
    let analysis = analyze(source, &signature(0, 0));
    let codes = analysis.error_codes;
    (codes.codes.into_iter().collect(), codes.unknown)
}

#[test]
fn protected_calls_forward_command_errors_only() {
    for source in [
        "return redis.pcall('GET', 'k')",
        "local ok, e = pcall(redis.call, 'GET', 'k') return e",
        "return select(2, pcall(redis.call, 'GET', 'k'))",
        "local co = coroutine.create(function() redis.call('GET', 'k') end) local ok, e = coroutine.resume(co) return e",
    ] {
        let codes = analyze(source, &signature(0, 0)).error_codes;
        assert!(codes.forwards_command_errors && !codes.unknown, "{source}");
        assert!(codes.may_return("WRONGTYPE") && !codes.may_return("NOSCRIPT"));
    }
}

#[test]
fn literal_error_codes_are_collected() {
    assert_eq!(
        codes(
            "if ARGV then return redis.error_reply('CONFLICT expected 3') end\nreturn {err = 'GONE'}"
        ),
        (vec!["CONFLICT".to_string(), "GONE".to_string()], false)
    );
    // The code of a concatenation is known when the literal part ends it.
    assert_eq!(
        codes("return redis.error_reply('VERSION_CONFLICT expected ' .. tostring(ARGV))"),
        (vec!["VERSION_CONFLICT".to_string()], false)
    );
    // Any first word counts, as clients read it; a leading `-` is dropped.
    assert_eq!(
        codes("return redis.error_reply('-busy now')"),
        (vec!["busy".to_string()], false)
    );
    assert_eq!(codes("return 1"), (vec![], false));
    // Every way a table gets a literal `err` string, wherever it goes.
    for source in [
        "return {['err'] = 'TAKEN by another'}",
        "local t = {} t.err = 'TAKEN by another' return t",
        "local t = {} t['err'] = 'TAKEN by another' return t",
        "local t = {} rawset(t, 'err', 'TAKEN by another') return t",
        "local function fail() return {err = 'TAKEN by another'} end local r = {fail()} return r[1]",
        "local ok, e = pcall(error, {err = 'TAKEN by another'}) return e",
    ] {
        let (found, unknown) = codes(source);
        assert!(
            found.contains(&"TAKEN".to_string()) && !unknown,
            "{source}: {found:?}"
        );
    }
    // A number under `err` makes no error reply when returned (Redis wants
    // a string), but a raised one reads `5`.
    assert_eq!(codes("return {err = 5}"), (vec!["5".to_string()], false));
    assert!(matches!(
        analyze("return {err = 5}", &signature(0, 0)).returns[0].shape,
        ReturnShape::Array { .. }
    ));
    assert_eq!(
        codes("local t = {} t[ARGV[1]] = 0 return t"),
        (vec![], false)
    );
}

#[test]
fn run_time_error_codes_make_the_set_unknown() {
    for source in [
        "return redis.error_reply(tostring(ARGV))",
        "return redis.error_reply('CODE' .. tostring(ARGV))",
        "return {err = tostring(ARGV)}",
        "return cjson.decode('{}')",
        "return cmsgpack.unpack('')",
        "local t = {} t.err = ARGV[1] return t",
        "local t = {} t[ARGV[1]] = ARGV[2] return t",
        "return {[ARGV[1]] = ARGV[2]}",
        "local k = 'e' .. 'rr' return {[k] = 'X y'}",
        "local t = {} rawset(t, ARGV[1], 'X y') return t",
        "redis.setresp(3) return redis.call('HGETALL', KEYS[1]).map",
        "return loadstring('return 1')()",
    ] {
        assert!(codes(source).1, "{source}");
    }
    // Keys that cannot read `err`, values that are no strings.
    for source in [
        "local t = {} for i = 1, 3 do t[i] = ARGV[i] end return t",
        "local t = {} t['x' .. ARGV[1]] = ARGV[2] return t",
        "local t = {} t[ARGV[1]] = tonumber(ARGV[2]) return t",
        "redis.setresp(2) return 1",
    ] {
        assert!(!codes(source).1, "{source}");
    }
}

#[test]
fn error_codes_clients_act_on_are_rejected() {
    let codes = redis_script_codes::SERVER_CODES
        .iter()
        .filter(|entry| entry.clients_act().is_some())
        .map(|entry| entry.code());
    for code in codes {
        let messages = error_messages(
            &format!("return redis.error_reply('{code} x')"),
            &signature(0, 0),
        );
        assert_eq!(messages.len(), 1, "{code}: {messages:?}");
        assert!(
            messages[0].starts_with(&format!(
                "the script replies with the error code {code}, which belongs to the server"
            )),
            "{messages:?}"
        );
    }
    assert_eq!(
        error_messages("error({err = 'NOSCRIPT x'})", &signature(0, 0)).len(),
        1
    );
    assert!(error_messages("return redis.error_reply('BUSY x')", &signature(0, 0)).is_empty());
}

// ----- corpus ------------------------------------------------------------

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/lua/corpus");

/// Reads `-- keys: 2` / `-- keys: 1+` and `-- args: 3` from a corpus header.
fn corpus_signature(source: &str) -> Signature {
    let mut signature = Signature::default();
    for line in source.lines().take(6) {
        let Some((field, value)) = line.trim_start_matches("--").split_once(':') else {
            continue;
        };
        let value = value.trim();
        let variadic = value.ends_with('+');
        let count: usize = value.trim_end_matches('+').parse().unwrap_or(0);
        match field.trim() {
            "keys" => (signature.keys, signature.variadic_keys) = (count, variadic),
            "args" => (signature.args, signature.variadic_args) = (count, variadic),
            _ => {}
        }
    }
    signature
}

fn corpus() -> Vec<(String, String)> {
    let mut scripts: Vec<(String, String)> = std::fs::read_dir(CORPUS)
        .expect("corpus directory")
        .map(|entry| entry.expect("corpus entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "lua"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).expect("corpus file"))
        })
        .collect();
    scripts.sort();
    scripts
}

#[test]
fn every_corpus_script_passes() {
    let scripts = corpus();
    assert!(scripts.len() >= 30, "only {} corpus scripts", scripts.len());
    let mut failures = Vec::new();
    for (name, source) in &scripts {
        let analysis = analyze(source, &corpus_signature(source));
        failures.extend(analysis.errors().map(|d| d.render(name, source)));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    println!("{} corpus scripts analysed without errors", scripts.len());
}

// ----- rule 1: syntax -----------------------------------------------------

#[test]
fn syntax_errors_stop_the_analysis_and_explain_newer_lua() {
    let source = "local n = tonumber(ARGV[1]) // 2\nreturn n";
    assert_eq!(
        errors(source, &signature(0, 1)),
        ["1:29+2 `//` (floor division) is Lua 5.3 syntax; Redis runs Lua 5.1"]
    );
    let analysis = analyze(source, &signature(0, 1));
    assert_eq!(
        analysis.diagnostics[0].help.as_deref(),
        Some("write `math.floor(a / b)`")
    );
    assert_eq!(
        errors("if x then\n  return 0\nedn", &signature(0, 0)).len(),
        1
    );
}

// ----- rule 2: KEYS and ARGV ---------------------------------------------

#[test]
fn literal_indices_beyond_the_declared_counts() {
    assert_eq!(
        errors(
            "return redis.call('GET', KEYS[1]) .. KEYS[3]",
            &signature(1, 0)
        ),
        ["1:38+7 `KEYS[3]` is out of range: the Rust function declares 1 key"]
    );
    assert_eq!(
        errors("return ARGV[1] .. ARGV[2]", &signature(0, 1)),
        ["1:19+7 `ARGV[2]` is out of range: the Rust function declares 1 argument"]
    );
    let analysis = analyze("return KEYS[2]", &signature(0, 0));
    let hints: Vec<_> = analysis.errors().filter_map(|d| d.help.clone()).collect();
    assert_eq!(
        hints,
        [
            "the Rust function needs a key parameter for it (keys = 2), or the script must read one of the declared keys"
        ]
    );
}

#[test]
fn index_zero_and_negative_are_always_nil() {
    assert_eq!(
        errors("return KEYS[0] or ARGV[-1] or KEYS[1]", &signature(1, 0)),
        [
            "1:8+7 `KEYS[0]` is always nil: Lua arrays start at 1",
            "1:19+8 `ARGV[-1]` is always nil: Lua arrays start at 1",
        ]
    );
}

#[test]
fn declared_parameters_must_be_read() {
    assert_eq!(
        error_messages("return redis.call('GET', KEYS[1])", &signature(2, 1)),
        [
            "key parameter 2 (`KEYS[2]`) is never read by the script",
            "argument parameter 1 (`ARGV[1]`) is never read by the script",
        ]
    );
    let opted_out = Signature {
        allow_unused: true,
        ..signature(2, 1)
    };
    assert_clean("return redis.call('GET', KEYS[1])", &opted_out);
}

#[test]
fn unread_parameter_is_named_and_the_hint_fits_its_position() {
    let named = Signature {
        key_names: vec!["lock".into()],
        arg_names: vec!["token".into(), "ttl_ms".into(), "reason".into()],
        ..signature(1, 3)
    };
    let analysis = analyze("return redis.call('GET', KEYS[1]) == ARGV[1]", &named);
    let found: Vec<(String, Option<String>, Option<Parameter>)> = analysis
        .errors()
        .map(|d| (d.text(), d.help.clone(), d.parameter))
        .collect();
    assert_eq!(
        found,
        [
            (
                "`ttl_ms` (`ARGV[2]`) is never read by the script".to_string(),
                Some("read ARGV[2] in the script, or name it `_ttl_ms` if the script ignores it on purpose (removing it would shift the arguments after it to other ARGV positions)".to_string()),
                Some(Parameter::Arg(2)),
            ),
            (
                "`reason` (`ARGV[3]`) is never read by the script".to_string(),
                Some("read ARGV[3] in the script, remove `reason`, or name it `_reason` if the script ignores it on purpose".to_string()),
                Some(Parameter::Arg(3)),
            ),
        ]
    );
}

#[test]
fn parameters_named_with_an_underscore_may_go_unread() {
    let named = Signature {
        key_names: vec!["lock".into(), "_audit".into()],
        arg_names: vec!["_ttl_ms".into()],
        ..signature(2, 1)
    };
    assert_clean("return redis.call('GET', KEYS[1])", &named);
}

#[test]
fn unused_parameter_points_at_its_header_line() {
    let source = "-- KEYS[1] = a\n-- ARGV[1] = ttl\nreturn redis.call('GET', KEYS[1])";
    assert_eq!(
        errors(source, &signature(1, 1)),
        ["2:1+1 argument parameter 1 (`ARGV[1]`) is never read by the script"]
    );
}

#[test]
fn dynamic_reads_with_fixed_parameters_are_accepted() {
    // Each of these may read any declared key or argument, so none of them
    // is reported as never read.
    for source in [
        "for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end",
        "return redis.call('DEL', unpack(KEYS)) + #ARGV",
        "for _, a in ipairs(ARGV) do redis.call('SADD', KEYS[1], a) end\nreturn KEYS[2]",
        "for k in pairs(KEYS) do redis.call('DEL', KEYS[k]) end\nreturn select('#', unpack(ARGV))",
        "local function f(t) return t end\nreturn redis.call('MGET', unpack(f(KEYS))) or ARGV",
        "local k = KEYS\nreturn redis.call('GET', k[1]) .. ARGV[1]",
        "local i = tonumber(ARGV[1])\nreturn redis.call('GET', KEYS[i])",
    ] {
        assert_clean(source, &signature(2, 1));
    }
}

#[test]
fn dynamic_reads_do_not_excuse_literal_indices_out_of_range() {
    assert_eq!(
        errors(
            "for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end\nreturn KEYS[3]",
            &signature(2, 0)
        ),
        ["2:8+7 `KEYS[3]` is out of range: the Rust function declares 2 keys"]
    );
    // Reading KEYS dynamically says nothing about ARGV.
    assert_eq!(
        error_messages(
            "for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end",
            &signature(2, 1)
        ),
        ["argument parameter 1 (`ARGV[1]`) is never read by the script"]
    );
}

#[test]
fn variadic_parameters_need_dynamic_access() {
    let variadic = Signature {
        variadic_keys: true,
        ..signature(1, 0)
    };
    assert_eq!(
        error_messages("return redis.call('GET', KEYS[1])", &variadic),
        [
            "the Rust function passes a variadic list of keys, but the script reads KEYS only at fixed indices: extra keys would be ignored"
        ]
    );
    assert_clean(
        "redis.call('GET', KEYS[1])\nfor i = 2, #KEYS do redis.call('DEL', KEYS[i]) end",
        &variadic,
    );
    // Literal indices above the fixed count are part of the slice, but
    // only a loop (or `#KEYS`, `unpack`) reads all of it.
    assert_eq!(
        error_messages(
            "return redis.call('GET', KEYS[1]) or redis.call('GET', KEYS[2])",
            &variadic
        ),
        [
            "the Rust function passes a variadic list of keys, but the script reads KEYS only at fixed indices: extra keys would be ignored"
        ]
    );
    assert_clean(
        "local first = redis.call('GET', KEYS[2])\nreturn redis.call('MGET', unpack(KEYS))",
        &variadic,
    );
}

#[test]
fn parameter_messages_name_who_declares_the_counts() {
    let by = |declared_by, keys, variadic_keys| Signature {
        keys,
        variadic_keys,
        declared_by,
        ..Signature::default()
    };
    let found = |source: &str, signature: &Signature| -> Vec<(String, String)> {
        analyze(source, signature)
            .errors()
            .map(|d| (d.text(), d.help.clone().unwrap_or_default()))
            .collect()
    };
    let pair = |message: &str, hint: &str| (message.to_string(), hint.to_string());
    assert_eq!(
        found("return KEYS[2]", &by(DeclaredBy::Header, 1, false)),
        [
            pair(
                "key parameter 1 (`KEYS[1]`) is never read by the script",
                "use KEYS[1] in the script, remove it from the header, or opt out with `--allow-unused`"
            ),
            pair(
                "`KEYS[2]` is out of range: the script's header declares 1 key",
                "document it in the header (`-- KEYS[2] = …`), or the script must read one of the declared keys"
            ),
        ]
    );
    assert_eq!(
        found("return KEYS[2]", &by(DeclaredBy::CommandLine, 1, false)),
        [
            pair(
                "key parameter 1 (`KEYS[1]`) is never read by the script",
                "use KEYS[1] in the script, pass a smaller `--keys`, or opt out with `--allow-unused`"
            ),
            pair(
                "`KEYS[2]` is out of range: the command line declares 1 key",
                "pass `--keys 2`, or the script must read one of the declared keys"
            ),
        ]
    );
    assert_eq!(
        found("return KEYS[1]", &by(DeclaredBy::Header, 1, true)),
        [pair(
            "the script's header declares a variadic list of keys (`KEYS[2..]`), but the script reads KEYS only at fixed indices: extra keys would be ignored",
            "iterate the extra keys (`for i = 2, #KEYS do … KEYS[i] … end`), or document `KEYS[2]` instead of `KEYS[2..]`"
        )]
    );
    assert_eq!(
        found("return KEYS[1]", &by(DeclaredBy::CommandLine, 1, true)),
        [pair(
            "`--keys 1+` declares a variadic list of keys, but the script reads KEYS only at fixed indices: extra keys would be ignored",
            "iterate the extra keys (`for i = 2, #KEYS do … KEYS[i] … end`), or pass `--keys 1` without `+`"
        )]
    );
}

#[test]
fn constant_folded_indices_are_literal() {
    let source = "local n = 1\nlocal FIRST, SECOND = 1, n + 1\nreturn ARGV[n] .. ARGV[n + 1] .. ARGV[SECOND * 1] .. ARGV[FIRST]";
    assert_clean(source, &signature(0, 2));
    assert_eq!(
        errors(
            "local n = 2\nreturn ARGV[n + 1] .. ARGV[1] .. ARGV[2]",
            &signature(0, 2)
        ),
        ["2:8+11 `ARGV[3]` is out of range: the Rust function declares 2 arguments"]
    );
}

#[test]
fn reassigned_locals_are_not_constants() {
    let source =
        "local n = 1\nlocal s = ''\nwhile n <= 2 do s = s .. ARGV[n]; n = n + 1 end\nreturn s";
    // `n` is not a constant: `ARGV[n]` is a dynamic read, fine with fixed
    // arguments and counted as reading both.
    assert_clean(source, &signature(0, 2));
    let closure = "local i = 1\nlocal function bump() i = i + 1 end\nbump()\nreturn KEYS[i]";
    let variadic = Signature {
        variadic_keys: true,
        ..signature(0, 0)
    };
    assert_clean(closure, &variadic);
}

// ----- rule 3: globals and scopes ----------------------------------------

#[test]
fn global_writes_are_refused() {
    assert_eq!(
        error_messages(
            "x = 1\nfunction f() end\nstring.x = 1\nredis.call = nil\nfunction string.trim(s) return s end\nreturn 1",
            &signature(0, 0)
        ),
        [
            "assignment to global variable `x`: Redis scripts cannot create or change globals (Attempt to modify a readonly table)",
            "function `f` is declared as a global: Redis scripts cannot create globals (Attempt to modify a readonly table)",
            "assignment to `string.x` changes the read-only `string` table: Redis fails with \"Attempt to modify a readonly table\"",
            "assignment to `redis.call` changes the read-only `redis` table: Redis fails with \"Attempt to modify a readonly table\"",
            "assignment to `string.trim` changes the read-only `string` table: Redis fails with \"Attempt to modify a readonly table\"",
        ]
    );
}

#[test]
fn a_one_word_error_reply_is_sent_with_the_generic_code() {
    let analysis = analyze(
        "if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('GONE') end\nreturn redis.error_reply('-EXPIRED since ' .. ARGV[1])",
        &signature(1, 1),
    );
    assert!(analysis.errors().next().is_none());
    let notes: Vec<String> = analysis
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| d.text())
        .collect();
    assert_eq!(
        notes,
        [
            "`redis.error_reply('GONE')` reaches the client as `ERR GONE`: Redis reads the first word as the error code only when a message follows it"
        ]
    );
    let codes: Vec<&str> = analysis
        .error_codes
        .codes
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(codes, ["ERR", "EXPIRED"]);
}

#[test]
fn a_refused_global_is_reported_once() {
    assert_eq!(
        error_messages(
            "current = redis.call('INCR', KEYS[1])\nif current == 1 then redis.call('EXPIRE', KEYS[1], 10) end\nif current > 5 then return {0, current} end\nfunction bump() return current + 1 end\nreturn bump()",
            &signature(1, 0)
        ),
        [
            "assignment to global variable `current`: Redis scripts cannot create or change globals (Attempt to modify a readonly table)",
            "function `bump` is declared as a global: Redis scripts cannot create globals (Attempt to modify a readonly table)",
        ]
    );
}

#[test]
fn undefined_globals_and_members_get_suggestions() {
    let analysis = analyze(
        "local count = 0\nlocal a = redsi.call('GET', KEYS[1])\nlocal b = redis.cal('GET', KEYS[1])\nlocal c = string.fromat('%d', cuont)\nreturn {a, b, c}",
        &signature(1, 0),
    );
    let found: Vec<(String, Option<String>)> = analysis
        .errors()
        .map(|d| {
            (
                format!("{}:{}+{} {}", d.line, d.column, d.width, d.text()),
                d.help.clone(),
            )
        })
        .collect();
    let hint = |text: &str| Some(text.to_string());
    assert_eq!(
        found,
        [
            ("2:11+5 `redsi` is not defined: Redis fails with \"Script attempted to access nonexistent global variable 'redsi'\"".to_string(), hint("did you mean `redis.call`?")),
            ("3:17+3 `redis.cal` does not exist: the `redis` library has no member `cal`, so calling it fails with \"attempt to call field 'cal' (a nil value)\"".to_string(), hint("did you mean `redis.call`?")),
            ("4:18+6 `string.fromat` does not exist: the `string` library has no member `fromat`, so calling it fails with \"attempt to call field 'fromat' (a nil value)\"".to_string(), hint("did you mean `string.format`?")),
            ("4:31+5 `cuont` is not defined: Redis fails with \"Script attempted to access nonexistent global variable 'cuont'\"".to_string(), hint("did you mean `count`?")),
        ]
    );
}

/// Every diagnostic as `line:column+width message`, notes included.
fn diagnostics(source: &str, signature: &Signature) -> Vec<String> {
    analyze(source, signature)
        .diagnostics
        .iter()
        .map(|d| {
            format!(
                "{:?} {}:{}+{} {}",
                d.severity,
                d.line,
                d.column,
                d.width,
                d.text()
            )
        })
        .collect()
}

#[test]
fn missing_library_members_may_be_tested() {
    // Lua 5.1 reads a missing member as nil; only calling or indexing it
    // raises. Feature tests for newer Lua are fine, and so is code that runs
    // only when the member exists.
    for source in [
        "local items = {1, 2}\nlocal n = #{(table.unpack or unpack)(items)}\nreturn n",
        "if table.unpack then\n  return 1\nend\nreturn 0",
        "if table.unpack then return table.unpack(ARGV) end\nreturn unpack(ARGV)",
        "if type(table.pack) == 'function' then return table.pack(1, 2) end\nreturn {1, 2}",
        "if table.unpack ~= nil and #ARGV > 0 then return table.unpack(ARGV) end\nreturn 0",
        "local move = table.move\nif move then move(ARGV, 1, 2, 1, {}) end\nreturn 0",
        "return table.unpack and table.unpack(ARGV) or unpack(ARGV)",
        "while table.unpack do return table.unpack(ARGV) end\nreturn not table.pack",
    ] {
        assert_eq!(
            diagnostics(source, &signature(0, 0)),
            Vec::<String>::new(),
            "{source}"
        );
    }
}

#[test]
fn missing_library_members_fail_when_called_or_indexed() {
    let analysis = analyze("return table.unpack(ARGV)", &signature(0, 0));
    let found: Vec<_> = analysis
        .errors()
        .map(|d| {
            (
                format!("{}:{}+{} {}", d.line, d.column, d.width, d.text()),
                d.help.clone(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [(
            "1:14+6 `table.unpack` does not exist: the `table` library has no member `unpack`, so calling it fails with \"attempt to call field 'unpack' (a nil value)\"".to_string(),
            Some("Lua 5.1 has `unpack` as a global: write `unpack(t)`, or `(table.unpack or unpack)(t)` in code shared with newer Lua".to_string()),
        )]
    );
    assert_eq!(
        diagnostics(
            "local a = string.codes.x\nlocal b = string.utf8:len()\nlocal f = table.pack\nreturn f(a, b)",
            &signature(0, 0)
        ),
        [
            "Error 1:18+5 `string.codes` does not exist: the `string` library has no member `codes`, so indexing it fails with \"attempt to index field 'codes' (a nil value)\"",
            "Error 2:18+4 `string.utf8` does not exist: the `string` library has no member `utf8`, so indexing it fails with \"attempt to index field 'utf8' (a nil value)\"",
            "Error 3:17+4 `table.pack` does not exist: the `table` library has no member `pack`, so calling it fails with \"attempt to call field 'pack' (a nil value)\"",
        ]
    );
    // A guard protects only the code it governs.
    assert_eq!(
        error_messages(
            "if table.unpack then return 1 end\nreturn table.unpack(ARGV)",
            &signature(0, 0)
        )
        .len(),
        1
    );
}

#[test]
fn missing_library_members_passed_along_are_notes() {
    let analysis = analyze(
        "redis.log(redis.LOG_NOTIC, 'slow')\nreturn redis.call('GET', KEYS[1])",
        &signature(1, 0),
    );
    assert!(analysis.errors().next().is_none());
    let notes: Vec<_> = analysis
        .diagnostics
        .iter()
        .map(|d| {
            (
                format!("{}:{}+{} {}", d.line, d.column, d.width, d.text()),
                d.help.clone(),
            )
        })
        .collect();
    assert_eq!(
        notes,
        [(
            "1:17+9 `redis.LOG_NOTIC` does not exist: the `redis` library has no member `LOG_NOTIC`, so this reads nil".to_string(),
            Some("did you mean `redis.LOG_NOTICE`?".to_string()),
        )]
    );
}

#[test]
fn scopes_do_not_produce_false_positives() {
    let source = r#"
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
local total = 0
for i = 1, 3 do
  local squared = i * i
  total = total + squared
end
for index, value in ipairs({10, 20}) do
  total = total + index + value
end
local t = {}
function t.method(self_, x) return x end
function t:other(y) return self, y end
local done = false
repeat
  local inner = total
  done = inner > 0
until inner >= 0 and done
do
  local shadow = 1
  local shadow = shadow + 1
  total = total + shadow
end
local varargs = function(...) return select('#', ...) end
local packed = {...}
local x = (function(a, b) return a or b end)(1, 2)
return {fib(5), total, varargs(1, 2), #packed, x, t.method(nil, 1), _VERSION, KEYS[1]}
"#;
    assert_clean(source, &signature(1, 0));
}

#[test]
fn locals_are_only_visible_in_their_block() {
    assert_eq!(
        error_messages("do local inner = 1 end\nreturn inner", &signature(0, 0)),
        [
            "`inner` is not defined: Redis fails with \"Script attempted to access nonexistent global variable 'inner'\""
        ]
    );
    assert_eq!(
        error_messages("for i = 1, 2 do end\nreturn i", &signature(0, 0)).len(),
        1
    );
    // A local is not in scope in its own initializer.
    assert_eq!(
        error_messages(
            "local fact = function(n) return n * fact(n - 1) end\nreturn fact(1)",
            &signature(0, 0)
        ),
        [
            "`fact` is not defined: Redis fails with \"Script attempted to access nonexistent global variable 'fact'\""
        ]
    );
}

#[test]
fn vararg_outside_a_vararg_function() {
    assert_eq!(
        errors(
            "local function f() return ... end\nreturn f()",
            &signature(0, 0)
        ),
        [
            "1:27+3 `...` is used in a function that does not declare `...`: Lua 5.1 refuses to compile this"
        ]
    );
}

// ----- rule 4: redis.call ------------------------------------------------

#[test]
fn commands_are_checked_against_the_table() {
    let cases = [
        (
            "return redis.call('GETT', KEYS[1])",
            "1:19+6 unknown Redis command `GETT`: the call fails at run time",
        ),
        (
            "return redis.call('EVAL', 'return 1', 0)",
            "1:19+6 `EVAL` cannot be called from a script: Redis marks it `noscript`",
        ),
        (
            "return redis.call('subscribe', 'news')",
            "1:19+11 `SUBSCRIBE` cannot be called from a script: Redis marks it `noscript`",
        ),
        (
            "return redis.call('GET', KEYS[1], KEYS[1])",
            "1:8+35 `GET` takes exactly 1 argument after its name, but this call passes 2: Redis fails with \"Wrong number of args calling Redis command from script\"",
        ),
        (
            "return redis.pcall('SET', KEYS[1])",
            "1:8+27 `SET` takes at least 2 arguments after its name, but this call passes 1: Redis fails with \"Wrong number of args calling Redis command from script\"",
        ),
        (
            "return redis.call('CONFIG', 'GETT', 'x')",
            "1:29+6 unknown subcommand `CONFIG GETT`: the call fails at run time",
        ),
        (
            "return redis.call('OBJECT', 'ENCODING')",
            "1:8+32 `OBJECT ENCODING` takes exactly 1 argument after its name, but this call passes 0: Redis fails with \"Wrong number of args calling Redis command from script\"",
        ),
        (
            "local rcall = redis.call\nreturn rcall('HGET', KEYS[1])",
            "2:8+22 `HGET` takes exactly 2 arguments after its name, but this call passes 1: Redis fails with \"Wrong number of args calling Redis command from script\"",
        ),
        (
            "local r = redis\nreturn r.pcall('GETT', KEYS[1])",
            "2:16+6 unknown Redis command `GETT`: the call fails at run time",
        ),
    ];
    let lenient = Signature {
        allow_unused: true,
        ..signature(1, 0)
    };
    for (source, expected) in cases {
        assert_eq!(errors(source, &lenient), [expected], "{source}");
    }
}

#[test]
fn arity_is_not_checked_when_the_count_is_unknown() {
    let variadic_keys = Signature {
        variadic_keys: true,
        ..signature(1, 0)
    };
    assert_clean(
        "return redis.call('DEL', KEYS[1], unpack(KEYS, 2))",
        &variadic_keys,
    );
    let variadic = Signature {
        variadic_args: true,
        ..signature(1, 0)
    };
    assert_clean(
        "local function f(...) return redis.call('MGET', ...) end\nreturn f(KEYS[1], unpack(ARGV))",
        &variadic,
    );
    // A parenthesised call passes exactly one value.
    assert_eq!(
        error_messages(
            "return redis.call('GET', KEYS[1], (unpack(ARGV)))",
            &variadic
        )
        .len(),
        1
    );
}

// ----- rule 5: key discipline --------------------------------------------

#[test]
fn keys_must_come_from_keys() {
    let cases = [
        (
            "return redis.call('GET', 'literal')",
            "1:26+9 key argument `'literal'` of `GET` does not come from KEYS (the string literal 'literal'): Redis Cluster routes the script by KEYS only, so this key may live on another node",
        ),
        (
            "return redis.call('GET', 'lock:' .. ARGV[1])",
            "1:26+18 key argument `'lock:' .. ARGV[1]` of `GET` does not come from KEYS (a string built at run time, starting with the literal 'lock:'): Redis Cluster routes the script by KEYS only, so this key may live on another node",
        ),
        (
            "return redis.call('SET', ARGV[1], 1)",
            "1:26+7 key argument `ARGV[1]` of `SET` does not come from KEYS (ARGV[1], an argument): Redis Cluster routes the script by KEYS only, so this key may live on another node",
        ),
        (
            "return redis.call('INCR', 42)",
            "1:27+2 key argument `42` of `INCR` does not come from KEYS (a number): Redis Cluster routes the script by KEYS only, so this key may live on another node",
        ),
        (
            "local k = redis.call('GET', KEYS[1]) .. ':x'\nreturn redis.call('GET', k)",
            "2:26+1 key argument `k` of `GET` does not come from KEYS (a value read from the reply of `GET` at line 1): Redis Cluster routes the script by KEYS only, so this key may live on another node",
        ),
        (
            "local rcall = redis.call\nreturn rcall('LMOVE', KEYS[1], ARGV[1], 'LEFT', 'RIGHT')",
            "2:32+7 key argument `ARGV[1]` of `LMOVE` does not come from KEYS (ARGV[1], an argument): Redis Cluster routes the script by KEYS only, so this key may live on another node",
        ),
    ];
    let lenient = Signature {
        allow_unused: true,
        ..signature(1, 1)
    };
    for (source, expected) in cases {
        assert_eq!(errors(source, &lenient), [expected], "{source}");
    }
}

#[test]
fn key_discipline_follows_values_and_opt_outs() {
    let lenient = Signature {
        allow_unused: true,
        variadic_keys: true,
        ..signature(1, 1)
    };
    // From KEYS, directly, through locals, loops and dynamic indices.
    assert_clean(
        "local k = KEYS[1]\nredis.call('GET', k)\nfor _, key in ipairs(KEYS) do redis.call('DEL', key) end\nfor i = 2, #KEYS do redis.call('DEL', KEYS[i]) end",
        &lenient,
    );
    let lenient = Signature {
        variadic_keys: false,
        ..lenient
    };
    assert_clean("return redis.call('GET', tostring(KEYS[1]))", &lenient);
    // Unknown provenance (parameters, table fields, call results) is not flagged.
    assert_clean(
        "local function get(key) return redis.call('GET', key) end\nlocal t = {k = KEYS[1]}\nredis.call('GET', t.k)\nreturn get(KEYS[1])",
        &lenient,
    );
    // Arguments that are not keys are not checked.
    assert_clean(
        "return redis.call('SET', KEYS[1], 'value', 'PX', 100)",
        &lenient,
    );
    // Opt-outs.
    assert_clean(
        "#!lua flags=allow-cross-slot-keys\nreturn redis.call('GET', 'x' .. KEYS[1])",
        &lenient,
    );
    let dynamic = Signature {
        dynamic_keys: true,
        ..lenient.clone()
    };
    assert_clean("return redis.call('GET', ARGV[1] .. KEYS[1])", &dynamic);
    // Keys found through numkeys.
    assert_eq!(
        error_messages(
            "return redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[1], 'other')",
            &lenient
        ),
        [
            "key argument `'other'` of `ZUNIONSTORE` does not come from KEYS (the string literal 'other'): Redis Cluster routes the script by KEYS only, so this key may live on another node"
        ]
    );
}

// ----- rule 6: shebang ---------------------------------------------------

#[test]
fn shebang_mistakes() {
    assert_eq!(
        errors("#!python\nreturn 1", &signature(0, 0)),
        ["1:3+6 unknown script engine `python` in the shebang: Redis only runs `lua`"]
    );
    assert_eq!(
        errors(
            "#!lua name=mylib flags=no-write\nreturn 1",
            &signature(0, 0)
        ),
        [
            "1:1+31 this file is a function library (`#!lua name=mylib`), not a script: EVAL refuses `name=`, the library is loaded with FUNCTION LOAD and its functions are called with FCALL"
        ]
    );
    assert_eq!(
        errors("#!lua timeout=5\nreturn 1", &signature(0, 0)),
        [
            "1:7+9 unknown shebang option `timeout=5`: Redis would refuse the script (Unknown lua shebang option)"
        ]
    );
}

#[test]
fn no_writes_scripts_cannot_write() {
    let lenient = Signature {
        allow_unused: true,
        ..signature(1, 0)
    };
    assert_eq!(
        errors(
            "#!lua flags=no-writes\nredis.call('GET', KEYS[1])\nreturn redis.call('SET', KEYS[1], 1)",
            &lenient
        ),
        [
            "3:19+5 `SET` is a write command, but the script declares `#!lua flags=no-writes`: Redis refuses it (Write commands are not allowed from read-only scripts)"
        ]
    );
    assert_eq!(
        error_messages(
            "#!lua flags=no-writes\nreturn redis.call('PUBLISH', 'news', 'hi')",
            &lenient
        ),
        [
            "`PUBLISH` is a write command, but the script declares `#!lua flags=no-writes`: Redis refuses it (Write commands are not allowed from read-only scripts)"
        ]
    );
}

#[test]
fn no_writes_scripts_follow_the_module_registrations() {
    let lenient = Signature {
        allow_unused: true,
        ..signature(1, 1)
    };
    assert_eq!(
        error_messages(
            "#!lua flags=no-writes\nreturn redis.call('JSON.SET', KEYS[1], '$', ARGV[1])",
            &lenient
        ),
        [
            "`JSON.SET` is a write command, but the script declares `#!lua flags=no-writes`: Redis refuses it (Write commands are not allowed from read-only scripts)"
        ]
    );
    for call in [
        "redis.call('JSON.GET', KEYS[1])",
        "redis.call('TS.RANGE', KEYS[1], '-', '+')",
        "redis.call('BF.EXISTS', KEYS[1], ARGV[1])",
        "redis.call('FT.SEARCH', 'idx', ARGV[1])",
    ] {
        assert_clean(&format!("#!lua flags=no-writes\nreturn {call}"), &lenient);
    }
}

#[test]
fn module_reads_are_read_only_and_module_writes_are_not() {
    let lenient = Signature {
        allow_unused: true,
        ..signature(1, 1)
    };
    assert!(analyze("return redis.call('JSON.GET', KEYS[1])", &lenient).read_only);
    assert!(analyze("return redis.call('FT.SEARCH', 'idx', ARGV[1])", &lenient).read_only);
    assert!(
        !analyze(
            "return redis.call('JSON.SET', KEYS[1], '$', ARGV[1])",
            &lenient
        )
        .read_only
    );
    assert!(
        !analyze(
            "redis.call('JSON.GET', KEYS[1])\nreturn redis.call('TS.ADD', KEYS[1], '*', ARGV[1])",
            &lenient
        )
        .read_only
    );
}

#[test]
fn read_only_is_derived_from_reachable_commands() {
    let lenient = Signature {
        allow_unused: true,
        ..signature(1, 1)
    };
    assert!(analyze("return redis.call('GET', KEYS[1])", &lenient).read_only);
    assert!(!analyze("return redis.call('SET', KEYS[1], 1)", &lenient).read_only);
    assert!(!analyze("local r = redis.call\nreturn r('DEL', KEYS[1])", &lenient).read_only);
    assert!(!analyze("return redis.call('PUBLISH', 'c', 'm')", &lenient).read_only);
    assert!(!analyze("return redis.call(ARGV[1], KEYS[1])", &lenient).read_only);
    assert!(
        analyze(
            "#!lua flags=no-writes\nreturn redis.call(ARGV[1], KEYS[1])",
            &lenient
        )
        .read_only
    );
    assert!(analyze("return redis.call('OBJECT', 'ENCODING', KEYS[1])", &lenient).read_only);
    let flags = analyze("#!lua flags=no-writes,allow-oom\nreturn 1", &lenient).flags;
    assert!(flags.has_shebang && flags.no_writes && flags.allow_oom && !flags.no_cluster);
}

// ----- rule 7: hazards -----------------------------------------------------

#[test]
fn absent_functions_are_errors_with_hints() {
    let analysis = analyze(
        "print('x')\nlocal t = os.time()\nio.write('x')\nlocal m = require('m')\nreturn getfenv",
        &signature(0, 0),
    );
    let found: Vec<(String, Option<String>)> = analysis
        .errors()
        .map(|d| (d.text(), d.help.clone()))
        .collect();
    let mut expected = [
        ("print", "log with `redis.log(redis.LOG_NOTICE, message)`"),
        ("os", "read the server clock with `redis.call('TIME')`, or pass the time in through ARGV"),
        ("io", "scripts cannot do file or console I/O; pass data in through ARGV and return results"),
        ("require", "scripts cannot load code; cjson, cmsgpack, bit and struct are preloaded globals, and other code must be inlined"),
        ("getfenv", "pass values explicitly instead of using function environments"),
    ]
    .map(|(name, hint)| {
        (
            format!("`{name}` is not available in Redis scripts: reading it fails at run time"),
            Some(hint.to_string()),
        )
    });
    // `os` exists since Redis 7.4 and Valkey 8.0, with `os.clock` only.
    expected[1].0 =
        "`os.time` does not exist: the `os` library has no member `time`, so calling it fails with \"attempt to call field 'time' (a nil value)\"".into();
    assert_eq!(found, expected);
}

#[test]
fn risky_functions_get_notes_not_errors() {
    let analysis = analyze(
        "local f = loadstring('return 1')\nreturn f()",
        &signature(0, 0),
    );
    assert!(analysis.errors().next().is_none());
    let notes: Vec<String> = analysis.diagnostics.iter().map(|d| d.text()).collect();
    assert_eq!(
        notes,
        [
            "`loadstring` compiles a string into code at run time, which is not checked at compile time"
        ]
    );
}

// ----- header --------------------------------------------------------------

#[test]
fn header_contradicting_the_signature_is_a_note() {
    let source = "-- Reads a key.\n-- KEYS[1] = a, KEYS[2] = b\nreturn redis.call('GET', KEYS[1])";
    let analysis = analyze(source, &signature(1, 0));
    assert!(analysis.errors().next().is_none());
    let notes: Vec<String> = analysis
        .diagnostics
        .iter()
        .map(|d| format!("{}:{}+{} {}", d.line, d.column, d.width, d.text()))
        .collect();
    assert_eq!(
        notes,
        ["2:17+7 the header documents `KEYS[2]`, but the Rust function declares 1 key"]
    );
    assert_eq!(
        analysis.header.doc,
        ["Reads a key.", "KEYS[1] = a, KEYS[2] = b"]
    );
}

// ----- every message has a self-contained first line and a hint ------------

#[test]
fn every_diagnostic_has_a_hint_and_one_line() {
    let sources = [
        "x = 1\nprint(redsi)\nreturn redis.call('GETT', 'a' .. ARGV[9], KEYS[0])",
        "#!lua flags=nope name=x\nlocal a = 1 // 2",
        "return redis.call('SET', 1)\n",
    ];
    for source in sources {
        for diagnostic in analyze(source, &signature(1, 1)).diagnostics {
            assert!(diagnostic.help.is_some(), "{diagnostic:?}");
            assert!(!diagnostic.message.contains('\n'), "{diagnostic:?}");
            assert!(diagnostic.width >= 1 && diagnostic.line >= 1 && diagnostic.column >= 1);
        }
    }
}

// ----- return shapes -------------------------------------------------------

fn shapes(source: &str) -> Vec<ReturnShape> {
    let lenient = Signature {
        allow_unused: true,
        ..signature(1, 2)
    };
    analyze(source, &lenient)
        .returns
        .into_iter()
        .map(|site| site.shape)
        .collect()
}

#[test]
fn tagged_and_array_returns() {
    let source = "local n = tonumber(redis.call('INCR', KEYS[1]))\nif n > 10 then return {'DENIED', n, 1.5} end\nlocal TAG = 'ALLOWED'\nif n > 5 then return {TAG, n, redis.call('PTTL', KEYS[1])} end\nif n > 3 then return {'MANY', unpack(ARGV)} end\nreturn {n, 'x', true, nil}";
    assert_eq!(
        shapes(source),
        [
            ReturnShape::Tagged {
                tag: "DENIED".into(),
                elements: vec![ValueKind::Integer, ValueKind::Float],
                open_ended: false
            },
            ReturnShape::Tagged {
                tag: "ALLOWED".into(),
                elements: vec![ValueKind::Integer, ValueKind::Integer],
                open_ended: false
            },
            ReturnShape::Tagged {
                tag: "MANY".into(),
                elements: vec![],
                open_ended: true
            },
            ReturnShape::Array {
                elements: vec![
                    ValueKind::Integer,
                    ValueKind::String(Some("x".into())),
                    ValueKind::Boolean(true),
                    ValueKind::Nil
                ],
                open_ended: false
            },
        ]
    );
}

#[test]
fn status_error_nil_and_scalar_returns() {
    let source = "local e = redis.error_reply\nif ARGV[1] == 'a' then return redis.status_reply('QUEUED') end\nif ARGV[1] == 'b' then return {ok = 'DONE'} end\nif ARGV[1] == 'c' then return redis.error_reply('BUSY try later') end\nif ARGV[1] == 'd' then return {err = 'lowercase message'} end\nif ARGV[1] == 'e' then return e('ALIASED x') end\nif ARGV[1] == 'f' then error({err = 'RAISED now'}) end\nif ARGV[1] == 'g' then return nil end\nif ARGV[1] == 'h' then return end\nif ARGV[1] == 'i' then return 'text' end\nif ARGV[1] == 'j' then return 7 end\nreturn redis.call('GET', KEYS[1])";
    assert_eq!(
        shapes(source),
        [
            ReturnShape::Status(Some("QUEUED".into())),
            ReturnShape::Status(Some("DONE".into())),
            ReturnShape::Error(Some("BUSY".into())),
            ReturnShape::Error(None),
            ReturnShape::Error(Some("ALIASED".into())),
            ReturnShape::Error(Some("RAISED".into())),
            ReturnShape::Nil,
            ReturnShape::Nil,
            ReturnShape::Value(ValueKind::String(Some("text".into()))),
            ReturnShape::Value(ValueKind::Integer),
            ReturnShape::Value(ValueKind::MaybeNil),
        ]
    );
}

#[test]
fn falling_off_the_end() {
    assert_eq!(
        shapes("redis.call('SET', KEYS[1], 1)"),
        [ReturnShape::FallsOffEnd]
    );
    assert_eq!(
        shapes("if ARGV[1] then return 1 else return 2 end"),
        [
            ReturnShape::Value(ValueKind::Integer),
            ReturnShape::Value(ValueKind::Integer)
        ]
    );
    assert_eq!(
        shapes("if ARGV[1] then return 1 end"),
        [
            ReturnShape::Value(ValueKind::Integer),
            ReturnShape::FallsOffEnd
        ]
    );
    assert_eq!(
        shapes("if ARGV[1] then return 1 end\nerror('boom')"),
        [
            ReturnShape::Value(ValueKind::Integer),
            ReturnShape::Error(None)
        ]
    );
    assert_eq!(
        shapes("while true do\n  if ARGV[1] then return 1 end\nend"),
        [ReturnShape::Value(ValueKind::Integer)]
    );
    // Returns inside functions are not the script's reply; the summary of
    // the function gives the type of its calls.
    assert_eq!(
        shapes("local function f() return {'INNER'} end\nreturn f()"),
        [ReturnShape::Value(ValueKind::Table)]
    );
    let site = &analyze(
        "local x = 1\nredis.call('SET', KEYS[1], x)\n",
        &signature(1, 0),
    )
    .returns[0];
    assert_eq!(
        (site.line, site.column, site.shape.clone()),
        (2, 1, ReturnShape::FallsOffEnd)
    );
}

#[test]
fn shebang_followed_by_an_unterminated_comment_is_a_syntax_error() {
    // full_moon 3.0.0 panics on this input when the shebang line is kept.
    let analysis = analyze("#!lua \n --[[", &signature(0, 0));
    let messages: Vec<String> = analysis.errors().map(|d| d.text()).collect();
    assert!(!messages.is_empty());
    assert!(
        messages
            .iter()
            .all(|message| !message.starts_with(INTERNAL_ERROR)),
        "{messages:?}"
    );
}

#[test]
fn scripts_just_under_the_shallow_limit_fit_a_small_stack() {
    // Test threads have 2 MiB of stack, less than any compiler thread;
    // scripts up to SHALLOW_NESTING levels are analysed on the caller's.
    let deepest_shallow = |build: &dyn Fn(usize) -> String| {
        (1..)
            .map(build)
            .take_while(|source| {
                syntax::Prepared::new(source).depth() <= crate::pipeline::SHALLOW_NESTING
            })
            .last()
            .unwrap_or_default()
    };
    let blocks = deepest_shallow(&|depth| {
        format!(
            "{}return 1\n{}",
            "if KEYS[1] then\n".repeat(depth),
            "end\n".repeat(depth)
        )
    });
    let brackets = deepest_shallow(&|depth| {
        format!("return {}KEYS[1]{}", "(".repeat(depth), ")".repeat(depth))
    });
    let operators = deepest_shallow(&|depth| format!("return KEYS[1]{}", " .. 'x'".repeat(depth)));
    for source in [blocks, brackets, operators] {
        assert!(source.len() > 20, "{source}");
        assert_clean(&source, &signature(1, 0));
    }
}

/// A table filled with keys and values in turn spreads into `MSET` and
/// `MSETNX` with a KEYS element at every key position (a lock library's
/// multi-lock), but not into a command that takes every argument as a key.
#[test]
fn tables_of_keys_and_values_in_turn_go_to_mset() {
    let signature = Signature {
        variadic_keys: true,
        variadic_args: true,
        ..Signature::default()
    };
    let pairs = |fill: &str, command: &str| {
        format!(
            "local argv = {{}}\nfor i, key in ipairs(KEYS) do\n{fill}\nend\nreturn redis.call('{command}', unpack(argv))"
        )
    };
    let appended = "  argv[#argv + 1] = key\n  argv[#argv + 1] = ARGV[i]";
    let inserted = "  table.insert(argv, KEYS[i])\n  table.insert(argv, ARGV[i])";
    for fill in [appended, inserted] {
        for command in ["MSETNX", "MSET"] {
            let found = errors(&pairs(fill, command), &signature);
            assert_eq!(found, Vec::<String>::new(), "{command} of\n{fill}");
        }
        // Every argument of DEL is a key: the values are not.
        let found = error_messages(&pairs(fill, "DEL"), &signature);
        assert!(
            found
                .iter()
                .any(|message| message.contains("does not come from KEYS")),
            "{found:?}"
        );
    }
    // A value first: the keys are at the even positions.
    let swapped = "  argv[#argv + 1] = ARGV[i]\n  argv[#argv + 1] = key";
    assert!(
        error_messages(&pairs(swapped, "MSET"), &signature)
            .iter()
            .any(|message| message.contains("does not come from KEYS"))
    );
    // A write at another index than the end ends what is known.
    let elsewhere = "  argv[#argv + 1] = key\n  argv[i] = ARGV[i]";
    assert!(
        error_messages(&pairs(elsewhere, "MSET"), &signature)
            .iter()
            .any(|message| message.contains("does not come from KEYS"))
    );
}

/// An undefined global read in a local function nothing refers to never
/// runs: a warning that says so. Called, or reachable through a name, it
/// fails every call that gets there: an error.
#[test]
fn undefined_globals_in_functions_never_called_are_warnings() {
    let dead = "local function unused()\n  return undefined_thing + 1\nend\nreturn 1";
    let analysis = analyze(dead, &signature(0, 0));
    let [diagnostic] = analysis.diagnostics.as_slice() else {
        panic!("{:?}", analysis.diagnostics)
    };
    assert_eq!(
        (diagnostic.code, diagnostic.severity),
        (Code::UndefinedGlobal, Severity::Warning)
    );
    assert!(
        diagnostic
            .notes
            .iter()
            .any(|note| note.contains("never called")),
        "{diagnostic:?}"
    );
    for live in [
        "local function used()\n  return undefined_thing + 1\nend\nreturn used()",
        "local helper = function() return undefined_thing end\nreturn pcall(helper)",
        "local function outer()\n  local function inner() return undefined_thing end\n  return inner()\nend\nreturn outer()",
    ] {
        assert!(
            errors(live, &signature(0, 0))
                .iter()
                .any(|error| error.contains("`undefined_thing` is not defined")),
            "{live}"
        );
    }
}

/// Keys and arguments split at another place than the script reads them
/// (one key too many declared, and an argument read past the end) is one
/// mistake: reported once, about the split, with the split to declare.
#[test]
fn a_split_at_the_wrong_place_is_reported_once_about_the_split() {
    let source = "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])";
    let declared = |declared_by| Signature {
        keys: 2,
        args: 1,
        declared_by,
        key_names: vec!["lock".to_owned(), "token".to_owned()],
        arg_names: vec!["ttl_ms".to_owned()],
        ..Signature::default()
    };
    let analysis = analyze(source, &declared(DeclaredBy::RustFunction));
    let [diagnostic] = analysis.diagnostics.as_slice() else {
        panic!("{:?}", analysis.diagnostics)
    };
    assert_eq!(diagnostic.parameter, Some(Parameter::KeyCount));
    assert_eq!(
        diagnostic.text(),
        "`keys = 2` splits the parameters where the script does not: it reads keys up to `KEYS[1]` and arguments up to `ARGV[2]` (`token` is an argument)"
    );
    assert_eq!(diagnostic.help.as_deref(), Some("declare `keys = 1`"));
    let command_line = analyze(source, &declared(DeclaredBy::CommandLine));
    let [diagnostic] = command_line.diagnostics.as_slice() else {
        panic!("{:?}", command_line.diagnostics)
    };
    assert!(
        diagnostic
            .text()
            .starts_with("`--keys 2 --args 1` split the parameters")
    );
    assert_eq!(diagnostic.help.as_deref(), Some("pass `--keys 1 --args 2`"));
    // Reads that fit no split: an index out of range, where it is read.
    let past_both = "return redis.call('SET', KEYS[3], ARGV[2])";
    assert!(
        errors(past_both, &declared(DeclaredBy::RustFunction))
            .iter()
            .any(|error| error.contains("`KEYS[3]` is out of range"))
    );
}
