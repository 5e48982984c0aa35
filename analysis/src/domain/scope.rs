//! Lexical scopes: which names are locals at each point, and what they hold
//! there.
//!
//! Values are tracked along the flow of the code: an assignment changes
//! what a local holds from there on, a branch works on its own copy of the
//! values ([`Scopes::snapshot`]), and where branches meet the values are
//! joined. A local assigned from inside a function other than the one that
//! declares it is not followed (a call could change it at any point): it
//! holds an unknown value everywhere. A function reading a local of an
//! enclosing function that is ever assigned again cannot know when it runs,
//! so it reads an unknown value too.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};

use crate::domain::value::Value;

/// A local variable: where it was declared (its identity), the function
/// depth it belongs to, and its value here.
#[derive(Debug, Clone)]
struct Local {
    name: String,
    declared_at: usize,
    depth: usize,
    value: Value,
}

/// How locals are assigned, as the first walk found: which are assigned
/// again after their declaration, and which from a function nested in the
/// one declaring them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Assignments {
    pub reassigned: HashSet<usize>,
    pub from_closures: HashSet<usize>,
}

/// The stack of open blocks, innermost last.
#[derive(Debug, Default)]
pub(crate) struct Scopes {
    blocks: Vec<Vec<Local>>,
    assignments: Assignments,
    /// Locals read from a function nested in the one declaring them: the
    /// only reads whose value depends on `assignments.reassigned`.
    nested_reads: RefCell<HashSet<usize>>,
    /// What is known to exist here, as written (a key's expression, or a
    /// key's and a hash field's joined by [`FIELD_OF`]): the script wrote it
    /// (a `SET` succeeds, or fails `NX` because the key is there; `HSET`)
    /// and nothing that may delete anything ran since. Scripts see no key
    /// expire while they run.
    existing: BTreeSet<String>,
}

/// What a name refers to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Binding {
    Local {
        declared_at: usize,
        /// The depth of the function that declares it.
        depth: usize,
        value: Value,
    },
    Global,
}

/// What joins a key's expression and a hash field's in a fact of
/// existence.
pub(crate) const FIELD_OF: char = '\u{0}';

/// What is known at one point: the values of the locals visible there, in
/// declaration order, and what is known to exist.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot {
    values: Vec<Value>,
    existing: BTreeSet<String>,
}

impl Snapshot {
    /// The values where control from `self` and `other` meets.
    pub fn join(&self, other: &Snapshot) -> Snapshot {
        Snapshot {
            values: self
                .values
                .iter()
                .zip(&other.values)
                .map(|(a, b)| a.join(b))
                .collect(),
            existing: self
                .existing
                .intersection(&other.existing)
                .cloned()
                .collect(),
        }
    }

    /// The join of every snapshot, or `None` without one.
    pub fn join_all<'a>(snapshots: impl IntoIterator<Item = &'a Snapshot>) -> Option<Snapshot> {
        snapshots
            .into_iter()
            .fold(None, |joined: Option<Snapshot>, next| match joined {
                Some(joined) => Some(joined.join(next)),
                None => Some(next.clone()),
            })
    }

    /// Each value that differs from `other` made unknown: the values a
    /// loop settles on when its iterations keep changing them.
    pub fn widen(&self, other: &Snapshot) -> Snapshot {
        Snapshot {
            values: self
                .values
                .iter()
                .zip(&other.values)
                .map(|(a, b)| if a == b { a.clone() } else { Value::Unknown })
                .collect(),
            existing: self
                .existing
                .intersection(&other.existing)
                .cloned()
                .collect(),
        }
    }
}

impl Scopes {
    pub fn new(assignments: Assignments) -> Self {
        Self {
            blocks: vec![Vec::new()],
            assignments,
            nested_reads: RefCell::default(),
            existing: BTreeSet::new(),
        }
    }

    pub fn push(&mut self) {
        self.blocks.push(Vec::new());
    }

    pub fn pop(&mut self) {
        self.blocks.pop();
    }

    /// Declares a local of the function at `depth` in the innermost block,
    /// shadowing outer ones.
    pub fn declare(&mut self, name: &str, declared_at: usize, depth: usize, value: Value) {
        let value = if self.assignments.from_closures.contains(&declared_at) {
            Value::Unknown
        } else {
            value.stored()
        };
        let local = Local {
            name: name.to_string(),
            declared_at,
            depth,
            value,
        };
        match self.blocks.last_mut() {
            Some(block) => block.push(local),
            None => self.blocks.push(vec![local]),
        }
    }

    /// What `name` refers to, read from a function at `depth`.
    pub fn resolve(&self, name: &str, depth: usize) -> Binding {
        self.local(name).map_or(Binding::Global, |local| {
            let followed = depth == local.depth || self.nested_read(local.declared_at);
            Binding::Local {
                declared_at: local.declared_at,
                depth: local.depth,
                value: if followed {
                    local.value.clone()
                } else {
                    Value::Unknown
                },
            }
        })
    }

    /// The value of the local declared at `declared_at`, read from a
    /// function at `depth`, when it is visible.
    pub fn value_at(&self, declared_at: usize, depth: usize) -> Option<Value> {
        let local = self
            .blocks
            .iter()
            .flatten()
            .find(|local| local.declared_at == declared_at)?;
        let followed = depth == local.depth || self.nested_read(declared_at);
        Some(if followed {
            local.value.clone()
        } else {
            Value::Unknown
        })
    }

