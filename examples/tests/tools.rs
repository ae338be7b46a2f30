//! Every example tool, driven through its rounds in process by the client's `Driver` with the
//! deterministic fake model (or a scripted host), and — where it matters — across two server
//! "replicas" that share only the state key.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_tool_client::{
    BoxFuture, ClientTransport, Direction, Driver, DriverError, InProcessTransport, ScriptedHost,
    TransportError,
};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_examples::tools::get_weather::{WeatherArgs, get_weather};
use mcp_tool_examples::tools::summarize_repo::{SummarizeArgs, summarize_repo};
use mcp_tool_runtime::Server;
use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitAction, ElicitResult, Root};
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use serde_json::{Value, json};

const KEY: &str = "4b8f3e1c9a7d2f6e0b5c8a1d3f7e9b2c4a6d8f0e1b3c5a7d9f2e4b6c8a0d1f3e";

fn sealer() -> Sealer {
    Sealer::new(Keyring::from_hex("k1", KEY).unwrap(), SealConfig::default())
}

fn server() -> Arc<Server> {
    Arc::new(
        mcp_tool_examples::example_server(
            Some(sealer()),
            mcp_tool_examples::repo::Repo::embedded_demo().unwrap(),
            mcp_tool_examples::notes::Notes::temporary().unwrap(),
        )
        .unwrap(),
    )
}

fn driver<H: mcp_tool_client::Host>(host: H) -> Driver<InProcessTransport, H> {
    Driver::new(InProcessTransport::new(server()), host)
}

/// Sends each request to the next replica in turn: replica A, B, A, …
struct Alternating {
    replicas: Vec<InProcessTransport>,
    next: AtomicUsize,
    used: std::sync::Mutex<Vec<usize>>,
}

impl Alternating {
    fn new(n: usize) -> Alternating {
        Alternating {
            replicas: (0..n).map(|_| InProcessTransport::new(server())).collect(),
            next: AtomicUsize::new(0),
            used: std::sync::Mutex::new(Vec::new()),
        }
    }
}

impl ClientTransport for Alternating {
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        let i = self.next.fetch_add(1, Ordering::SeqCst) % self.replicas.len();
        self.used.lock().unwrap().push(i);
        self.replicas[i].send(message)
    }
}

/// The `inputRequests` keys and `requestState` presence of every `input_required` result.
fn rounds(transcript: &[mcp_tool_client::TranscriptEntry]) -> Vec<(Vec<String>, bool)> {
    transcript
        .iter()
        .filter(|e| e.direction == Direction::Received)
        .filter(|e| e.message.pointer("/result/resultType") == Some(&json!("input_required")))
        .map(|e| {
            let keys = e
                .message
                .pointer("/result/inputRequests")
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            (keys, e.message.pointer("/result/requestState").is_some())
        })
        .collect()
}

#[tokio::test]
async fn summarize_repo_through_the_driver() {
    let mut d =
        driver(FakeModel::new().with_capabilities(ClientCapabilities::none().with_sampling()));
    let out = d
        .call_tool(
            "summarize_repo",
            json!({"audience": "developer", "critique": true}),
        )
        .await
        .unwrap();
    assert_eq!(out.rounds, 4);
    assert_eq!(
        rounds(&out.transcript),
        vec![
            (vec!["pick_files".to_owned()], true),
            (vec!["summary".to_owned()], true),
            (vec!["critique".to_owned()], true)
        ]
    );
    let sc = out.structured().unwrap();
    assert_eq!(
        sc["files"],
        json!(["README.md", "server.py", "docs/intro.md"])
    );
    assert!(sc["critique"].is_string());
    assert_eq!(d.host().asked(), ["pick_files", "summary", "critique"]);
}

#[tokio::test]
async fn summarize_repo_direct_mode_matches_the_rounds() {
    // The same function, run straight through against the host (no rounds, no state),
    // given the repository directly.
    let mut cx = mcp_tool_runtime::testing::direct(FakeModel::new());
    let direct = summarize_repo(
        &mut cx,
        SummarizeArgs {
            audience: "developer".into(),
            critique: false,
        },
        mcp_tool_runtime::State::new(mcp_tool_examples::repo::Repo::embedded_demo().unwrap()),
    )
    .await
    .unwrap();
    let mut d = driver(FakeModel::new());
    let out = d
        .call_tool("summarize_repo", json!({"audience": "developer"}))
        .await
        .unwrap();
    assert_eq!(
        direct.structured_content.map(|s| s.to_value()).as_ref(),
        out.structured()
    );
}

#[tokio::test]
async fn summarize_repo_rejects_a_bad_audience() {
    let mut d = driver(FakeModel::new());
    let out = d
        .call_tool("summarize_repo", json!({"audience": ""}))
        .await
        .unwrap();
    assert!(out.is_error());
    assert!(out.text().contains("audience"));
}

