//! Benchmarks of a 3-round MRTR tool (elicitation, sampling, final) written three ways:
//!
//! - (a) `macro`: with `#[mcp_tool]` (mrtr/macro_tool.rs);
//! - (b) `hand`: by hand against the `Tool` trait with a phase enum (mrtr/hand_written.rs);
//! - (c) `rmcp`: on rmcp 3.11's server side, state sealed by its `RequestStateCodec`
//!   (mrtr/rmcp_peer.rs).
//!
//! Groups (criterion ids `GROUP/ID`):
//! - `round_pure/{macro,hand}_r{0,1,2}`: one `tools/call` round through `Server::handle_text`
//!   (JSON text in, response serialized to JSON text out; `_meta` checks, opening and
//!   sealing the state included);
//! - `round_duplex/{macro,rmcp}_r{0,1,2}`: the same round as a newline-delimited JSON line
//!   written into an in-memory duplex stream served by each SDK's stream transport (ours:
//!   `transport::stdio::serve`; rmcp: `ServiceExt::serve` in stateless inline-`_meta` mode),
//!   until the response line is read back: the only way to drive rmcp's server with JSON;
//! - `seal/{hmac-sha256,aes-256-gcm,chacha20-poly1305}_{seal,open}_{small,1k,16k}`: our `Sealer`
//!   (compression off: the codecs alone, like for like);
//!   `seal/rmcp_hmac_{seal,open}_{..}`: rmcp's `RequestStateCodec` on the same payload.
//!
//! Before measuring, the binary drives one whole call through each version, checks that the
//! three final results agree, and prints `FIGURE` lines (state and response sizes) that
//! scripts/bench.sh turns into a table together with criterion's estimates.
//!
//! ```sh
//! scripts/bench.sh                                  # everything, plus the table
//! cargo bench -p mcp-tool-tests --bench mrtr -- --measurement-time 3 round_pure
//! ```
#![allow(deprecated)] // rmcp 3.11 marks sampling deprecated (SEP-2577)

mod mrtr {
    pub mod domain;
    pub mod hand_written;
    pub mod macro_tool;
    pub mod rmcp_peer;
}

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::seal::{Binding, Keyring, Protection, SealConfig, Sealer, StateBody};
use mcp_tool_runtime::server::NotificationSink;
use mcp_tool_runtime::transport::stdio::{self, StdioConfig};
use mcp_tool_runtime::{Principal, Server, Tool};
use rmcp::ServiceExt;
use rmcp::model::{RequestStateCodec, SealOptions};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::runtime::Runtime;

/// The sealing key every version uses (so sizes compare; 32 bytes).
const KEY: &[u8] = b"bench-key-0123456789abcdef-0123456789";
/// The tool's name in every version.
const TOOL: &str = "forecast";
/// State lifetime for every version (long enough for a whole bench run).
const TTL: Duration = Duration::from_secs(3600);

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn sealer(protection: Protection) -> Sealer {
    sealer_with(protection, true)
}

/// `compress: false`: HMAC states before compression; the `seal` group compares the codecs
/// alone, like for like with rmcp's, which does not compress.
fn sealer_with(protection: Protection, compress: bool) -> Sealer {
    let keyring = Keyring::new("k1", KEY.to_vec()).expect("keyring");
    Sealer::new(
        keyring,
        SealConfig::default()
            .with_ttl(TTL)
            .with_protection(protection)
            .with_compress(compress),
    )
}

fn our_server(tool: impl Tool, protection: Protection) -> Server {
    server_with(tool, sealer(protection))
}

fn server_with(tool: impl Tool, sealer: Sealer) -> Server {
    Server::builder(Implementation::new("bench", "0"))
        .sealer(sealer)
        .tool(tool)
        .build()
        .expect("server builds")
}

fn uncompressed() -> Sealer {
    sealer_with(Protection::Hmac, false)
}

// ---------------------------------------------------------------------------------------
// A tiny MRTR client: builds each round's request and answers each input request.
// ---------------------------------------------------------------------------------------

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "bench-client", "version": "0"}
    })
}

fn call_request(id: u64, answers: Option<Value>, state: Option<&str>) -> String {
    let mut params = json!({"name": TOOL, "arguments": {"city": "Oslo"}, "_meta": meta()});
    if let Some(a) = answers {
        params["inputResponses"] = a;
    }
    if let Some(s) = state {
        params["requestState"] = json!(s);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// The answer a host gives to one input request (by its `method`).
fn answer(request: &Value) -> Value {
    match request["method"].as_str() {
        Some("elicitation/create") => json!({"action": "accept", "content": {"name": "octocat"}}),
        Some("sampling/createMessage") => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "great"},
            "model": "bench-model",
            "stopReason": "endTurn"
        }),
        other => panic!("unexpected input request {other:?}: {request}"),
    }
}

/// One round: the request line and the response line.
struct Round {
    request: String,
    response: String,
}

impl Round {
    fn result(&self) -> Value {
        let v: Value = serde_json::from_str(&self.response).expect("response is JSON");
        assert!(v.get("error").is_none(), "JSON-RPC error: {v}");
        v["result"].clone()
    }
    fn state_len(&self) -> Option<usize> {
        self.result()["requestState"].as_str().map(str::len)
    }
}

