//! The schemas we publish carry only standard `format` values: schemars' integer widths
//! become `minimum`/`maximum` (one transform in `schema_for`), float formats are dropped, and
//! standard formats (`date-time`, `email`, `uri`, …) stay.

use std::num::{NonZeroU8, NonZeroU64};

use mcp_tool_runtime::{
    manual::{input_schema, non_standard_formats, output_schema, schema_for},
    requests::elicitation_schema,
};
use schemars::JsonSchema;
use serde_json::{Value, json};

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Widths {
    a_u8: u8,
    a_u16: u16,
    a_u32: u32,
    a_u64: u64,
    a_u128: u128,
    a_usize: usize,
    a_i8: i8,
    a_i16: i16,
    a_i32: i32,
    a_i64: i64,
    a_i128: i128,
    a_isize: isize,
    a_f32: f32,
    a_f64: f64,
    nonzero: NonZeroU8,
    nonzero64: NonZeroU64,
    optional: Option<u32>,
    list: Vec<u16>,
    nested: Inner,
    #[schemars(range(min = 10, max = 20))]
    ranged: u32,
    #[schemars(extend("format" = "date-time"))]
    when: String,
    #[schemars(extend("format" = "email"))]
    mail: String,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Inner {
    deep: Vec<Option<i16>>,
}

fn non_standard(v: &Value) -> Vec<(String, String)> {
    non_standard_formats(v)
}

fn range(s: &Value, field: &str) -> (Value, Value) {
    let p = &s["properties"][field];
    (p["minimum"].clone(), p["maximum"].clone())
}

#[test]
fn integer_widths_become_ranges_and_no_non_standard_format_remains() {
    let s = Value::Object(schema_for::<Widths>());
    assert_eq!(non_standard(&s), Vec::<(String, String)>::new(), "{s:#}");
    let n = Value::Null;
    for (field, lo, hi) in [
        ("a_u8", json!(0), json!(255)),
        ("a_u16", json!(0), json!(65535)),
        ("a_u32", json!(0), json!(4294967295u32)),
        ("a_u64", json!(0), json!(u64::MAX)),
        ("a_u128", json!(0), n.clone()),
        ("a_usize", json!(0), json!(usize::MAX)),
        ("a_i8", json!(-128), json!(127)),
        ("a_i16", json!(-32768), json!(32767)),
        ("a_i32", json!(i32::MIN), json!(i32::MAX)),
        ("a_i64", json!(i64::MIN), json!(i64::MAX)),
        ("a_i128", n.clone(), n.clone()),
        ("a_isize", json!(isize::MIN), json!(isize::MAX)),
        ("a_f32", n.clone(), n.clone()),
        ("a_f64", n.clone(), n.clone()),
        ("nonzero", json!(1), json!(255)),
        ("nonzero64", json!(1), json!(u64::MAX)),
        ("ranged", json!(10), json!(20)),
    ] {
        assert_eq!(
            range(&s, field),
            (lo, hi),
            "{field}: {:#}",
            s["properties"][field]
        );
    }
    // inside `Option`, arrays and nested objects too
    let opt = &s["properties"]["optional"];
    assert_eq!(opt["minimum"], json!(0), "{opt:#}");
    assert_eq!(opt["maximum"], json!(u32::MAX), "{opt:#}");
    assert_eq!(s["properties"]["list"]["items"]["maximum"], json!(65535));
    let deep = &s["properties"]["nested"]["properties"]["deep"]["items"];
    assert_eq!(deep["minimum"], json!(-32768), "{deep:#}");
    // standard formats stay
    assert_eq!(s["properties"]["when"]["format"], "date-time");
    assert_eq!(s["properties"]["mail"]["format"], "email");
    assert_eq!(s["properties"]["a_f64"]["type"], "number");
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Form {
    /// How many.
    count: u8,
    /// How much.
    ratio: f64,
    #[schemars(extend("format" = "email"))]
    mail: String,
}

#[test]
fn published_schemas_carry_no_non_standard_format() {
    let input = Value::Object(input_schema::<Widths>());
    let output = Value::Object(output_schema::<Widths>().unwrap());
    let form = Value::Object(elicitation_schema::<Form>().unwrap());
    for s in [&input, &output, &form] {
        assert_eq!(non_standard(s), Vec::<(String, String)>::new(), "{s:#}");
    }
    assert_eq!(
        form["properties"]["count"]["maximum"],
        json!(255),
        "{form:#}"
    );
    assert_eq!(form["properties"]["mail"]["format"], "email", "{form:#}");
}

/// A prompt's arguments type with fields schemars gives non-standard formats.
#[allow(dead_code)]
#[derive(serde::Deserialize, JsonSchema)]
struct PromptArgs {
    /// How many findings to list.
    top: u8,
    /// The commit to start from.
    since: u64,
    /// The minimum severity.
    severity: f32,
    /// When the review is due.
    #[schemars(extend("format" = "date-time"))]
    due: String,
}

/// Lists the findings.
#[mcp_tool_runtime::mcp_prompt]
async fn findings(
    _cx: &mut mcp_tool_runtime::ToolContext,
    args: PromptArgs,
) -> Result<String, mcp_tool_runtime::ToolError> {
    Ok(format!("top {}", args.top))
}

#[tokio::test]
async fn a_prompts_argument_schema_carries_no_non_standard_format() {
    use mcp_tool_client::{Driver, InProcessTransport, ScriptedHost};
    use mcp_tool_runtime::protocol::{ClientCapabilities, Implementation};

    // schemars alone would publish `uint8`, `uint64` and `float` here
    let raw = serde_json::to_value(schemars::schema_for!(PromptArgs)).unwrap();
    let raw_formats: Vec<String> = non_standard(&raw).into_iter().map(|(_, f)| f).collect();
    assert_eq!(raw_formats.len(), 3, "{raw:#}");

    // the schema the prompt's arguments are listed from: ranges instead, `date-time` kept
    let s = Value::Object(schema_for::<PromptArgs>());
    assert_eq!(non_standard(&s), Vec::<(String, String)>::new(), "{s:#}");
    assert_eq!(range(&s, "top"), (json!(0), json!(255)));
    assert_eq!(s["properties"]["due"]["format"], "date-time");

    // and `prompts/list` as a client sees it
    let server = mcp_tool_runtime::Server::builder(Implementation::new("p", "0"))
        .prompt(findings::prompt())
        .build()
        .unwrap();
    let mut d = Driver::new(
        InProcessTransport::new(server),
        ScriptedHost::new(ClientCapabilities::none()),
    );
    let listing = d.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(non_standard(&listing), Vec::<(String, String)>::new());
    let args = listing["prompts"][0]["arguments"].as_array().unwrap();
    let names: Vec<&str> = args.iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["due", "severity", "since", "top"], "{listing:#}");
    assert_eq!(args[3]["description"], "How many findings to list.");
}
