#!/usr/bin/env bash
# Builds and runs a scratch project against the *packaged* crates (target/package/*.crate),
# not the workspace paths: what would be published works on its own. The projects depend on
# mcp-tool-runtime by version, with `default-features = false` (the core alone), and
# `[patch.crates-io]` points that version, and the macro crate it pins, at the unpacked
# .crate files. Each tool takes a `State<T>`, calls an `#[mcp_flow]` that suspends, and is
# driven through its rounds in process by the packaged mcp-tool-client, also without its
# default features (Driver + InProcessTransport + ScriptedHost). One project's tool has no
# dependency but the runtime (generated code and the user's derives reach serde and schemars
# through it); the other reaches the runtime only through a crate that re-exports it
# (`crate = "…"`).
#
# Usage: scripts/packaged.sh        (CI runs it after `cargo package`)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
target=${CARGO_TARGET_DIR:-$root/target}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)

cargo package --allow-dirty --no-verify -p mcp-tool-macros -p mcp-tool-runtime -p mcp-tool-client

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for crate in mcp-tool-macros mcp-tool-runtime mcp-tool-client; do
    tar -xzf "$target/package/$crate-$version.crate" -C "$scratch"
done

# Two applications in one scratch workspace:
# - app: depends on mcp-tool-runtime and nothing else of ours or serde's but the client that
#   drives it (mcp-tool-client, and tokio as its executor): its derives go through the
#   runtime's re-exports
#   (`#[serde(crate = "mcp_tool_runtime::serde")]`, `#[schemars(crate = …)]`), so every path
#   the macros generate must reach serde, serde_json and schemars through the runtime;
# - framework-app: depends on `framework`, a library that re-exports the runtime
#   (`pub use mcp_tool_runtime as mcp;`), and writes `crate = "::framework::mcp"` on its
#   attributes: nothing in it can name `::mcp_tool_runtime`.
mkdir -p "$scratch/ws/app/src" "$scratch/ws/framework/src" "$scratch/ws/framework-app/src"
# the workspace's lock file: the same dependency versions as CI tested (unused entries drop)
cp Cargo.lock "$scratch/ws/Cargo.lock"
cat >"$scratch/ws/Cargo.toml" <<TOML
[workspace]
resolver = "3"
members = ["app", "framework", "framework-app"]

[patch.crates-io]
mcp-tool-runtime = { path = "../mcp-tool-runtime-$version" }
mcp-tool-macros = { path = "../mcp-tool-macros-$version" }
mcp-tool-client = { path = "../mcp-tool-client-$version" }
TOML

cat >"$scratch/ws/app/Cargo.toml" <<TOML
[package]
name = "packaged-app"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
mcp-tool-runtime = { version = "=$version", default-features = false }
mcp-tool-client = { version = "=$version", default-features = false }
tokio = { version = "1", features = ["rt"] }
TOML

cat >"$scratch/ws/framework/Cargo.toml" <<TOML
[package]
name = "framework"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
mcp-tool-runtime = { version = "=$version", default-features = false }
TOML
cat >"$scratch/ws/framework/src/lib.rs" <<'RUST'
//! A framework built on the runtime, which its users reach as `framework::mcp`.
pub use mcp_tool_runtime as mcp;
RUST

cat >"$scratch/ws/framework-app/Cargo.toml" <<TOML
[package]
name = "framework-app"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
framework = { path = "../framework" }
mcp-tool-client = { version = "=$version", default-features = false }
tokio = { version = "1", features = ["rt"] }
TOML

cat >"$scratch/ws/app/src/main.rs" <<'RUST'
use mcp_tool_client::{Driver, InProcessTransport, ScriptedHost};
use mcp_tool_runtime::protocol::{CallToolResult, ClientCapabilities, ElicitResult, Implementation};
use mcp_tool_runtime::schemars::JsonSchema;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::serde::{Deserialize, Serialize};
use mcp_tool_runtime::serde_json::json;
use mcp_tool_runtime::{Elicitation, Server, State, ToolContext, ToolError, mcp_flow, mcp_tool};

/// Arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "mcp_tool_runtime::serde")]
#[schemars(crate = "mcp_tool_runtime::schemars")]
pub struct WeatherArgs {
    /// The city.
    pub location: String,
}

/// A form.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(crate = "mcp_tool_runtime::serde")]
#[schemars(crate = "mcp_tool_runtime::schemars")]
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

cat >"$scratch/ws/framework-app/src/main.rs" <<'RUST'
use framework::mcp::protocol::{ClientCapabilities, ElicitResult, Implementation};
use framework::mcp::schemars::JsonSchema;
use framework::mcp::serde::{Deserialize, Serialize};
use framework::mcp::serde_json::json;
use framework::mcp::testing::ScriptedHost;
use framework::mcp::{Server, State, ToolContext, ToolError, mcp_flow, mcp_tool};
use mcp_tool_client::{Driver, InProcessTransport};

/// Arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "framework::mcp::serde")]
#[schemars(crate = "framework::mcp::schemars")]
pub struct Greeting {
    /// The greeting word.
    pub greeting: String,
}

/// A form.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(crate = "framework::mcp::serde")]
#[schemars(crate = "framework::mcp::schemars")]
pub struct Who {
    /// Your name.
    pub name: String,
}

/// Application state.
pub struct Mark(&'static str);

/// Asks for a name.
#[mcp_flow(crate = "::framework::mcp")]
pub async fn ask_name(cx: &mut ToolContext) -> Result<String, ToolError> {
    let who: Who = cx.ask("Your name?").await?;
    Ok(who.name)
}

/// Greets by name.
#[mcp_tool(crate = "::framework::mcp")]
pub async fn greet(cx: &mut ToolContext, args: Greeting, mark: State<Mark>) -> Result<String, ToolError> {
    let name = ask_name(cx).await?;
    Ok(format!("{}, {name}{}", args.greeting, mark.0))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder(Implementation::new("framework", "1.0"))
        .state(Mark("!"))
        .tool(greet::tool())
        .build()?;
    let answer = json!({"name": "ada"}).as_object().cloned().unwrap();
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation())
        .with_fallback(move |_key, _request| Ok(ElicitResult::accept(answer.clone()).into()));
    let mut driver = Driver::new(InProcessTransport::new(server), host);
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(driver.call_tool("greet", json!({"greeting": "Hello"})))?;
    assert_eq!(outcome.rounds, 2, "input_required, then complete");
    assert_eq!(outcome.text(), "Hello, ada!");
    println!("through a re-exporting crate: {} rounds, {:?}", outcome.rounds, outcome.text());
    Ok(())
}
RUST

# its own target directory under ours: the packaged crates are other sources than the paths
for bin in packaged-app framework-app; do
    CARGO_TARGET_DIR="$target/packaged" cargo run --quiet --manifest-path "$scratch/ws/Cargo.toml" -p "$bin"
done
