//! The lesson's checkpoints for `summarize_repo`, end to end over real HTTP on loopback.

mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_runtime::seal::ManualClock;
use serde_json::{Value, json};
use support::*;

const TTL: Duration = Duration::from_secs(600);

fn sampling() -> Value {
    json!({"sampling": {}})
}

async fn start() -> (mcp_tool_runtime::transport::http::HttpHandle, Peer) {
    let handle = spawn(example_server(sealer(TTL, None))).await;
    let peer = Peer::new(handle.url(), sampling());
    (handle, peer)
}

fn args() -> Value {
    json!({"audience": "developer"})
}

/// Retries `summarize_repo` (default arguments) with `answers` and the echoed `state`.
async fn retry(peer: &Peer, id: u64, answers: Value, state: &str) -> Reply {
    peer.call(id, "summarize_repo", args(), Some(answers), Some(state))
        .await
}

/// The next round after `prev`: `args` again, `model`'s answers to `prev`'s input requests
/// and `prev`'s state.
async fn next_round(peer: &Peer, id: u64, args: &Value, model: &FakeModel, prev: &Reply) -> Reply {
    let answers = answer_all(model, prev.result());
    peer.call(
        id,
        "summarize_repo",
        args.clone(),
        Some(answers),
        Some(&state_of(prev)),
    )
    .await
}

#[tokio::test]
async fn discovery_has_cache_hints() {
    let (_h, peer) = start().await;
    let r = peer.request(1, "server/discover", json!({})).await;
    assert_eq!(r.status, 200);
    let res = r.result();
    assert_eq!(res["resultType"], "complete");
    assert!(res["ttlMs"].as_u64().is_some(), "{res}");
    assert!(
        ["public", "private"].contains(&res["cacheScope"].as_str().unwrap()),
        "{res}"
    );
    assert_eq!(res["supportedVersions"], json!(["2026-07-28"]));
    assert!(res["capabilities"]["tools"].is_object());
    assert_eq!(
        res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-tool-examples"
    );
}

#[tokio::test]
async fn tools_list_describes_summarize_repo() {
    let (_h, peer) = start().await;
    let r = peer.request(1, "tools/list", json!({})).await;
    assert_eq!(r.status, 200);
    let res = r.result();
    assert_eq!(res["resultType"], "complete");
    assert!(res["ttlMs"].as_u64().is_some());
    assert!(res["cacheScope"].is_string());
    let info = &res["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert!(
        info["name"].is_string() && info["version"].is_string(),
        "{res}"
    );
    let tools = res["tools"].as_array().unwrap();
    let tool = tools
        .iter()
        .find(|t| t["name"] == "summarize_repo")
        .expect("summarize_repo listed");
    assert_eq!(tool["inputSchema"]["type"], "object");
    assert_eq!(
        tool["inputSchema"]["properties"]["audience"]["type"],
        "string"
    );
    assert_eq!(tool["inputSchema"]["required"], json!(["audience"]));
    assert!(tool["description"].as_str().unwrap().contains("repository"));
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for n in [
        "get_weather",
        "link_accounts",
        "sum_of_squares",
        "list_roots",
        "prune_branches",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
}

#[tokio::test]
async fn missing_sampling_capability_is_32021() {
    let (_h, peer) = start().await;
    let bare = Peer::new(peer.url.clone(), json!({}));
    let r = bare.call(1, "summarize_repo", args(), None, None).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.code(), -32021);
    assert_eq!(
        r.error()["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

#[tokio::test]
async fn unsupported_version_is_32022() {
    let (_h, peer) = start().await;
    let mut old = peer.clone();
    old.version = "2024-11-05".into();
    let r = old.call(1, "summarize_repo", args(), None, None).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.code(), -32022);
    assert_eq!(
        r.error()["data"],
        json!({"supported": ["2026-07-28"], "requested": "2024-11-05"})
    );
}

#[tokio::test]
async fn a_notification_gets_202_and_no_body() {
    let (_h, peer) = start().await;
    let r = peer
        .send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "_meta": peer.meta()}}),
        )
        .await;
    assert_eq!(r.status, 202);
    assert!(r.raw.is_empty(), "body: {:?}", r.raw);
}

