//! The least-privilege ACL rules of a script or a library, from what the
//! analysis proved: the command that calls it, the commands it runs, and a
//! key pattern per key it takes, with the permissions its commands need.
//!
//! Since Redis 6 the commands a script runs are checked against the ACL of
//! the user who calls it, keys included. Redis 7 splits key permissions
//! into read (`%R~`) and write (`%W~`): a command needs read permission on
//! a key whose value it uses (key spec flag `access`) and write permission
//! on a key it changes (`insert`, `update`, `delete`); a key it neither
//! reads nor changes (`EXISTS`, `TYPE`) needs either. The call itself
//! takes the KEYS: `EVALSHA` and `FCALL` need both permissions on each,
//! `EVALSHA_RO` and `FCALL_RO` read permission only.
//!
//! Redis 6.0 and 6.2 have ACLs but none of those three: no selectors by
//! access, no `EVALSHA_RO` and no Functions, and `ACL SETUSER` refuses a
//! rule naming them. For a target with one of them the rules are written
//! as those releases take them: `~pattern` (both permissions) for every
//! key and `EVALSHA` for every call, which is what the runtime sends there
//! once `EVALSHA_RO` proved unknown; a library gets no rules, since
//! nothing can call it there.
//!
//! Only the caller knows the keys: a rule names each one by a placeholder
//! (`<KEYS[1]>`, `<ARGV[2]>*` for keys built by appending to a prefix
//! argument) that the deployer replaces with the pattern the application
//! uses. A key read from data or computed at run time has no pattern: the
//! rules then need `*` for its permission, and say so.
//!
//! ```
//! use redis_script_analysis::acl::AclRules;
//! use redis_script_analysis::{Signature, analyze};
//!
//! let source = "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('DEL', KEYS[1])\nend\nreturn 0\n";
//! let signature = Signature { keys: 1, args: 1, ..Signature::default() };
//! let rules = AclRules::of_script(&analyze(source, &signature), &signature);
//! assert_eq!(rules.render(""), "+evalsha +del +get ~<KEYS[1]>");
//! ```

use std::collections::BTreeSet;

use crate::domain::analysis::Analysis;
use crate::domain::library::{LibraryAnalysis, LibrarySignature};
use crate::domain::review::{Review, TakenKey};
use crate::domain::signature::Signature;
use crate::model::commands;
use crate::model::target::Target;

/// The ACL rules one script, one library or several of them need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AclRules {
    /// The commands to allow, lower-case as ACL rules name them
    /// (`evalsha`, `get`, `config|get`), each once.
    pub commands: BTreeSet<String>,
    /// The key patterns, each once, with the permissions they need.
    pub keys: Vec<KeyRule>,
    /// The commands that take a key no pattern bounds (read from data or
    /// computed at run time), with the line of their first call.
    pub unbounded: Vec<(String, usize)>,
    /// Written for a target with a release before Redis 7.0 (see the
    /// module docs): every key rule grants both permissions, the calls are
    /// `EVALSHA`/`EVAL`, and a library has no rules.
    pub before_redis_7: bool,
}

/// A key pattern and the permissions the calls need on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRule {
    pub pattern: KeyPattern,
    pub read: bool,
    pub write: bool,
}

/// What a key pattern stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyPattern {
    /// The key the caller passes as `KEYS[n]`.
    Key(usize),
    /// The keys the caller passes as `KEYS[n]` and after (a variadic list).
    KeysFrom(usize),
    /// Keys built by appending to `KEYS[n]` (`None`: to any element).
    BuiltFromKey(Option<usize>),
    /// Keys built by appending to `ARGV[n]`, a declared key prefix.
    BuiltFromArg(usize),
    /// Any key: a key the script reads from data or computes.
    Any,
}

impl KeyPattern {
    /// The parameter the pattern stands for: (`true` for KEYS, `false`
    /// for ARGV, its 1-based index).
    pub fn parameter(self) -> Option<(bool, usize)> {
        match self {
            KeyPattern::Key(n) | KeyPattern::KeysFrom(n) | KeyPattern::BuiltFromKey(Some(n)) => {
                Some((true, n))
            }
            KeyPattern::BuiltFromArg(n) => Some((false, n)),
            KeyPattern::BuiltFromKey(None) | KeyPattern::Any => None,
        }
    }

