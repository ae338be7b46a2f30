//! Memory under a flood of bodies naming a session (issue 18, item 8): 300 parallel 1 MiB
//! bodies with `Mcp-Session-Id: bogus` went around the concurrency limit while they were
//! read and parsed (+404 MiB peak in this test before the fix). Now they go through the
//! body budget ([`HttpConfig::max_body_bytes_in_flight`], 32 MiB by default) like every
//! request. Alone in its binary: it measures the process's peak resident set (`VmHWM`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod support;

/// The process's peak resident set, in MiB (Linux); `None` elsewhere.
fn peak_mib() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// The ceiling this test holds the flood to: the 32 MiB budget, hyper's read buffers of
/// 300 connections and the allocator's slack (measured: +97 MiB; before the fix +404 MiB).
const CEILING_MIB: usize = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_bodies_naming_a_session_stays_under_the_ceiling() {
    let server = Server::builder(Implementation::new("budget", "1"))
        .sealer(support::sealer("k", 1))
        .build()
        .unwrap();
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let handle = http::spawn(addr, server, HttpConfig::default())
        .await
        .unwrap();
    let addr = handle.local_addr();

    let len = 1024 * 1024;
    let mut body = vec![b' '; len];
    body[0] = b'[';
    body[len - 1] = b']';
    let body = Arc::new(body);
    let Some(before) = peak_mib() else {
        return; // no /proc: nothing to measure
    };
    let flood: Vec<_> = (0..300)
        .map(|_| {
            let body = body.clone();
            tokio::spawn(async move {
                let mut s = TcpStream::connect(addr).await.unwrap();
                let head = format!(
                    "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
                     Content-Length: {len}\r\nMcp-Session-Id: bogus\r\nConnection: close\r\n\r\n"
                );
                // the server may refuse (and close) before the whole body is sent
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(&body).await;
                let mut reply = Vec::new();
                let _ =
                    tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut reply)).await;
                String::from_utf8_lossy(&reply)
                    .get(9..12)
                    .unwrap_or("")
                    .to_owned()
            })
        })
        .collect();
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    for f in flood {
        *statuses.entry(f.await.unwrap()).or_default() += 1;
    }
    let grown = peak_mib().unwrap_or(before).saturating_sub(before);
    eprintln!("300 x 1 MiB with a bogus session: peak +{grown} MiB, statuses {statuses:?}");
    assert!(
        grown < CEILING_MIB,
        "peak +{grown} MiB, statuses {statuses:?}"
    );
}
