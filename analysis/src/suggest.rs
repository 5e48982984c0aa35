//! "Did you mean …?" suggestions for misspelt names.

/// The candidate closest to `typo`, if it is close enough to be a likely
/// misspelling: the project's one "did you mean" policy, for Lua names,
/// Redis commands, shebang flags and attribute keys alike.
///
/// Letter case does not count as a mistake (`GTE` → `get`, `Redis` →
/// `redis`); otherwise the allowance grows with the length of `typo`: none
/// up to 2 characters, one edit up to 5, two beyond (an edit is a swapped,
/// missing, extra or wrong character). An exact match returns itself, a
/// difference in case alone beats any edit, and ties go to the first
/// candidate.
pub fn closest<'c>(typo: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let allowed = match typo.chars().count() {
        0..=2 => 0,
        3..=5 => 1,
        _ => 2,
    };
    // Ranks: 0 for the same name, 1 for the same name in another case, and
    // twice the number of edits otherwise.
    let rank = |candidate: &str| {
        if candidate == typo {
            0
        } else if candidate.eq_ignore_ascii_case(typo) {
            1
        } else {
            2 * edit_distance(typo, candidate, true)
        }
    };
    candidates
        .into_iter()
        .map(|candidate| (rank(candidate), candidate))
        .filter(|(rank, _)| *rank <= (2 * allowed).max(1))
        .min_by_key(|(rank, _)| *rank)
        .map(|(_, candidate)| candidate)
}

/// Optimal string alignment distance: insertions, deletions, substitutions
/// and swaps of two adjacent characters each cost 1 (`gte` → `get` is 1).
pub fn edit_distance(a: &str, b: &str, fold_case: bool) -> usize {
    let fold = |c: char| {
        if fold_case { c.to_ascii_lowercase() } else { c }
    };
    let a: Vec<char> = a.chars().map(fold).collect();
    let b: Vec<char> = b.chars().map(fold).collect();
    // Three rows of the DP matrix: i-2, i-1 and i.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current: Vec<usize> = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            let mut best = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            if i > 0 && j > 0 && a[i - 1] == cb && ca == b[j - 1] {
                best = best.min(before[j - 1] + 1);
            }
            current[j + 1] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
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
    fn distance_counts_each_edit_once() {
        assert_eq!(edit_distance("abc", "abc", false), 0);
        assert_eq!(edit_distance("abc", "acb", false), 1);
        assert_eq!(edit_distance("", "abc", false), 3);
        assert_eq!(edit_distance("kitten", "sitting", false), 3);
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("gte", "get", false), 1);
        assert_eq!(edit_distance("GTE", "get", true), 1);
        assert_eq!(edit_distance("GTE", "get", false), 3);
        assert_eq!(edit_distance("", "abc", false), 3);
        assert_eq!(edit_distance("abc", "", false), 3);
        assert_eq!(edit_distance("kitten", "sitting", false), 3);
        assert_eq!(edit_distance("redsi", "redis", false), 1);
        assert_eq!(edit_distance("ca", "abc", false), 3);
    }
}