#[tokio::test]
async fn summarize_repo_refuses_paths_outside_the_repository() {
    for bad in [r#"["../Cargo.toml"]"#, r#"["/etc/passwd"]"#, "nonsense"] {
        let mut d = driver(FakeModel::new().with_text("pick_files", bad));
        let err = d
            .call_tool("summarize_repo", json!({"audience": "developer"}))
            .await
            .unwrap_err();
        assert_eq!(err.rpc_code(), Some(-32602), "{bad}: {err}");
        // Refused before the summary round: the host was asked pick_files only.
        assert_eq!(d.host().asked(), ["pick_files"]);
    }
}

#[tokio::test]
async fn get_weather_asks_github_login_then_answers() {
    let mut d = driver(FakeModel::new());
    let out = d
        .call_tool("get_weather", json!({"location": "New York"}))
        .await
        .unwrap();
    assert_eq!(
        rounds(&out.transcript),
        vec![(vec!["github_login".to_owned()], true)]
    );
    // The SEP's exact request.
    let req = out
        .transcript
        .iter()
        .find_map(|e| e.message.pointer("/result/inputRequests/github_login"))
        .unwrap();
    assert_eq!(req["method"], "elicitation/create");
    assert_eq!(
        req["params"]["message"],
        "Please provide your GitHub username"
    );
    assert_eq!(req["params"]["requestedSchema"]["type"], "object");
    assert_eq!(
        req["params"]["requestedSchema"]["properties"]["name"]["type"],
        "string"
    );
    assert_eq!(
        req["params"]["requestedSchema"]["required"],
        json!(["name"])
    );
    assert!(!out.is_error());
    assert_eq!(
        out.text(),
        "Weather in New York for octocat: sunny, high 22 °C."
    );
    assert_eq!(out.structured().unwrap()["requestedBy"], "octocat");
}

#[tokio::test]
async fn get_weather_decline_and_cancel_are_polite_results() {
    for (action, expected) in [
        (ElicitAction::Decline, "No problem"),
        (ElicitAction::Cancel, "Cancelled"),
    ] {
        let mut d = driver(FakeModel::new().with_action("github_login", action));
        let out = d
            .call_tool("get_weather", json!({"location": "Paris"}))
            .await
            .unwrap();
        assert!(!out.is_error(), "{}", out.text());
        assert!(out.text().starts_with(expected), "{}", out.text());
    }
}

#[tokio::test]
async fn get_weather_without_elicitation_is_32021() {
    let mut d =
        driver(FakeModel::new().with_capabilities(ClientCapabilities::none().with_sampling()));
    let err = d
        .call_tool("get_weather", json!({"location": "Paris"}))
        .await
        .unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32021));
}

#[tokio::test]
async fn get_weather_direct_mode() {
    let mut cx = mcp_tool_runtime::testing::direct(FakeModel::new());
    let r = get_weather(
        &mut cx,
        WeatherArgs {
            location: "London".into(),
        },
    )
    .await
    .unwrap();
    assert_eq!(
        r.text_content(),
        "Weather in London for octocat: cloudy, high 14 °C."
    );
}

#[tokio::test]
async fn get_weather_invalid_arguments_are_a_tool_error() {
    let mut d = driver(FakeModel::new());
    let out = d
        .call_tool("get_weather", json!({"location": ""}))
        .await
        .unwrap();
    assert!(out.is_error());
    let err = d.call_tool("get_weather", json!({"city": "Paris"})).await;
    match err {
        Ok(out) => assert!(out.is_error()),
        Err(e) => assert_eq!(e.rpc_code(), Some(-32602)),
    }
}

