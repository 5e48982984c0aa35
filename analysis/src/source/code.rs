//! The stable codes of the diagnostics: one per finding and one per other
//! class of mistake, each with its name, its level, a one-line summary and
//! a long explanation (`redis-script-check --explain RS101`).
//!
//! A code never changes meaning once released: a class that goes away
//! keeps its number unused. The explanations live next to this file, one
//! Markdown file per code, and the crate's guide lists them all (a test
//! keeps the two in step).

use std::fmt;

/// How serious the diagnostics of a code are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Always an error: the build fails.
    Error,
    /// Always a warning: the build goes on.
    Warning,
    /// An error when it happens on every run, a warning when it depends on
    /// data, input or the server the script meets.
    ErrorOrWarning,
}

impl Level {
    /// As the guide's table shows it.
    pub fn describe(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::ErrorOrWarning => "error or warning",
        }
    }
}

macro_rules! codes {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $code:literal, $name:literal, $level:ident, $finding:literal, $summary:literal;
    )*) => {
        /// The code of a diagnostic.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// `RS101`: what messages, JSON and `--explain` show.
            pub fn code(self) -> &'static str {
                match self { $(Code::$variant => $code,)* }
            }

            /// `always_true`: the stable name; a finding's opt-outs take it.
            pub fn name(self) -> &'static str {
                match self { $(Code::$variant => $name,)* }
            }

            /// How serious its diagnostics are.
            pub fn level(self) -> Level {
                match self { $(Code::$variant => Level::$level,)* }
            }

            /// Whether it is a value or safety finding, which
            /// `-- redis-script: allow(name)` can silence.
            pub fn is_finding(self) -> bool {
                match self { $(Code::$variant => $finding,)* }
            }

            /// What it finds, in one line.
            pub fn summary(self) -> &'static str {
                match self { $(Code::$variant => $summary,)* }
            }

            /// The long explanation in Markdown: what the server does, an
            /// example, and the fix.
            pub fn explanation(self) -> &'static str {
                match self {
                    $(Code::$variant => include_str!(concat!("explanations/", $code, ".md")),)*
                }
            }
        }
    };
}

