//! The registry of what a server serves: the [`Catalog`] of tools, prompts and resources (one
//! immutable snapshot, swapped whole on every change), the registration checks that
//! [`ServerBuilder`](super::ServerBuilder) and the run-time [`Registry`] share, and the
//! [`Registry`] handle itself.
//!
//! Requests read the catalog through [`Server::catalog`]: one read lock taken and released
//! at once (never held across an await) and an `Arc` cloned, so a request keeps the snapshot
//! it started with while the registry swaps in a new one. A change raises the matching
//! [`Change`](crate::changes::Change) on the server's hub
//! ([`Server::changes`](super::Server::changes)), which legacy sessions and
//! `subscriptions/listen` streams turn into `notifications/*/list_changed`.
//!
//! List results keep their configured `ttlMs` on a dynamic server: the notification tells a
//! listening client to re-list at once; a client that does not listen may serve a removed
//! tool from its cache until the TTL runs out (calling it then gets "Unknown tool"). Each
//! change also bumps the catalog's generation, which list cursors carry: a cursor made
//! before a change is -32602 ("the list changed; list again from the start"), never a page
//! that skips or repeats items silently.

use std::sync::Arc;

use serde_json::Value;

use super::live::{Registered, RegisteredPrompt, RegisteredResource};
use super::{Inner, Server};
use crate::changes::Change;
use crate::prompt::Prompt;
use crate::resource::{Address, Resource};
use crate::state::{StateKey, StateMap};

pub(crate) use super::live::{Catalog, Live};
use super::live::{address_label, refused};
use crate::error::RegistrationError;
use crate::tool::Tool;

/// A `validate()` error, named after the entry when the code left the name out.
fn named(mut e: RegistrationError, name: &str) -> RegistrationError {
    if let RegistrationError::Schema { tool, .. } = &mut e
        && tool.is_empty()
    {
        tool.clone_from(&name.to_owned());
    }
    e
}

/// The checks of one tool that do not depend on the rest of the server: its own
/// [`Tool::validate`] (form schemas), the input schema's root, `x-mcp-header` annotations,
/// its name, scopes and single use.
pub(crate) fn checked_tool(tool: Arc<dyn Tool>) -> Result<Registered, RegistrationError> {
    let info = tool.info();
    tool.validate().map_err(|e| named(e, &info.name))?;
    if info.input_schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(refused(
            &info.name,
            "inputSchema must have root \"type\": \"object\"",
        ));
    }
    // Clients must drop a tool with invalid `x-mcp-header` annotations from tools/list.
    let header_params =
        crate::protocol::headers::header_params(&info.input_schema).map_err(|e| {
            refused(
                &info.name,
                format!("inputSchema: invalid x-mcp-header annotation: {e}"),
            )
        })?;
    if info.name.is_empty() {
        return Err(refused(&info.name, "the tool name is empty"));
    }
    crate::tool::check_scopes(&info.scopes).map_err(|m| refused(&info.name, m))?;
    if info.once && info.task != crate::tasks::TaskSupport::Forbidden {
        return Err(refused(
            &info.name,
            "a single-use (`once`) tool cannot run as a task (yet)",
        ));
    }
    let rounds = info.rounds();
    Ok(Registered {
        label: Arc::from(info.name.as_str()),
        tool,
        info,
        rounds,
        header_params,
    })
}

/// The checks of one prompt that do not depend on the rest of the server.
pub(crate) fn checked_prompt(
    prompt: Arc<dyn Prompt>,
) -> Result<RegisteredPrompt, RegistrationError> {
    let info = prompt.info();
    prompt.validate().map_err(|e| named(e, &info.name))?;
    if info.name.is_empty() {
        return Err(refused(&info.name, "the prompt name is empty"));
    }
    if info.rounds.once {
        return Err(refused(&info.name, "single use (`once`) is for tools only"));
    }
    crate::tool::check_scopes(&info.scopes).map_err(|m| refused(&info.name, m))?;
    if let Some(arg) = info
        .completions
        .keys()
        .find(|k| !info.arguments.iter().any(|a| &a.name == *k))
    {
        return Err(refused(
            &info.name,
            format!("a completer for `{arg}`, which is not an argument of the prompt"),
        ));
    }
    Ok(RegisteredPrompt { prompt, info })
}

