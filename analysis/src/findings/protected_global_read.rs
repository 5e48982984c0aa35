//! `protected_global_read`: a read of an undefined global inside a
//! function called through `pcall` (it raises, and the `pcall` catches
//! it: a feature probe does this on purpose) or inside a metamethod (it
//! raises only when the metamethod runs).

use crate::interp::observe::{Certainty, Finding, Guard, GuardedGlobalRead, Site};

pub(crate) struct ProtectedGlobalRead;

impl Finding for ProtectedGlobalRead {
    fn guarded_global_read(&self, site: &mut Site<'_>, read: &GuardedGlobalRead<'_>) {
        let name = read.name;
        let raises = format!(
            "`{name}` is not defined: reading it raises \"Script attempted to access nonexistent global variable '{name}'\""
        );
        let message = match read.guard {
            Guard::Pcall => format!("{raises}, which the `pcall` around this function catches"),
            Guard::Metamethod => format!("{raises} when this metamethod runs"),
        };
        site.report(
            Certainty::Sometimes,
            read.span,
            message,
            format!("if `{name}` is meant to be a variable, declare it: `local {name} = …`"),
        );
    }
}
