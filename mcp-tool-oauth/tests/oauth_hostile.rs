//! The hostile-token catalogue of docs/SECURITY.md (the `OAuthResourceServer` rows), one test
//! (or more) per entry, against an [`OAuthResourceServer`] behind the real HTTP transport and
//! a small authorization server on loopback (metadata, JWKS, introspection) whose keys are
//! made here. Every refusal must carry the documented status, a fixed challenge and a fixed
//! message: nothing of the token (claims, `kid`) and nothing about which check failed.

mod oauth_support;

use std::time::{Duration, Instant};

use mcp_tool_oauth::SigningAlgorithm;
use mcp_tool_runtime::transport::auth::Authenticator;
use oauth_support::*;
use serde_json::json;

fn refused(r: &Reply, error: &str, message: &str) {
    assert_eq!(r.status, 401, "{}", r.text);
    assert_eq!(r.challenge.as_deref(), Some(&*challenge(Some(error))));
    assert_eq!(r.message(), message);
    assert_no_leak(r);
}

fn invalid(r: &Reply) {
    refused(r, "invalid_token", "unauthorized: invalid token");
}

fn unavailable(r: &Reply) {
    assert_eq!(r.status, 503, "{}", r.text);
    assert_eq!(r.challenge, None);
    assert_eq!(
        r.message(),
        "unavailable: token verification temporarily unavailable"
    );
    assert_no_leak(r);
}

#[tokio::test]
async fn a_valid_token_reaches_the_tool_which_sees_issuer_subject_and_scopes() {
    let t = Setup::new(|c| c).await;
    let ed = Signer::ed25519("ed-1");
    let rsa = Signer::rsa("rsa-1", jsonwebtoken::Algorithm::RS256);
    t.idp.set_keys(&[&t.key, &ed, &rsa]);
    let r = t.call(&t.token(&t.claims())).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let who = r.json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        who,
        format!(
            "iss={} sub=alice client=client-1 scopes=notes:read,notes:write",
            t.idp.issuer
        )
    );
    // Ed25519 too, with `scp` and `azp` in place of `scope` and `client_id`.
    let mut claims = t.claims();
    let c = claims.as_object_mut().unwrap();
    c.remove("scope");
    c.remove("client_id");
    c.insert("scp".into(), json!(["a"]));
    c.insert("azp".into(), json!("client-2"));
    let r = t.call(&ed.sign(&claims)).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.text.contains("sub=alice client=client-2 scopes=a"),
        "{}",
        r.text
    );
    // RS256, the most common; the same RSA key under PS256 is refused, since its JWK
    // declares RS256.
    assert_eq!(t.call(&rsa.sign(&t.claims())).await.status, 200);
    let pss = Signer::rsa("rsa-1", jsonwebtoken::Algorithm::PS256);
    invalid(&t.call(&pss.sign(&t.claims())).await);
}

#[tokio::test]
async fn no_token_is_a_401_pointing_to_the_metadata_which_is_served_publicly() {
    let t = Setup::new(|c| c).await;
    let r = t.call_with(&[]).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.challenge.as_deref(), Some(&*challenge(None)));
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let doc: serde_json::Value = reqwest::get(format!("{}{path}", t.base()))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            doc,
            json!({"resource": RESOURCE, "authorization_servers": [t.idp.issuer],
                   "scopes_supported": ["notes:read", "notes:write"],
                   "bearer_methods_supported": ["header"]})
        );
    }
    let e = t.auth.insufficient_scope(&["notes:write"]);
    assert_eq!(e.status.code(), 403);
    assert_eq!(
        e.challenge,
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"notes:write\", resource_metadata=\"{METADATA}\""
        )
    );
}

// 1. expired; 2. not yet valid (both within and beyond the 60 s leeway)
#[tokio::test]
async fn expired_and_not_yet_valid_tokens_are_refused_beyond_the_leeway() {
    let t = Setup::new(|c| c).await;
    let now = now();
    for (name, value, ok) in [
        ("exp", now - 3600, false),
        ("exp", now - 30, true),
        ("nbf", now + 3600, false),
        ("nbf", now + 30, true),
        ("exp", -1, false),
    ] {
        let mut claims = t.claims();
        claims[name] = json!(value);
        let r = t.call(&t.token(&claims)).await;
        if ok {
            assert_eq!(r.status, 200, "{name}={value}: {}", r.text);
        } else {
            invalid(&r);
        }
    }
}