/// The checks of one resource or template that do not depend on the rest of the server.
pub(crate) fn checked_resource(
    resource: Arc<dyn Resource>,
) -> Result<RegisteredResource, RegistrationError> {
    let info = resource.info();
    resource.validate().map_err(|e| named(e, &info.name))?;
    let label = address_label(&info.address);
    let problem = if info.name.is_empty() {
        Some("the resource name is empty".to_owned())
    } else if info.rounds.once {
        Some("single use (`once`) is for tools only".to_owned())
    } else if let Err(message) = crate::tool::check_scopes(&info.scopes) {
        Some(message)
    } else if label.is_empty() {
        Some("the resource URI is empty".to_owned())
    } else {
        let vars: Vec<&str> = match &info.address {
            Address::Uri(_) => Vec::new(),
            Address::Template(t) => t.variables(),
        };
        info.completions
            .keys()
            .find(|k| !vars.contains(&k.as_str()))
            .map(|k| format!("a completer for `{k}`, which is not a variable of the template"))
    };
    match problem {
        Some(message) => Err(refused(label, message)),
        None => Ok(RegisteredResource { resource, info }),
    }
}

/// [`RegistrationError::MissingState`] for the first of `keys` that `state` has no value of.
pub(crate) fn check_state(
    name: &str,
    keys: &[StateKey],
    state: &StateMap,
) -> Result<(), RegistrationError> {
    match keys.iter().find(|k| !state.contains(k)) {
        Some(key) => Err(RegistrationError::MissingState {
            tool: name.to_owned(),
            type_name: key.type_name.to_owned(),
        }),
        None => Ok(()),
    }
}

/// Warns when a tool's state TTL is longer than the sealer lets states live.
pub(crate) fn warn_ttl(info: &crate::tool::ToolInfo, max_ttl: std::time::Duration) {
    if let Some(ttl) = info.state_ttl
        && ttl > max_ttl
    {
        tracing::warn!(
            tool = %info.name,
            ttl_secs = ttl.as_secs(),
            max_ttl_secs = max_ttl.as_secs(),
            "the tool's state TTL exceeds the sealer's maximum; its states live max_ttl"
        );
    }
}

/// Adds and removes tools, prompts and resources of a running server
/// ([`Server::registry`]; the server must be built with
/// [`ServerBuilder::dynamic`](super::ServerBuilder::dynamic)).
///
/// An addition runs the same checks as [`ServerBuilder`](super::ServerBuilder) (form
/// schemas, input schema, names, scopes, the application state it takes, a duplicate name
/// or URI) and is refused with the same [`RegistrationError`], leaving the server
/// unchanged. Every change that happens raises `Change::ToolsListChanged`,
/// `PromptsListChanged` or `ResourcesListChanged` on [`Server::changes`]. Requests already
/// running keep the catalog they started with; a `requestState` of a removed tool is
/// answered "Unknown tool" (-32602) when it comes back.
///
/// ```
/// use mcp_tool_runtime::protocol::Implementation;
/// use mcp_tool_runtime::server::Server;
///
/// let server = Server::builder(Implementation::new("demo", "1.0")).dynamic(true).build().unwrap();
/// let registry = server.registry().expect("built with dynamic(true)");
/// assert!(!registry.remove_tool("nothing"));
/// ```
#[derive(Clone)]
pub struct Registry {
    server: Server,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("generation", &self.generation())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// The catalog requests are served from now (a snapshot: later changes do not touch it).
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.inner.catalog.get()
    }

    /// Whether the server was built with [`ServerBuilder::dynamic`](super::ServerBuilder::dynamic):
    /// its tools, prompts and resources may change at run time, and it says so
    /// (`listChanged: true`).
    pub fn is_dynamic(&self) -> bool {
        self.inner.dynamic
    }

    /// The handle that adds and removes tools, prompts and resources at run time; `None`
    /// unless the server was built with
    /// [`ServerBuilder::dynamic`](super::ServerBuilder::dynamic).
    pub fn registry(&self) -> Option<Registry> {
        self.is_dynamic().then(|| Registry {
            server: self.clone(),
        })
    }
}

/// A [`Registry`] that does not keep its server alive: what a dynamic server's own tools
/// take (`State<WeakRegistry>`, given by every server built with
/// [`ServerBuilder::dynamic`](super::ServerBuilder::dynamic)) to change the server they run
/// on — a [`Registry`] in the server's own state would keep it alive forever.
#[derive(Clone, Debug)]
pub struct WeakRegistry(std::sync::Weak<Inner>);

impl WeakRegistry {
    pub(super) fn new(inner: std::sync::Weak<Inner>) -> Self {
        WeakRegistry(inner)
    }

    /// A handle to no server (its place in the state map until the server exists).
    pub(super) fn dangling() -> Self {
        WeakRegistry(std::sync::Weak::new())
    }

    /// The registry, while its server lives.
    pub fn upgrade(&self) -> Option<Registry> {
        self.0.upgrade().map(|inner| Registry {
            server: Server { inner },
        })
    }
}

