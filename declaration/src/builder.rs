//! The one way the analysis's [`Signature`](lua::Signature) is built,
//! whatever declares the script: a `#[redis_script]` function or a
//! `#[redis_library]` module (read by the attribute, and by the checker's
//! language server from a crate's sources), or counts and options from the
//! command line, a configuration file, a script's header or a call in
//! another language's source (the command-line checker).
//!
//! ```
//! use redis_script_analysis::DeclaredBy;
//! use redis_script_declaration::{Count, SignatureBuilder};
//!
//! let signature = SignatureBuilder::new(DeclaredBy::CommandLine)
//!     .keys(Count::fixed(1))
//!     .args(Count { fixed: 1, variadic: true })
//!     .key_prefix_args([1])
//!     .allow(["unbounded_read".to_owned()])
//!     .build();
//! assert_eq!((signature.keys, signature.args, signature.variadic_args), (1, 1, true));
//! assert!(signature.key_prefix_args.contains(&1));
//! ```

use redis_script_analysis as lua;

use crate::{Declaration, LibraryDeclaration, Param, registered_name};

/// How many keys (or arguments) a script takes: `fixed` ones, then, when
/// `variadic`, a list of any length (`2+` on the command line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    /// How many come one by one: `KEYS[1..=fixed]`.
    pub fixed: usize,
    /// A list of any length follows them.
    pub variadic: bool,
}

impl Count {
    /// `fixed` and no list after them.
    pub const fn fixed(fixed: usize) -> Self {
        Self {
            fixed,
            variadic: false,
        }
    }

    /// The keys `signature` declares.
    pub fn keys_of(signature: &lua::Signature) -> Self {
        Self {
            fixed: signature.keys,
            variadic: signature.variadic_keys,
        }
    }

    /// The arguments `signature` declares.
    pub fn args_of(signature: &lua::Signature) -> Self {
        Self {
            fixed: signature.args,
            variadic: signature.variadic_args,
        }
    }

    /// What the parameters of a Rust function declare: one each, the
    /// last a variadic list when it is a slice.
    fn of_params(params: &[Param]) -> Self {
        let variadic = params.last().is_some_and(|param| param.variadic);
        Self {
            fixed: params.len() - usize::from(variadic),
            variadic,
        }
    }
}

/// The server model a script is checked against: the servers it must run
/// on, and the commands the project declares.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// The servers the script must run on.
    pub target: lua::Target,
    /// The commands the project declares, which the tables do not know.
    pub declared_commands: lua::DeclaredCommands,
}

/// A script's own target, as its declaration writes it (the attribute's
/// `target = "…"`, the command line's `--target`): the checker is strict
/// for it, and says "this script targets …".
pub fn script_target(text: &str) -> Result<lua::Target, lua::TargetError> {
    lua::Target::parse(text).map(|target| target.with_scope(lua::TargetScope::Script))
}

/// Builds the [`lua::Signature`] a script is checked against: the keys and
/// arguments it takes, the opt-outs, and the server model. Each part is
/// added once, in any order; the opt-outs and lists add up.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct SignatureBuilder {
    signature: lua::Signature,
}

impl SignatureBuilder {
    /// No keys, no arguments, no opt-outs, any server; `declared_by` is who
    /// the messages say declares the counts.
    pub fn new(declared_by: lua::DeclaredBy) -> Self {
        Self {
            signature: lua::Signature {
                declared_by,
                ..lua::Signature::default()
            },
        }
    }

    /// Starting from `signature` (the one a script's header documents).
    pub fn from_signature(signature: lua::Signature) -> Self {
        Self { signature }
    }

    /// What a Rust function declares: its key and argument parameters (by
    /// name, a slice last as a variadic list, `#[key_prefix]` arguments)
    /// and its opt-outs (`allow_unused`, `dynamic_keys`, `allow(…)`).
    pub fn of_declaration(declaration: &Declaration) -> Self {
        let signature = &declaration.signature;
        let names = |params: &[Param]| -> Vec<String> {
            params
                .iter()
                .filter(|param| !param.variadic)
                .map(|param| param.ident.to_string())
                .collect()
        };
        let key_prefixes = signature
            .arg_params()
            .iter()
            .enumerate()
            .filter(|(_, param)| param.key_prefix.is_some())
            .map(|(index, _)| index + 1);
        let mut builder = Self::new(lua::DeclaredBy::RustFunction)
            .keys(Count::of_params(signature.key_params()))
            .args(Count::of_params(signature.arg_params()))
            .key_prefix_args(key_prefixes)
            .allow_unused(declaration.options.allow_unused)
            .dynamic_keys(declaration.options.dynamic_keys)
            .allow(declaration.options.allow.iter().cloned());
        builder.signature.key_names = names(signature.key_params());
        builder.signature.arg_names = names(signature.arg_params());
        builder.signature.arg_types = signature
            .arg_params()
            .iter()
            .filter(|param| !param.variadic)
            .map(|param| {
                let rust = crate::shown::type_text(&param.ty);
                lua::ArgType {
                    sent: lua::SentAs::of_rust_type(&rust),
                    rust,
                }
            })
            .collect();
        builder
    }

    /// The keys: `KEYS[1..=fixed]`, then a list when variadic.
    pub fn keys(mut self, count: Count) -> Self {
        self.signature.keys = count.fixed;
        self.signature.variadic_keys = count.variadic;
        self
    }

    /// The arguments: `ARGV[1..=fixed]`, then a list when variadic.
    pub fn args(mut self, count: Count) -> Self {
        self.signature.args = count.fixed;
        self.signature.variadic_args = count.variadic;
        self
    }

    /// Adds arguments (1-based) declared key prefixes.
    pub fn key_prefix_args(mut self, args: impl IntoIterator<Item = usize>) -> Self {
        self.signature.key_prefix_args.extend(args);
        self
    }