    /// The placeholder a deployer replaces with the application's pattern;
    /// `scope` (a file name, or empty) tells apart the KEYS of several
    /// scripts in one set of rules.
    pub fn placeholder(self, scope: &str) -> String {
        let at = if scope.is_empty() {
            String::new()
        } else {
            format!("{scope} ")
        };
        match self {
            KeyPattern::Key(n) => format!("<{at}KEYS[{n}]>"),
            KeyPattern::KeysFrom(n) => format!("<{at}KEYS[{n}..]>"),
            KeyPattern::BuiltFromKey(Some(n)) => format!("<{at}KEYS[{n}]>*"),
            KeyPattern::BuiltFromKey(None) => format!("<{at}KEYS[*]>*"),
            KeyPattern::BuiltFromArg(n) => format!("<{at}ARGV[{n}]>*"),
            KeyPattern::Any => "*".to_owned(),
        }
    }
}

impl KeyRule {
    /// The rule as `ACL SETUSER` takes it: `~pattern` for both
    /// permissions, `%R~` or `%W~` for one.
    pub fn render(&self, scope: &str) -> String {
        let permission = match (self.read, self.write) {
            (true, false) => "%R~",
            (false, true) => "%W~",
            _ => "~",
        };
        format!("{permission}{}", self.pattern.placeholder(scope))
    }
}

impl AclRules {
    /// The rules for calling a script with the signature it was analyzed
    /// with: `EVALSHA_RO` when it writes nothing (as the runtime sends
    /// it), `EVALSHA` otherwise; in the form every release of the
    /// signature's target takes.
    pub fn of_script(analysis: &Analysis, signature: &Signature) -> AclRules {
        let mut rules = AclRules::default();
        let call = if analysis.read_only {
            "evalsha_ro"
        } else {
            "evalsha"
        };
        rules.called_with(call, signature, analysis.read_only);
        rules.add_review(&analysis.review, signature, analysis.read_only);
        rules.absorb_passed_keys();
        if lacks_redis_7_rules(&signature.target) {
            rules.write_for_redis_6();
        }
        rules
    }

    /// The rules for calling every function a library registers, each
    /// with `FCALL_RO` when registered `no-writes`, `FCALL` otherwise.
    /// The KEYS of every function are the same placeholders: a function's
    /// `KEYS[1]` is whatever its caller passes first. None for a target
    /// with a release before Redis 7.0, which has no Functions.
    pub fn of_library(analysis: &LibraryAnalysis, library: &LibrarySignature) -> AclRules {
        let mut rules = AclRules::default();
        if lacks_redis_7_rules(&library.library.target) {
            rules.write_for_redis_6();
            return rules;
        }
        for function in &analysis.functions {
            let call = if function.read_only {
                "fcall_ro"
            } else {
                "fcall"
            };
            let signature = function
                .declaration
                .and_then(|index| library.functions.get(index))
                .map_or(&library.library, |declared| &declared.signature);
            rules.called_with(call, signature, function.read_only);
            rules.add_review(&function.review, signature, function.read_only);
        }
        rules.absorb_passed_keys();
        rules
    }

    /// Every rule of `self` and of `other`, in the Redis 6.x form when
    /// either is.
    pub fn merge(&mut self, other: &AclRules) {
        self.commands.extend(other.commands.iter().cloned());
        for rule in &other.keys {
            self.key(rule.pattern, rule.read, rule.write);
        }
        for site in &other.unbounded {
            if !self.unbounded.contains(site) {
                self.unbounded.push(site.clone());
            }
        }
        // Rules for one user on one server: when either side is for 6.x,
        // the other's `_RO` calls and one-permission keys must be too.
        if self.before_redis_7 || other.before_redis_7 {
            self.write_for_redis_6();
        }
    }

    /// The same rules as Redis 6.0 and 6.2 take them: both permissions on
    /// every key (they have no `%R~`/`%W~`), `EVALSHA` for `EVALSHA_RO`
    /// and `EVAL` for `EVAL_RO` (unknown there, so the runtime goes on
    /// with the plain form), and no `FCALL`/`FCALL_RO` (no Functions).
    pub fn write_for_redis_6(&mut self) {
        self.before_redis_7 = true;
        for (read_only, plain) in [("evalsha_ro", "evalsha"), ("eval_ro", "eval")] {
            if self.commands.remove(read_only) {
                self.commands.insert(plain.to_owned());
            }
        }
        self.commands.remove("fcall");
        self.commands.remove("fcall_ro");
        for rule in &mut self.keys {
            rule.read = true;
            rule.write = true;
        }
    }

