//! The language server driven over stdio as an editor drives it:
//! initialize, didOpen, didChange, publishDiagnostics, hover, completion,
//! codeAction, definition, didChangeWatchedFiles, shutdown.

mod common;

use std::path::PathBuf;

use common::lsp::{Client, uri};
use common::scratch_crate;
use serde_json::{Value, json};

fn codes(diagnostics: &[Value]) -> Vec<&str> {
    diagnostics
        .iter()
        .filter_map(|diagnostic| diagnostic["code"].as_str())
        .collect()
}

/// The first diagnostic whose message mentions `word`.
fn mentioning<'a>(diagnostics: &'a [Value], word: &str) -> Option<&'a Value> {
    diagnostics.iter().find(|diagnostic| {
        diagnostic["message"]
            .as_str()
            .is_some_and(|message| message.contains(word))
    })
}

fn position(line: u32, character: u32) -> Value {
    json!({"line": line, "character": character})
}

const RELEASE: &str = "\
use redis_script::redis_script;

/// Releases the lock when the token holds it.
#[redis_script(path = \"lua/release.lua\", keys = 1)]
pub async fn release(lock: &str, token: &str) -> i64;
";

/// Reads `ARGV[2]`, which the declaration does not send.
const RELEASE_LUA: &str = "\
if redis.call('GET', KEYS[1]) == ARGV[2] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

#[test]
fn diagnostics_follow_the_script_and_its_rust_declaration() {
    let root = scratch_crate("declaration", RELEASE, &[("release.lua", RELEASE_LUA)]);
    let script = root.join("lua/release.lua");
    let script_uri = uri(&script);
    let mut client = Client::start(&root, &[], true);
    assert!(
        client
            .server_requests
            .iter()
            .chain([&Value::Null])
            .any(|request| request["method"] == "client/registerCapability")
            || client.published.is_empty(),
        "file watching is asked for"
    );

    let diagnostics = client.open(&script, RELEASE_LUA);
    // `token` is never read, and `ARGV[2]` is not sent.
    assert_eq!(codes(&diagnostics), ["RS012", "RS011"], "{diagnostics:#?}");
    let never_read = &diagnostics[0];
    assert_eq!(
        never_read["relatedInformation"][0]["location"]["range"]["start"],
        position(4, 33),
        "the parameter `token`: {never_read:#}"
    );
    let out_of_range = &diagnostics[1];
    assert_eq!(out_of_range["severity"], 1);
    assert_eq!(
        out_of_range["range"],
        json!({"start": position(0, 33), "end": position(0, 40)})
    );
    assert!(
        out_of_range["message"]
            .as_str()
            .is_some_and(|message| message.contains("the Rust function declares 1 argument")),
        "{out_of_range:#}"
    );
    let related = &out_of_range["relatedInformation"][0];
    assert_eq!(related["location"]["uri"], uri(&root.join("src/lib.rs")));
    assert_eq!(related["location"]["range"]["start"], position(3, 22));

    // The edit fixes the script: the diagnostics go.
    let fixed = RELEASE_LUA.replace("ARGV[2]", "ARGV[1]");
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": script_uri, "version": 2},
            "contentChanges": [{
                "range": {"start": position(0, 38), "end": position(0, 39)},
                "text": "1",
            }],
        }),
    );
    assert_eq!(client.diagnostics(&script_uri, 2), Vec::<Value>::new());

    // The Rust declaration drops the token: the script now reads an
    // argument nobody sends, and the editor says so after the change.
    std::fs::write(
        root.join("src/lib.rs"),
        RELEASE.replace("lock: &str, token: &str", "lock: &str"),
    )
    .expect("rewrite src/lib.rs");
    // A modification time one second later, so that even a coarse clock
    // sees the file change.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(1);
    std::fs::File::options()
        .write(true)
        .open(root.join("src/lib.rs"))
        .and_then(|file| file.set_modified(later))
        .expect("touch src/lib.rs");
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&root.join("src/lib.rs")), "type": 2}]}),
    );
    let after = client.diagnostics(&script_uri, 3);
    assert_eq!(codes(&after), ["RS011"], "{after:#?}");
    assert!(fixed.contains("ARGV[1]"));

    // Go-to leads to the declaration's `path`.
    let definition = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": script_uri}, "position": position(1, 2)}),
    );
    assert_eq!(definition[0]["uri"], uri(&root.join("src/lib.rs")));
    assert_eq!(definition[0]["range"]["start"], position(3, 22));
    client.stop();
}

