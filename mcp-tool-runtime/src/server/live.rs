//! The catalog a server serves from: its registered tools, prompts and resources
//! ([`Registered`], [`RegisteredPrompt`], [`RegisteredResource`]), one immutable
//! [`Catalog`] snapshot of them, and [`Live`], which holds the current snapshot and swaps in
//! the next one (the checks and the handle that change it are `registry.rs`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

use crate::error::RegistrationError;
use crate::resource::Address;
use crate::state::StateKey;
use crate::sync::lock;
use crate::tool::{Tool, ToolInfo};

/// A registered tool, with what registration made of its description.
pub(crate) struct Registered {
    pub(crate) tool: Arc<dyn Tool>,
    pub(crate) info: ToolInfo,
    pub(crate) rounds: crate::tool::Rounds,
    /// Its `x-mcp-header` parameters (checked against `Mcp-Param-*` headers over HTTP).
    pub(crate) header_params: Vec<crate::protocol::headers::HeaderParam>,
    /// Its name, shared by the metric labels of its requests (no copy per request).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) label: Arc<str>,
}

/// A registered prompt.
pub(crate) struct RegisteredPrompt {
    pub(crate) prompt: Arc<dyn crate::prompt::Prompt>,
    pub(crate) info: crate::prompt::PromptInfo,
}

/// A registered resource or template.
pub(crate) struct RegisteredResource {
    pub(crate) resource: Arc<dyn crate::resource::Resource>,
    pub(crate) info: crate::resource::ResourceInfo,
}

/// What a server serves at one moment: tools, prompts and resources (with templates), in
/// registration order. Never changed in place: the registry builds a new one and swaps it.
#[derive(Default, Clone)]
pub(crate) struct Catalog {
    /// Bumped by every change (0 at `build()`); list cursors carry it.
    pub(crate) generation: u64,
    pub(crate) tools: BTreeMap<String, Arc<Registered>>,
    pub(crate) order: Vec<String>,
    pub(crate) prompts: BTreeMap<String, Arc<RegisteredPrompt>>,
    pub(crate) prompt_order: Vec<String>,
    /// Resources and templates, in registration order (templates are matched in this order).
    pub(crate) resources: Vec<Arc<RegisteredResource>>,
}

impl Catalog {
    /// Adds a checked tool; a name already served is [`RegistrationError::DuplicateTool`].
    pub(crate) fn insert_tool(&mut self, reg: Registered) -> Result<(), RegistrationError> {
        if self.tools.contains_key(&reg.info.name) {
            return Err(RegistrationError::DuplicateTool(reg.info.name.clone()));
        }
        self.order.push(reg.info.name.clone());
        self.tools.insert(reg.info.name.clone(), Arc::new(reg));
        Ok(())
    }

    /// Adds a checked prompt; a name already served is refused.
    pub(crate) fn insert_prompt(&mut self, reg: RegisteredPrompt) -> Result<(), RegistrationError> {
        if self.prompts.contains_key(&reg.info.name) {
            return Err(refused(&reg.info.name, "duplicate prompt name"));
        }
        self.prompt_order.push(reg.info.name.clone());
        self.prompts.insert(reg.info.name.clone(), Arc::new(reg));
        Ok(())
    }

    /// Adds a checked resource or template; an address already served is refused.
    pub(crate) fn insert_resource(
        &mut self,
        reg: RegisteredResource,
    ) -> Result<(), RegistrationError> {
        if self
            .resources
            .iter()
            .any(|r| r.info.address == reg.info.address)
        {
            return Err(refused(
                address_label(&reg.info.address),
                "duplicate resource URI or template",
            ));
        }
        self.resources.push(Arc::new(reg));
        Ok(())
    }

    /// The application state every entry takes, by entry name (for the check against the
    /// server's [`StateMap`]).
    pub(crate) fn state_needs(&self) -> Vec<(String, Vec<StateKey>)> {
        let tools = self.order.iter().filter_map(|n| self.tools.get(n));
        let prompts = self.prompt_order.iter().filter_map(|n| self.prompts.get(n));
        tools
            .map(|r| (r.info.name.clone(), r.tool.required_state()))
            .chain(prompts.map(|p| (p.info.name.clone(), p.prompt.required_state())))
            .chain(
                self.resources
                    .iter()
                    .map(|r| (r.info.name.clone(), r.resource.required_state())),
            )
            .collect()
    }
}

/// The server's current catalog and the lock that orders its changes.
pub(crate) struct Live {
    current: RwLock<Arc<Catalog>>,
    /// Held while a change is computed and swapped in: changes never race each other.
    writer: Mutex<()>,
}

impl Live {
    pub(crate) fn new(catalog: Catalog) -> Self {
        Live {
            current: RwLock::new(Arc::new(catalog)),
            writer: Mutex::new(()),
        }
    }

    /// The current snapshot.
    pub(crate) fn get(&self) -> Arc<Catalog> {
        match self.current.read() {
            Ok(c) => c.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Applies `change` to a copy of the current catalog and swaps it in when it returns
    /// `Ok(true)` (with the generation bumped); `Ok(false)` leaves the server unchanged.
    pub(super) fn update<E>(
        &self,
        change: impl FnOnce(&mut Catalog) -> Result<bool, E>,
    ) -> Result<bool, E> {
        let _writer = lock(&self.writer);
        let mut next = (*self.get()).clone();
        if !change(&mut next)? {
            return Ok(false);
        }
        next.generation = next.generation.wrapping_add(1);
        let next = Arc::new(next);
        match self.current.write() {
            Ok(mut c) => *c = next,
            Err(p) => *p.into_inner() = next,
        }
        Ok(true)
    }
}

/// [`RegistrationError::InvalidInfo`] for `name`.
pub(super) fn refused(name: &str, message: impl Into<String>) -> RegistrationError {
    RegistrationError::InvalidInfo {
        tool: name.to_owned(),
        message: message.into(),
    }
}

pub(super) fn address_label(address: &Address) -> &str {
    match address {
        Address::Uri(u) => u,
        Address::Template(t) => t.as_str(),
    }
}
