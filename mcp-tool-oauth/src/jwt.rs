//! JWT access tokens: the compact JWS is taken apart here (size, shape, base64url, a JSON
//! header with an allowed `alg` and no `crit`), the signature verified by `jsonwebtoken`
//! with the issuer's key for that `kid` and `alg` only, and the claims checked here (the
//! library's own claim checks are off: ours never read a mistyped claim as an absent one).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use crate::claims::Failure;
use crate::config::SigningAlgorithm;

/// The parts of a token that looks like a compact JWS.
pub(crate) struct Jws<'t> {
    pub(crate) token: &'t str,
    pub(crate) alg: SigningAlgorithm,
    pub(crate) kid: Option<String>,
}

/// Whether `token` has the shape of a compact JWS (three base64url segments); an opaque
/// token (for introspection) does not.
pub(crate) fn looks_like_jws(token: &str) -> bool {
    let mut parts = token.split('.');
    let shaped = (0..3).all(|_| {
        parts.next().is_some_and(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
    });
    shaped && parts.next().is_none()
}

/// Reads the protected header of a compact JWS: its `alg` must be on `allowed` (so never
/// `none` nor an HMAC), it must not carry `crit` (no extension is understood here), and the
/// `kid`, if any, must be a string.
pub(crate) fn header<'t>(token: &'t str, allowed: &[SigningAlgorithm]) -> Result<Jws<'t>, Failure> {
    if !looks_like_jws(token) {
        return Err(Failure::Invalid("not a compact JWS"));
    }
    let encoded = token.split('.').next().unwrap_or_default();
    let bytes = URL_SAFE_NO_PAD
        .decode(encoded)
        .map_err(|_| Failure::Invalid("header is not base64url"))?;
    let header: Map<String, Value> = serde_json::from_slice(&bytes)
        .map_err(|_| Failure::Invalid("header is not a JSON object"))?;
    let alg = header
        .get("alg")
        .and_then(|a| a.as_str())
        .and_then(SigningAlgorithm::from_name)
        .filter(|a| allowed.contains(a))
        .ok_or(Failure::Invalid("algorithm not allowed"))?;
    if header.contains_key("crit") {
        return Err(Failure::Invalid("critical header extensions"));
    }
    let kid = match header.get("kid") {
        None => None,
        Some(Value::String(kid)) => Some(kid.clone()),
        Some(_) => return Err(Failure::Invalid("kid is not a string")),
    };
    Ok(Jws { token, alg, kid })
}

fn library_algorithm(alg: SigningAlgorithm) -> Algorithm {
    match alg {
        SigningAlgorithm::RS256 => Algorithm::RS256,
        SigningAlgorithm::RS384 => Algorithm::RS384,
        SigningAlgorithm::RS512 => Algorithm::RS512,
        SigningAlgorithm::PS256 => Algorithm::PS256,
        SigningAlgorithm::PS384 => Algorithm::PS384,
        SigningAlgorithm::PS512 => Algorithm::PS512,
        SigningAlgorithm::ES256 => Algorithm::ES256,
        SigningAlgorithm::ES384 => Algorithm::ES384,
        SigningAlgorithm::EdDSA => Algorithm::EdDSA,
    }
}

/// Verifies the signature of `jws` with `key` (for `jws.alg` alone); the claims, unchecked.
pub(crate) fn verify(
    jws: &Jws<'_>,
    key: &jsonwebtoken::DecodingKey,
) -> Result<Map<String, Value>, Failure> {
    let mut validation = Validation::new(library_algorithm(jws.alg));
    validation.algorithms = vec![library_algorithm(jws.alg)];
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.leeway = 0;
    match jsonwebtoken::decode::<Value>(jws.token, key, &validation) {
        Ok(data) => match data.claims {
            Value::Object(claims) => Ok(claims),
            _ => Err(Failure::Invalid("claims are not a JSON object")),
        },
        Err(e) => {
            tracing::debug!(
                error = %mcp_tool_runtime::protocol::errors::redact(&e.to_string()),
                "OAuth: JWS did not verify"
            );
            Err(Failure::Invalid("signature or payload does not verify"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        URL_SAFE_NO_PAD.encode(s)
    }

    #[test]
    fn headers_that_are_refused_before_any_key_is_looked_up() {
        let all = SigningAlgorithm::ALL;
        let body = b64("{}");
        for text in [
            r#"{"alg":"none"}"#,
            r#"{"alg":"HS256","kid":"k"}"#,
            r#"{"alg":"es256"}"#,
            r#"{"alg":"ES256","crit":["exp"]}"#,
            r#"{"alg":"ES256","kid":7}"#,
            r#"["alg"]"#,
            "not json",
        ] {
            let token = format!("{}.{body}.c2ln", b64(text));
            assert!(header(&token, &all).is_err(), "{text}");
        }
        assert!(
            header(
                &format!("{}.{body}.c2ln", b64(r#"{"alg":"ES256"}"#)),
                &[SigningAlgorithm::EdDSA]
            )
            .is_err()
        );
        let token = format!("{}.{body}.c2ln", b64(r#"{"alg":"ES256","kid":"k1"}"#));
        let ok = header(&token, &all).unwrap();
        assert_eq!(
            (ok.alg, ok.kid.as_deref()),
            (SigningAlgorithm::ES256, Some("k1"))
        );
        for shape in [
            "a.b", "a.b.c.d", "a..c", "a.b.c=", "a.b.c d", "", "a.b.", "é.b.c",
        ] {
            assert!(!looks_like_jws(shape), "{shape}");
        }
    }
}
