//! Every transition of the engine, without a server: each test plays the
//! nodes' answers to the requests the engine plans, and reads the replies
//! the calls end with.

use std::io;
use std::time::Duration;

use redis::Value;

use super::*;
use crate::batch::Handle;
use crate::call::{Call, start_call};
use crate::error::Error;
use crate::script::Script;
use crate::slot::key_slot;
use crate::test_support::{keys, server_error, slot_range};

/// A script that writes, sent at most once.
static APPEND: Script = crate::script::new_script(
    "append",
    "lua/append.lua",
    "return 1",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    false,
    false,
);

/// An `exactly_once` script, sent again at most twice after a failure.
static COUNT: Script = crate::script::with_exactly_once(
    crate::script::new_script(
        "count",
        "lua/count.lua",
        "return 1",
        "cccccccccccccccccccccccccccccccccccccccc",
        false,
        false,
    ),
    crate::exactly_once::exactly_once(None, None, Some(2)),
);

/// The three primaries of the slot map of these tests.
const FIRST: u16 = 7000;
const SECOND: u16 = 7001;
const THIRD: u16 = 7002;

fn node(port: u16) -> Address {
    ("127.0.0.1".to_owned(), port)
}

/// Three primaries sharing the slots, or (`with_third` false) two, the
/// third's slots served by none.
fn slot_map(with_third: bool) -> Arc<SlotMap> {
    let mut ranges = vec![slot_range(0, 5460, FIRST), slot_range(5461, 10922, SECOND)];
    if with_third {
        ranges.push(slot_range(10923, 16383, THIRD));
    }
    Arc::new(SlotMap::from_cluster_slots(&Value::Array(ranges)))
}

/// The port of the primary that serves `slot` in [`slot_map`].
fn owner(slot: u16) -> u16 {
    match slot {
        0..=5460 => FIRST,
        5461..=10922 => SECOND,
        _ => THIRD,
    }
}

/// A key in the `n`-th slot (by tag) served by the primary on `port`.
fn key_on(port: u16, n: usize) -> String {
    let tag = (0..)
        .map(|index| format!("t{index}"))
        .filter(|tag| owner(key_slot(tag.as_bytes())) == port)
        .nth(n)
        .unwrap_or_default();
    format!("{{{tag}}}:k")
}

fn call(script: &'static Script, key: &str) -> Call<i64, Error> {
    start_call(script, keys(&[key]))
}

