//! Hardening: untrusted input and misbehaving tools never take the server down.
//! Each test here pins a gap found in review (it failed before the fix).

use mcp_tool_runtime::context::ToolContext;
use mcp_tool_runtime::protocol::{CallToolResult, Implementation, JsonRpcResponse};
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::{BoxFuture, Principal, Step, Tool, ToolError, ToolInfo};
use serde_json::{Value, json};

/// Panics on its first poll when `args.boom` is true, otherwise answers "ok".
struct Panicky;

impl Tool for Panicky {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("panicky")
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        args: Value,
        _state: Option<Value>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            if args["boom"] == json!(true) {
                tokio::task::yield_now().await;
                panic!("tool bug: secret-detail-42");
            }
            Ok(Step::Complete(CallToolResult::text("ok")))
        })
    }
}

/// Panics synchronously in `step` itself, before returning a future.
struct PanicsBeforeFuture;

impl Tool for PanicsBeforeFuture {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("panics_early")
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        _args: Value,
        _state: Option<Value>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        panic!("tool bug before the future");
    }
}

fn server() -> Server {
    Server::builder(Implementation::new("hardening", "0.1.0"))
        .sealer(Sealer::new(
            Keyring::new("k1", vec![7u8; 32]).expect("keyring"),
            SealConfig::default(),
        ))
        .tool(Panicky)
        .tool(PanicsBeforeFuture)
        .build()
        .expect("server builds")
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn call_msg(id: i64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": args, "_meta": meta()}})
}

async fn send(server: &Server, msg: Value) -> JsonRpcResponse {
    server
        .handle(msg, &Principal::anonymous())
        .await
        .expect("a request gets a response")
}

#[tokio::test]
async fn a_panicking_tool_answers_internal_error_and_the_server_lives_on() {
    let s = server();
    for (name, args) in [
        ("panicky", json!({"boom": true})),
        ("panics_early", json!({})),
    ] {
        let r = send(&s, call_msg(1, name, args)).await;
        assert_eq!(r.error_code(), Some(-32603), "{r:?}");
        let e = r.error_object().expect("error");
        // The panic message is a server-side detail: it goes to the log, not the client.
        assert!(!e.message.contains("secret-detail-42"), "{e:?}");
        assert_eq!(r.id(), Some(&1.into()));
    }
    // The same server keeps answering.
    let r = send(&s, call_msg(2, "panicky", json!({"boom": false}))).await;
    assert_eq!(
        r.result_value().expect("result")["content"][0]["text"],
        "ok"
    );
}
