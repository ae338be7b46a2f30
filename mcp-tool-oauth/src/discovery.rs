//! Finding the issuer's JWKS: RFC 8414 authorization server metadata (with the
//! path-insertion rule for an issuer with a path), then OpenID Connect discovery; the
//! document counts only when its `issuer` is the configured one.

use reqwest::Url;

use crate::fetch::{FetchError, Fetcher};

/// The metadata locations of `issuer`, in the order they are tried (as the MCP
/// authorization spec lists them for clients):
///
/// - no path (`https://as.example`): `/.well-known/oauth-authorization-server`, then
///   `/.well-known/openid-configuration`;
/// - a path (`https://as.example/tenant`): `/.well-known/oauth-authorization-server/tenant`
///   (RFC 8414 §3.1: inserted between host and path), `/.well-known/openid-configuration/tenant`,
///   then `/tenant/.well-known/openid-configuration` (OpenID Connect Discovery §4: appended).
pub(crate) fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |p: String| {
        let mut u = issuer.clone();
        u.set_path(&p);
        u.set_query(None);
        u.set_fragment(None);
        u
    };
    if path.is_empty() {
        vec![
            at("/.well-known/oauth-authorization-server".into()),
            at("/.well-known/openid-configuration".into()),
        ]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// The `jwks_uri` from the first metadata document of `issuer` that answers, names this
/// issuer, and has a usable `jwks_uri`.
///
/// # Errors
/// The last failure, when no document does (a document naming another issuer, or without
/// a `jwks_uri`, counts as [`FetchError::NotJson`]).
pub(crate) async fn jwks_uri(fetcher: &Fetcher, issuer: &str) -> Result<Url, FetchError> {
    let parsed = Url::parse(issuer).map_err(|_| FetchError::NotJson)?;
    let mut last = FetchError::NotJson;
    for url in metadata_urls(&parsed) {
        match fetcher.get(&url).await {
            Ok(doc) => {
                // RFC 8414 §3.3 / OIDC Discovery §4.3: the issuer in the document must be
                // identical to the one the metadata was fetched for.
                if doc.get("issuer").and_then(|v| v.as_str()) != Some(issuer) {
                    tracing::debug!(%url, "authorization server metadata names another issuer");
                    last = FetchError::NotJson;
                    continue;
                }
                let jwks = doc
                    .get("jwks_uri")
                    .and_then(|v| v.as_str())
                    .and_then(|s| crate::config::url("jwks_uri", s, false).ok());
                match jwks {
                    Some(jwks) => return Ok(jwks),
                    None => {
                        tracing::debug!(%url, "authorization server metadata without a usable jwks_uri");
                        last = FetchError::NotJson;
                    }
                }
            }
            Err(e) => {
                tracing::debug!(%url, error = %e, "authorization server metadata not found here");
                last = e;
                if e == FetchError::Timeout {
                    // the next location is on the same host: no use waiting again
                    break;
                }
            }
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_insertion_for_issuers_with_a_path() {
        let urls = |s: &str| {
            metadata_urls(&Url::parse(s).unwrap())
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            urls("https://as.example"),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            urls("https://as.example:8443/tenant/one/"),
            [
                "https://as.example:8443/.well-known/oauth-authorization-server/tenant/one",
                "https://as.example:8443/.well-known/openid-configuration/tenant/one",
                "https://as.example:8443/tenant/one/.well-known/openid-configuration"
            ]
        );
    }
}
