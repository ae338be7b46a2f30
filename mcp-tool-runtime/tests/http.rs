//! Streamable HTTP over real loopback sockets: every status and header rule of the
//! transport, authentication and principal binding, mounting, replicas, and a
//! multi-round call driven by the client driver.

mod transport_support;

use std::net::SocketAddr;

use mcp_tool_client::{Driver, HttpTransport};
use mcp_tool_runtime::transport::auth::BearerDemoAuth;
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle, OriginPolicy};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use transport_support::*;

const LOOPBACK: &str = "127.0.0.1:0";

async fn start(config: HttpConfig) -> HttpHandle {
    let addr: SocketAddr = LOOPBACK.parse().unwrap();
    http::spawn(addr, server(), config).await.unwrap()
}

struct Reply {
    status: u16,
    headers: reqwest::header::HeaderMap,
    text: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|_| panic!("not JSON: {:?}", self.text))
    }
    fn code(&self) -> Option<i64> {
        self.json()["error"]["code"].as_i64()
    }
    fn header(&self, name: &str) -> &str {
        self.headers[name].to_str().unwrap()
    }
    /// The `requestState` of an `input_required` result.
    fn state(&self) -> String {
        self.json()["result"]["requestState"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

/// POSTs `body` with the MCP headers derived from it, plus `extra`.
async fn post(url: &str, body: &Value, extra: &[(&str, &str)]) -> Reply {
    post_raw(url, serde_json::to_vec(body).unwrap(), body, extra, &[]).await
}

/// POSTs `body` with the MCP headers derived from it, minus `without`.
async fn post_without(url: &str, body: &Value, without: &[&str]) -> Reply {
    post_raw(url, serde_json::to_vec(body).unwrap(), body, &[], without).await
}

async fn post_raw(
    url: &str,
    raw: Vec<u8>,
    headers_from: &Value,
    extra: &[(&str, &str)],
    without: &[&str],
) -> Reply {
    let mut req = reqwest::Client::new().post(url);
    let defaults = [
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
    ];
    for (k, v) in defaults
        .into_iter()
        .chain(HttpTransport::mcp_headers(headers_from))
    {
        if !without.contains(&k) && !extra.iter().any(|(e, _)| e.eq_ignore_ascii_case(k)) {
            req = req.header(k, v);
        }
    }
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    let resp = req.body(raw).send().await.unwrap();
    Reply {
        status: resp.status().as_u16(),
        headers: resp.headers().clone(),
        text: resp.text().await.unwrap(),
    }
}

/// The second `book_table` call (id 2): resumes `state` with the `when` answer.
fn retry_with_when(state: &str) -> Value {
    call(
        2,
        json!({
            "requestState": state,
            "inputResponses": {"when": {"action": "accept", "content": {"date": "2026-08-01", "time": "19:30"}}}
        }),
    )
}

fn discover(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"server/discover","params":{"_meta": meta()}})
}

#[tokio::test]
async fn multi_round_call_over_loopback_http() {
    let h = start(HttpConfig::default()).await;
    let mut d = Driver::new(HttpTransport::new(h.url()), booking_host());
    let disc = d.discover().await.unwrap();
    assert_eq!(disc["resultType"], "complete");
    let out = d.call_tool("book_table", args()).await.unwrap();
    assert_eq!(out.rounds, 3);
    assert_eq!(out.structured(), Some(&booked()));
    h.shutdown().await.unwrap();
}