codes! {
    /// Lua 5.1 refuses to compile the script.
    Syntax = "RS001", "syntax", Error, false,
        "Lua 5.1 cannot compile the script: a syntax error, syntax of a later Lua (`//`, `&`, `goto`, `<const>`), nesting past Lua's limit, `...` outside a vararg function";
    /// The `#!lua` line.
    Shebang = "RS002", "shebang", Error, false,
        "the `#!lua` line names an unknown engine, option or flag, or leaves a quote open: the server refuses the script";
    /// The header comment.
    HeaderContradiction = "RS003", "header_contradiction", Warning, false,
        "the header comment documents a key or argument the declaration does not take";
    /// `-- redis-script: allow(…)`.
    AllowDirective = "RS004", "allow_directive", Error, false,
        "an opt-out comment that is malformed or names no finding";
    /// The command-line checker needs the keys and arguments.
    UndeclaredInterface = "RS005", "undeclared_interface", Error, false,
        "the command-line checker was given a script whose keys and arguments neither its header nor the options declare";
    /// A library where a script is declared, or the reverse.
    WrongKindOfFile = "RS006", "wrong_kind_of_file", Error, false,
        "a function library declared as a script, or a script declared as a library";
    /// The command-line checker cannot put a script together as its
    /// loader does.
    UnresolvedInclude = "RS007", "unresolved_include", Error, false,
        "the command-line checker cannot resolve an include or a prelude file: the file is missing, is included twice or in a cycle, or uses a path mapping or pattern it does not expand";
    /// A bug of the analysis itself.
    InternalError = "RS009", "internal_error", Error, false,
        "the analysis stopped on this script: a bug of redis-script, to report";

    /// `KEYS[0]`, `ARGV['id']`, `KEYS[1.5]`.
    InvalidIndex = "RS010", "invalid_index", Error, false,
        "`KEYS` or `ARGV` read at an index that is never an element (`KEYS[0]`, `ARGV['id']`, `KEYS[1.5]`): the read is always nil";
    /// `KEYS[2]` with one key declared.
    IndexOutOfRange = "RS011", "index_out_of_range", Error, false,
        "`KEYS[n]` or `ARGV[n]` past what the declaration passes";
    /// A declared parameter the script never reads.
    UnusedParameter = "RS012", "unused_parameter", Error, false,
        "a declared key or argument the script never reads";
    /// A variadic list read only at fixed indices.
    FixedReadsOfVariadic = "RS013", "fixed_reads_of_variadic", Error, false,
        "a variadic list of keys or arguments that the script reads only at fixed indices, so the extra ones are ignored";
    /// A key that does not come from `KEYS`.
    KeyNotFromKeys = "RS014", "key_not_from_keys", Error, false,
        "a command's key that does not come from `KEYS` (a literal, an argument, a value read from data): Redis Cluster cannot route it";

    /// `redis.call('INCRR', …)`.
    UnknownCommand = "RS020", "unknown_command", Error, false,
        "a command or subcommand no server of the target knows: the call fails at run time";
    /// A command some releases or modules lack.
    UnavailableCommand = "RS021", "unavailable_command", ErrorOrWarning, false,
        "a command that exists on other releases or with a module the target lacks";
    /// Too few or too many arguments.
    WrongArity = "RS022", "wrong_arity", Error, false,
        "a command called with a number of arguments its arity refuses";
    /// `MULTI`, `EVAL`, `SUBSCRIBE` inside a script.
    NoscriptCommand = "RS023", "noscript_command", Error, false,
        "a command the server refuses inside scripts (`MULTI`, `EVAL`, `SUBSCRIBE`, `BLPOP` on older releases)";
    /// A write where only reads may run.
    WriteInReadOnly = "RS024", "write_in_read_only", ErrorOrWarning, false,
        "a write command in a `no-writes` script or function, or in a script sent with `EVAL_RO`";
    /// An option the server refuses inside scripts.
    RefusedOption = "RS025", "refused_option", ErrorOrWarning, false,
        "a command option some servers refuse inside scripts (`XREAD … BLOCK`)";
    /// `SELECT` past the databases a server has.
    DatabaseIndex = "RS026", "database_index", ErrorOrWarning, false,
        "`SELECT` of a negative database, or of one past the default 16";
    /// `GETSET`, `HMSET`.
    DeprecatedCommand = "RS027", "deprecated_command", Warning, false,
        "a command the servers deprecate, with its replacement";
    /// `redis.setresp(4)`, `redis.call()`.
    HelperArgument = "RS028", "helper_argument", Error, false,
        "an argument a `redis.*` helper refuses (`redis.call()` without a command, `redis.setresp(4)`, `redis.log(99, m)`)";

    /// `redsi.call`, `count = 1`.
    UndefinedGlobal = "RS030", "undefined_global", ErrorOrWarning, false,
        "a read of a global the sandbox does not define: the server raises (a warning in a local function nothing refers to, which never runs)";
    /// `print`, `os.time`, `server` on Redis.
    UnavailableGlobal = "RS031", "unavailable_global", Error, false,
        "a global that Lua has but scripts do not (`print`, `os.time`, `require`), that the target's servers lack, or that a library cannot use while it loads";
    /// `string.uppr`, `table.unpack`.
    MissingMember = "RS032", "missing_member", ErrorOrWarning, false,
        "a member a sandbox library does not have (`string.uppr`, `table.unpack`): calling it raises, reading it gives nil";
    /// `x = 1`, `setmetatable(_G, …)`.
    ReadonlyGlobal = "RS033", "readonly_global", Error, false,
        "a write to a global or to a protected table (`x = 1`, `rawset(redis, …)`): the server raises";
    /// `math.random`, `loadstring`.
    RiskyGlobal = "RS034", "risky_global", Warning, false,
        "a global that runs but is risky in a script (`loadstring`, `math.random`), or a member whose behaviour differs between servers";
    /// `loadstring(string.dump(f))`.
    CompiledChunk = "RS035", "compiled_chunk", Error, false,
        "`loadstring` of compiled Lua (`string.dump`): the server compiles only source text";

    /// An error code that belongs to the server.
    ReservedErrorCode = "RS040", "reserved_error_code", Error, false,
        "an error reply with a code the server itself uses (`NOSCRIPT`, `MOVED`, `TRYAGAIN`, …): clients take it for the server's and send the script again";
    /// `redis.error_reply('GONE')`.
    BareErrorCode = "RS041", "bare_error_code", Warning, false,
        "`redis.error_reply` of one word: the server sends it as `ERR <word>`";
    /// A reply the Rust type cannot take.
    ReplyType = "RS042", "reply_type", Error, false,
        "a `return` the declared reply type cannot decode (a tag, an element count, a table into a number)";
    /// A variant no `return` produces.
    UnreturnedVariant = "RS043", "unreturned_variant", Warning, false,
        "a variant of the reply type that no `return` of the script produces";
    /// An error variant no error reply carries.
    UnraisedErrorCode = "RS044", "unraised_error_code", Warning, false,
        "a variant of the error type whose code no error reply of the script carries";
    /// `cjson.decode(ARGV[1]).jobid` of a `Json<Job>` that writes `jobId`.
    JsonArgument = "RS045", "json_argument", Error, false,
        "a read of a `Json<T>` argument that `T`'s JSON never satisfies: a field serde does not write, a comparison that never holds, an operation that raises, an `Option` tested where `None` is `null`";

    /// `#!lua name=…`.
    LibraryName = "RS050", "library_name", Error, false,
        "a library's first line gives no valid name, gives it twice, or gives other metadata: FUNCTION LOAD refuses it";
    /// `redis.register_function` as FUNCTION LOAD refuses it.
    RegisterFunction = "RS051", "register_function", Error, false,
        "a `redis.register_function` call FUNCTION LOAD refuses (arguments, names, flags, a name registered twice, no function at all)";
    /// A registration the checker cannot read.
    UncheckedRegistration = "RS052", "unchecked_registration", Error, false,
        "a registration whose name, callback or flags are not written literally, so the declarations cannot be checked against it";
    /// A declared function the library does not register.
    UnregisteredFunction = "RS053", "unregistered_function", Error, false,
        "a declared function that the library does not register: FCALL would fail";
    /// A registered function no declaration names.
    UndeclaredFunction = "RS054", "undeclared_function", Warning, false,
        "a function the library registers that no declaration names, so it has no typed call";

    /// `ARGV[1] >= 10`.
    MismatchedComparison = "RS101", "mismatched_comparison", Error, true,
        "`<`, `<=`, `>`, `>=` between a number and a string (or a boolean, nil, a table): Lua raises on every call";
    /// `redis.call('GET', k) == nil`.
    ConstantEquality = "RS102", "constant_equality", Error, true,
        "`==` or `~=` whose result the types fix: a string against a number, a reply that is never nil against `nil`";
    /// `if redis.call('SISMEMBER', k, m) then`.
    AlwaysTrue = "RS103", "always_true", ErrorOrWarning, true,
        "a number tested for truth (`if`, `while`, `not`, `and`): 0 is true in Lua";
    /// `redis.call('HSET', k, f, true)`.
    RefusedArgument = "RS104", "refused_argument", ErrorOrWarning, true,
        "a `redis.call` argument that is a boolean, nil or a table: Redis refuses it";
    /// `redis.call('EXPIRE', k, ttl / 2)`.
    FractionalArgument = "RS105", "fractional_argument", ErrorOrWarning, true,
        "a number that may have a fraction passed where the command takes an integer";
    /// `redis.call('SREM', k, unpack(ids))`.
    EmptyUnpack = "RS106", "empty_unpack", Warning, true,
        "`unpack(t)` supplying a command's required arguments when `t` may be empty";
    /// `redis.call('GET', k) + 1`.
    NilValue = "RS107", "nil_value", ErrorOrWarning, true,
        "arithmetic, concatenation, comparison, indexing or calling a value that may be nil or false";
    /// `return {'OK', tonumber(v), 5}`.
    ReplyHole = "RS108", "reply_hole", ErrorOrWarning, true,
        "a returned table whose element may be nil: the reply stops there";
    /// `return used / limit`.
    FractionalReply = "RS109", "fractional_reply", ErrorOrWarning, true,
        "a returned number that may have a fraction: Redis truncates it to an integer";
    /// `ipairs(redis.call('ZRANGE', k, 0, -1))`.
    UnboundedRead = "RS110", "unbounded_read", Warning, true,
        "a loop, `unpack` or `return` over a read that grows with the data (`SMEMBERS`, `LRANGE … 0 -1`, `ZRANGEBYSCORE` without `LIMIT`)";
    /// `redis.call('KEYS', pattern)`.
    KeyspaceWalk = "RS111", "keyspace_walk", Warning, true,
        "`KEYS`, or `SCAN`/`HSCAN`/`SSCAN`/`ZSCAN` in a loop: the whole keyspace or collection in one atomic step";
    /// `redis.call('FLUSHALL')`.
    DangerousCommand = "RS112", "dangerous_command", Warning, true,
        "a command the servers' ACL categories mark @dangerous (`FLUSHALL`, `SWAPDB`, `SORT`, `INFO`, …)";
    /// `pcall(function() return bit32.band(1, 1) end)`.
    ProtectedGlobalRead = "RS113", "protected_global_read", Warning, true,
        "a read of an undefined global inside a function called through `pcall` (it raises, and the `pcall` catches it: a feature probe does this on purpose) or inside a metamethod (it raises only when the metamethod runs)";
    /// Compare-and-delete where `DELIFEQ` exists.
    SingleCommand = "RS114", "single_command", Warning, true,
        "a compare-and-delete or compare-and-set script that one command does on every server of the target (`DELIFEQ`, `SET … IFEQ`)";
    /// `while true do … end` with no way out.
    EndlessLoop = "RS115", "endless_loop", Error, true,
        "a loop that nothing ends (`while true` with no `break`, `return` or raise): the server answers BUSY to everyone";
    /// `bit.band(flags, 0x100000000)`.
    BitWidth = "RS116", "bit_width", Error, true,
        "a constant the `bit` library cannot take as written (wider than 32 bits, a fraction, a shift of 32 or more): it keeps the low 32 bits, rounds, or shifts by the count's low 5 bits";
    /// `redis.call('SADD', KEYS[1], unpack(redis.call('SMEMBERS', KEYS[2])))`.
    UnboundedUnpack = "RS117", "unbounded_unpack", Warning, true,
        "`unpack` of a whole table whose length the data or an argument sets: from about 8000 elements on, the call fails with \"too many results to unpack\"";
    /// `redis.call('PEXPIRE', KEYS[1], KEYS[2])`, `if KEYS[2] ~= '' then`.
    KeyAsValue = "RS118", "key_as_value", ErrorOrWarning, true,
        "a `KEYS` element that is not a key: a number a command takes (never used as a key), or an empty name tested as a flag (`KEYS[2] ~= ''`): Redis Cluster hashes every `KEYS` element for the call's slot and refuses the call with CROSSSLOT";
    /// `return setmetatable({err = 'x'}, mt)`.
    ReturnedMetatable = "RS119", "returned_metatable", Warning, true,
        "a reply that is or holds a table with a metatable: the server converts it after the script has ended, on some releases through `__index` (a raise there ends the server process)";
}

