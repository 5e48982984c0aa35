//! The derive against serde itself: for each struct, the keys serde_json
//! writes are exactly the fields the shape says it writes, and reading
//! an object without a field fails exactly when the shape says that
//! field is required.

use std::collections::{BTreeMap, HashMap};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::*;

fn object_of<T: JsonShape>() -> &'static JsonObject {
    match T::JSON {
        JsonType::Object(object) => object,
        other => panic!("expected an object, got {other:?}"),
    }
}

fn names<T: JsonShape>() -> Vec<&'static str> {
    object_of::<T>()
        .fields
        .iter()
        .map(|field| field.name)
        .collect()
}

fn reads<T: DeserializeOwned>(object: &Map<String, Value>) -> bool {
    serde_json::from_value::<T>(Value::Object(object.clone())).is_ok()
}

/// Serde is the oracle: writes `value`, compares the keys with the
/// shape's, then reads the object back (under each field's read name)
/// without each field in turn, and under each alias.
fn agrees_with_serde<T: Serialize + DeserializeOwned + JsonShape>(value: &T) {
    let object = object_of::<T>();
    let written = match serde_json::to_value(value) {
        Ok(Value::Object(written)) => written,
        other => panic!("{}: serde_json wrote {other:?}", object.name),
    };
    for key in written.keys() {
        assert!(
            object.written(key).is_some() || object.open,
            "{}: serde wrote `{key}`, the shape does not list it",
            object.name
        );
    }
    for field in object.fields {
        match field.written {
            Written::Always => assert!(
                written.contains_key(field.name),
                "{}: `{}` is always written but serde did not",
                object.name,
                field.name
            ),
            Written::Never => assert!(
                !written.contains_key(field.name),
                "{}: `{}` is never written but serde did",
                object.name,
                field.name
            ),
            Written::Sometimes => {}
        }
    }
    // The object as read: each written field under its read name, and
    // what a flattened field wrote as it is.
    let mut read = Map::new();
    for (key, value) in &written {
        match object.written(key) {
            Some(field) => {
                if let Some(name) = field.accepts.first() {
                    read.insert((*name).to_owned(), value.clone());
                }
            }
            None => {
                read.insert(key.clone(), value.clone());
            }
        }
    }
    assert!(
        reads::<T>(&read),
        "{}: serde does not read back {read:?}",
        object.name
    );
    for field in object.fields {
        let Some(name) = field.accepts.first() else {
            continue;
        };
        let Some(value) = read.get(*name).cloned() else {
            continue;
        };
        let mut without = read.clone();
        without.remove(*name);
        assert_eq!(
            reads::<T>(&without),
            !field.required,
            "{}: reading without `{name}` (required: {})",
            object.name,
            field.required
        );
        for alias in field.accepts.iter().skip(1) {
            let mut aliased = without.clone();
            aliased.insert((*alias).to_owned(), value.clone());
            assert!(reads::<T>(&aliased), "{}: alias `{alias}`", object.name);
        }
    }
    let mut unknown = read.clone();
    unknown.insert("surely_not_a_field".into(), Value::Null);
    assert_eq!(
        reads::<T>(&unknown),
        !object.deny_unknown_fields,
        "{}: an unknown key",
        object.name
    );
}

macro_rules! cases {
    ($($name:ident: $rule:literal => [$($key:literal),*];)*) => {
        $(
            #[derive(Default, Serialize, Deserialize, crate::JsonShape)]
            #[serde(rename_all = $rule)]
            struct $name {
                job_id: String,
                attempts_left_2x: u32,
                x: bool,
                r#type: u8,
            }
        )*

        #[test]
        fn every_rename_all_case_names_the_keys_serde_writes() {
            $(
                assert_eq!(names::<$name>(), [$($key),*], $rule);
                agrees_with_serde(&$name::default());
            )*
        }
    };
}

cases! {
    Lower: "lowercase" => ["job_id", "attempts_left_2x", "x", "type"];
    Upper: "UPPERCASE" => ["JOB_ID", "ATTEMPTS_LEFT_2X", "X", "TYPE"];
    Pascal: "PascalCase" => ["JobId", "AttemptsLeft2x", "X", "Type"];
    Camel: "camelCase" => ["jobId", "attemptsLeft2x", "x", "type"];
    Snake: "snake_case" => ["job_id", "attempts_left_2x", "x", "type"];
    ScreamingSnake: "SCREAMING_SNAKE_CASE" => ["JOB_ID", "ATTEMPTS_LEFT_2X", "X", "TYPE"];
    Kebab: "kebab-case" => ["job-id", "attempts-left-2x", "x", "type"];
    ScreamingKebab: "SCREAMING-KEBAB-CASE" => ["JOB-ID", "ATTEMPTS-LEFT-2X", "X", "TYPE"];
}

