//! rmcp 3.11 (the official Rust SDK) as a *legacy* client of our example server `serve`, and
//! as a dual-era client that must stay modern against it.
//!
//! * `ClientLifecycleMode::Initialize`: rmcp runs `initialize` / `notifications/initialized`
//!   and then answers the server's `elicitation/create`, `sampling/createMessage` and
//!   `roots/list` requests through its `ClientHandler` while `tools/call` is pending:
//!   `get_weather`, `summarize_repo` (the fake model of `mcp-tool-examples` picks three of the
//!   files offered, then summarizes what it was sent) and `list_roots`, over Streamable HTTP
//!   and stdio.
//! * `ClientLifecycleMode::Auto`: rmcp probes `server/discover` and falls back to
//!   `initialize` only for a legacy server; against ours it must stay modern (no
//!   `initialize` on the wire, protocol 2026-07-28, `get_weather` through an MRTR round whose
//!   input key reaches the handler).
//!
//! Every byte between rmcp and the server is recorded (a loopback TCP proxy over HTTP, a
//! tee on the child's pipes over stdio): the assertions read it, and a failure prints it.
//! The same flows run against the FastMCP reference server of the Python SDK 1.30
//! (`tests/python/reference_legacy_server.py`, through the Python harness), which validates
//! the expectations against a legacy server we did not write.
#![allow(deprecated)] // rmcp 3.11 marks sampling and roots deprecated (SEP-2577)

mod python_peer;

use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use mcp_tool_examples::fake_model::{pick_files_answer, summary_answer};
use mcp_tool_examples::repo::Repo;
use mcp_tool_examples::tools::summarize_repo::{PICK_FILES_PROMPT, SYSTEM_PROMPT, summary_text};
use python_peer::{HttpServer, SdkSpec, example_serve_bin, python_dir};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ListRootsResult, ProtocolVersion, Root, SamplingMessage,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";
const LOGIN_MESSAGE: &str = "Please provide your GitHub username";
const STATE_KEY: &str = "a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0";

// ------------------------------------------------------------------------ the wire

/// Bytes seen between the client and the server, in order.
#[derive(Clone, Default)]
struct Tap(Arc<Mutex<Vec<Chunk>>>);

struct Chunk {
    conn: usize,
    to_server: bool,
    bytes: Vec<u8>,
}

impl Tap {
    fn push(&self, conn: usize, to_server: bool, bytes: &[u8]) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Chunk {
                conn,
                to_server,
                bytes: bytes.to_vec(),
            });
    }

    fn joined(&self, to_server: bool) -> String {
        let chunks = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let bytes: Vec<u8> = chunks
            .iter()
            .filter(|c| c.to_server == to_server)
            .flat_map(|c| c.bytes.iter().copied())
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Everything the client sent.
    fn client_sent(&self) -> String {
        self.joined(true)
    }

    /// Everything the server sent.
    fn server_sent(&self) -> String {
        self.joined(false)
    }

    /// The exchange as text: `> ` client to server, `< ` server to client, `[#n]` the TCP
    /// connection over HTTP.
    fn transcript(&self) -> String {
        let chunks = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = String::new();
        let mut last = None;
        for c in chunks.iter() {
            if last != Some((c.conn, c.to_server)) {
                let dir = if c.to_server { '>' } else { '<' };
                out.push_str(&format!("\n{dir} [#{}] ", c.conn));
                last = Some((c.conn, c.to_server));
            }
            out.push_str(&String::from_utf8_lossy(&c.bytes));
        }
        let max = 60_000;
        if out.len() > max {
            let mut cut = out.len() - max;
            while !out.is_char_boundary(cut) {
                cut += 1;
            }
            out = format!("[… {cut} bytes]{}", &out[cut..]);
        }
        out
    }
}

