//! Compile-time guards of the derive: every `fail/` case must fail with the
//! committed message (what must compile and run is the facade suite's
//! `ui_pass`). Regenerate messages with
//! `TRYBUILD=overwrite cargo test -p nemo-lens-ui` and review the diff.

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("fail/*.rs");
}
