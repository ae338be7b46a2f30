//! What the resource server tells clients: RFC 9728 protected resource metadata (where it
//! is served, what it says) and the `WWW-Authenticate` challenges that point to it.

use reqwest::Url;
use serde_json::{Value, json};

use mcp_tool_runtime::transport::auth::{AuthError, AuthStatus, quoted};

/// The well-known path of RFC 9728 metadata.
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The public face of the resource server.
#[derive(Debug, Clone)]
pub(crate) struct Metadata {
    /// The metadata URL for `resource` (RFC 9728 §3.1: the well-known path inserted
    /// between host and path), as the challenges name it.
    pub(crate) url: String,
    /// The paths (on this server) the document is served at.
    pub(crate) paths: Vec<String>,
    pub(crate) document: Value,
    scope: Option<String>,
}

impl Metadata {
    /// The metadata of `resource` (as configured, string and parsed).
    pub(crate) fn new(
        resource: &str,
        parsed: &Url,
        authorization_servers: &[String],
        scopes: &[String],
    ) -> Self {
        let path = parsed.path().trim_end_matches('/');
        let mut origin = parsed.clone();
        origin.set_path(&format!("{WELL_KNOWN}{path}"));
        let mut paths = vec![WELL_KNOWN.to_owned()];
        if !path.is_empty() {
            paths.push(format!("{WELL_KNOWN}{path}"));
        }
        let mut document = json!({
            "resource": resource,
            "authorization_servers": authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !scopes.is_empty() {
            document["scopes_supported"] = json!(scopes);
        }
        Self {
            url: origin.into(),
            paths,
            document,
            scope: (!scopes.is_empty()).then(|| scopes.join(" ")),
        }
    }

    fn resource_metadata(&self) -> String {
        format!("resource_metadata=\"{}\"", quoted(&self.url))
    }

    /// The 401 challenge: `Bearer resource_metadata="…"`, then `scope="…"` when scopes are
    /// configured, then `error="…"` when given (`invalid_token` for a token that was sent and
    /// failed, `invalid_request` for a malformed request).
    pub(crate) fn unauthorized(&self, error: Option<&str>, message: &str) -> AuthError {
        let mut challenge = format!("Bearer {}", self.resource_metadata());
        if let Some(scope) = &self.scope {
            challenge.push_str(&format!(", scope=\"{}\"", quoted(scope)));
        }
        if let Some(error) = error {
            challenge.push_str(&format!(", error=\"{error}\""));
        }
        AuthError::new(challenge, message)
    }

    /// The 403 `insufficient_scope` refusal with `resource_metadata`.
    pub(crate) fn insufficient_scope(&self, scopes: &[&str]) -> AuthError {
        AuthError::insufficient_scope(scopes, Some(&self.resource_metadata()))
    }

    /// The 503 for a token that could not be checked (keys or introspection unreachable).
    pub(crate) fn unavailable() -> AuthError {
        AuthError {
            status: AuthStatus::Unavailable,
            challenge: String::new(),
            message: "token verification temporarily unavailable".into(),
        }
    }

    /// (path, document) pairs for [`Authenticator::well_known`](mcp_tool_runtime::transport::auth::Authenticator::well_known).
    pub(crate) fn documents(&self) -> Vec<(String, Value)> {
        self.paths
            .iter()
            .map(|p| (p.clone(), self.document.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_lives_at_the_path_inserted_url() {
        let m = Metadata::new(
            "https://mcp.example/mcp",
            &Url::parse("https://mcp.example/mcp").unwrap(),
            &["https://as.example".into()],
            &["a".into(), "b".into()],
        );
        assert_eq!(
            m.url,
            "https://mcp.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            m.paths,
            [WELL_KNOWN, "/.well-known/oauth-protected-resource/mcp"]
        );
        assert_eq!(m.document["scopes_supported"], json!(["a", "b"]));
        assert_eq!(
            m.unauthorized(Some("invalid_token"), "x").challenge,
            "Bearer resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\", \
             scope=\"a b\", error=\"invalid_token\""
        );
        let root = Metadata::new(
            "https://mcp.example",
            &Url::parse("https://mcp.example").unwrap(),
            &[],
            &[],
        );
        assert_eq!(root.paths, [WELL_KNOWN]);
        assert_eq!(
            root.url,
            "https://mcp.example/.well-known/oauth-protected-resource"
        );
        assert!(root.document.get("scopes_supported").is_none());
    }
}
