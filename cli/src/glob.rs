//! The file patterns of the configuration: `*` (any characters but `/`),
//! `?` (one such character), `**` (any number of whole directories), and
//! literal characters, matched against a path relative to the
//! configuration's directory with `/` between its parts.

/// A parsed pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// `**`: zero or more whole directories.
    AnyDirectories,
    /// One path component's pattern.
    Component(Vec<char>),
}

impl Glob {
    /// Reads a pattern. A pattern without `/` matches the file name in any
    /// directory (as `.gitignore` reads it); one with `/` is anchored at
    /// the configuration's directory. The error names what is wrong.
    pub fn parse(text: &str) -> Result<Glob, String> {
        let trimmed = text.trim_start_matches("./");
        if trimmed.is_empty() {
            return Err("an empty pattern matches no file".to_owned());
        }
        if trimmed.starts_with('/') {
            return Err(format!(
                "`{text}` is absolute: patterns are relative to the configuration's directory"
            ));
        }
        let mut parts = Vec::new();
        if !trimmed.contains('/') {
            parts.push(Part::AnyDirectories);
        }
        for component in trimmed.split('/') {
            match component {
                "" => {}
                "**" => parts.push(Part::AnyDirectories),
                other if other.contains("**") => {
                    return Err(format!(
                        "`{text}`: `**` must be a whole path component, as in `includes/**` or `**/x.lua`"
                    ));
                }
                other => parts.push(Part::Component(other.chars().collect())),
            }
        }
        Ok(Glob { parts })
    }

    /// Whether `path` (relative, `/`-separated) matches. A pattern naming a
    /// directory matches every file below it.
    pub fn matches(&self, path: &str) -> bool {
        let components: Vec<&str> = path.split('/').filter(|part| !part.is_empty()).collect();
        (0..=components.len()).any(|end| matches_from(&self.parts, &components[..end]))
    }
}

fn matches_from(parts: &[Part], components: &[&str]) -> bool {
    match parts.split_first() {
        None => components.is_empty(),
        Some((Part::AnyDirectories, rest)) => {
            (0..=components.len()).any(|skip| matches_from(rest, &components[skip..]))
        }
        Some((Part::Component(pattern), rest)) => match components.split_first() {
            Some((first, others)) => {
                let name: Vec<char> = first.chars().collect();
                component_matches(pattern, &name) && matches_from(rest, others)
            }
            None => false,
        },
    }
}

/// `*` and `?` within one component, by backtracking over the last `*`.
fn component_matches(pattern: &[char], name: &[char]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut last_star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                last_star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match last_star {
                Some((star, matched)) => {
                    p = star + 1;
                    n = matched + 1;
                    last_star = Some((star, matched + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, path: &str) -> bool {
        Glob::parse(pattern).expect("a pattern").matches(path)
    }

    #[test]
    fn names_match_in_any_directory_and_paths_from_the_root() {
        assert!(matches("*.lua", "a.lua"));
        assert!(matches("*.lua", "deep/down/a.lua"));
        assert!(matches("addJob-?.lua", "src/addJob-6.lua"));
        assert!(!matches("addJob-?.lua", "src/addJob-10.lua"));
        assert!(matches("src/*.lua", "src/a.lua"));
        assert!(!matches("src/*.lua", "other/src/a.lua"));
        assert!(!matches("src/*.lua", "src/deeper/a.lua"));
        assert!(matches("src/**/*.lua", "src/a.lua"));
        assert!(matches("src/**/*.lua", "src/x/y/a.lua"));
        assert!(matches("includes/**", "includes/a.lua"));
        assert!(matches("includes", "includes/nested/a.lua"));
        assert!(matches("./includes/", "includes/a.lua"));
        assert!(matches("*-*.lua", "moveToFinished-14.lua"));
        assert!(!matches("*-*.lua", "refs.lua"));
        assert!(matches("a*b*c", "aXXbYYc"));
        assert!(!matches("a*b*c", "aXXbYY"));
    }

    #[test]
    fn refuses_patterns_that_cannot_mean_what_they_say() {
        assert!(Glob::parse("").is_err());
        assert!(Glob::parse("/abs/*.lua").is_err());
        assert!(Glob::parse("src/**.lua").is_err());
    }
}
