//! The example server's listings carry only standard `format` values (strict validators such
//! as ajv in strict mode warn about every other one), and its integer fields carry their
//! ranges as `minimum`/`maximum`.

use std::sync::Arc;

use mcp_tool_client::{Driver, InProcessTransport, ScriptedHost};
use mcp_tool_runtime::manual::non_standard_formats;
use mcp_tool_runtime::protocol::ClientCapabilities;
use serde_json::Value;

/// Every schema object under `v` whose `type` is (or includes) `integer`.
fn integers<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            let is_int = match m.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
                _ => false,
            };
            if is_int {
                out.push(v);
            }
            m.values().for_each(|x| integers(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| integers(x, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_example_listing_has_no_non_standard_format() {
    let server = mcp_tool_examples::example_server(
        None,
        mcp_tool_examples::repo::Repo::embedded_demo().unwrap(),
        mcp_tool_examples::notes::Notes::temporary().unwrap(),
    )
    .unwrap();
    let mut driver = Driver::new(
        InProcessTransport::new(Arc::new(server)),
        ScriptedHost::new(ClientCapabilities::default()),
    );
    let listing = driver.list_tools().await.expect("tools/list");
    assert!(
        listing["tools"].as_array().is_some_and(|t| t.len() > 5),
        "{listing:#}"
    );
    let found = non_standard_formats(&listing);
    assert!(found.is_empty(), "non-standard formats: {found:?}");
    let mut ints = Vec::new();
    integers(&listing, &mut ints);
    assert!(!ints.is_empty(), "the examples have integer fields");
    for i in ints {
        assert!(
            i.get("minimum").is_some() || i.get("maximum").is_some(),
            "an integer without its range: {i:#}"
        );
    }
}
