//! Set-up the example tests share: the `serve` binary started on a free loopback port, and
//! what a driver's calls put on the wire, as one string to search.

#![allow(dead_code)] // each test binary uses part of it

use std::process::Stdio;
use std::time::Duration;

use mcp_tool_client::TranscriptEntry;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A running `serve`; killed when dropped.
pub struct Serve {
    /// Its MCP endpoint (`http://127.0.0.1:<port>/mcp`).
    pub url: String,
    _child: Child,
}

/// Starts `cmd` (the `serve` binary with the test's arguments and environment; standard
/// streams, `RUST_LOG` and kill-on-drop are set here) and returns once it prints the address
/// it listens on. Its standard error is drained from then on, so it never blocks on a full
/// pipe.
pub async fn serve(mut cmd: Command) -> Serve {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("RUST_LOG", "warn")
        .kill_on_drop(true);
    let mut child = cmd.spawn().expect("serve starts");
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let url = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.expect("stderr reads") {
            if let Some(url) = line.strip_prefix("listening on ") {
                return url.to_owned();
            }
        }
        panic!("serve exited before listening");
    })
    .await
    .expect("serve listens");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Serve { url, _child: child }
}

/// Every message of a transcript, both ways, as one JSON text.
pub fn wire(transcript: &[TranscriptEntry]) -> String {
    let messages: Vec<_> = transcript.iter().map(|e| &e.message).collect();
    serde_json::to_string(&messages).expect("messages serialize")
}

/// `summarize_repo` called on `server` with a model whose `pick_files` answer is `pick` (a
/// JSON list of paths): the JSON-RPC error code the call ended with (`None` when it
/// succeeded or failed otherwise), and everything that travelled ([`wire`]).
pub async fn summarize_picking(
    server: &std::sync::Arc<mcp_tool_runtime::Server>,
    pick: &str,
) -> (Option<i64>, String) {
    use mcp_tool_client::{Driver, InProcessTransport};
    use mcp_tool_examples::fake_model::FakeModel;

    let mut d = Driver::new(
        InProcessTransport::new(server.clone()),
        FakeModel::new().with_text("pick_files", pick),
    );
    let outcome = d
        .call_tool(
            "summarize_repo",
            serde_json::json!({"audience": "developer"}),
        )
        .await;
    (
        outcome.err().and_then(|e| e.rpc_code()),
        wire(d.transcript()),
    )
}
