//! The checks a token's claims pass, whether they come from a verified JWT or from an
//! introspection answer (`iss`, `aud`, `exp`, `nbf`, `sub`, each of the right JSON type),
//! and the [`Principal`] built from them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use mcp_tool_runtime::Principal;
use mcp_tool_runtime::server::Identity;

use crate::config::same_audience;

/// Why a token was not accepted. The reason is for the debug log only: the client hears
/// "invalid token" (401) or "temporarily unavailable" (503), nothing more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The token does not verify: 401 `invalid_token`.
    Invalid(&'static str),
    /// The token could not be checked (keys or introspection unreachable): 503.
    Unavailable(&'static str),
}

/// What the claims must say.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Expected<'a> {
    pub(crate) issuer: &'a str,
    pub(crate) audience: &'a str,
    pub(crate) leeway: Duration,
}

/// Seconds since the Unix epoch, now.
pub(crate) fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A NumericDate claim (RFC 7519 §2): absent is `Ok(None)`; present but not a finite JSON
/// number is an error (never treated as absent).
fn numeric(claims: &Map<String, Value>, name: &'static str) -> Result<Option<f64>, Failure> {
    match claims.get(name) {
        None => Ok(None),
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|f| f.is_finite())
            .map(Some)
            .ok_or(Failure::Invalid("a time claim is not a number")),
        Some(_) => Err(Failure::Invalid("a time claim is not a number")),
    }
}

/// Checks `iss`, `aud`, `exp` (required), `nbf` (when present) and `sub` (a non-empty
/// string); the seconds until the token expires.
pub(crate) fn check(claims: &Map<String, Value>, expected: &Expected<'_>) -> Result<f64, Failure> {
    match claims.get("iss") {
        Some(Value::String(iss)) if iss == expected.issuer => {}
        Some(_) => return Err(Failure::Invalid("wrong issuer")),
        None => return Err(Failure::Invalid("no issuer")),
    }
    let aud_ok = match claims.get("aud") {
        Some(Value::String(aud)) => same_audience(aud, expected.audience),
        Some(Value::Array(auds)) => auds.iter().any(|a| {
            a.as_str()
                .is_some_and(|a| same_audience(a, expected.audience))
        }),
        _ => false,
    };
    if !aud_ok {
        return Err(Failure::Invalid("wrong or no audience"));
    }
    let now = now();
    let leeway = expected.leeway.as_secs_f64();
    let exp = numeric(claims, "exp")?.ok_or(Failure::Invalid("no expiry"))?;
    if now > exp + leeway {
        return Err(Failure::Invalid("expired"));
    }
    if let Some(nbf) = numeric(claims, "nbf")?
        && now + leeway < nbf
    {
        return Err(Failure::Invalid("not yet valid"));
    }
    numeric(claims, "iat")?;
    match claims.get("sub") {
        Some(Value::String(s)) if !s.is_empty() => {}
        _ => return Err(Failure::Invalid("no subject")),
    }
    Ok(exp + leeway - now)
}

/// The principal of checked claims: issuer, subject, client (`client_id`, else `azp`),
/// scopes (`scope`, a space-separated string, else `scp`, an array of strings), and the
/// remaining claims.
pub(crate) fn principal(mut claims: Map<String, Value>) -> Principal {
    let text = |v: Option<Value>| match v {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let issuer = text(claims.remove("iss"));
    let subject = text(claims.remove("sub")).unwrap_or_default();
    let client_id = text(claims.remove("client_id")).or_else(|| {
        claims
            .get("azp")
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    });
    let mut scopes = std::collections::BTreeSet::new();
    match claims.remove("scope") {
        Some(Value::String(s)) => {
            scopes.extend(s.split(' ').filter(|s| !s.is_empty()).map(str::to_owned))
        }
        Some(other) => {
            claims.insert("scope".into(), other);
        }
        None => {}
    }
    if scopes.is_empty()
        && let Some(Value::Array(scp)) = claims.get("scp")
    {
        scopes.extend(scp.iter().filter_map(|s| s.as_str()).map(str::to_owned));
    }
    claims.remove("scp");
    claims.remove("active");
    Principal::from_identity(Identity {
        issuer,
        subject,
        client_id,
        scopes,
        claims,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    const EXPECTED: Expected<'static> = Expected {
        issuer: "https://as.example",
        audience: "https://mcp.example/mcp",
        leeway: Duration::from_secs(60),
    };

    #[test]
    fn claims_of_the_wrong_type_are_never_absent() {
        let exp = now() + 300.0;
        let good = json!({"iss": "https://as.example", "aud": "https://MCP.example/mcp", "exp": exp, "sub": "alice"});
        assert!(check(&claims(good.clone()), &EXPECTED).is_ok());
        for (name, value) in [
            ("exp", json!("never")),
            ("nbf", json!("99999999999")),
            ("nbf", json!(exp + 3600.0)),
            ("iat", json!([])),
            ("aud", json!(["https://other.example"])),
            ("aud", json!(null)),
            ("iss", json!(["https://as.example"])),
            ("sub", json!("")),
            ("exp", json!(now() - 120.0)),
        ] {
            let mut c = claims(good.clone());
            c.insert(name.into(), value.clone());
            assert!(
                matches!(check(&c, &EXPECTED), Err(Failure::Invalid(_))),
                "{name}={value}"
            );
        }
    }

    #[test]
    fn the_principal_takes_scope_or_scp_and_keeps_the_rest() {
        let p = principal(claims(
            json!({"iss": "i", "sub": "s", "azp": "c", "scope": "a  b", "jti": "x"}),
        ));
        assert_eq!(
            (p.issuer(), p.id(), p.client_id()),
            (Some("i"), "s", Some("c"))
        );
        assert_eq!(p.scopes().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(p.claim("jti"), Some(&json!("x")));
        assert!(p.claim("scope").is_none());
        let p = principal(claims(
            json!({"iss": "i", "sub": "s", "client_id": "c2", "scp": ["x", 1]}),
        ));
        assert_eq!(p.client_id(), Some("c2"));
        assert_eq!(p.scopes().collect::<Vec<_>>(), ["x"]);
    }
}