#[test]
fn hover_shows_commands_and_the_rust_parameters() {
    let root = scratch_crate("hover", RELEASE, &[("release.lua", RELEASE_LUA)]);
    let script = root.join("lua/release.lua");
    let mut client = Client::start(&root, &[("REDIS_SCRIPT_TARGET", "redis-7.2")], false);
    client.open(&script, RELEASE_LUA);
    let hover = |client: &mut Client, line, character| {
        client.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri(&script)}, "position": position(line, character)}),
        )["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let get = hover(&mut client, 0, 16);
    assert!(get.starts_with("```\nGET key\n```"), "{get}");
    assert!(get.contains("Since Redis 1.0.0"), "{get}");
    assert!(
        get.contains("Reply in the script on Redis 7.2: boolean or string"),
        "{get}"
    );
    assert!(get.contains("`@read` `@string` `@fast`"), "{get}");
    let key = hover(&mut client, 0, 23);
    assert_eq!(
        key,
        "```rust\nlock: &str\n```\nsent as `KEYS[1]` of the script\n```rust\nasync fn release(lock: &str, token: &str) -> i64\n```"
    );
    let argument = hover(&mut client, 0, 36);
    assert!(
        argument.contains("no declared parameter is sent here"),
        "{argument}"
    );
    assert_eq!(
        client.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri(&script)}, "position": position(3, 0)}),
        ),
        Value::Null
    );
    client.stop();
}

#[test]
fn completion_offers_what_the_target_has() {
    let root = scratch_crate("completion", "", &[]);
    let script = root.join("lua/typing.lua");
    let text = "-- KEYS[1] = hash\nreturn redis.call('HGET";
    std::fs::write(&script, text).expect("write");
    let labels = |target: &str| {
        let mut client = Client::start(&root, &[("REDIS_SCRIPT_TARGET", target)], false);
        client.open(&script, text);
        let items = client.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri(&script)}, "position": position(1, 23)}),
        );
        let labels: Vec<String> = items
            .as_array()
            .expect("a list")
            .iter()
            .filter_map(|item| item["label"].as_str().map(str::to_owned))
            .collect();
        client.stop();
        (labels, items)
    };
    let (on_8, items) = labels("redis-8.0");
    assert!(on_8.contains(&"HGETEX".to_owned()), "{on_8:?}");
    // What a script cannot call is not offered; each command says the
    // release that introduced it, and a deprecated one what replaces it.
    assert!(!on_8.contains(&"MULTI".to_owned()), "{on_8:?}");
    let offered = |label: &str| {
        items
            .as_array()
            .and_then(|items| items.iter().find(|item| item["label"] == label))
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(offered("HGETALL")["detail"], "since Redis 2.0.0");
    assert_eq!(offered("HMSET")["tags"], json!([1]));
    assert_eq!(
        offered("HMSET")["detail"],
        "since Redis 2.0.0; deprecated since 4.0.0: use `HSET` with multiple field-value pairs"
    );
    let (on_7, _) = labels("redis-7.2");
    assert!(on_7.contains(&"HGETALL".to_owned()), "{on_7:?}");
    assert!(!on_7.contains(&"HGETEX".to_owned()), "{on_7:?}");
}

