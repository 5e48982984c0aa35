//! Unit tests of the decoding helpers and of the derives built on them.

use super::*;

#[test]
fn words_keep_offsets() {
    let found: Vec<_> = words("  a bc\td ").collect();
    assert_eq!(found, vec![(2, "a"), (4, "bc"), (7, "d")]);
    assert_eq!(words("").count(), 0);
    assert_eq!(words("   ").count(), 0);
}

#[test]
fn named_pairs_positional_words_and_rest() {
    let names = ["expected", "found"];
    assert_eq!(
        error_fields("expected 3 found 4", &names, None),
        vec![Some("3"), Some("4")]
    );
    assert_eq!(
        error_fields("found 4 expected 3", &names, None),
        vec![Some("3"), Some("4")]
    );
    assert_eq!(
        error_fields("expected=3 found=4", &names, None),
        vec![Some("3"), Some("4")]
    );
    assert_eq!(
        error_fields("3 4", &names, None),
        vec![Some("3"), Some("4")]
    );
    assert_eq!(error_fields("3", &names, None), vec![Some("3"), None]);
    assert_eq!(
        error_fields("found 4 3 and more", &names, None),
        vec![Some("3"), Some("4")]
    );
    assert_eq!(error_fields("", &names, None), vec![None, None]);
}

#[test]
fn message_field_takes_the_rest() {
    let names = ["key", "message"];
    assert_eq!(
        error_fields("key user:7 no such  key ", &names, Some(1)),
        vec![Some("user:7"), Some("no such  key")]
    );
    assert_eq!(
        error_fields("key user:7", &names, Some(1)),
        vec![Some("user:7"), Some("")]
    );
    assert_eq!(
        error_fields("the whole text", &["message"], Some(0)),
        vec![Some("the whole text")]
    );
    // `message` itself is never set by name.
    assert_eq!(
        error_fields("message hi", &["message"], Some(0)),
        vec![Some("message hi")]
    );
}

#[test]
fn positional_words_last_takes_rest() {
    assert_eq!(error_words("3 4", 2), vec![Some("3"), Some("4")]);
    assert_eq!(error_words("a b c d", 2), vec![Some("a"), Some("b c d")]);
    assert_eq!(error_words("a", 2), vec![Some("a"), None]);
    assert_eq!(error_words("a", 0), Vec::<Option<&str>>::new());
    assert_eq!(error_words(" all of it ", 1), vec![Some("all of it")]);
}

#[test]
fn fields_parse_with_from_str() {
    let fields = [Some("3"), Some("x"), None];
    assert_eq!(error_field::<u64>(&fields, 0), Some(3));
    assert_eq!(error_field::<u64>(&fields, 1), None);
    assert_eq!(error_field::<u64>(&fields, 2), None);
    assert_eq!(error_field::<u64>(&fields, 9), None);
    assert_eq!(error_optional::<u64>(&fields, 0), Some(Some(3)));
    assert_eq!(error_optional::<u64>(&fields, 1), None);
    assert_eq!(error_optional::<u64>(&fields, 2), Some(None));
}

#[test]
fn reasons_lose_the_prefix_and_are_bounded() {
    let error = ParsingError::from("x".repeat(1000));
    let text = reason(&error);
    assert!(!text.starts_with(PARSING_PREFIX));
    assert_eq!(text.chars().count(), REASON_LIMIT + 1);
}

mod derived {
    use redis::{FromRedisValue, Value};

    use crate::__private_v3::{ReplyShape, Shape, accepts_bare, accepts_tag};
    #[cfg(feature = "json")]
    use crate::Json;
    use crate::shape::Variant;
    use crate::{Error, Failure, ScriptError, ScriptReply};

    fn bulk(text: &str) -> Value {
        Value::BulkString(text.as_bytes().to_vec())
    }

    fn array(items: Vec<Value>) -> Value {
        Value::Array(items)
    }

