//! Sealed `requestState`: round trips, every tampering and binding failure, expiry,
//! keys and rotation, size caps, and properties (any single-byte change is
//! rejected; arbitrary input never panics).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_tool_runtime::Principal;
use mcp_tool_runtime::seal::{
    Binding, Keyring, ManualClock, Protection, SealConfig, SealError, Sealer, StateBody,
    args_digest, canonical_json,
};
use proptest::prelude::*;
use serde_json::{Value, json};

const T0: u64 = 1_800_000_000;
const ALL: [Protection; 3] = [
    Protection::Hmac,
    Protection::Aes256Gcm,
    Protection::ChaCha20Poly1305,
];

fn key(b: u8) -> Vec<u8> {
    vec![b; 32]
}

fn sealer_with(ring: Keyring, protection: Protection) -> (Sealer, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(T0));
    let sealer = Sealer::new(ring, SealConfig::default().with_protection(protection))
        .with_clock(clock.clone());
    (sealer, clock)
}

fn sealer(protection: Protection) -> (Sealer, Arc<ManualClock>) {
    sealer_with(Keyring::new("k1", key(1)).unwrap(), protection)
}

fn args() -> Value {
    json!({"city": "Paris", "days": 3, "units": {"temp": "C", "wind": "km/h"}})
}

fn body() -> StateBody {
    StateBody {
        round: 2,
        layout: "get_weather@v1:S1{city:String}".into(),
        payload: json!({"state": {"stage": 1, "city": "Paris"}, "pending": {}, "journal": {}}),
    }
}

/// Seal `body()` for alice calling `get_weather` with `args()`.
fn seal_default(s: &Sealer) -> String {
    let alice = Principal::named("alice");
    let a = args();
    s.seal(
        &Binding::new(&alice, "tools/call", "get_weather", &a),
        &body(),
        None,
    )
    .unwrap()
}

fn open_default(s: &Sealer, token: &str) -> Result<StateBody, SealError> {
    let alice = Principal::named("alice");
    let a = args();
    s.open(
        &Binding::new(&alice, "tools/call", "get_weather", &a),
        token,
    )
}

/// `n` characters that compression cannot shorten much (a pseudo-random hex string), so that
/// size limits are tested on what is sealed, not on what compression makes of it.
fn incompressible(n: usize) -> String {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from_digit((x % 16) as u32, 16).unwrap()
        })
        .collect()
}

/// Split a token into its `mts3.<kid>.` head and its decoded bytes.
fn split(token: &str) -> (String, Vec<u8>) {
    let dot = token.rfind('.').unwrap();
    (
        token[..=dot].to_owned(),
        URL_SAFE_NO_PAD.decode(&token[dot + 1..]).unwrap(),
    )
}

fn join(head: &str, bytes: &[u8]) -> String {
    format!("{head}{}", URL_SAFE_NO_PAD.encode(bytes))
}

// ---------------------------------------------------------------- round trips

#[test]
fn round_trip_under_each_protection() {
    for p in ALL {
        let (s, _) = sealer(p);
        let token = seal_default(&s);
        assert!(token.starts_with("mts3.k1."), "{p:?}: {token}");
        assert_eq!(open_default(&s, &token).unwrap(), body(), "{p:?}");
    }
}

#[test]
fn round_trip_anonymous_and_odd_values() {
    let (s, _) = sealer(Protection::Hmac);
    let anon = Principal::anonymous();
    let a = json!(null);
    let b = Binding::new(&anon, "prompts/get", "", &a);
    let body = StateBody {
        round: u32::MAX,
        layout: String::new(),
        payload: json!(["ünïcødé", 1.5, -0, null, {"": ""}]),
    };
    let t = s.seal(&b, &body, None).unwrap();
    assert_eq!(s.open(&b, &t).unwrap(), body);
}

#[test]
fn layout_is_returned_not_checked() {
    // The server compares the layout itself (journaled tools can restart).
    let (s, _) = sealer(Protection::Hmac);
    let t = seal_default(&s);
    assert_eq!(open_default(&s, &t).unwrap().layout, body().layout);
}

