//! Sealing for fleets (issue 11): per-token AEAD keys, the deployment context, the maximum
//! TTL and the tolerated clock skew, old-format tokens failing closed.

use mcp_tool_runtime::manual::Reentrant;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_tool_runtime::Principal;
use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::protocol::{CallToolResult, Capability, Implementation};
use mcp_tool_runtime::requests::Ask;
use mcp_tool_runtime::seal::{
    Binding, Keyring, ManualClock, Protection, SealConfig, SealError, Sealer, StateBody,
};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::{
    Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step},
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

mod support;

const T0: u64 = 1_800_000_000;

fn sealer_at(config: SealConfig, t: u64) -> (Sealer, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(t));
    let s =
        Sealer::new(Keyring::new("k1", vec![9u8; 32]).unwrap(), config).with_clock(clock.clone());
    (s, clock)
}

fn body() -> StateBody {
    StateBody {
        round: 1,
        layout: "l".into(),
        payload: json!({"state": 1}),
    }
}

fn with_binding<T>(f: impl FnOnce(&Binding<'_>) -> T) -> T {
    let p = Principal::named("alice");
    let args = json!({"x": 1});
    f(&Binding::new(&p, "tools/call", "t", &args))
}

#[test]
fn aead_tokens_carry_a_fresh_salt_and_nonce_each() {
    for p in [Protection::Aes256Gcm, Protection::ChaCha20Poly1305] {
        let (s, _) = sealer_at(SealConfig::default().with_protection(p), T0);
        let mut heads = HashSet::new();
        let mut salts = HashSet::new();
        let plain_len = with_binding(|b| {
            let hmac = Sealer::new(
                Keyring::new("k1", vec![9u8; 32]).unwrap(),
                SealConfig::default(),
            )
            .with_clock(Arc::new(ManualClock::new(T0)));
            let t = hmac.seal(b, &body(), None).unwrap();
            URL_SAFE_NO_PAD
                .decode(t.rsplit('.').next().unwrap())
                .unwrap()
                .len()
                - 16 // the HMAC tag, truncated to 128 bits
        });
        for _ in 0..500 {
            let t = with_binding(|b| s.seal(b, &body(), None).unwrap());
            let bytes = URL_SAFE_NO_PAD
                .decode(t.rsplit('.').next().unwrap())
                .unwrap();
            // salt[16] || nonce[12] || ciphertext || tag[16]
            assert_eq!(bytes.len(), 16 + 12 + plain_len + 16, "{p:?}");
            salts.insert(bytes[..16].to_vec());
            heads.insert(bytes[..28].to_vec());
            assert_eq!(with_binding(|b| s.open(b, &t)).unwrap(), body());
        }
        assert_eq!(salts.len(), 500, "{p:?}: every token has its own salt");
        assert_eq!(heads.len(), 500);
    }
}

#[test]
fn an_aead_token_with_its_salt_changed_does_not_open() {
    for p in [Protection::Aes256Gcm, Protection::ChaCha20Poly1305] {
        let (s, _) = sealer_at(SealConfig::default().with_protection(p), T0);
        let t = with_binding(|b| s.seal(b, &body(), None).unwrap());
        let (head, data) = t.rsplit_once('.').unwrap();
        let mut bytes = URL_SAFE_NO_PAD.decode(data).unwrap();
        bytes[3] ^= 0x01;
        let forged = format!("{head}.{}", URL_SAFE_NO_PAD.encode(&bytes));
        assert_eq!(
            with_binding(|b| s.open(b, &forged)).unwrap_err(),
            SealError::BadSignature
        );
    }
}

#[test]
fn the_deployment_context_is_bound() {
    for p in [
        Protection::Hmac,
        Protection::Aes256Gcm,
        Protection::ChaCha20Poly1305,
    ] {
        let cfg = SealConfig::default().with_protection(p);
        let (billing, _) = sealer_at(cfg.clone().with_context("billing"), T0);
        let (search, _) = sealer_at(cfg.clone().with_context("search"), T0);
        let (none, _) = sealer_at(cfg.clone(), T0);
        let t = with_binding(|b| billing.seal(b, &body(), None).unwrap());
        assert!(with_binding(|b| billing.open(b, &t)).is_ok());
        assert_eq!(
            with_binding(|b| search.open(b, &t)).unwrap_err(),
            SealError::BadSignature,
            "{p:?}"
        );
        assert_eq!(
            with_binding(|b| none.open(b, &t)).unwrap_err(),
            SealError::BadSignature
        );
        assert_eq!(billing.context(), "billing");
        assert_eq!(none.context(), "");
    }
}

#[test]
fn a_ttl_above_the_maximum_is_cut_on_seal_and_refused_on_open() {
    let cfg = SealConfig::default().with_max_ttl(Duration::from_secs(3600));
    let (s, clock) = sealer_at(cfg, T0);
    let t = with_binding(|b| {
        s.seal(b, &body(), Some(Duration::from_secs(86_400)))
            .unwrap()
    });
    clock.set(T0 + 3599);
    assert!(with_binding(|b| s.open(b, &t)).is_ok());
    clock.set(T0 + 3600);
    assert!(matches!(
        with_binding(|b| s.open(b, &t)),
        Err(SealError::Expired { .. })
    ));

    // A replica configured with a longer maximum seals a day-long state; one with the
    // default maximum (1 hour) refuses it however young it is.
    let (lax, _) = sealer_at(
        SealConfig::default().with_max_ttl(Duration::from_secs(86_400)),
        T0,
    );
    let day = with_binding(|b| {
        lax.seal(b, &body(), Some(Duration::from_secs(86_400)))
            .unwrap()
    });
    let (strict, _) = sealer_at(SealConfig::default(), T0 + 1);
    assert_eq!(
        with_binding(|b| strict.open(b, &day)).unwrap_err(),
        SealError::TtlTooLong {
            ttl: 86_400,
            max: 3600
        }
    );
}

#[test]
fn clock_skew_between_replicas_is_tolerated_up_to_the_configured_bound() {
    // The sealing replica's clock runs 50 s (within the default 60 s) or 120 s ahead.
    let (ahead, _) = sealer_at(SealConfig::default(), T0 + 50);
    let (far_ahead, _) = sealer_at(SealConfig::default(), T0 + 120);
    let (opener, clock) = sealer_at(SealConfig::default(), T0);
    let t50 = with_binding(|b| ahead.seal(b, &body(), None).unwrap());
    let t120 = with_binding(|b| far_ahead.seal(b, &body(), None).unwrap());
    assert!(with_binding(|b| opener.open(b, &t50)).is_ok());
    assert_eq!(
        with_binding(|b| opener.open(b, &t120)).unwrap_err(),
        SealError::NotYetValid {
            issued_at: T0 + 120,
            now: T0
        }
    );
    // Once the opener's clock is within the skew of the issue time, it opens.
    clock.set(T0 + 60);
    assert!(with_binding(|b| opener.open(b, &t120)).is_ok());
    // A smaller tolerance refuses the 50 s skew.
    let (tight, _) = sealer_at(
        SealConfig::default().with_clock_skew(Duration::from_secs(10)),
        T0,
    );
    assert!(matches!(
        with_binding(|b| tight.open(b, &t50)),
        Err(SealError::NotYetValid { .. })
    ));
}

#[test]
fn tokens_of_the_previous_format_fail_closed_with_version() {
    let (s, _) = sealer_at(SealConfig::default(), T0);
    let t = with_binding(|b| s.seal(b, &body(), None).unwrap());
    assert!(t.starts_with("mts3.k1."));
    // The same bytes under the old prefix: the version is refused before any key is used.
    for prefix in ["mts1.", "mts2."] {
        let old = t.replacen("mts3.", prefix, 1);
        assert_eq!(
            with_binding(|b| s.open(b, &old)).unwrap_err(),
            SealError::Version
        );
    }
    assert_eq!(
        SealError::Version.to_string(),
        "unsupported requestState format version"
    );
}

// ------------------------------------------------------------------ through the server

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Name {
    name: String,
}

/// Asks once, then completes.
struct AskOnce;

impl Tool for AskOnce {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("ask_once").needs(Capability::Elicitation)
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        _args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            if state.is_none() {
                cx.request("who", Ask::<Name>::new("Who?").into_request()?)?;
                return Step::suspend(&json!(1));
            }
            let n: Name = cx.take_ask("who")?;
            Ok(Step::Complete(CallToolResult::text(n.name)))
        })
    }
}