/// A pipeline of `calls` (script, key), and their handles.
fn batch_of(calls: &[(&'static Script, String)]) -> (Batch, Vec<Handle<i64>>) {
    let mut batch = Batch::pipeline();
    let handles = calls
        .iter()
        .map(|(script, key)| match batch.add(call(script, key)) {
            Ok(handle) => handle,
            Err(error) => panic!("{error}"),
        })
        .collect();
    (batch, handles)
}

/// The first word of each command of `request`.
fn sent(request: &Request) -> Vec<String> {
    request
        .pipeline
        .cmd_iter()
        .map(|command| match command.args_iter().next() {
            Some(redis::Arg::Simple(name)) => String::from_utf8_lossy(name).into_owned(),
            _ => String::new(),
        })
        .collect()
}

fn send(engine: &mut Engine<'_>) -> Vec<Request> {
    match engine.next() {
        Step::Send(requests) => requests,
        other => panic!("expected requests, got {other:?}"),
    }
}

fn expect(engine: &mut Engine<'_>, expected: &str) {
    let step = engine.next();
    assert_eq!(
        match &step {
            Step::ReadSlotMap => "read the slot map".to_owned(),
            Step::Wait(delay) => format!("wait {}ms", delay.as_millis()),
            Step::Send(requests) => format!("send {}", requests.len()),
            Step::Done => "done".to_owned(),
        },
        expected,
        "{step:?}"
    );
}

/// How a node answers one transaction of a request.
#[derive(Clone, Copy)]
enum Reply {
    /// Every command runs, the `n`-th replying `n`.
    Ran,
    /// Every command runs, and the first fails with this error reply.
    RanFailing(&'static str),
    /// The node lacks the script: `NOSCRIPT` to each command.
    NoScript,
    /// The first command is refused while queued with this reply, and
    /// the transaction is discarded (`EXECABORT`, or, bare, the refusal).
    Refused(&'static str),
}

/// The node's replies to `request`, each transaction answered as `reply`
/// says.
fn replies(request: &Request, reply: impl Fn(&Part) -> Reply) -> Vec<Value> {
    let mut values = Vec::new();
    for part in &request.parts {
        if part.asking {
            values.push(Value::Okay);
        }
        let ran: Vec<Value> = match reply(part) {
            Reply::Ran => (1..=part.count as i64).map(Value::Int).collect(),
            Reply::RanFailing(error) => std::iter::once(server_error(error))
                .chain((2..=part.count as i64).map(Value::Int))
                .collect(),
            Reply::NoScript => vec![server_error("NOSCRIPT No matching script."); part.count],
            Reply::Refused(refusal) => {
                if part.bare {
                    values.push(server_error(refusal));
                } else {
                    values.push(Value::Okay);
                    values.push(server_error(refusal));
                    for _ in 1..part.count {
                        values.push(Value::SimpleString("QUEUED".to_owned()));
                    }
                    values.push(server_error(
                        "EXECABORT Transaction discarded because of previous errors.",
                    ));
                }
                continue;
            }
        };
        if part.bare {
            values.extend(ran);
        } else {
            values.push(Value::Okay);
            for _ in 0..part.count {
                values.push(Value::SimpleString("QUEUED".to_owned()));
            }
            values.push(Value::Array(ran));
        }
    }
    values
}

/// Answers every request of a round as `reply` says.
fn answer(engine: &mut Engine<'_>, requests: &[Request], reply: impl Fn(&Part) -> Reply) {
    for request in requests {
        engine.answered(request, Ok(replies(request, &reply)));
    }
}

fn io_failure(kind: io::ErrorKind) -> redis::RedisError {
    redis::RedisError::from(io::Error::from(kind))
}

/// What a call ends with: its reply, or its error's kind and whether it
/// may have run.
type Ended = Result<i64, (&'static str, bool)>;

/// What each call of `handles` ends with, once `engine` is done.
fn outcomes(mut engine: Engine<'_>, handles: Vec<Handle<i64>>) -> Vec<Ended> {
    expect(&mut engine, "done");
    let mut replies = engine.into_replies();
    handles
        .into_iter()
        .map(|handle| {
            replies
                .take(handle)
                .map_err(|error| (error.kind(), error.may_have_executed()))
        })
        .collect()
}

#[test]
fn per_node_the_slot_map_comes_first_then_one_request_per_node() {
    let (batch, handles) = batch_of(&[
        (&APPEND, key_on(FIRST, 0)),
        (&APPEND, key_on(FIRST, 1)),
        (&APPEND, key_on(SECOND, 0)),
        (&APPEND, key_on(FIRST, 1)),
    ]);
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, None);
    expect(&mut engine, "read the slot map");
    engine.slot_map_read(Ok(slot_map(true)));
    let requests = send(&mut engine);
    let plan: Vec<(Destination, Vec<String>)> = requests
        .iter()
        .map(|request| (request.destination.clone(), sent(request)))
        .collect();
    assert_eq!(
        plan,
        [
            // A lone call bare, with the body; the next slot's calls by
            // SHA1 only, the body being earlier in the request.
            (
                Destination::Node(node(FIRST)),
                ["EVAL", "MULTI", "EVALSHA", "EVALSHA", "EXEC"]
                    .map(String::from)
                    .to_vec()
            ),
            (Destination::Node(node(SECOND)), vec!["EVAL".to_owned()]),
        ]
    );
    answer(&mut engine, &requests, |_| Reply::Ran);
    assert_eq!(outcomes(engine, handles), [Ok(1), Ok(1), Ok(1), Ok(2)]);
    // The nodes answered the script: the next batch sends no body there.
    assert!(lock(&scripts).has(&node(FIRST), APPEND.sha1()));
    assert!(lock(&scripts).has(&node(SECOND), APPEND.sha1()));
}

#[test]
fn per_node_a_known_map_and_remembered_scripts_send_no_body() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0)), (&COUNT, key_on(THIRD, 0))]);
    let scripts = Mutex::new(NodeScripts::default());
    lock(&scripts).answered(&node(FIRST), APPEND.sha1(), true);
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, Some(slot_map(true)));
    let requests = send(&mut engine);
    let planned: Vec<Vec<String>> = requests.iter().map(sent).collect();
    assert_eq!(planned, [vec!["EVALSHA"], vec!["EVAL"]]);
    answer(&mut engine, &requests, |_| Reply::Ran);
    assert_eq!(outcomes(engine, handles), [Ok(1); 2]);
}