#[test]
fn aead_tokens_differ_each_time_hmac_tokens_are_deterministic() {
    let (h, _) = sealer(Protection::Hmac);
    assert_eq!(seal_default(&h), seal_default(&h));
    for p in [Protection::Aes256Gcm, Protection::ChaCha20Poly1305] {
        let (s, _) = sealer(p);
        assert_ne!(seal_default(&s), seal_default(&s), "{p:?} nonce reuse");
    }
}

// ---------------------------------------------------------------- tampering

#[test]
fn one_byte_of_the_body_changed_is_rejected() {
    for p in ALL {
        let (s, _) = sealer(p);
        let (head, bytes) = split(&seal_default(&s));
        // HMAC: body first; AEAD: nonce (12) then ciphertext. Flip inside the body.
        for pos in [0, 5, 12, 20, bytes.len() / 2] {
            let mut b = bytes.clone();
            b[pos] ^= 0x01;
            let err = open_default(&s, &join(&head, &b)).unwrap_err();
            assert_eq!(err, SealError::BadSignature, "{p:?} pos {pos}");
        }
    }
}

#[test]
fn one_byte_of_the_tag_changed_is_rejected() {
    for p in ALL {
        let (s, _) = sealer(p);
        let (head, bytes) = split(&seal_default(&s));
        for back in 1..=16 {
            let mut b = bytes.clone();
            let i = b.len() - back;
            b[i] = b[i].wrapping_add(1);
            let err = open_default(&s, &join(&head, &b)).unwrap_err();
            assert_eq!(err, SealError::BadSignature, "{p:?} byte -{back}");
        }
    }
}

#[test]
fn kid_is_bound_swapping_it_fails() {
    // Both keys in the ring; relabelling a k1 token as k2 must not verify.
    let ring = Keyring::new("k2", key(2))
        .unwrap()
        .add_previous("k1", key(1))
        .unwrap();
    let (old, _) = sealer(Protection::Hmac);
    let (s, _) = sealer_with(ring, Protection::Hmac);
    let t = seal_default(&old);
    assert!(open_default(&s, &t).is_ok());
    let relabelled = t.replacen("mts3.k1.", "mts3.k2.", 1);
    assert_eq!(
        open_default(&s, &relabelled).unwrap_err(),
        SealError::BadSignature
    );
}

#[test]
fn protection_mode_is_bound() {
    // Same key, another mode: never opens.
    for a in ALL {
        for b in ALL {
            if a == b {
                continue;
            }
            let (sa, _) = sealer(a);
            let (sb, _) = sealer(b);
            assert!(
                open_default(&sb, &seal_default(&sa)).is_err(),
                "{a:?} -> {b:?}"
            );
        }
    }
}

// ---------------------------------------------------------------- binding

#[test]
fn another_principal_is_rejected() {
    for p in ALL {
        let (s, _) = sealer(p);
        let t = seal_default(&s);
        let a = args();
        for who in [
            Principal::named("bob"),
            Principal::named("alice "),
            Principal::named(""),
            Principal::anonymous(),
        ] {
            let err = s
                .open(&Binding::new(&who, "tools/call", "get_weather", &a), &t)
                .unwrap_err();
            assert_eq!(err, SealError::BadSignature, "{p:?} {who:?}");
        }
    }
}

#[test]
fn anonymous_is_not_the_empty_name() {
    let (s, _) = sealer(Protection::Hmac);
    let a = args();
    let anon = Principal::anonymous();
    let empty = Principal::named("");
    let t = s
        .seal(&Binding::new(&anon, "tools/call", "x", &a), &body(), None)
        .unwrap();
    assert!(
        s.open(&Binding::new(&anon, "tools/call", "x", &a), &t)
            .is_ok()
    );
    assert_eq!(
        s.open(&Binding::new(&empty, "tools/call", "x", &a), &t)
            .unwrap_err(),
        SealError::BadSignature
    );
}

