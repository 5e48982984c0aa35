//! Globals and library members: what the Redis sandbox defines, refuses to
//! change, or does not have at all.

use full_moon::tokenizer::TokenReference;

use super::sandbox::{self, GlobalKind, Presence};
use super::scope::Binding;
use super::span::Span;
use super::suggest;
use super::target::ReleaseSet;
use super::value::{Param, Value};
use super::walker::{Analyzer, identifier};

/// What to write instead of a name the sandbox does not have, when a
/// better hint than the sandbox's own reason exists.
fn absent_hint(name: &str, member: Option<&str>) -> Option<&'static str> {
    let hint = match (name, member) {
        ("print", _) => "log with `redis.log(redis.LOG_NOTICE, message)`",
        ("os", Some("time" | "clock" | "date")) => {
            "read the server clock with `redis.call('TIME')`, or pass the time in through ARGV"
        }
        ("io", _) => {
            "scripts cannot do file or console I/O; pass data in through ARGV and return results"
        }
        ("require" | "dofile" | "loadfile" | "module" | "package", _) => {
            "scripts cannot load code; cjson, cmsgpack, bit and struct are preloaded globals, and other code must be inlined"
        }
        ("getfenv" | "setfenv", _) => {
            "pass values explicitly instead of using function environments"
        }
        ("newproxy", _) => "use a table with `setmetatable` instead",
        _ => return None,
    };
    Some(hint)
}

/// What to do about a hazardous global the sandbox does define.
fn hazard_hint(name: &str) -> &'static str {
    match name {
        "load" | "loadstring" => "write the code directly in the script",
        "collectgarbage" | "gcinfo" => {
            "remove it: a script's reply must not depend on the interpreter's memory"
        }
        _ => "do not rely on it in scripts",
    }
}

/// The global's names and the visible locals, for suggestions.
fn known_names(locals: Vec<&str>) -> Vec<&str> {
    let mut names = locals;
    for global in sandbox::GLOBALS {
        if !global.name.starts_with("__") {
            names.push(global.name);
        }
    }
    names
}

