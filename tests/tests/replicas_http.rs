//! SEP-2322's load-shedding and rolling-upgrade scenarios over real HTTP on loopback: two
//! `Server` instances (replicas) sharing only the state key, each retry sent to the other one.

mod support;

use std::time::Duration;

use mcp_tool_examples::fake_model::FakeModel;
use serde_json::json;
use support::*;

#[tokio::test]
async fn a_checkpointed_computation_resumes_on_the_other_replica() {
    let a = spawn(example_server(sealer(Duration::from_secs(600), None))).await;
    let b = spawn(example_server(sealer(Duration::from_secs(600), None))).await;
    let peers = [Peer::new(a.url(), json!({})), Peer::new(b.url(), json!({}))];
    let args = json!({"n": 10, "chunk": 3});
    let mut state: Option<String> = None;
    let mut id = 1;
    let result = loop {
        // Even ids to replica B, odd to replica A.
        let r = peers[(id % 2) as usize]
            .call(id, "sum_of_squares", args.clone(), None, state.as_deref())
            .await;
        assert_eq!(r.status, 200, "{}", r.raw);
        if r.result_type() == "complete" {
            break r.result().clone();
        }
        // Load shedding: no questions, only the state to echo.
        assert_eq!(r.result_type(), "input_required");
        assert!(r.result().get("inputRequests").is_none(), "{}", r.raw);
        state = Some(state_of(&r));
        id += 1;
    };
    assert_eq!(id, 4, "three checkpoints, four requests");
    assert_eq!(
        result["structuredContent"],
        json!({"n": 10, "total": 385, "checkpoints": 3})
    );
}

#[tokio::test]
async fn rolling_upgrade_carries_earlier_answers_in_the_state() {
    let a = spawn(example_server(sealer(Duration::from_secs(600), None))).await;
    let b = spawn(example_server(sealer(Duration::from_secs(600), None))).await;
    let caps = json!({"elicitation": {"form": {}}});
    let (pa, pb) = (Peer::new(a.url(), caps.clone()), Peer::new(b.url(), caps));
    let model = FakeModel::new();

    let r1 = pa.call(1, "link_accounts", json!({}), None, None).await;
    let keys: Vec<&String> = r1.result()["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["github_login", "google_login"]);

    let r2 = pb
        .call(
            2,
            "link_accounts",
            json!({}),
            Some(answer_all(&model, r1.result())),
            Some(&state_of(&r1)),
        )
        .await;
    let keys: Vec<&String> = r2.result()["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        keys,
        ["microsoft_login"],
        "github/google are not asked again"
    );

    // The third request carries only microsoft_login.
    let answers = answer_all(&model, r2.result());
    assert_eq!(answers.as_object().unwrap().len(), 1);
    let r3 = pa
        .call(
            3,
            "link_accounts",
            json!({}),
            Some(answers),
            Some(&state_of(&r2)),
        )
        .await;
    assert_eq!(r3.result_type(), "complete", "{}", r3.raw);
    assert_eq!(r3.result()["structuredContent"]["github"], "octocat");
    assert_eq!(
        r3.result()["structuredContent"]["google"],
        "octo.google@example.com"
    );
}

#[tokio::test]
async fn get_weather_over_http_with_the_seps_messages() {
    let a = spawn(example_server(sealer(Duration::from_secs(600), None))).await;
    let peer = Peer::new(a.url(), json!({"elicitation": {}}));
    let r1 = peer
        .call(
            1,
            "get_weather",
            json!({"location": "New York"}),
            None,
            None,
        )
        .await;
    assert_eq!(
        r1.result()["inputRequests"]["github_login"],
        json!({"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "Please provide your GitHub username",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string", "description": "Your GitHub username."}}, "required": ["name"]}
        }})
    );
    // The SEP's "not_requested_info" retry: unknown keys are ignored, the question is asked again.
    let r2 = peer
        .call(
            2,
            "get_weather",
            json!({"location": "New York"}),
            Some(json!({"not_requested_info": {"action": "accept", "content": {"x": "y"}}})),
            Some(&state_of(&r1)),
        )
        .await;
    assert_eq!(r2.result_type(), "input_required", "{}", r2.raw);
    assert!(r2.result()["inputRequests"]["github_login"].is_object());
    let r3 = peer
        .call(
            3,
            "get_weather",
            json!({"location": "New York"}),
            Some(json!({"github_login": {"action": "accept", "content": {"name": "octocat"}}})),
            Some(&state_of(&r2)),
        )
        .await;
    assert_eq!(r3.result_type(), "complete");
    assert_eq!(
        r3.result()["content"][0]["text"],
        "Weather in New York for octocat: sunny, high 22 °C."
    );
    // An answer of the wrong shape is -32602.
    let r4 = peer
        .call(
            4,
            "get_weather",
            json!({"location": "New York"}),
            Some(json!({"github_login": {"action": "accept", "content": {"name": 7}}})),
            Some(&state_of(&r2)),
        )
        .await;
    assert_eq!(r4.code(), -32602, "{}", r4.raw);
}
