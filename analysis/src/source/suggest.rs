//! "Did you mean …?" suggestions for misspelt names.

use redis_script_codes::suggest::{edit_allowance, folded_edit_distance};

/// The candidate closest to `typo`, if it is close enough to be a likely
/// misspelling: the project's one "did you mean" policy, for Lua names,
/// Redis commands, shebang flags and attribute keys alike.
///
/// The allowance and distance are the shared policy of
/// [`redis_script_codes::suggest`], which the runtime's reply checks use
/// too: letter case does not count as a mistake (`GTE` → `get`, `Redis` →
/// `redis`); otherwise the allowance grows with the length of `typo`: none
/// up to 2 characters, one edit up to 5, two beyond (an edit is a swapped,
/// missing, extra or wrong character). An exact match returns itself, a
/// difference in case alone beats any edit, and ties go to the first
/// candidate.
pub fn closest<'c>(typo: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let allowed = edit_allowance(typo);
    // Ranks: 0 for the same name, 1 for the same name in another case, and
    // twice the number of edits otherwise.
    let rank = |candidate: &str| {
        if candidate == typo {
            0
        } else if candidate.eq_ignore_ascii_case(typo) {
            1
        } else {
            2_usize.saturating_mul(folded_edit_distance(typo, candidate))
        }
    };
    candidates
        .into_iter()
        .map(|candidate| (rank(candidate), candidate))
        .filter(|(rank, _)| *rank <= (2 * allowed).max(1))
        .min_by_key(|(rank, _)| *rank)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_transpositions_and_typos() {
        assert_eq!(closest("redsi", ["redis", "string"]), Some("redis"));
        assert_eq!(closest("fromat", ["format", "find"]), Some("format"));
        assert_eq!(closest("GETT", ["GET", "SET"]), Some("GET"));
        assert_eq!(closest("hset", ["HSET"]), Some("HSET"));
        assert_eq!(closest("xyzzy", ["redis", "string"]), None);
    }

    #[test]
    fn exact_and_case_only_matches_come_first() {
        assert_eq!(closest("get", ["set", "get"]), Some("get"));
        assert_eq!(closest("Redis", ["redi", "redis"]), Some("redis"));
        assert_eq!(closest("ab", ["AB"]), Some("AB"));
        assert_eq!(closest("ab", ["abc"]), None);
    }

    #[test]
    fn the_allowance_grows_with_the_length() {
        assert_eq!(closest("gte", ["get"]), Some("get"));
        assert_eq!(closest("gxtx", ["get"]), None);
        assert_eq!(closest("incrbyy", ["incrby"]), Some("incrby"));
        assert_eq!(closest("incrbyyy", ["incrby"]), Some("incrby"));
        assert_eq!(closest("incrbyyyy", ["incrby"]), None);
        assert_eq!(closest("tga", ["tag"]), Some("tag"));
        assert_eq!(closest("rename", ["tag"]), None);
    }

    #[test]
    fn letters_count_as_characters() {
        assert_eq!(closest("DÉNIED", ["DENIED"]), Some("DENIED"));
        assert_eq!(closest("ÉTE", ["ÉTÉ"]), Some("ÉTÉ"));
        assert_eq!(closest("ETE", ["ÉTÉ"]), None);
    }
}
