//! The JSON checks, with the live server as the oracle: every problem the
//! checker reports about a `Json<T>` argument or a `Json<T>` reply must
//! happen on the server.
//!
//! Argument side: scripts generated from every path into a decoded
//! document (fields serde writes, misspelt ones, skipped ones, elements,
//! fields of scalars) crossed with every use the checks know (a read,
//! arithmetic, `..`, `<`, `==` with each kind of literal, a test for
//! truth), run on documents with each `Option` both `Some` and `None`. A
//! path the checker says finds nothing must read nil (or raise) on every
//! document; an operation it says raises must raise on every one; a
//! comparison it says never holds must be false on every one; an `Option`
//! it says tests true for `None` must, on a document where it is `None`.
//!
//! Reply side: tables generated from a valid document by replacing one
//! field with a value of each Lua kind, or leaving it out, encoded by the
//! script directly and through a local table. A table the checker refuses
//! must be JSON serde_json fails to read.
//!
//! The checker is run as the attribute runs it: the analysis' facts, then
//! the constant functions its assertions call, with `Doc`'s derived shape.
//! The test also counts the failures the checker does not predict, which
//! measures its reach, not its precision.

use redis::aio::MultiplexedConnection;
use redis_script::__private_v3::{
    EncodedKind as CheckedKind, JsonUse as CheckedUse, json_field_problem, json_missing_fields,
    json_path_problem, json_use_problem,
};
use redis_script::JsonShape;
use redis_script_analysis::{
    ArgType, EncodedKind, JsonRead, JsonStep, JsonUse, LiteralKind, SentAs, Signature, analyze,
};
use redis_script_test::RedisServer;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, JsonShape)]
#[serde(rename_all = "camelCase")]
struct Doc {
    job_id: String,
    attempts: u32,
    ratio: f64,
    done: bool,
    note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    tags: Vec<String>,
    meta: Meta,
    /// Never written: a read of it is always nil.
    #[serde(skip)]
    #[allow(dead_code)]
    secret: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonShape)]
struct Meta {
    owner: String,
    level: Option<u8>,
}

/// Documents with every `Option` both ways and lists empty and not.
fn documents() -> Vec<Doc> {
    let mut documents = Vec::new();
    for variant in 0..8u8 {
        let some = |bit: u8| variant & (1 << bit) != 0;
        documents.push(Doc {
            job_id: format!("job-{variant}"),
            attempts: u32::from(variant) * 7,
            ratio: f64::from(variant) / 4.0,
            done: some(0),
            note: some(0).then(|| format!("note {variant}")),
            hint: some(1).then(|| "hint".to_owned()),
            tags: if some(2) {
                vec!["a".to_owned(), "b".to_owned()]
            } else {
                Vec::new()
            },
            meta: Meta {
                owner: "owner".to_owned(),
                level: some(1).then_some(variant),
            },
            secret: "never sent".to_owned(),
        });
    }
    documents
}

/// Paths into the decoded document, as Lua suffixes of `d`.
const PATHS: &[&str] = &[
    ".jobId",
    ".job_id",
    ".attempts",
    ".ratio",
    ".done",
    ".note",
    ".hint",
    ".tags",
    ".tags[1]",
    ".tags.first",
    ".meta",
    ".meta.owner",
    ".meta.level",
    ".meta.owner.size",
    ".attempts.x",
    ".secret",
    "[1]",
    "['jobId']",
    ".missing",
];

/// Uses of the part `v`, each returning a string (or raising).
const USES: &[&str] = &[
    "return type(v)",
    "return tostring(v + 1)",
    "return v .. ''",
    "return tostring(v < 1)",
    "return tostring(v == 'true')",
    "return tostring(v == 1)",
    "return tostring(v == true)",
    "return tostring(v == nil)",
    "if v then return 'yes' end return 'no'",
];

fn signature() -> Signature {
    Signature {
        keys: 1,
        args: 1,
        allow_unused: true,
        arg_names: vec!["doc".to_owned()],
        arg_types: vec![ArgType {
            rust: "Json<Doc>".to_owned(),
            sent: SentAs::Json,
        }],
        ..Signature::default()
    }
}