#[test]
fn through_the_cluster_connection_each_transaction_is_a_request_of_its_own() {
    let (batch, _) = batch_of(&[
        (&APPEND, key_on(FIRST, 0)),
        (&APPEND, key_on(FIRST, 1)),
        (&APPEND, key_on(FIRST, 1)),
    ]);
    // Fewer slots than make the map worth reading.
    let mut engine = Engine::new(Connections::Cluster, &batch, None);
    let requests = send(&mut engine);
    let plan: Vec<(Destination, Vec<String>)> = requests
        .iter()
        .map(|request| (request.destination.clone(), sent(request)))
        .collect();
    let slot = |n| Destination::Slot(Some(key_slot(key_on(FIRST, n).as_bytes())));
    assert_eq!(
        plan,
        [
            // Never bare: the connection sends a request again by itself
            // on a redirection, which a transaction makes safe.
            (
                slot(0),
                ["MULTI", "EVAL", "EXEC"].map(String::from).to_vec()
            ),
            (
                slot(1),
                ["MULTI", "EVAL", "EVALSHA", "EXEC"]
                    .map(String::from)
                    .to_vec()
            ),
        ]
    );
    answer(&mut engine, &requests, |_| Reply::Ran);
    expect(&mut engine, "done");
}

#[test]
fn through_the_cluster_connection_slots_of_one_call_share_a_node_s_body() {
    // Nine slots of one call each, three per node, and a slot of two
    // calls on the first node.
    let mut calls: Vec<(&'static Script, String)> = [FIRST, SECOND, THIRD]
        .into_iter()
        .flat_map(|port| (0..3).map(move |n| (&APPEND, key_on(port, n))))
        .collect();
    calls.push((&APPEND, key_on(FIRST, 5)));
    calls.push((&APPEND, key_on(FIRST, 5)));
    let (batch, handles) = batch_of(&calls);
    let mut engine = Engine::new(Connections::Cluster, &batch, None);
    expect(&mut engine, "read the slot map");
    engine.slot_map_read(Ok(slot_map(true)));
    let requests = send(&mut engine);
    let planned: Vec<Vec<String>> = requests.iter().map(sent).collect();
    let with_body = ["MULTI", "EVAL", "EXEC"].map(String::from).to_vec();
    let by_sha1 = ["MULTI", "EVALSHA", "EXEC"].map(String::from).to_vec();
    let mut expected = Vec::new();
    for _ in [FIRST, SECOND, THIRD] {
        expected.extend([with_body.clone(), by_sha1.clone(), by_sha1.clone()]);
    }
    // A slot of two calls carries the body: a `NOSCRIPT` would cost both.
    expected.push(
        ["MULTI", "EVAL", "EVALSHA", "EXEC"]
            .map(String::from)
            .to_vec(),
    );
    assert_eq!(planned, expected);

    // The second slot's EVALSHA arrived before the first slot's EVAL: it
    // did not run, and goes again with the body.
    let second = requests[1].parts[0].slot;
    answer(&mut engine, &requests, |part| {
        if part.slot == second {
            Reply::NoScript
        } else {
            Reply::Ran
        }
    });
    let again = send(&mut engine);
    assert_eq!(again.len(), 1);
    assert_eq!(sent(&again[0]), with_body);
    answer(&mut engine, &again, |_| Reply::Ran);
    let ended = outcomes(engine, handles);
    assert!(ended.iter().all(Result::is_ok), "{ended:?}");
}

#[test]
fn through_the_cluster_connection_no_slot_map_means_a_body_per_slot() {
    let calls: Vec<(&'static Script, String)> =
        (0..8).map(|n| (&APPEND, key_on(FIRST, n))).collect();
    let (batch, _) = batch_of(&calls);
    let mut engine = Engine::new(Connections::Cluster, &batch, None);
    expect(&mut engine, "read the slot map");
    engine.slot_map_read(Err(io_failure(io::ErrorKind::ConnectionReset)));
    let requests = send(&mut engine);
    assert!(
        requests
            .iter()
            .all(|request| sent(request) == ["MULTI", "EVAL", "EXEC"]),
        "{requests:?}"
    );
}

#[test]
fn a_moved_transaction_goes_to_the_named_node_after_the_map_is_read_again() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0)), (&APPEND, key_on(FIRST, 0))]);
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, Some(slot_map(true)));
    let requests = send(&mut engine);
    answer(&mut engine, &requests, |_| {
        Reply::Refused("MOVED 3999 127.0.0.1:7002")
    });
    // No wait: the refusal names the node.
    expect(&mut engine, "read the slot map");
    // The map still says the first node: the refusal is newer.
    engine.slot_map_read(Ok(slot_map(true)));
    let requests = send(&mut engine);
    assert_eq!(requests[0].destination, Destination::Node(node(THIRD)));
    answer(&mut engine, &requests, |_| Reply::Ran);
    assert_eq!(outcomes(engine, handles), [Ok(1), Ok(2)]);
}