/// A loopback TCP proxy to `upstream` (`host:port`) that records both directions.
async fn recording_proxy(upstream: String, tap: Tap) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
    let addr = listener.local_addr().expect("proxy address");
    tokio::spawn(async move {
        let mut n = 0;
        while let Ok((inbound, _)) = listener.accept().await {
            n += 1;
            let (upstream, tap) = (upstream.clone(), tap.clone());
            tokio::spawn(async move {
                let Ok(outbound) = TcpStream::connect(&upstream).await else {
                    return;
                };
                let (ri, wi) = inbound.into_split();
                let (ro, wo) = outbound.into_split();
                tokio::join!(
                    pipe(ri, wo, tap.clone(), n, true),
                    pipe(ro, wi, tap, n, false)
                );
            });
        }
    });
    addr
}

async fn pipe(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    tap: Tap,
    conn: usize,
    to_server: bool,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                tap.push(conn, to_server, &buf[..n]);
                if to.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown().await;
}

/// A child's stdin (or stdout) that records what passes.
struct Tee<T> {
    inner: T,
    tap: Tap,
}

impl<W: AsyncWrite + Unpin> AsyncWrite for Tee<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &r {
            self.tap.push(0, true, &buf[..*n]);
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Tee<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &r {
            let got = buf.filled()[before..].to_vec();
            if !got.is_empty() {
                self.tap.push(0, false, &got);
            }
        }
        r
    }
}

// ------------------------------------------------------------------------ the host

/// One server request the handler answered.
#[derive(Debug, Clone)]
struct Asked {
    kind: &'static str,
    /// The request id rmcp handed the handler: the server's JSON-RPC id in a legacy session,
    /// the `inputRequests` key in an MRTR round.
    id: Value,
    params: Value,
}

/// Accepts the login form as `octocat`, answers sampling with the fake model of
/// `mcp-tool-examples` (picks from the files offered, summarizes what it was sent), lists two
/// roots, and records everything.
#[derive(Clone)]
struct Host {
    asked: Arc<Mutex<Vec<Asked>>>,
    protocol: ProtocolVersion,
}

impl Host {
    fn new(protocol: ProtocolVersion) -> Host {
        Host {
            asked: Arc::default(),
            protocol,
        }
    }

    fn record(&self, kind: &'static str, cx: &RequestContext<RoleClient>, params: Value) {
        let id = serde_json::to_value(&cx.id).unwrap_or_default();
        self.asked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Asked { kind, id, params });
    }

    fn take(&self) -> Vec<Asked> {
        std::mem::take(&mut *self.asked.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl ClientHandler for Host {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder()
                .enable_elicitation()
                .enable_sampling()
                .enable_roots()
                .build(),
            Implementation::new("rmcp-legacy-peer", "0.1.0"),
        )
        .with_protocol_version(self.protocol.clone())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.record(
            "elicitation",
            &cx,
            serde_json::to_value(&request).unwrap_or_default(),
        );
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "octocat"})))
    }

    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(&request).unwrap_or_default();
        self.record("sampling", &cx, params.clone());
        let prompt = prompt_text(&params);
        let answer = if prompt.starts_with(PICK_FILES_PROMPT) {
            pick_files_answer(&prompt)
        } else {
            summary_answer(&prompt)
        };
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text(answer),
            "fake-model-1".into(),
        )
        .with_stop_reason(CreateMessageResult::STOP_REASON_END_TURN))
    }

    async fn list_roots(
        &self,
        cx: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.record("roots", &cx, Value::Null);
        Ok(ListRootsResult::new(vec![
            Root::new("file:///workspace/tinyweather").with_name("tinyweather"),
            Root::new("file:///home/user/notes").with_name("notes"),
        ]))
    }
}