async fn run(
    connection: &mut MultiplexedConnection,
    script: &str,
    argument: &str,
) -> Result<String, String> {
    redis::cmd("EVAL")
        .arg(script)
        .arg(1)
        .arg("{json-oracle}missing")
        .arg(argument)
        .query_async::<String>(connection)
        .await
        .map_err(|error| error.to_string())
}

/// What the attribute's assertions conclude about one read.
enum Claim {
    /// The path finds nothing: nil, or a raise.
    FindsNothing,
    Raises,
    /// `==` is false on every document.
    NeverEqual,
    /// The test passes, or `== nil` is false, where the field is `None`.
    NullIsNotNil,
}

fn claim_of(read: &JsonRead) -> Option<Claim> {
    let shape = &Doc::JSON;
    let owned: Vec<Option<String>> = read
        .path
        .0
        .iter()
        .map(|step| match step {
            JsonStep::Field(name) => Some(name.clone()),
            JsonStep::Element => None,
        })
        .collect();
    let path: Vec<Option<&str>> = owned.iter().map(Option::as_deref).collect();
    if json_path_problem(shape, &path, "", "").is_some() {
        return Some(Claim::FindsNothing);
    }
    let (used, claim) = match read.used {
        JsonUse::Read => return None,
        JsonUse::Indexed => (CheckedUse::Indexed, Claim::FindsNothing),
        JsonUse::Arithmetic => (CheckedUse::Arithmetic, Claim::Raises),
        JsonUse::Concatenated => (CheckedUse::Concatenated, Claim::Raises),
        JsonUse::Ordered => (CheckedUse::Ordered, Claim::Raises),
        JsonUse::Tested => (CheckedUse::Tested, Claim::NullIsNotNil),
        JsonUse::ComparedWith(LiteralKind::Nil) => {
            (CheckedUse::ComparedWithNil, Claim::NullIsNotNil)
        }
        JsonUse::ComparedWith(LiteralKind::Boolean) => {
            (CheckedUse::ComparedWithBoolean, Claim::NeverEqual)
        }
        JsonUse::ComparedWith(LiteralKind::Number) => {
            (CheckedUse::ComparedWithNumber, Claim::NeverEqual)
        }
        JsonUse::ComparedWith(LiteralKind::String) => {
            (CheckedUse::ComparedWithString, Claim::NeverEqual)
        }
        JsonUse::ComparedWith(_) => return None,
        JsonUse::TextAsNumber => (CheckedUse::TextAsNumber, Claim::Raises),
    };
    json_use_problem(shape, &path, used, "", "").map(|_| claim)
}

#[tokio::test]
async fn what_the_checker_says_of_a_json_argument_happens_on_the_server() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let documents = documents();
    let texts: Vec<String> = documents
        .iter()
        .map(|document| serde_json::to_string(document).expect("a Doc is JSON"))
        .collect();
    let (mut claims, mut failures_unclaimed) = (0, 0);
    for path in PATHS {
        for used in USES {
            let script = format!("local d = cjson.decode(ARGV[1])\nlocal v = d{path}\n{used}");
            let analysis = analyze(&script, &signature());
            let script_claims: Vec<Claim> =
                analysis.json_reads.iter().filter_map(claim_of).collect();
            let mut outcomes = Vec::new();
            for (document, text) in documents.iter().zip(&texts) {
                outcomes.push((document, run(&mut connection, &script, text).await));
            }
            if script_claims.is_empty() {
                failures_unclaimed +=
                    usize::from(outcomes.iter().any(|(_, outcome)| outcome.is_err()));
                continue;
            }
            for claim in script_claims {
                claims += 1;
                let holds = match claim {
                    Claim::FindsNothing => path_reads_nil(&mut connection, path, &texts).await,
                    Claim::Raises => outcomes.iter().all(|(_, outcome)| outcome.is_err()),
                    Claim::NeverEqual => outcomes
                        .iter()
                        .all(|(_, outcome)| outcome.as_deref() == Ok("false")),
                    Claim::NullIsNotNil => outcomes.iter().any(|(document, outcome)| {
                        is_none_at(document, path)
                            && matches!(outcome.as_deref(), Ok("yes" | "false"))
                    }),
                };
                assert!(
                    holds,
                    "the checker's claim does not hold on the server for:\n{script}\noutcomes: {:?}",
                    outcomes
                        .iter()
                        .map(|(_, outcome)| outcome)
                        .collect::<Vec<_>>()
                );
            }
        }
    }
    println!(
        "JSON arguments: {claims} claims held on the server; {failures_unclaimed} of {} scripts failed on some document without a claim",
        PATHS.len() * USES.len()
    );
    assert!(
        claims >= 40,
        "only {claims} claims: the generator no longer reaches the checks"
    );
}

