//! The journal restart path (SEP-2322's rolling upgrade): a call started by one build of a
//! `#[mcp_tool(journal)]` tool (layout A) is resumed by another build of the same tool with a
//! different body (layout B). Two servers sharing a sealer key stand for the two builds. The
//! newer build restarts from the top and answers each ask it shares with the older one from
//! the journal, so the user is never asked the same question twice. A journaled answer is
//! reused only for the identical request (same method and params, checked by digest): a
//! question whose text changed is asked again. The round count goes on across a restart,
//! so `max_rounds` holds for the whole call.

use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::{Principal, Sample, Server, Tool, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod common;

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Name {
    name: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Num {
    n: i64,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Colour {
    colour: String,
}

/// Made away from the suspension point: its key is set on the builder (run-time key).
fn motto() -> Sample {
    Sample::user("A motto, please").key("motto")
}

/// Build 1 (layout A).
#[mcp_tool(name = "signup", journal, max_rounds = 8)]
async fn signup_v1(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    let name: Name = cx.ask("Your name?").await?;
    let m = cx.sample(motto()).await?.text()?;
    let age: Num = cx.ask("Your age?").await?;
    let city: Name = cx.ask("Your city?").await?;
    Ok(format!("v1 {} {m} {} {}", name.name, age.n, city.name))
}

/// Build 2 (layout B): one more question, one fewer, other bindings, the shared questions
/// unchanged.
#[mcp_tool(name = "signup", journal, max_rounds = 8)]
async fn signup_v2(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    let greeting = String::from("welcome");
    let name: Name = cx.ask("Your name?").await?;
    let said = cx.sample(motto()).await?.text()?;
    let colour: Colour = cx
        .ask(format!("{}, your favourite colour?", name.name))
        .await?;
    let age: Num = cx.ask("Your age?").await?;
    Ok(format!(
        "v2 {greeting} {} {said} {} {}",
        name.name, colour.colour, age.n
    ))
}

fn sealer() -> Sealer {
    Sealer::new(
        Keyring::new("shared", vec![42u8; 32]).expect("key"),
        SealConfig::default(),
    )
}

/// Build 3 (layout C): the age question reworded — a different request under the same key.
#[mcp_tool(name = "signup", journal, max_rounds = 8)]
async fn signup_v3(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    let name: Name = cx.ask("Your name?").await?;
    let m = cx.sample(motto()).await?.text()?;
    let age: Num = cx.ask("Your age in whole years?").await?;
    Ok(format!("v3 {} {m} {}", name.name, age.n))
}

/// Build 1 with the default `max_rounds` (its four suspension points).
#[mcp_tool(name = "signup", journal)]
async fn signup_v1_tight(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    let name: Name = cx.ask("Your name?").await?;
    let m = cx.sample(motto()).await?.text()?;
    let age: Num = cx.ask("Your age?").await?;
    let city: Name = cx.ask("Your city?").await?;
    Ok(format!("v1 {} {m} {} {}", name.name, age.n, city.name))
}

fn build(tool: impl Tool) -> Server {
    Server::builder(Implementation::new("journal-tests", "0"))
        .sealer(sealer())
        .tool(tool)
        .build()
        .expect("server builds")
}

/// The keys asked by an `input_required` result (empty when complete).
fn asked(result: &Value) -> Vec<String> {
    result
        .get("inputRequests")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn state(result: &Value) -> String {
    result["requestState"]
        .as_str()
        .expect("input_required carries a requestState")
        .to_owned()
}

/// What the user answers, by key.
fn answer(key: &str) -> Value {
    match key {
        "name" => json!({"action": "accept", "content": {"name": "Ada"}}),
        "age" => json!({"action": "accept", "content": {"n": 36}}),
        "city" => json!({"action": "accept", "content": {"name": "London"}}),
        "colour" => json!({"action": "accept", "content": {"colour": "teal"}}),
        "motto" => {
            json!({"role": "assistant", "content": {"type": "text", "text": "onwards"}, "model": "m"})
        }
        other => panic!("unexpected question `{other}`"),
    }
}

fn answers(keys: &[String]) -> Value {
    Value::Object(keys.iter().map(|k| (k.clone(), answer(k))).collect())
}

fn text(result: &Value) -> String {
    assert_ne!(result["isError"], json!(true), "{result}");
    result["content"][0]["text"]
        .as_str()
        .expect("text content")
        .to_owned()
}

/// Drives a call, sending round `i` to `servers[plan[i]]` (the last entry for later rounds);
/// returns the final text and every key asked, in order.
async fn drive(servers: &[&Server], plan: &[usize]) -> (String, Vec<String>) {
    match try_drive(servers, plan).await {
        (Ok(out), keys) => (out, keys),
        (Err(e), keys) => panic!("the call failed after asking {keys:?}: {e}"),
    }
}

/// Like [`drive`]; a JSON-RPC error ends the call with `Err(error)`.
async fn try_drive(servers: &[&Server], plan: &[usize]) -> (Result<String, Value>, Vec<String>) {
    let mut all = Vec::new();
    let mut responses = json!({});
    let mut st: Option<String> = None;
    for i in 0..10 {
        let s = servers[plan[i.min(plan.len() - 1)]];
        let r = match try_round(s, responses, st.as_deref()).await {
            Ok(r) => r,
            Err(e) => return (Err(e), all),
        };
        let keys = asked(&r);
        if r.get("requestState").is_none() {
            return (Ok(text(&r)), all);
        }
        all.extend(keys.iter().cloned());
        responses = answers(&keys);
        st = Some(state(&r));
    }
    panic!("the call did not complete");
}

/// One round; a JSON-RPC error is `Err(error object)`.
async fn try_round(server: &Server, responses: Value, state: Option<&str>) -> Result<Value, Value> {
    let alice = Principal::named("alice");
    common::raw_round(server, &alice, "signup", json!({}), Some(responses), state).await
}

fn no_repeats(keys: &[String]) {
    let mut seen = std::collections::BTreeSet::new();
    for k in keys {
        assert!(seen.insert(k), "`{k}` was asked twice: {keys:?}");
    }
}

#[tokio::test]
async fn the_layouts_differ_and_both_keep_a_journal() {
    let (a, b) = (signup_v1::tool().info(), signup_v2::tool().info());
    assert_eq!(a.name, b.name);
    assert_ne!(a.layout, b.layout);
    assert!(a.journal && b.journal);
}

#[tokio::test]
async fn an_upgrade_mid_call_restarts_from_the_journal() {
    let (old, new) = (build(signup_v1::tool()), build(signup_v2::tool()));
    // rounds 0..=2 on the old build (name, motto, age asked), then the new build: it
    // restarts, takes name, motto and age from the journal and asks only its new question
    let (out, keys) = drive(&[&old, &new], &[0, 0, 0, 1]).await;
    assert_eq!(keys, ["name", "motto", "age", "colour"]);
    no_repeats(&keys);
    assert_eq!(out, "v2 welcome Ada onwards teal 36");
}

#[tokio::test]
async fn a_downgrade_mid_call_also_restarts_from_the_journal() {
    let (old, new) = (build(signup_v1::tool()), build(signup_v2::tool()));
    // the new build asks name, motto, colour; then an old replica takes over and asks
    // age and city: five rounds in all, within both builds' `max_rounds = 8`
    let (out, keys) = drive(&[&old, &new], &[1, 1, 1, 0]).await;
    assert_eq!(keys, ["name", "motto", "colour", "age", "city"]);
    no_repeats(&keys);
    assert_eq!(out, "v1 Ada onwards 36 London");
}

#[tokio::test]
async fn the_round_count_survives_a_restart() {
    // the same downgrade against a build allowing 4 rounds: the 3 rounds of the other build
    // count, so its fifth round is refused (-32603) instead of starting the count again
    let (old, new) = (build(signup_v1_tight::tool()), build(signup_v2::tool()));
    assert_eq!(signup_v1_tight::tool().info().max_rounds, 4);
    let (out, keys) = try_drive(&[&old, &new], &[1, 1, 1, 0]).await;
    assert_eq!(keys, ["name", "motto", "colour", "age"]);
    let err = out.expect_err("the fifth round is refused");
    // the detail ("exceeded its maximum of 4 input rounds") goes to the log only
    assert_eq!(err["code"], -32603, "{err}");
    assert_eq!(err["message"], "Internal error", "{err}");
}

#[tokio::test]
async fn a_changed_question_is_asked_again() {
    // v1 asks name, motto, age; v3 words the age question differently under the same key:
    // the journaled answer to the old question is not reused for it
    let (v1, v3) = (build(signup_v1::tool()), build(signup_v3::tool()));
    let (out, keys) = drive(&[&v1, &v3], &[0, 0, 0, 1]).await;
    assert_eq!(keys, ["name", "motto", "age", "age"]);
    assert_eq!(out, "v3 Ada onwards 36");
}

#[tokio::test]
async fn alternating_builds_never_ask_twice() {
    let (old, new) = (build(signup_v1::tool()), build(signup_v2::tool()));
    let (out, keys) = drive(&[&old, &new], &[0, 1, 0, 1, 0, 1]).await;
    no_repeats(&keys);
    assert!(out.starts_with("v"), "{out}");
}

/// A journaled loop whose computed keys repeat (duplicate items).
#[mcp_tool(journal)]
async fn journaled_dupes(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    let mut got = Vec::new();
    for item in ["a", "b", "a"].map(String::from) {
        let v: Num = cx
            .ask(format!("delete {item}?"))
            .key(format!("del_{item}"))
            .await?;
        got.push(v.n);
    }
    Ok(format!("{got:?}"))
}

#[tokio::test]
async fn a_repeated_runtime_key_is_an_error_not_a_silent_reuse() {
    let s = Server::builder(Implementation::new("journal-tests", "0"))
        .sealer(sealer())
        .tool(journaled_dupes::tool())
        .build()
        .expect("server builds");
    let call = |responses: Value, st: Option<String>| {
        let mut params = json!({
            "name": "journaled_dupes",
            "arguments": {},
            "inputResponses": responses,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            }
        });
        if let Some(st) = st {
            params["requestState"] = json!(st);
        }
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    };
    let yes = json!({"action": "accept", "content": {"n": 1}});
    let r = s
        .handle(call(json!({}), None), &Principal::anonymous())
        .await
        .unwrap();
    let r = r.result_value().unwrap().clone();
    assert_eq!(asked(&r), ["del_a"]);
    let r = s
        .handle(
            call(json!({"del_a": yes}), Some(state(&r))),
            &Principal::anonymous(),
        )
        .await
        .unwrap();
    let r = r.result_value().unwrap().clone();
    assert_eq!(asked(&r), ["del_b"]);
    // the third item repeats `del_a`: an error, not the first answer again
    let r = s
        .handle(
            call(json!({"del_b": yes}), Some(state(&r))),
            &Principal::anonymous(),
        )
        .await
        .unwrap();
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["error"]["code"], -32603, "{v}");
}

/// A journaled loop: each iteration's key is computed, so each gets its own answer.
#[mcp_tool(journal)]
async fn journaled_loop(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    let mut got = Vec::new();
    for i in 0..3 {
        let v: Num = cx.ask(format!("n{i}?")).key(format!("n{i}")).await?;
        got.push(v.n);
    }
    Ok(format!("{got:?}"))
}

#[tokio::test]
async fn a_journaled_loop_with_computed_keys_gets_each_answer() {
    let s = Server::builder(Implementation::new("journal-tests", "0"))
        .sealer(sealer())
        .tool(journaled_loop::tool())
        .build()
        .expect("server builds");
    let mut responses = json!({});
    let mut st: Option<String> = None;
    let mut all = Vec::new();
    for i in 0..5 {
        let mut params = json!({
            "name": "journaled_loop",
            "arguments": {},
            "inputResponses": responses,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}
            }
        });
        if let Some(s) = &st {
            params["requestState"] = json!(s);
        }
        let msg = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params});
        let resp = s
            .handle(msg, &Principal::anonymous())
            .await
            .expect("a response");
        let r = resp.result_value().expect("a result").clone();
        if r.get("requestState").is_none() {
            assert_eq!(text(&r), "[10, 11, 12]");
            assert_eq!(all, ["n0", "n1", "n2"]);
            return;
        }
        let keys = asked(&r);
        responses = Value::Object(
            keys.iter()
                .map(|k| {
                    let n = 10 + k[1..].parse::<i64>().unwrap();
                    (k.clone(), json!({"action": "accept", "content": {"n": n}}))
                })
                .collect(),
        );
        all.extend(keys);
        st = Some(state(&r));
    }
    panic!("the call did not complete");
}