/// What an anonymous client can make `spawn`'s connections hold: each keep-alive connection
/// keeps the slot of its request in flight (the handler's future, held in place), and
/// connections that never finish their headers wait for the header timeout. With 14 of 16
/// connections taken that way, a multi-round call on a connection of its own completes.
#[tokio::test]
async fn a_multi_round_call_completes_while_connections_are_held() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let h = start(HttpConfig::default().max_connections(16)).await;
    let addr = h.local_addr();
    let body = serde_json::to_string(&discover(1)).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nMCP-Protocol-Version: {}\r\nMcp-Method: server/discover\r\n\
         Content-Length: {}\r\n\r\n{body}",
        transport_support::VERSION,
        body.len()
    );
    let mut held = Vec::new();
    // eight connections that made a request and stay open, idle
    for _ in 0..8 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut buf = vec![0u8; 4096];
        let n = s.read(&mut buf).await.unwrap();
        assert!(
            buf[..n].starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&buf[..n])
        );
        held.push(s);
    }
    // six that never finish their headers
    for _ in 0..6 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Ty")
            .await
            .unwrap();
        held.push(s);
    }
    let mut d = Driver::new(HttpTransport::new(h.url()), booking_host());
    let out = d.call_tool("book_table", args()).await.unwrap();
    assert_eq!(out.rounds, 3);
    assert_eq!(out.structured(), Some(&booked()));
    drop(held);
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn get_and_delete_are_405() {
    let h = start(HttpConfig::default()).await;
    let c = reqwest::Client::new();
    for resp in [
        c.get(h.url()).send().await.unwrap(),
        c.put(h.url()).send().await.unwrap(),
    ] {
        assert_eq!(resp.status().as_u16(), 405);
        assert_eq!(resp.headers()["allow"], "POST");
    }
    // A dual-era server (the default) closes legacy sessions with DELETE: without the
    // session's id it is a bad request.
    let resp = c.delete(h.url()).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    // A modern-only server has no sessions: DELETE is not allowed.
    let modern_only = mcp_tool_runtime::server::Server::builder(
        mcp_tool_runtime::protocol::Implementation::new("modern", "1"),
    )
    .tool(hand_written::BookTable)
    .modern_only()
    .build()
    .unwrap();
    let m = http::spawn(
        "127.0.0.1:0".parse().unwrap(),
        modern_only,
        HttpConfig::default(),
    )
    .await
    .unwrap();
    let resp = c.delete(m.url()).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 405);
    assert_eq!(resp.headers()["allow"], "POST");
}

#[tokio::test]
async fn notification_is_202_with_empty_body() {
    let h = start(HttpConfig::default()).await;
    let note =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId": 1}});
    let r = post(&h.url(), &note, &[]).await;
    assert_eq!(r.status, 202);
    assert!(r.text.is_empty());
}

#[tokio::test]
async fn success_is_200_json() {
    let h = start(HttpConfig::default()).await;
    let r = post(&h.url(), &discover(7), &[]).await;
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").starts_with("application/json"));
    assert_eq!(r.json()["id"], 7);
    assert_eq!(r.json()["result"]["resultType"], "complete");
}

#[tokio::test]
async fn missing_protocol_version_header_is_32020() {
    let h = start(HttpConfig::default()).await;
    let r = post_without(&h.url(), &discover(1), &["mcp-protocol-version"]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32020)));
    assert_eq!(r.json()["id"], 1);
}

#[tokio::test]
async fn protocol_version_mismatch_is_32020_before_version_support() {
    let h = start(HttpConfig::default()).await;
    // Header and body disagree, and the body's version is unsupported: -32020 wins.
    let mut body = discover(1);
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1999-01-01");
    let r = post(&h.url(), &body, &[("mcp-protocol-version", VERSION)]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32020)));
    // Header and body agree on an unsupported version: -32022 with the supported list.
    let r = post(&h.url(), &body, &[]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32022)));
    assert_eq!(r.json()["error"]["data"]["supported"], json!([VERSION]));
    assert_eq!(r.json()["error"]["data"]["requested"], "1999-01-01");
}

#[tokio::test]
async fn missing_or_wrong_mcp_method_is_32020() {
    let h = start(HttpConfig::default()).await;
    let r = post_without(&h.url(), &discover(1), &["mcp-method"]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32020)));
    let r = post(&h.url(), &discover(1), &[("mcp-method", "tools/list")]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32020)));
    // Header values are case-sensitive.
    let r = post(&h.url(), &discover(1), &[("mcp-method", "Server/Discover")]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32020)));
}

#[tokio::test]
async fn missing_or_wrong_mcp_name_is_32020() {
    let h = start(HttpConfig::default()).await;
    let r = post_without(&h.url(), &call(1, json!({})), &["mcp-name"]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32020)));
    let r = post(&h.url(), &call(1, json!({})), &[("mcp-name", "other_tool")]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32020)));
    // resources/read mirrors params.uri.
    let read = json!({"jsonrpc":"2.0","id":3,"method":"resources/read",
        "params":{"uri":"file:///a.txt","_meta":meta()}});
    let r = post(&h.url(), &read, &[("mcp-name", "file:///b.txt")]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32020)));
}

