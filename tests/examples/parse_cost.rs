//! The parse of one `tools/call` body, `CALLS` times, two ways, for instruction counts under
//! callgrind (`scripts/callgrind.sh`: a run with N calls minus a run with none, divided by
//! N): `value`, the whole body as a `serde_json::Value` tree and dropped, which is what
//! `serve`'s HTTP transport does today and what the bare ceiling does
//! (`tests/examples/bare_axum.rs`); and `typed`, the same body into borrowed structs
//! (`&RawValue`, `Cow<str>`, `#[serde(borrow)]`) holding what a round reads, the typed
//! request path of issue 24, item 1. The bodies are `get_weather`'s two rounds as
//! `scripts/wrk/get_weather.lua` sends them (round 2 with a `requestState` of the length the
//! server seals, 107 characters).
//!
//! ```text
//! parse_cost value|typed r1|r2 CALLS
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::hint::black_box;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// The envelope, borrowed from the body.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    params: CallParams<'a>,
}

/// `tools/call` params: the arguments and every answer kept as JSON text, parsed into the
/// tool's own types where they are used.
#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, rename = "_meta")]
    meta: Option<Meta<'a>>,
    #[serde(borrow, rename = "inputResponses")]
    input_responses: Option<BTreeMap<Cow<'a, str>, &'a RawValue>>,
    #[serde(borrow, rename = "requestState")]
    request_state: Option<Cow<'a, str>>,
}

/// The request `_meta` a round checks.
#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(borrow, rename = "io.modelcontextprotocol/protocolVersion")]
    version: Cow<'a, str>,
    #[serde(borrow, rename = "io.modelcontextprotocol/clientCapabilities")]
    capabilities: &'a RawValue,
}

impl Envelope<'_> {
    /// Every member read, so that none is optimized away.
    fn touch(&self) -> usize {
        let p = &self.params;
        self.jsonrpc.len()
            + self.id.get().len()
            + self.method.len()
            + p.name.len()
            + p.arguments.map_or(0, |a| a.get().len())
            + p.meta
                .as_ref()
                .map_or(0, |m| m.version.len() + m.capabilities.get().len())
            + p.input_responses.as_ref().map_or(0, BTreeMap::len)
            + p.request_state.as_ref().map_or(0, |s| s.len())
    }
}

const HEAD: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Oslo"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [how, round, calls] = args.as_slice() else {
        return Err("usage: parse_cost value|typed r1|r2 CALLS".into());
    };
    let body = match round.as_str() {
        "r1" => format!("{HEAD}}}}}"),
        "r2" => format!(
            r#"{HEAD},"inputResponses":{{"github_login":{{"action":"accept","content":{{"name":"octocat"}}}}}},"requestState":"{}"}}}}"#,
            "A".repeat(107)
        ),
        _ => return Err("round: r1 or r2".into()),
    };
    let calls: u64 = calls.parse()?;
    let body = body.as_bytes();
    match how.as_str() {
        "value" => {
            for _ in 0..calls {
                let v: Value = serde_json::from_slice(black_box(body))?;
                black_box(v);
            }
        }
        "typed" => {
            for _ in 0..calls {
                let e: Envelope = serde_json::from_slice(black_box(body))?;
                black_box(e.touch());
            }
        }
        _ => return Err("how: value or typed".into()),
    }
    Ok(())
}
