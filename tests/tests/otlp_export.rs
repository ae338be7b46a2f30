//! Issue 22, item 4: `serve` exports its spans with mcp-tool-otel's layer (which turns on the
//! runtime's trace context, feature `otel`) over OTLP/HTTP (protobuf) as the standard
//! `OTEL_*` variables say, to a receiver that decodes them with the official definitions
//! (PyPI's `opentelemetry-proto`, in a venv under the peers cache, as the Python SDK tests
//! install theirs). A 3-request `summarize_repo` call whose rounds go to two replicas
//! (sharing the state key) is one trace: the later rounds are children of the first and
//! link to it, all carry the call id, and every span has the MCP conventions' attributes;
//! an `isError` result is `error.type = tool_error`; no argument, answer or state is in any
//! span.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use mcp_tool_examples::fake_model::FakeModel;
use serde_json::{Value, json};
use support::{Peer, answer_all, state_of};

/// The `opentelemetry-proto` release the receiver decodes with.
const PROTO_VERSION: &str = "1.45.2";

/// `$MCP_TOOL_PEERS_CACHE`, or `peers/` in cargo's target directory (as the Python SDK
/// tests find it).
fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MCP_TOOL_PEERS_CACHE") {
        return PathBuf::from(dir);
    }
    std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.parent()?.parent()?.to_path_buf()))
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
        .join("peers")
}