#[test]
fn code_actions_apply_the_suggestion_and_add_an_opt_out() {
    let root = scratch_crate("actions", "", &[]);
    let script = root.join("lua/actions.lua");
    let text = "-- KEYS[1] = counter\nlocal n = redis.call('INCRR', KEYS[1])\nif #redis.call('KEYS', 'x') then return 1 end\nreturn n\n";
    std::fs::write(&script, text).expect("write");
    let mut client = Client::start(&root, &[], false);
    let diagnostics = client.open(&script, text);
    let unknown = mentioning(&diagnostics, "INCRR")
        .unwrap_or_else(|| panic!("no diagnostic about INCRR: {diagnostics:#?}"))
        .clone();
    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri(&script)},
            "range": unknown["range"],
            "context": {"diagnostics": [unknown]},
        }),
    );
    let edit = &actions[0]["edit"]["changes"][uri(&script)][0];
    assert_eq!(actions[0]["title"], "Replace with `'INCR'`");
    assert_eq!(edit["newText"], "'INCR'");
    assert_eq!(edit["range"]["start"], position(1, 21));

    let warning = diagnostics
        .iter()
        .find(|diagnostic| diagnostic["severity"] == 2 && diagnostic["data"]["allow"].is_string())
        .unwrap_or_else(|| panic!("no finding to silence: {diagnostics:#?}"))
        .clone();
    let name = warning["data"]["allow"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri(&script)},
            "range": warning["range"],
            "context": {"diagnostics": [warning]},
        }),
    );
    let allow = actions
        .as_array()
        .expect("actions")
        .iter()
        .find(|action| action["title"] == format!("Allow `{name}` on this line"))
        .unwrap_or_else(|| panic!("no opt-out action: {actions:#}"));
    let edit = &allow["edit"]["changes"][uri(&script)][0];
    assert_eq!(edit["newText"], format!(" -- redis-script: allow({name})"));
    // Applied, the opt-out silences the warning.
    let line = edit["range"]["start"]["line"].as_u64().unwrap_or_default() as usize;
    let silenced: String = text
        .lines()
        .enumerate()
        .map(|(index, text)| {
            if index == line {
                format!("{text} -- redis-script: allow({name})\n")
            } else {
                format!("{text}\n")
            }
        })
        .collect();
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri(&script), "version": 2},
            "contentChanges": [{"text": silenced}],
        }),
    );
    let after = client.diagnostics(&uri(&script), 2);
    assert!(
        !after
            .iter()
            .any(|diagnostic| diagnostic["data"]["allow"] == name),
        "{after:#?}"
    );
    client.stop();
}

#[test]
fn half_typed_code_gives_the_syntax_error_and_keeps_hover() {
    let root = scratch_crate("half-typed", RELEASE, &[("release.lua", RELEASE_LUA)]);
    let script = root.join("lua/release.lua");
    let mut client = Client::start(&root, &[], false);
    client.open(&script, RELEASE_LUA);
    let broken =
        "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('DEL', KEYS[1]\n";
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri(&script), "version": 2},
            "contentChanges": [{"text": broken}],
        }),
    );
    let diagnostics = client.diagnostics(&uri(&script), 2);
    assert_eq!(codes(&diagnostics), ["RS001"], "{diagnostics:#?}");
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri(&script)}, "position": position(1, 29)}),
    );
    assert!(
        hover["contents"]["value"]
            .as_str()
            .is_some_and(|value| value.contains("lock: &str")),
        "{hover}"
    );
    // A request the server does not know is an error answer, not a crash.
    let answer = client.request_answer("textDocument/formatting", json!({}));
    assert_eq!(answer["error"]["code"], -32601);
    client.stop();
}