#[test]
fn an_ask_is_followed_once_with_asking_on_node_connections() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0)), (&APPEND, key_on(FIRST, 0))]);
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, Some(slot_map(true)));
    let requests = send(&mut engine);
    answer(&mut engine, &requests, |_| {
        Reply::Refused("ASK 3999 127.0.0.1:7001")
    });
    // The map is not out of date: the slot is moving.
    let requests = send(&mut engine);
    assert_eq!(requests[0].destination, Destination::Node(node(SECOND)));
    assert_eq!(
        sent(&requests[0]),
        ["ASKING", "MULTI", "EVAL", "EVALSHA", "EXEC"]
    );
    answer(&mut engine, &requests, |_| Reply::Ran);
    assert_eq!(outcomes(engine, handles), [Ok(1), Ok(2)]);
}

#[test]
fn an_ask_through_the_cluster_connection_is_waited_out_at_the_same_node() {
    let (batch, _) = batch_of(&[(&APPEND, key_on(FIRST, 0))]);
    let mut engine = Engine::new(Connections::Cluster, &batch, None);
    let first = send(&mut engine);
    answer(&mut engine, &first, |_| {
        Reply::Refused("ASK 3999 127.0.0.1:7001")
    });
    expect(&mut engine, "wait 50ms");
    let again = send(&mut engine);
    assert_eq!(again[0].destination, first[0].destination);
    assert_eq!(sent(&again[0]), ["MULTI", "EVAL", "EXEC"]);
}

#[test]
fn tryagain_and_clusterdown_wait_longer_each_time_then_refuse_each_command() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0)), (&APPEND, key_on(FIRST, 0))]);
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, Some(slot_map(true)));
    for (attempt, refusal) in [
        "TRYAGAIN Multiple keys request during rehashing of slot",
        "CLUSTERDOWN The cluster is down",
    ]
    .into_iter()
    .cycle()
    .take(REDIRECTED_RETRIES as usize + 1)
    .enumerate()
    {
        let requests = send(&mut engine);
        assert_eq!(requests[0].destination, Destination::Node(node(FIRST)));
        answer(&mut engine, &requests, |_| Reply::Refused(refusal));
        if attempt < REDIRECTED_RETRIES as usize {
            expect(&mut engine, &format!("wait {}ms", 50 << attempt));
            expect(&mut engine, "read the slot map");
            engine.slot_map_read(Ok(slot_map(true)));
        }
    }
    assert_eq!(outcomes(engine, handles), [Err(("refused", false)); 2]);
}

/// redis-rs's cluster connection follows a redirection of a request
/// itself, as its `retries` say; with none left, it fails the request with
/// the redirection, which the call ends with: nothing ran.
#[test]
fn a_redirection_the_cluster_connection_fails_the_request_with_ends_it() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0))]);
    let mut engine = Engine::new(Connections::Cluster, &batch, None);
    let requests = send(&mut engine);
    let failure = server_error("MOVED 3999 127.0.0.1:7002")
        .extract_error()
        .err()
        .unwrap_or_else(|| panic!("an error"));
    engine.answered(&requests[0], Err(failure));
    assert_eq!(outcomes(engine, handles), [Err(("refused", false))]);
}

#[test]
fn a_transaction_refused_whole_ends_with_each_command_s_reason() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0)), (&APPEND, key_on(FIRST, 0))]);
    let mut engine = Engine::new(Connections::Cluster, &batch, None);
    let requests = send(&mut engine);
    answer(&mut engine, &requests, |_| {
        Reply::Refused("OOM command not allowed when used memory > 'maxmemory'.")
    });
    expect(&mut engine, "done");
    let mut replies = engine.into_replies();
    let codes: Vec<Option<String>> = handles
        .into_iter()
        .map(|handle| match replies.take(handle) {
            Err(error) if !error.may_have_executed() => error.code().map(str::to_owned),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        codes,
        [Some("OOM".to_owned()), Some("EXECABORT".to_owned())]
    );
}

