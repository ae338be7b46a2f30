//! Issue 22, item 3: `serve --metrics ADDR` serves the runtime's metrics for Prometheus.
//! A known workload over HTTP (get_weather twice round trip ×N, a tampered state, an
//! `isError` call, a legacy session), then `/metrics` is scraped, parsed as Prometheus text
//! and the counts are checked exactly.

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use support::Peer;

/// `serve --http 127.0.0.1:0 --metrics 127.0.0.1:0`, killed on drop.
struct Serve {
    child: Child,
    mcp: String,
    metrics: String,
}

impl Serve {
    fn start() -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_example_serve"))
            .args([
                "--http",
                "127.0.0.1:0",
                "--metrics",
                "127.0.0.1:0",
                "--store",
                "memory",
            ])
            .env("MCP_TOOL_STATE_KEY", format!("k1:{}", "cd".repeat(32)))
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn serve");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                eprintln!("serve: {line}");
                let _ = tx.send(line);
            }
        });
        let (mut mcp, mut metrics) = (None, None);
        while mcp.is_none() || metrics.is_none() {
            let line = rx
                .recv_timeout(Duration::from_secs(120))
                .expect("serve prints its addresses");
            if let Some(u) = line.strip_prefix("listening on ") {
                mcp = Some(u.trim().to_owned());
            }
            if let Some(u) = line.strip_prefix("metrics on ") {
                metrics = Some(u.trim().to_owned());
            }
        }
        Serve {
            child,
            mcp: mcp.unwrap(),
            metrics: metrics.unwrap(),
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One sample of the Prometheus text format: its name, its labels, its value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Parses the Prometheus text exposition format (0.0.4): comments and `# TYPE`/`# HELP`
/// lines skipped, `name{label="value",…} number` per sample, escapes in label values.
fn parse(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, rest) = match line.find(['{', ' ']) {
            Some(i) => line.split_at(i),
            None => panic!("no value: {line}"),
        };
        let mut labels = BTreeMap::new();
        let rest = if let Some(body) = rest.strip_prefix('{') {
            let mut chars = body.char_indices().peekable();
            let mut end = None;
            loop {
                // label name
                let mut key = String::new();
                while let Some(&(i, c)) = chars.peek() {
                    if c == '}' {
                        end = Some(i);
                        break;
                    }
                    if c == '=' {
                        break;
                    }
                    if c != ',' {
                        key.push(c);
                    }
                    chars.next();
                }
                if end.is_some() {
                    break;
                }
                chars.next(); // '='
                assert_eq!(chars.next().map(|(_, c)| c), Some('"'), "{line}");
                let mut value = String::new();
                loop {
                    let (_, c) = chars
                        .next()
                        .unwrap_or_else(|| panic!("unterminated: {line}"));
                    match c {
                        '\\' => match chars.next().map(|(_, c)| c) {
                            Some('n') => value.push('\n'),
                            Some(c) => value.push(c),
                            None => panic!("{line}"),
                        },
                        '"' => break,
                        c => value.push(c),
                    }
                }
                labels.insert(key.trim().to_owned(), value);
            }
            &body[end.expect("closing brace") + 1..]
        } else {
            rest
        };
        let value = rest.split_whitespace().next().expect("a value");
        let value = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v
                .parse()
                .unwrap_or_else(|_| panic!("value {v:?} in {line}")),
        };
        out.push(Sample {
            name: name.to_owned(),
            labels,
            value,
        });
    }
    out
}

/// The value of the one sample `name` whose labels include `labels` (0 when none).
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    let found: Vec<_> = samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            labels
                .iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .collect();
    assert!(found.len() <= 1, "{name} {labels:?}: {found:?}");
    found.first().map_or(0.0, |s| s.value)
}

async fn scrape(url: &str) -> Vec<Sample> {
    let resp = reqwest::get(url).await.expect("scrape");
    assert_eq!(resp.status(), 200);
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(ct.starts_with("text/plain"), "{ct}");
    parse(&resp.text().await.expect("body"))
}

