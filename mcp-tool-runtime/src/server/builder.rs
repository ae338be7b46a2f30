//! [`ServerBuilder`]: registry of tools and server settings.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{Inner, Registered, Server};
use crate::protocol::{CacheScope, Implementation};
use crate::seal::Sealer;
use crate::tool::{RegistrationError, Tool};

/// Builds a [`Server`]: `Server::builder(Implementation::new("name", "1.0")).tool(..).build()`.
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    sealer: Option<Sealer>,
    tools: BTreeMap<String, Registered>,
    order: Vec<String>,
    errors: Vec<RegistrationError>,
    discover_ttl: Duration,
    list_ttl: Duration,
    cache_scope: CacheScope,
    max_answer_bytes: usize,
    max_answers_total_bytes: usize,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .field("tools", &self.order)
            .field("errors", &self.errors)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// Default cache TTL of `server/discover` and `tools/list` results (5 minutes).
    pub const DEFAULT_TTL: Duration = Duration::from_secs(300);
    /// Default cap on one `inputResponses` entry: 64 KiB of serialized JSON.
    pub const DEFAULT_MAX_ANSWER_BYTES: usize = 64 * 1024;
    /// Default cap on all the `inputResponses` entries of one round: 256 KiB of serialized JSON.
    pub const DEFAULT_MAX_ANSWERS_TOTAL_BYTES: usize = 256 * 1024;

    pub(super) fn new(info: Implementation) -> Self {
        ServerBuilder {
            info,
            instructions: None,
            sealer: None,
            tools: BTreeMap::new(),
            order: Vec::new(),
            errors: Vec::new(),
            discover_ttl: Self::DEFAULT_TTL,
            list_ttl: Self::DEFAULT_TTL,
            cache_scope: CacheScope::Public,
            max_answer_bytes: Self::DEFAULT_MAX_ANSWER_BYTES,
            max_answers_total_bytes: Self::DEFAULT_MAX_ANSWERS_TOTAL_BYTES,
        }
    }

    /// The sealer of `requestState` (default: [`Sealer::random`], with a warning). When
    /// its [`SealConfig::context`](crate::seal::SealConfig::context) is unset,
    /// [`build`](Self::build) binds it to the server's name, so that another service
    /// sharing the key (even with a tool of the same name) cannot replay its states here.
    pub fn sealer(mut self, sealer: Sealer) -> Self {
        self.sealer = Some(sealer);
        self
    }

    /// `instructions` of `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Cache TTL of both `server/discover` and `tools/list` results.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.discover_ttl = ttl;
        self.list_ttl = ttl;
        self
    }

    /// Cache TTL of `server/discover` results.
    pub fn discover_ttl(mut self, ttl: Duration) -> Self {
        self.discover_ttl = ttl;
        self
    }

    /// Cache TTL of `tools/list` results.
    pub fn list_ttl(mut self, ttl: Duration) -> Self {
        self.list_ttl = ttl;
        self
    }

    /// `cacheScope` of cacheable results (default `public`: nothing listed depends on the caller).
    pub fn cache_scope(mut self, scope: CacheScope) -> Self {
        self.cache_scope = scope;
        self
    }

    /// Cap on one `inputResponses` entry the server uses, in bytes of serialized JSON
    /// (default [`DEFAULT_MAX_ANSWER_BYTES`](Self::DEFAULT_MAX_ANSWER_BYTES)). A larger
    /// answer is -32602 before any tool code runs: answers are untrusted, and one a tool
    /// keeps in its state (or journals) could not be sealed anyway.
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.max_answer_bytes = bytes;
        self
    }

    /// Cap on all the `inputResponses` entries one round uses together, in bytes of
    /// serialized JSON (default
    /// [`DEFAULT_MAX_ANSWERS_TOTAL_BYTES`](Self::DEFAULT_MAX_ANSWERS_TOTAL_BYTES)); more is -32602.
    pub fn max_answers_total_bytes(mut self, bytes: usize) -> Self {
        self.max_answers_total_bytes = bytes;
        self
    }

    /// Registers a tool. Its description is checked ([`Tool::validate`], root
    /// `"type": "object"` input schema, unique name); errors surface at [`build`](Self::build).
    pub fn tool(self, tool: impl Tool) -> Self {
        self.tool_arc(Arc::new(tool))
    }

    /// Registers a shared tool.
    pub fn tool_arc(mut self, tool: Arc<dyn Tool>) -> Self {
        let info = tool.info();
        if let Err(mut e) = tool.validate() {
            if let RegistrationError::Schema { tool, .. } = &mut e
                && tool.is_empty()
            {
                tool.clone_from(&info.name);
            }
            self.errors.push(e);
            return self;
        }
        if info.input_schema.get("type").and_then(Value::as_str) != Some("object") {
            self.errors.push(RegistrationError::InvalidInfo {
                tool: info.name.clone(),
                message: "inputSchema must have root \"type\": \"object\"".into(),
            });
            return self;
        }
        // Clients must drop a tool with invalid `x-mcp-header` annotations from tools/list.
        if let Err(e) = crate::transport::params::header_params(&info.input_schema) {
            self.errors.push(RegistrationError::InvalidInfo {
                tool: info.name.clone(),
                message: format!("inputSchema: invalid x-mcp-header annotation: {e}"),
            });
            return self;
        }
        if info.name.is_empty() {
            self.errors.push(RegistrationError::InvalidInfo {
                tool: info.name.clone(),
                message: "the tool name is empty".into(),
            });
            return self;
        }
        if self.tools.contains_key(&info.name) {
            self.errors
                .push(RegistrationError::DuplicateTool(info.name.clone()));
            return self;
        }
        self.order.push(info.name.clone());
        self.tools
            .insert(info.name.clone(), Registered { tool, info });
        self
    }

    /// The server, or the first registration error.
    pub fn build(self) -> Result<Server, RegistrationError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e);
        }
        let mut sealer = self.sealer.unwrap_or_else(Sealer::random);
        if sealer.config().context.is_none() {
            sealer = sealer.with_context(self.info.name.clone());
        }
        let max_ttl = sealer.config().max_ttl;
        for name in &self.order {
            if let Some(ttl) = self.tools.get(name).and_then(|r| r.info.state_ttl)
                && ttl > max_ttl
            {
                tracing::warn!(
                    tool = %name,
                    ttl_secs = ttl.as_secs(),
                    max_ttl_secs = max_ttl.as_secs(),
                    "the tool's state TTL exceeds the sealer's maximum; its states live max_ttl"
                );
            }
        }
        Ok(Server {
            inner: Arc::new(Inner {
                info: self.info,
                instructions: self.instructions,
                sealer,
                tools: self.tools,
                order: self.order,
                discover_ttl_ms: millis(self.discover_ttl),
                list_ttl_ms: millis(self.list_ttl),
                cache_scope: self.cache_scope,
                max_answer_bytes: self.max_answer_bytes,
                max_answers_total_bytes: self.max_answers_total_bytes,
            }),
        })
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