#[test]
fn a_script_error_is_its_call_s_own_and_the_others_ran() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0)), (&APPEND, key_on(FIRST, 0))]);
    let mut engine = Engine::new(Connections::Cluster, &batch, None);
    let requests = send(&mut engine);
    answer(&mut engine, &requests, |_| {
        Reply::RanFailing("WRONGTYPE Operation against a key holding the wrong kind of value")
    });
    assert_eq!(outcomes(engine, handles), [Err(("script", true)), Ok(2)]);
}

#[test]
fn a_refused_connection_goes_again_after_the_map_is_read_again_then_did_not_run() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0)), (&APPEND, key_on(SECOND, 0))]);
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, Some(slot_map(true)));
    let requests = send(&mut engine);
    assert_eq!(requests.len(), 2);
    engine.answered(
        &requests[0],
        Err(io_failure(io::ErrorKind::ConnectionRefused)),
    );
    engine.answered(&requests[1], Ok(replies(&requests[1], |_| Reply::Ran)));
    for attempt in 0..REDIRECTED_RETRIES {
        expect(&mut engine, &format!("wait {}ms", 50 << attempt));
        expect(&mut engine, "read the slot map");
        engine.slot_map_read(Ok(slot_map(true)));
        let again = send(&mut engine);
        assert_eq!(again.len(), 1, "only the refused node's slot");
        engine.answered(&again[0], Err(io_failure(io::ErrorKind::ConnectionRefused)));
    }
    assert_eq!(
        outcomes(engine, handles),
        [Err(("connection", false)), Ok(1)]
    );
}

#[test]
fn the_cluster_connection_reconnects_by_itself_so_a_refused_connection_ends_at_once() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0))]);
    let mut engine = Engine::new(Connections::Cluster, &batch, None);
    let requests = send(&mut engine);
    engine.answered(
        &requests[0],
        Err(io_failure(io::ErrorKind::ConnectionRefused)),
    );
    assert_eq!(outcomes(engine, handles), [Err(("connection", false))]);
}

#[test]
fn a_failed_connection_ends_a_plain_transaction_as_may_have_run() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0))]);
    let mut engine = Engine::new(Connections::Cluster, &batch, None);
    let requests = send(&mut engine);
    engine.answered(
        &requests[0],
        Err(io_failure(io::ErrorKind::ConnectionReset)),
    );
    assert_eq!(outcomes(engine, handles), [Err(("connection", true))]);
}

#[test]
fn a_transaction_of_exactly_once_calls_goes_again_after_a_failure() {
    let (batch, handles) = batch_of(&[(&COUNT, key_on(FIRST, 0)), (&COUNT, key_on(FIRST, 0))]);
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, Some(slot_map(true)));
    for attempt in 0..2 {
        let requests = send(&mut engine);
        engine.answered(
            &requests[0],
            Err(io_failure(io::ErrorKind::ConnectionReset)),
        );
        expect(&mut engine, &format!("wait {}ms", 50 << attempt));
        expect(&mut engine, "read the slot map");
        engine.slot_map_read(Ok(slot_map(true)));
    }
    let requests = send(&mut engine);
    answer(&mut engine, &requests, |_| Reply::Ran);
    assert_eq!(outcomes(engine, handles), [Ok(1), Ok(2)]);
}

#[test]
fn the_retries_of_exactly_once_calls_run_out_as_may_have_run() {
    let (batch, handles) = batch_of(&[(&COUNT, key_on(FIRST, 0))]);
    let mut engine = Engine::new(Connections::Cluster, &batch, None);
    for attempt in 0..3 {
        let requests = send(&mut engine);
        engine.answered(
            &requests[0],
            Err(io_failure(io::ErrorKind::ConnectionReset)),
        );
        if attempt < 2 {
            expect(&mut engine, &format!("wait {}ms", 50 << attempt));
        }
    }
    assert_eq!(outcomes(engine, handles), [Err(("connection", true))]);
}

