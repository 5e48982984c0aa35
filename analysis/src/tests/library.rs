//! The library analysis: registrations in both forms, the two Functions
//! environments, per-function keys, arguments, flags and replies, and the
//! mistakes FUNCTION LOAD or FCALL would report.

use crate::*;

const QUOTA_LIB: &str = "#!lua name=quota_lib
redis.register_function('fixed_window_allow', function(keys, args)
  local current = redis.call('INCR', keys[1])
  if current == 1 then redis.call('EXPIRE', keys[1], tonumber(args[2])) end
  if current > tonumber(args[1]) then return {0, current} end
  return {1, current}
end)
redis.register_function{function_name = 'quota_peek', callback = function(keys) return redis.call('GET', keys[1]) end, flags = {'no-writes'}}
";

fn function(name: &str, keys: usize, args: usize) -> DeclaredFunction {
    DeclaredFunction {
        name: name.to_string(),
        signature: Signature {
            keys,
            args,
            ..Signature::default()
        },
    }
}

fn declaring(functions: Vec<DeclaredFunction>) -> LibrarySignature {
    LibrarySignature {
        functions,
        ..LibrarySignature::default()
    }
}

fn quota_declaration() -> LibrarySignature {
    declaring(vec![
        function("fixed_window_allow", 1, 2),
        function("quota_peek", 1, 0),
    ])
}

/// `line:column message` of every error, with the declared function it is
/// about.
fn errors(source: &str, declaration: &LibrarySignature) -> Vec<String> {
    analyze_library(source, declaration)
        .errors()
        .map(|d| match d.function {
            Some(index) => format!("{}:{} [{index}] {}", d.line, d.column, d.text()),
            None => format!("{}:{} {}", d.line, d.column, d.text()),
        })
        .collect()
}

fn notes(source: &str, declaration: &LibrarySignature) -> Vec<String> {
    analyze_library(source, declaration)
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| format!("{}:{} {}", d.line, d.column, d.text()))
        .collect()
}

/// A library around one positional registration of `body`.
fn one_function(body: &str) -> String {
    format!("#!lua name=lib\nredis.register_function('f', function(keys, args)\n{body}\nend)\n")
}

#[test]
fn the_quota_library_is_clean_and_each_function_is_described() {
    let analysis = analyze_library(QUOTA_LIB, &quota_declaration());
    let rendered: Vec<String> = analysis
        .diagnostics
        .iter()
        .map(|d| d.render("quota_lib.lua", QUOTA_LIB))
        .collect();
    assert!(rendered.is_empty(), "{}", rendered.join("\n"));
    assert_eq!(analysis.name.as_deref(), Some("quota_lib"));
    let [allow, peek] = analysis.functions.as_slice() else {
        panic!("{:?}", analysis.functions)
    };
    assert_eq!(
        (allow.name.as_str(), allow.line, allow.column),
        ("fixed_window_allow", 2, 25)
    );
    assert!(!allow.read_only);
    assert_eq!(allow.declaration, Some(0));
    assert_eq!(
        allow
            .returns
            .iter()
            .map(|site| &site.shape)
            .collect::<Vec<_>>(),
        [&ReturnShape::Array {
            elements: vec![ValueKind::Integer, ValueKind::Integer],
            open_ended: false
        }; 2]
    );
    assert_eq!(peek.name, "quota_peek");
    assert!(peek.flags.no_writes && peek.read_only);
    assert_eq!(peek.declaration, Some(1));
}

#[test]
fn only_no_writes_functions_run_read_only() {
    let source = "#!lua name=l\nredis.register_function('get', function(keys) return redis.call('GET', keys[1]) end)";
    let analysis = analyze_library(source, &declaring(vec![function("get", 1, 0)]));
    // FCALL_RO refuses a function registered without `no-writes`.
    assert!(!analysis.functions[0].read_only);
    assert!(!analysis.functions[0].flags.no_writes);
}