#[test]
fn one_argument_changed_is_rejected() {
    let (s, _) = sealer(Protection::Hmac);
    let t = seal_default(&s);
    let alice = Principal::named("alice");
    for changed in [
        json!({"city": "Pariss", "days": 3, "units": {"temp": "C", "wind": "km/h"}}),
        json!({"city": "Paris", "days": 4, "units": {"temp": "C", "wind": "km/h"}}),
        json!({"city": "Paris", "days": 3.0, "units": {"temp": "C", "wind": "km/h"}}),
        json!({"city": "Paris", "days": 3, "units": {"temp": "F", "wind": "km/h"}}),
        json!({"city": "Paris", "days": 3, "units": {"temp": "C"}}),
        json!({"city": "Paris", "days": 3, "units": {"temp": "C", "wind": "km/h"}, "x": null}),
    ] {
        let err = s
            .open(
                &Binding::new(&alice, "tools/call", "get_weather", &changed),
                &t,
            )
            .unwrap_err();
        assert_eq!(err, SealError::BadSignature, "{changed}");
    }
}

#[test]
fn another_tool_is_rejected() {
    let (s, _) = sealer(Protection::Aes256Gcm);
    let t = seal_default(&s);
    let alice = Principal::named("alice");
    let a = args();
    for tool in ["get_weather2", "get_weathe", "", "GET_WEATHER"] {
        let err = s
            .open(&Binding::new(&alice, "tools/call", tool, &a), &t)
            .unwrap_err();
        assert_eq!(err, SealError::BadSignature, "{tool}");
    }
}

#[test]
fn another_method_is_rejected() {
    let (s, _) = sealer(Protection::ChaCha20Poly1305);
    let t = seal_default(&s);
    let alice = Principal::named("alice");
    let a = args();
    for method in ["prompts/get", "resources/read", "tools/call "] {
        let err = s
            .open(&Binding::new(&alice, method, "get_weather", &a), &t)
            .unwrap_err();
        assert_eq!(err, SealError::BadSignature, "{method}");
    }
}

#[test]
fn fields_are_length_prefixed_so_concatenations_differ() {
    // method "tools/call" + tool "ab" vs method "tools/calla" + tool "b".
    let (s, _) = sealer(Protection::Hmac);
    let p = Principal::named("alice");
    let a = args();
    let t = s
        .seal(&Binding::new(&p, "tools/call", "ab", &a), &body(), None)
        .unwrap();
    assert!(
        s.open(&Binding::new(&p, "tools/calla", "b", &a), &t)
            .is_err()
    );
    let q = Principal::named("alicetools/call");
    assert!(s.open(&Binding::new(&q, "", "ab", &a), &t).is_err());
}

// ---------------------------------------------------------------- expiry

#[test]
fn expiry_boundary_is_exact() {
    let (s, clock) = sealer(Protection::Hmac);
    let t = seal_default(&s);
    clock.set(T0 + 599);
    assert!(open_default(&s, &t).is_ok(), "valid one second before");
    clock.set(T0 + 600);
    assert!(matches!(
        open_default(&s, &t),
        Err(SealError::Expired { .. })
    ));
    clock.set(T0 + 601);
    assert_eq!(
        open_default(&s, &t).unwrap_err(),
        SealError::Expired {
            expired_at: T0 + 600,
            now: T0 + 601
        }
    );
}

#[test]
fn ttl_is_configurable_and_overridable_per_seal() {
    let clock = Arc::new(ManualClock::new(T0));
    let s = Sealer::new(
        Keyring::new("k1", key(1)).unwrap(),
        SealConfig::default().with_ttl(Duration::from_secs(30)),
    )
    .with_clock(clock.clone());
    let alice = Principal::named("alice");
    let a = args();
    let b = Binding::new(&alice, "tools/call", "get_weather", &a);
    let short = s.seal(&b, &body(), None).unwrap();
    let long = s.seal(&b, &body(), Some(Duration::from_secs(120))).unwrap();
    // Sub-second TTLs round up to a whole second.
    let tiny = s.seal(&b, &body(), Some(Duration::from_millis(1))).unwrap();
    assert!(s.open(&b, &tiny).is_ok());
    clock.advance(Duration::from_secs(1));
    assert!(s.open(&b, &tiny).is_err());
    clock.set(T0 + 29);
    assert!(s.open(&b, &short).is_ok());
    clock.set(T0 + 31);
    assert!(matches!(s.open(&b, &short), Err(SealError::Expired { .. })));
    assert!(s.open(&b, &long).is_ok());
    clock.set(T0 + 121);
    assert!(matches!(s.open(&b, &long), Err(SealError::Expired { .. })));
}

