//! Helpers shared by the transport and driver tests (tests/http.rs, stdio.rs, driver.rs).
#![allow(dead_code)]

use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult, JsonObject};
use mcp_tool_runtime::testing::ScriptedHost;
use serde_json::{Value, json};

#[path = "../../examples/hand_written.rs"]
#[allow(dead_code)]
pub mod hand_written;

/// A fixed 32-byte sealing key so that two servers can act as replicas.
pub const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";
/// The protocol revision.
pub const VERSION: &str = "2026-07-28";

/// The example server with the fixed key.
pub fn server() -> mcp_tool_runtime::server::Server {
    hand_written::server(Some(KEY)).expect("server builds")
}

/// `_meta` with `caps`.
pub fn meta_with(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

/// `_meta` declaring form elicitation.
pub fn meta() -> Value {
    meta_with(json!({"elicitation": {}}))
}

/// Arguments for `book_table`.
pub fn args() -> Value {
    json!({"restaurant": "Chez Rust", "party_size": 4})
}

/// A `tools/call` request for `book_table`.
pub fn call(id: u64, extra: Value) -> Value {
    let mut params = json!({"name": "book_table", "arguments": args(), "_meta": meta()});
    if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
        p.extend(e);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

/// An `accept` elicitation answer with `content`.
pub fn accept(content: Value) -> ElicitResult {
    ElicitResult::accept(obj(content))
}

/// A host that answers `when` and `confirm`.
pub fn booking_host() -> ScriptedHost {
    ScriptedHost::new(ClientCapabilities::none().with_elicitation())
        .answer(
            "when",
            accept(json!({"date": "2026-08-01", "time": "19:30"})),
        )
        .answer("confirm", accept(json!({"confirm": true})))
}

/// The expected final structured content of a confirmed booking.
pub fn booked() -> Value {
    json!({
        "restaurant": "Chez Rust",
        "party_size": 4,
        "date": "2026-08-01",
        "time": "19:30",
        "status": "booked"
    })
}