#[tokio::test]
async fn json_text_the_checker_says_is_no_number_is_none_on_the_server() {
    use redis_script::shape::JsonType;
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let document = serde_json::to_string(&documents()[0]).expect("a Doc is JSON");
    // Each argument type's shape, and texts serde_json writes for it.
    let cases: [(&str, &JsonType, Vec<String>); 7] = [
        ("Doc", &Doc::JSON, vec![document]),
        (
            "Vec<String>",
            &<Vec<String>>::JSON,
            vec!["[]".into(), "[\"1\"]".into()],
        ),
        ("bool", &bool::JSON, vec!["true".into(), "false".into()]),
        (
            "String",
            &String::JSON,
            vec!["\"12\"".into(), "\"\"".into()],
        ),
        ("u32", &u32::JSON, vec!["12".into(), "0".into()]),
        ("f64", &f64::JSON, vec!["1.5".into(), "-0.0".into()]),
        (
            "Option<u32>",
            &<Option<u32>>::JSON,
            vec!["null".into(), "7".into()],
        ),
    ];
    let mut claims = 0;
    for (rust, shape, texts) in cases {
        for script in [
            "return tostring(tonumber(ARGV[1]))",
            "return tostring(ARGV[1] + 0)",
        ] {
            let signature = Signature {
                keys: 0,
                args: 1,
                arg_types: vec![ArgType {
                    rust: format!("Json<{rust}>"),
                    sent: SentAs::Json,
                }],
                ..Signature::default()
            };
            let reads = analyze(script, &signature).json_reads;
            assert!(
                reads.iter().any(|read| read.used == JsonUse::TextAsNumber),
                "{script}: {reads:?}"
            );
            let claimed = json_use_problem(shape, &[], CheckedUse::TextAsNumber, "", "").is_some();
            for text in &texts {
                let outcome = redis::cmd("EVAL")
                    .arg(script)
                    .arg(0)
                    .arg(text)
                    .query_async::<String>(&mut connection)
                    .await;
                if claimed {
                    claims += 1;
                    assert!(
                        matches!(outcome.as_deref(), Ok("nil") | Err(_)),
                        "`{rust}` sent as {text}: the checker says its text is no number, but {script} gave {outcome:?}"
                    );
                }
            }
            assert_eq!(
                claimed,
                matches!(rust, "Doc" | "Vec<String>" | "bool" | "String"),
                "{rust}"
            );
        }
    }
    assert!(claims > 0);
}

/// Whether the path reads nil (or raises) on every document.
async fn path_reads_nil(
    connection: &mut MultiplexedConnection,
    path: &str,
    texts: &[String],
) -> bool {
    let script = format!("local d = cjson.decode(ARGV[1])\nreturn type(d{path})");
    for text in texts {
        if let Ok(kind) = run(connection, &script, text).await
            && kind != "nil"
        {
            return false;
        }
    }
    true
}

/// The document's `Option` at `path` is `None`.
fn is_none_at(document: &Doc, path: &str) -> bool {
    match path {
        ".note" => document.note.is_none(),
        ".hint" => document.hint.is_none(),
        ".meta.level" => document.meta.level.is_none(),
        _ => false,
    }
}

/// A valid document's fields, as Lua.
const VALID: &[(&str, &str)] = &[
    ("jobId", "'job-1'"),
    ("attempts", "3"),
    ("ratio", "0.5"),
    ("done", "false"),
    ("note", "cjson.null"),
    ("tags", "{'a'}"),
    ("meta", "{owner = 'o'}"),
];