#[test]
fn the_table_form_reads_every_argument() {
    let source = "#!lua name=l\nredis.register_function{\n  function_name = 'peek',\n  description = 'reads the counter',\n  flags = {'no-writes', 'allow-stale', 'allow-oom', 'no-cluster', 'allow-cross-slot-keys'},\n  callback = function(keys) return redis.call('GET', keys[1]) end,\n}";
    let analysis = analyze_library(source, &declaring(vec![function("peek", 1, 0)]));
    assert_eq!(analysis.errors().count(), 0, "{:?}", analysis.diagnostics);
    let peek = &analysis.functions[0];
    assert_eq!(peek.description.as_deref(), Some("reads the counter"));
    let flags = &peek.flags;
    assert!(flags.no_writes && flags.allow_stale && flags.allow_oom);
    assert!(flags.no_cluster && flags.allow_cross_slot_keys);
    assert_eq!((peek.line, peek.column), (3, 19));
}

#[test]
fn a_callback_may_be_a_local_function_defined_above() {
    let source = "#!lua name=l\nlocal function bump(keys, args)\n  return redis.call('INCRBY', keys[1], args[1])\nend\nlocal peek = function(k) return redis.call('GET', k[1]) end\nredis.register_function('bump', bump)\nredis.register_function{function_name = 'peek', callback = peek}";
    let declaration = declaring(vec![function("bump", 1, 1), function("peek", 1, 0)]);
    assert!(
        errors(source, &declaration).is_empty(),
        "{:?}",
        errors(source, &declaration)
    );
    let analysis = analyze_library(source, &declaration);
    assert!(!analysis.functions[0].read_only && !analysis.functions[1].read_only);
}

#[test]
fn keys_and_arguments_are_checked_per_function_under_their_own_names() {
    let source = one_function("return redis.call('SET', keys[2], args[1])");
    assert_eq!(
        errors(&source, &declaring(vec![function("f", 1, 2)])),
        [
            // `keys[2]` is read past the split and `args[2]` is not read:
            // the split is the root cause, reported alone (at `keys =`).
            "2:25 [0] `keys = 1` splits the parameters where the script does not: it reads keys up to `keys[2]` and arguments up to `args[1]`",
            "2:25 [0] key parameter 1 (`keys[1]`) is never read by the script",
        ]
    );
    // Parameters named otherwise are reported under their own names.
    let renamed = "#!lua name=lib\nredis.register_function('f', function(k, a) return k[3] end)";
    assert_eq!(
        errors(renamed, &declaring(vec![function("f", 3, 0)])),
        [
            "2:25 [0] key parameter 1 (`k[1]`) is never read by the script",
            "2:25 [0] key parameter 2 (`k[2]`) is never read by the script",
        ]
    );
}

#[test]
fn keys_must_come_from_the_callbacks_first_parameter() {
    let source = one_function("return redis.call('GET', 'fixed:' .. args[1])");
    assert_eq!(
        errors(&source, &declaring(vec![function("f", 0, 1)])),
        [
            "3:26 key argument `'fixed:' .. args[1]` of `GET` does not come from keys (a string built at run time, starting with the literal 'fixed:'): Redis Cluster routes the call by its keys only, so this key may live on another node"
        ]
    );
}

#[test]
fn functions_have_no_keys_or_argv_globals() {
    let source = one_function("return redis.call('GET', KEYS[1])");
    let analysis = analyze_library(&source, &declaring(vec![function("f", 0, 0)]));
    let [error] = analysis.errors().collect::<Vec<_>>()[..] else {
        panic!("{:?}", analysis.diagnostics)
    };
    assert_eq!(
        error.text(),
        "`KEYS` is not defined in a function: Redis fails with \"Script attempted to access nonexistent global variable 'KEYS'\""
    );
    assert_eq!(
        error.help.as_deref(),
        Some(
            "a function receives its keys as its callback's first parameter: `function(keys, args) … keys[1] … end`"
        )
    );
}

