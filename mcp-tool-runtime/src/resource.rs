//! The [`Resource`] contract (what `#[mcp_resource]` implements): fixed URIs and RFC 6570 URI
//! templates whose variables arrive typed.
//!
//! A resource is written like a tool: a linear `async fn` that may ask before it answers, so
//! `resources/read` may answer `input_required`. A template's variables are matched from the
//! requested URI and deserialized into the function's parameter type (`{id}` into `id: u32`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::context::ToolContext;
use crate::error::{BoxFuture, RegistrationError, ToolError};
use crate::prompt::Completer;
use crate::protocol::{
    Annotations, ResourceContents, ResourceDescriptor, ResourceTemplateDescriptor,
};
use crate::state::StateKey;
use crate::tool::{Rounds, Step};

pub mod skills;
mod template;

pub use template::{TemplateError, UriTemplate};

/// Where a resource lives: one URI, or every URI a template matches.
#[derive(Debug, Clone, PartialEq)]
pub enum Address {
    /// A fixed URI (`resources/list`).
    Uri(String),
    /// A URI template (`resources/templates/list`).
    Template(UriTemplate),
}

/// Static description of a resource or resource template.
#[derive(Clone)]
pub struct ResourceInfo {
    /// Its URI or template.
    pub address: Address,
    /// Name.
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// MIME type (also the default of text and blob contents).
    pub mime_type: Option<String>,
    /// Annotations.
    pub annotations: Option<Annotations>,
    /// Round settings (capabilities, `max_rounds`, state TTL, layout, journal).
    pub rounds: Rounds,
    /// Completers of template variables, by variable name.
    pub completions: BTreeMap<String, Completer>,
    /// Cache freshness of its contents (default: the server's read TTL).
    pub cache_ttl: Option<std::time::Duration>,
    /// Cache scope of its contents (default: the server's); `Private` when they depend on
    /// the caller.
    pub cache_scope: Option<crate::protocol::CacheScope>,
    /// The OAuth scopes a caller must hold (RFC 6749 scope tokens; empty: none beyond
    /// what the authenticator requires). Checked before any code runs, on every round,
    /// unless the server [ignores scopes](crate::server::ServerBuilder::ignore_scopes);
    /// listed in the descriptor's `_meta` under [`SCOPES_META_KEY`](crate::tool::SCOPES_META_KEY).
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for ResourceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceInfo")
            .field("address", &self.address)
            .field("name", &self.name)
            .field("mime_type", &self.mime_type)
            .field("rounds", &self.rounds)
            .field("scopes", &self.scopes)
            .field("completions", &self.completions.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl ResourceInfo {
    /// A resource at a fixed URI.
    pub fn uri(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self::at(Address::Uri(uri.into()), name)
    }

    /// A resource template.
    pub fn template(template: UriTemplate, name: impl Into<String>) -> Self {
        Self::at(Address::Template(template), name)
    }

    fn at(address: Address, name: impl Into<String>) -> Self {
        ResourceInfo {
            address,
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            rounds: Rounds::default(),
            completions: BTreeMap::new(),
            cache_ttl: None,
            cache_scope: None,
            scopes: Vec::new(),
        }
    }

    /// Requires `scopes` (space-separated lists) of every caller; see [`ResourceInfo::scopes`].
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        crate::tool::add_scopes(&mut self.scopes, scopes);
        self
    }

    /// The descriptor listed by `resources/list` (`None` for a template).
    pub fn descriptor(&self) -> Option<ResourceDescriptor> {
        let Address::Uri(uri) = &self.address else {
            return None;
        };
        Some(ResourceDescriptor {
            uri: uri.clone(),
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            mime_type: self.mime_type.clone(),
            annotations: self.annotations.clone(),
            size: None,
            extra: crate::tool::scopes_extra(&self.scopes),
        })
    }

    /// The descriptor listed by `resources/templates/list` (`None` for a fixed URI).
    pub fn template_descriptor(&self) -> Option<ResourceTemplateDescriptor> {
        let Address::Template(t) = &self.address else {
            return None;
        };
        Some(ResourceTemplateDescriptor {
            uri_template: t.as_str().to_owned(),
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            mime_type: self.mime_type.clone(),
            annotations: self.annotations.clone(),
            extra: crate::tool::scopes_extra(&self.scopes),
        })
    }
}

/// One MCP resource or resource template: a static description and one async step per
/// round. Object safe.
pub trait Resource: Send + Sync + 'static {
    /// Static description; called once at registration.
    fn info(&self) -> ResourceInfo;

