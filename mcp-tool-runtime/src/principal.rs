//! The authenticated caller: who sealed request states, tasks and legacy sessions are
//! bound to, and what tools may ask about it (issuer, subject, client, scopes, claims).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The authenticated identity of a caller, or the anonymous caller.
///
/// Transports turn a request (for example a verified OAuth access token) into a
/// `Principal`; sealed `requestState` values, tasks and legacy sessions are bound to its
/// **identity**: the pair (issuer, subject). A state issued to one principal does not open
/// for another, nor for the same subject name at another issuer; the anonymous principal is
/// distinct from every named one, including a principal named `""`.
///
/// Scopes, the client id and the other claims ride along for tools to read
/// (`cx.principal().has_scope("notes:write")`); they are not part of the identity, so a
/// caller who steps up to more scopes keeps its states and sessions. Equality and hashing
/// follow the identity.
///
/// Cheap to clone (one `Arc`).
#[derive(Clone, Debug, Default)]
pub struct Principal(Option<Arc<Identity>>);

/// What an authenticator established about a caller (see [`Principal::from_identity`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// Who vouches for the subject: an OAuth issuer URL (`iss`). `None` for a principal an
    /// authenticator names on its own authority ([`Principal::named`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// The subject (`sub`): unique at its issuer.
    pub subject: String,
    /// The OAuth client the token was issued to (`client_id`, or `azp`), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The granted scopes.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub scopes: BTreeSet<String>,
    /// The token's other claims (as the authenticator chose to keep them).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub claims: Map<String, Value>,
}

impl Principal {
    /// The unauthenticated caller.
    pub fn anonymous() -> Self {
        Principal(None)
    }

    /// A caller authenticated as `id` by an authenticator's own authority (no issuer, no
    /// scopes).
    pub fn named(id: impl Into<String>) -> Self {
        Self::from_identity(Identity {
            subject: id.into(),
            ..Identity::default()
        })
    }

    /// The subject `subject` as vouched for by `issuer` (add scopes and claims with
    /// [`with_scopes`](Self::with_scopes), [`with_client_id`](Self::with_client_id),
    /// [`with_claims`](Self::with_claims)).
    pub fn issued(issuer: impl Into<String>, subject: impl Into<String>) -> Self {
        Self::from_identity(Identity {
            issuer: Some(issuer.into()),
            subject: subject.into(),
            ..Identity::default()
        })
    }

    /// The principal for `identity`.
    pub fn from_identity(identity: Identity) -> Self {
        Principal(Some(Arc::new(identity)))
    }

    /// Adds granted scopes (no effect on the anonymous principal).
    pub fn with_scopes<I, S>(self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.edit(|i| i.scopes.extend(scopes.into_iter().map(Into::into)))
    }

    /// Sets the client id (no effect on the anonymous principal).
    pub fn with_client_id(self, client_id: impl Into<String>) -> Self {
        self.edit(|i| i.client_id = Some(client_id.into()))
    }

    /// Adds claims (no effect on the anonymous principal).
    pub fn with_claims(self, claims: Map<String, Value>) -> Self {
        self.edit(|i| i.claims.extend(claims))
    }

    fn edit(self, f: impl FnOnce(&mut Identity)) -> Self {
        match self.0 {
            None => self,
            Some(mut identity) => {
                f(Arc::make_mut(&mut identity));
                Principal(Some(identity))
            }
        }
    }

    /// The subject; `""` for the anonymous principal. A name for messages and logs: two
    /// issuers may have the same subject, so bind to [`key`](Self::key), not to this.
    pub fn id(&self) -> &str {
        self.0.as_deref().map_or("", |i| i.subject.as_str())
    }

    /// Whether this is the anonymous principal.
    pub fn is_anonymous(&self) -> bool {
        self.0.is_none()
    }

    /// The identity, unless anonymous.
    pub fn identity(&self) -> Option<&Identity> {
        self.0.as_deref()
    }

    /// The issuer, if any.
    pub fn issuer(&self) -> Option<&str> {
        self.identity().and_then(|i| i.issuer.as_deref())
    }

    /// The OAuth client id, if known.
    pub fn client_id(&self) -> Option<&str> {
        self.identity().and_then(|i| i.client_id.as_deref())
    }

