//! Fuzz targets for the transport's header parsing (`check_headers`, the `Mcp-Param-*`
//! checks, the Base64 sentinel codec, `Accept` and `Origin` parsing). Budget:
//! `MCP_FUZZ_CASES` (scripts/fuzz.sh), else small defaults.

use std::collections::HashMap;

use axum::http::header::ACCEPT;
use axum::http::{HeaderMap, HeaderValue};
use serde_json::Value;

use super::config::*;
use super::header_checks::*;
use super::respond::*;
use crate::protocol::META_PROTOCOL_VERSION;
use crate::protocol::headers::*;
use crate::protocol::headers::{HeaderParam, header_params, param_headers};
use crate::protocol::text::MessageIn;
use proptest::prelude::*;
use serde_json::json;

/// The runner and budget the integration tests' fuzz targets use.
#[path = "../../../tests/fuzz_support/mod.rs"]
mod fuzz_support;

fn header_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("2026-07-28".to_owned()),
        Just("tools/call".to_owned()),
        Just("echo".to_owned()),
        "=\\?base64\\?[A-Za-z0-9+/=!]{0,12}\\?=",
        "[ -~]{0,16}",
        ".{0,8}",
    ]
}

fn headers() -> impl Strategy<Value = Vec<(String, String)>> {
    let name = prop_oneof![
        Just(PROTOCOL_VERSION_HEADER.to_owned()),
        Just(METHOD_HEADER.to_owned()),
        Just(NAME_HEADER.to_owned()),
        Just("mcp-param-region".to_owned()),
        Just("mcp-param-n".to_owned()),
        Just("accept".to_owned()),
        Just("origin".to_owned()),
        "[a-z-]{1,12}",
    ];
    prop::collection::vec((name, header_text()), 0..8)
}

fn header_map(pairs: &[(String, String)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (k, v) in pairs {
        if let (Ok(k), Ok(v)) = (
            axum::http::HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_bytes(v.as_bytes()),
        ) {
            map.append(k, v);
        }
    }
    map
}

fn schema_params() -> Vec<HeaderParam> {
    let schema = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "n": {"type": "integer", "x-mcp-header": "N"},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"}}});
    header_params(schema.as_object().expect("object")).expect("valid")
}

fn body() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,10}".prop_map(Value::String),
        Just(json!("2026-07-28")),
        Just(json!("echo")),
    ];
    (
        prop_oneof![
            Just("tools/call"),
            Just("tools/list"),
            Just("resources/read")
        ],
        scalar.clone(),
        scalar.clone(),
        scalar.clone(),
        scalar,
    )
        .prop_map(|(method, version, name, region, n)| {
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {
                "name": name, "uri": name,
                "arguments": {"region": region, "n": n},
                "_meta": {META_PROTOCOL_VERSION: version}}})
        })
}

/// Arbitrary headers against arbitrary bodies: never a panic; an `Ok` means the
/// mirrored headers really agree with the body.
#[test]
fn fuzz_check_headers() {
    let mut params = HashMap::new();
    params.insert("echo".to_owned(), schema_params());
    fuzz_support::fuzz(
        "http_check_headers",
        3000,
        (headers(), body()),
        |(pairs, body)| {
            let map = header_map(&pairs);
            let text = body.to_string();
            let message = MessageIn::parse(&text).expect("an object");
            let method = body["method"].as_str().expect("method");
            let checked = check_headers(&map, message.fields(), method, &|t: &str| {
                params.get(t).cloned()
            });
            if checked.is_ok() {
                let hm = map.get(METHOD_HEADER).and_then(|v| v.to_str().ok());
                prop_assert_eq!(hm, Some(method));
                prop_assert!(map.contains_key(PROTOCOL_VERSION_HEADER));
            }
            Ok(())
        },
    );
}

/// Headers built the way the client builds them always pass.
#[test]
fn fuzz_consistent_headers_pass() {
    let list = schema_params();
    let mut params = HashMap::new();
    params.insert("echo".to_owned(), list.clone());
    fuzz_support::fuzz(
        "http_consistent_headers",
        2000,
        (".{0,20}", any::<i32>(), any::<bool>()),
        |(region, n, flag)| {
            let args = json!({"region": region, "n": n, "flag": flag});
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "echo", "arguments": args,
                "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}});
            let mut pairs = vec![
                (PROTOCOL_VERSION_HEADER.to_owned(), "2026-07-28".to_owned()),
                (METHOD_HEADER.to_owned(), "tools/call".to_owned()),
                (NAME_HEADER.to_owned(), encode_header_value("echo")),
            ];
            pairs.extend(param_headers(&list, &args));
            let map = header_map(&pairs);
            let text = body.to_string();
            let message = MessageIn::parse(&text).expect("an object");
            let r = check_headers(&map, message.fields(), "tools/call", &|t: &str| {
                params.get(t).cloned()
            });
            prop_assert!(r.is_ok(), "{:?}", r);
            Ok(())
        },
    );
}

/// The sentinel codec round-trips any text, and decoding arbitrary text never panics.
#[test]
fn fuzz_header_value_codec() {
    fuzz_support::fuzz(
        "http_header_codec",
        5000,
        (".{0,40}", header_text()),
        |(text, raw)| {
            let encoded = encode_header_value(&text);
            prop_assert!(HeaderValue::from_str(&encoded).is_ok(), "{encoded:?}");
            prop_assert_eq!(decode_header_value(&encoded).expect("decodes"), text);
            let _ = decode_header_value(&raw);
            Ok(())
        },
    );
}

/// `Accept` and `Origin` parsing never panic; only http(s) localhost origins pass the
/// localhost rule.
#[test]
fn fuzz_accept_and_origin() {
    fuzz_support::fuzz(
        "http_accept_origin",
        5000,
        (".{0,60}", ".{0,40}"),
        |(accept, origin)| {
            let mut map = HeaderMap::new();
            if let Ok(v) = HeaderValue::from_str(&accept) {
                map.insert(ACCEPT, v);
            }
            let _ = accepts_sse(&map);
            if is_localhost_origin(&origin) {
                let lower = origin.to_ascii_lowercase();
                prop_assert!(lower.starts_with("http://") || lower.starts_with("https://"));
            }
            prop_assert!(
                !OriginPolicy::only(["https://app.example"]).allows(&origin)
                    || origin
                        .trim()
                        .trim_end_matches('/')
                        .eq_ignore_ascii_case("https://app.example")
            );
            Ok(())
        },
    );
}

/// `x-mcp-header` annotations of any shape: registration-time parsing never panics.
#[test]
fn fuzz_header_param_schemas() {
    let value = prop_oneof![
        Just(json!("Region")),
        Just(json!({"type": "string", "x-mcp-header": "X"})),
        Just(json!({"type": "integer", "x-mcp-header": "X"})),
        Just(
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}}})
        ),
        ".{0,8}".prop_map(Value::String),
        any::<i64>().prop_map(Value::from),
    ];
    let props = prop::collection::btree_map("[a-z]{1,4}", value, 0..5);
    fuzz_support::fuzz("http_param_schemas", 3000, props, |props| {
        let schema = json!({"type": "object", "properties": props});
        if let Ok(list) = header_params(schema.as_object().expect("object")) {
            let _ = param_headers(&list, &json!({"a": "x", "b": 1}));
        }
        Ok(())
    });
}