/// The SEP's rolling upgrade: github_login + google_login in one round, microsoft_login
/// later, every round on another replica, nobody asked twice.
#[tokio::test]
async fn link_accounts_rolling_upgrade_across_replicas() {
    let transport = Alternating::new(2);
    let mut d = Driver::new(transport, FakeModel::new());
    let out = d.call_tool("link_accounts", json!({})).await.unwrap();
    assert_eq!(
        rounds(&out.transcript),
        vec![
            (
                vec!["github_login".to_owned(), "google_login".to_owned()],
                true
            ),
            (vec!["microsoft_login".to_owned()], true)
        ]
    );
    // The retry that completes carries only microsoft_login: github/google came from the state.
    let last_request = out
        .transcript
        .iter()
        .rev()
        .find(|e| e.direction == Direction::Sent)
        .unwrap();
    let answered: Vec<&String> = last_request.message["params"]["inputResponses"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(answered, ["microsoft_login"]);
    assert_eq!(
        out.structured().unwrap(),
        &json!({"github": "octocat", "google": "octo.google@example.com",
                "microsoft": "octo.microsoft@example.com", "purpose": "single sign-on"})
    );
    assert_eq!(
        d.host().asked(),
        ["github_login", "google_login", "microsoft_login"]
    );
    assert_eq!(*d.transport().used.lock().unwrap(), vec![0, 1, 0]);
}

#[tokio::test]
async fn link_accounts_decline_is_a_polite_error_result() {
    let mut d = driver(FakeModel::new().with_action("google_login", ElicitAction::Decline));
    let out = d.call_tool("link_accounts", json!({})).await.unwrap();
    assert!(out.is_error());
    assert!(out.text().contains("google_login"), "{}", out.text());
}

/// The SEP's load shedding: requestState-only checkpoints, each retry on another replica.
#[tokio::test]
async fn sum_of_squares_sheds_load_across_replicas() {
    let transport = Alternating::new(2);
    let mut d = Driver::new(transport, FakeModel::new());
    let out = d
        .call_tool("sum_of_squares", json!({"n": 100, "chunk": 25}))
        .await
        .unwrap();
    assert_eq!(
        rounds(&out.transcript),
        vec![(vec![], true), (vec![], true), (vec![], true)]
    );
    for e in &out.transcript {
        if e.message.pointer("/result/resultType") == Some(&json!("input_required")) {
            assert!(e.message.pointer("/result/inputRequests").is_none());
        }
    }
    assert_eq!(
        out.structured().unwrap(),
        &json!({"n": 100, "total": 338350, "checkpoints": 3})
    );
    assert!(d.host().asked().is_empty(), "no questions were asked");
    assert_eq!(*d.transport().used.lock().unwrap(), vec![0, 1, 0, 1]);
}

#[tokio::test]
async fn sum_of_squares_single_chunk_and_bad_arguments() {
    let mut d = driver(ScriptedHost::new(ClientCapabilities::none()));
    let out = d
        .call_tool("sum_of_squares", json!({"n": 10, "chunk": 10}))
        .await
        .unwrap();
    assert_eq!(out.rounds, 1);
    assert_eq!(out.structured().unwrap()["total"], 385);
    let out = d
        .call_tool("sum_of_squares", json!({"n": 1000, "chunk": 1}))
        .await
        .unwrap();
    assert!(out.is_error(), "too many chunks");
}

#[tokio::test]
async fn list_roots_reports_the_clients_roots() {
    let host = FakeModel::new().with_roots(vec![
        Root::new("file:///home/ada/project", Some("project")),
        Root::new("https://example.com/repo", None),
    ]);
    let mut d = driver(host);
    let out = d.call_tool("list_roots", json!({})).await.unwrap();
    assert_eq!(
        rounds(&out.transcript),
        vec![(vec!["roots".to_owned()], true)]
    );
    assert_eq!(
        out.structured().unwrap(),
        &json!({"count": 2, "roots": [
            {"uri": "file:///home/ada/project", "name": "project", "local": true},
            {"uri": "https://example.com/repo", "name": null, "local": false}
        ]})
    );
}

#[tokio::test]
async fn list_roots_without_the_capability_is_32021() {
    let mut d =
        driver(FakeModel::new().with_capabilities(ClientCapabilities::none().with_elicitation()));
    let err = d.call_tool("list_roots", json!({})).await.unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32021));
    match err {
        DriverError::Rpc { error, .. } => {
            assert_eq!(
                error.data,
                Some(json!({"requiredCapabilities": {"roots": {}}}))
            )
        }
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn prune_branches_asks_once_per_branch_in_a_loop() {
    let answer = |delete: bool| {
        let mut m = serde_json::Map::new();
        m.insert("delete".into(), json!(delete));
        ElicitResult::accept(m)
    };
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation())
        .answer("confirm", answer(true))
        .answer("confirm", answer(false))
        .answer("confirm", answer(true));
    let mut d = driver(host);
    let out = d
        .call_tool(
            "prune_branches",
            json!({"branches": ["old-ui", "main-backup", "spike"]}),
        )
        .await
        .unwrap();
    assert_eq!(out.rounds, 4);
    let asked: Vec<String> = d
        .host()
        .asked()
        .iter()
        .map(|(k, r)| {
            let v = serde_json::to_value(r).unwrap();
            format!("{k}: {}", v["params"]["message"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        asked,
        [
            "confirm: Delete branch `old-ui`?",
            "confirm: Delete branch `main-backup`?",
            "confirm: Delete branch `spike`?"
        ]
    );
    assert_eq!(
        out.structured().unwrap(),
        &json!({"deleted": ["old-ui", "spike"], "kept": ["main-backup"]})
    );
}

#[tokio::test]
async fn prune_branches_validates_its_arguments() {
    let mut d = driver(FakeModel::new());
    let out = d
        .call_tool("prune_branches", json!({"branches": []}))
        .await
        .unwrap();
    assert!(out.is_error());
    let many: Vec<String> = (0..6).map(|i| format!("b{i}")).collect();
    let out = d
        .call_tool("prune_branches", json!({"branches": many}))
        .await
        .unwrap();
    assert!(out.is_error());
}
