//! Fuzz targets for the state opener (`Sealer::open`): arbitrary tokens never open and
//! never panic; real tokens with any mutation (of the text, of the decoded bytes, of the
//! binding it is opened with) never open; unmutated ones always do. Budget: see
//! `fuzz_support` (`MCP_FUZZ_CASES`).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_tool_runtime::Principal;
use mcp_tool_runtime::seal::{Binding, Keyring, Protection, SealConfig, Sealer, StateBody};
use proptest::prelude::*;
use serde_json::json;

mod fuzz_support;

const MODES: [Protection; 3] = [
    Protection::Hmac,
    Protection::Aes256Gcm,
    Protection::ChaCha20Poly1305,
];

fn sealers() -> Vec<Sealer> {
    MODES
        .iter()
        .map(|p| {
            let ring = Keyring::new("k1", vec![1u8; 32])
                .unwrap()
                .add_previous("k0", vec![2u8; 32])
                .unwrap();
            Sealer::new(ring, SealConfig::default().with_protection(*p)).with_context("fuzz")
        })
        .collect()
}

fn body() -> StateBody {
    StateBody {
        round: 1,
        layout: "v1".into(),
        payload: json!({"state": {"stage": "S1", "vars": {"n": 3}}, "pending": {}, "journal": {}}),
    }
}

fn token_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,300}",
        "mts3\\.[A-Za-z0-9_-]{0,10}\\.[A-Za-z0-9_-]{0,600}",
        "mts[0-9]{0,3}\\.[a-z0-9.]{0,20}",
        prop::collection::vec(any::<u8>(), 0..500)
            .prop_map(|b| format!("mts3.k1.{}", URL_SAFE_NO_PAD.encode(b))),
        prop::collection::vec(any::<u8>(), 0..500)
            .prop_map(|b| format!("mts3.k0.{}", URL_SAFE_NO_PAD.encode(b))),
    ]
}

#[test]
fn fuzz_open_arbitrary_tokens() {
    let sealers = sealers();
    let alice = Principal::named("alice");
    let args = json!({"x": 1});
    let binding = Binding::new(&alice, "tools/call", "t", &args);
    fuzz_support::fuzz("seal_open_arbitrary", 2000, token_strategy(), |token| {
        for s in &sealers {
            prop_assert!(s.open(&binding, &token).is_err(), "{token:?} opened");
        }
        Ok(())
    });
}

/// One change to a real token.
#[derive(Debug, Clone)]
enum Mutation {
    /// Replace the character at `pos` (mod length) with `c`.
    Char(usize, char),
    /// XOR the decoded byte at `pos` with a non-zero `mask`.
    Flip(usize, u8),
    /// Insert `byte` into the decoded bytes at `pos`.
    Insert(usize, u8),
    /// Remove the decoded byte at `pos`.
    Remove(usize),
    /// Keep only the first `pos` characters.
    Truncate(usize),
    /// Append text.
    Append(String),
    /// Swap the key id.
    Kid(String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<char>()).prop_map(|(p, c)| Mutation::Char(p, c)),
        (any::<usize>(), 1u8..=255).prop_map(|(p, m)| Mutation::Flip(p, m)),
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::Insert(p, b)),
        any::<usize>().prop_map(Mutation::Remove),
        any::<usize>().prop_map(Mutation::Truncate),
        "[A-Za-z0-9_.=-]{1,8}".prop_map(Mutation::Append),
        prop_oneof![
            Just("k0".to_owned()),
            Just("k2".to_owned()),
            Just("".to_owned()),
            "[A-Za-z0-9_-]{1,70}"
        ]
        .prop_map(Mutation::Kid),
    ]
}

fn mutate(token: &str, m: &Mutation) -> String {
    let (head, data) = token.rsplit_once('.').unwrap_or((token, ""));
    let bytes = URL_SAFE_NO_PAD.decode(data).unwrap_or_default();
    let with_bytes = |b: Vec<u8>| format!("{head}.{}", URL_SAFE_NO_PAD.encode(b));
    match m {
        Mutation::Char(pos, c) => {
            let mut chars: Vec<char> = token.chars().collect();
            let i = pos % chars.len().max(1);
            if let Some(slot) = chars.get_mut(i) {
                *slot = *c;
            }
            chars.into_iter().collect()
        }
        Mutation::Flip(pos, mask) => {
            let mut b = bytes;
            let n = b.len().max(1);
            if let Some(x) = b.get_mut(pos % n) {
                *x ^= mask;
            }
            with_bytes(b)
        }
        Mutation::Insert(pos, byte) => {
            let mut b = bytes;
            let i = pos % (b.len() + 1);
            b.insert(i, *byte);
            with_bytes(b)
        }
        Mutation::Remove(pos) => {
            let mut b = bytes;
            if !b.is_empty() {
                let i = pos % b.len();
                b.remove(i);
            }
            with_bytes(b)
        }
        Mutation::Truncate(pos) => token.chars().take(pos % token.len().max(1)).collect(),
        Mutation::Append(s) => format!("{token}{s}"),
        Mutation::Kid(kid) => format!("mts3.{kid}.{data}"),
    }
}

#[test]
fn fuzz_open_mutated_real_tokens() {
    let sealers = sealers();
    let alice = Principal::named("alice");
    let args = json!({"x": 1, "y": [true, null]});
    let binding = Binding::new(&alice, "tools/call", "t", &args);
    let tokens: Vec<String> = sealers
        .iter()
        .map(|s| s.seal(&binding, &body(), None).unwrap())
        .collect();
    let strategy = (0..MODES.len(), prop::collection::vec(mutation(), 1..4));
    fuzz_support::fuzz("seal_open_mutated", 2000, strategy, |(mode, muts)| {
        let original = &tokens[mode];
        let mut t = original.clone();
        for m in &muts {
            t = mutate(&t, m);
        }
        let opened = sealers[mode].open(&binding, &t);
        if &t == original {
            prop_assert_eq!(opened.unwrap(), body());
        } else {
            prop_assert!(opened.is_err(), "mutated token opened: {:?}", muts);
        }
        Ok(())
    });
}

#[test]
fn fuzz_open_with_another_binding() {
    let sealers = sealers();
    let alice = Principal::named("alice");
    let args = json!({"x": 1});
    let binding = Binding::new(&alice, "tools/call", "t", &args);
    let tokens: Vec<String> = sealers
        .iter()
        .map(|s| s.seal(&binding, &body(), None).unwrap())
        .collect();
    let strategy = (
        0..MODES.len(),
        prop::option::of(".{0,8}"),
        prop::option::of("[a-z/]{0,12}"),
        prop::option::of(".{0,6}"),
        prop::option::of(any::<i64>()),
        any::<bool>(),
    );
    fuzz_support::fuzz(
        "seal_open_other_binding",
        1000,
        strategy,
        |(mode, who, method, tool, x, anonymous)| {
            let principal = match (&who, anonymous) {
                (_, true) => Principal::anonymous(),
                (Some(w), false) => Principal::named(w.as_str()),
                (None, false) => Principal::named("alice"),
            };
            let args = json!({"x": x.unwrap_or(1)});
            let method = method.as_deref().unwrap_or("tools/call");
            let tool = tool.as_deref().unwrap_or("t");
            let b = Binding::new(&principal, method, tool, &args);
            let same =
                principal == alice && method == "tools/call" && tool == "t" && x.unwrap_or(1) == 1;
            let opened = sealers[mode].open(&b, &tokens[mode]);
            prop_assert_eq!(opened.is_ok(), same);
            Ok(())
        },
    );
}