    /// Decodes both ways (by reference and by value) and checks they agree.
    fn decode<T: FromRedisValue + std::fmt::Debug + PartialEq>(value: Value) -> Result<T, String> {
        let by_ref = T::from_redis_value_ref(&value).map_err(|error| error.to_string());
        let by_value = T::from_redis_value(value).map_err(|error| error.to_string());
        assert_eq!(
            by_ref, by_value,
            "by-reference and by-value decoding differ"
        );
        by_ref
    }

    fn reason<T: FromRedisValue + std::fmt::Debug + PartialEq>(value: Value) -> String {
        let error = decode::<T>(value).expect_err("expected a decode error");
        error
            .strip_prefix("Incompatible type - ")
            .unwrap_or(&error)
            .to_owned()
    }

    #[derive(Debug, PartialEq, ScriptReply)]
    struct Window {
        count: u64,
        reset_at: i64,
    }

    #[derive(Debug, PartialEq, ScriptReply)]
    struct Trailing {
        id: String,
        score: Option<u32>,
        note: Option<String>,
    }

    #[derive(Debug, PartialEq, ScriptReply)]
    struct Pair(u64, Option<Vec<u8>>);

    #[derive(Debug, PartialEq, ScriptReply)]
    enum Decision {
        Allowed {
            count: u64,
        },
        Denied {
            count: u64,
            retry_ms: u64,
        },
        #[reply(tag = "busy-now")]
        Busy,
        TooMany(u64, Option<u64>),
        #[reply(tag = "OK")]
        Fine,
    }

    #[derive(Debug, PartialEq, ScriptReply)]
    struct Nested {
        flags: Vec<bool>,
        windows: Vec<Window>,
        decision: Decision,
        raw: Vec<u8>,
        missing: Option<Window>,
    }

    #[derive(Debug, PartialEq, ScriptReply)]
    struct Page<T> {
        items: Vec<T>,
        cursor: Option<u64>,
    }

    #[derive(Debug, PartialEq, ScriptReply)]
    struct Flags {
        first: bool,
        second: bool,
        third: Option<bool>,
    }

    #[cfg(feature = "json")]
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Profile {
        name: String,
        tags: Vec<String>,
    }

    #[cfg(feature = "json")]
    #[derive(Debug, PartialEq, ScriptReply)]
    struct WithJson {
        version: u64,
        profile: Json<Profile>,
    }

    #[test]
    fn named_struct_from_array() {
        let value = array(vec![Value::Int(3), bulk("-5")]);
        assert_eq!(
            decode::<Window>(value),
            Ok(Window {
                count: 3,
                reset_at: -5
            })
        );
    }

    #[test]
    fn trailing_options_may_be_absent() {
        assert_eq!(
            decode::<Trailing>(array(vec![bulk("a")])),
            Ok(Trailing {
                id: "a".into(),
                score: None,
                note: None
            })
        );
        assert_eq!(
            decode::<Trailing>(array(vec![bulk("a"), Value::Int(7)])),
            Ok(Trailing {
                id: "a".into(),
                score: Some(7),
                note: None
            })
        );
        // A nil hole (Lua `false` inside an array) reads as None.
        assert_eq!(
            decode::<Trailing>(array(vec![bulk("a"), Value::Nil, bulk("n")])),
            Ok(Trailing {
                id: "a".into(),
                score: None,
                note: Some("n".into())
            })
        );
        assert_eq!(
            reason::<Trailing>(array(vec![])),
            "expected Trailing {id, score, note} (1 to 3 elements), got 0 elements"
        );
    }

    #[test]
    fn tuple_struct_from_array() {
        assert_eq!(
            decode::<Pair>(array(vec![Value::Int(1), bulk("xy")])),
            Ok(Pair(1, Some(b"xy".to_vec())))
        );
        assert_eq!(
            decode::<Pair>(array(vec![Value::Int(1)])),
            Ok(Pair(1, None))
        );
        assert_eq!(
            reason::<Pair>(array(vec![Value::Int(1), bulk("a"), bulk("b")])),
            "expected Pair(u64, Option<Vec<u8>>) (1 to 2 elements), got 3 elements"
        );
    }

