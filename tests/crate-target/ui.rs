//! Compile-fail tests of the crate-wide target, `REDIS_SCRIPT_TARGET`: each
//! directory of `ui/` is compiled with its own value of the variable, which
//! the macro reads when it expands. A package of its own, so that no other
//! declaration is compiled with these targets.

#[test]
fn crate_wide_target_reads_well() {
    let runs = [
        ("redis-5.0", "ui/invalid/*.rs"),
        ("redis-7.2", "ui/redis_7_2/*.rs"),
    ];
    for (target, cases) in runs {
        #[allow(unsafe_code)]
        // SAFETY: this is the only test of this binary; trybuild compiles
        // the cases when `TestCases` is dropped below, before the next
        // iteration changes the environment again.
        unsafe {
            std::env::set_var("REDIS_SCRIPT_BASE_DIR", env!("CARGO_MANIFEST_DIR"));
            std::env::remove_var("REDIS_SCRIPT_COMMANDS");
            std::env::set_var("REDIS_SCRIPT_TARGET", target);
        }
        let run = trybuild::TestCases::new();
        run.compile_fail(cases);
        drop(run);
    }
}