#[tokio::test]
async fn base64_mcp_name_is_decoded_before_comparing() {
    let h = start(HttpConfig::default()).await;
    // "book_table" in the sentinel form.
    let r = post(
        &h.url(),
        &call(1, json!({})),
        &[("mcp-name", "=?base64?Ym9va190YWJsZQ==?=")],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json()["result"]["resultType"], "input_required");
    // Broken Base64 is a header error.
    let r = post(
        &h.url(),
        &call(1, json!({})),
        &[("mcp-name", "=?base64?***?=")],
    )
    .await;
    assert_eq!((r.status, r.code()), (400, Some(-32020)));
}

#[tokio::test]
async fn unknown_and_removed_methods_are_404() {
    let h = start(HttpConfig::default()).await;
    for method in ["initialize", "ping", "no/such/method"] {
        let body = json!({"jsonrpc":"2.0","id":1,"method":method,"params":{"_meta":meta()}});
        let r = post(&h.url(), &body, &[]).await;
        assert_eq!((r.status, r.code()), (404, Some(-32601)), "{method}");
    }
}

#[tokio::test]
async fn invalid_params_and_missing_capability_are_400() {
    let h = start(HttpConfig::default()).await;
    // No _meta at all: -32602 (the header's version has nothing to disagree with).
    let body = json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}});
    let r = post(&h.url(), &body, &[]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32602)));
    // Unknown tool: -32602.
    let mut body = call(2, json!({}));
    body["params"]["name"] = json!("nope");
    let r = post(&h.url(), &body, &[]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32602)));
    // The tool may elicit, the client declared nothing: -32021.
    let mut body = call(3, json!({}));
    body["params"]["_meta"] = meta_with(json!({}));
    let r = post(&h.url(), &body, &[]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32021)));
    assert!(r.json()["error"]["data"]["requiredCapabilities"]["elicitation"].is_object());
}

#[tokio::test]
async fn tool_execution_errors_are_200() {
    let h = start(HttpConfig::default()).await;
    let mut body = call(1, json!({}));
    body["params"]["arguments"]["party_size"] = json!(0);
    let r = post(&h.url(), &body, &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"]["isError"], true);
    assert!(r.text.contains("party_size"));
}

#[tokio::test]
async fn parse_errors_and_invalid_envelopes_are_400() {
    let h = start(HttpConfig::default()).await;
    let r = post_raw(&h.url(), b"{not json".to_vec(), &discover(1), &[], &[]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32700)));
    assert!(r.json().get("id").is_none());
    let r = post(&h.url(), &json!([discover(1)]), &[]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32600)));
    // A response is not something a client may send.
    let r = post(&h.url(), &json!({"jsonrpc":"2.0","id":1,"result":{}}), &[]).await;
    assert_eq!((r.status, r.code()), (400, Some(-32600)));
}