fn seven() -> u32 {
    7
}

fn read_note<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(deserializer)
}

type MaybeCount = Option<u64>;

#[derive(Default, Serialize, Deserialize, crate::JsonShape)]
#[serde(rename_all = "camelCase")]
struct Extras {
    extra_one: u8,
    #[serde(default)]
    extra_two: Option<u8>,
}

#[derive(Serialize, Deserialize, crate::JsonShape)]
#[serde(rename_all = "camelCase", tag = "kind")]
#[allow(dead_code)] // `cache` and `secret`: serde never writes them.
struct Mixed {
    job_id: String,
    #[serde(rename = "n")]
    count: u32,
    #[serde(rename(serialize = "outName", deserialize = "inName"))]
    both_ways: u8,
    #[serde(alias = "comment", alias = "remark")]
    note: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    #[serde(skip)]
    cache: u64,
    #[serde(skip_serializing, default)]
    secret: String,
    #[serde(skip_deserializing)]
    computed: bool,
    #[serde(default)]
    retries: u8,
    #[serde(default = "seven")]
    limit: u32,
    #[serde(deserialize_with = "read_note")]
    strict_note: Option<String>,
    aliased_option: MaybeCount,
    boxed_option: Box<Option<u8>>,
    #[serde(with = "raw")]
    custom: u8,
    #[json_shape(any)]
    opaque: Opaque,
    map: HashMap<String, Vec<f64>>,
    #[serde(flatten)]
    extras: Extras,
}

mod raw {
    pub fn serialize<S: serde::Serializer>(value: &u8, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&value.to_string())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u8, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[derive(Default, Serialize, Deserialize)]
struct Opaque(i8);

fn mixed() -> Mixed {
    Mixed {
        job_id: "j-1".into(),
        count: 3,
        both_ways: 1,
        note: Some("hi".into()),
        tags: vec!["a".into()],
        cache: 9,
        secret: "s".into(),
        computed: true,
        retries: 2,
        limit: 5,
        strict_note: None,
        aliased_option: Some(4),
        boxed_option: Box::new(Some(1)),
        custom: 8,
        opaque: Opaque(-1),
        map: HashMap::from([("k".into(), vec![1.5])]),
        extras: Extras::default(),
    }
}

#[test]
fn field_attributes_agree_with_serde() {
    agrees_with_serde(&mixed());
    let object = object_of::<Mixed>();
    assert_eq!(
        names::<Mixed>(),
        [
            "kind",
            "jobId",
            "n",
            "outName",
            "note",
            "tags",
            "cache",
            "secret",
            "computed",
            "retries",
            "limit",
            "strictNote",
            "aliasedOption",
            "boxedOption",
            "custom",
            "opaque",
            "map",
        ]
    );
    assert!(object.open && !object.deny_unknown_fields);
    let field = |name: &str| {
        object
            .fields
            .iter()
            .find(|field| field.name == name)
            .unwrap_or_else(|| panic!("no field {name}"))
    };
    assert_eq!(field("kind").written, Written::Always);
    assert_eq!(*field("kind").ty, JsonType::String);
    assert_eq!(field("outName").accepts, ["inName"]);
    assert_eq!(field("note").accepts, ["note", "comment", "remark"]);
    assert_eq!(field("tags").written, Written::Sometimes);
    assert_eq!(
        (
            field("cache").written,
            field("cache").accepts,
            field("cache").required
        ),
        (Written::Never, &[][..], false)
    );
    assert_eq!(field("secret").written, Written::Never);
    assert_eq!(
        (field("computed").accepts, field("computed").required),
        (&[][..], false)
    );
    assert!(field("strictNote").required);
    assert!(!field("aliasedOption").required);
    assert!(!field("boxedOption").required);
    assert_eq!(*field("custom").ty, JsonType::Any);
    assert_eq!(*field("opaque").ty, JsonType::Any);
    assert_eq!(
        *field("map").ty,
        JsonType::Map(&JsonType::Array(&JsonType::Number))
    );
    assert_eq!(*field("n").ty, JsonType::Integer);
    assert_eq!(*field("note").ty, JsonType::Nullable(&JsonType::String));
    // A Sometimes field left out is read back as its default.
    let mut empty_tags = mixed();
    empty_tags.tags.clear();
    let written = serde_json::to_value(&empty_tags).unwrap();
    assert!(written.get("tags").is_none());
}

#[derive(Default, Serialize, Deserialize, crate::JsonShape)]
#[serde(default, deny_unknown_fields)]
struct Defaults {
    a: u8,
    b: String,
}

#[derive(Serialize, Deserialize, crate::JsonShape)]
#[serde(rename_all(serialize = "SCREAMING_SNAKE_CASE", deserialize = "camelCase"))]
struct TwoWays {
    first_name: String,
    #[serde(rename(deserialize = "last"))]
    last_name: String,
}

#[test]
fn container_attributes_agree_with_serde() {
    agrees_with_serde(&Defaults::default());
    assert!(object_of::<Defaults>().deny_unknown_fields);
    assert!(
        object_of::<Defaults>()
            .fields
            .iter()
            .all(|field| !field.required)
    );

    agrees_with_serde(&TwoWays {
        first_name: "a".into(),
        last_name: "b".into(),
    });
    let object = object_of::<TwoWays>();
    assert_eq!(names::<TwoWays>(), ["FIRST_NAME", "LAST_NAME"]);
    assert_eq!(object.fields[0].accepts, ["firstName"]);
    assert_eq!(object.fields[1].accepts, ["last"]);
}

#[derive(Serialize, Deserialize, crate::JsonShape)]
#[serde(transparent)]
struct Wrapped {
    inner: Vec<u16>,
    #[serde(skip)]
    _cache: (),
}

#[derive(Serialize, Deserialize, crate::JsonShape)]
struct Newtype(String);

#[derive(Serialize, Deserialize, crate::JsonShape)]
struct Pair(u8, String);

#[derive(Serialize, Deserialize, crate::JsonShape)]
struct Unit;

#[derive(Serialize, Deserialize, crate::JsonShape)]
#[serde(rename_all = "lowercase")]
enum State {
    Waiting,
    #[serde(rename = "on")]
    Active,
}

#[derive(Serialize, Deserialize, crate::JsonShape)]
#[serde(tag = "state")]
enum Tagged {
    Waiting,
}

#[derive(Serialize, Deserialize, crate::JsonShape)]
enum WithData {
    Waiting,
    Done(u8),
}

#[derive(Clone, Serialize, Deserialize, crate::JsonShape)]
#[serde(into = "String", from = "String")]
struct Converted {
    text: String,
}

impl From<Converted> for String {
    fn from(value: Converted) -> Self {
        value.text
    }
}

impl From<String> for Converted {
    fn from(text: String) -> Self {
        Self { text }
    }
}

#[derive(Serialize, Deserialize, crate::JsonShape)]
struct Page<'a, T> {
    items: Vec<T>,
    next: Option<Box<Page<'a, T>>>,
    #[serde(borrow)]
    title: Cow<'a, str>,
}