// 3. wrong iss; 4. wrong aud; 5. claims of the wrong type or missing
#[tokio::test]
async fn wrong_issuer_audience_or_mistyped_claims_are_refused() {
    let t = Setup::new(|c| c).await;
    let issuer = t.idp.issuer.clone();
    for (name, value) in [
        ("iss", json!("https://evil.example")),
        ("iss", json!(format!("{issuer}/"))),
        ("iss", json!([issuer])),
        ("aud", json!("http://localhost/other")),
        ("aud", json!(["http://localhost/other", "client-1"])),
        ("aud", json!(null)),
        ("exp", json!("never")),
        ("nbf", json!("99999999999")),
        ("sub", json!(42)),
    ] {
        let mut claims = t.claims();
        claims[name] = value.clone();
        invalid(&t.call(&t.token(&claims)).await);
    }
    for name in ["iss", "aud", "exp", "sub"] {
        let mut claims = t.claims();
        claims.as_object_mut().unwrap().remove(name);
        invalid(&t.call(&t.token(&claims)).await);
    }
    // The audience as an array, and with the scheme and host upper-case (RFC 8707 canonical form).
    for aud in [json!(["x", RESOURCE]), json!("HTTP://LOCALHOST/mcp")] {
        let mut claims = t.claims();
        claims["aud"] = aud;
        assert_eq!(t.call(&t.token(&claims)).await.status, 200);
    }
}

// 6. unknown kid (and the refetch it causes is rate-limited)
#[tokio::test]
async fn an_unknown_kid_is_refused_and_refetches_at_most_once_per_interval() {
    let t =
        Setup::new(|c| c.jwks_refresh(Duration::from_secs(3600), Duration::from_secs(3600))).await;
    assert_eq!(t.call(&t.token(&t.claims())).await.status, 200);
    let fetched = t.idp.jwks_fetches();
    for n in 0..20 {
        let stranger = Signer::es256(&format!("unknown-{n}"));
        invalid(&t.call(&stranger.sign(&t.claims())).await);
    }
    assert!(
        t.idp.jwks_fetches() <= fetched + 1,
        "the JWKS was fetched {} times",
        t.idp.jwks_fetches()
    );
}

// 7. alg none; 8. HS256 with the public key as the secret; 9. a foreign key's signature
#[tokio::test]
async fn alg_none_hmac_with_the_public_key_and_foreign_signatures_are_refused() {
    let t = Setup::new(|c| c).await;
    let claims = t.claims();
    let body = b64(&claims.to_string());
    for alg in ["none", "None", "HS256"] {
        let header = b64(&json!({"alg": alg, "kid": t.key.kid}).to_string());
        invalid(&t.call(&format!("{header}.{body}.")).await);
        invalid(&t.call(&format!("{header}.{body}.AAAA")).await);
    }
    for secret in [t.key.public.clone(), t.key.jwk().to_string().into_bytes()] {
        let forged = hmac_token(&t.key.kid, &claims, &secret);
        invalid(&t.call(&forged).await);
    }
    let foreign = Signer::es256(&t.key.kid);
    invalid(&t.call(&foreign.sign(&claims)).await);
    // A valid signature with the header's alg swapped to another allowed one.
    let good = t.token(&claims);
    let rest = good.split_once('.').unwrap().1;
    let swapped = b64(&json!({"alg": "ES384", "kid": t.key.kid}).to_string());
    invalid(&t.call(&format!("{swapped}.{rest}")).await);
    // An algorithm allow-list without ES256 refuses an otherwise valid ES256 token.
    let strict = Setup::new(|c| c.algorithms([SigningAlgorithm::EdDSA])).await;
    invalid(&strict.call(&strict.token(&strict.claims())).await);
}

