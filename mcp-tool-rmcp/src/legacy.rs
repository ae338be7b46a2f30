//! Callers in a legacy rmcp session (a client that opened it with `initialize`, protocol
//! 2025-11-25 or 2025-06-18): such a client cannot take `input_required` results, so a
//! mounted tool runs in our dual era's direct mode instead. Each call gets a legacy session
//! of our server of its own, opened with what the client declared at `initialize`; the
//! tool's `ask` / `sample` / `roots` become real requests sent to the client through rmcp's
//! peer (elicitation/create, sampling/createMessage, roots/list), and their answers are
//! delivered back to the session. The session closes when the call ends. (`logging/setLevel`
//! is the team's handler's: a mounted tool's `cx.log` reaches a legacy client only through a
//! per-request level, which legacy requests do not carry.)

use std::sync::Arc;

use mcp_tool_runtime::protocol::{ErrorObject, JsonRpcResponse, RequestId};
use mcp_tool_runtime::server::NotificationSink;
use mcp_tool_runtime::server::Session;
use mcp_tool_runtime::{Principal, Server};
use rmcp::ErrorData;
use rmcp::model::ServerRequest;
use rmcp::service::{Peer, RequestContext, RoleServer, ServiceError};
use serde_json::{Value, json};

use crate::{notify, translate};

/// Our server's answer to `message` (our `tools/call`, `prompts/get`, `resources/read` or
/// `completion/complete` request, see [`translate::request`]) from a legacy session's
/// caller.
pub(crate) async fn call(
    server: &Server,
    message: Value,
    cx: &RequestContext<RoleServer>,
    principal: &Principal,
) -> Result<Option<JsonRpcResponse>, ErrorData> {
    let session = open(server, cx, principal).await?;
    let (sink, mut rx) = NotificationSink::channel();
    let work = server.handle_in_session(session.clone(), message, sink);
    let relay = async {
        while let Some(out) = rx.recv().await {
            relay(&cx.peer, &session, out).await;
        }
    };
    let (reply, ()) = tokio::join!(work, relay);
    session.close();
    Ok(reply)
}

/// A session of our server for this call, as if the client had sent it its `initialize`.
async fn open(
    server: &Server,
    cx: &RequestContext<RoleServer>,
    principal: &Principal,
) -> Result<Arc<Session>, ErrorData> {
    let hello = cx
        .peer
        .peer_info()
        .and_then(|info| serde_json::to_value(&*info).ok())
        .unwrap_or_else(|| {
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "unknown", "version": "0"}})
        });
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello});
    let (session, reply) = server.initialize(&init, principal);
    let Some(session) = session else {
        return Err(match reply.error_object() {
            Some(e) => translate::error(e),
            None => translate::internal("initialize opened no session"),
        });
    };
    // `notifications/initialized` marks the session ready; it has no answer.
    let ready = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    server
        .handle_in_session(session.clone(), ready, NotificationSink::none())
        .await;
    Ok(session)
}

/// One message the call sends the client: a request goes through rmcp's peer and its
/// answer back to the session (each on its own task, so requests sent together are
/// answered together); a notification is forwarded.
async fn relay(peer: &Peer<RoleServer>, session: &Arc<Session>, out: Value) {
    let Some(id) = out.get("id").and_then(RequestId::from_value) else {
        notify::forward(peer, out).await;
        return;
    };
    let request = json!({"method": out.get("method"), "params": out.get("params")});
    let peer = peer.clone();
    let session = session.clone();
    tokio::spawn(async move {
        let answer = match serde_json::from_value::<ServerRequest>(request) {
            Ok(r) => ask(&peer, r).await,
            Err(e) => Err(ErrorObject::new(
                -32603,
                format!("not an rmcp request: {e}"),
            )),
        };
        session.deliver(&id, answer);
    });
}

async fn ask(peer: &Peer<RoleServer>, request: ServerRequest) -> Result<Value, ErrorObject> {
    match peer.send_request(request).await {
        Ok(result) => serde_json::to_value(result)
            .map_err(|e| ErrorObject::new(-32603, format!("the client's answer: {e}"))),
        Err(ServiceError::McpError(e)) => {
            let mut o = ErrorObject::new(i64::from(e.code.0), e.message);
            o.data = e.data;
            Err(o)
        }
        Err(e) => Err(ErrorObject::new(-32603, e.to_string())),
    }
}