// ---------------------------------------------------------------- keys

#[test]
fn unknown_key_id_is_rejected() {
    let (other, _) = sealer_with(Keyring::new("k9", key(9)).unwrap(), Protection::Hmac);
    let (s, _) = sealer(Protection::Hmac);
    let t = seal_default(&other);
    assert_eq!(
        open_default(&s, &t).unwrap_err(),
        SealError::UnknownKey { kid: "k9".into() }
    );
}

#[test]
fn same_kid_other_key_is_rejected() {
    // Two processes with `Sealer::random()` do not understand each other.
    let a = Sealer::random();
    let b = Sealer::random();
    assert_eq!(a.keyring().active_kid(), "ephemeral");
    let t = seal_default(&a);
    assert!(open_default(&a, &t).is_ok());
    assert_eq!(open_default(&b, &t).unwrap_err(), SealError::BadSignature);
}

#[test]
fn keys_shorter_than_32_bytes_are_refused() {
    assert_eq!(
        Keyring::new("k1", vec![0u8; 31]).unwrap_err(),
        SealError::KeyTooShort {
            kid: "k1".into(),
            len: 31
        }
    );
    assert!(Keyring::new("k1", Vec::<u8>::new()).is_err());
    assert!(Keyring::new("k1", vec![0u8; 32]).is_ok());
    assert!(Keyring::new("k1", vec![0u8; 64]).is_ok());
    let ring = Keyring::new("k1", key(1)).unwrap();
    assert!(matches!(
        ring.add_previous("k0", vec![0u8; 16]),
        Err(SealError::KeyTooShort { .. })
    ));
    assert!(matches!(
        Keyring::from_hex("k1", &"ab".repeat(31)),
        Err(SealError::KeyTooShort { len: 31, .. })
    ));
}

#[test]
fn key_ids_and_hex_are_validated() {
    for bad in ["", "a.b", "k 1", "ключ", &"k".repeat(65)] {
        assert_eq!(
            Keyring::new(bad, key(1)).unwrap_err(),
            SealError::InvalidKeyId,
            "{bad:?}"
        );
    }
    assert!(Keyring::new("Key_2026-07", key(1)).is_ok());
    let hex = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF";
    let ring = Keyring::from_hex("env", &format!("  {hex}\n")).unwrap();
    assert_eq!(ring.active_kid(), "env");
    assert_eq!(
        Keyring::from_hex("env", &hex[1..]).unwrap_err(),
        SealError::InvalidHex
    );
    assert_eq!(
        Keyring::from_hex("env", &hex.replace('a', "g")).unwrap_err(),
        SealError::InvalidHex
    );
    // A hex key seals like the same bytes given raw.
    let raw: Vec<u8> = (0..32u8)
        .map(|i| {
            [
                0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
                0xee, 0xff,
            ][usize::from(i % 16)]
        })
        .collect();
    let (a, _) = sealer_with(ring, Protection::Hmac);
    let (b, _) = sealer_with(Keyring::new("env", raw).unwrap(), Protection::Hmac);
    assert_eq!(seal_default(&a), seal_default(&b));
}

#[test]
fn keyring_refuses_duplicates_and_retiring_the_active_key() {
    let ring = Keyring::new("k2", key(2))
        .unwrap()
        .add_previous("k1", key(1))
        .unwrap();
    let ring = ring.add_previous("k1", key(3)).unwrap_err();
    assert_eq!(ring, SealError::DuplicateKeyId { kid: "k1".into() });
    let ring = Keyring::new("k2", key(2)).unwrap();
    assert_eq!(
        ring.retire("k2").unwrap_err(),
        SealError::RetireActive { kid: "k2".into() }
    );
    let ring = Keyring::new("k2", key(2)).unwrap().retire("k1").unwrap();
    assert!(ring.is_retired("k1"));
    assert!(matches!(
        ring.add_previous("k1", key(1)),
        Err(SealError::DuplicateKeyId { .. })
    ));
}

