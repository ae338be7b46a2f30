//! The Tasks extension (SEP-2663) end to end, in-process: the conformance fixture's task
//! tools and a few tools of this file, served by one or several `Server` replicas that share
//! a keyring and a task store. Each request is a raw JSON-RPC message.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mcp_tool_runtime::Principal;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::tasks::{MemoryTaskStore, TaskConfig, TaskStore};
use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
use mcp_tool_tests::fixture;
use serde_json::{Value, json};

const EXT: &str = "io.modelcontextprotocol/tasks";

fn sealer() -> Sealer {
    let keyring = Keyring::new("tasks-test", vec![7u8; 32]).expect("keyring");
    Sealer::new(keyring, SealConfig::default())
}

/// The tags of the `counted_sleep` runs that got past their sleep.
static FINISHED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn finished(tag: &str) -> usize {
    FINISHED
        .lock()
        .unwrap()
        .iter()
        .filter(|t| *t == tag)
        .count()
}

/// Sleeps `ms` milliseconds, then records its `tag` as finished.
#[mcp_tool(task = "optional")]
async fn counted_sleep(_cx: &mut ToolContext, args: Value) -> Result<String, ToolError> {
    let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    let tag = args
        .get("tag")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    FINISHED.lock().unwrap().push(tag);
    Ok(format!("slept {ms} ms"))
}

/// A replica: the fixture tools plus `counted_sleep`, on `store`.
fn replica(store: Arc<dyn TaskStore>, config: TaskConfig) -> Server {
    fixture::builder(Some(sealer()))
        .tool(counted_sleep::tool())
        .task_store(store)
        .task_config(config)
        .build()
        .expect("server")
}

fn fast() -> TaskConfig {
    TaskConfig::default().with_poll_interval(Duration::from_millis(20))
}

fn with_tasks() -> Value {
    json!({"elicitation": {}, "extensions": {EXT: {}}})
}

fn without_tasks() -> Value {
    json!({"elicitation": {}})
}

async fn rpc_as(
    s: &Server,
    who: &Principal,
    method: &str,
    mut params: Value,
    caps: Value,
) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    s.handle(msg, who).await.expect("a response").to_value()
}

async fn rpc(s: &Server, method: &str, params: Value, caps: Value) -> Value {
    rpc_as(s, &alice(), method, params, caps).await
}

fn alice() -> Principal {
    Principal::named("alice")
}

async fn start(s: &Server, tool: &str, args: Value) -> String {
    let r = rpc(
        s,
        "tools/call",
        json!({"name": tool, "arguments": args}),
        with_tasks(),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    r["result"]["taskId"].as_str().expect("taskId").to_owned()
}

async fn get(s: &Server, id: &str) -> Value {
    let r = rpc(s, "tasks/get", json!({"taskId": id}), with_tasks()).await;
    assert!(r.get("error").is_none(), "{r}");
    r["result"].clone()
}

/// Polls until the status is `want` (or terminal); panics after 10 s.
async fn wait_for(s: &Server, id: &str, want: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let t = get(s, id).await;
        let st = t["status"].as_str().unwrap_or("").to_owned();
        if st == want || ["completed", "failed", "cancelled"].contains(&st.as_str()) {
            return t;
        }
        assert!(Instant::now() < deadline, "task {id} stuck in {st}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_task_is_created_polled_and_completed_with_the_inlined_result() {
    let s = replica(Arc::new(MemoryTaskStore::new()), fast());
    let r = rpc(
        &s,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 0.3, "label": "x"}}),
        with_tasks(),
    )
    .await;
    let created = &r["result"];
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 20);
    for absent in ["result", "error", "inputRequests", "requestState", "task"] {
        assert!(created.get(absent).is_none(), "{absent} in {created}");
    }
    let id = created["taskId"].as_str().unwrap();
    assert_eq!(id.len(), 22, "128 random bits, base64url");
    // Durable at once: an immediate get finds it, still working.
    let now = get(&s, id).await;
    assert_eq!(now["status"], "working");
    assert_eq!(now["resultType"], "complete");
    let done = wait_for(&s, id, "completed").await;
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Computed x after 0.3s"
    );
    assert!(done.get("error").is_none());

    // The same tool without the extension: an ordinary result.
    let plain = rpc(
        &s,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 0}}),
        without_tasks(),
    )
    .await;
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    assert!(plain["result"].get("taskId").is_none());
}