fn service(name: &str, sealer: Sealer) -> Server {
    Server::builder(Implementation::new(name, "1"))
        .sealer(sealer)
        .tool(AskOnce)
        .build()
        .unwrap()
}

async fn first_state(s: &Server) -> String {
    let caps = json!({"elicitation": {}});
    let msg = support::request(
        1,
        "tools/call",
        support::call_params("ask_once", json!({}), support::meta(caps), json!({})),
    );
    let r = support::send_as(s, &Principal::anonymous(), msg).await;
    r.result_value().unwrap()["requestState"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn retry(s: &Server, state: &str) -> Value {
    let caps = json!({"elicitation": {}});
    let msg = support::request(
        2,
        "tools/call",
        support::call_params(
            "ask_once",
            json!({}),
            support::meta(caps),
            support::resume(
                state,
                json!({"who": {"action": "accept", "content": {"name": "Ada"}}}),
            ),
        ),
    );
    serde_json::to_value(support::send_as(s, &Principal::anonymous(), msg).await).unwrap()
}

/// Two services sharing a key and a tool name: by default each binds its own name, so
/// neither accepts the other's states; with one explicit context they do.
#[tokio::test]
async fn services_sharing_a_key_do_not_accept_each_others_states() {
    let billing = service("billing", support::sealer("k", 3));
    let search = service("search", support::sealer("k", 3));
    assert_eq!(billing.sealer().context(), "billing");
    let state = first_state(&billing).await;
    let own = retry(&billing, &state).await;
    assert_eq!(own["result"]["content"][0]["text"], "Ada", "{own}");
    let other = retry(&search, &state).await;
    assert_eq!(other["error"]["code"], -32602, "{other}");
    assert_eq!(other["error"]["message"], "invalid requestState");

    // Replicas of one deployment under different names share a context explicitly.
    let a = service("replica-a", support::sealer("k", 3).with_context("fleet"));
    let b = service("replica-b", support::sealer("k", 3).with_context("fleet"));
    let state = first_state(&a).await;
    let ok = retry(&b, &state).await;
    assert_eq!(ok["result"]["content"][0]["text"], "Ada", "{ok}");
}
