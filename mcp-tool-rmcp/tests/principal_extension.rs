//! The team's own HTTP authentication in front of rmcp: an axum middleware puts a
//! `Principal` in the request's extensions, and the mounted tools' states are bound to it
//! (rmcp hands the request's `http::request::Parts`, extensions included, to the handler).
//! The example's handler is served in-process by rmcp's `StreamableHttpService`.

#[allow(dead_code)] // its `main` is not used here
#[path = "../examples/rmcp_server.rs"]
mod example;

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use http::{HeaderName, HeaderValue};
use mcp_tool_runtime::Principal;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, Implementation,
    InputResponses, ProtocolVersion,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::json;

/// The team's auth layer (a stand-in: it trusts `X-User`).
async fn team_auth(mut request: Request, next: Next) -> axum::response::Response {
    let user = request
        .headers()
        .get("x-user")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(user) = user {
        request.extensions_mut().insert(Principal::named(user));
    }
    next.run(request).await
}

async fn serve() -> (String, tokio::task::JoinHandle<()>) {
    let handler = example::handler().expect("the example's handler");
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(team_auth));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, task)
}

/// A client that declares elicitation (rounds are sent one at a time, by hand).
#[derive(Clone, Default)]
struct Elicits;

impl ClientHandler for Elicits {
    fn get_info(&self) -> ClientConfig {
        let caps = ClientCapabilities::builder().enable_elicitation().build();
        ClientConfig::new(caps, Implementation::new("principal-test", "0.1.0"))
    }
}

/// A client sending `X-User: user` (none when `user` is empty).
async fn client(url: &str, user: &str) -> RunningService<RoleClient, Elicits> {
    let mut headers = HashMap::new();
    if !user.is_empty() {
        headers.insert(
            HeaderName::from_static("x-user"),
            HeaderValue::from_str(user).unwrap(),
        );
    }
    let config =
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).custom_headers(headers);
    let transport = StreamableHttpClientTransport::from_config(config);
    let discover = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    Elicits
        .serve_with_lifecycle(transport, discover)
        .await
        .expect("connect")
}

fn rate_paris() -> CallToolRequestParams {
    let mut args = serde_json::Map::new();
    args.insert("city".into(), "Paris".into());
    CallToolRequestParams::new("rate_city").with_arguments(args)
}

#[tokio::test]
async fn states_are_bound_to_the_principal_the_team_layer_set() {
    let (url, server) = serve().await;
    let alice = client(&url, "alice").await;
    let bob = client(&url, "bob").await;
    let nobody = client(&url, "").await;

    let first = alice.call_tool_once(rate_paris()).await.expect("round 1");
    let CallToolResponse::InputRequired(ir) = first else {
        panic!("expected input_required, got {first:?}");
    };
    let state = ir.request_state.expect("a requestState");
    let retry = || {
        let answers: InputResponses = [(
            "rating".to_owned(),
            json!({"action": "accept", "content": {"stars": 3}}),
        )]
        .into_iter()
        .collect();
        rate_paris()
            .with_input_responses(answers)
            .with_request_state(state.clone())
    };

    for other in [&bob, &nobody] {
        let err = other
            .call_tool_once(retry())
            .await
            .expect_err("alice's state opens for alice only");
        assert!(
            matches!(&err, ServiceError::McpError(e) if e.code.0 == -32602 && e.message == "invalid requestState"),
            "{err:?}"
        );
    }
    let done = alice.call_tool_once(retry()).await.expect("round 2");
    let CallToolResponse::Complete(r) = done else {
        panic!("expected complete, got {done:?}");
    };
    assert_eq!(
        serde_json::to_value(&r).unwrap()["content"][0]["text"],
        "Paris rated 3 stars"
    );

    for c in [alice, bob, nobody] {
        c.cancel().await.expect("cancel");
    }
    server.abort();
}