    #[test]
    fn wrong_counts_and_kinds_for_structs() {
        assert_eq!(
            reason::<Window>(array(vec![Value::Int(3)])),
            "expected Window {count, reset_at} (2 elements), got 1 element"
        );
        assert_eq!(
            reason::<Window>(Value::Int(3)),
            "expected Window {count, reset_at} (an array of 2 elements), got 3"
        );
        assert_eq!(
            reason::<Window>(Value::Nil),
            "expected Window {count, reset_at}, got nil (a script returning nil or false decodes only into an `Option`)"
        );
        assert_eq!(decode::<Option<Window>>(Value::Nil), Ok(None));
    }

    #[test]
    fn field_errors_name_the_field_and_element() {
        let error = reason::<Window>(array(vec![Value::Int(3), bulk("soon")]));
        assert!(
            error.starts_with("Window {count, reset_at}: field `reset_at` (element 2): "),
            "{error}"
        );
        // Long values inside nested errors are cut.
        let long = "x".repeat(5_000);
        let error = reason::<Window>(array(vec![Value::Int(3), bulk(&long)]));
        assert!(
            error.chars().count() < 400,
            "{} chars",
            error.chars().count()
        );
        assert!(error.ends_with('…'), "{error}");
    }

    #[test]
    fn enum_variants_from_tagged_arrays() {
        assert_eq!(
            decode::<Decision>(array(vec![bulk("ALLOWED"), Value::Int(4)])),
            Ok(Decision::Allowed { count: 4 })
        );
        assert_eq!(
            decode::<Decision>(array(vec![bulk("DENIED"), Value::Int(4), Value::Int(900)])),
            Ok(Decision::Denied {
                count: 4,
                retry_ms: 900
            })
        );
        assert_eq!(
            decode::<Decision>(array(vec![bulk("TOO_MANY"), Value::Int(4)])),
            Ok(Decision::TooMany(4, None))
        );
        assert_eq!(
            decode::<Decision>(array(vec![
                Value::SimpleString("TOO_MANY".into()),
                Value::Int(4),
                Value::Int(5)
            ])),
            Ok(Decision::TooMany(4, Some(5)))
        );
        assert_eq!(
            decode::<Decision>(array(vec![bulk("busy-now")])),
            Ok(Decision::Busy)
        );
    }

    #[test]
    fn unit_variants_from_bare_strings_and_status_replies() {
        assert_eq!(decode::<Decision>(bulk("busy-now")), Ok(Decision::Busy));
        assert_eq!(
            decode::<Decision>(Value::SimpleString("busy-now".into())),
            Ok(Decision::Busy)
        );
        assert_eq!(decode::<Decision>(Value::Okay), Ok(Decision::Fine));
        assert_eq!(
            reason::<Decision>(bulk("DENIED")),
            "expected Decision::Denied {count, retry_ms} (3 elements with the tag), got the bare tag \"DENIED\""
        );
    }

