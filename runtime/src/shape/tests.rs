//! Unit tests of the reply shapes and their compile-time checks.

use super::checks::*;
use super::*;

const VARIANTS: &[Variant] = &[
    Variant {
        name: "Allowed",
        tag: "ALLOWED",
        min: 1,
        max: 1,
        unit: false,
    },
    Variant {
        name: "Denied",
        tag: "DENIED",
        min: 1,
        max: 2,
        unit: false,
    },
    Variant {
        name: "Busy",
        tag: "BUSY",
        min: 0,
        max: 0,
        unit: true,
    },
];
const DECISION: Shape = Shape::Tagged {
    name: "Decision",
    variants: VARIANTS,
};
const RATE: Shape = Shape::Array {
    name: "Rate",
    min: 1,
    max: 2,
};

#[test]
fn tags_and_counts() {
    assert!(accepts_tag(&DECISION, "ALLOWED", 1));
    assert!(!accepts_tag(&DECISION, "ALLOWED", 0));
    assert!(accepts_tag(&DECISION, "DENIED", 1));
    assert!(accepts_tag(&DECISION, "DENIED", 2));
    assert!(!accepts_tag(&DECISION, "DENIED", 3));
    assert!(accepts_tag(&DECISION, "BUSY", 0));
    assert!(!accepts_tag(&DECISION, "busy", 0));
    assert!(!accepts_tag(&DECISION, "", 0));
    assert!(has_tag(&DECISION, "BUSY") && !has_tag(&DECISION, "MAYBE"));
    assert!(accepts_tag(&Shape::Any, "X", 9));
}

#[test]
fn arrays_count_the_tag_as_an_element() {
    assert!(accepts_tag(&RATE, "x", 0));
    assert!(accepts_tag(&RATE, "x", 1));
    assert!(!accepts_tag(&RATE, "x", 2));
    assert!(accepts_array(&RATE, 1) && accepts_array(&RATE, 2));
    assert!(!accepts_array(&RATE, 0) && !accepts_array(&RATE, 3));
    assert!(!accepts_bare(&RATE, "OK"));
}

#[test]
fn bare_replies_select_fieldless_variants() {
    assert!(accepts_bare(&DECISION, "BUSY"));
    assert!(!accepts_bare(&DECISION, "DENIED"));
    assert!(!accepts_bare(&DECISION, "NOPE"));
    assert!(accepts_bare(&Shape::Any, "OK"));
}

#[test]
fn untagged_arrays_against_enums() {
    assert!(accepts_array(&DECISION, 2));
    assert!(accepts_array(&DECISION, 3));
    assert!(accepts_array(&DECISION, 1));
    assert!(!accepts_array(&DECISION, 4));
    assert!(!accepts_array(&DECISION, 0));
}

#[test]
fn common_types() {
    assert_eq!(
        <Option<(u8, u8)> as ReplyShape>::SHAPE,
        Shape::Array {
            name: "tuple",
            min: 2,
            max: 2
        }
    );
    assert_eq!(<Vec<(u8, u8)> as ReplyShape>::SHAPE, Shape::Any);
    assert_eq!(<redis::Value as ReplyShape>::SHAPE, Shape::Any);
    assert!(contains_code(&["A", "BB"], "BB") && !contains_code(&[], "A"));
}

#[test]
fn near_misses_follow_the_suggestion_policy() {
    let pick = |known: &[&'static str], word: &str| {
        known
            .iter()
            .fold(NearMiss::new(word), |near, candidate| {
                near.consider(candidate)
            })
            .best
            .map(|(_, near)| near)
    };
    assert_eq!(pick(&["ALLOWED", "DENIED"], "DENYED"), Some("DENIED"));
    assert_eq!(pick(&["GONE"], "gone"), Some("GONE"));
    // Short words allow no edit; unrelated words are not suggested.
    assert_eq!(pick(&["OK"], "NO"), None);
    assert_eq!(pick(&["CONFLICT"], "EXPIRED"), None);
    assert_eq!(pick(&["CONFLICT"], "CONFLICT"), None);
    // Characters, not bytes: one edit, as the analysis counts it.
    assert_eq!(pick(&["DENIED"], "DÉNIED"), Some("DENIED"));
    assert_eq!(pick(&["ÉTÉ"], "ÉTE"), Some("ÉTÉ"));
    // The analysis's suggestions agree on every case above.
    for (known, word) in [
        (&["ALLOWED", "DENIED"][..], "DENYED"),
        (&["GONE"][..], "gone"),
        (&["OK"][..], "NO"),
        (&["CONFLICT"][..], "EXPIRED"),
        (&["DENIED"][..], "DÉNIED"),
        (&["ÉTÉ"][..], "ÉTE"),
        (&["ÉTÉ"][..], "ETE"),
    ] {
        let analysis = redis_script_analysis::suggest::closest(word, known.iter().copied());
        assert_eq!(pick(known, word), analysis, "{word} among {known:?}");
    }
}