/// Values of each Lua kind a field may be given.
const VALUES: &[&str] = &[
    "3",
    "2.5",
    "'x'",
    "'5'",
    "true",
    "{}",
    "{'a'}",
    "{owner = 'o'}",
    "redis.call('GET', KEYS[1])",
    "redis.call('INCR', KEYS[1] .. ':n')",
    "tonumber(ARGV[1])",
    "nil",
    "cjson.null",
];

#[tokio::test]
async fn a_table_the_checker_refuses_for_a_json_reply_fails_to_decode() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let mut tables: Vec<Vec<(String, String)>> = Vec::new();
    let valid: Vec<(String, String)> = VALID
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    tables.push(valid.clone());
    for (name, _) in VALID.iter().chain([("hint", ""), ("extra", "")].iter()) {
        tables.push(
            valid
                .iter()
                .filter(|(field, _)| field != name)
                .cloned()
                .collect(),
        );
        for value in VALUES {
            let mut table: Vec<(String, String)> = valid
                .iter()
                .filter(|(field, _)| field != name)
                .cloned()
                .collect();
            table.push(((*name).to_owned(), (*value).to_owned()));
            tables.push(table);
        }
    }
    let (mut refused, mut failures_unclaimed, mut scripts) = (0, 0, 0);
    for table in &tables {
        let constructor = table
            .iter()
            .map(|(name, value)| format!("{name} = {value}"))
            .collect::<Vec<_>>()
            .join(", ");
        let assignments = table
            .iter()
            .map(|(name, value)| format!("t.{name} = {value}"))
            .collect::<Vec<_>>()
            .join("\n");
        for script in [
            format!("return cjson.encode({{{constructor}}})"),
            format!("local t = {{}}\n{assignments}\nreturn cjson.encode(t)"),
        ] {
            scripts += 1;
            let analysis = analyze(
                &script,
                &Signature {
                    keys: 1,
                    args: 1,
                    allow_unused: true,
                    ..Signature::default()
                },
            );
            let Some(encoded) = analysis
                .returns
                .first()
                .and_then(|site| site.encoded.clone())
            else {
                panic!("no encoded table found in:\n{script}");
            };
            let mut problems = Vec::new();
            for field in &encoded.fields {
                let Some(kind) = checked_kind(field.kind) else {
                    continue;
                };
                if let Some(problem) = json_field_problem(&Doc::JSON, &field.name, kind, "", "") {
                    problems.push(problem.as_str().to_owned());
                }
            }
            if encoded.complete {
                let present: Vec<&str> = encoded
                    .fields
                    .iter()
                    .map(|field| field.name.as_str())
                    .collect();
                if let Some(problem) = json_missing_fields(&Doc::JSON, &present, "", "") {
                    problems.push(problem.as_str().to_owned());
                }
            }
            let text = run(&mut connection, &script, "7").await;
            let decoded = text.as_ref().map_err(Clone::clone).and_then(|text| {
                serde_json::from_str::<Doc>(text).map_err(|error| error.to_string())
            });
            if problems.is_empty() {
                failures_unclaimed += usize::from(decoded.is_err());
                continue;
            }
            refused += 1;
            assert!(
                decoded.is_err(),
                "the checker refuses a table serde_json reads:\n{script}\nproblems: {problems:?}\ntext: {text:?}"
            );
        }
    }
    println!(
        "JSON replies: {refused} of {scripts} tables refused, each failing to decode on the server; {failures_unclaimed} failed without a refusal"
    );
    assert!(
        refused >= 40,
        "only {refused} refusals: the generator no longer reaches the checks"
    );
}

/// The assertions' name for what cjson writes.
fn checked_kind(kind: EncodedKind) -> Option<CheckedKind> {
    Some(match kind {
        EncodedKind::Integer => CheckedKind::Integer,
        EncodedKind::Fraction => CheckedKind::Fraction,
        EncodedKind::Number => CheckedKind::Number,
        EncodedKind::String => CheckedKind::String,
        EncodedKind::Boolean => CheckedKind::Boolean,
        EncodedKind::StringOrFalse => CheckedKind::StringOrFalse,
        EncodedKind::Table => CheckedKind::Table,
        EncodedKind::Nil => CheckedKind::Nil,
        EncodedKind::Null => CheckedKind::Null,
        EncodedKind::NumberOrNil => CheckedKind::NumberOrNil,
        EncodedKind::Unknown => return None,
    })
}
