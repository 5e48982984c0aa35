//! Lexical scopes: which names are locals at each point, and what they hold.

use std::collections::HashSet;

use super::value::Value;

/// A local variable: where it was declared (its identity) and its value.
#[derive(Debug)]
struct Local {
    name: String,
    declared_at: usize,
    value: Value,
}

/// The stack of open blocks, innermost last.
#[derive(Debug, Default)]
pub(crate) struct Scopes {
    blocks: Vec<Vec<Local>>,
    /// Declarations (by byte offset) that are assigned again somewhere; their
    /// value is unknown everywhere, since loops and closures can run the
    /// assignment before any read.
    reassigned: HashSet<usize>,
}

/// What a name refers to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Binding {
    Local { declared_at: usize, value: Value },
    Global,
}

impl Scopes {
    pub fn new(reassigned: HashSet<usize>) -> Self {
        Self {
            blocks: vec![Vec::new()],
            reassigned,
        }
    }

    pub fn push(&mut self) {
        self.blocks.push(Vec::new());
    }

    pub fn pop(&mut self) {
        self.blocks.pop();
    }

    /// Declares a local in the innermost block, shadowing outer ones.
    pub fn declare(&mut self, name: &str, declared_at: usize, value: Value) {
        let value = if self.reassigned.contains(&declared_at) {
            Value::Unknown
        } else {
            value.stored()
        };
        let local = Local {
            name: name.to_string(),
            declared_at,
            value,
        };
        match self.blocks.last_mut() {
            Some(block) => block.push(local),
            None => self.blocks.push(vec![local]),
        }
    }

    pub fn resolve(&self, name: &str) -> Binding {
        self.blocks
            .iter()
            .rev()
            .flat_map(|block| block.iter().rev())
            .find(|local| local.name == name)
            .map_or(Binding::Global, |local| Binding::Local {
                declared_at: local.declared_at,
                value: local.value.clone(),
            })
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
        let mut scopes = Scopes::new(HashSet::new());
        scopes.declare("x", 1, Value::Number(1.0));
        scopes.push();
        scopes.declare("x", 2, Value::Key);
        assert_eq!(
            scopes.resolve("x"),
            Binding::Local {
                declared_at: 2,
                value: Value::Key
            }
        );
        scopes.pop();
        assert_eq!(
            scopes.resolve("x"),
            Binding::Local {
                declared_at: 1,
                value: Value::Number(1.0)
            }
        );
        assert_eq!(scopes.resolve("y"), Binding::Global);
    }

    #[test]
    fn reassigned_locals_are_unknown() {
        let mut scopes = Scopes::new(HashSet::from([7]));
        scopes.declare("n", 7, Value::Number(1.0));
        assert_eq!(
            scopes.resolve("n"),
            Binding::Local {
                declared_at: 7,
                value: Value::Unknown
            }
        );
    }
}
