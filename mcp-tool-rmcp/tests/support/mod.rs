//! The example server as a child process, for the peer tests, and the Python SDK harness of
//! `mcp-tool-tests` (the same file, `tests/tests/python_peer/mod.rs`: venv, client script,
//! servers that announce `listening on URL`).

#![allow(dead_code)] // each test binary uses the part it needs

use std::path::PathBuf;
use std::process::Command;

#[path = "../../../tests/tests/python_peer/mod.rs"]
pub mod python_peer;

/// The example server (`examples/rmcp_server.rs`, built by cargo as this package's binary).
pub fn example_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rmcp_example_server"))
}

/// The example server over Streamable HTTP on a free loopback port, with `args` added
/// (`--bearer-demo-auth`); killed on drop.
pub fn http(args: &[&str]) -> python_peer::HttpServer {
    let mut cmd = Command::new(example_bin());
    cmd.args(["--http", "127.0.0.1:0"])
        .args(args)
        .env("RUST_LOG", "warn");
    python_peer::HttpServer::start(cmd)
}
