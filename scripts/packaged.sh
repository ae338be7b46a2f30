#!/usr/bin/env bash
# Builds and runs a scratch project against the *packaged* crates (target/package/*.crate),
# not the workspace paths: what would be published works on its own. The project depends on
# mcp-tool-runtime by version, with `default-features = false` (the core alone), and
# `[patch.crates-io]` points that version, and the macro crate it pins, at the unpacked
# .crate files. Its tool takes a `State<T>`, calls an `#[mcp_flow]` that suspends, and is
# driven through its rounds in process (Driver + InProcessTransport + ScriptedHost).
#
# Usage: scripts/packaged.sh        (CI runs it after `cargo package`)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
target=${CARGO_TARGET_DIR:-$root/target}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)

cargo package --allow-dirty --no-verify -p mcp-tool-macros -p mcp-tool-runtime

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for crate in mcp-tool-macros mcp-tool-runtime; do
    tar -xzf "$target/package/$crate-$version.crate" -C "$scratch"
done

mkdir -p "$scratch/app/src"
# the workspace's lock file: the same dependency versions as CI tested (unused entries drop)
cp Cargo.lock "$scratch/app/Cargo.lock"
cat >"$scratch/app/Cargo.toml" <<TOML
[package]
name = "packaged-app"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
mcp-tool-runtime = { version = "=$version", default-features = false }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
schemars = "1"
tokio = { version = "1", features = ["rt"] }

[patch.crates-io]
mcp-tool-runtime = { path = "../mcp-tool-runtime-$version" }
mcp-tool-macros = { path = "../mcp-tool-macros-$version" }

[workspace]
TOML

cat >"$scratch/app/src/main.rs" <<'RUST'
use mcp_tool_runtime::client::{Driver, InProcessTransport, ScriptedHost};
use mcp_tool_runtime::protocol::{CallToolResult, ClientCapabilities, ElicitResult, Implementation};
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::{Elicitation, Server, State, ToolContext, ToolError, mcp_flow, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Arguments.
#[derive(Deserialize, JsonSchema)]
pub struct WeatherArgs {
    /// The city.
    pub location: String,
}

/// A form.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Login {
    /// Your username.
    pub name: String,
}

/// Application state.
pub struct Forecasts;

/// A dialog shared by tools.
#[mcp_flow]
pub async fn sign_in(cx: &mut ToolContext) -> Result<Option<String>, ToolError> {
    let login = cx.elicit::<Login>("Your username?").await?;
    Ok(match login {
        Elicitation::Accept(l) => Some(l.name),
        Elicitation::Decline | Elicitation::Cancel => None,
    })
}

/// The weather, for a logged-in user.
#[mcp_tool(read_only)]
pub async fn get_weather(
    cx: &mut ToolContext,
    args: WeatherArgs,
    forecasts: State<Forecasts>,
) -> Result<CallToolResult, ToolError> {
    let _: &Forecasts = &forecasts;
    let Some(user) = sign_in(cx).await? else {
        return Ok(CallToolResult::text("nothing looked up"));
    };
    Ok(CallToolResult::text(format!("Sunny in {} for {user}", args.location)))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder(Implementation::new("packaged", "1.0"))
        .sealer(Sealer::new(Keyring::new("k1", vec![7u8; 32])?, SealConfig::default()))
        .state(Forecasts)
        .tool(get_weather::tool())
        .build()?;
    let answer = json!({"name": "ada"}).as_object().cloned().unwrap();
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation())
        .with_fallback(move |_key, _request| Ok(ElicitResult::accept(answer.clone()).into()));
    let mut driver = Driver::new(InProcessTransport::new(server), host);
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(driver.call_tool("get_weather", json!({"location": "Oslo"})))?;
    assert_eq!(outcome.rounds, 2, "input_required, then complete");
    assert_eq!(outcome.text(), "Sunny in Oslo for ada");
    println!("packaged crates: {} rounds, {:?}", outcome.rounds, outcome.text());
    Ok(())
}
RUST

# its own target directory under ours: the packaged crates are other sources than the paths
CARGO_TARGET_DIR="$target/packaged" cargo run --quiet --manifest-path "$scratch/app/Cargo.toml"