    /// One line of rules, as `ACL SETUSER <user>` takes them after the
    /// user name: the commands, then the key patterns (see
    /// [`KeyPattern::placeholder`] for `scope`).
    pub fn render(&self, scope: &str) -> String {
        let mut words: Vec<String> = Vec::new();
        // The call command first: it is what the application sends.
        let calls = ["evalsha", "evalsha_ro", "fcall", "fcall_ro"];
        for call in calls {
            if self.commands.contains(call) {
                words.push(format!("+{call}"));
            }
        }
        for command in &self.commands {
            if !calls.contains(&command.as_str()) {
                words.push(format!("+{command}"));
            }
        }
        let mut keys = self.keys.clone();
        keys.sort_by_key(|rule| rule.pattern);
        words.extend(keys.iter().map(|rule| rule.render(scope)));
        words.join(" ")
    }

    /// The call command, and the KEYS it passes: both permissions on each
    /// for `EVALSHA`/`FCALL`, read for the `_RO` forms.
    fn called_with(&mut self, call: &str, signature: &Signature, read_only: bool) {
        self.commands.insert(call.to_owned());
        for n in 1..=signature.keys {
            self.key(KeyPattern::Key(n), true, !read_only);
        }
        if signature.variadic_keys {
            self.key(KeyPattern::KeysFrom(signature.keys + 1), true, !read_only);
        }
    }

    /// The commands the script (or function) runs and the keys they take;
    /// `signature` and `read_only` as for [`Self::called_with`].
    fn add_review(&mut self, review: &Review, signature: &Signature, read_only: bool) {
        for command in &review.commands {
            self.commands
                .insert(command.name.to_ascii_lowercase().replace(' ', "|"));
        }
        let declared = signature.keys > 0 || signature.variadic_keys;
        for taken in &review.keys {
            let pattern = match taken.key {
                // A passed key needs what the call needs: a declared one
                // has its rule already.
                TakenKey::Key(_) if declared => continue,
                TakenKey::Key(Some(n)) => {
                    self.key(KeyPattern::Key(n), true, !read_only);
                    continue;
                }
                TakenKey::Key(None) => {
                    self.key(KeyPattern::KeysFrom(1), true, !read_only);
                    continue;
                }
                TakenKey::BuiltFromKey(index) => KeyPattern::BuiltFromKey(index),
                TakenKey::BuiltFromArg(index) => KeyPattern::BuiltFromArg(index),
                TakenKey::Unbounded => {
                    let site = (taken.command.clone(), taken.line);
                    if !self.unbounded.contains(&site) {
                        self.unbounded.push(site);
                    }
                    KeyPattern::Any
                }
            };
            // A key the command neither reads nor changes needs either
            // permission: read is the smaller grant.
            let read = taken.reads || !taken.writes;
            self.key(pattern, read, taken.writes);
        }
    }

    /// `<KEYS[n]>*` matches `<KEYS[n]>` too: a key passed and keys built
    /// from it are one rule, with the permissions of both.
    fn absorb_passed_keys(&mut self) {
        let passed: Vec<KeyRule> = self
            .keys
            .iter()
            .filter(|rule| matches!(rule.pattern, KeyPattern::Key(_)))
            .copied()
            .collect();
        for rule in passed {
            let KeyPattern::Key(n) = rule.pattern else {
                continue;
            };
            if let Some(built) = self
                .keys
                .iter_mut()
                .find(|built| built.pattern == KeyPattern::BuiltFromKey(Some(n)))
            {
                built.read |= rule.read;
                built.write |= rule.write;
                self.keys.retain(|kept| kept.pattern != rule.pattern);
            }
        }
    }

    fn key(&mut self, pattern: KeyPattern, read: bool, write: bool) {
        // Redis 6.x grants a key pattern whole.
        let (read, write) = if self.before_redis_7 {
            (true, true)
        } else {
            (read, write)
        };
        match self.keys.iter_mut().find(|rule| rule.pattern == pattern) {
            Some(rule) => {
                rule.read |= read;
                rule.write |= write;
            }
            None => self.keys.push(KeyRule {
                pattern,
                read,
                write,
            }),
        }
    }
}

