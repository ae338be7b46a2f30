//! Compile-fail cases: every rejected construct and bad attribute has a `.stderr` with the
//! message a newcomer sees. Regenerate with `TRYBUILD=overwrite` (then read the diff).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

/// Every kind of refusal (`src/analyse/refusal.rs`) and the case that shows its message.
const CASES: &[(&str, &str)] = &[
    ("InClosure", "in_closure"),
    ("InAsyncBlock", "in_async_block"),
    ("InMatchGuard", "in_match_guard"),
    ("InNestedItem", "in_nested_item"),
    ("InMacro", "in_other_macro"),
    ("RoundNotATuple", "round_not_a_tuple"),
    ("RoundElementUnknown", "round_element_unknown"),
    ("NotAwaited", "not_awaited"),
    ("ContextToNonFlow", "flow_context_to_method"),
    ("EmptyKey", "empty_key"),
    ("KeyWithSeparator", "key_with_separator"),
    ("NoKeyInRound", "no_key_in_round"),
    ("DuplicateKeyInRound", "duplicate_key_in_round"),
    ("BorrowKept", "kept_borrow"),
    ("FlowTurbofish", "flow_call_turbofish"),
    ("BadSite", "bad_site"),
    ("InLetChain", "in_let_chain"),
    ("InAssignedPlace", "in_assigned_place"),
    ("OrdinalKeyTaken", "ordinal_key_taken"),
    ("InUnsafeBlock", "in_unsafe_block"),
    ("JournalKeyInLoop", "journal_loop_static_key"),
    ("JournalDuplicateKey", "journal_duplicate_key"),
    ("JournalFlowInLoop", "journal_flow_in_loop"),
    ("JournalDuplicateSite", "journal_duplicate_site"),
];

/// The refusal catalogue and the cases agree: each kind has a compile-fail case (except
/// `Unlowered`, the guard behind the A-normal form that no known program reaches), and each
/// case named exists.
#[test]
fn every_refusal_has_a_case() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(dir.join("src/analyse/refusal.rs")).expect("refusal.rs");
    let body = &src[src.find("pub enum Refusal").expect("the enum")..];
    let body = &body[..body.find("\n}\n").expect("its end")];
    let kinds: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("    "))
        .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
        .map(|l| l.split([' ', ',', '{']).next().unwrap_or_default())
        .collect();
    assert!(kinds.len() > 20, "{kinds:?}");
    for kind in kinds.iter().filter(|k| **k != "Unlowered") {
        let case = CASES
            .iter()
            .find(|(k, _)| k == kind)
            .unwrap_or_else(|| panic!("refusal `{kind}` has no compile-fail case"));
        let path = dir.join("tests/ui").join(format!("{}.rs", case.1));
        assert!(path.exists(), "{} is missing", path.display());
    }
    for (kind, _) in CASES {
        assert!(kinds.contains(kind), "`{kind}` is no longer a refusal");
    }
}