#[test]
fn the_top_level_sees_only_the_load_time_api() {
    let source = "#!lua name=lib\nlocal prefix = string.format('q:%s', 'x')\nredis.log(redis.LOG_NOTICE, 'loading ' .. redis.REDIS_VERSION)\nredis.call('GET', 'x')\nredis.register_function('f', function() return prefix end)";
    assert_eq!(
        errors(source, &declaring(vec![function("f", 0, 0)])),
        [
            "2:16 `string` is not available while the library loads: FUNCTION LOAD fails with \"Script attempted to access nonexistent global variable 'string'\"",
            "4:7 `redis.call` is not available while the library loads: FUNCTION LOAD fails with \"Script attempted to access nonexistent global variable 'call'\"",
        ]
    );
}

#[test]
fn helper_functions_run_with_the_call_time_api() {
    let source = "#!lua name=lib\nlocal function now()\n  return tonumber(redis.call('TIME')[1])\nend\nredis.register_function('f', function() return now() end)";
    assert!(errors(source, &declaring(vec![function("f", 0, 0)])).is_empty());
}

#[test]
fn register_function_exists_only_at_load_time_and_only_at_the_top_level() {
    let inside = one_function("redis.register_function('g', function() return 1 end)\nreturn 1");
    let messages = errors(&inside, &declaring(vec![function("f", 0, 0)]));
    assert_eq!(
        messages,
        [
            "3:7 `redis.register_function` does not exist: the `redis` library has no member `register_function`, so calling it fails with \"attempt to call field 'register_function' (a nil value)\""
        ]
    );
    let looped = "#!lua name=lib\nfor _, name in ipairs({'a'}) do redis.register_function(name, function() return 1 end) end";
    let messages = errors(looped, &LibrarySignature::default());
    assert!(
        messages
            .iter()
            .any(|m| m.contains("must be called as a statement at the top level")),
        "{messages:?}"
    );
}

#[test]
fn write_commands_in_no_writes_functions_are_refused() {
    let source = "#!lua name=lib\nredis.register_function{function_name = 'f', flags = {'no-writes'}, callback = function(keys) return redis.call('SET', keys[1], 'v') end}";
    assert_eq!(
        errors(source, &declaring(vec![function("f", 1, 0)])),
        [
            "2:113 `SET` is a write command, but the function is registered with `flags = {'no-writes'}`: Redis refuses it (Write commands are not allowed from read-only scripts)"
        ]
    );
}

#[test]
fn registration_mistakes_fail_as_function_load_would() {
    let cases: &[(&str, &str)] = &[
        (
            "redis.register_function('f', function() return 1 end, {'no-writes'})",
            "wrong number of arguments to `redis.register_function`",
        ),
        (
            "redis.register_function{function_name = 'f', callback = function() return 1 end, flags = {'no-write'}}",
            "unknown function flag `no-write`",
        ),
        (
            "redis.register_function{function_name = 'f', callback = function() return 1 end, descr = 'x'}",
            "unknown argument `descr` given to `redis.register_function`",
        ),
        (
            "redis.register_function{function_name = 'f'}",
            "`redis.register_function` is missing `callback`",
        ),
        (
            "redis.register_function('bad name', function() return 1 end)",
            "`bad name` is not a valid function name",
        ),
        (
            "local name = 'f'\nredis.register_function(name, function() return 1 end)",
            "the function name is not a string literal",
        ),
        (
            "redis.register_function('f', undefined_callback)",
            "`undefined_callback` is not a function defined above in this file",
        ),
        (
            "redis.register_function('f', function() return 1 end)\nredis.register_function('f', function() return 2 end)",
            "`f` is registered twice (first on line 2)",
        ),
        ("local x = 1", "the library registers no function"),
    ];
    for (code, expected) in cases {
        let source = format!("#!lua name=lib\n{code}");
        let messages = errors(&source, &LibrarySignature::default());
        assert!(
            messages.iter().any(|message| message.contains(expected)),
            "{code}: expected `{expected}` in {messages:?}"
        );
    }
}

