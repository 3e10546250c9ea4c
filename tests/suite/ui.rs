//! Compile-time guards: every `tests/ui/fail` case must fail with the
//! committed message, every `tests/ui/pass` case must compile and run.
//! Regenerate messages with `TRYBUILD=overwrite cargo test --test ui`.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