// 10. malformed base64 or JSON; 11. oversized; 12. token in the query
#[tokio::test]
async fn malformed_oversized_and_query_tokens_are_refused() {
    let t = Setup::new(|c| c.max_token_bytes(4096)).await;
    let good = t.token(&t.claims());
    let (header, rest) = good.split_once('.').unwrap();
    let (payload, sig) = rest.split_once('.').unwrap();
    let signed_garbage = t.key.sign_raw(&format!("{header}.{}", b64("not json")));
    for token in [
        format!("{header}.{payload}"),
        format!("{header}!.{payload}.{sig}"),
        format!("{}.{payload}.{sig}", b64("{\"alg\":")),
        format!("{header}.{}.{sig}", b64("[1,2]")),
        format!("{header}.{payload}.{sig}{sig}"),
        format!("{header}.{}.{signed_garbage}", b64("not json")),
        "opaque-token-without-introspection".to_owned(),
        format!("{header}.{payload}.{}", "A".repeat(5000)),
    ] {
        invalid(&t.call(&token).await);
    }
    let fetched = t.idp.jwks_fetches();
    invalid(&t.call(&format!("{good}.{}", "x".repeat(8000))).await);
    assert_eq!(
        t.idp.jwks_fetches(),
        fetched,
        "an oversized token is refused unread"
    );
    let r = t
        .post(&format!("{}/mcp?access_token={good}", t.base()), &[])
        .await;
    refused(&r, "invalid_request", "unauthorized: invalid request");
    for header in ["Basic YTpi", "Bearer", "Bearer  "] {
        let r = t.call_with(&[("authorization", header)]).await;
        refused(&r, "invalid_request", "unauthorized: invalid request");
    }
    invalid(&t.call("a b").await);
}

// 13. JWKS slow; 14. JWKS huge; 15. JWKS down (a known key keeps verifying)
#[tokio::test]
async fn a_slow_huge_or_down_jwks_is_a_503_and_known_keys_outlive_an_outage() {
    for mode in [JwksMode::Slow, JwksMode::Huge, JwksMode::Down] {
        let t = Setup::new(|c| {
            c.http_timeout(Duration::from_millis(500))
                .max_document_bytes(64 * 1024)
        })
        .await;
        t.idp.set_mode(mode);
        let started = Instant::now();
        unavailable(&t.call(&t.token(&t.claims())).await);
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{mode:?} took {:?}",
            started.elapsed()
        );
    }
    let t = Setup::new(|c| c.jwks_refresh(Duration::ZERO, Duration::ZERO)).await;
    assert_eq!(t.call(&t.token(&t.claims())).await.status, 200);
    t.idp.set_mode(JwksMode::Down);
    assert_eq!(
        t.call(&t.token(&t.claims())).await.status,
        200,
        "stale keys serve during an outage"
    );
    let stranger = Signer::es256("new");
    unavailable(&t.call(&stranger.sign(&t.claims())).await);
}

// 16. key rotation without a restart (and a removed key stops verifying)
#[tokio::test]
async fn a_rotated_key_is_picked_up_without_a_restart() {
    let t =
        Setup::new(|c| c.jwks_refresh(Duration::from_millis(200), Duration::from_secs(1))).await;
    assert_eq!(t.call(&t.token(&t.claims())).await.status, 200);
    let next = Signer::es256("k2");
    tokio::time::sleep(Duration::from_millis(250)).await;
    invalid(&t.call(&next.sign(&t.claims())).await);
    t.idp.set_keys(&[&next]);
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(t.call(&next.sign(&t.claims())).await.status, 200);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    invalid(&t.call(&t.token(&t.claims())).await);
}

