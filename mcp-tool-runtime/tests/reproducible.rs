//! A hand-written tool that registers its requests with `ToolContext::request_reproducible`:
//! the sealed state keeps only their kind, and a retry missing an answer is answered by a
//! re-asking run of the tool (`cx.is_reasking()`), which makes the same requests again. A
//! tool that does not make a request again under its key (or, under the journal, makes a
//! different one) is refused with -32603; without the journal only the kind is checked, so
//! a reworded request is what the client is asked again.

use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::manual::Reentrant;
use mcp_tool_runtime::protocol::{CallToolResult, Capability, Implementation};
use mcp_tool_runtime::requests::{Ask, Sample};
use mcp_tool_runtime::seal::{Binding, Keyring, SealConfig, Sealer};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::{
    Principal, Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

#[derive(Serialize, Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// Asks a name, then asks the model about it. Its state is the phase and the name; each
/// request is made from what the state holds, so it can be made again.
struct Namer {
    /// Words a re-made request differently (a broken tool).
    drift: bool,
}

fn ask_name() -> Result<mcp_tool_runtime::protocol::InputRequest, ToolError> {
    Ask::<Name>::new("Your name?").into_request()
}

fn sample_for(
    name: &str,
    drift: bool,
) -> Result<mcp_tool_runtime::protocol::InputRequest, ToolError> {
    let text = if drift {
        format!("A short poem about {name}, again")
    } else {
        format!("A short poem about {name}")
    };
    Sample::user(text).into_request()
}

impl Tool for Namer {
    fn info(&self) -> ToolInfo {
        ToolInfo::new(if self.drift {
            "drifting_namer"
        } else {
            "namer"
        })
        .needs(Capability::Elicitation)
        .needs(Capability::Sampling)
        .max_rounds(2)
        .layout("namer/v1")
    }

    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        _args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            let state: Option<Value> = state
                .map(mcp_tool_runtime::manual::parse_state)
                .transpose()?;
            let phase = state
                .as_ref()
                .and_then(|s| s.get("asked"))
                .and_then(Value::as_str);
            match phase {
                None => {
                    cx.request_reproducible("name", ask_name()?)?;
                    Step::suspend(&json!({"asked": "name"}))
                }
                Some("name") if cx.is_reasking() => {
                    cx.request_reproducible("name", ask_name()?)?;
                    Step::suspend(&Value::Null)
                }
                Some("name") => {
                    let name: Name = cx.take_ask("name")?;
                    cx.request_reproducible("poem", sample_for(&name.name, false)?)?;
                    Step::suspend(&json!({"asked": "poem", "name": name.name}))
                }
                Some("poem") => {
                    let name = state
                        .as_ref()
                        .and_then(|s| s.get("name"))
                        .and_then(Value::as_str)
                        .ok_or(ToolError::InvalidState)?;
                    if cx.is_reasking() {
                        cx.request_reproducible("poem", sample_for(name, self.drift)?)?;
                        return Step::suspend(&Value::Null);
                    }
                    let poem = cx.take_sampling("poem")?.text()?;
                    Ok(Step::Complete(CallToolResult::text(format!(
                        "{name}: {poem}"
                    ))))
                }
                Some(_) => Err(ToolError::InvalidState),
            }
        })
    }
}

fn sealer() -> Sealer {
    Sealer::new(
        Keyring::new("k1", vec![3u8; 32]).expect("key"),
        SealConfig::default(),
    )
}

fn server() -> Server {
    Server::builder(Implementation::new("reproducible", "0"))
        .sealer(sealer())
        .tool(Namer { drift: false })
        .tool(Namer { drift: true })
        .build()
        .expect("server builds")
}

async fn call(s: &Server, name: &str, extra: Value) -> Result<Value, Value> {
    let mut params = json!({
        "name": name,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
        }
    });
    if let (Some(p), Value::Object(e)) = (params.as_object_mut(), extra) {
        p.extend(e);
    }
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let resp = s
        .handle(msg, &Principal::named("ada"))
        .await
        .expect("a response");
    let v = serde_json::to_value(&resp).expect("serializes");
    match v.get("error") {
        Some(e) => Err(e.clone()),
        None => Ok(v["result"].clone()),
    }
}

fn state(result: &Value) -> String {
    result["requestState"].as_str().expect("a state").to_owned()
}