#[test]
fn key_rotation() {
    // Yesterday: k1 active.
    let (old, _) = sealer(Protection::Aes256Gcm);
    let in_flight = seal_default(&old);
    // Today: k2 active, k1 still opens.
    let ring = Keyring::new("k2", key(2))
        .unwrap()
        .add_previous("k1", key(1))
        .unwrap();
    assert_eq!(ring.kids().collect::<Vec<_>>(), ["k2", "k1"]);
    let (now, _) = sealer_with(ring, Protection::Aes256Gcm);
    assert_eq!(open_default(&now, &in_flight).unwrap(), body());
    let fresh = seal_default(&now);
    assert!(fresh.starts_with("mts3.k2."), "{fresh}");
    assert!(open_default(&now, &fresh).is_ok());
    // The old deployment does not know k2 yet.
    assert!(matches!(
        open_default(&old, &fresh),
        Err(SealError::UnknownKey { .. })
    ));
    // Tomorrow: k1 retired.
    let ring = Keyring::new("k2", key(2))
        .unwrap()
        .add_previous("k1", key(1))
        .unwrap()
        .retire("k1")
        .unwrap();
    assert_eq!(ring.kids().collect::<Vec<_>>(), ["k2"]);
    let (later, _) = sealer_with(ring, Protection::Aes256Gcm);
    assert_eq!(
        open_default(&later, &in_flight).unwrap_err(),
        SealError::RetiredKey { kid: "k1".into() }
    );
    assert!(open_default(&later, &fresh).is_ok());
}

#[test]
fn debug_never_prints_keys() {
    let secret = vec![0xA7u8; 40];
    let ring = Keyring::new("k2", secret.clone())
        .unwrap()
        .add_previous("k1", vec![0x5Cu8; 32])
        .unwrap();
    let s = Sealer::new(ring, SealConfig::default());
    let dbg = format!("{s:?} {:?} {s:#?}", s.keyring());
    assert!(dbg.contains("k2") && dbg.contains("k1"), "{dbg}");
    // Neither key's bytes, in any of Debug's spellings, appear.
    for needle in ["167", "a7", "A7", "92", "5c", "5C", "0x"] {
        assert!(!dbg.contains(needle), "{needle} in {dbg}");
    }
    drop(secret);
}

// ---------------------------------------------------------------- size

#[test]
fn oversize_is_refused_on_seal_and_open() {
    let clock = Arc::new(ManualClock::new(T0));
    let small = Sealer::new(
        Keyring::new("k1", key(1)).unwrap(),
        SealConfig::default().with_max_len(300),
    )
    .with_clock(clock.clone());
    let big =
        Sealer::new(Keyring::new("k1", key(1)).unwrap(), SealConfig::default()).with_clock(clock);
    let alice = Principal::named("alice");
    let a = args();
    let b = Binding::new(&alice, "tools/call", "get_weather", &a);
    let huge = StateBody {
        round: 1,
        layout: "v".into(),
        payload: json!(incompressible(400)),
    };
    assert!(matches!(
        small.seal(&b, &huge, None),
        Err(SealError::Oversize { max: 300, .. })
    ));
    let t = big.seal(&b, &huge, None).unwrap();
    assert!(t.len() > 300);
    assert_eq!(
        small.open(&b, &t).unwrap_err(),
        SealError::Oversize {
            len: t.len(),
            max: 300
        }
    );
    // The default cap: 64 KiB, checked before anything is decoded.
    let junk = format!("mts3.k1.{}", "A".repeat(64 * 1024));
    assert!(matches!(
        big.open(&b, &junk),
        Err(SealError::Oversize { max: 65536, .. })
    ));
    let payload = json!(incompressible(64 * 1024));
    assert!(matches!(
        big.seal(
            &b,
            &StateBody {
                round: 1,
                layout: "v".into(),
                payload
            },
            None
        ),
        Err(SealError::Oversize { .. })
    ));
    // Right at the cap seals and opens.
    let exact = Sealer::new(
        Keyring::new("k1", key(1)).unwrap(),
        SealConfig::default().with_max_len(t.len()),
    );
    let t2 = exact.seal(&b, &huge, None).unwrap();
    assert_eq!(t2.len(), t.len());
    assert!(exact.open(&b, &t2).is_ok());
}

// ---------------------------------------------------------------- garbage

