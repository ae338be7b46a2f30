//! [`Mounted`]: an rmcp [`ServerHandler`] that serves our tools, prompts and resources beside
//! the team's handler.
//!
//! The lists (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`) are
//! the team's with ours appended on their last page; `tools/call`, `prompts/get`,
//! `resources/read` and `completion/complete` of one of our names or URIs go to our
//! [`Server`]; everything else goes to the team's handler, unchanged. `initialize` and
//! `server/discover` answer what the team's handler answers, with our capabilities added.
#![allow(deprecated)] // rmcp 3.11 marks subscribe/unsubscribe deprecated; we only forward them

use std::borrow::Cow;
use std::sync::Arc;

use mcp_tool_runtime::Server;
use mcp_tool_runtime::protocol::Reply;
use mcp_tool_runtime::transport::auth::Authenticator;
use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};

use crate::catalog::Catalog;
use crate::{caller, legacy, notify, translate};

/// The team's rmcp handler `H` with our [`Server`]'s tools, prompts and resources mounted
/// in it. Build it with
/// [`LinearTools::with_linear_tools`](crate::LinearTools::with_linear_tools) (or
/// [`Mounted::new`]) and serve it as any rmcp handler: `.serve(stdio())`, or from a
/// `StreamableHttpService` factory (it is `Clone` when `H` is; the clone shares our server).
#[derive(Clone)]
pub struct Mounted<H> {
    inner: H,
    server: Server,
    catalog: Arc<Catalog>,
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
    /// Mounts `server`'s tools, prompts and resources in `inner`. An item of `inner` with the
    /// name (or URI) of one of ours is hidden (ours answer it); a warning says so when it is
    /// listed.
    pub fn new(inner: H, server: Server) -> Self {
        Self {
            inner,
            catalog: Arc::new(Catalog::of(&server)),
            server,
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

    /// Our server's answer to rmcp's request `params` of `method`: a 2026-07-28 request
    /// statelessly, a legacy session's in direct mode (see `legacy`).
    async fn ours(
        &self,
        method: &str,
        params: &impl serde::Serialize,
        cx: RequestContext<RoleServer>,
    ) -> Result<serde_json::Value, ErrorData> {
        let principal = caller::principal(&cx, self.authenticator.as_ref()).await?;
        let message = translate::request(method, params, &cx)?;
        let reply = if translate::is_legacy(&message) {
            legacy::call(&self.server, message, &cx, &principal).await?
        } else {
            let text = message.to_string();
            notify::forwarding(&cx.peer, |sink| {
                self.server.handle_text(&text, &principal, sink)
            })
            .await
            .map(Reply::into_response)
        };
        translate::answer(reply)
    }
}

/// Appends `ours` to the team's `items` on the last page (no `next_cursor`), after taking
/// out the team's items that `is_ours` says ours hide.
fn append<T: Clone>(
    items: &mut Vec<T>,
    last_page: bool,
    ours: &[T],
    is_ours: impl Fn(&T) -> Option<String>,
) {
    items.retain(|item| match is_ours(item) {
        Some(name) => {
            tracing::warn!(%name, "an item of the handler is hidden by a mounted one of the same name");
            false
        }
        None => true,
    });
    if last_page {
        items.extend(ours.iter().cloned());
    }
}

impl<H: ServerHandler> ServerHandler for Mounted<H> {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.catalog.has_tool(&request.name) {
            return self.inner.call_tool(request, cx).await;
        }
        let result = self.ours("tools/call", &request, cx).await?;
        translate::mrtr(
            result,
            CallToolResponse::Complete,
            CallToolResponse::InputRequired,
        )
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
        let last = result.next_cursor.is_none();
        let catalog = &self.catalog;
        append(&mut result.tools, last, &catalog.tools, |t| {
            catalog.has_tool(&t.name).then(|| t.name.to_string())
        });
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        match self.catalog.tools.iter().find(|t| t.name == name) {
            Some(t) => Some(t.clone()),
            None => self.inner.get_tool(name),
        }
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if !self.catalog.has_prompt(&request.name) {
            return self.inner.get_prompt(request, cx).await;
        }
        let result = self.ours("prompts/get", &request, cx).await?;
        translate::mrtr(
            result,
            GetPromptResponse::Complete,
            GetPromptResponse::InputRequired,
        )
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let mut result = if self.inner.get_info().capabilities.prompts.is_some() {
            self.inner.list_prompts(request, cx).await?
        } else {
            ListPromptsResult::default()
        };
        let last = result.next_cursor.is_none();
        let catalog = &self.catalog;
        append(&mut result.prompts, last, &catalog.prompts, |p| {
            catalog.has_prompt(&p.name).then(|| p.name.clone())
        });
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if !self.server.serves_resource(&request.uri) {
            return self.inner.read_resource(request, cx).await;
        }
        let result = self.ours("resources/read", &request, cx).await?;
        translate::mrtr(
            result,
            ReadResourceResponse::Complete,
            ReadResourceResponse::InputRequired,
        )
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut result = if self.inner.get_info().capabilities.resources.is_some() {
            self.inner.list_resources(request, cx).await?
        } else {
            ListResourcesResult::default()
        };
        let last = result.next_cursor.is_none();
        let server = &self.server;
        append(&mut result.resources, last, &self.catalog.resources, |r| {
            server.serves_resource(&r.uri).then(|| r.uri.clone())
        });
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut result = if self.inner.get_info().capabilities.resources.is_some() {
            self.inner.list_resource_templates(request, cx).await?
        } else {
            ListResourceTemplatesResult::default()
        };
        let last = result.next_cursor.is_none();
        let ours = &self.catalog.templates;
        append(&mut result.resource_templates, last, ours, |t| {
            let same = ours.iter().any(|o| o.uri_template == t.uri_template);
            same.then(|| t.uri_template.clone())
        });
        Ok(result)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let reference = serde_json::to_value(&request.r#ref).unwrap_or_default();
        if !self.catalog.has_reference(&reference) {
            return self.inner.complete(request, cx).await;
        }
        translate::parse(self.ours("completion/complete", &request, cx).await?)
    }

    fn get_info(&self) -> ServerConfig {
        let mut info = self.inner.get_info();
        self.catalog.merge(&mut info.capabilities);
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let mut result = self.inner.initialize(request, cx).await?;
        self.catalog.merge(&mut result.capabilities);
        Ok(result)
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        let mut result = self.inner.negotiate_initialize(request)?;
        self.catalog.merge(&mut result.capabilities);
        Ok(result)
    }

    async fn discover(&self, cx: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let mut result = self.inner.discover(cx).await?;
        self.catalog.merge(&mut result.capabilities);
        Ok(result)
    }

    // ---- everything else is the team's handler's

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    async fn ping(&self, cx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.inner.ping(cx).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.set_level(request, cx).await
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
