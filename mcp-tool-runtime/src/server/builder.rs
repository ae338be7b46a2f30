//! [`ServerBuilder`]: registry of tools and server settings.

use std::sync::Arc;
use std::time::Duration;

use super::registry::{self, Catalog};
use super::{Inner, Server};
use crate::error::RegistrationError;
use crate::legacy::{LegacyConfig, Sessions};
use crate::prompt::Prompt;
use crate::protocol::{CacheScope, Implementation};
use crate::resource::Resource;
use crate::seal::Sealer;
use crate::state::StateMap;
use crate::tasks::millis;
use crate::tool::Tool;

/// Builds a [`Server`]: `Server::builder(Implementation::new("name", "1.0")).tool(..).build()`.
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    sealer: Option<Sealer>,
    catalog: Catalog,
    dynamic: bool,
    errors: Vec<RegistrationError>,
    discover_ttl: Duration,
    list_ttl: Duration,
    cache_scope: CacheScope,
    max_answer_bytes: usize,
    max_answers_total_bytes: usize,
    state: StateMap,
    read_ttl: Duration,
    page_size: usize,
    legacy: LegacyConfig,
    task_store: Option<Arc<dyn crate::tasks::TaskStore>>,
    task_config: crate::tasks::TaskConfig,
    ignore_scopes: bool,
    ledger: Option<Arc<dyn crate::ledger::Ledger>>,
    once: crate::ledger::OnceConfig,
    skills: Vec<crate::protocol::SkillEntry>,
    dynamic_skill_paths: Vec<String>,
    /// The files of the skills given to [`skill`](Self::skill), by URI.
    skill_files: std::collections::BTreeMap<String, crate::resource::skills::SkillFile>,
    listen_limits: super::listen::ListenLimits,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .field("tools", &self.catalog.order)
            .field("prompts", &self.catalog.prompt_order)
            .field(
                "resources",
                &self
                    .catalog
                    .resources
                    .iter()
                    .map(|r| &r.info.name)
                    .collect::<Vec<_>>(),
            )
            .field("state", &self.state)
            .field("errors", &self.errors)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// Records the outcome of one registration; `build()` reports the first error.
    fn record(mut self, outcome: Result<(), RegistrationError>) -> Self {
        if let Err(e) = outcome {
            self.errors.push(e);
        }
        self
    }

    /// Whether tools, prompts and resources may be added and removed after `build()`
    /// (default `false`). A dynamic server hands out a [`Registry`](super::Registry)
    /// ([`Server::registry`]) and declares `listChanged: true` for tools, prompts and
    /// resources, whose changes its clients are told of (`notifications/*/list_changed`);
    /// a static one declares no `listChanged`, since its lists never change.
    pub fn dynamic(mut self, dynamic: bool) -> Self {
        self.dynamic = dynamic;
        self
    }

    /// Default cache TTL of `server/discover` and `tools/list` results (5 minutes).
    pub const DEFAULT_TTL: Duration = Duration::from_secs(300);
    /// Default cap on one `inputResponses` entry: 64 KiB of serialized JSON.
    pub const DEFAULT_MAX_ANSWER_BYTES: usize = 64 * 1024;
    /// Default cap on all the `inputResponses` entries of one round: 256 KiB of serialized JSON.
    pub const DEFAULT_MAX_ANSWERS_TOTAL_BYTES: usize = 256 * 1024;
    /// Default cache TTL of `resources/read` results (1 minute: contents change more often
    /// than lists).
    pub const DEFAULT_READ_TTL: Duration = Duration::from_secs(60);
    /// Default number of items per page of `tools/list`, `prompts/list`, `resources/list` and
    /// `resources/templates/list`.
    pub const DEFAULT_PAGE_SIZE: usize = 100;

    pub(super) fn new(info: Implementation) -> Self {
        ServerBuilder {
            info,
            instructions: None,
            sealer: None,
            catalog: Catalog::default(),
            dynamic: false,
            errors: Vec::new(),
            discover_ttl: Self::DEFAULT_TTL,
            list_ttl: Self::DEFAULT_TTL,
            cache_scope: CacheScope::Public,
            max_answer_bytes: Self::DEFAULT_MAX_ANSWER_BYTES,
            max_answers_total_bytes: Self::DEFAULT_MAX_ANSWERS_TOTAL_BYTES,
            state: StateMap::new(),
            skills: Vec::new(),
            dynamic_skill_paths: Vec::new(),
            skill_files: std::collections::BTreeMap::new(),
            read_ttl: Self::DEFAULT_READ_TTL,
            page_size: Self::DEFAULT_PAGE_SIZE,
            legacy: LegacyConfig::default(),
            task_store: None,
            task_config: crate::tasks::TaskConfig::default(),
            ignore_scopes: false,
            ledger: None,
            once: crate::ledger::OnceConfig::default(),
            listen_limits: super::listen::ListenLimits::default(),
        }
    }

    /// The caps on open `subscriptions/listen` subscriptions: per process and per
    /// principal (defaults [`DEFAULT_MAX_SUBSCRIPTIONS`](super::listen::DEFAULT_MAX_SUBSCRIPTIONS)
    /// and [`DEFAULT_MAX_SUBSCRIPTIONS_PER_PRINCIPAL`](super::listen::DEFAULT_MAX_SUBSCRIPTIONS_PER_PRINCIPAL));
    /// beyond them a listen is refused busy (-32000, HTTP `503` with `Retry-After`). Each
    /// is at least 1.
    pub fn listen_limits(mut self, limits: super::listen::ListenLimits) -> Self {
        self.listen_limits = super::listen::ListenLimits {
            max_open: limits.max_open.max(1),
            max_per_principal: limits.max_per_principal.max(1),
        };
        self
    }

    /// Does not enforce the scopes tools, prompts and resources declare (`scopes = "…"`):
    /// for servers whose authenticator grants no scopes (stdio, `AnonymousAuth`, the demo
    /// authenticators, a gateway that checks permissions itself). `build` logs once
    /// that declared scopes are not enforced. Scopes are still listed (`_meta`), and tools
    /// can still ask `cx.principal().has_scope(..)` themselves. By default scopes are
    /// enforced: a caller without one is refused before any code runs
    /// ([`INSUFFICIENT_SCOPE`](crate::protocol::INSUFFICIENT_SCOPE)).
    pub fn ignore_scopes(self) -> Self {
        self.enforce_scopes(false)
    }

    /// Whether declared scopes are enforced (`true`, the default) or ignored (`false`, as
    /// [`ignore_scopes`](Self::ignore_scopes)); for code that decides at run time, e.g.
    /// enforcing only when a real token validator is configured.
    pub fn enforce_scopes(mut self, enforce: bool) -> Self {
        self.ignore_scopes = !enforce;
        self
    }

    /// Where tasks live (the Tasks extension, SEP-2663). Give every replica of a fleet the
    /// same shared store (and the same keyring): a task started on one is continued on any,
    /// and a store that counts ([`TaskStore::create_counted`](crate::tasks::TaskStore::create_counted):
    /// the SQLite, PostgreSQL and Redis stores) keeps the task allowances of
    /// [`task_config`](Self::task_config) for the whole fleet. Without it, a server with a
    /// task-supporting tool keeps its tasks in memory
    /// ([`MemoryTaskStore`](crate::tasks::MemoryTaskStore)), counted per replica.
    pub fn task_store(mut self, store: Arc<dyn crate::tasks::TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// Settings of tasks (TTL, poll interval, lease, bounds). The allowances
    /// (`max_tasks_per_principal`, `max_stored_tasks`) are counted in the task store when it
    /// counts (shared by the replicas), per replica otherwise. `tasks/get`, `tasks/update`
    /// and `tasks/cancel` check the scopes of the task's tool with each request's
    /// credentials, as `tools/call` does.
    pub fn task_config(mut self, config: crate::tasks::TaskConfig) -> Self {
        self.task_config = config;
        self
    }

    /// Settings of legacy (2025-11-25) sessions. A server is dual-era by default: an
    /// `initialize` opens a session in which the same tools, prompts and resources are
    /// served to 2025-11-25 clients.
    pub fn legacy(mut self, config: LegacyConfig) -> Self {
        self.legacy = config;
        self
    }

    /// A modern-only server: `initialize` is answered with an error naming the versions it
    /// serves (`legacy(LegacyConfig::disabled())`).
    pub fn modern_only(self) -> Self {
        self.legacy(LegacyConfig::disabled())
    }

    /// Cache TTL of completed `resources/read` results (default
    /// [`DEFAULT_READ_TTL`](Self::DEFAULT_READ_TTL); a resource may set its own). A read that
    /// took more than one request is never cacheable: its TTL is 0.
    pub fn read_ttl(mut self, ttl: Duration) -> Self {
        self.read_ttl = ttl;
        self
    }

    /// Items per page of list results (default [`DEFAULT_PAGE_SIZE`](Self::DEFAULT_PAGE_SIZE),
    /// at least 1); longer lists are paginated with opaque cursors.
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// The ledger of single-use rounds (`#[mcp_tool(once)]`, see [`Ledger`](crate::store::Ledger)).
    /// By default each server has its own [`MemoryLedger`](crate::store::MemoryLedger):
    /// replicas of a fleet must share one (a durable backend) for the guarantee to hold
    /// across them.
    pub fn ledger(mut self, ledger: Arc<dyn crate::ledger::Ledger>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// One [`Store`](crate::store::Store) for both tasks and the ledger of single-use
    /// rounds: the same as [`task_store`](Self::task_store) and [`ledger`](Self::ledger)
    /// with that value. Turns tasks on.
    pub fn store(self, store: Arc<dyn crate::store::Store>) -> Self {
        let tasks: Arc<dyn crate::tasks::TaskStore> = store.clone();
        self.task_store(tasks).ledger(store)
    }

    /// How long a replay of a single-use round waits for the first presentation, still
    /// running, to finish (default 2 s); then it is answered busy (-32000 with
    /// `data.retryAfter`; `503` with `Retry-After` over HTTP).
    pub fn once_wait(mut self, wait: Duration) -> Self {
        self.once.wait = wait;
        self
    }

    /// The largest outcome of a single-use round the ledger keeps, in bytes of JSON
    /// (default 1 MiB). A larger one is answered to the first presentation as it is, and
    /// replays get -32603: it ran once and is never run again.
    pub fn max_once_outcome_bytes(mut self, max: usize) -> Self {
        self.once.max_outcome_bytes = max;
        self
    }

    /// Registers a prompt (errors surface at [`build`](Self::build)).
    /// An `Arc` of a prompt (`Arc<dyn Prompt>`) is a prompt too.
    pub fn prompt(mut self, prompt: impl Prompt) -> Self {
        let outcome =
            registry::checked_prompt(Arc::new(prompt)).and_then(|r| self.catalog.insert_prompt(r));
        self.record(outcome)
    }

    /// Registers a resource or a resource template (errors surface at [`build`](Self::build)).
    /// An `Arc` of a resource (`Arc<dyn Resource>`) is a resource too.
    pub fn resource(mut self, resource: impl Resource) -> Self {
        let outcome = registry::checked_resource(Arc::new(resource))
            .and_then(|r| self.catalog.insert_resource(r));
        self.record(outcome)
    }

    /// Serves an Agent Skill held in memory (the Skills extension,
    /// `io.modelcontextprotocol/skills`): each of its files a `skill://<path>/<file>`
    /// resource; `skills/list` and `skills/get` give its frontmatter and a manifest of its
    /// files (SHA-256 digests and sizes), and `resources/directory/read` lists the
    /// directories. A skill that breaks a rule (see [`Skill`](crate::resource::skills::Skill))
    /// is refused at [`build`](Self::build) with [`RegistrationError::Skill`]. A file two
    /// skills share (a nested skill's, in its parent's manifest too) is served once, and
    /// refused if they give it different bytes. To serve a skills directory, see the crate
    /// `mcp-tool-skills` (`.skills(dir)`).
    pub fn skill(mut self, skill: crate::resource::skills::Skill) -> Self {
        let (entry, files) = match skill.checked() {
            Ok(checked) => checked,
            Err(e) => return self.refuse(e),
        };
        for file in files {
            let own_md = file.uri() == entry.uri;
            match self.skill_files.get(file.uri()) {
                Some(prev) if !prev.same_bytes(&file) => {
                    return self.refuse(RegistrationError::Skill {
                        path: file.uri().to_owned(),
                        message: "two skills serve this file with different bytes".into(),
                    });
                }
                // A nested skill's SKILL.md, already served for its parent: named and
                // described from its own frontmatter.
                Some(_) if own_md => match registry::checked_resource(Arc::new(file)) {
                    Ok(reg) => {
                        let mut resources = self.catalog.resources.iter_mut();
                        let found = resources.find(|r| r.info.address == reg.info.address);
                        if let Some(slot) = found {
                            *slot = Arc::new(reg);
                        }
                    }
                    Err(e) => return self.refuse(e),
                },
                Some(_) => {}
                None => {
                    self.skill_files.insert(file.uri().to_owned(), file.clone());
                    self = self.resource(file);
                }
            }
        }
        self.skills.push(entry);
        self
    }

    /// Records a registration error that [`build`](Self::build) returns: for crates that
    /// register things on the builder (`mcp-tool-skills`' `.skills(dir)`) and refuse their
    /// input before it reaches it.
    pub fn refuse(mut self, error: RegistrationError) -> Self {
        self.errors.push(error);
        self
    }

    /// Publishes a skill whose files are generated (`"resources": "dynamic"`); register the
    /// resources that serve them too. See [`DynamicSkill`](crate::resource::skills::DynamicSkill).
    pub fn dynamic_skill(mut self, skill: crate::resource::skills::DynamicSkill) -> Self {
        match skill.entry() {
            Ok(entry) => {
                self.skills.push(entry);
                self.dynamic_skill_paths.push(skill.path().to_owned());
                self
            }
            Err(e) => self.refuse(e),
        }
    }

    /// Gives tools an application value of type `T` (a database pool, an HTTP client, a
    /// configuration): a tool or flow takes it as a `State<T>` parameter. One value per
    /// type (a second one of the same type replaces the first). Never serialized; every
    /// replica has its own. An `Arc<T>` the application holds already is shared, not copied:
    /// it serves `State<T>` parameters (and `State<Arc<T>>` ones). See [`State`](crate::State).
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
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
    /// What `my_tool::tool()` returns, or an `Arc` of a tool (`Arc<dyn Tool>`), which is a
    /// tool too.
    pub fn tool(mut self, tool: impl Tool) -> Self {
        let outcome =
            registry::checked_tool(Arc::new(tool)).and_then(|r| self.catalog.insert_tool(r));
        self.record(outcome)
    }

    /// The server, or the first registration error (including a tool that takes a
    /// `State<T>` of a type no [`state`](Self::state) call gave).
    pub fn build(mut self) -> Result<Server, RegistrationError> {
        if let Some(e) = std::mem::take(&mut self.errors).into_iter().next() {
            return Err(e);
        }
        if self.dynamic {
            // its value, pointing at the server, is put in place below
            self.state.insert(registry::WeakRegistry::dangling());
        }
        for (name, keys) in self.catalog.state_needs() {
            registry::check_state(&name, &keys, &self.state)?;
        }
        let infos: Vec<&crate::resource::ResourceInfo> =
            self.catalog.resources.iter().map(|r| &r.info).collect();
        let skills = crate::resource::skills::catalog(
            std::mem::take(&mut self.skills),
            &self.dynamic_skill_paths,
            &infos,
        )?;
        let mut sealer = self.sealer.take().unwrap_or_else(Sealer::random);
        if sealer.config().context.is_none() {
            sealer = sealer.with_context(self.info.name.clone());
        }
        let max_ttl = sealer.config().max_ttl;
        for reg in self.catalog.tools.values() {
            registry::warn_ttl(&reg.info, max_ttl);
        }
        // Tasks are on when a tool supports them or a store was given.
        let any_task_tool = self
            .catalog
            .tools
            .values()
            .any(|r| r.info.task != crate::tasks::TaskSupport::Forbidden);
        // The hub of changes: the task engine raises task statuses on it, the registry its
        // list changes, and tools reach it through the state map (`cx.resource_updated`).
        let changes = crate::changes::Changes::new();
        self.state
            .insert(crate::changes::ServerChanges(changes.clone()));
        let tasks = match self.task_store.take() {
            Some(store) => Some(Arc::new(
                crate::tasks::engine::Engine::new(store, self.task_config.clone())
                    .with_changes(changes.clone()),
            )),
            None if any_task_tool => Some(Arc::new(
                crate::tasks::engine::Engine::new(
                    Arc::new(crate::tasks::MemoryTaskStore::new()),
                    self.task_config.clone(),
                )
                .with_changes(changes.clone()),
            )),
            None => None,
        };
        if self.ignore_scopes {
            let declared = self
                .catalog
                .tools
                .values()
                .map(|r| (&r.info.name, &r.info.scopes))
                .chain(
                    self.catalog
                        .prompts
                        .values()
                        .map(|p| (&p.info.name, &p.info.scopes)),
                )
                .chain(
                    self.catalog
                        .resources
                        .iter()
                        .map(|r| (&r.info.name, &r.info.scopes)),
                )
                .filter(|(_, s)| !s.is_empty())
                .count();
            if declared > 0 {
                tracing::warn!(
                    declared,
                    "scopes are ignored (ServerBuilder::ignore_scopes): the scopes that tools, \
                     prompts and resources declare are not enforced"
                );
            }
        }
        let meta = crate::protocol::server_info_meta(&self.info);
        if !self.dynamic {
            return Ok(Server {
                inner: Arc::new(self.inner(tasks, sealer, skills, meta, changes)),
            });
        }
        // A dynamic server's own tools may change it: they take `State<WeakRegistry>`,
        // which does not keep the server alive.
        let inner = Arc::new_cyclic(|weak| {
            self.state
                .insert(registry::WeakRegistry::new(std::sync::Weak::clone(weak)));
            self.inner(tasks, sealer, skills, meta, changes)
        });
        Ok(Server { inner })
    }

    /// The server's shared part, from the builder's settings and what `build` made of them.
    fn inner(
        self,
        tasks: Option<Arc<crate::tasks::engine::Engine>>,
        sealer: Sealer,
        skills: Option<crate::resource::skills::SkillsCatalog>,
        meta: crate::protocol::JsonObject,
        changes: crate::changes::Changes,
    ) -> Inner {
        Inner {
            tasks,
            info: self.info,
            instructions: self.instructions,
            engine: crate::rounds::Engine {
                sealer,
                max_answer_bytes: self.max_answer_bytes,
                max_answers_total_bytes: self.max_answers_total_bytes,
                state: Arc::new(self.state),
                meta: meta.into(),
            },
            catalog: registry::Live::new(self.catalog),
            dynamic: self.dynamic,
            discover_ttl_ms: millis(self.discover_ttl),
            list_ttl_ms: millis(self.list_ttl),
            cache_scope: self.cache_scope,
            skills,
            read_ttl_ms: millis(self.read_ttl),
            page_size: self.page_size,
            enforce_scopes: !self.ignore_scopes,
            ledger: Arc::new(crate::telemetry::TracedLedger(
                self.ledger
                    .unwrap_or_else(|| Arc::new(crate::ledger::MemoryLedger::new())),
            )),
            once: self.once,
            ledger_swept_ms: std::sync::atomic::AtomicU64::new(0),
            changes,
            listeners: super::listeners::Listeners::new(self.listen_limits),
            sessions: Sessions::new(&self.legacy),
            legacy: self.legacy,
        }
    }
}