#[test]
fn a_script_no_declaration_names_is_checked_by_its_header() {
    let root = scratch_crate("header", RELEASE, &[]);
    let script = root.join("lua/other.lua");
    let text = "-- KEYS[1] = counter\nreturn redis.call('SET', KEYS[1], ARGV[1])\n";
    std::fs::write(&script, text).expect("write");
    let mut client = Client::start(&root, &[], false);
    let diagnostics = client.open(&script, text);
    assert_eq!(codes(&diagnostics), ["RS011"], "{diagnostics:#?}");
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .is_some_and(|message| message.contains("the script's header declares no arguments")),
        "{diagnostics:#?}"
    );
    client.stop();
}

/// Random edits of the corpus scripts, cut anywhere (inside strings,
/// between the halves of a character, past the end), each followed by a
/// request at a random place: the server answers every request and
/// publishes diagnostics after every edit. One server takes every case, so
/// what one edit leaves behind meets the next.
#[test]
fn random_edits_of_real_scripts_always_get_answers() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    let corpus_directory = common::workspace().join("tests/lua/corpus");
    let mut corpus: Vec<PathBuf> = std::fs::read_dir(&corpus_directory)
        .expect("the corpus")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "lua"))
        .collect();
    corpus.sort();
    assert!(corpus.len() >= 30, "{} corpus scripts", corpus.len());
    let root = scratch_crate("random-edits", RELEASE, &[("release.lua", RELEASE_LUA)]);
    let client = std::cell::RefCell::new(Client::start(&root, &[], false));

    let piece = prop::sample::select(vec![
        "",
        "(",
        ")",
        "end",
        "'",
        "\"",
        "[[",
        "]]",
        "redis.call('",
        "redis.pcall(\"HG",
        "KEYS[",
        "ARGV[9",
        "é",
        "😀",
        "\n",
        "--",
        "-- redis-script: allow(",
        "function f(",
        "local x = ",
        "return ",
        "#!lua flags=no-writes\n",
        "#!lua name=lib\n",
        "{",
        "}",
        "..",
        "\\",
    ]);
    let edit = (0u32..80, 0u32..90, 0u32..4, 0u32..30, piece);
    let request = prop::sample::select(vec![
        "textDocument/hover",
        "textDocument/completion",
        "textDocument/codeAction",
        "textDocument/definition",
    ]);
    let case = (
        0..corpus.len(),
        prop::collection::vec((edit, request, 0u32..80, 0u32..90), 1..12),
    );
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    let opened = std::cell::Cell::new(0);
    runner
        .run(&case, |(script, steps)| {
            let mut client = client.borrow_mut();
            // Each case edits its own copy, in the declared crate's `lua/`.
            opened.set(opened.get() + 1);
            let path = root.join(format!("lua/case-{}.lua", opened.get()));
            let text = std::fs::read_to_string(&corpus[script]).expect("a corpus script");
            std::fs::write(&path, &text).expect("write the copy");
            let uri = uri(&path);
            client.open(&path, &text);
            for (
                version,
                ((line, character, lines, length, piece), method, at_line, at_character),
            ) in steps.into_iter().enumerate()
            {
                let before = client.published_times(&uri);
                client.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": {"uri": uri, "version": version + 2},
                        "contentChanges": [{
                            "range": {
                                "start": position(line, character),
                                "end": position(line + lines, character + length),
                            },
                            "text": piece,
                        }],
                    }),
                );
                let diagnostics = client.diagnostics(&uri, before + 1);
                let at = position(at_line, at_character);
                let params = match method {
                    "textDocument/codeAction" => json!({
                        "textDocument": {"uri": uri},
                        "range": {"start": at, "end": at},
                        "context": {"diagnostics": diagnostics},
                    }),
                    _ => json!({"textDocument": {"uri": uri}, "position": at}),
                };
                // `request` fails the case on an error answer.
                client.request(method, params);
            }
            client.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            );
            Ok(())
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
    client.into_inner().stop();
}