/// After a send of exactly-once calls that may have run, the answers of
/// later sends that say they did not run must not be believed.
#[test]
fn after_a_send_that_may_have_run_no_later_answer_says_did_not_run() {
    for ending in ["refused connection", "redirections", "refused whole"] {
        let (batch, handles) = batch_of(&[(&COUNT, key_on(FIRST, 0)), (&COUNT, key_on(FIRST, 0))]);
        let scripts = Mutex::new(NodeScripts::default());
        let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, Some(slot_map(true)));
        let requests = send(&mut engine);
        engine.answered(
            &requests[0],
            Err(io_failure(io::ErrorKind::ConnectionReset)),
        );
        loop {
            match engine.next() {
                Step::Wait(_) => {}
                Step::ReadSlotMap => engine.slot_map_read(Ok(slot_map(true))),
                Step::Send(requests) => match ending {
                    "refused connection" => engine.answered(
                        &requests[0],
                        Err(io_failure(io::ErrorKind::ConnectionRefused)),
                    ),
                    "redirections" => answer(&mut engine, &requests, |_| {
                        Reply::Refused("TRYAGAIN Multiple keys request during rehashing of slot")
                    }),
                    _ => answer(&mut engine, &requests, |_| {
                        Reply::Refused("OOM command not allowed when used memory > 'maxmemory'.")
                    }),
                },
                Step::Done => break,
            }
        }
        let ended = outcomes(engine, handles);
        assert_eq!(ended, [Err(("connection", true)); 2], "{ending}");
    }
}

#[test]
fn a_transaction_sent_by_sha1_goes_again_with_the_body_after_noscript() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0)), (&APPEND, key_on(FIRST, 0))]);
    let scripts = Mutex::new(NodeScripts::default());
    lock(&scripts).answered(&node(FIRST), APPEND.sha1(), true);
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, Some(slot_map(true)));
    let requests = send(&mut engine);
    assert_eq!(sent(&requests[0]), ["MULTI", "EVALSHA", "EVALSHA", "EXEC"]);
    answer(&mut engine, &requests, |_| Reply::NoScript);
    // Flushed: the node no longer counts as having it.
    assert!(!lock(&scripts).has(&node(FIRST), APPEND.sha1()));
    // Nothing ran: again at once, with the body.
    let requests = send(&mut engine);
    assert_eq!(sent(&requests[0]), ["MULTI", "EVAL", "EVALSHA", "EXEC"]);
    answer(&mut engine, &requests, |_| Reply::Ran);
    assert_eq!(outcomes(engine, handles), [Ok(1), Ok(2)]);
    assert!(lock(&scripts).has(&node(FIRST), APPEND.sha1()));
}

#[test]
fn after_one_noscript_only_a_body_earlier_in_the_request_is_relied_on() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0)), (&APPEND, key_on(FIRST, 1))]);
    let scripts = Mutex::new(NodeScripts::default());
    lock(&scripts).answered(&node(FIRST), APPEND.sha1(), true);
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, Some(slot_map(true)));
    let requests = send(&mut engine);
    assert_eq!(sent(&requests[0]), ["EVALSHA", "EVALSHA"]);
    answer(&mut engine, &requests, |_| Reply::NoScript);
    let requests = send(&mut engine);
    assert_eq!(sent(&requests[0]), ["EVAL", "EVALSHA"]);
    // Flushed again between the two: the second goes with the body.
    answer(&mut engine, &requests, |part| {
        if part.by_sha1 {
            Reply::NoScript
        } else {
            Reply::Ran
        }
    });
    let requests = send(&mut engine);
    assert_eq!(sent(&requests[0]), ["EVAL"]);
    answer(&mut engine, &requests, |_| Reply::Ran);
    assert_eq!(outcomes(engine, handles), [Ok(1); 2]);
}

#[test]
fn a_slot_no_node_serves_is_refused_after_the_retries() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(THIRD, 0)), (&APPEND, key_on(FIRST, 0))]);
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(
        Connections::PerNode(&scripts),
        &batch,
        Some(slot_map(false)),
    );
    // The served slot goes, the other waits for a map that serves it.
    let requests = send(&mut engine);
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].destination, Destination::Node(node(FIRST)));
    answer(&mut engine, &requests, |_| Reply::Ran);
    for attempt in 0..REDIRECTED_RETRIES {
        expect(&mut engine, &format!("wait {}ms", 50 << attempt));
        expect(&mut engine, "read the slot map");
        engine.slot_map_read(Ok(slot_map(false)));
    }
    assert_eq!(outcomes(engine, handles), [Err(("refused", false)), Ok(1)]);
}