const N: u64 = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_workload_shows_exact_counts_on_metrics() {
    let serve = Serve::start();
    let peer = Peer::new(&serve.mcp, json!({"elicitation": {"form": {}}}));
    let mut id = 0;
    let mut next = || {
        id += 1;
        id
    };
    let answers = json!({"github_login": {"action": "accept", "content": {"name": "octocat"}}});
    // N two-round get_weather calls
    let mut a_state = String::new();
    for _ in 0..N {
        let r1 = peer
            .call(
                next(),
                "get_weather",
                json!({"location": "Paris"}),
                None,
                None,
            )
            .await;
        assert_eq!(r1.result_type(), "input_required", "{}", r1.raw);
        let state = r1.result()["requestState"].as_str().unwrap().to_owned();
        let r2 = peer
            .call(
                next(),
                "get_weather",
                json!({"location": "Paris"}),
                Some(answers.clone()),
                Some(&state),
            )
            .await;
        assert_eq!(r2.result_type(), "complete", "{}", r2.raw);
        a_state = state;
    }
    // a tampered state: refused
    let mut bad = a_state.into_bytes();
    let i = bad.len() - 3;
    bad[i] = if bad[i] == b'x' { b'y' } else { b'x' };
    let bad = String::from_utf8(bad).unwrap();
    let refused = peer
        .call(
            next(),
            "get_weather",
            json!({"location": "Paris"}),
            Some(answers.clone()),
            Some(&bad),
        )
        .await;
    let refused_code = refused.code();
    // an isError result
    let failed = peer
        .call(next(), "get_weather", json!({"location": ""}), None, None)
        .await;
    assert_eq!(failed.result()["isError"], true, "{}", failed.raw);
    // a single-use round, then its replay: one claim, one replay
    let d1 = peer
        .call(next(), "donate", json!({"amount": 5}), None, None)
        .await;
    assert_eq!(d1.result_type(), "input_required", "{}", d1.raw);
    let key = d1.result()["inputRequests"]
        .as_object()
        .and_then(|r| r.keys().next().cloned())
        .expect("a confirmation");
    let d_state = d1.result()["requestState"].as_str().unwrap().to_owned();
    let yes = json!({ key: {"action": "accept", "content": {"confirm": true}} });
    let d2 = peer
        .call(
            next(),
            "donate",
            json!({"amount": 5}),
            Some(yes.clone()),
            Some(&d_state),
        )
        .await;
    assert_eq!(d2.result_type(), "complete", "{}", d2.raw);
    let replay = peer
        .call(
            next(),
            "donate",
            json!({"amount": 5}),
            Some(yes),
            Some(&d_state),
        )
        .await;
    assert_eq!(replay.result(), d2.result());
    // a task: created working, then completed
    let ext = mcp_tool_runtime::tasks::EXTENSION;
    let tasker = Peer::new(&serve.mcp, json!({"extensions": {ext: {}}}));
    let t = tasker
        .call(next(), "slow_job", json!({"seconds": 0.05}), None, None)
        .await;
    assert_eq!(t.result_type(), "task", "{}", t.raw);
    let task_id = t.result()["taskId"].as_str().unwrap().to_owned();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let body = json!({"jsonrpc": "2.0", "id": next(), "method": "tasks/get",
            "params": {"taskId": task_id, "_meta": tasker.meta()}});
        let g: Value = reqwest::Client::new()
            .post(&serve.mcp)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", support::VERSION)
            .header("mcp-method", "tasks/get")
            .header("mcp-name", &task_id)
            .body(body.to_string())
            .send()
            .await
            .expect("tasks/get")
            .json()
            .await
            .expect("JSON");
        if g["result"]["status"] == "completed" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{g}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // one legacy session
    let init = reqwest::Client::new()
        .post(&serve.mcp)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "metrics-test", "version": "1"}}})
            .to_string(),
        )
        .send()
        .await
        .expect("initialize");
    assert_eq!(init.status(), 200);
    assert!(init.headers().contains_key("mcp-session-id"));

    let m = scrape(&serve.metrics).await;
    let dur = "mcp_server_operation_duration_count";
    let call = |outcome: &str| {
        value(
            &m,
            dur,
            &[
                ("mcp_method_name", "tools/call"),
                ("gen_ai_tool_name", "get_weather"),
                ("outcome", outcome),
            ],
        )
    };
    assert_eq!(call("input_required"), N as f64);
    assert_eq!(call("ok"), N as f64);
    assert_eq!(call("tool_error"), 1.0);
    assert_eq!(call(&refused_code.to_string()), 1.0);
    // the histogram's buckets are cumulative: every get_weather call took at most +Inf
    assert_eq!(
        value(
            &m,
            "mcp_server_operation_duration_bucket",
            &[
                ("outcome", "ok"),
                ("gen_ai_tool_name", "get_weather"),
                ("le", "+Inf")
            ]
        ),
        N as f64
    );
    // rounds per completed call: N calls of 2 rounds, and the isError call of 1
    let tool = [("gen_ai_tool_name", "get_weather")];
    assert_eq!(
        value(&m, "mcp_server_call_rounds_count", &tool),
        (N + 1) as f64
    );
    assert_eq!(
        value(&m, "mcp_server_call_rounds_sum", &tool),
        (2 * N + 1) as f64
    );
    let one_round = [("gen_ai_tool_name", "get_weather"), ("le", "1")];
    assert_eq!(value(&m, "mcp_server_call_rounds_bucket", &one_round), 1.0);
    // state size at seal: N states of get_weather's round 1, each under 1 KiB
    assert_eq!(
        value(&m, "mcp_server_request_state_size_count", &tool),
        N as f64
    );
    let kib = [("gen_ai_tool_name", "get_weather"), ("le", "1024")];
    assert_eq!(
        value(&m, "mcp_server_request_state_size_bucket", &kib),
        N as f64
    );
    let sum = value(&m, "mcp_server_request_state_size_sum", &tool);
    assert!(sum >= (N * 64) as f64 && sum <= (N * 1024) as f64, "{sum}");
    // refusals by reason
    assert_eq!(
        value(
            &m,
            "mcp_server_request_state_refusals",
            &[("reason", "tampered")]
        ),
        1.0
    );
    assert_eq!(
        value(
            &m,
            "mcp_server_request_state_refusals",
            &[("reason", "expired")]
        ),
        0.0
    );
    // the ledger: the confirmed round claimed once, replayed once
    let claims = "mcp_server_ledger_claims";
    assert_eq!(value(&m, claims, &[("result", "claimed")]), 1.0);
    assert_eq!(value(&m, claims, &[("result", "replayed")]), 1.0);
    assert_eq!(value(&m, claims, &[("result", "running")]), 0.0);
    // tasks by status
    let tasks = "mcp_server_tasks";
    assert_eq!(value(&m, tasks, &[("status", "working")]), 1.0);
    assert_eq!(value(&m, tasks, &[("status", "completed")]), 1.0);
    assert_eq!(value(&m, tasks, &[("status", "failed")]), 0.0);
    // the legacy session is open
    assert_eq!(value(&m, "mcp_server_legacy_sessions", &[]), 1.0);
    // nothing refused for capacity
    assert!(
        m.iter()
            .all(|s| s.name != "mcp_server_concurrency_refusals")
    );
    // no label carries the arguments or the answers
    for s in &m {
        for v in s.labels.values() {
            assert!(!v.contains("Paris") && !v.contains("octocat"), "{s:?}");
        }
    }
    drop(serve);
}