    /// Registration-time checks (elicitation schemas).
    fn validate(&self) -> Result<(), RegistrationError> {
        Ok(())
    }

    /// The application state types it takes.
    fn required_state(&self) -> Vec<StateKey> {
        Vec::new()
    }

    /// One round of reading `uri`: `vars` are the template's variables matched from it (an
    /// object of strings; empty for a fixed URI), `state` the resource's own state from the
    /// previous round.
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        uri: String,
        vars: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step<Vec<ResourceContents>>, ToolError>>;

    /// Reading `uri` once, the function run as written in direct mode (see [`Tool::direct`]);
    /// `None` by default.
    ///
    /// [`Tool::direct`]: crate::tool::Tool::direct
    fn direct<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        uri: String,
        vars: &'a RawValue,
    ) -> Option<BoxFuture<'a, Result<Vec<ResourceContents>, ToolError>>> {
        let _ = (cx, uri, vars);
        None
    }
}

// `Resource` for smart pointers to a resource.
crate::tool::forward_to_pointee!(Resource for [Arc] {
    fn info(&self) -> ResourceInfo;
    fn validate(&self) -> Result<(), RegistrationError>;
    fn required_state(&self) -> Vec<StateKey>;
    fn step<'a>(&'a self, cx: &'a mut ToolContext, uri: String, vars: &'a RawValue,
        state: Option<&'a RawValue>) -> BoxFuture<'a, Result<Step<Vec<ResourceContents>>, ToolError>>;
    fn direct<'a>(&'a self, cx: &'a mut ToolContext, uri: String, vars: &'a RawValue)
        -> Option<BoxFuture<'a, Result<Vec<ResourceContents>, ToolError>>>;
});

/// The address of a template (an invalid one is reported by [`check_template`] at
/// registration).
pub fn template_address(template: &str) -> Address {
    match UriTemplate::parse(template) {
        Ok(t) => Address::Template(t),
        Err(_) => Address::Uri(template.to_owned()),
    }
}

/// Registration-time check of a resource template and its variables type `T`: the template
/// parses, and every field `T` requires is one of its variables.
pub fn check_template<T: schemars::JsonSchema>(template: &str) -> Result<(), RegistrationError> {
    let t = UriTemplate::parse(template).map_err(|e| RegistrationError::InvalidInfo {
        tool: template.to_owned(),
        message: e.to_string(),
    })?;
    let vars = t.variables();
    let schema = crate::schema::schema_for::<T>();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for r in required.iter().filter_map(Value::as_str) {
        if !vars.contains(&r) {
            return Err(RegistrationError::InvalidInfo {
                tool: template.to_owned(),
                message: format!(
                    "the variables type requires `{r}`, which is not a variable of the template"
                ),
            });
        }
    }
    Ok(())
}

/// A resource's output as its contents for `uri` (`mime`: the resource's MIME type).
pub fn finish_contents<T: IntoContents>(
    v: T,
    uri: &str,
    mime: Option<String>,
) -> Result<Vec<ResourceContents>, ToolError> {
    Ok(v.into_contents(uri, mime))
}

/// What a resource may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the output of a resource",
    label = "a resource returns `Result<T, E>` with `T` = `String` (text), `Vec<u8>` (a blob), `ResourceContents` or `Vec<ResourceContents>`"
)]
pub trait IntoContents {
    /// The contents for `uri`.
    fn into_contents(self, uri: &str, mime: Option<String>) -> Vec<ResourceContents>;
}

impl IntoContents for String {
    fn into_contents(self, uri: &str, mime: Option<String>) -> Vec<ResourceContents> {
        vec![ResourceContents::text(
            uri,
            Some(mime.unwrap_or_else(|| "text/plain".into())),
            self,
        )]
    }
}

impl IntoContents for Vec<u8> {
    fn into_contents(self, uri: &str, mime: Option<String>) -> Vec<ResourceContents> {
        vec![ResourceContents::blob(
            uri,
            Some(mime.unwrap_or_else(|| "application/octet-stream".into())),
            &self,
        )]
    }
}

impl IntoContents for ResourceContents {
    fn into_contents(self, _uri: &str, _mime: Option<String>) -> Vec<ResourceContents> {
        vec![self]
    }
}

impl IntoContents for Vec<ResourceContents> {
    fn into_contents(self, _uri: &str, _mime: Option<String>) -> Vec<ResourceContents> {
        self
    }
}
