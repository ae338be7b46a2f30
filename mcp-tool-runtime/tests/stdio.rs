//! The stdio transport: the serve loop over in-memory pipes, and the hand-written example
//! binary spawned as a child process speaking newline-delimited JSON-RPC.

mod transport_support;

use std::collections::HashMap;
use std::time::Duration;

use mcp_tool_client::{ChildTransport, Driver};
use mcp_tool_runtime::Principal;
use mcp_tool_runtime::transport::stdio::{self, StdioConfig};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use transport_support::*;

/// Feeds `input` to the serve loop and returns every output line, parsed.
async fn run(input: &str, config: StdioConfig) -> Vec<Value> {
    let (client_out, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, client_in) = tokio::io::duplex(1 << 20);
    let serve = tokio::spawn(stdio::serve(
        server(),
        BufReader::new(server_in),
        server_out,
        config,
    ));
    let mut w = client_out;
    w.write_all(input.as_bytes()).await.unwrap();
    drop(w); // EOF
    tokio::time::timeout(Duration::from_secs(30), serve)
        .await
        .expect("serve ends at EOF")
        .unwrap()
        .unwrap();
    let mut lines = BufReader::new(client_in).lines();
    let mut out = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        out.push(
            serde_json::from_str(&line).unwrap_or_else(|_| panic!("not one JSON message: {line}")),
        );
    }
    out
}

fn line(v: &Value) -> String {
    format!("{}\n", serde_json::to_string(v).unwrap())
}

fn by_id(out: &[Value]) -> HashMap<i64, Value> {
    out.iter()
        .filter_map(|v| Some((v["id"].as_i64()?, v.clone())))
        .collect()
}

#[tokio::test]
async fn answers_requests_ignores_notifications_and_blank_lines() {
    let input = [
        line(&json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":meta()}})),
        "\n   \n".to_owned(),
        line(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})),
        line(&json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":meta()}})),
    ]
    .concat();
    let out = run(&input, StdioConfig::default()).await;
    assert_eq!(out.len(), 2);
    let out = by_id(&out);
    assert_eq!(out[&1]["result"]["resultType"], "complete");
    assert_eq!(out[&2]["result"]["tools"][0]["name"], "book_table");
}

#[tokio::test]
async fn parse_errors_are_answered_and_serving_continues() {
    let input = format!(
        "{{oops\n{}",
        line(&json!({"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":meta()}}))
    );
    let out = run(&input, StdioConfig::default().max_in_flight(1)).await;
    assert_eq!(out.len(), 2);
    assert_eq!(out[0]["error"]["code"], -32700);
    assert!(out[0].get("id").is_none());
    assert_eq!(out[1]["id"], 5);
}

#[tokio::test]
async fn overlong_lines_are_refused() {
    let big = json!({"jsonrpc":"2.0","id":1,"method":"server/discover",
        "params":{"_meta":meta(),"pad":"x".repeat(10_000)}});
    let small =
        json!({"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":meta()}});
    let input = format!("{}{}", line(&big), line(&small));
    let out = run(
        &input,
        StdioConfig::default().max_line_bytes(1024).max_in_flight(1),
    )
    .await;
    assert_eq!(out.len(), 2);
    assert_eq!(out[0]["error"]["code"], -32600);
    assert_eq!(out[1]["id"], 2);
}

#[tokio::test]
async fn protocol_errors_come_back_as_json_rpc_errors() {
    let input = [
        line(&json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})),
        line(&json!({"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}})),
        line(
            &json!({"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"1999-01-01",
            "io.modelcontextprotocol/clientCapabilities":{}}}}),
        ),
    ]
    .concat();
    let out = by_id(&run(&input, StdioConfig::default()).await);
    // `initialize` opens a legacy session (tests/legacy.rs), but not without its params
    assert_eq!(out[&1]["error"]["code"], -32602);
    assert!(
        out[&1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("protocolVersion")
    );
    assert_eq!(out[&2]["error"]["code"], -32602);
    assert_eq!(out[&3]["error"]["code"], -32022);
}

