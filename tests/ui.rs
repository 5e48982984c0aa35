//! Compile-fail tests: each case is one mistake, and its `.stderr` is the
//! message a user reads. Regenerate with `TRYBUILD=overwrite` after a
//! deliberate wording change, then review the diff. `REDIS_SCRIPT_UI=name`
//! runs the cases of `ui/name/` only.

#[test]
fn compile_errors_read_well() {
    // Under trybuild the crate is compiled from a generated directory, so
    // tell the macro where `path = "ui/..."` is relative to. Set before any
    // other thread exists in this test binary.
    #[allow(unsafe_code)]
    // SAFETY: this is the only test of this binary and it runs before trybuild
    // spawns any thread or process that reads the environment.
    unsafe {
        std::env::set_var("REDIS_SCRIPT_BASE_DIR", env!("CARGO_MANIFEST_DIR"));
        // The project-wide declared commands the `targets` cases call.
        std::env::set_var("REDIS_SCRIPT_COMMANDS", "ui/targets/declared.commands");
        // The crate-wide target is the default unless a case sets its own.
        std::env::remove_var("REDIS_SCRIPT_TARGET");
    }
    // `REDIS_SCRIPT_UI=values` runs one folder of cases, for a quick look
    // while working on one class of mistake.
    let folder = std::env::var("REDIS_SCRIPT_UI").unwrap_or_else(|_| "*".to_owned());
    let cases = trybuild::TestCases::new();
    cases.compile_fail(format!("ui/{folder}/*.rs"));
}