    /// Declared keys and arguments may go unused, when `allowed`.
    pub fn allow_unused(mut self, allowed: bool) -> Self {
        self.signature.allow_unused |= allowed;
        self
    }

    /// Key positions may hold values that do not come from `KEYS`, when
    /// `allowed`.
    pub fn dynamic_keys(mut self, allowed: bool) -> Self {
        self.signature.dynamic_keys |= allowed;
        self
    }

    /// The script runs with `EVAL_RO`/`EVALSHA_RO`, when `read_only`.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.signature.read_only |= read_only;
        self
    }

    /// Adds value findings silenced for the whole script.
    pub fn allow(mut self, findings: impl IntoIterator<Item = String>) -> Self {
        self.signature.allow.extend(findings);
        self
    }

    /// The server model: the target and the declared commands.
    pub fn model(mut self, model: Model) -> Self {
        self.signature.target = model.target;
        self.signature.declared_commands = model.declared_commands;
        self
    }

    /// The signature, as built.
    pub fn build(self) -> lua::Signature {
        self.signature
    }
}

/// What a `#[redis_library]` module declares, checked against `model`:
/// the library's own opt-outs (`allow(…)`) and each declared function's
/// keys, arguments and opt-outs, under the name it is registered as.
pub fn library_signature(declaration: &LibraryDeclaration, model: Model) -> lua::LibrarySignature {
    let library = SignatureBuilder::default()
        .model(model)
        .allow(declaration.allow.iter().cloned())
        .build();
    let functions = declaration
        .functions
        .iter()
        .map(|function| lua::DeclaredFunction {
            name: registered_name(function),
            signature: SignatureBuilder::of_declaration(function).build(),
        })
        .collect();
    lua::LibrarySignature { library, functions }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    fn declaration(
        attribute: proc_macro2::TokenStream,
        item: proc_macro2::TokenStream,
    ) -> Declaration {
        match Declaration::parse(attribute, item) {
            Ok(declaration) => declaration,
            Err(failure) => panic!("{}", failure.errors),
        }
    }

    #[test]
    fn a_rust_function_declares_its_parameters_by_name_and_its_opt_outs() {
        let declared = declaration(
            quote!(
                path = "lua/enqueue.lua",
                keys = 2,
                dynamic_keys,
                allow(always_true)
            ),
            quote!(
                async fn enqueue(
                    queue: &str,
                    extra: &[&str],
                    #[key_prefix] prefix: &str,
                    ids: &[u64],
                ) -> i64;
            ),
        );
        let signature = SignatureBuilder::of_declaration(&declared).build();
        assert_eq!(
            (Count::keys_of(&signature), Count::args_of(&signature)),
            (
                Count {
                    fixed: 1,
                    variadic: true
                },
                Count {
                    fixed: 1,
                    variadic: true
                }
            )
        );
        assert_eq!(
            (signature.key_names, signature.arg_names),
            (vec!["queue".to_owned()], vec!["prefix".to_owned()])
        );
        assert_eq!(
            signature.key_prefix_args.into_iter().collect::<Vec<_>>(),
            [1]
        );
        assert!(signature.dynamic_keys && !signature.allow_unused && !signature.read_only);
        assert_eq!(signature.allow, ["always_true"]);
        assert_eq!(signature.declared_by, lua::DeclaredBy::RustFunction);
    }

    #[test]
    fn options_add_to_a_documented_signature_and_the_model_is_the_builder_s() {
        let documented = lua::Signature {
            keys: 1,
            key_prefix_args: [2].into(),
            declared_by: lua::DeclaredBy::Header,
            ..lua::Signature::default()
        };
        let target = script_target("redis-7.0").unwrap_or_else(|error| panic!("{error}"));
        let signature = SignatureBuilder::from_signature(documented)
            .key_prefix_args([3])
            .allow_unused(true)
            .read_only(true)
            .allow(["unbounded_read".to_owned()])
            .model(Model {
                target: target.clone(),
                declared_commands: lua::DeclaredCommands::default(),
            })
            .build();
        assert_eq!(signature.keys, 1);
        assert_eq!(
            signature.key_prefix_args.into_iter().collect::<Vec<_>>(),
            [2, 3]
        );
        assert!(signature.allow_unused && signature.read_only && !signature.dynamic_keys);
        assert_eq!(signature.allow, ["unbounded_read"]);
        assert_eq!(signature.target, target);
        assert_eq!(signature.declared_by, lua::DeclaredBy::Header);
        assert!(script_target("redis-0.1").is_err());
    }

    #[test]
    fn a_library_declares_its_functions_under_their_registered_names() {
        let library = match LibraryDeclaration::parse(
            quote!(path = "lua/quota.lua", allow(unbounded_read)),
            quote!(
                mod quota {
                    #[function(keys = 1, name = "quota_peek")]
                    pub async fn peek(key: &str) -> Option<i64>;
                    #[function(keys = 1, allow_unused)]
                    pub async fn allow(key: &str, limit: u64) -> i64;
                }
            ),
        ) {
            Ok(library) => library,
            Err(failure) => panic!("{}", failure.errors),
        };
        let signature = library_signature(&library, Model::default());
        assert_eq!(signature.library.allow, ["unbounded_read"]);
        let functions: Vec<(&str, usize, usize, bool)> = signature
            .functions
            .iter()
            .map(|function| {
                let declared = &function.signature;
                (
                    function.name.as_str(),
                    declared.keys,
                    declared.args,
                    declared.allow_unused,
                )
            })
            .collect();
        assert_eq!(
            functions,
            [("quota_peek", 1, 0, false), ("allow", 1, 1, true)]
        );
    }
}
