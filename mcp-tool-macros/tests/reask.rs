//! Asking again without keeping the requests: a retry that misses an answer gets the same
//! `inputRequests` and the same `requestState` back (SEP-2322), but the state of a
//! `#[mcp_tool]` keeps only each pending request's kind (`"e"`, `"s"`, `"r"`; with the
//! journal, `"e:<digest>"`): the stage after the suspension point makes the requests again
//! from the state it resumes. A builder that reads a value the stage does not keep has its
//! request kept whole, as a hand-written tool's is. Everything here goes through the server
//! (sealing, opening, the re-asking run); the payloads are read out of the tokens.

use std::sync::atomic::{AtomicU32, Ordering};

use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::seal::{Binding, Keyring, SealConfig, Sealer};
use mcp_tool_runtime::{
    Principal, Sample, Server, State, ToolContext, ToolError, mcp_flow, mcp_tool,
};
use schemars::JsonSchema;

mod common;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Trip {
    city: String,
}

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Name {
    name: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct YesNo {
    ok: bool,
}

/// The builder reads a borrow of the arguments (bound again in every stage): regenerated.
#[mcp_tool]
async fn traveller(cx: &mut ToolContext, args: Trip) -> Result<String, ToolError> {
    let city = &args.city;
    let who: Name = cx.ask(format!("Who is going to {city}?")).await?;
    Ok(format!("{} -> {}", who.name, args.city))
}

/// The builder reads `raw`, which nothing after the suspension point needs: the stage keeps
/// it only to make the request again ("soft"), saved before the builder runs (its `let`
/// visibly makes an owned value: `format!`).
#[mcp_tool]
async fn rater(cx: &mut ToolContext, args: Trip) -> Result<String, ToolError> {
    let raw = format!("sunny in {}", args.city);
    let verdict = cx
        .sample(Sample::user(format!("Rate: {raw}")).max_tokens(10))
        .key("verdict")
        .await?
        .text()?;
    Ok(verdict)
}

/// The builder moves what it reads (`Sample::user(prompt)`): saved before it runs, the value
/// is there to make the request again.
#[mcp_tool]
async fn mover(cx: &mut ToolContext, args: Trip) -> Result<String, ToolError> {
    let prompt = format!("Describe {}", args.city);
    let said = cx.sample(Sample::user(prompt)).key("said").await?.text()?;
    Ok(said)
}

/// A value that does not serialize.
struct Opaque(String);

impl Opaque {
    fn text(&self) -> String {
        self.0.clone()
    }
}

/// The builder reads a value that cannot be kept (its type, though owned, does not
/// serialize): its request is kept whole (and the tool compiles: nothing after the suspension
/// point needs the value).
#[mcp_tool]
async fn opaque(cx: &mut ToolContext, args: Trip) -> Result<String, ToolError> {
    let o: Opaque = Opaque(format!("cloudy in {}", args.city));
    let verdict = cx
        .sample(Sample::user(o.text()))
        .key("verdict")
        .await?
        .text()?;
    Ok(verdict)
}

/// Two requests in one round, one of them a constant, one reading a kept variable.
#[mcp_tool]
async fn pair(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    let first: Name = cx.ask("First name?").await?;
    let (last, sure): (Name, YesNo) = cx
        .round((
            mcp_tool_runtime::requests::Ask::<Name>::new(format!("Last name of {}?", first.name)),
            mcp_tool_runtime::requests::Ask::<YesNo>::new("Sure?"),
        ))
        .await?;
    Ok(format!("{} {} {}", first.name, last.name, sure.ok))
}

/// A flow whose parameter is kept across its suspension point.
#[mcp_flow]
async fn confirm(cx: &mut ToolContext, what: String) -> Result<bool, ToolError> {
    let answer: YesNo = cx.ask(format!("{what}?")).await?;
    Ok(answer.ok && !what.is_empty())
}

#[mcp_tool]
async fn booking(cx: &mut ToolContext, args: Trip) -> Result<String, ToolError> {
    let sure = confirm(cx, format!("Book {}", args.city)).await?;
    Ok(format!("booked: {sure}"))
}

/// With the journal, a regenerated request carries its digest.
#[mcp_tool(journal)]
async fn journaled(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    let who: Name = cx.ask("Who?").await?;
    Ok(who.name)
}

/// A counter the next tool's builder reads: its request differs every time it is made.
#[derive(Default)]
struct Counter(AtomicU32);

/// Not deterministic: the question changes each time it is made. With the journal on, the
/// server notices when it asks again (the digest differs) and refuses.
#[mcp_tool(journal)]
async fn drifting(
    cx: &mut ToolContext,
    _args: NoArgs,
    n: State<Counter>,
) -> Result<String, ToolError> {
    let who: Name = cx
        .ask(format!("Question {}?", n.0.fetch_add(1, Ordering::SeqCst)))
        .await?;
    Ok(who.name)
}

fn sealer() -> Sealer {
    Sealer::new(
        Keyring::new("k1", vec![5u8; 32]).expect("key"),
        SealConfig::default(),
    )
}

fn server() -> Server {
    Server::builder(Implementation::new("reask-tests", "0"))
        .sealer(sealer())
        .state(Counter::default())
        .tool(traveller::tool())
        .tool(rater::tool())
        .tool(mover::tool())
        .tool(opaque::tool())
        .tool(unclear::tool())
        .tool(pair::tool())
        .tool(booking::tool())
        .tool(journaled::tool())
        .tool(drifting::tool())
        .build()
        .expect("server builds")
}

/// One round of `name` as alice (see [`common::raw_round`]).
async fn round(
    s: &Server,
    name: &str,
    args: Value,
    responses: Option<Value>,
    state: Option<&str>,
) -> Result<Value, Value> {
    common::raw_round(s, &Principal::named("alice"), name, args, responses, state).await
}

fn state(result: &Value) -> String {
    result["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState in {result}"))
        .to_owned()
}