// 17–21. introspection: inactive, another audience, a lying or incomplete answer, down
#[tokio::test]
async fn introspection_answers_must_be_active_and_consistent() {
    let t = Setup::introspecting().await;
    let good = t.claims_with_active(json!(true));
    t.idp.answer("good", good.clone());
    let r = t.call("good").await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.contains("sub=alice client=client-1"), "{}", r.text);
    let asked = t.idp.introspections();
    assert_eq!(t.call("good").await.status, 200);
    assert_eq!(t.idp.introspections(), asked, "the answer is cached");
    let mut cases = vec![
        ("inactive", t.claims_with_active(json!(false))),
        ("string", t.claims_with_active(json!("true"))),
        ("number", t.claims_with_active(json!(1))),
        ("bare", json!({"active": true})),
    ];
    for (name, value) in [
        ("aud", json!("http://localhost/other")),
        ("iss", json!("https://evil.example")),
        ("exp", json!(now() - 3600)),
    ] {
        let mut c = good.clone();
        c[name] = value;
        cases.push((name, c));
    }
    for name in ["aud", "iss", "exp", "sub"] {
        let mut c = good.clone();
        c.as_object_mut().unwrap().remove(name);
        cases.push((name, c));
    }
    for (n, (_, answer)) in cases.into_iter().enumerate() {
        let token = format!("opaque-{n}");
        t.idp.answer(&token, answer);
        invalid(&t.call(&token).await);
    }
    invalid(&t.call("never-issued").await);
    t.idp.set_introspection_down(true);
    unavailable(&t.call("opaque-while-down").await);
}

/// A refused opaque token is refused again from the cache, without another introspection
/// call, for the refusal's short time; then it is asked again. An accepted token is not
/// affected.
#[tokio::test]
async fn introspection_refusals_are_cached_briefly() {
    let t =
        Setup::introspecting_with(|c| c.introspection_refusals(Duration::from_millis(600))).await;
    t.idp.answer("inactive", t.claims_with_active(json!(false)));
    invalid(&t.call("inactive").await);
    invalid(&t.call("never-issued").await);
    let asked = t.idp.introspections();
    for _ in 0..20 {
        invalid(&t.call("inactive").await);
        invalid(&t.call("never-issued").await);
    }
    assert_eq!(t.idp.introspections(), asked, "refusals are cached");
    tokio::time::sleep(Duration::from_millis(700)).await;
    // past the refusal's time the token is asked about again (and may have become valid)
    t.idp.answer("inactive", t.claims_with_active(json!(true)));
    assert_eq!(t.call("inactive").await.status, 200);
    assert_eq!(t.idp.introspections(), asked + 1);
}

/// A flood of distinct opaque tokens: the authorization server never sees more than the
/// cap of introspection calls at once; every token is answered (refused, 401, or busy,
/// 503), and a valid token still gets through afterwards.
#[tokio::test]
async fn introspection_calls_are_capped() {
    let t = Setup::introspecting_with(|c| c.max_concurrent_introspections(4)).await;
    t.idp.set_introspection_delay(Duration::from_millis(200));
    let t = std::sync::Arc::new(t);
    let flood: Vec<_> = (0..48)
        .map(|n| {
            let t = t.clone();
            tokio::spawn(async move { t.call(&format!("flood-{n}")).await.status })
        })
        .collect();
    for f in flood {
        let status = f.await.unwrap();
        assert!(status == 401 || status == 503, "{status}");
    }
    assert!(
        t.idp.introspecting_peak() <= 4,
        "{} introspections at once",
        t.idp.introspecting_peak()
    );
    t.idp.set_introspection_delay(Duration::ZERO);
    t.idp.answer("good", t.claims_with_active(json!(true)));
    assert_eq!(t.call("good").await.status, 200);
}

/// Nothing panics, whatever arrives: random tokens of JWS shape and not.
#[tokio::test]
async fn random_tokens_never_panic() {
    let t = Setup::new(|c| c).await;
    let parts = |token: &str| {
        axum::http::Request::builder()
            .header("authorization", format!("Bearer {token}"))
            .body(())
            .unwrap()
            .into_parts()
            .0
    };
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let alphabet = b"ABCxyz019-_.=+/ {}\":,";
    for _ in 0..2000 {
        let len = (next() % 64) as usize;
        let token: String = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char)
            .collect();
        let _ = t.auth.authenticate(&parts(token.trim())).await;
        let header = b64(&token);
        let _ = t
            .auth
            .authenticate(&parts(&format!("{header}.{header}.{header}")))
            .await;
    }
}
