//! Compile-fail cases: every rejected construct and bad attribute has a `.stderr` with the
//! message a newcomer sees. Regenerate with `TRYBUILD=overwrite` (then read the diff).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