#[test]
fn garbage_strings_are_rejected() {
    let (s, _) = sealer(Protection::Hmac);
    for g in [
        "",
        "mts3",
        "mts3.",
        "mts3..",
        "mts3.k1",
        "mts3.k1.",
        "mts3.k1.!!!!",
        "mts3.k1.AAAA",
        "mts3.k1.AAAA=",
        "mts3.k1.AA.AA",
        "mts3.k 1.AAAA",
        "mts3.ключ.AAAA",
        "MTS1.k1.AAAA",
        "null",
        "{\"state\":1}",
        "\u{0}\u{0}\u{0}",
        "🦀🦀🦀",
    ] {
        assert!(open_default(&s, g).is_err(), "{g:?}");
    }
    assert_eq!(
        open_default(&s, "mts1.k1.AAAA").unwrap_err(),
        SealError::Version
    );
    assert_eq!(
        open_default(&s, "mts10.k1.AAAA").unwrap_err(),
        SealError::Version
    );
    assert!(matches!(
        open_default(&s, "hello"),
        Err(SealError::Malformed(_))
    ));
}

#[test]
fn truncated_tokens_are_rejected() {
    for p in ALL {
        let (s, _) = sealer(p);
        let t = seal_default(&s);
        for n in 0..t.len() {
            assert!(open_default(&s, &t[..n]).is_err(), "{p:?} prefix {n}");
        }
        // And truncated bytes, well-encoded.
        let (head, bytes) = split(&t);
        for n in 0..bytes.len() {
            assert!(open_default(&s, &join(&head, &bytes[..n])).is_err());
        }
    }
}

#[test]
fn client_message_is_fixed() {
    assert_eq!(SealError::CLIENT_MESSAGE, "invalid requestState");
    assert!(
        SealError::KeyTooShort {
            kid: "k".into(),
            len: 1
        }
        .is_config_error()
    );
    assert!(!SealError::BadSignature.is_config_error());
}

// ---------------------------------------------------------------- digest