    #[test]
    fn wrong_tags_and_counts_for_enums() {
        assert_eq!(
            reason::<Decision>(array(vec![bulk("DENIED"), Value::Int(4)])),
            "expected Decision::Denied {count, retry_ms} (3 elements with the tag), got 2 elements"
        );
        assert_eq!(
            reason::<Decision>(array(vec![bulk("TOO_MANY")])),
            "expected Decision::TooMany(u64, Option<u64>) (2 to 3 elements with the tag), got 1 element"
        );
        assert_eq!(
            reason::<Decision>(array(vec![bulk("MAYBE"), Value::Int(1)])),
            "unknown tag \"MAYBE\": expected one of ALLOWED, DENIED, busy-now, TOO_MANY, OK"
        );
        assert_eq!(
            reason::<Decision>(bulk("allowed")),
            "unknown tag \"allowed\": expected one of ALLOWED, DENIED, busy-now, TOO_MANY, OK"
        );
        assert_eq!(
            reason::<Decision>(array(vec![Value::Int(1), Value::Int(1)])),
            "expected Decision: the first element must be a tag (one of ALLOWED, DENIED, busy-now, TOO_MANY, OK), got 1"
        );
        assert_eq!(
            reason::<Decision>(array(vec![])),
            "expected Decision (a tag among ALLOWED, DENIED, busy-now, TOO_MANY, OK, alone or as the first element of an array), got an empty array"
        );
        assert_eq!(
            reason::<Decision>(Value::Int(7)),
            "expected Decision (a tag among ALLOWED, DENIED, busy-now, TOO_MANY, OK, alone or as the first element of an array), got 7"
        );
        let long_tag = "T".repeat(500);
        let error = reason::<Decision>(bulk(&long_tag));
        assert!(error.len() < 200, "{error}");
    }

    #[test]
    fn nested_types_vectors_booleans_and_bytes() {
        let value = array(vec![
            array(vec![Value::Int(1), Value::Nil, Value::Boolean(true)]),
            array(vec![
                array(vec![Value::Int(1), Value::Int(2)]),
                array(vec![Value::Int(3), Value::Int(4)]),
            ]),
            array(vec![bulk("ALLOWED"), Value::Int(9)]),
            Value::BulkString(vec![0, 255, 1]),
            Value::Nil,
        ]);
        assert_eq!(
            decode::<Nested>(value),
            Ok(Nested {
                flags: vec![true, false, true],
                windows: vec![
                    Window {
                        count: 1,
                        reset_at: 2
                    },
                    Window {
                        count: 3,
                        reset_at: 4
                    }
                ],
                decision: Decision::Allowed { count: 9 },
                raw: vec![0, 255, 1],
                missing: None,
            })
        );
        let bad = array(vec![
            array(vec![]),
            array(vec![array(vec![Value::Int(1)])]),
            array(vec![bulk("ALLOWED"), Value::Int(9)]),
            bulk(""),
        ]);
        assert_eq!(
            reason::<Nested>(bad),
            "Nested {flags, windows, decision, raw, missing}: field `windows` (element 2): expected Window {count, reset_at} (2 elements), got 1 element"
        );
    }

    #[test]
    fn lua_booleans() {
        // Lua `true` arrives as 1, `false` as nil (in RESP3, as booleans).
        assert_eq!(
            decode::<Flags>(array(vec![Value::Int(1), Value::Nil])),
            Ok(Flags {
                first: true,
                second: false,
                third: None
            })
        );
        assert_eq!(
            decode::<Flags>(array(vec![
                Value::Boolean(false),
                Value::Boolean(true),
                Value::Int(1)
            ])),
            Ok(Flags {
                first: false,
                second: true,
                third: Some(true)
            })
        );
    }

    #[test]
    fn generic_structs() {
        assert_eq!(
            decode::<Page<String>>(array(vec![
                array(vec![bulk("a"), bulk("b")]),
                Value::Int(0)
            ])),
            Ok(Page {
                items: vec!["a".into(), "b".into()],
                cursor: Some(0)
            })
        );
        assert_eq!(
            <Page<u8> as ReplyShape>::SHAPE,
            Shape::Array {
                name: "Page",
                min: 1,
                max: 2
            }
        );
    }

