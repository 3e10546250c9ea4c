//! Compile-time guards: every `tests/ui/fail` case must fail with the
//! committed message (what must compile and run is `ui_pass`). Regenerate
//! messages with `TRYBUILD=overwrite cargo test --test suite ui::`.

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/fail/*.rs");
}
