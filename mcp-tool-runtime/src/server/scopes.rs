//! Per-tool scopes: what a tool, prompt or resource declares (`scopes = "…"`) checked
//! against the caller's [`Principal`] before any of its code runs, on every request
//! (a first call, every retry with a `requestState`, a task's creation and its updates, a
//! legacy session's call), unless the server ignores scopes.

use serde_json::Value;

use super::Server;
use crate::principal::Principal;
use crate::protocol::errors;
use crate::protocol::text::ParamsIn;
use crate::protocol::{ErrorObject, JsonObject};
use crate::resource::Address;

impl Server {
    /// Whether declared scopes are enforced (the default; `false` after
    /// [`ServerBuilder::ignore_scopes`](super::ServerBuilder::ignore_scopes)).
    pub fn enforces_scopes(&self) -> bool {
        self.inner.enforce_scopes
    }

    /// The scopes a request needs: those declared by the tool of a `tools/call`, the
    /// prompt of a `prompts/get` (or of a `completion/complete` on a prompt), the resource
    /// of a `resources/read` (or of a `completion/complete` on a template). Empty for
    /// every other method, for an unknown target, and when the server ignores scopes.
    /// (`tasks/update` is checked against its task's tool when it is handled.)
    pub fn required_scopes(&self, method: &str, params: Option<&JsonObject>) -> Vec<String> {
        let str_of = |key: &str| params.and_then(|p| p.get(key)).and_then(Value::as_str);
        self.scopes_of(method, str_of("name"), str_of("uri"), || {
            params.and_then(|p| p.get("ref")).cloned()
        })
    }

    /// [`required_scopes`](Self::required_scopes) of a request whose params have `name`
    /// and `uri`, and whose `ref` (`completion/complete`) is read only when needed.
    fn scopes_of(
        &self,
        method: &str,
        name: Option<&str>,
        uri: Option<&str>,
        reference: impl FnOnce() -> Option<Value>,
    ) -> Vec<String> {
        if !self.enforces_scopes() {
            return Vec::new();
        }
        let catalog = self.catalog();
        match method {
            "tools/call" => name
                .and_then(|n| catalog.tools.get(n))
                .map_or_else(Vec::new, |r| r.info.scopes.clone()),
            "prompts/get" => self.prompt_scopes(name),
            "resources/read" => self.resource_scopes(uri),
            "completion/complete" => {
                let reference = reference();
                let reference = reference.as_ref().and_then(Value::as_object);
                let field = |k: &str| reference.and_then(|r| r.get(k)).and_then(Value::as_str);
                match field("type") {
                    Some("ref/prompt") => self.prompt_scopes(field("name")),
                    Some("ref/resource") => {
                        let uri = field("uri");
                        catalog
                            .resources
                            .iter()
                            .find(|r| match &r.info.address {
                                Address::Uri(u) => Some(u.as_str()) == uri,
                                Address::Template(t) => Some(t.as_str()) == uri,
                            })
                            .map_or_else(Vec::new, |r| r.info.scopes.clone())
                    }
                    _ => Vec::new(),
                }
            }
            _ => Vec::new(),
        }
    }

    fn prompt_scopes(&self, name: Option<&str>) -> Vec<String> {
        name.and_then(|n| self.catalog().prompts.get(n).cloned())
            .map_or_else(Vec::new, |p| p.info.scopes.clone())
    }

    fn resource_scopes(&self, uri: Option<&str>) -> Vec<String> {
        uri.and_then(|u| self.find_resource(u))
            .map_or_else(Vec::new, |(r, _)| r.info.scopes.clone())
    }

    /// Refuses `principal` with [`INSUFFICIENT_SCOPE`](crate::protocol::INSUFFICIENT_SCOPE)
    /// unless it holds every scope of `required` (or the server ignores scopes).
    pub(crate) fn require_scopes(
        &self,
        required: &[String],
        principal: &Principal,
    ) -> Result<(), ErrorObject> {
        if !self.enforces_scopes() || required.is_empty() {
            return Ok(());
        }
        let wanted: Vec<&str> = required.iter().map(String::as_str).collect();
        let missing = principal.missing_scopes(&wanted);
        if missing.is_empty() {
            return Ok(());
        }
        tracing::debug!(
            missing = %missing.join(" "),
            anonymous = principal.is_anonymous(),
            "refused: insufficient scope"
        );
        Err(errors::insufficient_scope(required, &missing))
    }

    /// [`require_scopes`](Self::require_scopes) for the request `method` with `params`.
    pub(crate) fn check_request_scopes(
        &self,
        method: &str,
        params: &JsonObject,
        principal: &Principal,
    ) -> Result<(), ErrorObject> {
        self.require_scopes(&self.required_scopes(method, Some(params)), principal)
    }

    /// [`check_request_scopes`](Self::check_request_scopes) for params read from their
    /// text.
    pub(crate) fn check_scopes_in(
        &self,
        method: &str,
        params: Option<&ParamsIn<'_>>,
        principal: &Principal,
        reference: impl FnOnce() -> Option<Value>,
    ) -> Result<(), ErrorObject> {
        if !self.enforces_scopes() {
            return Ok(());
        }
        let name = params.and_then(ParamsIn::name);
        let uri = params.and_then(ParamsIn::uri);
        let required = self.scopes_of(method, name.as_deref(), uri.as_deref(), reference);
        self.require_scopes(&required, principal)
    }
}
