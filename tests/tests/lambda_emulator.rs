//! The example tools on AWS Lambda's runtime emulator, `cargo lambda watch` (PyPI's
//! `cargo-lambda`, installed into a venv under `<target>/peers/` by the harness): a 3-round
//! `summarize_repo` and a 2-round `get_weather`, driven by our `Driver` through the
//! emulator's function URL, with **a fresh function process for every round** (the previous
//! one is killed once it has answered), so each round meets a cold instance that shares
//! nothing with the last but the state key. Outside CI, a machine where `cargo-lambda` cannot
//! be installed skips loudly; under `CI=true` that fails.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use mcp_tool_client::{ClientTransport, Driver};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_tests::lambda_emulator::{ColdFunction, Emulator, cargo_lambda};
use serde_json::json;

const FUNCTION: &str = env!("CARGO_BIN_EXE_example_lambda");

fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_round_calls_complete_with_every_round_on_a_cold_instance() {
    let exe = match tokio::task::spawn_blocking(cargo_lambda)
        .await
        .expect("join")
    {
        Ok(exe) => exe,
        Err(why) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("\n\n*** SKIPPED lambda_emulator: cargo-lambda unavailable: {why} ***\n\n");
            return;
        }
        Err(why) => panic!("cargo-lambda unavailable under CI: {why}"),
    };
    let emulator = Emulator::start(&exe, workspace()).expect("cargo lambda watch");
    let function = Arc::new(ColdFunction::new(FUNCTION, &emulator, "alice"));
    let mut driver = Driver::new(function.clone(), FakeModel::new());

    let summary = driver
        .call_tool("summarize_repo", json!({"audience": "developer"}))
        .await
        .unwrap_or_else(|e| panic!("summarize_repo: {e}\nemulator:\n{}", emulator.log()));
    assert_eq!(summary.rounds, 3, "{:?}", summary.result);
    assert!(!summary.is_error(), "{:?}", summary.result);
    let structured = summary.structured().expect("structuredContent");
    assert!(
        !structured["files"].as_array().expect("files").is_empty(),
        "{structured}"
    );
    assert!(
        structured["summary"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{structured}"
    );

    let weather = driver
        .call_tool("get_weather", json!({"location": "Oslo"}))
        .await
        .unwrap_or_else(|e| panic!("get_weather: {e}\nemulator:\n{}", emulator.log()));
    assert_eq!(weather.rounds, 2, "{:?}", weather.result);
    assert!(weather.text().contains("Oslo"), "{}", weather.text());

    // Five rounds, five instances: each answered by a process started for it alone.
    let rounds = function.timings();
    assert_eq!(rounds.len(), 5, "{rounds:?}");
    assert!(
        rounds.iter().all(|r| r.method == "tools/call"),
        "{rounds:?}"
    );
    let mut pids: Vec<u32> = rounds.iter().map(|r| r.pid).collect();
    pids.sort_unstable();
    pids.dedup();
    assert_eq!(pids.len(), 5, "{rounds:?}");
    for r in &rounds {
        eprintln!("cold round ({}): {:?}", r.method, r.cold);
    }

    // A 2025-11-25 client's `initialize`, on a cold instance too: refused, naming the
    // version served (no session can live in a function instance).
    let refused = function
        .send(
            json!({"jsonrpc": "2.0", "id": 99, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "legacy", "version": "1"}}}),
        )
        .await
        .expect("an answer")
        .expect("a response");
    assert_eq!(
        refused["error"]["data"]["supported"],
        json!(["2026-07-28"]),
        "{refused}"
    );
    assert_eq!(refused["error"]["data"]["requested"], "2025-11-25");
    assert_eq!(function.timings().len(), 6);
}

#[test]
fn the_function_refuses_to_start_without_a_shared_key() {
    let out = Command::new(FUNCTION)
        .env_remove("MCP_TOOL_STATE_KEY")
        .env_remove("MCP_TOOL_STATE_KEY_PREVIOUS")
        .env("MCP_TOOL_INSECURE_DEMO_AUTH", "1")
        .env("AWS_LAMBDA_RUNTIME_API", "http://127.0.0.1:9/.rt")
        .env("AWS_LAMBDA_FUNCTION_NAME", "_")
        .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")
        .env("AWS_LAMBDA_FUNCTION_VERSION", "1")
        .output()
        .expect("run the function");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("MCP_TOOL_STATE_KEY is not set"), "{err}");

    // A SQLite store is refused too: a file in one instance's /tmp is shared by no one.
    let out = Command::new(FUNCTION)
        .env(
            "MCP_TOOL_STATE_KEY",
            mcp_tool_tests::lambda_emulator::TEST_KEY,
        )
        .env("MCP_TOOL_INSECURE_DEMO_AUTH", "1")
        .env("MCP_TOOL_STORE", "sqlite:/tmp/tasks.sqlite3")
        .output()
        .expect("run the function");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("postgres://"), "{err}");

    // Without any authenticator the function does not start either.
    let out = Command::new(FUNCTION)
        .env(
            "MCP_TOOL_STATE_KEY",
            mcp_tool_tests::lambda_emulator::TEST_KEY,
        )
        .env_remove("MCP_TOOL_INSECURE_DEMO_AUTH")
        .env_remove("MCP_TOOL_OAUTH_ISSUER")
        .env_remove("MCP_TOOL_OAUTH_RESOURCE")
        .output()
        .expect("run the function");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no authenticator"), "{err}");
}
