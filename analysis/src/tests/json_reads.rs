//! What the analysis reports of the `Json<T>` arguments a script decodes.

use super::*;

/// The reads of `source` as `ARGV[n] path use @line:column`, with the
/// first argument a `Json<Job>` and the second a `&str`.
fn reads(source: &str) -> Vec<String> {
    let signature = Signature {
        keys: 1,
        args: 2,
        allow_unused: true,
        arg_names: vec!["job".to_owned(), "name".to_owned()],
        arg_types: ["Json<Job>", "&str"]
            .iter()
            .map(|rust| ArgType {
                rust: (*rust).to_owned(),
                sent: SentAs::of_rust_type(rust),
            })
            .collect(),
        ..Signature::default()
    };
    analyze(source, &signature)
        .json_reads
        .iter()
        .map(|read| {
            format!(
                "ARGV[{}]{} {:?} @{}:{}",
                read.argument, read.path, read.used, read.line, read.column
            )
        })
        .collect()
}

#[test]
fn json_types_are_recognised_whatever_their_path() {
    assert_eq!(SentAs::of_rust_type("Json<Job>"), SentAs::Json);
    assert_eq!(
        SentAs::of_rust_type("redis_script::Json<jobs::Job>"),
        SentAs::Json
    );
    assert_eq!(SentAs::of_rust_type("&Json < Vec<u8> >"), SentAs::Json);
    assert_eq!(SentAs::of_rust_type("JsonText"), SentAs::Any);
    assert_eq!(SentAs::of_rust_type("Vec<Json<Job>>"), SentAs::Any);
}

#[test]
fn fields_of_a_decoded_argument_are_followed_through_locals() {
    assert_eq!(
        reads(
            "local job = cjson.decode(ARGV[1])\nlocal tries = job.attempts + 1\nredis.call('SET', KEYS[1], job['jobId'] .. ':' .. tries)\nreturn job.tags[1]"
        ),
        // Indexing a part read further is covered by the longer read.
        [
            "ARGV[1].attempts Read @2:15",
            "ARGV[1].attempts Arithmetic @2:15",
            "ARGV[1].jobId Read @3:28",
            "ARGV[1].jobId Concatenated @3:28",
            "ARGV[1].tags Read @4:8",
            "ARGV[1].tags[i] Read @4:8",
        ]
    );
}

#[test]
fn comparisons_and_tests_name_the_literal() {
    assert_eq!(
        reads(
            "local job = cjson.decode(ARGV[1])\nif job.done == 'true' then return 1 end\nif not job.note then return 2 end\nif 3 < job.attempts then return 3 end\nreturn 0"
        ),
        [
            "ARGV[1].done Read @2:4",
            "ARGV[1].done ComparedWith(String) @2:4",
            "ARGV[1].note Read @3:8",
            "ARGV[1].note Tested @3:8",
            "ARGV[1].attempts Read @4:8",
            "ARGV[1].attempts Ordered @4:8",
        ]
    );
}

#[test]
fn a_part_compared_with_cjson_null_is_not_reported_as_tested() {
    let found = reads(
        "local job = cjson.decode(ARGV[1])\nif job.note and job.note ~= cjson.null then return job.note end\nreturn ''",
    );
    assert!(
        !found.iter().any(|read| read.contains("Tested")),
        "{found:#?}"
    );
    assert!(found.contains(&"ARGV[1].note ComparedWith(JsonNull) @2:17".to_owned()));
}

#[test]
fn other_arguments_and_other_decoders_are_not_followed() {
    assert!(reads("local v = cjson.decode(ARGV[2])\nreturn v.x + 1").is_empty());
    assert!(reads("local v = cmsgpack.unpack(ARGV[1])\nreturn v.x + 1").is_empty());
    assert!(reads("local v = cjson.decode(redis.call('GET', KEYS[1]))\nreturn v.x + 1").is_empty());
}

#[test]
fn a_computed_key_is_an_indexing_only() {
    assert_eq!(
        reads("local job = cjson.decode(ARGV[1])\nlocal field = ARGV[2]\nreturn job[field]"),
        ["ARGV[1] Indexed @3:8"]
    );
}