#[tokio::test]
async fn tool_errors_complete_with_is_error_and_protocol_errors_fail() {
    let s = replica(Arc::new(MemoryTaskStore::new()), fast());
    let id = start(&s, "failing_job", json!({})).await;
    let t = wait_for(&s, &id, "completed").await;
    assert_eq!(t["status"], "completed");
    assert_eq!(t["result"]["isError"], true);

    let id = start(&s, "protocol_error_job", json!({})).await;
    let t = wait_for(&s, &id, "failed").await;
    assert_eq!(t["status"], "failed");
    assert_eq!(t["error"]["code"], -32603);
    assert_eq!(t["error"]["message"], "Internal error");
    assert!(t.get("result").is_none());
}

#[tokio::test]
async fn the_extension_gates_tasks() {
    let s = replica(Arc::new(MemoryTaskStore::new()), fast());
    // A required task without the extension: -32021 naming it.
    let r = rpc(
        &s,
        "tools/call",
        json!({"name": "failing_job", "arguments": {}}),
        without_tasks(),
    )
    .await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"]["extensions"],
        json!({EXT: {}})
    );
    // tasks/* without the extension: -32021, even for a real task.
    let id = start(&s, "slow_compute", json!({"seconds": 5})).await;
    for (m, p) in [
        ("tasks/get", json!({"taskId": id})),
        ("tasks/update", json!({"taskId": id, "inputResponses": {}})),
        ("tasks/cancel", json!({"taskId": id})),
    ] {
        let r = rpc(&s, m, p, without_tasks()).await;
        assert_eq!(r["error"]["code"], -32021, "{m}: {r}");
    }
    // The removed methods do not exist.
    for m in ["tasks/result", "tasks/list"] {
        let r = rpc(&s, m, json!({"taskId": id}), with_tasks()).await;
        assert_eq!(r["error"]["code"], -32601, "{m}: {r}");
    }
    // The server advertises the extension; tools/list shows the task support.
    let d = rpc(&s, "server/discover", json!({}), with_tasks()).await;
    // (the fixture also serves skills, so the Skills extension is declared next to it)
    assert_eq!(d["result"]["capabilities"]["extensions"][EXT], json!({}));
    let l = rpc(&s, "tools/list", json!({}), with_tasks()).await;
    let support = |name: &str| {
        l["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["execution"]["taskSupport"].clone())
            .unwrap()
    };
    assert_eq!(support("failing_job"), "required");
    assert_eq!(support("slow_compute"), "optional");
    assert_eq!(support("greet"), Value::Null);
}

#[tokio::test]
async fn another_principal_and_bad_ids_find_nothing() {
    let s = replica(Arc::new(MemoryTaskStore::new()), fast());
    let id = start(&s, "slow_compute", json!({"seconds": 5})).await;
    let bob = Principal::named("bob");
    for (m, p) in [
        ("tasks/get", json!({"taskId": id})),
        ("tasks/update", json!({"taskId": id, "inputResponses": {}})),
        ("tasks/cancel", json!({"taskId": id})),
    ] {
        let r = rpc_as(&s, &bob, m, p.clone(), with_tasks()).await;
        assert_eq!(r["error"]["code"], -32602, "{m}: {r}");
        let r = rpc_as(&s, &Principal::anonymous(), m, p, with_tasks()).await;
        assert_eq!(r["error"]["code"], -32602, "{m} (anonymous): {r}");
    }
    // Bob's cancel did nothing.
    assert_eq!(get(&s, &id).await["status"], "working");
    let long = "x".repeat(100_000);
    for p in [
        json!({"taskId": 12}),
        json!({"taskId": null}),
        json!({}),
        json!({"taskId": long}),
        json!({"taskId": "nope"}),
        json!({"taskId": "tasks-conformance-nonexistent-12345"}),
    ] {
        for m in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let r = rpc(&s, m, p.clone(), with_tasks()).await;
            assert_eq!(r["error"]["code"], -32602, "{m} {p}: {r}");
        }
    }
    let r = rpc(
        &s,
        "tasks/update",
        json!({"taskId": id, "inputResponses": []}),
        with_tasks(),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn cancel_acknowledges_settles_and_stops_the_code() {
    let s = replica(Arc::new(MemoryTaskStore::new()), fast());
    let id = start(&s, "counted_sleep", json!({"ms": 400, "tag": "cancelled"})).await;
    assert_eq!(s.running_tasks(), 1);
    let ack = rpc(&s, "tasks/cancel", json!({"taskId": id}), with_tasks()).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}));
    assert_eq!(get(&s, &id).await["status"], "cancelled");
    tokio::time::sleep(Duration::from_millis(700)).await;
    // The code never got past its sleep, and nothing runs any more.
    assert_eq!(finished("cancelled"), 0);
    assert_eq!(s.running_tasks(), 0);
    // Cancelling a terminal task: the same ack, the status stays.
    let ack = rpc(&s, "tasks/cancel", json!({"taskId": id}), with_tasks()).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}));
    assert_eq!(get(&s, &id).await["status"], "cancelled");
}