#[test]
fn arguments_in_another_key_order_give_the_same_digest_and_open() {
    let a: Value =
        serde_json::from_str(r#"{"city":"Paris","days":3,"units":{"temp":"C","wind":"km/h"}}"#)
            .unwrap();
    let b: Value = serde_json::from_str(
        r#"{ "units" : {"wind":"km/h","temp":"C"}, "days":3, "city":"Paris" }"#,
    )
    .unwrap();
    assert_eq!(args_digest(&a), args_digest(&b));
    assert_eq!(
        canonical_json(&b),
        r#"{"city":"Paris","days":3,"units":{"temp":"C","wind":"km/h"}}"#
    );
    let (s, _) = sealer(Protection::Hmac);
    let alice = Principal::named("alice");
    let t = s
        .seal(&Binding::new(&alice, "tools/call", "w", &a), &body(), None)
        .unwrap();
    assert!(
        s.open(&Binding::new(&alice, "tools/call", "w", &b), &t)
            .is_ok()
    );
    // Array order does matter.
    assert_ne!(args_digest(&json!([1, 2])), args_digest(&json!([2, 1])));
}

#[test]
fn canonical_json_escapes_and_sorts_by_bytes() {
    let v = json!({"b": "quote\" \n", "a": [true, null, 1.5], "B": {}, "é": 0});
    assert_eq!(
        canonical_json(&v),
        r#"{"B":{},"a":[true,null,1.5],"b":"quote\" \n","é":0}"#
    );
    // Structure is not confused with string content.
    assert_ne!(
        args_digest(&json!({"a": "b,\"c\":1"})),
        args_digest(&json!({"a": "b", "c": 1}))
    );
}

// ---------------------------------------------------------------- confidentiality

#[test]
fn aead_hides_the_payload() {
    let needle = "TOP-SECRET-payload-string-42";
    let alice = Principal::named("alice");
    let a = args();
    let b = Binding::new(&alice, "tools/call", "get_weather", &a);
    let secret_body = StateBody {
        round: 1,
        layout: "v1".into(),
        payload: json!({"state": needle}),
    };
    for p in ALL {
        let (s, _) = sealer(p);
        let t = s.seal(&b, &secret_body, None).unwrap();
        let (_, bytes) = split(&t);
        let visible = String::from_utf8_lossy(&bytes).contains(needle);
        assert_eq!(visible, !p.is_aead(), "{p:?}");
        assert!(!t.contains(needle));
        assert_eq!(s.open(&b, &t).unwrap(), secret_body);
    }
}

#[test]
fn hmac_payloads_are_compressed_when_shorter_aead_payloads_never() {
    let alice = Principal::named("alice");
    let a = args();
    let b = Binding::new(&alice, "tools/call", "get_weather", &a);
    let repetitive = StateBody {
        round: 1,
        layout: "v1".into(),
        payload: json!({"state": {"files": vec!["src/lib.rs"; 200]}, "pending": {}}),
    };
    let plain_len = serde_json::to_vec(&repetitive.payload).unwrap().len();
    for p in ALL {
        let (s, _) = sealer(p);
        let t = s.seal(&b, &repetitive, None).unwrap();
        let (_, bytes) = split(&t);
        if p.is_aead() {
            assert!(
                bytes.len() > plain_len,
                "{p:?}: AEAD states are not compressed"
            );
        } else {
            assert!(bytes.len() < plain_len / 4, "{p:?}: {} bytes", bytes.len());
        }
        assert_eq!(s.open(&b, &t).unwrap(), repetitive, "{p:?}");
        // Every byte of a compressed token is still covered by the tag.
        let (head, mut bytes) = split(&t);
        let mid = bytes.len() / 2;
        bytes[mid] ^= 1;
        assert!(s.open(&b, &join(&head, &bytes)).is_err(), "{p:?}");
    }
    // Compression off: the JSON is sealed as it is, and either kind of token opens.
    let (plain, clock) = sealer(Protection::Hmac);
    let off = Sealer::new(
        Keyring::new("k1", key(1)).unwrap(),
        SealConfig::default().with_compress(false),
    )
    .with_clock(clock);
    let t = off.seal(&b, &repetitive, None).unwrap();
    assert!(split(&t).1.len() > plain_len);
    assert_eq!(plain.open(&b, &t).unwrap(), repetitive);
    let compressed = plain.seal(&b, &repetitive, None).unwrap();
    assert_eq!(off.open(&b, &compressed).unwrap(), repetitive);
}

// ---------------------------------------------------------------- properties

#[test]
fn every_single_byte_change_is_rejected_exhaustively() {
    // Every position, every other byte value, HMAC mode.
    let (s, _) = sealer(Protection::Hmac);
    let t = seal_default(&s);
    let bytes = t.as_bytes();
    for pos in 0..bytes.len() {
        for v in 0..=255u8 {
            if v == bytes[pos] {
                continue;
            }
            let mut m = bytes.to_vec();
            m[pos] = v;
            let m = String::from_utf8_lossy(&m);
            assert!(open_default(&s, &m).is_err(), "pos {pos} byte {v}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_single_byte_change_is_rejected(
        which in 0usize..3,
        pos in any::<prop::sample::Index>(),
        delta in 1u8..=255,
        round in any::<u32>(),
        layout in "[a-z0-9:{}]{0,16}",
        text in ".{0,40}",
    ) {
        let (s, _) = sealer(ALL[which]);
        let alice = Principal::named("alice");
        let a = args();
        let b = Binding::new(&alice, "tools/call", "get_weather", &a);
        let body = StateBody { round, layout, payload: json!({"text": text}) };
        let t = s.seal(&b, &body, None).unwrap();
        prop_assert_eq!(s.open(&b, &t).unwrap(), body);
        let mut m = t.into_bytes();
        let i = pos.index(m.len());
        m[i] = m[i].wrapping_add(delta);
        let m = String::from_utf8_lossy(&m);
        prop_assert!(s.open(&b, &m).is_err());
    }

    #[test]
    fn arbitrary_input_never_panics(junk in ".{0,300}", tail in "[A-Za-z0-9_-]{0,200}") {
        let (s, _) = sealer(Protection::Hmac);
        prop_assert!(open_default(&s, &junk).is_err());
        let (aead, _) = sealer(Protection::ChaCha20Poly1305);
        for candidate in [
            format!("mts3.k1.{tail}"),
            format!("mts3.k1.{junk}"),
            format!("mts3.{junk}"),
            format!("mts3.{tail}.{tail}"),
        ] {
            prop_assert!(open_default(&s, &candidate).is_err());
            prop_assert!(open_default(&aead, &candidate).is_err());
        }
    }

    #[test]
    fn arbitrary_bytes_behind_a_valid_head_never_open(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        for p in ALL {
            let (s, _) = sealer(p);
            prop_assert!(open_default(&s, &join("mts3.k1.", &bytes)).is_err());
        }
    }

    #[test]
    fn digest_ignores_key_order(entries in prop::collection::btree_map("[a-z]{1,6}", any::<i64>(), 0..12)) {
        // Build the same object inserting keys forwards and backwards (matters when
        // serde_json's `preserve_order` is unified in), and as text in both orders.
        let forward: serde_json::Map<String, Value> =
            entries.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        let backward: serde_json::Map<String, Value> =
            entries.iter().rev().map(|(k, v)| (k.clone(), json!(v))).collect();
        let text_rev = format!(
            "{{{}}}",
            entries.iter().rev().map(|(k, v)| format!("\"{k}\":{v}")).collect::<Vec<_>>().join(",")
        );
        let parsed: Value = serde_json::from_str(&text_rev).unwrap();
        let d = args_digest(&json!({"o": forward}));
        prop_assert_eq!(d, args_digest(&json!({"o": backward})));
        prop_assert_eq!(d, args_digest(&json!({"o": parsed})));
    }
}

/// The format is stable across builds: a replica of another build opens what this one seals
/// (a rolling deployment). With fixed key, clock, binding and body, HMAC sealing is
/// deterministic and gives this exact token; the AEAD tokens (random salt and nonce) sealed
/// from the same inputs still open to the same body, and fail for another binding.
#[test]
fn tokens_of_fixed_inputs_are_the_same_in_every_build() {
    let (hmac, _) = sealer(Protection::Hmac);
    assert_eq!(
        seal_default(&hmac),
        "mts3.k1.a0nSAGtJ1FgCHmdldF93ZWF0aGVyQHYxOlMxe2NpdHk6U3RyaW5nfXsiam91cm5hbCI6e30sInBlbmRpbmciOnt9LCJzdGF0ZSI6eyJjaXR5IjoiUGFyaXMiLCJzdGFnZSI6MX19ko_IgbpoVBUzc5JY8Bbisw"
    );
    for (protection, token) in [
        (
            Protection::Hmac,
            "mts3.k1.a0nSAGtJ1FgCHmdldF93ZWF0aGVyQHYxOlMxe2NpdHk6U3RyaW5nfXsiam91cm5hbCI6e30sInBlbmRpbmciOnt9LCJzdGF0ZSI6eyJjaXR5IjoiUGFyaXMiLCJzdGFnZSI6MX19ko_IgbpoVBUzc5JY8Bbisw",
        ),
        (
            Protection::Aes256Gcm,
            "mts3.k1.LjDl5jiYST4IiJaevGNegTUjLzj8aTesA5kBD8nlloXuhpTGhfSq-xAb8sebaI4I9PYQUejPfI10YPYgPExTtRTB-tfYIt1AqOvgI726lm8uz9VRHlZN4OpPZCzbxVKKTfdlhKgpVsMPDwCN0ZBgi-jRPDUIw3bysTXbPbIZRPNgP43x71-18ByVhZjEMXYJFWQ",
        ),
        (
            Protection::ChaCha20Poly1305,
            "mts3.k1.TW4yNsryTvXmC8i_Nm7BQWS4BPx-QZi0iEQ9AqXZt9dEF61Y3wxUGgdgMT9Wufe-C3lh3LrmgvmA0NKS8Z6vXFX49jyIMgtbNqWad3BjngocAbYvQzN7HJFkHaQ7a9X0w6aj1lXXXm52SeS0i4pYj5AkeBUaTFS5Y--990PIycaKLTnYa76ag4p6juBtCQyugvc",
        ),
    ] {
        let (s, _) = sealer(protection);
        assert_eq!(
            open_default(&s, token).expect("opens"),
            body(),
            "{protection:?}"
        );
        let bob = Principal::named("bob");
        let a = args();
        let other = Binding::new(&bob, "tools/call", "get_weather", &a);
        assert!(s.open(&other, token).is_err(), "{protection:?}");
    }
}