    /// A read of a local from a nested function: followed unless the local
    /// is assigned again somewhere.
    fn nested_read(&self, declared_at: usize) -> bool {
        self.nested_reads.borrow_mut().insert(declared_at);
        !self.assignments.reassigned.contains(&declared_at)
    }

    /// Whether a walk with `found` would have answered every question this
    /// walk asked the same way, so that walking again with them changes
    /// nothing.
    pub fn agrees_with(&self, found: &Assignments) -> bool {
        let same_closures = found.from_closures == self.assignments.from_closures;
        let nested_reads = self.nested_reads.borrow();
        let same_reads = nested_reads.iter().all(|declared_at| {
            found.reassigned.contains(declared_at)
                == self.assignments.reassigned.contains(declared_at)
        });
        same_closures && same_reads
    }

    /// The innermost local named `name`.
    fn local(&self, name: &str) -> Option<&Local> {
        self.blocks
            .iter()
            .rev()
            .flat_map(|block| block.iter().rev())
            .find(|local| local.name == name)
    }

    /// The local declared at `declared_at` holds `value` from here on
    /// (unknown when closures assign it).
    pub fn assign(&mut self, declared_at: usize, value: Value) {
        let followed = !self.assignments.from_closures.contains(&declared_at);
        if let Some(local) = self
            .blocks
            .iter_mut()
            .rev()
            .flat_map(|block| block.iter_mut().rev())
            .find(|local| local.declared_at == declared_at)
        {
            local.value = if followed {
                value.stored()
            } else {
                Value::Unknown
            };
        }
    }

    /// The values of the visible locals, to branch from.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            values: self
                .blocks
                .iter()
                .flatten()
                .map(|local| local.value.clone())
                .collect(),
            existing: self.existing.clone(),
        }
    }

    /// Gives the visible locals the values of `snapshot` (taken where the
    /// same locals were visible; extra values are ignored).
    pub fn restore(&mut self, snapshot: &Snapshot) {
        for (local, value) in self.blocks.iter_mut().flatten().zip(&snapshot.values) {
            local.value = value.clone();
        }
        self.existing.clone_from(&snapshot.existing);
    }

    /// Whether `written` (a key's expression, or a key's and a field's
    /// joined by [`FIELD_OF`]) is known to exist here.
    pub fn exists(&self, written: &str) -> bool {
        self.existing.contains(written)
    }

    /// `written` exists from here on.
    pub fn created(&mut self, written: String) {
        self.existing.insert(written);
    }

    /// From here on nothing is known to exist: something ran that may
    /// delete keys, or the code runs at another time (a function's body).
    pub fn forget_existing(&mut self) {
        self.existing.clear();
    }

    /// The local `name` holds something else from here on: what was known
    /// to exist by an expression naming it is no longer.
    pub fn forget_existing_naming(&mut self, name: &str) {
        self.existing.retain(|written| {
            !written
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|word| word == name)
        });
    }

    /// Every local name visible here, for suggestions.
    pub fn visible_names(&self) -> Vec<&str> {
        self.blocks
            .iter()
            .flatten()
            .map(|local| local.name.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_blocks_shadow_and_popping_restores() {
        let mut scopes = Scopes::new(Assignments::default());
        scopes.declare("x", 1, 0, Value::Number(1.0));
        scopes.push();
        scopes.declare("x", 2, 0, Value::Key(Some(1)));
        assert_eq!(
            scopes.resolve("x", 0),
            Binding::Local {
                declared_at: 2,
                depth: 0,
                value: Value::Key(Some(1))
            }
        );
        scopes.pop();
        assert_eq!(
            scopes.resolve("x", 0),
            Binding::Local {
                declared_at: 1,
                depth: 0,
                value: Value::Number(1.0)
            }
        );
        assert_eq!(scopes.resolve("y", 0), Binding::Global);
    }

    #[test]
    fn assignments_are_followed_unless_a_closure_makes_them() {
        let assignments = Assignments {
            reassigned: HashSet::from([7, 9]),
            from_closures: HashSet::from([9]),
        };
        let mut scopes = Scopes::new(assignments);
        scopes.declare("n", 7, 0, Value::Number(1.0));
        scopes.declare("m", 9, 0, Value::Number(1.0));
        scopes.assign(7, Value::Number(2.0));
        let value = |scopes: &Scopes, name: &str, depth: usize| match scopes.resolve(name, depth) {
            Binding::Local { value, .. } => value,
            Binding::Global => panic!("{name} is a local"),
        };
        assert_eq!(value(&scopes, "n", 0), Value::Number(2.0));
        // A closure cannot know when it runs.
        assert_eq!(value(&scopes, "n", 1), Value::Unknown);
        assert_eq!(value(&scopes, "m", 0), Value::Unknown);
    }

    #[test]
    fn branches_meet_with_joined_values() {
        let mut scopes = Scopes::new(Assignments::default());
        scopes.declare("x", 1, 0, Value::Number(1.0));
        let before = scopes.snapshot();
        scopes.assign(1, Value::Str("a".into()));
        let then = scopes.snapshot();
        scopes.restore(&before);
        let joined = then.join(&scopes.snapshot());
        scopes.restore(&joined);
        match scopes.resolve("x", 0) {
            Binding::Local {
                value: Value::Typed(ty),
                ..
            } => assert_eq!(
                ty.kinds,
                crate::domain::types::Kinds::INTEGER | crate::domain::types::Kinds::TEXT
            ),
            other => panic!("{other:?}"),
        }
    }
}
