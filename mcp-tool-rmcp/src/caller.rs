//! Who is calling: the [`Principal`] that sealed request states are bound to, from what
//! rmcp knows of the request.
//!
//! - Over rmcp's Streamable HTTP server, each request's context carries the HTTP request's
//!   [`http::request::Parts`]. A [`Principal`] already in their extensions (put there by
//!   the team's own authentication layer, e.g. an axum middleware) is used as is; otherwise
//!   the [`Authenticator`] given to [`Mounted::authenticator`](crate::Mounted::authenticator)
//!   turns the headers into one (a bearer token, say); without either, the anonymous
//!   principal.
//! - Over stdio (or any transport without HTTP parts) the caller is the anonymous
//!   principal: the process is one user's, and nothing on the wire says who that is. A state
//!   sealed there opens for any caller of that server who presents it.

use std::sync::Arc;

use mcp_tool_runtime::Principal;
use mcp_tool_runtime::protocol::errors;
use mcp_tool_runtime::transport::auth::{AuthError, Authenticator};
use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;

/// The JSON-RPC code of a request the authenticator refused (inside rmcp's handler the
/// HTTP status is rmcp's; a `401` needs an authentication layer in front of rmcp).
pub const UNAUTHORIZED: i32 = -32001;

/// The principal of one request (see the module docs).
pub(crate) async fn principal(
    cx: &RequestContext<RoleServer>,
    authenticator: Option<&Arc<dyn Authenticator>>,
) -> Result<Principal, ErrorData> {
    let Some(parts) = cx.extensions.get::<http::request::Parts>() else {
        return Ok(Principal::anonymous());
    };
    if let Some(p) = parts.extensions.get::<Principal>() {
        return Ok(p.clone());
    }
    match authenticator {
        None => Ok(Principal::anonymous()),
        Some(auth) => auth.authenticate(parts).await.map_err(refused),
    }
}

fn refused(e: AuthError) -> ErrorData {
    tracing::debug!(
        reason = %errors::for_log_cut(&e.message, errors::MAX_LOGGED_DETAIL),
        "request refused by the authenticator"
    );
    ErrorData::new(
        ErrorCode(UNAUTHORIZED),
        format!("Unauthorized: {}", e.message),
        Some(json!({"wwwAuthenticate": e.challenge})),
    )
}
