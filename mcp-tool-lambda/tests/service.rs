//! The Lambda service driven with the events the platform sends (API Gateway HTTP API /
//! function URL, payload 2.0), parsed by `lambda_http` itself: a two-round call whose second
//! round reaches another instance, plain JSON answers, and legacy sessions refused.

use std::convert::Infallible;

use axum::body::Body;
use axum::response::Response;
use mcp_tool_lambda::{LambdaError, LambdaService, PLATFORM_VARIABLES, service};
use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::transport::http::HttpConfig;
use mcp_tool_runtime::{Server, ServerBuilder, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tower::ServiceExt;

const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const VERSION: &str = "2026-07-28";

/// The arguments of `greet`.
#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A city.
    city: String,
}

/// The form `greet` asks for.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Login {
    /// Your name.
    name: String,
}

/// Greets the caller by the name it gives, in a second round.
#[mcp_tool]
async fn greet(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let login: Login = cx.ask("Your name?").await?;
    Ok(format!("Hello {} in {}", login.name, args.city))
}

fn builder() -> ServerBuilder {
    let keyring = Keyring::from_hex("k1", KEY).expect("key");
    Server::builder(Implementation::new("lambda-test", "1.0"))
        .sealer(Sealer::new(keyring, SealConfig::default()))
        .tool(greet::tool())
}

/// One instance of the function: a fresh server with the shared key.
fn instance() -> LambdaService {
    let server = builder().modern_only().build().expect("server");
    service(server, HttpConfig::default()).expect("service")
}

/// The API Gateway HTTP API (payload 2.0) event of a POST to /mcp with `headers` and `body`,
/// as `lambda_http` parses it.
fn event(headers: Value, body: &Value) -> lambda_http::Request {
    let event = json!({
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": "/mcp",
        "rawQueryString": "",
        "headers": headers,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abcdef",
            "domainName": "abcdef.lambda-url.eu-west-1.on.aws",
            "domainPrefix": "abcdef",
            "http": {"method": "POST", "path": "/mcp", "protocol": "HTTP/1.1",
                     "sourceIp": "192.0.2.1", "userAgent": "test"},
            "requestId": "r1",
            "routeKey": "$default",
            "stage": "$default",
            "time": "02/Dec/2026:03:00:00 +0000",
            "timeEpoch": 1_795_000_000_000_u64
        },
        "body": body.to_string(),
        "isBase64Encoded": false
    });
    lambda_http::request::from_str(&event.to_string()).expect("event")
}

fn call_event(id: u64, params: Value) -> lambda_http::Request {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "lambda-test", "version": "1.0"},
        "progressToken": id
    });
    let headers = json!({
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": "greet"
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    event(headers, &body)
}

async fn send(svc: LambdaService, request: lambda_http::Request) -> (u16, String, Value) {
    let response: Result<Response, Infallible> = svc.oneshot(request).await;
    let response = response.expect("infallible");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .expect("body");
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&bytes)));
    (status, content_type, body)
}

#[tokio::test]
async fn two_rounds_on_two_instances_answer_plain_json() {
    let args = json!({"city": "Lyon"});
    let (status, content_type, first) = send(
        instance(),
        call_event(1, json!({"name": "greet", "arguments": args})),
    )
    .await;
    assert_eq!(status, 200, "{first}");
    // Accept allowed SSE and the request asked for progress: still one JSON body.
    assert_eq!(content_type, "application/json");
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["login"]["method"],
        "elicitation/create"
    );
    let state = result["requestState"].as_str().expect("requestState");

    // The retry meets another (cold) instance: only the state carries the call.
    let (status, content_type, second) = send(
        instance(),
        call_event(
            2,
            json!({
                "name": "greet",
                "arguments": args,
                "inputResponses": {"login": {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": state
            }),
        ),
    )
    .await;
    assert_eq!((status, content_type.as_str()), (200, "application/json"));
    assert_eq!(second["result"]["resultType"], "complete", "{second}");
    assert_eq!(second["result"]["content"][0]["text"], "Hello Ada in Lyon");
}

#[tokio::test]
async fn a_legacy_initialize_is_refused_naming_the_versions_served() {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}});
    let headers = json!({"content-type": "application/json", "accept": "application/json, text/event-stream"});
    let (status, _, answer) = send(instance(), event(headers, &body)).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["data"]["supported"], json!([VERSION]));
    assert_eq!(answer["error"]["data"]["requested"], "2025-11-25");
    // No session was opened: a request naming one is not served as a session's.
    let headers = json!({"content-type": "application/json", "mcp-session-id": "abc",
                         "mcp-protocol-version": "2025-11-25"});
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let (status, _, answer) = send(instance(), event(headers, &ping)).await;
    assert!(status >= 400, "{status} {answer}");
}

#[test]
fn a_server_that_opens_legacy_sessions_is_refused() {
    let dual_era = builder().build().expect("server");
    let err = service(dual_era, HttpConfig::default()).unwrap_err();
    assert!(matches!(err, LambdaError::LegacySessions));
    assert!(err.to_string().contains("modern_only()"), "{err}");
}

#[tokio::test]
async fn run_outside_lambda_names_the_missing_variable() {
    let Some(missing) = PLATFORM_VARIABLES
        .into_iter()
        .find(|v| std::env::var_os(v).is_none())
    else {
        eprintln!("SKIP: every Lambda variable is set in this environment");
        return;
    };
    let server = builder().modern_only().build().expect("server");
    let err = mcp_tool_lambda::run(server, HttpConfig::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, LambdaError::NotOnLambda(v) if v == missing),
        "{err}"
    );
    // A dual-era server is refused before the environment is looked at.
    let err = mcp_tool_lambda::run(builder().build().expect("server"), HttpConfig::default())
        .await
        .unwrap_err();
    assert!(matches!(err, LambdaError::LegacySessions), "{err}");
}

/// `Body` is only named so that the test would not compile if `LambdaService` stopped
/// serving plain `http` requests too.
#[tokio::test]
async fn plain_http_requests_are_served_too() {
    let request = axum::http::Request::post("/mcp")
        .header("content-type", "application/json")
        .body(Body::from(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
        ))
        .expect("request");
    let response = instance().oneshot(request).await.expect("infallible");
    assert_eq!(response.status().as_u16(), 400);
}

/// A function cannot hold a `subscriptions/listen` stream: `service` closes subscriptions,
/// so `server/discover` declares neither `listChanged` nor `resources.subscribe`, where the
/// same server elsewhere declares both.
#[tokio::test]
async fn discover_on_lambda_declares_no_notifications() {
    let dynamic = || {
        builder()
            .modern_only()
            .dynamic(true)
            .build()
            .expect("server")
    };
    let elsewhere = serde_json::to_value(dynamic().capabilities()).unwrap();
    assert_eq!(elsewhere["tools"]["listChanged"], true, "{elsewhere}");
    assert_eq!(elsewhere["resources"]["subscribe"], true, "{elsewhere}");

    let svc = service(dynamic(), HttpConfig::default()).expect("service");
    let mut params = json!({});
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "lambda-test", "version": "1.0"}
    });
    let headers = json!({
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "server/discover"
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": params});
    let (status, _, answer) = send(svc, event(headers, &body)).await;
    assert_eq!(status, 200, "{answer}");
    let caps = &answer["result"]["capabilities"];
    assert!(caps["tools"].is_object(), "{answer}");
    assert!(caps["tools"].get("listChanged").is_none(), "{answer}");
    assert!(caps["resources"].get("subscribe").is_none(), "{answer}");
    assert!(caps["resources"].get("listChanged").is_none(), "{answer}");
}