/// Whether some release of `target` lacks the ACL rules Redis 7.0 added:
/// selectors by access, `EVALSHA_RO` and `FCALL` came together, so the
/// command table's `EVALSHA_RO` tells which releases have them.
fn lacks_redis_7_rules(target: &Target) -> bool {
    let read_only_call = commands::lookup("evalsha_ro");
    target
        .platforms()
        .iter()
        .any(|platform| read_only_call.is_none_or(|entry| entry.on(platform.release).is_none()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DeclaredFunction, analyze, analyze_library};

    fn rules(source: &str, signature: &Signature) -> String {
        AclRules::of_script(&analyze(source, signature), signature).render("")
    }

    fn signature(keys: usize, args: usize) -> Signature {
        Signature {
            keys,
            args,
            ..Signature::default()
        }
    }

    #[test]
    fn a_passed_key_needs_both_permissions_unless_the_call_is_read_only() {
        let source = "return redis.call('GET', KEYS[1])";
        assert_eq!(
            rules(source, &signature(1, 0)),
            "+evalsha_ro +get %R~<KEYS[1]>"
        );
        let source = "redis.call('SET', KEYS[2], ARGV[1])\nreturn redis.call('GET', KEYS[1])";
        assert_eq!(
            rules(source, &signature(2, 1)),
            "+evalsha +get +set ~<KEYS[1]> ~<KEYS[2]>"
        );
    }

    #[test]
    fn every_declared_key_is_passed_even_one_left_unread() {
        let declared = Signature {
            allow_unused: true,
            variadic_keys: true,
            ..signature(2, 0)
        };
        assert_eq!(
            rules("return redis.call('INCR', KEYS[1])", &declared),
            "+evalsha +incr ~<KEYS[1]> ~<KEYS[2]> ~<KEYS[3..]>"
        );
    }

    #[test]
    fn a_built_key_needs_what_its_commands_do_with_it() {
        let prefix = Signature {
            key_prefix_args: [1].into(),
            ..signature(1, 2)
        };
        let reads =
            "redis.call('INCR', KEYS[1])\nreturn redis.call('HGET', ARGV[1] .. ARGV[2], 'f')";
        assert_eq!(
            rules(reads, &prefix),
            "+evalsha +hget +incr ~<KEYS[1]> %R~<ARGV[1]>*"
        );
        let writes =
            "redis.call('INCR', KEYS[1])\nreturn redis.call('SADD', ARGV[1] .. 'done', ARGV[2])";
        assert_eq!(
            rules(writes, &prefix),
            "+evalsha +incr +sadd ~<KEYS[1]> %W~<ARGV[1]>*"
        );
        // Neither read nor changed (EXISTS): either permission, read is
        // the smaller grant.
        let exists = "redis.call('INCR', KEYS[1])\nreturn redis.call('EXISTS', ARGV[1] .. ARGV[2])";
        assert_eq!(
            rules(exists, &prefix),
            "+evalsha +exists +incr ~<KEYS[1]> %R~<ARGV[1]>*"
        );
    }

    #[test]
    fn keys_built_from_a_passed_key_cover_it() {
        let source = "local job = KEYS[1] .. 'job:' .. ARGV[1]\nredis.call('HSET', job, 'p', 1)\nreturn redis.call('RPUSH', KEYS[1] .. 'waiting', ARGV[1])";
        assert_eq!(
            rules(source, &signature(1, 1)),
            "+evalsha +hset +rpush ~<KEYS[1]>*"
        );
    }

    #[test]
    fn a_key_read_from_data_is_unbounded_and_named() {
        let source = "local target = redis.call('GET', KEYS[1])\nreturn redis.call('DEL', target)";
        let dynamic = Signature {
            dynamic_keys: true,
            ..signature(1, 0)
        };
        let found = AclRules::of_script(&analyze(source, &dynamic), &dynamic);
        assert_eq!(found.render(""), "+evalsha +del +get ~<KEYS[1]> %W~*");
        assert_eq!(found.unbounded, [("DEL".to_owned(), 2)]);
    }

    #[test]
    fn subcommands_are_named_as_acl_rules_name_them() {
        let source = "return redis.call('XINFO', 'STREAM', KEYS[1])";
        assert_eq!(
            rules(source, &signature(1, 0)),
            "+evalsha_ro +xinfo|stream %R~<KEYS[1]>"
        );
    }

    #[test]
    fn a_library_needs_the_call_of_each_function() {
        let source = "#!lua name=lib\nredis.register_function('bump', function(keys) return redis.call('INCR', keys[1]) end)\nredis.register_function{function_name = 'peek', callback = function(keys) return redis.call('GET', keys[1]) end, flags = {'no-writes'}}";
        let undeclared = LibrarySignature::default();
        let found = AclRules::of_library(&analyze_library(source, &undeclared), &undeclared);
        assert_eq!(found.render(""), "+fcall +fcall_ro +get +incr ~<KEYS[1]>");
        // Declared functions pass their declared keys.
        let declared = LibrarySignature {
            functions: vec![
                DeclaredFunction {
                    name: "bump".to_owned(),
                    signature: signature(1, 0),
                },
                DeclaredFunction {
                    name: "peek".to_owned(),
                    signature: signature(1, 0),
                },
            ],
            ..LibrarySignature::default()
        };
        let found = AclRules::of_library(&analyze_library(source, &declared), &declared);
        assert_eq!(found.render(""), "+fcall +fcall_ro +get +incr ~<KEYS[1]>");
    }

    fn on(target: &str, signature: Signature) -> Signature {
        match Target::parse(target) {
            Ok(target) => Signature {
                target,
                ..signature
            },
            Err(error) => panic!("{target}: {error}"),
        }
    }

    #[test]
    fn redis_6_targets_get_rules_redis_6_takes() {
        let reads = "return redis.call('GET', KEYS[1])";
        let prefix = Signature {
            key_prefix_args: [1].into(),
            ..signature(1, 2)
        };
        let builds =
            "redis.call('INCR', KEYS[1])\nreturn redis.call('SADD', ARGV[1] .. 'done', ARGV[2])";
        for target in [
            "redis-6.0",
            "redis-6.2",
            "redis-6.2,redis-7.0",
            "redis-7.2,redis-6.0",
        ] {
            let found = AclRules::of_script(
                &analyze(reads, &on(target, signature(1, 0))),
                &on(target, signature(1, 0)),
            );
            assert!(found.before_redis_7, "{target}");
            assert_eq!(found.render(""), "+evalsha +get ~<KEYS[1]>", "{target}");
            assert_eq!(
                rules(builds, &on(target, prefix.clone())),
                "+evalsha +incr +sadd ~<KEYS[1]> ~<ARGV[1]>*",
                "{target}"
            );
        }
        // Every release from 7.0 on, and the default, take the selectors.
        for target in ["redis-7.0", "redis-8.6", "valkey-7.2", "valkey-9.1", "any"] {
            assert_eq!(
                rules(reads, &on(target, signature(1, 0))),
                "+evalsha_ro +get %R~<KEYS[1]>",
                "{target}"
            );
            assert_eq!(
                rules(builds, &on(target, prefix.clone())),
                "+evalsha +incr +sadd ~<KEYS[1]> %W~<ARGV[1]>*",
                "{target}"
            );
        }
    }

    #[test]
    fn a_library_has_no_rules_where_there_are_no_functions() {
        let source = "#!lua name=lib\nredis.register_function{function_name = 'peek', callback = function(keys) return redis.call('GET', keys[1]) end, flags = {'no-writes'}}";
        let on_6 = LibrarySignature {
            library: on("redis-6.2", Signature::default()),
            ..LibrarySignature::default()
        };
        let found = AclRules::of_library(&analyze_library(source, &on_6), &on_6);
        assert!(found.before_redis_7);
        assert_eq!(found.render(""), "");
    }

    #[test]
    fn rules_merged_with_redis_6_ones_are_written_for_redis_6() {
        let reads = "return redis.call('GET', KEYS[1])";
        let newer = AclRules::of_script(&analyze(reads, &signature(1, 0)), &signature(1, 0));
        let older = on("redis-6.0", signature(1, 0));
        let older = AclRules::of_script(&analyze(reads, &older), &older);
        let mut merged = newer.clone();
        merged.merge(&older);
        assert_eq!(merged.render(""), "+evalsha +get ~<KEYS[1]>");
        let mut merged = older;
        merged.merge(&newer);
        assert_eq!(merged.render(""), "+evalsha +get ~<KEYS[1]>");
    }

    #[test]
    fn placeholders_name_the_file_when_rules_are_combined() {
        assert_eq!(KeyPattern::Key(1).placeholder("a.lua"), "<a.lua KEYS[1]>");
        assert_eq!(KeyPattern::BuiltFromArg(2).placeholder(""), "<ARGV[2]>*");
        assert_eq!(KeyPattern::BuiltFromKey(None).placeholder(""), "<KEYS[*]>*");
        assert_eq!(KeyPattern::Any.placeholder("a.lua"), "*");
    }
}