    #[cfg(feature = "json")]
    #[test]
    fn json_fields() {
        let value = array(vec![Value::Int(2), bulk(r#"{"name":"ada","tags":[]}"#)]);
        let decoded = decode::<WithJson>(value).map(|reply| reply.profile.into_inner());
        assert_eq!(
            decoded,
            Ok(Profile {
                name: "ada".into(),
                tags: vec![]
            })
        );
        let error = reason::<WithJson>(array(vec![Value::Int(2), bulk("{\"name\":")]));
        assert!(
            error.starts_with(
                "WithJson {version, profile}: field `profile` (element 2): invalid JSON for "
            ),
            "{error}"
        );
        assert!(error.contains("line 1 column 8"), "{error}");
    }

    #[test]
    fn attribute_wrapped_replies() {
        let wrapped = Value::Attribute {
            data: Box::new(array(vec![Value::Int(1), Value::Int(2)])),
            attributes: vec![],
        };
        assert_eq!(
            decode::<Window>(wrapped),
            Ok(Window {
                count: 1,
                reset_at: 2
            })
        );
    }

    #[test]
    fn derived_shapes() {
        assert_eq!(
            <Window as ReplyShape>::SHAPE,
            Shape::Array {
                name: "Window",
                min: 2,
                max: 2
            }
        );
        assert_eq!(
            <Trailing as ReplyShape>::SHAPE,
            Shape::Array {
                name: "Trailing",
                min: 1,
                max: 3
            }
        );
        let Shape::Tagged { name, variants } = <Decision as ReplyShape>::SHAPE else {
            panic!("Decision is tagged");
        };
        assert_eq!(name, "Decision");
        assert_eq!(
            variants,
            [
                Variant {
                    name: "Allowed",
                    tag: "ALLOWED",
                    min: 1,
                    max: 1,
                    unit: false
                },
                Variant {
                    name: "Denied",
                    tag: "DENIED",
                    min: 2,
                    max: 2,
                    unit: false
                },
                Variant {
                    name: "Busy",
                    tag: "busy-now",
                    min: 0,
                    max: 0,
                    unit: true
                },
                Variant {
                    name: "TooMany",
                    tag: "TOO_MANY",
                    min: 1,
                    max: 2,
                    unit: false
                },
                Variant {
                    name: "Fine",
                    tag: "OK",
                    min: 0,
                    max: 0,
                    unit: true
                },
            ]
        );
        const SHAPE: Shape = <Decision as ReplyShape>::SHAPE;
        const _: () = assert!(accepts_tag(&SHAPE, "DENIED", 2));
        const _: () = assert!(!accepts_tag(&SHAPE, "DENIED", 1));
        const _: () = assert!(accepts_bare(&SHAPE, "OK"));
        const _: () = assert!(!accepts_bare(&SHAPE, "ALLOWED"));
        assert_eq!(<Option<Decision> as ReplyShape>::SHAPE, SHAPE);
    }

    #[derive(Debug, PartialEq, ScriptError)]
    enum VersionError {
        Conflict {
            expected: u64,
            found: u64,
        },
        #[error_code("GONE")]
        Deleted,
        NotFound {
            key: String,
            message: String,
        },
        Limit(u32, String),
        Stale {
            version: u64,
            by: Option<String>,
        },
    }

    #[test]
    fn script_error_codes_and_fields() {
        assert_eq!(
            VersionError::CODES,
            ["CONFLICT", "GONE", "NOT_FOUND", "LIMIT", "STALE"]
        );
        let cases = [
            (
                "CONFLICT",
                "expected 3 found 4",
                Some(VersionError::Conflict {
                    expected: 3,
                    found: 4,
                }),
            ),
            (
                "CONFLICT",
                "expected=3 found=4",
                Some(VersionError::Conflict {
                    expected: 3,
                    found: 4,
                }),
            ),
            (
                "CONFLICT",
                "found 4 expected 3",
                Some(VersionError::Conflict {
                    expected: 3,
                    found: 4,
                }),
            ),
            (
                "CONFLICT",
                "3 4",
                Some(VersionError::Conflict {
                    expected: 3,
                    found: 4,
                }),
            ),
            ("CONFLICT", "expected 3", None),
            ("CONFLICT", "expected three found 4", None),
            ("GONE", "whatever it says", Some(VersionError::Deleted)),
            ("GONE", "", Some(VersionError::Deleted)),
            (
                "NOT_FOUND",
                "key doc:7 was  deleted ",
                Some(VersionError::NotFound {
                    key: "doc:7".into(),
                    message: "was  deleted".into(),
                }),
            ),
            (
                "NOT_FOUND",
                "doc:7",
                Some(VersionError::NotFound {
                    key: "doc:7".into(),
                    message: String::new(),
                }),
            ),
            (
                "LIMIT",
                "10 per second",
                Some(VersionError::Limit(10, "per second".into())),
            ),
            ("LIMIT", "10", None),
            (
                "STALE",
                "version 9",
                Some(VersionError::Stale {
                    version: 9,
                    by: None,
                }),
            ),
            (
                "STALE",
                "9 worker-2",
                Some(VersionError::Stale {
                    version: 9,
                    by: Some("worker-2".into()),
                }),
            ),
            ("conflict", "3 4", None),
            ("ERR", "expected 3 found 4", None),
        ];
        for (code, message, expected) in cases {
            assert_eq!(
                VersionError::from_error_reply(code, message),
                expected,
                "{code} {message}"
            );
        }
    }

    #[test]
    fn script_error_display_round_trips() {
        let errors = [
            VersionError::Conflict {
                expected: 3,
                found: 4,
            },
            VersionError::Deleted,
            VersionError::NotFound {
                key: "k".into(),
                message: "no such key".into(),
            },
            VersionError::Limit(10, "per second".into()),
            VersionError::Stale {
                version: 9,
                by: None,
            },
            VersionError::Stale {
                version: 9,
                by: Some("w".into()),
            },
        ];
        let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "CONFLICT expected=3 found=4",
                "GONE",
                "NOT_FOUND key=k no such key",
                "LIMIT 10 per second",
                "STALE version=9",
                "STALE version=9 by=w",
            ]
        );
        for error in errors {
            let text = error.to_string();
            let (code, message) = text.split_once(' ').unwrap_or((&text, ""));
            assert_eq!(error.code(), code);
            assert_eq!(
                VersionError::from_error_reply(code, message).as_ref(),
                Some(&error)
            );
        }
    }

    #[test]
    fn classify_separates_declared_errors() {
        let script_error = |code: &str, message: &str| Error::Script {
            operation: "set_versioned",
            code: code.into(),
            message: message.into(),
            location: None,
            raised: false,
        };
        let failure = Failure::<VersionError>::from(script_error("CONFLICT", "expected 3 found 4"));
        assert!(matches!(
            failure,
            Failure::Declared(VersionError::Conflict {
                expected: 3,
                found: 4
            })
        ));
        assert!(failure.may_have_executed());
        assert_eq!(failure.to_string(), "CONFLICT expected=3 found=4");

        // An undeclared code stays as it was.
        match Failure::<VersionError>::from(script_error("ERR", "boom")) {
            Failure::Other(Error::Script { code, message, .. }) => {
                assert_eq!((code.as_str(), message.as_str()), ("ERR", "boom"));
            }
            other => panic!("expected Failure::Other(Error::Script), got {other:?}"),
        }
        // A declared code whose message lacks the variant's fields is a
        // decode error naming the code.
        let failure = Failure::<VersionError>::from(script_error("CONFLICT", "garbled"));
        match &failure {
            Failure::Other(Error::Decode { reply, reason, .. }) => {
                assert_eq!(reply, "CONFLICT garbled");
                assert!(reason.contains("declared error code CONFLICT"), "{reason}");
            }
            other => panic!("expected Failure::Other(Error::Decode), got {other:?}"),
        }
        assert!(failure.may_have_executed());
        let cross = Error::CrossSlot {
            operation: "s",
            keys: vec![],
        };
        let failure: Failure<VersionError> = cross.into();
        assert!(!failure.may_have_executed());
        assert!(failure.other().is_some() && failure.declared().is_none());
        assert!(failure.to_string().starts_with("`s`: keys hash"));
    }
}