/// A Rust file open in the editor counts as the editor holds it, saved or
/// not; closed, the disk's text counts again.
#[test]
fn an_unsaved_rust_declaration_counts() {
    let root = scratch_crate("unsaved", RELEASE, &[("release.lua", RELEASE_LUA)]);
    let script = root.join("lua/release.lua");
    let script_uri = uri(&script);
    let rust_uri = uri(&root.join("src/lib.rs"));
    let mut client = Client::start(&root, &[], false);
    assert_eq!(
        codes(&client.open(&script, RELEASE_LUA)),
        ["RS012", "RS011"]
    );
    // A third parameter sends `ARGV[2]`.
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {
            "uri": rust_uri, "languageId": "rust", "version": 1,
            "text": RELEASE.replace("token: &str", "token: &str, owner: &str"),
        }}),
    );
    assert_eq!(codes(&client.diagnostics(&script_uri, 2)), ["RS012"]);
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": rust_uri}}),
    );
    assert_eq!(
        codes(&client.diagnostics(&script_uri, 3)),
        ["RS012", "RS011"]
    );
    client.stop();
}

/// A file no declaration names takes its `redis-script.toml`: target,
/// includes (a mistake in an included file is shown at the top, pointing
/// into that file); the environment's target wins, as on the command line.
#[test]
fn a_scripts_configuration_and_includes_apply() {
    let helper = "local function expiring(key)\n  return redis.call('HGETEX', key, 'PERSIST', 'FIELDS', 1, 'f')\nend\n";
    let text = "-- KEYS[1] = hash\n--- @include \"includes/expiring\"\nreturn expiring(KEYS[1])\n";
    let root = scratch_crate(
        "configured",
        "",
        &[
            (
                "redis-script.toml",
                "target = \"redis-7.2\"\nincludes = \"bullmq\"\n",
            ),
            ("includes/expiring.lua", helper),
            ("read.lua", text),
        ],
    );
    let script = root.join("lua/read.lua");

    let mut client = Client::start(&root, &[], false);
    let diagnostics = client.open(&script, text);
    let not_on_target = mentioning(&diagnostics, "HGETEX")
        .unwrap_or_else(|| panic!("nothing about HGETEX on redis-7.2: {diagnostics:#?}"));
    assert_eq!(not_on_target["range"]["start"], position(0, 0));
    let related = &not_on_target["relatedInformation"][0]["location"];
    assert_eq!(related["uri"], uri(&root.join("lua/includes/expiring.lua")));
    assert_eq!(related["range"]["start"]["line"], 1);
    client.stop();

    let mut client = Client::start(&root, &[("REDIS_SCRIPT_TARGET", "redis-8.0")], false);
    let diagnostics = client.open(&script, text);
    assert!(
        mentioning(&diagnostics, "HGETEX").is_none(),
        "{diagnostics:#?}"
    );
    client.stop();
}

/// In a workspace, a member crate may name a script outside its own
/// directory (`path = "../lua/x.lua"`): the server looks through the whole
/// workspace and resolves each path against its own crate.
#[test]
fn a_workspace_members_declaration_names_a_shared_script() {
    let root = scratch_crate("workspace", "", &[("release.lua", RELEASE_LUA)]);
    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"app\"]\nresolver = \"2\"\n",
    )
    .expect("write the workspace's manifest");
    std::fs::create_dir_all(root.join("app/src")).expect("create app/src");
    std::fs::write(
        root.join("app/Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\n",
    )
    .expect("write app/Cargo.toml");
    std::fs::write(
        root.join("app/src/lib.rs"),
        RELEASE.replace("lua/release.lua", "../lua/release.lua"),
    )
    .expect("write app/src/lib.rs");
    let script = root.join("lua/release.lua");
    let mut client = Client::start(&root, &[], false);
    let diagnostics = client.open(&script, RELEASE_LUA);
    assert_eq!(codes(&diagnostics), ["RS012", "RS011"], "{diagnostics:#?}");
    let definition = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": uri(&script)}, "position": position(0, 0)}),
    );
    assert_eq!(definition[0]["uri"], uri(&root.join("app/src/lib.rs")));
    client.stop();
}