impl Code {
    /// The code `text` names: `RS101`, `rs101`, or its name, `always_true`.
    pub fn parse(text: &str) -> Option<Code> {
        let text = text.trim();
        Code::ALL
            .iter()
            .copied()
            .find(|code| code.code().eq_ignore_ascii_case(text) || code.name() == text)
    }

    /// The finding named `name`.
    pub fn finding(name: &str) -> Option<Code> {
        Code::ALL
            .iter()
            .copied()
            .find(|code| code.is_finding() && code.name() == name)
    }

    /// Every finding, in order.
    pub fn findings() -> impl Iterator<Item = Code> {
        Code::ALL.iter().copied().filter(|code| code.is_finding())
    }

    /// The help for an opt-out naming `name`, which is no finding: the
    /// nearest finding's name, or all of them.
    pub fn finding_help(name: &str) -> String {
        match crate::source::suggest::closest(name, Code::findings().map(Code::name)) {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!("the findings are {}", Code::finding_names()),
        }
    }

    /// The names of the findings, quoted, for a message.
    pub fn finding_names() -> String {
        Code::findings()
            .map(|code| format!("`{}`", code.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Code {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            assert!(seen.insert(code.code()), "{code} twice");
            assert!(seen.insert(code.name()), "{} twice", code.name());
            let digits = code.code().strip_prefix("RS").unwrap_or_default();
            assert!(digits.len() == 3 && digits.bytes().all(|byte| byte.is_ascii_digit()));
            assert_eq!(code.is_finding(), digits.starts_with('1'), "{code}");
            assert!(
                code.name()
                    .bytes()
                    .all(|byte| byte.is_ascii_lowercase() || byte == b'_')
            );
        }
        let mut sorted = Code::ALL.to_vec();
        sorted.sort_by_key(|code| code.code());
        assert_eq!(sorted, Code::ALL);
    }

    #[test]
    fn every_explanation_has_its_title_an_example_and_a_fix() {
        for code in Code::ALL {
            let text = code.explanation();
            let title = format!("# {}: `{}`\n", code.code(), code.name());
            assert!(text.starts_with(&title), "{code} starts with {title:?}");
            assert!(text.contains("```lua\n"), "{code} has a Lua example");
            assert!(text.contains("\n## Fix\n"), "{code} says how to fix it");
        }
    }

    #[test]
    fn parses_codes_in_any_case_and_names() {
        assert_eq!(Code::parse("RS103"), Some(Code::AlwaysTrue));
        assert_eq!(Code::parse("rs103"), Some(Code::AlwaysTrue));
        assert_eq!(Code::parse("always_true"), Some(Code::AlwaysTrue));
        assert_eq!(Code::parse("RS999"), None);
        assert_eq!(Code::finding("syntax"), None);
        assert_eq!(
            Code::finding_help("always_tru"),
            "did you mean `always_true`?"
        );
        assert!(
            Code::finding_help("zzz").starts_with("the findings are `mismatched_comparison`, ")
        );
    }
}
