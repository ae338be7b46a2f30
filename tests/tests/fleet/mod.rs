//! A fleet of `serve` processes over HTTP for the exactly-once chaos tests
//! (store_sqlite.rs, store_postgres.rs, store_redis.rs): replicas that share a state key, a notes database and
//! a `--store`, and a client that speaks to them as a demo-authenticated principal.

#![allow(dead_code)] // each test file uses the part it needs

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod listen;

/// One `serve --http` process; killed on drop.
pub struct Replica {
    child: Child,
    /// Its MCP endpoint.
    pub url: String,
}

impl Replica {
    /// Starts `serve` (the binary at `exe`) on a free loopback port with the notes database
    /// `db` and the store arguments `store` (`--store URL`, and its TLS options); returns
    /// once it listens.
    ///
    /// # Panics
    /// When it cannot be started or does not listen within 60 s (a test fails).
    pub fn start(exe: &str, db: &Path, store: &[&str]) -> Replica {
        let mut child = Command::new(exe)
            .args(["--http", "127.0.0.1:0"])
            .args(store)
            .arg("--db")
            .arg(db)
            // one key for the fleet: any replica opens any replica's state
            .env("MCP_TOOL_STATE_KEY", format!("k1:{}", "cd".repeat(32)))
            .env("RUST_LOG", "warn,mcp_tool_examples=info")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn serve");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.split("listening on ").nth(1)
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(url.trim().to_owned());
                }
                // the rest of its log goes on to the test's output
                eprintln!("[serve] {line}");
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("serve did not listen within 60 s");
        Replica { child, url }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `_meta` of a 2026-07-28 request from a client that can answer forms.
pub fn call(id: u64, name: &str, args: Value, extra: Value) -> Value {
    let mut params = json!({
        "name": name,
        "arguments": args,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    });
    if let (Some(p), Value::Object(e)) = (params.as_object_mut(), extra) {
        p.extend(e);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// POSTs `body` to `url` as `who` (a demo bearer token): the status and the body's bytes,
/// or the transport error's text.
pub async fn post(
    client: &reqwest::Client,
    url: &str,
    who: &str,
    body: &Value,
) -> Result<(u16, String), String> {
    let mut req = client
        .post(url)
        .timeout(Duration::from_secs(30))
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("authorization", format!("Bearer {who}"));
    for (k, v) in mcp_tool_client::HttpTransport::mcp_headers(body) {
        req = req.header(k, v);
    }
    let resp = req
        .body(serde_json::to_vec(body).map_err(|e| e.to_string())?)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    Ok((status, resp.text().await.map_err(|e| e.to_string())?))
}

/// `who`'s balance (the `balance` tool), through `url`.
pub async fn balance(client: &reqwest::Client, url: &str, who: &str) -> i64 {
    let (status, text) = post(client, url, who, &call(9, "balance", json!({}), json!({})))
        .await
        .expect("balance");
    assert_eq!(status, 200, "{text}");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    v["result"]["structuredContent"]["balance"]
        .as_i64()
        .unwrap_or_else(|| panic!("no balance: {v}"))
}

/// Round 1 of `donate { amount }` as `who`: the confirmed round-2 request to present
/// (same JSON-RPC id every time, so that stored answers compare byte for byte).
pub async fn donate_round_two(
    client: &reqwest::Client,
    url: &str,
    who: &str,
    amount: i64,
) -> Result<Value, String> {
    let args = json!({ "amount": amount });
    let (status, text) = post(
        client,
        url,
        who,
        &call(1, "donate", args.clone(), json!({})),
    )
    .await?;
    if status != 200 {
        return Err(format!("round 1: HTTP {status}: {text}"));
    }
    let first: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let state = first["result"]["requestState"]
        .as_str()
        .ok_or_else(|| format!("round 1 asked nothing: {first}"))?;
    let key = first["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .ok_or_else(|| format!("round 1 has no input request: {first}"))?;
    Ok(call(
        2,
        "donate",
        args,
        json!({
            "requestState": state,
            "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}},
        }),
    ))
}

/// What presenting a request until it is answered took.
#[derive(Debug, Default, Clone)]
pub struct Presented {
    /// The final answer: HTTP 200 and its body.
    pub answer: Option<String>,
    /// Busy answers (503 / -32000 with a retry hint) on the way.
    pub busy: u32,
    /// Other errors (a store outage: -32603, a transport error) on the way.
    pub errors: u32,
    /// The last error seen, for the report.
    pub last_error: Option<String>,
}

/// Presents `body` to `url` as `who` until it gets a result (HTTP 200 without a JSON-RPC
/// `error`), retrying busy answers and errors (as a client that lost its answer would)
/// until `deadline`.
pub async fn present_until_answered(
    client: &reqwest::Client,
    url: &str,
    who: &str,
    body: &Value,
    deadline: Instant,
) -> Presented {
    let mut p = Presented::default();
    loop {
        match post(client, url, who, body).await {
            Ok((200, text)) if !text.contains("\"error\"") => {
                p.answer = Some(text);
                return p;
            }
            Ok((503, text)) => {
                p.busy += 1;
                p.last_error = Some(text);
            }
            Ok((status, text)) => {
                p.errors += 1;
                p.last_error = Some(format!("HTTP {status}: {text}"));
            }
            Err(e) => {
                p.errors += 1;
                p.last_error = Some(e);
            }
        }
        if Instant::now() >= deadline {
            return p;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

const REPLAYS: usize = 64;
const REPLICAS: usize = 3;

/// 64 presentations of one confirmed `donate` round at once, over 3 replicas on `store`:
/// one donation, one distinct answer. Prints the figures.
pub async fn replay_across_replicas(exe: &str, dir: &Path, store: &[&str], label: &str) {
    let db = dir.join("notes.sqlite3");
    let replicas: Vec<Replica> = (0..REPLICAS)
        .map(|_| Replica::start(exe, &db, store))
        .collect();
    let client = reqwest::Client::new();
    let who = format!("{label}-donor");
    assert_eq!(balance(&client, &replicas[0].url, &who).await, 0);
    let last = donate_round_two(&client, &replicas[0].url, &who, 5)
        .await
        .expect("round 1");
    assert_eq!(balance(&client, &replicas[1].url, &who).await, 0);

    let started = Instant::now();
    let deadline = started + Duration::from_secs(60);
    let presentations: Vec<_> = (0..REPLAYS)
        .map(|i| {
            let (client, url, who, last) = (
                client.clone(),
                replicas[i % REPLICAS].url.clone(),
                who.clone(),
                last.clone(),
            );
            tokio::spawn(async move {
                present_until_answered(&client, &url, &who, &last, deadline).await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for p in presentations {
        answers.push(p.await.expect("presentation"));
    }
    let elapsed = started.elapsed();
    let busy: u32 = answers.iter().map(|p| p.busy).sum();
    let errors: u32 = answers.iter().map(|p| p.errors).sum();
    let bodies: BTreeSet<_> = answers.iter().map(|p| p.answer.clone()).collect();
    let balances = [
        balance(&client, &replicas[0].url, &who).await,
        balance(&client, &replicas[1].url, &who).await,
        balance(&client, &replicas[2].url, &who).await,
    ];
    println!(
        "{label}: {REPLAYS} concurrent presentations over {REPLICAS} replicas in {elapsed:?}: \
         {} distinct answer(s), {busy} busy answer(s) retried, {errors} error(s), balance {balances:?}",
        bodies.len(),
    );
    assert!(
        answers.iter().all(|p| p.answer.is_some()),
        "every presentation is answered: {:?}",
        answers.iter().find(|p| p.answer.is_none())
    );
    assert_eq!(errors, 0, "no errors: {answers:?}");
    assert_eq!(
        bodies.len(),
        1,
        "every answer is the same bytes: {bodies:?}"
    );
    let body: Value = serde_json::from_str(answers[0].answer.as_deref().unwrap_or("")).unwrap();
    assert_eq!(
        body["result"]["structuredContent"]["balance"], 5,
        "the answer reports one donation: {body}"
    );
    assert_eq!(balances, [5, 5, 5], "donated once, seen by every replica");

    // another principal presenting the state, on another replica: -32602, nothing donated
    let (status, text) = post(&client, &replicas[2].url, "mallory", &last)
        .await
        .expect("post");
    assert_eq!(status, 400, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert_eq!(balance(&client, &replicas[0].url, "mallory").await, 0);
    assert_eq!(balance(&client, &replicas[0].url, &who).await, 5);
}

/// A 2026-07-28 request `method` with `params`, from a client with the Tasks extension.
pub fn task_request(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The counts of [`donations_through_an_outage`].
#[derive(Debug, Default)]
pub struct OutageReport {
    /// Single-use calls whose confirmed round was answered.
    pub answered: usize,
    /// Calls still unanswered at the deadline (a claim whose outcome the outage lost).
    pub unanswered: usize,
    /// Calls whose principal's balance shows the donation.
    pub donated: usize,
    /// Errors (store unavailable, transport) the client retried.
    pub errors_retried: u32,
    /// Busy answers the client retried.
    pub busy_retried: u32,
    /// Tasks that completed after the outage.
    pub tasks_completed: usize,
    /// `tasks/get` polls that failed during the outage.
    pub task_polls_failed: u32,
}

impl OutageReport {
    /// What every store must show after [`donations_through_an_outage`]: the tasks
    /// completed, the outage was felt (retries), and the calls in flight were answered.
    pub fn assert_recovered(&self) {
        assert_eq!(self.tasks_completed, 3, "{self:?}");
        assert!(
            self.errors_retried + self.busy_retried > 0,
            "the outage was felt: {self:?}"
        );
        assert!(
            self.answered >= 28,
            "calls in flight were answered after retries: {self:?}"
        );
    }
}

/// Single-use calls and tasks in flight while `outage` kills and restarts the shared store:
/// 30 `donate` calls (each its own principal and amount) start 60 ms apart over 3 replicas
/// on `store`, and 3 `slow_job` tasks run; the client retries every error. Asserts that no
/// donation happened twice, that an answered call donated exactly once, that every task
/// completed, and that the fleet recovered without a restart; returns the counts.
pub async fn donations_through_an_outage(
    exe: &str,
    dir: &Path,
    store: &[&str],
    label: &str,
    outage: impl std::future::Future<Output = ()>,
) -> OutageReport {
    const CALLS: usize = 30;
    let db = dir.join("notes.sqlite3");
    let replicas: Vec<Replica> = (0..REPLICAS)
        .map(|_| Replica::start(exe, &db, store))
        .collect();
    let urls: Vec<String> = replicas.iter().map(|r| r.url.clone()).collect();
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(45);

    // three tasks, started before the outage, polled through it
    let mut tasks = Vec::new();
    for i in 0..3u64 {
        let start = task_request(
            i,
            "tools/call",
            json!({"name": "slow_job", "arguments": {"seconds": 1.5, "label": format!("{label}-{i}")}}),
        );
        let (status, text) = post(&client, &urls[0], "tasker", &start)
            .await
            .expect("start a task");
        assert_eq!(status, 200, "{text}");
        let v: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(v["result"]["resultType"], "task", "{v}");
        tasks.push(v["result"]["taskId"].as_str().expect("taskId").to_owned());
    }
    let polls = tasks.iter().enumerate().map(|(i, id)| {
        let (client, url, id) = (client.clone(), urls[(i + 1) % REPLICAS].clone(), id.clone());
        async move {
            let mut failed = 0u32;
            loop {
                let get = task_request(7, "tasks/get", json!({"taskId": id}));
                match post(&client, &url, "tasker", &get).await {
                    Ok((200, text)) => {
                        let v: Value = serde_json::from_str(&text).expect("JSON");
                        if v.get("error").is_some() {
                            failed += 1;
                        }
                        match v["result"]["status"].as_str() {
                            Some("completed") => return (Some(v), failed),
                            Some("failed" | "cancelled") => panic!("task {id} ended: {v}"),
                            _ => {}
                        }
                    }
                    _ => failed += 1,
                }
                if Instant::now() >= deadline {
                    return (None, failed);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    });

    let calls = (0..CALLS).map(|i| {
        let (client, urls) = (client.clone(), urls.clone());
        let who = format!("{label}-c{i}");
        let amount = i as i64 + 1;
        async move {
            tokio::time::sleep(Duration::from_millis(60 * i as u64)).await;
            let mut errors = 0;
            let last = loop {
                match donate_round_two(&client, &urls[i % REPLICAS], &who, amount).await {
                    Ok(last) => break last,
                    Err(_) if Instant::now() < deadline => {
                        errors += 1;
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Err(e) => panic!("round 1 of {who} never answered: {e}"),
                }
            };
            let mut p =
                present_until_answered(&client, &urls[(i + 1) % REPLICAS], &who, &last, deadline)
                    .await;
            p.errors += errors;
            (who, amount, p)
        }
    });
    let (outcomes, task_results, ()) = tokio::join!(
        futures_util::future::join_all(calls),
        futures_util::future::join_all(polls),
        outage
    );

    let mut report = OutageReport::default();
    for (who, amount, p) in &outcomes {
        report.errors_retried += p.errors;
        report.busy_retried += p.busy;
        let got = balance(&client, &urls[0], who).await;
        assert!(
            got == 0 || got == *amount,
            "{who}: balance {got} after one call of {amount}: a donation ran twice"
        );
        if got == *amount {
            report.donated += 1;
        }
        match &p.answer {
            Some(text) => {
                report.answered += 1;
                let v: Value = serde_json::from_str(text).expect("JSON");
                assert_eq!(
                    v["result"]["structuredContent"]["balance"], *amount,
                    "{who}: the answer reports one donation: {v}"
                );
                assert_eq!(got, *amount, "{who}: answered but not donated");
            }
            None => report.unanswered += 1,
        }
    }
    for (i, (done, failed)) in task_results.into_iter().enumerate() {
        report.task_polls_failed += failed;
        let v = done.unwrap_or_else(|| panic!("task {i} did not complete after the outage"));
        assert_eq!(
            v["result"]["result"]["content"][0]["text"],
            format!("Finished {label}-{i} after 1.5s"),
            "{v}"
        );
        report.tasks_completed += 1;
    }
    // the fleet works after the outage without a restart: a new call donates once
    let who = format!("{label}-after");
    let last = donate_round_two(&client, &urls[2], &who, 7)
        .await
        .expect("round 1 after the outage");
    let p = present_until_answered(&client, &urls[0], &who, &last, deadline).await;
    assert!(p.answer.is_some(), "a call after the outage: {p:?}");
    assert_eq!(balance(&client, &urls[1], &who).await, 7);
    println!("{label}: {CALLS} single-use calls and 3 tasks through a store outage: {report:?}");
    report
}