#[test]
fn the_first_line_must_name_the_library_and_nothing_else() {
    let body = "\nredis.register_function('f', function() return 1 end)";
    let first_lines: &[(&str, &str)] = &[
        (
            "#!lua",
            "1:1 the library's first line gives no name: FUNCTION LOAD fails with \"Library name was not given\"",
        ),
        (
            "#!lua name=bad-name",
            "1:7 `bad-name` is not a valid library name: FUNCTION LOAD fails with \"Library names can only contain letters, numbers, or underscores(_) and must be at least one character long\"",
        ),
        (
            "#!lua name=lib flags=no-writes",
            "1:16 `flags=no-writes` is not valid in a library's first line: FUNCTION LOAD fails with \"Invalid metadata value given: flags=no-writes\"",
        ),
        (
            "#!lua name=foo name=bar",
            "1:16 the library is named twice: FUNCTION LOAD fails with \"Invalid metadata value, name argument was given multiple times\"",
        ),
        (
            "#!js name=lib",
            "1:3 unknown engine `js` in the library's first line: FUNCTION LOAD fails with \"Engine 'js' not found\"",
        ),
    ];
    for (first_line, expected) in first_lines {
        let source = format!("{first_line}{body}");
        assert_eq!(errors(&source, &LibrarySignature::default()), [*expected]);
    }
}

#[test]
fn declarations_must_name_registered_functions() {
    let declaration = declaring(vec![
        function("fixed_window_alow", 1, 2),
        function("quota_peek", 1, 0),
    ]);
    let analysis = analyze_library(QUOTA_LIB, &declaration);
    let [missing] = analysis.errors().collect::<Vec<_>>()[..] else {
        panic!("{:?}", analysis.diagnostics)
    };
    assert_eq!(missing.function, Some(0));
    assert_eq!(
        missing.text(),
        "the library registers no function `fixed_window_alow`: FCALL would fail with \"Function not found\""
    );
    assert_eq!(
        missing.help.as_deref(),
        Some("did you mean `fixed_window_allow`?")
    );
    // And the function it meant is registered but not declared.
    assert_eq!(
        notes(QUOTA_LIB, &declaration),
        [
            "2:25 `fixed_window_allow` is registered by the library but not declared, so it has no typed call"
        ]
    );
}

#[test]
fn undeclared_functions_are_still_checked() {
    let source = one_function("return redis.call('GETT', keys[1])");
    let messages = errors(&source, &LibrarySignature::default());
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].contains("GETT"), "{messages:?}");
}

#[test]
fn scripts_and_libraries_are_told_apart() {
    let script = "return redis.call('GET', KEYS[1])";
    assert_eq!(
        errors(script, &LibrarySignature::default()),
        [
            "1:1 this file is a script, not a function library: a library starts with `#!lua name=<library>` and registers its functions with `redis.register_function`"
        ]
    );
    let as_script = analyze(QUOTA_LIB, &Signature::default());
    let messages: Vec<String> = as_script.errors().map(|d| d.text()).collect();
    assert_eq!(
        messages,
        [
            "this file is a function library (`#!lua name=quota_lib`), not a script: EVAL refuses `name=`, the library is loaded with FUNCTION LOAD and its functions are called with FCALL"
        ]
    );
}

#[test]
fn replies_and_error_codes_are_per_function() {
    let source = "#!lua name=lib\nredis.register_function('claim', function(keys)\n  if redis.call('SET', keys[1], 1, 'NX') then return {'CLAIMED'} end\n  return redis.error_reply('TAKEN already claimed')\nend)\nredis.register_function('count', function(keys) return redis.call('INCR', keys[1]) end)";
    let analysis = analyze_library(
        source,
        &declaring(vec![function("claim", 1, 0), function("count", 1, 0)]),
    );
    assert_eq!(analysis.errors().count(), 0, "{:?}", analysis.diagnostics);
    let claim = &analysis.functions[0];
    assert!(claim.error_codes.codes.contains("TAKEN"));
    assert!(matches!(&claim.returns[0].shape, ReturnShape::Tagged { tag, .. } if tag == "CLAIMED"));
    let count = &analysis.functions[1];
    assert!(count.error_codes.codes.is_empty());
    assert_eq!(count.returns.len(), 1);
}