impl Analyzer<'_> {
    /// Reads a name: a local, or a global the sandbox must define.
    /// `next_member` is the `.member` that follows, for better suggestions.
    pub fn read_name(&mut self, token: &TokenReference, next_member: Option<&str>) -> Value {
        let name = identifier(token);
        match self.scopes.resolve(name) {
            Binding::Local { value, .. } => value,
            Binding::Global => {
                let span = self.span(token);
                self.global_read(name, span, next_member)
            }
        }
    }

    fn global_read(&mut self, name: &str, span: Span, next_member: Option<&str>) -> Value {
        let presence = sandbox::global(name)
            .map(|global| sandbox::presence(global.releases, &self.context.signature.target));
        if let Some(Presence::Missing { elsewhere }) = presence {
            let diagnostic = self.not_on_target(name, elsewhere, span);
            self.diagnostics.push(diagnostic);
            return Value::Unknown;
        }
        match sandbox::global(name).map(|global| global.kind) {
            Some(GlobalKind::ScriptArguments) if name == "KEYS" => Value::Params(Param::Keys),
            Some(GlobalKind::ScriptArguments) => Value::Params(Param::Argv),
            Some(_) => {
                if let Some(hazard) = sandbox::hazard(name) {
                    self.diagnostics
                        .push(span.note(format!("`{name}` {}", hazard.note), hazard_hint(name)));
                }
                Value::builtin(name, None)
            }
            None => {
                let diagnostic = self.missing_global(name, span, next_member);
                self.diagnostics.push(diagnostic);
                Value::Unknown
            }
        }
    }

    /// A global or member some release defines, but not every server of a
    /// strict target.
    fn not_on_target(&self, name: &str, elsewhere: ReleaseSet, span: Span) -> super::Diagnostic {
        let target = &self.context.signature.target;
        let lacking: Vec<&str> = target
            .platforms()
            .iter()
            .filter(|platform| !elsewhere.contains(platform.release))
            .map(|platform| platform.release().name)
            .collect();
        span.error(
            format!(
                "`{name}` is not defined on {}: reading it fails there with \"Script attempted to access nonexistent global variable\" (it exists {}; {})",
                lacking.join(", "),
                elsewhere.describe(),
                target.phrase()
            ),
            if name == "server" {
                "use `redis`, which every server defines (Valkey's `server` is the same table)"
            } else {
                "use it only where the server has it, or change the target"
            },
        )
    }

    fn missing_global(
        &self,
        name: &str,
        span: Span,
        next_member: Option<&str>,
    ) -> super::Diagnostic {
        if let Some(absent) = sandbox::absent(name) {
            let hint = absent_hint(name, next_member).unwrap_or(absent.reason);
            return span.error(
                format!("`{name}` is not available in Redis scripts: reading it fails at run time"),
                hint,
            );
        }
        span.error(
            format!(
                "`{name}` is not defined: Redis fails with \"Script attempted to access nonexistent global variable '{name}'\""
            ),
            self.undefined_hint(name, next_member),
        )
    }

    fn undefined_hint(&self, name: &str, next_member: Option<&str>) -> String {
        let candidates = known_names(self.scopes.visible_names());
        match suggest::closest(name, candidates) {
            Some(near) => {
                let with_member = next_member
                    .filter(|member| sandbox::member(near, member).is_some())
                    .map(|member| format!("{near}.{member}"));
                format!("did you mean `{}`?", with_member.as_deref().unwrap_or(near))
            }
            None => format!("declare it first: `local {name} = …`"),
        }
    }

    /// `name = ...` (or `function name()`) where `name` is not a local.
    pub fn global_write(&mut self, name: &str, span: Span, is_function: bool) {
        let locals = self.scopes.visible_names();
        let near_local = suggest::closest(name, locals.iter().copied());
        let (message, declare) = if is_function {
            (
                format!(
                    "function `{name}` is declared as a global: Redis scripts cannot create globals (Attempt to modify a readonly table)"
                ),
                format!("write `local function {name}(…)`"),
            )
        } else {
            (
                format!(
                    "assignment to global variable `{name}`: Redis scripts cannot create or change globals (Attempt to modify a readonly table)"
                ),
                format!("declare it with `local {name} = …`"),
            )
        };
        let hint = match near_local {
            Some(local) => format!("did you mean the local `{local}`? otherwise {declare}"),
            None => declare,
        };
        self.diagnostics.push(span.error(message, hint));
    }

    /// `base.member` on a value; library members are checked.
    pub fn index_member(&mut self, base: Value, member: &str, span: Span) -> Value {
        let Value::Builtin {
            global,
            member: None,
        } = base
        else {
            return Value::Unknown;
        };
        let Some(library) = sandbox::global(&global) else {
            return Value::Unknown;
        };
        match library.kind {
            GlobalKind::GlobalTable => return self.global_read(member, span, None),
            GlobalKind::Library(_) => {}
            _ => return Value::Unknown,
        }
        if let Some(found) = library.member(member) {
            if let Presence::Missing { elsewhere } =
                sandbox::presence(found.releases, &self.context.signature.target)
            {
                let name = format!("{global}.{member}");
                let diagnostic = self.not_on_target(&name, elsewhere, span);
                self.diagnostics.push(diagnostic);
                return Value::Unknown;
            }
            if let Some(note) = sandbox::member_note(&global, member) {
                self.diagnostics.push(span.note(
                    format!("`{global}.{member}`: {note}"),
                    "make sure the script does not rely on it",
                ));
            }
            return Value::builtin(&global, Some(member));
        }
        let hint = match (
            absent_hint(&global, Some(member)),
            sandbox::suggest_member(&global, member),
        ) {
            (Some(hint), _) => hint.to_string(),
            (None, Some(near)) => format!("did you mean `{global}.{near}`?"),
            (None, None) => format!("see the Redis Lua API reference for what `{global}` offers"),
        };
        self.diagnostics.push(span.error(
            format!("`{global}.{member}` does not exist: the `{global}` library has no member `{member}`, so it is nil"),
            hint,
        ));
        Value::Unknown
    }

    /// `base.member = ...` or `function base.member()`.
    pub fn member_write(&mut self, base: &Value, member: &str, span: Span) {
        let Value::Builtin {
            global,
            member: None,
        } = base
        else {
            return;
        };
        let is_table = sandbox::global(global).is_some_and(|global| {
            matches!(
                global.kind,
                GlobalKind::GlobalTable | GlobalKind::Library(_)
            )
        });
        if !is_table {
            return;
        }
        self.diagnostics.push(span.error(
            format!(
                "assignment to `{global}.{member}` changes the read-only `{global}` table: Redis fails with \"Attempt to modify a readonly table\""
            ),
            "keep your own values in a local table: `local M = {}`",
        ));
    }
}