#[tokio::test]
async fn input_required_is_answered_through_another_replica() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let a = replica(store.clone(), fast());
    let b = replica(store.clone(), fast());
    let id = start(&a, "confirm_delete", json!({"filename": "notes.txt"})).await;
    let t = wait_for(&b, &id, "input_required").await;
    assert_eq!(t["status"], "input_required");
    let requests = t["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1);
    let (key, req) = requests.iter().next().unwrap();
    assert_eq!(req["method"], "elicitation/create");
    // A wrong answer shape is refused, the task waits on.
    let bad = rpc(
        &b,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {key: {"action": 3}}}),
        with_tasks(),
    )
    .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    // Unknown keys are ignored (ack), the task waits on.
    let ack = rpc(
        &b,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"unknown": {}}}),
        with_tasks(),
    )
    .await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}));
    assert_eq!(get(&a, &id).await["status"], "input_required");
    let ack = rpc(
        &b,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}}}),
        with_tasks(),
    )
    .await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}));
    let done = wait_for(&a, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Deleted notes.txt");
    // An answer after the fact changes nothing.
    let again = rpc(&a, "tasks/update", json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"confirm": false}}}}), with_tasks()).await;
    assert_eq!(again["result"], json!({"resultType": "complete"}));
    assert_eq!(
        get(&b, &id).await["result"]["content"][0]["text"],
        "Deleted notes.txt"
    );
}

