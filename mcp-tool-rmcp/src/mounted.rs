//! [`Mounted`]: an rmcp [`ServerHandler`] that serves our tools beside the team's handler.
//!
//! `tools/list` is the team's list with ours appended (on its last page); `tools/call` of
//! one of our names goes to our [`Server`], every other call and every other method to the
//! team's handler, unchanged. `initialize` and `server/discover` answer what the team's
//! handler answers, with the `tools` capability added when we mount a tool.
#![allow(deprecated)] // rmcp 3.11 marks subscribe/unsubscribe deprecated; we only forward them

use std::borrow::Cow;
use std::sync::Arc;

use mcp_tool_runtime::Server;
use mcp_tool_runtime::transport::auth::Authenticator;
use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};

use crate::{caller, legacy, notify, translate};

/// The team's rmcp handler `H` with our [`Server`]'s tools mounted in it. Build it with
/// [`LinearTools::with_linear_tools`](crate::LinearTools::with_linear_tools) (or
/// [`Mounted::new`]) and serve it as any rmcp handler: `.serve(stdio())`, or from a
/// `StreamableHttpService` factory (it is `Clone` when `H` is; the clone shares our server).
#[derive(Clone)]
pub struct Mounted<H> {
    inner: H,
    server: Server,
    tools: Arc<Vec<Tool>>,
    authenticator: Option<Arc<dyn Authenticator>>,
}

impl<H: std::fmt::Debug> std::fmt::Debug for Mounted<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mounted")
            .field("inner", &self.inner)
            .field("server", &self.server)
            .field("authenticator", &self.authenticator.is_some())
            .finish()
    }
}

impl<H: ServerHandler> Mounted<H> {
    /// Mounts `server`'s tools in `inner`. A tool of `inner` with the name of one of ours is
    /// hidden (ours answer that name); a warning says so when it is listed.
    pub fn new(inner: H, server: Server) -> Self {
        let tools = server
            .tools()
            .into_iter()
            .filter_map(|info| {
                let descriptor = serde_json::to_value(info.descriptor()).ok()?;
                match serde_json::from_value::<Tool>(descriptor) {
                    Ok(t) => Some(t),
                    Err(e) => {
                        tracing::error!(tool = %info.name, error = %e, "tool descriptor not representable in rmcp; not listed");
                        None
                    }
                }
            })
            .collect();
        Self {
            inner,
            server,
            tools: Arc::new(tools),
            authenticator: None,
        }
    }

    /// Authenticates HTTP requests with `authenticator` (their headers, as rmcp's Streamable
    /// HTTP server hands them over) to get the principal our states are bound to; a refusal
    /// is JSON-RPC error [`UNAUTHORIZED`](crate::UNAUTHORIZED). Not consulted when the
    /// request already carries a `Principal` extension (from the team's own auth layer), nor
    /// on stdio, where the caller is anonymous.
    pub fn authenticator(mut self, authenticator: impl Authenticator + 'static) -> Self {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    /// The team's handler.
    pub fn inner(&self) -> &H {
        &self.inner
    }

    /// Our server.
    pub fn server(&self) -> &Server {
        &self.server
    }

    fn ours(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }

    /// `caps` with what we add: the `tools` capability when a tool is mounted.
    fn merge(&self, caps: &mut ServerCapabilities) {
        if !self.tools.is_empty() && caps.tools.is_none() {
            caps.tools = Some(ToolsCapability::default());
        }
    }

    async fn call_ours(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let principal = caller::principal(&cx, self.authenticator.as_ref())?;
        let message = translate::call_request(&request, &cx)?;
        let reply = if translate::is_legacy(&message) {
            legacy::call(&self.server, message, &cx, &principal).await?
        } else {
            notify::forwarding(&cx.peer, |sink| {
                self.server.handle_with(message, &principal, sink)
            })
            .await
        };
        translate::call_response(reply)
    }
}

impl<H: ServerHandler> ServerHandler for Mounted<H> {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.ours(&request.name) {
            self.call_ours(request, cx).await
        } else {
            self.inner.call_tool(request, cx).await
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut result = if self.inner.get_info().capabilities.tools.is_some() {
            self.inner.list_tools(request, cx).await?
        } else {
            ListToolsResult::default()
        };
        result.tools.retain(|t| {
            let hidden = self.ours(&t.name);
            if hidden {
                tracing::warn!(tool = %t.name, "the handler's tool is hidden by a mounted tool of the same name");
            }
            !hidden
        });
        if result.next_cursor.is_none() {
            result.tools.extend(self.tools.iter().cloned());
        }
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        match self.tools.iter().find(|t| t.name == name) {
            Some(t) => Some(t.clone()),
            None => self.inner.get_tool(name),
        }
    }

    fn get_info(&self) -> ServerConfig {
        let mut info = self.inner.get_info();
        self.merge(&mut info.capabilities);
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let mut result = self.inner.initialize(request, cx).await?;
        self.merge(&mut result.capabilities);
        Ok(result)
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        let mut result = self.inner.negotiate_initialize(request)?;
        self.merge(&mut result.capabilities);
        Ok(result)
    }

    async fn discover(&self, cx: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let mut result = self.inner.discover(cx).await?;
        self.merge(&mut result.capabilities);
        Ok(result)
    }

    // ---- everything else is the team's handler's

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    async fn ping(&self, cx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.inner.ping(cx).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.inner.complete(request, cx).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.set_level(request, cx).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.inner.get_prompt(request, cx).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.inner.list_prompts(request, cx).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.inner.list_resources(request, cx).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.inner.list_resource_templates(request, cx).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.inner.read_resource(request, cx).await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.inner.accepted_subscription_filter(requested)
    }

    async fn listen(&self, cx: SubscriptionContext) -> Result<(), ErrorData> {
        self.inner.listen(cx).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.subscribe(request, cx).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.unsubscribe(request, cx).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        cx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        self.inner.on_custom_request(request, cx).await
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        cx: NotificationContext<RoleServer>,
    ) {
        self.inner.on_cancelled(notification, cx).await
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        cx: NotificationContext<RoleServer>,
    ) {
        self.inner.on_progress(notification, cx).await
    }

    async fn on_initialized(&self, cx: NotificationContext<RoleServer>) {
        self.inner.on_initialized(cx).await
    }

    async fn on_roots_list_changed(&self, cx: NotificationContext<RoleServer>) {
        self.inner.on_roots_list_changed(cx).await
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        cx: NotificationContext<RoleServer>,
    ) {
        self.inner.on_custom_notification(notification, cx).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.inner.get_task(request, cx).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.update_task(request, cx).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.cancel_task(request, cx).await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        self.inner.list_skills(request, cx).await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.inner.get_skill(request, cx).await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.inner.read_resource_directory(request, cx).await
    }
}