    /// The granted scopes (none for the anonymous principal).
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.identity()
            .into_iter()
            .flat_map(|i| i.scopes.iter().map(String::as_str))
    }

    /// Whether `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.identity().is_some_and(|i| i.scopes.contains(scope))
    }

    /// The scopes of `required` that were not granted, in their order.
    pub fn missing_scopes<'s>(&self, required: &[&'s str]) -> Vec<&'s str> {
        required
            .iter()
            .copied()
            .filter(|s| !self.has_scope(s))
            .collect()
    }

    /// A claim of the token, by name.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.identity().and_then(|i| i.claims.get(name))
    }

    /// A stable key of the identity, one string, unambiguous: a principal without issuer
    /// keys as its subject (as it always did); an issued one as an encoding no issuer-less
    /// subject can take. `None` for the anonymous principal. Stores (tasks, ledgers) and
    /// application data (the notes example's owners) key by it.
    pub fn key(&self) -> Option<Cow<'_, str>> {
        let i = self.identity()?;
        Some(match &i.issuer {
            // An issued key starts with U+0001 and a digit; a subject that itself starts
            // with U+0001 is escaped with a second one, so the forms never meet.
            Some(iss) => Cow::Owned(format!("\u{1}{}\u{1}{iss}{}", iss.len(), i.subject)),
            None if i.subject.starts_with('\u{1}') => Cow::Owned(format!("\u{1}{}", i.subject)),
            None => Cow::Borrowed(i.subject.as_str()),
        })
    }

    /// The principal a [`key`](Self::key) was made from (identity only: no scopes, client
    /// or claims). `None` maps to the anonymous principal; a key no principal makes gives
    /// `None`.
    pub fn from_key(key: Option<&str>) -> Option<Self> {
        let Some(key) = key else {
            return Some(Self::anonymous());
        };
        let Some(rest) = key.strip_prefix('\u{1}') else {
            return Some(Self::named(key));
        };
        if rest.starts_with('\u{1}') {
            return Some(Self::named(rest));
        }
        let (len, rest) = rest.split_once('\u{1}')?;
        let len: usize = len.parse().ok()?;
        if !rest.is_char_boundary(len) {
            return None;
        }
        let (iss, sub) = rest.split_at(len);
        Some(Self::issued(iss, sub))
    }
}

/// Whether `scope` is one scope token of RFC 6749 §3.3: one or more characters of
/// `%x21 / %x23-5B / %x5D-7E` (printable ASCII without space, `"` and `\`). A scope
/// *list* is such tokens separated by single spaces.
pub fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

impl PartialEq for Principal {
    fn eq(&self, other: &Self) -> bool {
        match (self.identity(), other.identity()) {
            (None, None) => true,
            (Some(a), Some(b)) => a.issuer == b.issuer && a.subject == b.subject,
            _ => false,
        }
    }
}

impl Eq for Principal {}

impl Hash for Principal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self.identity() {
            None => state.write_u8(0),
            Some(i) => {
                state.write_u8(1);
                i.issuer.hash(state);
                i.subject.hash(state);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_issuer_and_subject() {
        let a = Principal::issued("https://a.example", "alice").with_scopes(["notes:read"]);
        let a2 = Principal::issued("https://a.example", "alice").with_scopes(["notes:write"]);
        let b = Principal::issued("https://b.example", "alice");
        let named = Principal::named("alice");
        assert_eq!(a, a2, "scopes are not identity");
        assert_ne!(
            a, b,
            "the same subject at another issuer is another principal"
        );
        assert_ne!(a, named);
        assert_ne!(named, Principal::anonymous());
        assert_ne!(Principal::named(""), Principal::anonymous());
        assert!(a.has_scope("notes:read") && !a.has_scope("notes:write"));
        assert_eq!(a.missing_scopes(&["notes:read", "x"]), vec!["x"]);
        assert!(!Principal::anonymous().with_scopes(["x"]).has_scope("x"));
    }

    #[test]
    fn scope_tokens_follow_rfc_6749() {
        for ok in [
            "notes:write",
            "a",
            "!",
            "#[]^~",
            "https://x.example/notes.read",
        ] {
            assert!(is_scope_token(ok), "{ok}");
        }
        for bad in ["", "a b", "a\"b", "a\\b", "é", "a\tb", "\u{7f}"] {
            assert!(!is_scope_token(bad), "{bad:?}");
        }
    }

    #[test]
    fn keys_are_unambiguous_and_round_trip() {
        let cases = [
            Principal::anonymous(),
            Principal::named(""),
            Principal::named("alice"),
            Principal::named("\u{1}5\u{1}https"),
            Principal::named("\u{1}\u{1}x"),
            Principal::issued("https", ""),
            Principal::issued("", "https"),
            Principal::issued("https://a.example", "alice"),
            Principal::issued("é\u{1}", "\u{1}"),
        ];
        let mut seen = std::collections::HashSet::new();
        for p in &cases {
            let key = p.key().map(Cow::into_owned);
            assert!(
                seen.insert(key.clone()),
                "two principals share a key: {p:?}"
            );
            assert_eq!(Principal::from_key(key.as_deref()).as_ref(), Some(p));
        }
        assert_eq!(Principal::named("alice").key().as_deref(), Some("alice"));
        assert_eq!(Principal::from_key(Some("\u{1}x\u{1}")), None);
        assert_eq!(Principal::from_key(Some("\u{1}99\u{1}ab")), None);
    }
}