/// Ids 1, 2, 3: two `input_required` results, then `complete` with the files and summary.
#[tokio::test]
async fn three_requests_two_input_required_then_complete() {
    let (_h, peer) = start().await;
    let model = FakeModel::new();

    let r1 = peer.call(1, "summarize_repo", args(), None, None).await;
    assert_eq!(r1.status, 200);
    assert_eq!(r1.body.as_ref().unwrap()["id"], 1);
    assert_eq!(r1.result_type(), "input_required");
    let reqs = &r1.result()["inputRequests"];
    assert_eq!(reqs.as_object().unwrap().len(), 1);
    let pick = &reqs["pick_files"];
    assert_eq!(pick["method"], "sampling/createMessage");
    let p = &pick["params"];
    assert_eq!(p["systemPrompt"], "Return only the requested value.");
    assert_eq!(
        p["modelPreferences"],
        json!({"costPriority": 0.8, "intelligencePriority": 0.2})
    );
    assert_eq!(p["maxTokens"], 400);
    assert_eq!(p["includeContext"], "none");
    let text = p["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.starts_with("Choose three representative files and return a JSON array."));
    for f in ["README.md", "server.py", "docs/intro.md", "forecast.py"] {
        assert!(text.contains(&format!("- {f}\n")), "{text}");
    }
    assert!(
        r1.result().get("ttlMs").is_none(),
        "no cache hints on input_required"
    );
    let s1 = state_of(&r1);

    let a1 = answer_all(&model, r1.result());
    assert_eq!(
        a1["pick_files"]["content"]["text"],
        r#"["README.md","server.py","docs/intro.md"]"#
    );
    let r2 = retry(&peer, 2, a1, &s1).await;
    assert_eq!(r2.body.as_ref().unwrap()["id"], 2);
    assert_eq!(r2.result_type(), "input_required", "{}", r2.raw);
    let summary_req = &r2.result()["inputRequests"]["summary"];
    assert_eq!(summary_req["method"], "sampling/createMessage");
    let text = summary_req["params"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("=== server.py ==="));
    assert!(text.contains("HTTP entry point of tinyweather"));
    assert!(text.contains("Audience: developer"));
    let s2 = state_of(&r2);
    assert_ne!(s1, s2);

    let a2 = answer_all(&model, r2.result());
    let r3 = retry(&peer, 3, a2, &s2).await;
    assert_eq!(r3.body.as_ref().unwrap()["id"], 3);
    assert_eq!(r3.result_type(), "complete", "{}", r3.raw);
    let res = r3.result();
    assert_eq!(
        res["structuredContent"]["files"],
        json!(["README.md", "server.py", "docs/intro.md"])
    );
    let summary = res["structuredContent"]["summary"].as_str().unwrap();
    assert!(summary.starts_with("For a developer:"), "{summary}");
    assert!(res["structuredContent"].get("critique").is_none());
    let text = res["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("README.md, server.py, docs/intro.md"));
    assert!(text.contains(summary));
    assert!(res.get("isError").is_none() || res["isError"] == false);
}

#[tokio::test]
async fn the_critique_round_works() {
    let (_h, peer) = start().await;
    let model = FakeModel::new();
    let args = json!({"audience": "manager", "critique": true});
    let r1 = peer
        .call(1, "summarize_repo", args.clone(), None, None)
        .await;
    let r2 = next_round(&peer, 2, &args, &model, &r1).await;
    let r3 = next_round(&peer, 3, &args, &model, &r2).await;
    assert_eq!(r3.result_type(), "input_required", "{}", r3.raw);
    let critique_req = &r3.result()["inputRequests"]["critique"];
    let text = critique_req["params"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    // The summary came back from the sealed state, not from the client.
    assert!(text.contains("Summary:\nFor a manager:"), "{text}");
    let r4 = next_round(&peer, 4, &args, &model, &r3).await;
    assert_eq!(r4.result_type(), "complete", "{}", r4.raw);
    let sc = &r4.result()["structuredContent"];
    assert!(
        sc["critique"]
            .as_str()
            .unwrap()
            .starts_with("The summary is")
    );
    assert!(
        sc["summary"]
            .as_str()
            .unwrap()
            .starts_with("For a manager:")
    );
    assert!(
        r4.result()["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Critique: ")
    );
}

#[tokio::test]
async fn summarize_repo_is_limited_to_three_rounds() {
    let tools = mcp_tool_examples::tools::all();
    let info = tools
        .iter()
        .map(|t| t.info())
        .find(|i| i.name == "summarize_repo")
        .unwrap();
    assert_eq!(info.max_rounds, 3);
    assert!(info.capabilities.sampling);
}

async fn first_round(peer: &Peer) -> (Value, String) {
    let r1 = peer.call(1, "summarize_repo", args(), None, None).await;
    let state = state_of(&r1);
    (answer_all(&FakeModel::new(), r1.result()), state)
}

fn assert_invalid_state(r: &Reply) {
    assert_eq!(r.status, 400, "{}", r.raw);
    assert_eq!(r.code(), -32602, "{}", r.raw);
}

#[tokio::test]
async fn changed_arguments_on_a_retry_are_32602() {
    let (_h, peer) = start().await;
    let (answers, state) = first_round(&peer).await;
    let r = peer
        .call(
            2,
            "summarize_repo",
            json!({"audience": "attacker"}),
            Some(answers),
            Some(&state),
        )
        .await;
    assert_invalid_state(&r);
}

#[tokio::test]
async fn a_tampered_state_is_32602() {
    let (_h, peer) = start().await;
    let (answers, state) = first_round(&peer).await;
    let mut bytes = state.into_bytes();
    let i = bytes.len() - 5;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(bytes).unwrap();
    let r = retry(&peer, 2, answers.clone(), &tampered).await;
    assert_invalid_state(&r);
    let r = retry(&peer, 3, answers, "not-a-state").await;
    assert_invalid_state(&r);
}

#[tokio::test]
async fn a_state_replayed_by_another_principal_is_32602() {
    let (_h, peer) = start().await;
    let alice = peer.as_user("alice");
    let (answers, state) = first_round(&alice).await;
    let r = retry(&peer.as_user("mallory"), 2, answers.clone(), &state).await;
    assert_invalid_state(&r);
    // Nor does the anonymous principal get it…
    let r = retry(&peer, 3, answers.clone(), &state).await;
    assert_invalid_state(&r);
    // …while alice herself still can.
    let r = retry(&alice, 4, answers, &state).await;
    assert_eq!(r.result_type(), "input_required", "{}", r.raw);
}

#[tokio::test]
async fn an_expired_state_is_32602() {
    let start_secs = 1_900_000_000;
    let clock = Arc::new(ManualClock::new(start_secs));
    let ttl = Duration::from_secs(60);
    let handle = spawn(example_server(sealer(ttl, Some(clock.clone())))).await;
    let peer = Peer::new(handle.url(), sampling());
    let (answers, state) = first_round(&peer).await;
    // One second before the TTL the state still opens…
    clock.set(start_secs + ttl.as_secs() - 1);
    let ok = retry(&peer, 2, answers.clone(), &state).await;
    assert_eq!(ok.result_type(), "input_required", "{}", ok.raw);
    // …one second past it, it does not.
    clock.set(start_secs + ttl.as_secs() + 1);
    let r = retry(&peer, 3, answers, &state).await;
    assert_invalid_state(&r);
}

#[tokio::test]
async fn invalid_model_output_for_pick_files_is_32602() {
    let (_h, peer) = start().await;
    let (_, state) = first_round(&peer).await;
    let bad = [
        "this is not JSON",
        r#"{"files": ["README.md"]}"#,
        r#"["README.md", "server.py", "forecast.py", "pyproject.toml"]"#,
        r#"["../../../../etc/passwd"]"#,
        r#"["/etc/passwd"]"#,
        r#"["does-not-exist.md"]"#,
        r#"["docs"]"#,
        r#"[42]"#,
    ];
    for (i, text) in bad.iter().enumerate() {
        let r = retry(
            &peer,
            10 + i as u64,
            json!({"pick_files": text_answer(text)}),
            &state,
        )
        .await;
        assert_eq!(r.status, 400, "{text}: {}", r.raw);
        assert_eq!(r.code(), -32602, "{text}: {}", r.raw);
        assert!(!r.raw.contains("root:"), "no file content leaks");
    }
    // A fenced array is accepted.
    let r = retry(
        &peer,
        30,
        json!({"pick_files": text_answer("```json\n[\"README.md\"]\n```")}),
        &state,
    )
    .await;
    assert_eq!(r.result_type(), "input_required", "{}", r.raw);
}

#[tokio::test]
async fn a_retry_without_the_answer_asks_again() {
    let (_h, peer) = start().await;
    let (_, state) = first_round(&peer).await;
    let r = retry(
        &peer,
        2,
        json!({"unrelated": {"action": "decline"}}),
        &state,
    )
    .await;
    assert_eq!(r.result_type(), "input_required", "{}", r.raw);
    assert!(r.result()["inputRequests"]["pick_files"].is_object());
}