/// A venv with `opentelemetry-proto` installed (made once, then reused); its interpreter.
fn receiver_python() -> PathBuf {
    let venv = cache_dir()
        .join("python")
        .join(format!("otlp-proto-{PROTO_VERSION}"));
    let python = venv.join("bin").join("python");
    let ready = |py: &Path| {
        Command::new(py)
            .args([
                "-c",
                "import importlib.metadata as m, sys; \
                 sys.exit(m.version('opentelemetry-proto') != sys.argv[1])",
                PROTO_VERSION,
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if ready(&python) {
        return python;
    }
    let partial = venv.with_extension(format!("partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(partial.parent().unwrap()).unwrap();
    let ok = Command::new("python3")
        .arg("-m")
        .arg("venv")
        .arg(&partial)
        .status()
        .expect("python3 -m venv");
    assert!(ok.success(), "python3 -m venv (Debian: python3-venv)");
    let ok = Command::new(partial.join("bin").join("python"))
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "--timeout",
            "20",
            "--retries",
            "2",
        ])
        .arg(format!("opentelemetry-proto=={PROTO_VERSION}"))
        .status()
        .expect("pip");
    assert!(
        ok.success(),
        "could not install opentelemetry-proto from PyPI (network access needed)"
    );
    if !ready(&python) {
        let _ = std::fs::remove_dir_all(&venv);
        std::fs::rename(&partial, &venv).expect("move the venv into place");
    } else {
        let _ = std::fs::remove_dir_all(&partial);
    }
    python
}

/// A child process killed on drop.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reads `child`'s stream line by line on a thread, into a channel.
fn lines(stream: impl std::io::Read + Send + 'static, tag: &'static str) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if tag != "receiver" {
                eprintln!("{tag}: {line}");
            }
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The receiver: its port, and the spans it decoded so far.
fn start_receiver() -> (Kill, u16, Arc<Mutex<Vec<Value>>>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/otlp_receiver.py");
    let mut child = Command::new(receiver_python())
        .arg(script)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the receiver");
    let rx = lines(child.stdout.take().unwrap(), "receiver");
    let first: Value = serde_json::from_str(
        &rx.recv_timeout(Duration::from_secs(60))
            .expect("the receiver's port"),
    )
    .unwrap();
    let port = u16::try_from(first["listening"].as_u64().unwrap()).unwrap();
    let spans = Arc::new(Mutex::new(Vec::new()));
    let sink = spans.clone();
    std::thread::spawn(move || {
        for line in rx {
            let v: Value = serde_json::from_str(&line).expect("a JSON line");
            sink.lock().unwrap().push(v);
        }
    });
    (Kill(child), port, spans)
}

/// `serve --http 127.0.0.1:0` exporting to `port`, as replica `instance`.
fn start_serve(port: u16, instance: &str) -> (Kill, String) {
    let mut child = Kill(
        Command::new(env!("CARGO_BIN_EXE_example_serve"))
            .args(["--http", "127.0.0.1:0", "--store", "memory"])
            .env("MCP_TOOL_STATE_KEY", format!("k1:{}", "ef".repeat(32)))
            .env("RUST_LOG", "warn")
            .env(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("http://127.0.0.1:{port}"),
            )
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
            .env("OTEL_SERVICE_NAME", "mcp-tool-serve")
            .env(
                "OTEL_RESOURCE_ATTRIBUTES",
                format!("service.instance.id={instance}"),
            )
            .env("OTEL_TRACES_SAMPLER", "parentbased_always_on")
            .env("OTEL_BSP_SCHEDULE_DELAY", "100")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn serve"),
    );
    let rx = lines(child.0.stderr.take().unwrap(), "serve");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("serve prints its address");
        if let Some(url) = line.strip_prefix("listening on ") {
            let url = url.trim().to_owned();
            std::thread::spawn(move || for _ in rx {});
            return (child, url);
        }
    }
}

fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

fn server_spans(all: &[Value], name: &str) -> Vec<Value> {
    let mut v: Vec<Value> = all
        .iter()
        .filter(|s| s["kind"] == "SPAN_KIND_SERVER" && s["name"] == name)
        .cloned()
        .collect();
    v.sort_by_key(|s| s["start"].as_u64());
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_round_call_on_two_replicas_is_one_linked_trace() {
    let (_receiver, port, received) = start_receiver();
    let (_a, url_a) = start_serve(port, "replica-a");
    let (_b, url_b) = start_serve(port, "replica-b");
    let peers = [
        Peer::new(&url_a, json!({"sampling": {}})),
        Peer::new(&url_b, json!({"sampling": {}})),
    ];
    let model = FakeModel::new();
    let args = json!({"audience": "developer-audience-secret"});
    // ids 1, 2, 3 to A, B, A; no client trace context: the rounds still make one trace
    let mut sent = Vec::new();
    let mut prev: Option<support::Reply> = None;
    let mut id = 0u64;
    loop {
        id += 1;
        let peer = &peers[usize::from(id.is_multiple_of(2))];
        let reply = match &prev {
            None => {
                peer.call(id, "summarize_repo", args.clone(), None, None)
                    .await
            }
            Some(p) => {
                let answers = answer_all(&model, p.result());
                sent.push(answers.clone());
                sent.push(json!(state_of(p)));
                peer.call(
                    id,
                    "summarize_repo",
                    args.clone(),
                    Some(answers),
                    Some(&state_of(p)),
                )
                .await
            }
        };
        assert_eq!(reply.status, 200, "{}", reply.raw);
        if reply.result_type() == "complete" {
            break;
        }
        assert!(id < 3, "{}", reply.raw);
        prev = Some(reply);
    }
    assert_eq!(id, 3, "summarize_repo takes three requests");
    // an isError result, on replica B
    let failed = Peer::new(&url_b, json!({"elicitation": {"form": {}}}))
        .call(9, "get_weather", json!({"location": ""}), None, None)
        .await;
    assert_eq!(failed.result()["isError"], true, "{}", failed.raw);

    // wait for the four server spans (batches every 100 ms)
    let deadline = Instant::now() + Duration::from_secs(30);
    let all = loop {
        let all = received.lock().unwrap().clone();
        let done = server_spans(&all, "tools/call summarize_repo").len() >= 3
            && !server_spans(&all, "tools/call get_weather").is_empty();
        if done || Instant::now() > deadline {
            break all;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(all.iter().all(|s| s.get("error").is_none()), "{all:#?}");
    // scripts/trace_picture.sh draws docs/trace_two_replicas.png from these
    if let Some(out) = std::env::var_os("MCP_TOOL_TRACE_OUT") {
        std::fs::write(out, serde_json::to_vec_pretty(&all).unwrap()).expect("write the spans");
    }

    let rounds = server_spans(&all, "tools/call summarize_repo");
    assert_eq!(rounds.len(), 3, "{all:#?}");
    let first = &rounds[0];
    let trace = first["trace_id"].as_str().unwrap();
    assert_eq!(trace.len(), 32);
    assert_eq!(first["parent_span_id"], "");
    for (i, r) in rounds.iter().enumerate() {
        assert_eq!(r["trace_id"], trace, "one trace: {r:#}");
        assert_eq!(r["scope"], "mcp-tool-runtime");
        assert_eq!(r["resource"]["service.name"], "mcp-tool-serve");
        let instance = if i == 1 { "replica-b" } else { "replica-a" };
        assert_eq!(r["resource"]["service.instance.id"], instance);
        assert_eq!(attr(r, "mcp.method.name"), "tools/call");
        assert_eq!(attr(r, "gen_ai.tool.name"), "summarize_repo");
        assert_eq!(attr(r, "jsonrpc.request.id"), (i + 1).to_string().as_str());
        assert_eq!(attr(r, "mcp.protocol.version"), support::VERSION);
        assert_eq!(attr(r, "mcp_tool.round"), i);
        assert_eq!(attr(r, "mcp_tool.call.id"), &first["span_id"]);
        assert!(attr(r, "error.type").is_null(), "{r:#}");
        assert_eq!(r["status"], "STATUS_CODE_UNSET");
        if i > 0 {
            // a child of the first round, linked to it
            assert_eq!(r["parent_span_id"], first["span_id"]);
            assert_eq!(
                r["links"],
                json!([{"trace_id": trace, "span_id": first["span_id"]}])
            );
        }
        // its children are in the trace, under it
        let children: Vec<&Value> = all
            .iter()
            .filter(|c| c["parent_span_id"] == r["span_id"])
            .collect();
        assert!(
            children.iter().all(|c| c["trace_id"] == trace),
            "{children:#?}"
        );
        let names: Vec<&str> = children.iter().filter_map(|c| c["name"].as_str()).collect();
        assert!(names.contains(&"mcp_tool.stage"), "{names:?}");
        if i > 0 {
            assert!(names.contains(&"mcp_tool.state.open"), "{names:?}");
        }
        if i < 2 {
            assert!(names.contains(&"mcp_tool.state.seal"), "{names:?}");
        }
    }

    let weather = server_spans(&all, "tools/call get_weather");
    assert_eq!(weather.len(), 1, "{all:#?}");
    assert_eq!(attr(&weather[0], "error.type"), "tool_error");
    assert_eq!(weather[0]["status"], "STATUS_CODE_ERROR");
    assert_ne!(weather[0]["trace_id"], trace);

    // nothing the client sent (arguments, answers, states) is in any span
    let text = serde_json::to_string(&all).unwrap();
    assert!(!text.contains("developer-audience-secret"));
    let mut secrets = Vec::new();
    collect_strings(&Value::Array(sent), &mut secrets);
    for s in secrets.iter().filter(|s| s.len() >= 12) {
        let probe = &s[..s.len().min(40)];
        assert!(!text.contains(probe), "a span holds {probe:?}");
    }
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}
