//! A tool written by hand against the [`Tool`] trait — no macro — served over stdio
//! (the default) or Streamable HTTP.
//!
//! ```sh
//! cargo run -p mcp-tool-runtime --example hand_written                          # stdio
//! cargo run -p mcp-tool-runtime --example hand_written -- --http 127.0.0.1:8080 # HTTP at /mcp
//! ```
//!
//! `book_table` books a restaurant table in three requests:
//! 1. the first `tools/call` answers `input_required` with a form elicitation `when`
//!    (date and time) and a sealed `requestState`;
//! 2. the retry carries the answer; the tool asks `confirm` (a yes/no form) and keeps
//!    the date and time in its state (the retry will carry only the latest answer);
//! 3. the last retry carries the confirmation; the tool completes with a structured result.
//!
//! The tool's own state is a small serde enum; the server seals it into `requestState`
//! (bound to the caller, the tool, the arguments and an expiry), so any replica sharing
//! the key can take any retry. Set `MCP_TOOL_STATE_KEY` (hex, at least 32 bytes, as for the
//! `serve` binary: `MCP_TOOL_STATE_KEY=$(openssl rand -hex 32)`) to share a key between
//! replicas; without it a random key is generated per process. An invalid value (not hex,
//! too short, not UTF-8) is an error at startup.

use mcp_tool_runtime::manual::Reentrant;
use std::net::SocketAddr;

use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::protocol::{
    CallToolResult, Capability, ElicitFormParams, ElicitParams, Implementation, InputRequest,
    JsonObject, ToolAnnotations,
};
use mcp_tool_runtime::requests::Elicitation;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::{
    Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step, parse_state},
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// The tool's name.
pub const TOOL_NAME: &str = "book_table";

/// The arguments of `book_table`.
#[derive(Debug, Deserialize)]
struct Args {
    restaurant: String,
    party_size: u32,
}

/// The answer to the `when` form.
#[derive(Debug, Deserialize)]
struct When {
    date: String,
    time: String,
}

/// The answer to the `confirm` form.
#[derive(Debug, Deserialize)]
struct Confirm {
    confirm: bool,
}

/// The tool's state between rounds: where the conversation is, plus what the previous
/// rounds learned (a retry carries only the latest round's answers).
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
enum State {
    AskedWhen,
    AskedConfirm { date: String, time: String },
}

/// `book_table`, implemented by hand.
#[derive(Debug, Default, Clone, Copy)]
pub struct BookTable;

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

fn form(message: String, schema: Value) -> InputRequest {
    InputRequest::Elicit(ElicitParams::Form(ElicitFormParams {
        message,
        requested_schema: object(schema).into(),
        extra: JsonObject::new(),
    }))
}

fn parse_args(args: &RawValue) -> Result<Args, ToolError> {
    // a mismatch names the field (`ToolError::InvalidArguments`)
    let args: Args = mcp_tool_runtime::manual::parse_args(args)?;
    if !(1..=20).contains(&args.party_size) {
        return Err(ToolError::InvalidArguments {
            field: "party_size".into(),
            message: "must be between 1 and 20".into(),
        });
    }
    if args.restaurant.trim().is_empty() {
        return Err(ToolError::InvalidArguments {
            field: "restaurant".into(),
            message: "must not be empty".into(),
        });
    }
    Ok(args)
}

/// A loose check of a `YYYY-MM-DD` date and an `HH:MM` time (answers are untrusted).
fn check_when(w: &When) -> Result<(), ToolError> {
    let date_ok = w.date.len() == 10
        && w.date.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    let time_ok = w.time.len() == 5
        && w.time.bytes().enumerate().all(|(i, b)| match i {
            2 => b == b':',
            _ => b.is_ascii_digit(),
        });
    if date_ok && time_ok {
        Ok(())
    } else {
        Err(ToolError::invalid_input(
            "when",
            "expected a date as YYYY-MM-DD and a time as HH:MM",
        ))
    }
}