/// The payload of a state sealed by [`server`] for ada's call of `namer`, opened with the
/// server's own sealer settings.
fn payload(token: &str) -> Value {
    let ada = Principal::named("ada");
    sealer()
        .with_context("reproducible")
        .open(
            &Binding::new(&ada, "tools/call", "namer", &json!({})),
            token,
        )
        .expect("the server's own state opens")
        .payload
}

fn poem_answer() -> Value {
    json!({"poem": {"role": "assistant", "content": {"type": "text", "text": "roses"}, "model": "m"}})
}

#[tokio::test]
async fn reproducible_requests_are_kept_as_their_kind_and_made_again_by_the_tool() {
    let s = server();
    let r1 = call(&s, "namer", json!({})).await.unwrap();
    assert_eq!(payload(&state(&r1))["p"], json!({"name": "e"}));
    // missing answer: the tool makes the request again, the client gets its state back
    let again = call(&s, "namer", json!({"requestState": state(&r1)}))
        .await
        .unwrap();
    assert_eq!(again["requestState"], r1["requestState"]);
    assert_eq!(again["inputRequests"], r1["inputRequests"]);

    let r2 = call(
        &s,
        "namer",
        json!({"requestState": state(&r1),
               "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}}}),
    )
    .await
    .unwrap();
    assert_eq!(
        r2["inputRequests"]["poem"]["params"]["messages"][0]["content"]["text"],
        "A short poem about Ada"
    );
    assert_eq!(payload(&state(&r2))["p"], json!({"poem": "s"}));
    let again = call(
        &s,
        "namer",
        json!({"requestState": state(&r2), "inputResponses": {}}),
    )
    .await
    .unwrap();
    assert_eq!(again["inputRequests"], r2["inputRequests"]);
    assert_eq!(again["requestState"], r2["requestState"]);

    let done = call(
        &s,
        "namer",
        json!({"requestState": state(&r2), "inputResponses": poem_answer()}),
    )
    .await
    .unwrap();
    assert_eq!(done["content"][0]["text"], "Ada: roses");
}

#[tokio::test]
async fn a_request_not_made_again_under_its_key_is_refused() {
    // A broken tool: asked again, it makes its request under another key.
    struct WrongKey;
    impl Tool for WrongKey {
        fn info(&self) -> ToolInfo {
            ToolInfo::new("wrong_key")
                .needs(Capability::Elicitation)
                .max_rounds(1)
                .layout("wrong/v1")
        }
        fn step<'a>(
            &'a self,
            cx: &'a mut ToolContext,
            _args: &'a RawValue,
            state: Option<&'a RawValue>,
        ) -> BoxFuture<'a, Result<Step, ToolError>> {
            Box::pin(async move {
                let key = if state.is_some() { "other" } else { "name" };
                cx.request_reproducible(key, ask_name()?)?;
                Step::suspend(&json!(1))
            })
        }
    }
    let s = Server::builder(Implementation::new("reproducible", "0"))
        .sealer(sealer())
        .tool(WrongKey)
        .build()
        .expect("server builds");
    let r1 = call(&s, "wrong_key", json!({})).await.unwrap();
    let e = call(&s, "wrong_key", json!({"requestState": state(&r1)}))
        .await
        .unwrap_err();
    assert_eq!(e["code"], -32603, "{e}");

    // and the drifting namer still completes when answered (only the re-ask is affected)
    let s = server();
    let r1 = call(&s, "drifting_namer", json!({})).await.unwrap();
    let r2 = call(
        &s,
        "drifting_namer",
        json!({"requestState": state(&r1),
               "inputResponses": {"name": {"action": "accept", "content": {"name": "Lin"}}}}),
    )
    .await
    .unwrap();
    // without the journal the kind matches, so the reworded request is what is asked again
    let again = call(&s, "drifting_namer", json!({"requestState": state(&r2)}))
        .await
        .unwrap();
    assert_eq!(
        again["inputRequests"]["poem"]["params"]["messages"][0]["content"]["text"],
        "A short poem about Lin, again"
    );
    let done = call(
        &s,
        "drifting_namer",
        json!({"requestState": state(&r2), "inputResponses": poem_answer()}),
    )
    .await
    .unwrap();
    assert_eq!(done["content"][0]["text"], "Lin: roses");
}