/// Something that takes a request line and gives the response line.
trait Endpoint {
    async fn exchange(&mut self, line: &str) -> String;
}

/// Ours, in process: `Server::handle_text`, response serialized.
struct Pure(Server);

impl Endpoint for Pure {
    async fn exchange(&mut self, line: &str) -> String {
        pure_round(&self.0, line).await
    }
}

async fn pure_round(server: &Server, line: &str) -> String {
    let resp = server
        .handle_text(line, &Principal::anonymous(), NotificationSink::none())
        .await
        .expect("a response")
        .into_response();
    serde_json::to_string(&resp).expect("serializes")
}

/// Either SDK's line transport over an in-memory duplex stream.
struct Duplex {
    writer: tokio::io::WriteHalf<DuplexStream>,
    reader: BufReader<tokio::io::ReadHalf<DuplexStream>>,
    buf: String,
}

impl Duplex {
    /// Ours: `transport::stdio::serve` on the other end (spawned on the current runtime).
    fn ours(server: Server) -> Self {
        let (client, srv) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(srv);
        tokio::spawn(stdio::serve(
            server,
            BufReader::new(r),
            w,
            StdioConfig::default(),
        ));
        Self::client(client)
    }

    /// rmcp: `ServiceExt::serve` on the other end; the first `tools/call` with complete
    /// inline `_meta` selects its stateless (2026-07-28) lifecycle.
    fn rmcp(server: mrtr::rmcp_peer::ForecastServer) -> Self {
        let (client, srv) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(srv).await {
                let _ = running.waiting().await;
            }
        });
        Self::client(client)
    }

    fn client(client: DuplexStream) -> Self {
        let (r, w) = tokio::io::split(client);
        Self {
            writer: w,
            reader: BufReader::new(r),
            buf: String::new(),
        }
    }
}

impl Endpoint for Duplex {
    async fn exchange(&mut self, line: &str) -> String {
        self.writer.write_all(line.as_bytes()).await.expect("write");
        self.writer.write_all(b"\n").await.expect("write");
        self.writer.flush().await.expect("flush");
        self.buf.clear();
        self.reader.read_line(&mut self.buf).await.expect("read");
        self.buf.trim_end().to_owned()
    }
}

/// Drives one whole call (three rounds) and returns every round.
async fn drive(ep: &mut impl Endpoint) -> Vec<Round> {
    let mut rounds = Vec::new();
    let (mut answers, mut state): (Option<Value>, Option<String>) = (None, None);
    for id in 1..=3u64 {
        let request = call_request(id, answers.take(), state.as_deref());
        let response = ep.exchange(&request).await;
        let round = Round { request, response };
        let result = round.result();
        rounds.push(round);
        let Some(reqs) = result["inputRequests"].as_object() else {
            break;
        };
        let mut a = serde_json::Map::new();
        for (k, r) in reqs {
            a.insert(k.clone(), answer(r));
        }
        answers = Some(Value::Object(a));
        state = result["requestState"].as_str().map(str::to_owned);
    }
    assert_eq!(rounds.len(), 3, "three rounds");
    rounds
}

/// Prints the sizes the table shows, and checks that the versions agree.
/// With `MRTR_BENCH_DUMP` set, also prints every request and response line.
fn figures(name: &str, rounds: &[Round]) {
    let dump = std::env::var_os("MRTR_BENCH_DUMP").is_some();
    for (i, r) in rounds.iter().enumerate() {
        if dump {
            println!("DUMP {name} r{i} request {}", r.request);
            println!("DUMP {name} r{i} response {}", r.response);
        }
        println!(
            "FIGURE {name} r{i} request_bytes={} response_bytes={} state_bytes={}",
            r.request.len(),
            r.response.len(),
            r.state_len().unwrap_or(0)
        );
    }
}

fn final_structured(rounds: &[Round]) -> Value {
    rounds.last().expect("rounds").result()["structuredContent"].clone()
}

// ---------------------------------------------------------------------------------------
// Benches
// ---------------------------------------------------------------------------------------

fn rounds_of(rt: &Runtime, ep: &mut impl Endpoint) -> Vec<Round> {
    rt.block_on(drive(ep))
}