#[tokio::test]
async fn partial_answers_raced_through_two_replicas_are_all_kept() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let a = replica(store.clone(), fast());
    let b = replica(store.clone(), fast());
    let id = start(&a, "multi_input", json!({})).await;
    let t = wait_for(&a, &id, "input_required").await;
    let keys: Vec<String> = t["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys.len(), 2, "{t}");
    let answer = |k: &str, name: &str| json!({"taskId": id, "inputResponses": {k: {"action": "accept", "content": {"name": name}}}});
    // One answer: still input_required, only the other key shown.
    let r = rpc(&a, "tasks/update", answer(&keys[0], "one"), with_tasks()).await;
    assert_eq!(r["result"]["resultType"], "complete");
    let t = get(&b, &id).await;
    assert_eq!(t["status"], "input_required");
    assert_eq!(
        t["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        vec![&keys[1]]
    );
    // The second answer through the other replica completes it.
    let r = rpc(&b, "tasks/update", answer(&keys[1], "two"), with_tasks()).await;
    assert_eq!(r["result"]["resultType"], "complete");
    let done = wait_for(&a, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Got one and two");

    // Both answers at the same time, one per replica: no lost update.
    let id2 = start(&b, "multi_input", json!({})).await;
    let t = wait_for(&b, &id2, "input_required").await;
    let keys: Vec<String> = t["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let p1 = json!({"taskId": id2, "inputResponses": {&keys[0]: {"action": "accept", "content": {"name": "x"}}}});
    let p2 = json!({"taskId": id2, "inputResponses": {&keys[1]: {"action": "accept", "content": {"name": "y"}}}});
    let (r1, r2) = tokio::join!(
        rpc(&a, "tasks/update", p1, with_tasks()),
        rpc(&b, "tasks/update", p2, with_tasks())
    );
    assert_eq!(r1["result"]["resultType"], "complete");
    assert_eq!(r2["result"]["resultType"], "complete");
    let done = wait_for(&a, &id2, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Got x and y");
}

#[tokio::test]
async fn mrtr_rounds_then_a_task_on_detach() {
    let s = replica(Arc::new(MemoryTaskStore::new()), fast());
    let r1 = rpc(
        &s,
        "tools/call",
        json!({"name": "test_tool_with_task", "arguments": {}}),
        with_tasks(),
    )
    .await;
    let r1 = &r1["result"];
    assert_eq!(r1["resultType"], "input_required", "{r1}");
    assert!(r1.get("taskId").is_none());
    let key = r1["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let r2 = rpc(
        &s,
        "tools/call",
        json!({
            "name": "test_tool_with_task", "arguments": {},
            "inputResponses": {key: {"action": "accept", "content": {"name": "Alice"}}},
            "requestState": r1["requestState"],
        }),
        with_tasks(),
    )
    .await;
    let r2 = &r2["result"];
    assert_eq!(r2["resultType"], "task", "{r2}");
    assert!(r2.get("requestState").is_none());
    let id = r2["taskId"].as_str().unwrap();
    let done = wait_for(&s, id, "completed").await;
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Alice"), "{text}");
}

#[tokio::test]
async fn expired_tasks_are_not_found_and_collected() {
    let store = Arc::new(MemoryTaskStore::new());
    let config = fast()
        .with_ttl(Some(Duration::from_millis(1500)))
        .with_sweep_interval(Duration::ZERO);
    let s = replica(store.clone(), config);
    let id = start(&s, "slow_compute", json!({"seconds": 0})).await;
    assert_eq!(wait_for(&s, &id, "completed").await["ttlMs"], 1500);
    assert_eq!(store.len(), 1);
    tokio::time::sleep(Duration::from_millis(1700)).await;
    let r = rpc(&s, "tasks/get", json!({"taskId": id}), with_tasks()).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // The sweep (started by requests) deletes it from the store.
    let _ = start(&s, "slow_compute", json!({"seconds": 0})).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while store.len() > 1 {
        assert!(Instant::now() < deadline, "expired task not collected");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs `f` on a replica living in its own runtime, which is then shut down: the replica's
/// background work dies mid-task, like a killed process.
fn on_doomed_replica(
    store: Arc<dyn TaskStore>,
    config: TaskConfig,
    tool: &'static str,
    args: Value,
) -> String {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let id = rt.block_on(async move {
            let doomed = replica(store, config);
            start(&doomed, tool, args).await
        });
        rt.shutdown_background();
        id
    })
    .join()
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_replica_died_is_finished_by_another() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let config = fast().with_lease(Duration::from_millis(300));
    let id = on_doomed_replica(
        store.clone(),
        config.clone(),
        "counted_sleep",
        json!({"ms": 200, "tag": "taken-over"}),
    );
    let survivor = replica(store, config);
    // Still `working` on the record, but nobody renews the lease; once it lapses, the
    // survivor takes the task over and runs its round again.
    let done = wait_for(&survivor, &id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "slept 200 ms");
    // Only the survivor's run finished (the doomed replica's was dropped with it).
    assert_eq!(finished("taken-over"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_keeps_losing_its_replica_fails_with_a_reason() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let config = fast()
        .with_lease(Duration::from_millis(300))
        .with_max_attempts(1);
    let id = on_doomed_replica(
        store.clone(),
        config.clone(),
        "slow_compute",
        json!({"seconds": 30}),
    );
    let survivor = replica(store, config);
    let t = wait_for(&survivor, &id, "failed").await;
    assert_eq!(t["status"], "failed", "{t}");
    assert_eq!(t["error"]["code"], -32603);
    let why = t["statusMessage"].as_str().unwrap();
    assert!(why.contains("stopped before it finished"), "{why}");
}

/// Asks the same key twice, in two rounds.
#[mcp_tool(task = "optional")]
async fn twice(cx: &mut ToolContext) -> Result<String, ToolError> {
    let first: fixture::Name = cx.ask("First?").key("q").await?;
    let second: fixture::Name = cx.ask("Second?").key("q").await?;
    Ok(format!("{} then {}", first.name, second.name))
}

#[tokio::test]
async fn input_request_keys_are_never_reused_in_a_task() {
    let s = fixture::builder(Some(sealer()))
        .tool(twice::tool())
        .task_config(fast())
        .build()
        .expect("server");
    let id = start(&s, "twice", json!({})).await;
    let mut seen = Vec::new();
    for name in ["a", "b"] {
        let t = wait_for(&s, &id, "input_required").await;
        let key = t["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        assert!(!seen.contains(&key), "key {key} reused");
        seen.push(key.clone());
        // An answer to the previous phase's key is ignored.
        if seen.len() == 2 {
            let stale = json!({"taskId": id, "inputResponses": {&seen[0]: {"action": "accept", "content": {"name": "stale"}}}});
            rpc(&s, "tasks/update", stale, with_tasks()).await;
            assert_eq!(get(&s, &id).await["status"], "input_required");
        }
        let p = json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"name": name}}}});
        rpc(&s, "tasks/update", p, with_tasks()).await;
        // Wait until the answer is taken (the task leaves this phase).
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let t = get(&s, &id).await;
            let same = t["inputRequests"]
                .as_object()
                .is_some_and(|m| m.contains_key(&seen[seen.len() - 1]));
            if !same {
                break;
            }
            assert!(Instant::now() < deadline);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let done = wait_for(&s, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "a then b");
}

#[tokio::test]
async fn over_http_mcp_name_must_be_the_task_id() {
    use mcp_tool_runtime::transport::http::{self, HttpConfig};
    let s = replica(Arc::new(MemoryTaskStore::new()), fast());
    let h = http::spawn("127.0.0.1:0".parse().unwrap(), s, HttpConfig::default())
        .await
        .expect("http");
    let c = reqwest::Client::new();
    let post = |method: &'static str, params: Value, name: Option<String>| {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}},
        });
        let mut req = c
            .post(h.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
        if let Some(n) = name {
            req = req.header("mcp-name", n);
        }
        req.send()
    };
    let r = post(
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 5}}),
        Some("slow_compute".into()),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    let id = body["result"]["taskId"].as_str().unwrap().to_owned();
    // Matching header: the task.
    let r = post("tasks/get", json!({"taskId": id}), Some(id.clone()))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["result"]["taskId"], json!(id));
    // Another task id in the header, or none: 400 with -32020 (header mismatch).
    for name in [Some("someone-elses-task".to_owned()), None] {
        let r = post("tasks/get", json!({"taskId": id}), name)
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], -32020, "{body}");
    }
    let r = post("tasks/cancel", json!({"taskId": id}), Some(id.clone()))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_replica_runs_at_most_max_running_tasks() {
    let s = replica(Arc::new(MemoryTaskStore::new()), fast().with_max_running(1));
    let first = start(&s, "slow_compute", json!({"seconds": 30})).await;
    let r = rpc(
        &s,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 30}}),
        with_tasks(),
    )
    .await;
    assert_eq!(r["error"]["code"], -32000, "{r}");
    // A client without the extension still gets the plain call.
    let plain = rpc(
        &s,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 0}}),
        without_tasks(),
    )
    .await;
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    rpc(&s, "tasks/cancel", json!({"taskId": first}), with_tasks()).await;
    let again = start(&s, "slow_compute", json!({"seconds": 0})).await;
    assert_eq!(
        wait_for(&s, &again, "completed").await["status"],
        "completed"
    );
}