/// The payload of a state sealed by [`server`] for `tool` called by alice with `args`,
/// opened with the server's own sealer settings.
fn payload(tool: &str, args: &Value, token: &str) -> Value {
    let alice = Principal::named("alice");
    sealer()
        .with_context("reask-tests")
        .open(&Binding::new(&alice, "tools/call", tool, args), token)
        .expect("the server's own state opens")
        .payload
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// Asks again twice (no answers at all, then only an unrelated one) and checks each time that
/// the result is the first one again, byte for byte.
async fn asks_again_identically(s: &Server, name: &str, args: &Value, first: &Value) {
    let st = state(first);
    for responses in [None, Some(json!({"unrelated": accept(json!({}))}))] {
        let again = round(s, name, args.clone(), responses, Some(&st))
            .await
            .expect("asked again");
        assert_eq!(again["resultType"], "input_required");
        assert_eq!(again["requestState"], json!(st), "the same state");
        assert_eq!(
            again["inputRequests"], first["inputRequests"],
            "the same requests"
        );
    }
}

#[tokio::test]
async fn a_regenerated_request_is_kept_as_its_kind_and_asked_again_identically() {
    let s = server();
    let args = json!({"city": "Oslo"});
    let r1 = round(&s, "traveller", args.clone(), None, None)
        .await
        .unwrap();
    assert_eq!(
        r1["inputRequests"]["who"]["params"]["message"],
        "Who is going to Oslo?"
    );
    let p = payload("traveller", &args, &state(&r1));
    assert_eq!(p["p"], json!({"who": "e"}), "only the kind is kept: {p}");
    asks_again_identically(&s, "traveller", &args, &r1).await;

    // a wrong-shaped answer is still refused against the kept kind
    let bad = round(
        &s,
        "traveller",
        args.clone(),
        Some(json!({"who": {"roots": []}})),
        Some(&state(&r1)),
    )
    .await
    .unwrap_err();
    assert_eq!(bad["code"], -32602, "{bad}");

    let done = round(
        &s,
        "traveller",
        args,
        Some(json!({"who": accept(json!({"name": "Ada"}))})),
        Some(&state(&r1)),
    )
    .await
    .unwrap();
    assert_eq!(done["content"][0]["text"], "Ada -> Oslo");
}

fn sampled(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "m"})
}

#[tokio::test]
async fn a_value_read_only_by_the_builder_is_kept_to_make_the_request_again() {
    let s = server();
    for (tool, key, kept, prompt) in [
        ("rater", "verdict", "raw", "Rate: sunny in Rome"),
        ("mover", "said", "prompt", "Describe Rome"),
    ] {
        let args = json!({"city": "Rome"});
        let r1 = round(&s, tool, args.clone(), None, None).await.unwrap();
        assert_eq!(
            r1["inputRequests"][key]["params"]["messages"][0]["content"]["text"],
            prompt
        );
        let p = payload(tool, &args, &state(&r1));
        assert_eq!(p["p"], json!({key: "s"}), "{tool}: only the kind: {p}");
        assert!(p["s"][1][kept].is_string(), "{tool}: `{kept}` kept: {p}");
        asks_again_identically(&s, tool, &args, &r1).await;
        let done = round(
            &s,
            tool,
            args,
            Some(json!({key: sampled("9/10")})),
            Some(&state(&r1)),
        )
        .await
        .unwrap();
        assert_eq!(done["content"][0]["text"], "9/10", "{tool}");
    }
}

#[tokio::test]
async fn a_builder_reading_a_value_that_cannot_be_kept_keeps_its_request_whole() {
    let s = server();
    let args = json!({"city": "Rome"});
    let r1 = round(&s, "opaque", args.clone(), None, None).await.unwrap();
    let p = payload("opaque", &args, &state(&r1));
    assert_eq!(
        p["p"]["verdict"]["method"], "sampling/createMessage",
        "kept whole: {p}"
    );
    assert_eq!(p["s"], json!(["S0"]), "nothing else kept: {p}");
    asks_again_identically(&s, "opaque", &args, &r1).await;
    let done = round(
        &s,
        "opaque",
        args,
        Some(json!({"verdict": sampled("5/10")})),
        Some(&state(&r1)),
    )
    .await
    .unwrap();
    assert_eq!(done["content"][0]["text"], "5/10");
}

