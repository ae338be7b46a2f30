//! `donate` (single use) and `balance` over the real HTTP transport: the confirmed round
//! replayed 64 times at once raises the balance exactly once and every answer is the same
//! bytes; a later sequential replay gets those bytes again; another principal's replay is
//! refused with -32602 and donates nothing.

use std::net::SocketAddr;

use mcp_tool_client::HttpTransport;
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use mcp_tool_runtime::transport::auth::BearerDemoAuth;
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use serde_json::{Value, json};

const REPLAYS: usize = 64;

fn call(id: u64, name: &str, args: Value, extra: Value) -> Value {
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

/// POSTs `body` as `who` (a demo bearer token): status and body bytes.
async fn post(client: &reqwest::Client, url: &str, who: &str, body: &Value) -> (u16, String) {
    let mut req = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("authorization", format!("Bearer {who}"));
    for (k, v) in HttpTransport::mcp_headers(body) {
        req = req.header(k, v);
    }
    let resp = req
        .body(serde_json::to_vec(body).unwrap())
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

async fn balance(client: &reqwest::Client, url: &str, who: &str) -> i64 {
    let (status, text) = post(client, url, who, &call(9, "balance", json!({}), json!({}))).await;
    assert_eq!(status, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    v["result"]["structuredContent"]["balance"]
        .as_i64()
        .unwrap_or_else(|| panic!("no balance: {v}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn donate_replayed_64_times_at_once_donates_once_with_identical_answers() {
    let notes = Notes::temporary().unwrap();
    let server =
        mcp_tool_examples::example_server(None, Repo::embedded_demo().unwrap(), notes).unwrap();
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let config = HttpConfig::default().authenticator(BearerDemoAuth::new());
    let h = http::spawn(addr, server, config).await.unwrap();
    let url = h.url();
    let client = reqwest::Client::new();
    assert_eq!(balance(&client, &url, "alice").await, 0);

    // round 1: the confirmation form; nothing is donated yet
    let args = json!({"amount": 5});
    let (status, text) = post(
        &client,
        &url,
        "alice",
        &call(1, "donate", args.clone(), json!({})),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let first: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let key = first["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .unwrap();
    assert_eq!(balance(&client, &url, "alice").await, 0);

    // round 2 (the effect), sent 64 times at once
    let last = call(
        2,
        "donate",
        args,
        json!({
            "requestState": state,
            "inputResponses": {key.clone(): {"action": "accept", "content": {"confirm": true}}},
        }),
    );
    let started = std::time::Instant::now();
    let replays: Vec<_> = (0..REPLAYS)
        .map(|_| {
            let (client, url, last) = (client.clone(), url.clone(), last.clone());
            tokio::spawn(async move {
                // a client honours busy (503 + Retry-After): the first presentation may
                // outlast `once_wait` on a loaded machine
                let mut busy = 0u32;
                loop {
                    let (status, body) = post(&client, &url, "alice", &last).await;
                    if status != 503 || busy >= 20 {
                        return ((status, body), busy);
                    }
                    busy += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                }
            })
        })
        .collect();
    let mut answers = Vec::new();
    let mut busy = 0;
    for r in replays {
        let (answer, b) = r.await.unwrap();
        answers.push(answer);
        busy += b;
    }
    let elapsed = started.elapsed();
    let (status, body) = answers[0].clone();
    assert_eq!(status, 200, "{body}");
    let distinct: std::collections::BTreeSet<_> = answers.iter().collect();
    println!(
        "donate: {REPLAYS} concurrent presentations of the confirmed round in {elapsed:?}: \
         {} distinct answer(s) ({busy} busy answer(s) retried), balance {}",
        distinct.len(),
        balance(&client, &url, "alice").await
    );
    assert_eq!(distinct.len(), 1, "every answer is the same bytes");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v["result"]["structuredContent"],
        json!({"donated": true, "balance": 5})
    );
    assert_eq!(balance(&client, &url, "alice").await, 5);

    // a sequential replay later: the same bytes, no second donation
    let again = post(&client, &url, "alice", &last).await;
    assert_eq!(again, answers[0]);
    assert_eq!(balance(&client, &url, "alice").await, 5);

    // another principal presenting alice's state: -32602, nothing donated to anyone
    let (status, text) = post(&client, &url, "bob", &last).await;
    assert_eq!(status, 400, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["code"], -32602);
    assert_eq!(balance(&client, &url, "bob").await, 0);
    assert_eq!(balance(&client, &url, "alice").await, 5);

    // a new call donates again: single use is per state, not per tool
    let (_, text) = post(
        &client,
        &url,
        "alice",
        &call(3, "donate", json!({"amount": 2}), json!({})),
    )
    .await;
    let v: Value = serde_json::from_str(&text).unwrap();
    let state = v["result"]["requestState"].as_str().unwrap();
    let (_, text) = post(
        &client,
        &url,
        "alice",
        &call(
            4,
            "donate",
            json!({"amount": 2}),
            json!({"requestState": state, "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}}}),
        ),
    )
    .await;
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["result"]["structuredContent"]["balance"], 7, "{v}");
    h.shutdown().await.unwrap();
}