/// Issue 18, item 7: every stored task counts against its principal's allowance (and the
/// replica's) until it expires, so replayed or repeated calls cannot fill the store.
#[tokio::test]
async fn one_principal_cannot_fill_the_task_store() {
    let config = fast()
        .with_max_tasks_per_principal(3)
        .with_max_stored_tasks(5)
        .with_ttl(Some(Duration::from_millis(600)));
    let s = replica(Arc::new(MemoryTaskStore::new()), config);
    let call = json!({"name": "counted_sleep", "arguments": {"ms": 0, "tag": "quota"}});
    for _ in 0..3 {
        start(&s, "counted_sleep", json!({"ms": 0, "tag": "quota"})).await;
    }
    // finished or not, alice's three stored tasks hold her allowance
    let refused = rpc(&s, "tools/call", call.clone(), with_tasks()).await;
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("this caller")),
        "{refused}"
    );
    // meanwhile others still get tasks, up to the replica's allowance
    for who in ["bob", "carol"] {
        let r = rpc_as(
            &s,
            &Principal::named(who),
            "tools/call",
            call.clone(),
            with_tasks(),
        )
        .await;
        assert_eq!(r["result"]["resultType"], "task", "{who}: {r}");
    }
    let full = rpc_as(
        &s,
        &Principal::named("dave"),
        "tools/call",
        call.clone(),
        with_tasks(),
    )
    .await;
    assert_eq!(full["error"]["code"], -32000, "{full}");
    assert!(
        full["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("stored")),
        "{full}"
    );
    // and a call without the tasks extension is not a task: it still runs
    let plain = rpc(&s, "tools/call", call.clone(), without_tasks()).await;
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    // once the tasks expire, the allowances are back
    tokio::time::sleep(Duration::from_millis(700)).await;
    let again = rpc(&s, "tools/call", call, with_tasks()).await;
    assert_eq!(again["result"]["resultType"], "task", "{again}");
}

/// The store suite (`mcp_tool_tests::store_suite`: tasks and the single-use ledger) on the
/// in-process store; the database backends run the same suite in store_sqlite.rs,
/// store_postgres.rs and store_redis.rs.
#[tokio::test]
async fn the_memory_store_passes_the_store_suite() {
    let store = mcp_tool_runtime::store::MemoryStore::new();
    mcp_tool_tests::store_suite::run(&*store, &*store, "memory").await;
    // the task half on its own type too
    let tasks = MemoryTaskStore::new();
    mcp_tool_tests::store_suite::run_tasks(&tasks, &tasks, "memory-tasks").await;
}