fn bench_rounds(c: &mut Criterion) {
    let rt = runtime();
    let macro_srv = our_server(mrtr::macro_tool::forecast::tool(), Protection::Hmac);
    let hand_srv = our_server(mrtr::hand_written::Forecaster, Protection::Hmac);

    let macro_rounds = rounds_of(&rt, &mut Pure(macro_srv.clone()));
    let hand_rounds = rounds_of(&rt, &mut Pure(hand_srv.clone()));
    let mut macro_duplex = rt.block_on(async { Duplex::ours(macro_srv.clone()) });
    let mut rmcp_duplex =
        rt.block_on(async { Duplex::rmcp(mrtr::rmcp_peer::ForecastServer::new(KEY)) });
    let macro_duplex_rounds = rounds_of(&rt, &mut macro_duplex);
    let rmcp_rounds = rounds_of(&rt, &mut rmcp_duplex);

    figures("macro", &macro_rounds);
    figures("hand", &hand_rounds);
    figures("rmcp", &rmcp_rounds);
    for p in [Protection::Aes256Gcm, Protection::ChaCha20Poly1305] {
        let srv = our_server(mrtr::macro_tool::forecast::tool(), p);
        figures(
            &format!("macro_{}", p.name()),
            &rounds_of(&rt, &mut Pure(srv)),
        );
    }
    let srv = server_with(mrtr::macro_tool::forecast::tool(), uncompressed());
    figures("macro_uncompressed", &rounds_of(&rt, &mut Pure(srv)));
    let srv = server_with(mrtr::hand_written::Forecaster, uncompressed());
    figures("hand_uncompressed", &rounds_of(&rt, &mut Pure(srv)));
    let expected = final_structured(&macro_rounds);
    assert_eq!(
        expected,
        json!({"user": "octocat", "city": "Oslo", "verdict": "great"})
    );
    assert_eq!(
        final_structured(&hand_rounds),
        expected,
        "hand-written agrees"
    );
    assert_eq!(final_structured(&macro_duplex_rounds), expected);
    assert_eq!(final_structured(&rmcp_rounds), expected, "rmcp agrees");

    let mut g = c.benchmark_group("round_pure");
    for (name, srv, rounds) in [
        ("macro", &macro_srv, &macro_rounds),
        ("hand", &hand_srv, &hand_rounds),
    ] {
        for (i, r) in rounds.iter().enumerate() {
            g.bench_function(format!("{name}_r{i}"), |b| {
                b.iter(|| rt.block_on(pure_round(srv, black_box(&r.request))))
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("round_duplex");
    for (name, ep, rounds) in [
        ("macro", &mut macro_duplex, &macro_duplex_rounds),
        ("rmcp", &mut rmcp_duplex, &rmcp_rounds),
    ] {
        for (i, r) in rounds.iter().enumerate() {
            g.bench_function(format!("{name}_r{i}"), |b| {
                b.iter(|| rt.block_on(ep.exchange(black_box(&r.request))))
            });
        }
    }
    g.finish();
}

/// A state payload of about `n` bytes of JSON, shaped like what the server seals.
fn payload(n: usize) -> Value {
    json!({
        "state": {"stage": "s1", "vars": {"blob": "x".repeat(n)}},
        "pending": {},
        "journal": {}
    })
}

fn bench_seal(c: &mut Criterion) {
    let principal = Principal::anonymous();
    let args = json!({"city": "Oslo"});
    let binding = Binding::new(&principal, "tools/call", TOOL, &args);
    let ad = format!("tools/call\0{TOOL}\0Oslo");
    let codec = RequestStateCodec::try_new(KEY.to_vec()).expect("codec");
    let rmcp_opts = SealOptions::new().associated_data(ad.as_bytes()).ttl(TTL);
    let sizes = [("small", 64usize), ("1k", 1024), ("16k", 16 * 1024)];

    let mut g = c.benchmark_group("seal");
    for (label, n) in sizes {
        let body = StateBody {
            round: 1,
            layout: "forecast/v1".into(),
            payload: payload(n),
        };
        let json_len = serde_json::to_string(&body.payload).expect("json").len();
        for p in [
            Protection::Hmac,
            Protection::Aes256Gcm,
            Protection::ChaCha20Poly1305,
        ] {
            let s = sealer_with(p, false);
            let token = s.seal(&binding, &body, None).expect("seal");
            assert_eq!(s.open(&binding, &token).expect("open"), body);
            println!(
                "FIGURE seal {}_{label} payload_json_bytes={json_len} token_bytes={}",
                p.name(),
                token.len()
            );
            g.bench_function(format!("{}_seal_{label}", p.name()), |b| {
                b.iter(|| s.seal(&binding, black_box(&body), None).expect("seal"))
            });
            g.bench_function(format!("{}_open_{label}", p.name()), |b| {
                b.iter(|| s.open(&binding, black_box(&token)).expect("open"))
            });
        }
        // rmcp's codec seals serde values too (HMAC-SHA256 only).
        let value = &body.payload;
        let token = codec.seal_json_with(value, &rmcp_opts).expect("seal");
        let back: Value = codec.open_json_with(&token, ad.as_bytes()).expect("open");
        assert_eq!(&back, value);
        println!(
            "FIGURE seal rmcp_hmac_{label} payload_json_bytes={json_len} token_bytes={}",
            token.len()
        );
        g.bench_function(format!("rmcp_hmac_seal_{label}"), |b| {
            b.iter(|| {
                codec
                    .seal_json_with(black_box(value), &rmcp_opts)
                    .expect("seal")
            })
        });
        g.bench_function(format!("rmcp_hmac_open_{label}"), |b| {
            b.iter(|| {
                codec
                    .open_json_with::<Value>(black_box(&token), ad.as_bytes())
                    .expect("open")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_rounds, bench_seal);
criterion_main!(benches);
