//! Exactly-once scripts: what the source sent for a script declared with
//! `exactly_once` ([`sent::script`](crate::emit::sent::script)) adds, and why a
//! script cannot be one.
//!
//! The wrapped script takes one extra key, the call's record, after the
//! script's own keys, and one extra argument, the record's time to live in
//! milliseconds, before the script's own arguments:
//!
//! ```text
//! EVALSHA <sha> <numkeys + 1> <key>… <record key> <ttl ms> <argument>…
//! ```
//!
//! Inside the one atomic execution it reads the record: when it exists, the
//! script returns the recorded reply without running the body again;
//! otherwise it runs the body with `KEYS` and `ARGV` exactly as the caller
//! declared them, under the same `xpcall` as every script, stores the Lua
//! value it ends with (MessagePack, before Redis converts it into a reply,
//! with its error marked, see [`sent`](crate::emit::sent)) under the record with
//! the TTL, and returns it. A replayed reply is therefore built from the
//! same Lua value as the first one: nested tables, integers, floats,
//! booleans, status and error tables, and tables with `nil` holes all
//! convert the same way. A body that raised an error is recorded too: it
//! ran, and a call sent again gets the same error instead of running it a
//! second time.
//!
//! The body keeps its line numbers: the wrapper's opening shares the body's
//! first line (after a `#!lua` line, which stays first), and its closing
//! follows the body's last line, so a raised error still points at its line
//! of the `.lua` file.
//!
//! ```
//! use redis_script_analysis::{Signature, analyze, exactly_once, sent};
//!
//! let source = "return redis.call('INCR', KEYS[1])\n";
//! let analysis = analyze(source, &Signature { keys: 1, ..Signature::default() });
//! assert_eq!(exactly_once::refusal(&analysis), None);
//! let wrapped = sent::script(source, &analysis, true);
//! assert!(wrapped.starts_with("local function"));
//! assert!(wrapped.lines().next().is_some_and(|line| line.ends_with("return redis.call('INCR', KEYS[1])")));
//! ```

use redis_script_codes::once;

use crate::domain::analysis::Analysis;

/// Why `analysis`'s script cannot be declared `exactly_once`, or `None`
/// when it can.
///
/// The record is a write: a script that declares `no-writes` could not
/// store it, and a script that writes nothing gains nothing from one, since
/// sending it again is already harmless.
pub fn refusal(analysis: &Analysis) -> Option<String> {
    if analysis.flags.no_writes {
        return Some(
            "`exactly_once` records the script's reply, which is a write, but the script declares `#!lua flags=no-writes`: a read-only script is safe to send again as it is; remove `exactly_once`"
                .to_owned(),
        );
    }
    if analysis.read_only {
        return Some(
            "`exactly_once` is for scripts that write, and this script calls no write command: sending it again is already harmless; remove `exactly_once`"
                .to_owned(),
        );
    }
    None
}

