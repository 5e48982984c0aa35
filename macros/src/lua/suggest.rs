//! "Did you mean …?" suggestions for misspelt names.

/// The candidate closest to `typo`, if it is close enough to be a likely
/// misspelling (a swapped, missing, extra or wrong character or two).
pub(crate) fn closest<'c>(
    typo: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let typo_lower = typo.to_ascii_lowercase();
    let budget = match typo.chars().count() {
        0..=2 => 0,
        3..=5 => 1,
        _ => 2,
    };
    candidates
        .into_iter()
        .filter(|candidate| *candidate != typo)
        .map(|candidate| {
            let distance = edit_distance(&typo_lower, &candidate.to_ascii_lowercase());
            (distance, candidate)
        })
        .filter(|(distance, candidate)| {
            // Case-only differences are always worth suggesting.
            *distance <= budget || candidate.eq_ignore_ascii_case(typo)
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Optimal string alignment distance: insertions, deletions, substitutions
/// and transpositions of adjacent characters each cost 1.
fn edit_distance(left: &str, right: &str) -> usize {
    let left: Vec<char> = left.chars().collect();
    let right: Vec<char> = right.chars().collect();
    let width = right.len() + 1;
    let mut previous2 = vec![0; width];
    let mut previous: Vec<usize> = (0..width).collect();
    let mut current = vec![0; width];
    for (i, &left_char) in left.iter().enumerate() {
        current[0] = i + 1;
        for (j, &right_char) in right.iter().enumerate() {
            let substitution = previous[j] + usize::from(left_char != right_char);
            let mut best = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            let swapped = i > 0
                && j > 0
                && left.get(i - 1) == Some(&right_char)
                && right.get(j - 1) == Some(&left_char);
            if swapped {
                best = best.min(previous2[j - 1] + 1);
            }
            current[j + 1] = best;
        }
        std::mem::swap(&mut previous2, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous.last().copied().unwrap_or(0)
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
    fn distance_counts_each_edit_once() {
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("abc", "acb"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