#[tokio::test]
async fn many_concurrent_requests_never_interleave() {
    let input: String = (1..=200)
        .map(|id| {
            line(&json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":{"_meta":meta()}}))
        })
        .collect();
    let out = run(&input, StdioConfig::default().max_in_flight(16)).await;
    assert_eq!(out.len(), 200);
    let ids = by_id(&out);
    assert!((1..=200).all(|id| ids.contains_key(&id)));
}

#[tokio::test]
async fn multi_round_call_over_stdio_with_a_principal() {
    // Round by round through one serve loop: requests are written only after the
    // previous answer arrived, as a real client does.
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let config = StdioConfig::default().principal(Principal::named("local-user"));
    let serve = tokio::spawn(stdio::serve(
        server(),
        BufReader::new(server_in),
        server_out,
        config,
    ));
    let mut lines = BufReader::new(from_server).lines();

    to_server
        .write_all(line(&call(1, json!({}))).as_bytes())
        .await
        .unwrap();
    let r1: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(r1["result"]["resultType"], "input_required");
    let state = r1["result"]["requestState"].clone();

    let retry = call(
        2,
        json!({"requestState": state, "inputResponses": {
        "when": {"action":"accept","content":{"date":"2026-08-01","time":"19:30"}}}}),
    );
    to_server.write_all(line(&retry).as_bytes()).await.unwrap();
    let r2: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(r2["id"], 2);
    let state = r2["result"]["requestState"].clone();

    let last = call(
        3,
        json!({"requestState": state, "inputResponses": {
        "confirm": {"action":"accept","content":{"confirm":true}}}}),
    );
    to_server.write_all(line(&last).as_bytes()).await.unwrap();
    let r3: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(r3["id"], 3);
    assert_eq!(r3["result"]["structuredContent"], booked());

    drop(to_server);
    serve.await.unwrap().unwrap();
}

/// The example binary, when cargo has built it (`cargo test` builds examples; a
/// single `cargo test --test stdio` may not).
fn example_binary() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?; // target/<profile>/deps -> target/<profile>
    let bin = dir
        .join("examples")
        .join(format!("hand_written{}", std::env::consts::EXE_SUFFIX));
    bin.exists().then_some(bin)
}

#[tokio::test]
async fn example_binary_serves_stdio_end_to_end() {
    let Some(bin) = example_binary() else {
        eprintln!(
            "skipped: examples/hand_written not built (run `cargo test -p mcp-tool-runtime`)"
        );
        return;
    };
    let mut cmd = tokio::process::Command::new(bin);
    cmd.env("RUST_LOG", "warn");
    let transport = ChildTransport::spawn(cmd).unwrap();
    let mut driver = Driver::new(transport, booking_host());
    let list = tokio::time::timeout(Duration::from_secs(30), driver.list_tools())
        .await
        .expect("the example answers")
        .unwrap();
    assert_eq!(list["tools"][0]["name"], "book_table");
    let out = driver.call_tool("book_table", args()).await.unwrap();
    assert_eq!(out.rounds, 3);
    assert_eq!(out.structured(), Some(&booked()));

    // End of input: the example exits cleanly.
    let (transport, _) = driver.into_parts();
    let status = tokio::time::timeout(Duration::from_secs(30), transport.close())
        .await
        .unwrap()
        .unwrap();
    assert!(status.unwrap().success());
}

#[tokio::test]
async fn example_binary_seals_with_mcp_tool_state_key() {
    let Some(bin) = example_binary() else {
        eprintln!(
            "skipped: examples/hand_written not built (run `cargo test -p mcp-tool-runtime`)"
        );
        return;
    };
    // The first round in the example process, sealed with the key from the environment …
    let mut child = tokio::process::Command::new(&bin)
        .env("RUST_LOG", "warn")
        .env("MCP_TOOL_STATE_KEY", hex::encode(KEY))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(line(&call(1, json!({}))).as_bytes())
        .await
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let r1 = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the example answers")
        .unwrap()
        .unwrap();
    drop(stdin);
    assert!(child.wait().await.unwrap().success());
    let r1: Value = serde_json::from_str(&r1).unwrap();
    assert_eq!(r1["result"]["resultType"], "input_required");
    // … is understood by a replica with the same key.
    let retry = call(
        2,
        json!({"requestState": r1["result"]["requestState"], "inputResponses": {
        "when": {"action":"accept","content":{"date":"2026-08-01","time":"19:30"}}}}),
    );
    let r2 = server()
        .handle(retry, &Principal::anonymous())
        .await
        .expect("a response");
    let r2 = serde_json::to_value(&r2).unwrap();
    assert_eq!(r2["result"]["resultType"], "input_required", "{r2}");
    assert!(r2["result"]["inputRequests"]["confirm"].is_object(), "{r2}");
}

#[tokio::test]
async fn example_binary_refuses_an_invalid_state_key() {
    let Some(bin) = example_binary() else {
        eprintln!(
            "skipped: examples/hand_written not built (run `cargo test -p mcp-tool-runtime`)"
        );
        return;
    };
    for bad in ["not hex", "00ff"] {
        let out = tokio::process::Command::new(&bin)
            .env("MCP_TOOL_STATE_KEY", bad)
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
        assert!(!out.status.success(), "{bad:?} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("MCP_TOOL_STATE_KEY"), "{err}");
    }
    // Not UTF-8: refused too, never a silent random key.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        let mut bytes =
            b"a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0".to_vec();
        bytes[0] = 0xff;
        let out = tokio::process::Command::new(&bin)
            .env("MCP_TOOL_STATE_KEY", std::ffi::OsString::from_vec(bytes))
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
        assert!(!out.status.success(), "a non-UTF-8 key was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not valid UTF-8"), "{err}");
    }
}