#[test]
fn a_slot_map_that_cannot_be_read_fails_every_call_as_not_run() {
    let (batch, handles) = batch_of(&[(&APPEND, key_on(FIRST, 0)), (&APPEND, key_on(SECOND, 0))]);
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, None);
    for attempt in 0..=REDIRECTED_RETRIES {
        expect(&mut engine, "read the slot map");
        engine.slot_map_read(Err(io_failure(io::ErrorKind::ConnectionRefused)));
        if attempt < REDIRECTED_RETRIES {
            expect(&mut engine, &format!("wait {}ms", 50 << attempt));
        }
    }
    assert_eq!(outcomes(engine, handles), [Err(("connection", false)); 2]);
}

#[test]
fn a_slot_s_transactions_go_one_per_round_and_a_failure_ends_only_its_own() {
    let calls: Vec<(&'static Script, String)> =
        (0..5).map(|_| (&APPEND, key_on(FIRST, 0))).collect();
    let (batch, handles) = batch_of(&calls);
    let batch = batch.slot_transaction_limit(2);
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, Some(slot_map(true)));
    let first = send(&mut engine);
    assert_eq!(sent(&first[0]), ["MULTI", "EVAL", "EVALSHA", "EXEC"]);
    engine.answered(&first[0], Err(io_failure(io::ErrorKind::ConnectionReset)));
    // The failure makes the map stale; the next transaction still goes.
    expect(&mut engine, "read the slot map");
    engine.slot_map_read(Ok(slot_map(true)));
    let second = send(&mut engine);
    // The node answered nothing: no memory of the script, the body goes.
    assert_eq!(sent(&second[0]), ["MULTI", "EVAL", "EVALSHA", "EXEC"]);
    answer(&mut engine, &second, |_| Reply::Ran);
    let third = send(&mut engine);
    // A lone call, bare; the node answered the script in the round before.
    assert_eq!(sent(&third[0]), ["EVALSHA"]);
    answer(&mut engine, &third, |_| Reply::Ran);
    assert_eq!(
        outcomes(engine, handles),
        [
            Err(("connection", true)),
            Err(("connection", true)),
            Ok(1),
            Ok(2),
            Ok(1)
        ]
    );
}

#[test]
fn commands_without_a_slot_go_to_any_primary() {
    let mut batch = Batch::pipeline();
    let _ = batch.add_command::<i64>(redis::cmd("PING").to_owned());
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, Some(slot_map(true)));
    assert_eq!(
        send(&mut engine)[0].destination,
        Destination::Node(node(FIRST))
    );
    let mut engine = Engine::new(Connections::Cluster, &batch, None);
    assert_eq!(send(&mut engine)[0].destination, Destination::Slot(None));
}

#[test]
fn an_empty_batch_is_done_at_once() {
    let batch = Batch::pipeline();
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, None);
    expect(&mut engine, "done");
}

#[test]
fn a_transaction_refused_for_a_redirection_ran_nothing() {
    let ok = || Value::Okay;
    let queued = || Value::SimpleString("QUEUED".to_owned());
    let ask = || server_error("ASK 10141 127.0.0.1:7001");
    let abort = || server_error("EXECABORT Transaction discarded because of previous errors.");
    // Refused while queued (Redis), or at EXEC (Valkey 9).
    for replies in [
        vec![ok(), queued(), ask(), abort()],
        vec![ok(), queued(), queued(), ask()],
    ] {
        match answered(&replies, 2) {
            Ok(Answered::Redirected(error)) => assert_eq!(error.code(), "ASK"),
            other => panic!("{replies:?}: {other:?}"),
        }
    }
    let refused = [ok(), queued(), server_error("NOPERM no"), abort()];
    assert!(matches!(answered(&refused, 2), Ok(Answered::Refused(values)) if values.len() == 2));
    let ran = [
        ok(),
        queued(),
        queued(),
        Value::Array(vec![Value::Int(1), Value::Int(2)]),
    ];
    assert!(matches!(answered(&ran, 2), Ok(Answered::Ran(values)) if values.len() == 2));
    // Anything else may have run: a parse error.
    assert!(answered(&[ok(), queued()], 1).is_err());
}

