//! The authenticated caller that sealed request states are bound to.

/// The authenticated identity of a caller.
///
/// Transports turn a request (for example an `Authorization` header) into a
/// `Principal`; sealed `requestState` values are bound to it, so a state issued to
/// one principal does not open for another. An anonymous principal is distinct from
/// every named one, including a principal named `""`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Principal(Option<String>);

impl Principal {
    /// The unauthenticated caller.
    pub fn anonymous() -> Self {
        Principal(None)
    }

    /// A caller authenticated as `id`.
    pub fn named(id: impl Into<String>) -> Self {
        Principal(Some(id.into()))
    }

    /// The identity string; `""` for the anonymous principal.
    pub fn id(&self) -> &str {
        self.0.as_deref().unwrap_or("")
    }

    /// Whether this is the anonymous principal.
    pub fn is_anonymous(&self) -> bool {
        self.0.is_none()
    }
}
