//! `mcp-tool --url URL listen FILTER`: the binary prints the listen stream as JSON
//! lines (the acknowledgement first, then each notification) and exits 0 after the server's
//! graceful result (a server shutting down).

use std::process::Stdio;
use std::time::Duration;

use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::protocol::{CallToolResult, Implementation};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::store::Change;
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use mcp_tool_runtime::{
    Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step},
};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const CLIENT: &str = env!("CARGO_BIN_EXE_mcp-tool");

/// A tool, so that the tools list may change.
struct Noop;

impl Tool for Noop {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("noop")
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        _args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async { Ok(Step::Complete(CallToolResult::text("ok"))) })
    }
}

#[tokio::test]
async fn listen_prints_json_lines_until_the_graceful_end() {
    let server = Server::builder(Implementation::new("cli-listen", "1"))
        .tool(Noop)
        .build()
        .unwrap();
    let h = http::spawn(
        "127.0.0.1:0".parse().unwrap(),
        server.clone(),
        HttpConfig::default(),
    )
    .await
    .unwrap();
    let mut child = tokio::process::Command::new(CLIENT)
        .args(["--url", &h.url(), "listen", r#"{"toolsListChanged": true}"#])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut line = async || -> Value {
        let l = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .expect("a line in time")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&l).unwrap_or_else(|_| panic!("not a JSON line: {l}"))
    };
    let ack = line().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    server.changes().publish(Change::ToolsListChanged);
    let n = line().await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    h.shutdown().await.unwrap();
    let end = line().await;
    assert_eq!(end["result"]["resultType"], "complete");
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
}