/// An anonymous client sending requests of methods the server does not know, each a new
/// name, cannot grow the metrics: every one is counted under `_OTHER` (the recorder keeps a
/// series per label value, so a label from the client would be memory it chooses). A
/// legitimate call in the middle still gets through and is counted under its method.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_methods_do_not_add_metric_series() {
    let serve = Serve::start();
    let peer = Peer::new(&serve.mcp, json!({"elicitation": {"form": {}}}));
    let client = reqwest::Client::new();
    const ATTACK: usize = 200;
    let mut statuses = BTreeMap::new();
    for i in 0..ATTACK {
        let method = format!("x/attack-{i}");
        let body = json!({"jsonrpc": "2.0", "id": i, "method": method,
            "params": {"_meta": peer.meta()}});
        let resp = client
            .post(&serve.mcp)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", support::VERSION)
            .header("mcp-method", &method)
            .body(body.to_string())
            .send()
            .await
            .expect("post");
        let status = resp.status().as_u16();
        let answer: Value = resp.json().await.expect("a JSON-RPC answer");
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
        *statuses.entry(status).or_insert(0) += 1;
        if i == ATTACK / 2 {
            let r = peer
                .call(9999, "get_weather", json!({"location": "Oslo"}), None, None)
                .await;
            assert_eq!(r.result_type(), "input_required", "{}", r.raw);
        }
    }
    let m = scrape(&serve.metrics).await;
    let dur = "mcp_server_operation_duration_count";
    let methods: std::collections::BTreeSet<_> = m
        .iter()
        .filter(|s| s.name == dur)
        .filter_map(|s| s.labels.get("mcp_method_name").cloned())
        .collect();
    assert_eq!(
        methods,
        ["_OTHER", "tools/call"].map(str::to_owned).into(),
        "{statuses:?}"
    );
    assert_eq!(
        value(&m, dur, &[("mcp_method_name", "_OTHER")]),
        ATTACK as f64
    );
    assert_eq!(
        value(
            &m,
            dur,
            &[
                ("mcp_method_name", "tools/call"),
                ("outcome", "input_required")
            ]
        ),
        1.0
    );
    assert!(
        m.iter()
            .all(|s| s.labels.values().all(|v| !v.contains("attack")))
    );
    drop(serve);
}

#[test]
fn the_parser_reads_labels_escapes_and_special_values() {
    let m = parse(
        "# HELP x y\n# TYPE a counter\na 1\nb{l=\"v\\\"q\",m=\"2\"} 3.5\nc_bucket{le=\"+Inf\"} 4\nd +Inf\n",
    );
    assert_eq!(m.len(), 4);
    assert_eq!(value(&m, "a", &[]), 1.0);
    assert_eq!(value(&m, "b", &[("l", "v\"q"), ("m", "2")]), 3.5);
    assert_eq!(value(&m, "c_bucket", &[("le", "+Inf")]), 4.0);
    assert_eq!(value(&m, "d", &[]), f64::INFINITY);
    let _: Value = json!(null);
}