#[test]
fn a_callback_that_can_end_without_return_replies_nil() {
    let source = one_function("redis.call('SET', keys[1], args[1])");
    let analysis = analyze_library(&source, &declaring(vec![function("f", 1, 1)]));
    assert_eq!(analysis.errors().count(), 0, "{:?}", analysis.diagnostics);
    assert_eq!(
        analysis.functions[0].returns[0].shape,
        ReturnShape::FallsOffEnd
    );
    assert_eq!(analysis.functions[0].returns[0].line, 4);
}

#[test]
fn first_lines_the_server_loads() {
    let body = "\nredis.register_function('f', function() return 1 end)";
    for first_line in ["#!LUA name=lib", "#!lua NAME=lib", "#!lua name=\"lib\""] {
        let analysis =
            analyze_library(&format!("{first_line}{body}"), &LibrarySignature::default());
        assert_eq!(
            analysis.errors().count(),
            0,
            "{first_line}: {:?}",
            analysis.diagnostics
        );
        assert_eq!(analysis.name.as_deref(), Some("lib"));
    }
}

#[test]
fn registration_arguments_of_the_wrong_kind() {
    let cases = [
        (
            "redis.register_function(nil, function() return 1 end)",
            "2:25 the function name is nil: FUNCTION LOAD fails with \"first argument to redis.register_function must be a string\"",
        ),
        (
            "redis.register_function('f', 'g')",
            "2:30 the callback is a string: FUNCTION LOAD fails with \"second argument to redis.register_function must be a function\"",
        ),
        (
            "redis.register_function{function_name = {}, callback = function() return 1 end}",
            "2:41 the function name is a table: FUNCTION LOAD fails with \"function_name argument given to redis.register_function must be a string\"",
        ),
        (
            "redis.register_function{function_name = 'f', callback = function() return 1 end, description = true}",
            "2:96 the description is a boolean: FUNCTION LOAD fails with \"description argument given to redis.register_function must be a string\"",
        ),
        (
            "redis.register_function{function_name = 'f', callback = function() return 1 end, flags = 'no-writes'}",
            "2:90 `flags` is a string: FUNCTION LOAD fails with \"flags argument to redis.register_function must be a table representing function flags\"",
        ),
        (
            "redis.register_function{function_name = 'f', callback = function() return 1 end, flags = {1}}",
            "2:91 this flag is a number: FUNCTION LOAD fails with \"unknown flag given\"",
        ),
    ];
    for (code, expected) in cases {
        let source = format!("#!lua name=lib\n{code}");
        assert_eq!(
            errors(&source, &LibrarySignature::default()),
            [expected],
            "{code}"
        );
    }
    // FUNCTION LOAD reads the argument names in any case.
    let source = "#!lua name=lib\nredis.register_function{FUNCTION_NAME = 'f', Callback = function() return 1 end}";
    assert_eq!(
        errors(source, &LibrarySignature::default()),
        Vec::<String>::new()
    );
}

#[test]
fn registration_through_a_local_alias_of_redis() {
    let source =
        "#!lua name=lib\nlocal lib = redis\nlib.register_function('f', function() return 1 end)";
    let analysis = analyze_library(source, &LibrarySignature::default());
    assert_eq!(analysis.errors().count(), 0, "{:?}", analysis.diagnostics);
    assert_eq!(analysis.functions.len(), 1);
}

#[test]
fn a_load_that_raises_is_not_also_a_library_without_functions() {
    let source = "#!lua name=lib\nredis.call('PING')";
    let messages = errors(source, &LibrarySignature::default());
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("not available while the library loads"),
        "{messages:?}"
    );
}

#[test]
fn a_shebang_file_registering_functions_is_a_library() {
    assert!(crate::is_library(
        "#!lua\nredis.register_function('f', function() return 1 end)"
    ));
    assert!(crate::is_library("#!LUA name=lib\nreturn 1"));
    assert!(!crate::is_library("#!lua flags=no-writes\nreturn 1"));
}