/// The fields of the table the script's first `return` encodes, as
/// `name:kind` (`?` where some path leaves it out), and whether no other
/// field can be there.
fn encoded(source: &str) -> Option<(Vec<String>, bool)> {
    let analysis = analyze(source, &signature(1, 2));
    let encoded = analysis.returns.first()?.encoded.clone()?;
    Some((
        encoded
            .fields
            .iter()
            .map(|field| {
                format!(
                    "{}:{:?}{}",
                    field.name,
                    field.kind,
                    if field.always { "" } else { "?" }
                )
            })
            .collect(),
        encoded.complete,
    ))
}

fn fields(names: &[&str], complete: bool) -> Option<(Vec<String>, bool)> {
    Some((
        names.iter().map(|name| (*name).to_owned()).collect(),
        complete,
    ))
}

#[test]
fn an_encoded_constructor_has_its_fields_and_their_kinds() {
    assert_eq!(
        encoded(
            "return cjson.encode({id = ARGV[1], count = 3, ratio = 0.5, done = true, tags = {}})"
        ),
        fields(
            &[
                "id:String",
                "count:Integer",
                "ratio:Fraction",
                "done:Boolean",
                "tags:Table"
            ],
            true
        )
    );
    assert_eq!(
        encoded("return cjson.encode({value = redis.call('GET', KEYS[1])})"),
        fields(&["value:StringOrFalse"], true)
    );
    // An array part or a computed key: other fields may be there.
    assert_eq!(
        encoded("return cjson.encode({ARGV[1], id = 1})"),
        fields(&["id:Integer"], false)
    );
    assert_eq!(
        encoded("return cjson.encode({[ARGV[1]] = 1, id = 1})"),
        fields(&["id:Integer"], false)
    );
}

#[test]
fn a_local_table_gets_the_fields_written_to_it_on_every_path() {
    assert_eq!(
        encoded(
            "local t = {id = ARGV[1]}\nt.count = redis.call('INCR', KEYS[1])\nif ARGV[2] == 'x' then t.extra = 'y' end\nt['id'] = 5\nreturn cjson.encode(t)"
        ),
        fields(&["count:Integer", "extra:String?", "id:Integer"], true)
    );
    assert_eq!(
        encoded("local t = {id = 1}\nt[ARGV[1]] = 2\nreturn cjson.encode(t)"),
        fields(&[], false)
    );
}

#[test]
fn a_table_that_leaves_the_walks_sight_is_not_described() {
    assert_eq!(encoded("return redis.call('GET', KEYS[1])"), None);
    for source in [
        "local t = {id = 1}\nfill(t)\nreturn cjson.encode(t)",
        "local t = {id = 1}\nlocal u = t\nu.extra = 2\nreturn cjson.encode(t)",
        "local t = {id = 1}\nt:fill()\nreturn cjson.encode(t)",
        "local t = {id = 1}\ntable.insert(t, 2)\nreturn cjson.encode(t)",
        "local t = {inner = {id = 1}}\nreturn cjson.encode(t.inner)",
    ] {
        assert_eq!(encoded(source), fields(&[], false), "{source}");
    }
}

#[test]
fn parts_the_script_writes_itself_are_not_checked() {
    // A field the script adds, read back (even in a loop, before the write).
    assert_eq!(
        reads("local job = cjson.decode(ARGV[1])\njob.extra = 1\nreturn job.extra + job.attempts"),
        [
            "ARGV[1].attempts Read @3:20",
            "ARGV[1].attempts Arithmetic @3:20"
        ]
    );
    assert_eq!(
        reads(
            "local job = cjson.decode(ARGV[1])\nfor i = 1, 3 do\n  if not job.seen then job.seen = {} end\n  job.seen[i] = true\nend\nreturn #job.seen"
        ),
        Vec::<String>::new()
    );
    // A key the analysis cannot name: anything in the part may be new.
    assert!(reads("local job = cjson.decode(ARGV[1])\njob[ARGV[2]] = 1\nreturn job.x").is_empty());
    assert_eq!(
        reads(
            "local job = cjson.decode(ARGV[1])\ntable.insert(job.tags, 'x')\nreturn job.tags[1] .. job.id"
        ),
        ["ARGV[1].id Read @3:23", "ARGV[1].id Concatenated @3:23"]
    );
    assert!(
        reads("local job = cjson.decode(ARGV[1])\nrawset(job, 'x', 1)\nreturn job.x").is_empty()
    );
}