#[test]
fn the_redirections_name_their_node_and_an_unserved_slot_reads_as_one() {
    let Value::ServerError(moved) = server_error("MOVED 3999 10.0.0.7:7005") else {
        panic!("an error reply");
    };
    assert_eq!(named_node(&moved), Some(("10.0.0.7".to_owned(), 7005)));
    assert!(redirection(&unserved()).is_some());
    assert!(redirection(&server_error("BUSY Redis is busy running a script.")).is_none());
    assert_eq!(
        crate::retry::backoff(FAILURE_RETRY_FIRST_DELAY, FAILURE_RETRY_MAX_DELAY, 6),
        Duration::from_secs(1)
    );
}

/// A script that writes nothing, sent as `EVALSHA_RO` on its own.
static READ: Script = crate::script::new_script(
    "read",
    "lua/read.lua",
    "return 1",
    "rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr",
    true,
    false,
);

/// The replica of each primary of [`slot_map`]: its port plus 100.
fn slot_map_with_replicas() -> Arc<SlotMap> {
    let with_replica = |start, end, port: u16| {
        crate::test_support::slot_range_with_replicas(start, end, port, &[port + 100])
    };
    Arc::new(SlotMap::from_cluster_slots(&Value::Array(vec![
        with_replica(0, 5460, FIRST),
        with_replica(5461, 10922, SECOND),
        with_replica(10923, 16383, THIRD),
    ])))
}

#[test]
fn read_only_transactions_go_to_a_replica_and_writes_to_the_primary() {
    let (batch, handles) = batch_of(&[(&READ, key_on(FIRST, 0)), (&APPEND, key_on(SECOND, 0))]);
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(
        Connections::PerNode(&scripts),
        &batch,
        Some(slot_map_with_replicas()),
    )
    .reading(ReadFrom::PreferReplica);
    let requests = send(&mut engine);
    let destinations: Vec<_> = requests.iter().map(|r| r.destination.clone()).collect();
    assert_eq!(
        destinations,
        [
            Destination::Node(node(FIRST + 100)),
            Destination::Node(node(SECOND))
        ]
    );
    answer(&mut engine, &requests, |_| Reply::Ran);
    assert_eq!(outcomes(engine, handles), [Ok(1), Ok(1)]);
}

#[test]
fn prefer_replica_reads_the_primary_when_the_replica_cannot_serve() {
    for failure in ["LOADING", "MASTERDOWN", "dropped"] {
        let (batch, handles) = batch_of(&[(&READ, key_on(FIRST, 0))]);
        let scripts = Mutex::new(NodeScripts::default());
        let mut engine = Engine::new(
            Connections::PerNode(&scripts),
            &batch,
            Some(slot_map_with_replicas()),
        )
        .reading(ReadFrom::PreferReplica);
        let requests = send(&mut engine);
        assert_eq!(
            requests[0].destination,
            Destination::Node(node(FIRST + 100))
        );
        match failure {
            "dropped" => {
                engine.answered(
                    &requests[0],
                    Err(io_failure(io::ErrorKind::ConnectionReset)),
                );
            }
            code => answer(&mut engine, &requests, |_| {
                Reply::Refused(if code == "LOADING" {
                    "LOADING Redis is loading the dataset in memory"
                } else {
                    "MASTERDOWN Link with MASTER is down"
                })
            }),
        }
        let requests = send(&mut engine);
        assert_eq!(
            requests[0].destination,
            Destination::Node(node(FIRST)),
            "{failure}"
        );
        answer(&mut engine, &requests, |_| Reply::Ran);
        assert_eq!(outcomes(engine, handles), [Ok(1)], "{failure}");
    }
}

#[test]
fn replica_only_without_a_replica_fails_having_sent_nothing() {
    let (batch, handles) = batch_of(&[(&READ, key_on(FIRST, 0))]);
    let scripts = Mutex::new(NodeScripts::default());
    let mut engine = Engine::new(Connections::PerNode(&scripts), &batch, Some(slot_map(true)))
        .reading(ReadFrom::ReplicaOnly);
    for _ in 0..REDIRECTED_RETRIES {
        // No replica in the map: read it again, after a wait.
        let step = engine.next();
        assert!(matches!(step, Step::Wait(_)), "{step:?}");
        expect(&mut engine, "read the slot map");
        engine.slot_map_read(Ok(slot_map(true)));
    }
    assert_eq!(outcomes(engine, handles), [Err(("connection", false))]);
}