/// The builder reads a value whose `let` does not show it is owned (`fetch(..)` could return a
/// borrow): its request is kept whole.
#[mcp_tool]
async fn unclear(cx: &mut ToolContext, args: Trip) -> Result<String, ToolError> {
    let raw = fetch(&args.city);
    let verdict = cx
        .sample(Sample::user(format!("Rate: {raw}")))
        .key("verdict")
        .await?
        .text()?;
    Ok(verdict)
}

fn fetch(city: &str) -> String {
    format!("windy in {city}")
}

#[tokio::test]
async fn a_value_not_visibly_owned_keeps_the_request_whole() {
    let s = server();
    let r1 = round(&s, "unclear", json!({"city": "Oslo"}), None, None)
        .await
        .unwrap();
    let p = payload("unclear", &json!({"city": "Oslo"}), &state(&r1));
    assert_eq!(p["p"]["verdict"]["method"], "sampling/createMessage", "{p}");
    asks_again_identically(&s, "unclear", &json!({"city": "Oslo"}), &r1).await;
}

#[tokio::test]
async fn a_round_of_two_is_made_again_from_a_kept_variable() {
    let s = server();
    let args = json!({});
    let r1 = round(&s, "pair", args.clone(), None, None).await.unwrap();
    let r2 = round(
        &s,
        "pair",
        args.clone(),
        Some(json!({"first": accept(json!({"name": "Grace"}))})),
        Some(&state(&r1)),
    )
    .await
    .unwrap();
    assert_eq!(
        r2["inputRequests"]["last"]["params"]["message"],
        "Last name of Grace?"
    );
    let p = payload("pair", &args, &state(&r2));
    assert_eq!(p["p"], json!({"last": "e", "sure": "e"}), "{p}");
    assert_eq!(
        p["s"][1]["first"]["name"], "Grace",
        "the kept variable: {p}"
    );
    asks_again_identically(&s, "pair", &args, &r2).await;
    // one of the two answered: both asked again, the answered one too
    let partial = round(
        &s,
        "pair",
        args.clone(),
        Some(json!({"sure": accept(json!({"ok": true}))})),
        Some(&state(&r2)),
    )
    .await
    .unwrap();
    assert_eq!(partial["inputRequests"], r2["inputRequests"]);
    let done = round(
        &s,
        "pair",
        args,
        Some(json!({
            "last": accept(json!({"name": "Hopper"})),
            "sure": accept(json!({"ok": true})),
        })),
        Some(&state(&r2)),
    )
    .await
    .unwrap();
    assert_eq!(done["content"][0]["text"], "Grace Hopper true");
}

#[tokio::test]
async fn a_request_inside_a_flow_is_made_again_under_its_site() {
    let s = server();
    let args = json!({"city": "Lima"});
    let r1 = round(&s, "booking", args.clone(), None, None)
        .await
        .unwrap();
    let keys: Vec<&String> = r1["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["sure/answer"]);
    assert_eq!(
        r1["inputRequests"]["sure/answer"]["params"]["message"],
        "Book Lima?"
    );
    let p = payload("booking", &args, &state(&r1));
    assert_eq!(p["p"], json!({"sure/answer": "e"}), "{p}");
    asks_again_identically(&s, "booking", &args, &r1).await;
    let done = round(
        &s,
        "booking",
        args,
        Some(json!({"sure/answer": accept(json!({"ok": true}))})),
        Some(&state(&r1)),
    )
    .await
    .unwrap();
    assert_eq!(done["content"][0]["text"], "booked: true");
}

#[tokio::test]
async fn under_the_journal_a_regenerated_request_keeps_its_digest() {
    let s = server();
    let r1 = round(&s, "journaled", json!({}), None, None).await.unwrap();
    let p = payload("journaled", &json!({}), &state(&r1));
    let kept = p["p"]["who"].as_str().expect("a string");
    assert!(
        kept.starts_with("e:") && kept.len() == 2 + 22,
        "kind and digest: {p}"
    );
    asks_again_identically(&s, "journaled", &json!({}), &r1).await;
    let done = round(
        &s,
        "journaled",
        json!({}),
        Some(json!({"who": accept(json!({"name": "Lin"}))})),
        Some(&state(&r1)),
    )
    .await
    .unwrap();
    assert_eq!(done["content"][0]["text"], "Lin");
}

#[tokio::test]
async fn a_request_made_differently_when_asked_again_is_refused_under_the_journal() {
    let s = server();
    let r1 = round(&s, "drifting", json!({}), None, None).await.unwrap();
    assert_eq!(
        r1["inputRequests"]["who"]["params"]["message"],
        "Question 0?"
    );
    let e = round(&s, "drifting", json!({}), None, Some(&state(&r1)))
        .await
        .unwrap_err();
    assert_eq!(e["code"], -32603, "{e}");
    // the state itself is fine: answering it completes
    let done = round(
        &s,
        "drifting",
        json!({}),
        Some(json!({"who": accept(json!({"name": "Kim"}))})),
        Some(&state(&r1)),
    )
    .await
    .unwrap();
    assert_eq!(done["content"][0]["text"], "Kim");
}