#[test]
fn other_forms() {
    assert_eq!(Wrapped::JSON, JsonType::Array(&JsonType::Integer));
    assert_eq!(Newtype::JSON, JsonType::String);
    assert_eq!(Pair::JSON, JsonType::Any);
    assert_eq!(Unit::JSON, JsonType::Any);
    assert_eq!(State::JSON, JsonType::String);
    assert_eq!(Tagged::JSON, JsonType::Any);
    assert_eq!(WithData::JSON, JsonType::Any);
    assert_eq!(Converted::JSON, JsonType::Any);
    let page = object_of::<Page<'static, Mixed>>();
    assert_eq!(*page.fields[0].ty, JsonType::Array(&Mixed::JSON));
    assert!(!page.fields[1].required);
    // A constant cannot hold itself: the field naming its own type is
    // not checked.
    assert_eq!(*page.fields[1].ty, JsonType::Any);
    assert_eq!(page.name, "Page");
    assert_eq!(serde_json::to_value(State::Active).unwrap(), "on");
}

#[test]
fn standard_types() {
    assert_eq!(<&str as JsonShape>::JSON, JsonType::String);
    assert_eq!(<Cow<'_, str> as JsonShape>::JSON, JsonType::String);
    assert_eq!(<Arc<str> as JsonShape>::JSON, JsonType::String);
    assert_eq!(<char as JsonShape>::JSON, JsonType::String);
    assert_eq!(<NonZero<u64> as JsonShape>::JSON, JsonType::Integer);
    assert_eq!(<u128 as JsonShape>::JSON, JsonType::Integer);
    assert_eq!(<f32 as JsonShape>::JSON, JsonType::Number);
    assert_eq!(
        <[u8] as JsonShape>::JSON,
        JsonType::Array(&JsonType::Integer)
    );
    assert_eq!(
        <[bool; 3] as JsonShape>::JSON,
        JsonType::Array(&JsonType::Bool)
    );
    assert_eq!(
        <BTreeMap<u8, Option<String>> as JsonShape>::JSON,
        JsonType::Map(&JsonType::Nullable(&JsonType::String))
    );
    assert_eq!(<(u8, String) as JsonShape>::JSON, JsonType::Any);
    assert_eq!(<Value as JsonShape>::JSON, JsonType::Any);
    assert_eq!(
        <Rc<Vec<u8>> as JsonShape>::JSON,
        JsonType::Array(&JsonType::Integer)
    );
}