impl BookTable {
    async fn run(
        &self,
        cx: &mut ToolContext,
        args: &RawValue,
        state: Option<&RawValue>,
    ) -> Result<Step, ToolError> {
        let args = parse_args(args)?;
        // the state this tool suspended with, sealed by the server
        let state: Option<State> = state.map(parse_state).transpose()?;
        match state {
            None => {
                cx.request(
                    "when",
                    form(
                        format!(
                            "When would you like a table for {} at {}?",
                            args.party_size, args.restaurant
                        ),
                        json!({
                            "type": "object",
                            "properties": {
                                "date": {"type": "string", "format": "date", "title": "Date"},
                                "time": {"type": "string", "title": "Time (HH:MM)"}
                            },
                            "required": ["date", "time"]
                        }),
                    ),
                )?;
                Step::suspend(&State::AskedWhen)
            }
            Some(State::AskedWhen) => match cx.take_elicitation::<When>("when")? {
                Elicitation::Accept(when) => {
                    check_when(&when)?;
                    cx.request(
                        "confirm",
                        form(
                            format!(
                                "Book {} at {} on {} at {}?",
                                args.party_size, args.restaurant, when.date, when.time
                            ),
                            json!({
                                "type": "object",
                                "properties": {"confirm": {"type": "boolean", "title": "Confirm"}},
                                "required": ["confirm"]
                            }),
                        ),
                    )?;
                    Step::suspend(&State::AskedConfirm {
                        date: when.date,
                        time: when.time,
                    })
                }
                Elicitation::Decline => Err(ToolError::Declined { key: "when".into() }),
                Elicitation::Cancel => Err(ToolError::Cancelled { key: "when".into() }),
            },
            Some(State::AskedConfirm { date, time }) => {
                match cx.take_elicitation::<Confirm>("confirm")? {
                    Elicitation::Accept(Confirm { confirm: true }) => {
                        let booking = json!({
                            "restaurant": args.restaurant,
                            "party_size": args.party_size,
                            "date": date,
                            "time": time,
                            "status": "booked"
                        });
                        Ok(Step::Complete(CallToolResult::structured(booking)))
                    }
                    Elicitation::Accept(Confirm { confirm: false }) => {
                        Ok(Step::Complete(CallToolResult::text("Nothing was booked.")))
                    }
                    Elicitation::Decline => Err(ToolError::Declined {
                        key: "confirm".into(),
                    }),
                    Elicitation::Cancel => Err(ToolError::Cancelled {
                        key: "confirm".into(),
                    }),
                }
            }
        }
    }
}

impl Tool for BookTable {
    fn info(&self) -> ToolInfo {
        ToolInfo::new(TOOL_NAME)
            .title("Book a table")
            .description(
                "Books a restaurant table; asks the user for the date, time and a confirmation.",
            )
            .input_schema(object(json!({
                "type": "object",
                "properties": {
                    "restaurant": {"type": "string", "description": "Restaurant name"},
                    "party_size": {"type": "integer", "minimum": 1, "maximum": 20}
                },
                "required": ["restaurant", "party_size"]
            })))
            .output_schema(object(json!({
                "type": "object",
                "properties": {
                    "restaurant": {"type": "string"},
                    "party_size": {"type": "integer"},
                    "date": {"type": "string"},
                    "time": {"type": "string"},
                    "status": {"type": "string"}
                },
                "required": ["restaurant", "party_size", "date", "time", "status"]
            })))
            .annotations(ToolAnnotations {
                read_only_hint: Some(false),
                idempotent_hint: Some(false),
                ..ToolAnnotations::default()
            })
            .needs(Capability::Elicitation)
            .max_rounds(2)
            .layout("book_table/v1")
    }

    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(self.run(cx, args, state))
    }
}

/// The environment variable holding the state key: hex, at least 32 bytes (as for `serve`).
pub const STATE_KEY_ENV: &str = "MCP_TOOL_STATE_KEY";

/// The keyring from [`STATE_KEY_ENV`], or `None` when it is unset or empty.
///
/// # Errors
/// When the value is not hex or the key is shorter than 32 bytes (the message names the
/// variable, never the key).
pub fn keyring_from_env() -> Result<Option<Keyring>, String> {
    match std::env::var(STATE_KEY_ENV) {
        Ok(hex) if !hex.trim().is_empty() => Keyring::from_hex("k1", hex.trim())
            .map(Some)
            .map_err(|e| format!("{STATE_KEY_ENV}: {e} (expected hex of at least 32 bytes)")),
        // Set but unreadable: refuse, rather than fall back to a random key on one replica.
        Err(std::env::VarError::NotUnicode(_)) => Err(format!(
            "{STATE_KEY_ENV} is not valid UTF-8 (expected hex of at least 32 bytes)"
        )),
        _ => Ok(None),
    }
}

/// The example's server: `book_table` only. With `key` the sealing key is fixed
/// (replicas sharing it accept each other's states); without it a random key is used.
pub fn server(key: Option<&[u8]>) -> Result<Server, Box<dyn std::error::Error + Send + Sync>> {
    let keyring = key.map(|k| Keyring::new("k1", k.to_vec())).transpose()?;
    server_with(keyring)
}

/// The example's server sealing with `keyring` (a random key when `None`).
pub fn server_with(
    keyring: Option<Keyring>,
) -> Result<Server, Box<dyn std::error::Error + Send + Sync>> {
    let mut builder = Server::builder(Implementation::new("hand-written-example", "0.1.0"));
    if let Some(keyring) = keyring {
        builder = builder.sealer(Sealer::new(keyring, SealConfig::default()));
    }
    Ok(builder.tool(BookTable).build()?)
}

#[tokio::main]
#[allow(dead_code)]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();

    let server = server_with(keyring_from_env()?)?;

    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (None, _) | (Some("--stdio"), _) => {
            use mcp_tool_runtime::transport::stdio;
            stdio::serve_stdio(server, stdio::StdioConfig::default()).await?;
        }
        (Some("--http"), addr) => {
            use mcp_tool_runtime::transport::http;
            let addr: SocketAddr = addr.as_deref().unwrap_or("127.0.0.1:8080").parse()?;
            http::serve(addr, server, http::HttpConfig::default()).await?;
        }
        (Some(other), _) => {
            eprintln!("unknown argument {other:?}; usage: hand_written [--stdio | --http ADDR]");
            std::process::exit(2);
        }
    }
    Ok(())
}
