//! `RetryTransport` against the framework's HTTP server when it is busy: with one request
//! allowed in progress and a call holding it, the server answers the next with `503`,
//! `Retry-After: 1` and JSON-RPC -32000. The retry waits that second (the backoff alone would
//! have tried again within a few tens of milliseconds), then gets through.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_tool_runtime::client::{Driver, HttpTransport, RetryPolicy, RetryTransport, ScriptedHost};
use mcp_tool_runtime::context::ToolContext;
use mcp_tool_runtime::protocol::{CallToolResult, ClientCapabilities, Implementation};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use mcp_tool_runtime::{BoxFuture, Step, Tool, ToolError, ToolInfo};
use serde_json::{Value, json};

/// Counts the calls inside, then waits until `gate` lets it finish.
struct Hold {
    inside: Arc<AtomicUsize>,
    gate: Arc<tokio::sync::Semaphore>,
}

impl Tool for Hold {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("hold")
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        _args: Value,
        _state: Option<Value>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            self.inside.fetch_add(1, Ordering::SeqCst);
            let _pass = self.gate.acquire().await;
            Ok(Step::Complete(CallToolResult::text("released")))
        })
    }
}

/// Answers at once.
struct Quick;

impl Tool for Quick {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("quick")
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        _args: Value,
        _state: Option<Value>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async { Ok(Step::Complete(CallToolResult::text("quick"))) })
    }
}

fn host() -> ScriptedHost {
    ScriptedHost::new(ClientCapabilities::default())
}

#[tokio::test]
async fn a_busy_server_is_retried_after_its_retry_after() {
    let inside = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let server = Server::builder(Implementation::new("busy", "1"))
        .tool(Hold {
            inside: inside.clone(),
            gate: gate.clone(),
        })
        .tool(Quick)
        .build()
        .unwrap();
    let h = http::spawn(
        "127.0.0.1:0".parse().unwrap(),
        server,
        HttpConfig::default().max_concurrent_requests(1),
    )
    .await
    .unwrap();

    let policy = RetryPolicy {
        max_retries: 5,
        backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(100),
        max_retry_after: Duration::from_secs(5),
    };
    let retrying = RetryTransport::new(HttpTransport::new(h.url()), policy);
    let mut b = Driver::new(retrying.clone(), host());
    b.discover().await.unwrap();

    // A takes the only request permit and keeps it until the gate opens.
    let url = h.url();
    let holder = tokio::spawn(async move {
        let mut a = Driver::new(HttpTransport::new(url), host());
        a.call_tool("hold", json!({})).await.unwrap().text()
    });
    while inside.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Open the gate long before the server's Retry-After (1 s) is over, long after the
    // backoff alone (at most 340 ms for five retries) would have given up or got through.
    let opener = {
        let gate = gate.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(400)).await;
            gate.add_permits(1);
        })
    };

    let start = Instant::now();
    let out = b.call_tool("quick", json!({})).await.unwrap();
    let waited = start.elapsed();
    assert_eq!(out.text(), "quick");
    assert_eq!(retrying.retries(), 1, "one busy answer, one retry");
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(4),
        "waited {waited:?}"
    );
    opener.await.unwrap();
    assert_eq!(holder.await.unwrap(), "released");
}