impl Registry {
    /// A handle that does not keep the server alive.
    pub fn downgrade(&self) -> WeakRegistry {
        WeakRegistry(Arc::downgrade(&self.server.inner))
    }

    /// The hub of the server's changes (to raise `Change::ResourceUpdated`, say).
    pub fn changes(&self) -> &crate::changes::Changes {
        self.server.changes()
    }

    /// How many changes the catalog has seen since `build()`.
    pub fn generation(&self) -> u64 {
        self.server.catalog().generation
    }

    /// Applies `change` to the catalog; when it changed anything, raises `raised`.
    fn apply<E>(
        &self,
        raised: Change,
        change: impl FnOnce(&mut Catalog) -> Result<bool, E>,
    ) -> Result<bool, E> {
        let changed = self.server.inner.catalog.update(change)?;
        if changed {
            self.server.changes().publish(raised);
        }
        Ok(changed)
    }

    /// Removes what `remove` finds (it says whether it found anything), raising `raised`.
    fn remove(&self, raised: Change, remove: impl FnOnce(&mut Catalog) -> bool) -> bool {
        matches!(
            self.apply(raised, |c| Ok::<_, std::convert::Infallible>(remove(c))),
            Ok(true)
        )
    }

    /// Adds a tool (see [`ServerBuilder::tool`](super::ServerBuilder::tool)).
    ///
    /// # Errors
    /// The [`RegistrationError`] the builder would report; the server is unchanged. A tool
    /// that supports tasks is refused unless tasks are on (a task store was given, or a
    /// task tool was registered at build).
    pub fn add_tool(&self, tool: impl Tool) -> Result<(), RegistrationError> {
        let reg = checked_tool(Arc::new(tool))?;
        let state = self.server.state_map();
        check_state(&reg.info.name, &reg.tool.required_state(), &state)?;
        if reg.info.task != crate::tasks::TaskSupport::Forbidden && !self.server.tasks_enabled() {
            return Err(refused(
                &reg.info.name,
                "tasks are off on this server: give the builder a task store to add task tools at run time",
            ));
        }
        warn_ttl(&reg.info, self.server.sealer().config().max_ttl);
        self.apply(Change::ToolsListChanged, |c| {
            c.insert_tool(reg).map(|()| true)
        })
        .map(drop)
    }

    /// Removes the tool `name`; `false` when there is none. Calls in flight finish; their
    /// next round (a `requestState`, a task's) is answered "Unknown tool".
    pub fn remove_tool(&self, name: &str) -> bool {
        self.remove(Change::ToolsListChanged, |c| {
            c.order.retain(|n| n != name);
            c.tools.remove(name).is_some()
        })
    }

    /// Adds a prompt (see [`ServerBuilder::prompt`](super::ServerBuilder::prompt)).
    ///
    /// # Errors
    /// The [`RegistrationError`] the builder would report; the server is unchanged.
    pub fn add_prompt(&self, prompt: impl Prompt) -> Result<(), RegistrationError> {
        let reg = checked_prompt(Arc::new(prompt))?;
        let state = self.server.state_map();
        check_state(&reg.info.name, &reg.prompt.required_state(), &state)?;
        self.apply(Change::PromptsListChanged, |c| {
            c.insert_prompt(reg).map(|()| true)
        })
        .map(drop)
    }

    /// Removes the prompt `name`; `false` when there is none.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.remove(Change::PromptsListChanged, |c| {
            c.prompt_order.retain(|n| n != name);
            c.prompts.remove(name).is_some()
        })
    }

    /// Adds a resource or a resource template (see
    /// [`ServerBuilder::resource`](super::ServerBuilder::resource)).
    ///
    /// # Errors
    /// The [`RegistrationError`] the builder would report; the server is unchanged.
    pub fn add_resource(&self, resource: impl Resource) -> Result<(), RegistrationError> {
        let reg = checked_resource(Arc::new(resource))?;
        let state = self.server.state_map();
        check_state(&reg.info.name, &reg.resource.required_state(), &state)?;
        self.apply(Change::ResourcesListChanged, |c| {
            c.insert_resource(reg).map(|()| true)
        })
        .map(drop)
    }

    /// Removes the resource whose URI, or the template whose text, is `address`; `false`
    /// when there is none. The files of served skills (`skill://…`) stay: the skills
    /// catalog is fixed at `build()`.
    pub fn remove_resource(&self, address: &str) -> bool {
        if address.starts_with("skill://") && !self.server.skills().is_empty() {
            return false;
        }
        self.remove(Change::ResourcesListChanged, |c| {
            let before = c.resources.len();
            c.resources
                .retain(|r| address_label(&r.info.address) != address);
            c.resources.len() != before
        })
    }
}