/// The Lua that follows the definitions of the body (named
/// [`BODY`](crate::emit::sent::BODY), taking `KEYS, ARGV`) and of the error
/// handler in the source sent for an `exactly_once` script: it leaves in
/// the local `reply` either the recorded reply of an earlier send, or the
/// body's reply (a raised error included), marked and recorded.
///
/// The record is written with `redis.pcall`: when it cannot be (a user
/// whose ACL denies the record's key), the call ends with a marked error
/// that says the script ran, never with the server's refusal, which would
/// read as "did not run".
pub(crate) fn reply_of_body(source: &str) -> String {
    let body = crate::emit::sent::BODY;
    let raised = crate::emit::sent::RAISED;
    // A body that calls `redis.set_repl` may have turned replication off:
    // the record must reach replicas and the AOF with the body's writes.
    let replicate = if source.contains("set_repl") {
        "  redis.set_repl(redis.REPL_ALL)\n"
    } else {
        ""
    };
    let record = once::RECORD_KEY.lua("KEYS");
    let ttl = once::TTL_MS.lua("ARGV");
    let (first_key, last_key) = once::RECORD_KEY.others("KEYS");
    let (first_argument, last_argument) = once::TTL_MS.others("ARGV");
    let ending = crate::emit::sent::ending("ran", "reply");
    let unrecorded = crate::emit::sent::raised_without_line(
        "ERR the script ran, but the record of its call was not written: ",
        "rawget(stored, 'err')",
    );
    format!(
        "local record = {record}\n\
         local reply = redis.call('GET', record)\n\
         if reply then\n\
         \x20 reply = cmsgpack.unpack(reply)\n\
         else\n\
         \x20 local keys, arguments = {{}}, {{}}\n\
         \x20 for i = {first_key}, {last_key} do keys[#keys + 1] = KEYS[i] end\n\
         \x20 for i = {first_argument}, {last_argument} do arguments[#arguments + 1] = ARGV[i] end\n\
         \x20 local ran\n\
         \x20 ran, reply = xpcall(function() return {body}(keys, arguments) end, {raised})\n\
         \x20 {ending}\n\
         {replicate}\
         \x20 local stored = redis.pcall('SET', record, cmsgpack.pack(reply), 'PX', {ttl})\n\
         \x20 if type(stored) == 'table' and type(rawget(stored, 'err')) == 'string' then\n\
         \x20   reply = {unrecorded}\n\
         \x20 end\n\
         end\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::sent::tests::analysis_of;

    fn wrapped_and_checked(source: &str, keys: usize, args: usize) -> String {
        crate::emit::sent::tests::wrapped_and_checked(source, keys, args, true)
    }

    #[test]
    fn the_body_keeps_its_line_numbers() {
        let source = "local n = redis.call('INCR', KEYS[1])\n\nreturn n + ARGV[1]\n";
        let wrapped = wrapped_and_checked(source, 1, 1);
        let lines: Vec<&str> = wrapped.lines().collect();
        assert_eq!(
            lines[0],
            "local function __redis_script_body(KEYS, ARGV) local n = redis.call('INCR', KEYS[1])"
        );
        assert_eq!(lines[1], "");
        assert_eq!(lines[2], "return n + ARGV[1]");
        assert_eq!(lines[3], "");
        assert_eq!(lines[4], "end");
    }

    #[test]
    fn a_shebang_stays_the_first_line() {
        let source = "#!lua flags=allow-cross-slot-keys\nreturn redis.call('INCR', KEYS[1])";
        let wrapped = wrapped_and_checked(source, 1, 0);
        let lines: Vec<&str> = wrapped.lines().collect();
        assert_eq!(lines[0], "#!lua flags=allow-cross-slot-keys");
        assert!(lines[1].ends_with(") return redis.call('INCR', KEYS[1])"));
        assert_eq!(lines[2], "end");
    }

    #[test]
    fn a_last_line_comment_does_not_swallow_the_closing() {
        let wrapped = wrapped_and_checked("redis.call('SET', KEYS[1], ARGV[1]) -- done", 1, 1);
        assert!(wrapped.contains("-- done\nend\n"));
    }

    #[test]
    fn varargs_of_the_chunk_stay_legal() {
        let source = "redis.call('SET', KEYS[1], select('#', ...))";
        let wrapped = wrapped_and_checked(source, 1, 0);
        assert!(wrapped.starts_with("local function __redis_script_body(KEYS, ARGV, ...) "));
        let plain = wrapped_and_checked(
            "local function f(...) return ... end\nredis.call('SET', KEYS[1], f(1))",
            1,
            0,
        );
        assert!(plain.starts_with("local function __redis_script_body(KEYS, ARGV) "));
    }

    #[test]
    fn replication_is_restored_for_the_record() {
        let source = "redis.set_repl(redis.REPL_NONE)\nredis.call('SET', KEYS[1], '1')";
        let wrapped = wrapped_and_checked(source, 1, 0);
        assert!(wrapped.contains(
            "redis.set_repl(redis.REPL_ALL)\n  local stored = redis.pcall('SET', record"
        ));
        let plain = wrapped_and_checked("redis.call('SET', KEYS[1], '1')", 1, 0);
        assert!(!plain.contains("REPL_ALL"));
    }

    #[test]
    fn read_only_scripts_are_refused() {
        let reads = analysis_of("return redis.call('GET', KEYS[1])", 1, 0);
        assert!(refusal(&reads).is_some_and(|reason| reason.contains("no write command")));
        let flagged = analysis_of(
            "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])",
            1,
            0,
        );
        assert!(refusal(&flagged).is_some_and(|reason| reason.contains("no-writes")));
        let writes = analysis_of("return redis.call('INCR', KEYS[1])", 1, 0);
        assert_eq!(refusal(&writes), None);
    }
}