/// The text of the messages of a sampling request (as JSON).
fn prompt_text(params: &Value) -> String {
    params["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"]["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

// ------------------------------------------------------------------------ targets

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Server {
    Ours,
    Reference,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Via {
    Stdio,
    Http,
}

/// A running session and what is needed to explain a failure.
struct Peer {
    client: RunningService<RoleClient, Host>,
    host: Host,
    tap: Tap,
    server: Server,
    via: Via,
    _http: Option<HttpServer>,
    _child: Option<tokio::process::Child>,
    stderr: Arc<Mutex<String>>,
    _repo: Option<Repo>,
}

impl Peer {
    fn context(&self) -> String {
        context(self.server, self.via, &self.tap, &self.stderr, &self._http)
    }

    /// Ends the session; with `MCP_TOOL_SHOW_WIRE` set, prints the whole exchange first
    /// (`cargo test --test rmcp_legacy -- --nocapture`).
    async fn finish(self) {
        let Peer { client, tap, .. } = self;
        client.cancel().await.expect("cancel");
        if std::env::var_os("MCP_TOOL_SHOW_WIRE").is_some() {
            // Let the transport's closing requests (an HTTP DELETE) through the proxy.
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            eprintln!("--- the wire:{}", tap.transcript());
        }
    }
}

fn context(
    server: Server,
    via: Via,
    tap: &Tap,
    stderr: &Arc<Mutex<String>>,
    http: &Option<HttpServer>,
) -> String {
    let mut s = format!(
        "--- {server:?} server over {via:?}; the wire (> client to server, < server to client):{}\n",
        tap.transcript()
    );
    if let Some(h) = http {
        s.push_str(&format!("--- server stderr:\n{}\n", h.log()));
    }
    let log = stderr.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if !log.is_empty() {
        s.push_str(&format!("--- server stderr:\n{log}\n"));
    }
    s
}

/// The server command: ours, or the reference server on the demo repository.
fn command(server: Server) -> (std::path::PathBuf, Vec<String>, Option<Repo>) {
    match server {
        Server::Ours => (example_serve_bin(), vec![], None),
        Server::Reference => {
            let sdk =
                python_peer::sdk(&SdkSpec::pinned("1.30.0")).unwrap_or_else(|e| panic!("{e}"));
            let repo = Repo::embedded_demo().expect("the demo repository");
            let args = vec![
                python_dir()
                    .join("reference_legacy_server.py")
                    .display()
                    .to_string(),
                "--repo".into(),
                repo.root().display().to_string(),
            ];
            (sdk.python.clone(), args, Some(repo))
        }
    }
}

/// Connects rmcp to `server` over `via` with `lifecycle`; the client asks for `protocol` in
/// `initialize` (if it sends one).
async fn start(
    server: Server,
    via: Via,
    lifecycle: ClientLifecycleMode,
    protocol: ProtocolVersion,
) -> Peer {
    let (program, args, repo) = command(server);
    let host = Host::new(protocol);
    let tap = Tap::default();
    let stderr = Arc::new(Mutex::new(String::new()));
    let (result, http, child) = match via {
        Via::Http => {
            let mut cmd = std::process::Command::new(&program);
            cmd.args(&args)
                .args(["--http", "127.0.0.1:0"])
                .env("RUST_LOG", "warn")
                .env("MCP_TOOL_STATE_KEY", STATE_KEY);
            let http = HttpServer::start(cmd);
            let upstream = http
                .url()
                .trim_start_matches("http://")
                .trim_end_matches("/mcp")
                .to_owned();
            let proxy = recording_proxy(upstream, tap.clone()).await;
            let transport = StreamableHttpClientTransport::from_uri(format!("http://{proxy}/mcp"));
            let r = tokio::time::timeout(
                std::time::Duration::from_secs(60),
                host.clone().serve_with_lifecycle(transport, lifecycle),
            )
            .await;
            (r, Some(http), None)
        }
        Via::Stdio => {
            let mut child = tokio::process::Command::new(&program)
                .args(&args)
                .env("RUST_LOG", "warn")
                .env("MCP_TOOL_STATE_KEY", STATE_KEY)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .expect("start the server");
            let mut err = child.stderr.take().expect("stderr");
            let sink = stderr.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                while let Ok(n) = err.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    sink.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
            let read = Tee {
                inner: child.stdout.take().expect("stdout"),
                tap: tap.clone(),
            };
            let write = Tee {
                inner: child.stdin.take().expect("stdin"),
                tap: tap.clone(),
            };
            let r = tokio::time::timeout(
                std::time::Duration::from_secs(60),
                host.clone().serve_with_lifecycle((read, write), lifecycle),
            )
            .await;
            (r, None, Some(child))
        }
    };
    let client = match result {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => panic!(
            "rmcp could not connect to the {server:?} server over {via:?}: {e}\n{}",
            context(server, via, &tap, &stderr, &http)
        ),
        Err(_) => panic!(
            "rmcp did not connect to the {server:?} server over {via:?} within 60 s\n{}",
            context(server, via, &tap, &stderr, &http)
        ),
    };
    Peer {
        client,
        host,
        tap,
        server,
        via,
        _http: http,
        _child: child,
        stderr,
        _repo: repo,
    }
}

fn call(name: &'static str, args: Value) -> CallToolRequestParams {
    let p = CallToolRequestParams::new(name);
    match args {
        Value::Object(m) => p.with_arguments(m),
        _ => p,
    }
}

fn result_json(r: &CallToolResult) -> Value {
    serde_json::to_value(r).expect("serialize result")
}

async fn call_tool(p: &Peer, name: &'static str, args: Value) -> Value {
    match tokio::time::timeout(
        std::time::Duration::from_secs(60),
        p.client.call_tool(call(name, args)),
    )
    .await
    {
        Ok(Ok(r)) => result_json(&r),
        Ok(Err(e)) => panic!("{name} failed: {e:?}\n{}", p.context()),
        Err(_) => panic!("{name} did not finish within 60 s\n{}", p.context()),
    }
}

/// How many requests with `method` the client sent (compact JSON, as rmcp writes it).
fn count_sent(tap: &Tap, method: &str) -> usize {
    tap.client_sent()
        .matches(&format!("\"method\":\"{method}\""))
        .count()
}

// ------------------------------------------------------------------------ flows

/// `get_weather`, `summarize_repo` and `list_roots` in a legacy session: each server request
/// reached the handler with the server's JSON-RPC id (a number), and the results carry the
/// answers.
async fn legacy_flows(p: &Peer) {
    let ctx = || p.context();

    let r = call_tool(p, "get_weather", json!({"location": "Paris"})).await;
    assert_ne!(r["isError"], true, "{r}\n{}", ctx());
    assert_eq!(
        r["structuredContent"],
        json!({"location": "Paris", "sky": "rain", "highC": 17, "requestedBy": "octocat"}),
        "{}",
        ctx()
    );
    let asked = p.host.take();
    assert_eq!(asked.len(), 1, "{asked:?}\n{}", ctx());
    assert_eq!(asked[0].kind, "elicitation");
    assert!(
        asked[0].id.is_number(),
        "a legacy server request carries a JSON-RPC id, not an input key: {:?}\n{}",
        asked[0].id,
        ctx()
    );
    assert_eq!(asked[0].params["message"], LOGIN_MESSAGE, "{}", ctx());
    let schema = &asked[0].params["requestedSchema"];
    assert_eq!(schema["properties"]["name"]["type"], "string", "{}", ctx());
    assert_eq!(schema["required"], json!(["name"]), "{}", ctx());

    let repo = Repo::embedded_demo().expect("the demo repository");
    let mut listing = format!("{PICK_FILES_PROMPT}\n\nFiles in the repository:\n");
    for f in repo.list_files().expect("list") {
        listing.push_str(&format!("- {f}\n"));
    }
    let picks: Vec<String> = serde_json::from_str(&pick_files_answer(&listing)).unwrap();
    let summary_prompt = summary_text("developer", &repo.read_files(&picks).unwrap());
    let r = call_tool(p, "summarize_repo", json!({"audience": "developer"})).await;
    assert_ne!(r["isError"], true, "{r}\n{}", ctx());
    assert_eq!(
        r["structuredContent"],
        json!({"files": picks, "summary": summary_answer(&summary_prompt)}),
        "{}",
        ctx()
    );
    let asked = p.host.take();
    assert_eq!(asked.len(), 2, "{asked:?}\n{}", ctx());
    for (a, prompt) in asked.iter().zip([&listing, &summary_prompt]) {
        assert_eq!(a.kind, "sampling");
        assert!(a.id.is_number(), "{:?}\n{}", a.id, ctx());
        assert_eq!(prompt_text(&a.params), *prompt, "{}", ctx());
        assert_eq!(a.params["maxTokens"], 400, "{}", ctx());
        assert_eq!(a.params["systemPrompt"], SYSTEM_PROMPT, "{}", ctx());
        assert_eq!(a.params["includeContext"], "none", "{}", ctx());
    }
    assert_ne!(asked[0].id, asked[1].id);

    let r = call_tool(p, "list_roots", json!({})).await;
    assert_eq!(
        r["structuredContent"],
        json!({"count": 2, "roots": [
            {"uri": "file:///workspace/tinyweather", "name": "tinyweather", "local": true},
            {"uri": "file:///home/user/notes", "name": "notes", "local": true},
        ]}),
        "{}",
        ctx()
    );
    let asked = p.host.take();
    assert_eq!(asked.len(), 1, "{asked:?}\n{}", ctx());
    assert_eq!(asked[0].kind, "roots");
    assert!(asked[0].id.is_number(), "{:?}\n{}", asked[0].id, ctx());
}

/// What rmcp did on the wire to open a legacy session: one `initialize` asking for `asked`, the
/// server's answer `2025-11-25`, `notifications/initialized`; over HTTP an `Mcp-Session-Id`.
fn check_handshake(p: &Peer, asked: &str) {
    let ctx = p.context();
    let info = serde_json::to_value(p.client.peer_info().expect("peer info")).unwrap();
    assert_eq!(
        info["protocolVersion"], LEGACY,
        "initialize must answer the legacy revision: {info}\n{ctx}"
    );
    let name = match p.server {
        Server::Ours => "mcp-tool-examples",
        Server::Reference => "reference-legacy-server",
    };
    assert_eq!(info["serverInfo"]["name"], name, "{info}\n{ctx}");
    assert!(info["capabilities"]["tools"].is_object(), "{info}\n{ctx}");
    let sent = p.tap.client_sent();
    assert_eq!(count_sent(&p.tap, "initialize"), 1, "{ctx}");
    assert!(
        sent.contains(&format!("\"protocolVersion\":\"{asked}\"")),
        "rmcp asked for {asked}\n{ctx}"
    );
    assert_eq!(count_sent(&p.tap, "notifications/initialized"), 1, "{ctx}");
    if p.via == Via::Http {
        assert!(
            p.tap
                .server_sent()
                .to_ascii_lowercase()
                .contains("mcp-session-id:"),
            "an HTTP legacy session is named by Mcp-Session-Id\n{ctx}"
        );
    }
}

// ------------------------------------------------------------------------ Initialize mode

/// rmcp's default `ClientConfig` asks `initialize` for its newest revision, 2026-07-28 (which
/// has no `initialize`); a dual-era server answers with 2025-11-25 and rmcp goes legacy.
#[tokio::test]
async fn initialize_mode_over_http() {
    let p = start(
        Server::Ours,
        Via::Http,
        ClientLifecycleMode::Initialize,
        ProtocolVersion::default(),
    )
    .await;
    check_handshake(&p, MODERN);
    assert_eq!(count_sent(&p.tap, "server/discover"), 0, "{}", p.context());
    legacy_flows(&p).await;
    p.finish().await;
}

/// The same over stdio, asking for 2025-11-25 explicitly.
#[tokio::test]
async fn initialize_mode_over_stdio() {
    let p = start(
        Server::Ours,
        Via::Stdio,
        ClientLifecycleMode::Initialize,
        ProtocolVersion::V_2025_11_25,
    )
    .await;
    check_handshake(&p, LEGACY);
    assert_eq!(count_sent(&p.tap, "server/discover"), 0, "{}", p.context());
    legacy_flows(&p).await;
    p.finish().await;
}

/// The expectations hold for the FastMCP reference server (Python SDK 1.30) over both
/// transports, with both requested versions.
#[tokio::test]
async fn initialize_mode_against_the_reference_server() {
    for (via, protocol, asked) in [
        (Via::Http, ProtocolVersion::default(), MODERN),
        (Via::Stdio, ProtocolVersion::V_2025_11_25, LEGACY),
    ] {
        let p = start(
            Server::Reference,
            via,
            ClientLifecycleMode::Initialize,
            protocol,
        )
        .await;
        check_handshake(&p, asked);
        legacy_flows(&p).await;
        p.finish().await;
    }
}

// ------------------------------------------------------------------------ Auto mode

fn auto() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

/// A dual-era rmcp against our dual-era server stays modern: `server/discover`, never
/// `initialize`; protocol 2026-07-28; `get_weather` runs as an MRTR round (the handler gets
/// the input key `github_login`, not a JSON-RPC id).
async fn stays_modern(via: Via) {
    let p = start(Server::Ours, via, auto(), ProtocolVersion::V_2025_11_25).await;
    let ctx = || p.context();
    let info = serde_json::to_value(p.client.peer_info().expect("peer info")).unwrap();
    assert_eq!(info["protocolVersion"], MODERN, "{info}\n{}", ctx());
    assert_eq!(count_sent(&p.tap, "server/discover"), 1, "{}", ctx());
    assert_eq!(
        count_sent(&p.tap, "initialize"),
        0,
        "Auto must not fall back to initialize against a modern server\n{}",
        ctx()
    );
    let r = call_tool(&p, "get_weather", json!({"location": "Paris"})).await;
    assert_eq!(
        r["structuredContent"]["requestedBy"],
        "octocat",
        "{r}\n{}",
        ctx()
    );
    let asked = p.host.take();
    assert_eq!(asked.len(), 1, "{asked:?}\n{}", ctx());
    assert_eq!(asked[0].id, "github_login", "an MRTR input key\n{}", ctx());
    assert!(
        p.tap.client_sent().contains("\"inputResponses\""),
        "the answer went back as inputResponses\n{}",
        ctx()
    );
    assert_eq!(count_sent(&p.tap, "initialize"), 0, "{}", ctx());
    if via == Via::Http {
        assert!(
            !p.tap
                .server_sent()
                .to_ascii_lowercase()
                .contains("mcp-session-id:"),
            "no session for a modern client\n{}",
            ctx()
        );
    }
    p.finish().await;
}

#[tokio::test]
async fn auto_mode_stays_modern_over_http() {
    stays_modern(Via::Http).await;
}

#[tokio::test]
async fn auto_mode_stays_modern_over_stdio() {
    stays_modern(Via::Stdio).await;
}

/// Against a legacy-only server (the reference) the same `Auto` client does fall back: its
/// `server/discover` is answered -32601 and it runs `initialize` with 2025-11-25; the flows
/// then run as in a legacy session. This is what `Auto` would do with our server if
/// `server/discover` failed.
#[tokio::test]
async fn auto_mode_falls_back_against_the_reference_server() {
    let p = start(
        Server::Reference,
        Via::Stdio,
        auto(),
        ProtocolVersion::V_2025_11_25,
    )
    .await;
    assert_eq!(count_sent(&p.tap, "server/discover"), 1, "{}", p.context());
    check_handshake(&p, LEGACY);
    legacy_flows(&p).await;
    p.finish().await;
}