#[tokio::test]
async fn foreign_origin_is_403_and_local_or_listed_origins_pass() {
    let h = start(HttpConfig::default().allow_origin("https://app.example.com")).await;
    let r = post(
        &h.url(),
        &discover(1),
        &[("origin", "https://evil.example")],
    )
    .await;
    assert_eq!(r.status, 403);
    for origin in [
        "http://localhost:5173",
        "http://127.0.0.1",
        "https://app.example.com",
    ] {
        let r = post(&h.url(), &discover(1), &[("origin", origin)]).await;
        assert_eq!(r.status, 200, "{origin}");
    }
    // A strict list turns the localhost default off.
    let h =
        start(HttpConfig::default().origins(OriginPolicy::only(["https://app.example.com"]))).await;
    let r = post(
        &h.url(),
        &discover(1),
        &[("origin", "http://localhost:5173")],
    )
    .await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn oversize_body_is_413() {
    let h = start(HttpConfig::default().max_body_bytes(1024)).await;
    let mut body = discover(1);
    body["params"]["padding"] = json!("x".repeat(4096));
    let r = post(&h.url(), &body, &[]).await;
    assert_eq!(r.status, 413);
    // Just under the limit is fine.
    let r = post(&h.url(), &discover(1), &[]).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn default_body_limit_is_1_mib() {
    assert_eq!(http::DEFAULT_MAX_BODY_BYTES, 1024 * 1024);
    let h = start(HttpConfig::default()).await;
    let mut body = discover(1);
    body["params"]["padding"] = json!("x".repeat(1024 * 1024 + 1));
    let r = post(&h.url(), &body, &[]).await;
    assert_eq!(r.status, 413);
    // Just under the limit is read and answered.
    let mut body = discover(2);
    body["params"]["padding"] = json!("x".repeat(1024 * 1024 - 1024));
    let r = post(&h.url(), &body, &[]).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn non_json_content_type_is_415() {
    let h = start(HttpConfig::default()).await;
    let r = post(&h.url(), &discover(1), &[("content-type", "text/plain")]).await;
    assert_eq!(r.status, 415);
}

#[tokio::test]
async fn refused_authentication_is_401_with_challenge() {
    let h =
        start(HttpConfig::default().authenticator(BearerDemoAuth::new().allow(["alice"]))).await;
    let r = post(&h.url(), &discover(1), &[]).await;
    assert_eq!(r.status, 401);
    assert!(r.header("www-authenticate").starts_with("Bearer"));
    let r = post(
        &h.url(),
        &discover(1),
        &[("authorization", "Bearer mallory")],
    )
    .await;
    assert_eq!(r.status, 401);
    assert!(r.header("www-authenticate").contains("invalid_token"));
    let r = post(&h.url(), &discover(1), &[("authorization", "Bearer alice")]).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn state_sealed_for_one_principal_does_not_open_for_another() {
    let h = start(HttpConfig::default().authenticator(BearerDemoAuth::new())).await;
    let alice = [("authorization", "Bearer alice")];
    let bob = [("authorization", "Bearer bob")];
    let r = post(&h.url(), &call(1, json!({})), &alice).await;
    assert_eq!(r.status, 200);
    let retry = retry_with_when(&r.state());
    let r = post(&h.url(), &retry, &bob).await;
    assert_eq!((r.status, r.code()), (400, Some(-32602)));
    assert!(!r.text.contains("bob") && !r.text.contains("alice"));
    let r = post(&h.url(), &retry, &alice).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"]["resultType"], "input_required");
    assert!(r.json()["result"]["inputRequests"]["confirm"].is_object());
}

#[tokio::test]
async fn a_retry_can_go_to_another_replica() {
    let a = start(HttpConfig::default()).await;
    let b = start(HttpConfig::default()).await;
    let r = post(&a.url(), &call(1, json!({})), &[]).await;
    let retry = retry_with_when(&r.state());
    let r = post(&b.url(), &retry, &[]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json()["result"]["resultType"], "input_required");
}

#[tokio::test]
async fn router_mounts_in_an_application_at_a_custom_path() {
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(http::router(server(), HttpConfig::default().path("rpc")));
    let listener = tokio::net::TcpListener::bind(LOOPBACK).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let base = format!("http://{addr}");
    let health = reqwest::get(format!("{base}/health")).await.unwrap();
    assert_eq!(health.text().await.unwrap(), "ok");
    let r = post(&format!("{base}/rpc"), &discover(1), &[]).await;
    assert_eq!(r.status, 200);
    let r = post(&format!("{base}/mcp"), &discover(1), &[]).await;
    assert_eq!(r.status, 404);
}

/// `spawn` sends the endpoint's `POST` straight to its handler and everything else through
/// the router: every request here is answered as the bare router answers it.
#[tokio::test]
async fn spawn_answers_every_request_as_the_router_does() {
    let spawned = start(HttpConfig::default()).await;
    let listener = tokio::net::TcpListener::bind(LOOPBACK).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = http::router(server(), HttpConfig::default());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let bases = [
        format!("http://{}", spawned.local_addr()),
        format!("http://{addr}"),
    ];
    let client = reqwest::Client::new();
    let mut answers: Vec<Vec<(u16, Option<i64>)>> = Vec::new();
    for base in &bases {
        let mut seen = Vec::new();
        // the endpoint's POST, with and without a query; another path; a trailing slash
        for path in ["/mcp", "/mcp?x=1", "/other", "/mcp/"] {
            let r = post(&format!("{base}{path}"), &discover(1), &[]).await;
            let code = serde_json::from_str::<Value>(&r.text)
                .ok()
                .and_then(|v| v["error"]["code"].as_i64());
            seen.push((r.status, code));
        }
        // other methods on the endpoint's path
        for method in [
            reqwest::Method::PUT,
            reqwest::Method::GET,
            reqwest::Method::DELETE,
        ] {
            let r = client
                .request(method, format!("{base}/mcp"))
                .send()
                .await
                .unwrap();
            seen.push((r.status().as_u16(), None));
        }
        answers.push(seen);
    }
    assert_eq!(answers[0], answers[1]);
    let statuses: Vec<u16> = answers[0].iter().map(|(s, _)| *s).collect();
    // (DELETE without a session id is a bad request)
    assert_eq!(statuses, [200, 200, 404, 404, 405, 405, 400], "{answers:?}");
}

/// A tool whose `region` argument is mirrored into `Mcp-Param-Region`.
struct RegionTool;

impl mcp_tool_runtime::Tool for RegionTool {
    fn info(&self) -> mcp_tool_runtime::ToolInfo {
        let schema = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "limit":{"type":"integer","x-mcp-header":"Limit"},
            "query":{"type":"string"}},"required":["region","query"]});
        mcp_tool_runtime::ToolInfo::new("run_query")
            .input_schema(schema.as_object().unwrap().clone())
    }

    fn step<'a>(
        &'a self,
        _cx: &'a mut mcp_tool_runtime::ToolContext,
        args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> mcp_tool_runtime::manual::BoxFuture<
        'a,
        Result<mcp_tool_runtime::manual::Step, mcp_tool_runtime::ToolError>,
    > {
        Box::pin(async move {
            let args: serde_json::Value = mcp_tool_runtime::manual::parse_args(args)?;
            let region = args["region"].as_str().unwrap_or_default().to_owned();
            Ok(mcp_tool_runtime::manual::Step::Complete(
                mcp_tool_runtime::protocol::CallToolResult::text(format!("ran in {region}")),
            ))
        })
    }
}

#[tokio::test]
async fn x_mcp_header_parameters_are_checked_and_mirrored() {
    let server = mcp_tool_runtime::Server::builder(
        mcp_tool_runtime::protocol::Implementation::new("p", "1"),
    )
    .tool(RegionTool)
    .build()
    .unwrap();
    let h = http::spawn(LOOPBACK.parse().unwrap(), server, HttpConfig::default())
        .await
        .unwrap();
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"run_query","arguments":{"region":"us-west1","limit":42,"query":"select 1"},"_meta":meta()}});
    let r = post(&h.url(), &body, &[("mcp-param-limit", "42")]).await;
    assert_eq!(
        (r.status, r.code()),
        (400, Some(-32020)),
        "missing Mcp-Param-Region"
    );
    let r = post(
        &h.url(),
        &body,
        &[("mcp-param-region", "eu-west1"), ("mcp-param-limit", "42")],
    )
    .await;
    assert_eq!(
        (r.status, r.code()),
        (400, Some(-32020)),
        "wrong Mcp-Param-Region"
    );
    let r = post(
        &h.url(),
        &body,
        &[
            ("Mcp-Param-Region", "us-west1"),
            ("Mcp-Param-Limit", "42.0"),
        ],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    // An argument that is absent expects no header.
    let mut no_limit = body.clone();
    no_limit["params"]["arguments"]
        .as_object_mut()
        .unwrap()
        .remove("limit");
    let r = post(
        &h.url(),
        &no_limit,
        &[("mcp-param-region", "=?base64?dXMtd2VzdDE=?=")],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);

    // The HTTP client transport learns the annotations from tools/list and mirrors them.
    let mut d = Driver::new(
        HttpTransport::new(h.url()),
        mcp_tool_runtime::testing::ScriptedHost::new(Default::default()),
    );
    let args = json!({"region":"Zürich","limit":7,"query":"q"});
    assert_eq!(
        d.call_tool("run_query", args.clone())
            .await
            .unwrap_err()
            .rpc_code(),
        Some(-32020)
    );
    d.list_tools().await.unwrap();
    let out = d.call_tool("run_query", args).await.unwrap();
    assert_eq!(out.text(), "ran in Zürich");
}
