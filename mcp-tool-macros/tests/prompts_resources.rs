//! `#[mcp_prompt]` and `#[mcp_resource]`: written like tools (they may ask before they
//! answer), listed with pagination, read and got through the rounds, bound to their method and
//! name/URI, completed, with application state and flows.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_tool_runtime::protocol::{ContentBlock, Implementation, PromptMessage, ResourceContents};
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::{
    CompleteContext, Principal, Prompt, Resource, Server, State, ToolContext, ToolError, mcp_flow,
    mcp_prompt, mcp_resource, mcp_tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Serialize, Deserialize, JsonSchema)]
struct Branch {
    /// The branch to review.
    branch: String,
}

#[derive(Deserialize, JsonSchema)]
struct ReviewArgs {
    /// What to focus on.
    focus: String,
    /// How strict to be, 1 to 5.
    strictness: Option<u8>,
}

/// The repository's branches (application state).
struct Branches(Vec<String>);

/// Asks which branch (a flow shared with a tool).
#[mcp_flow]
async fn pick_branch(cx: &mut ToolContext) -> Result<String, ToolError> {
    let choice: Branch = cx.ask("Which branch?").await?;
    Ok(choice.branch)
}

/// Review changes: asks which branch first, then answers with the diff embedded.
#[mcp_prompt(title = "Review changes", complete(focus = complete_focus))]
async fn review_changes(
    cx: &mut ToolContext,
    args: ReviewArgs,
    branches: State<Branches>,
) -> Result<Vec<PromptMessage>, ToolError> {
    let branch = pick_branch(cx).await?;
    if !branches.0.contains(&branch) {
        return Err(ToolError::invalid_input("branch", "no such branch"));
    }
    let strict = args.strictness.unwrap_or(3);
    Ok(vec![
        PromptMessage::user(ContentBlock::embedded_text(
            format!("git://diff/{branch}"),
            format!("diff of {branch}"),
        )),
        PromptMessage::user(format!(
            "Review the diff above, focusing on {} (strictness {strict}).",
            args.focus
        )),
    ])
}

async fn complete_focus(cx: CompleteContext) -> Result<Vec<String>, ToolError> {
    let all = ["security", "style", "speed", "structure"];
    Ok(all
        .iter()
        .filter(|w| w.starts_with(&cx.value))
        .map(|w| w.to_string())
        .collect())
}

/// A prompt without arguments.
#[mcp_prompt]
async fn hello(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("Say hello.".into())
}

static READS: AtomicUsize = AtomicUsize::new(0);

/// A fixed text resource.
#[mcp_resource(uri = "test://motd", mime_type = "text/plain", cache_ttl = "30s")]
async fn motd(_cx: &mut ToolContext) -> Result<String, ToolError> {
    READS.fetch_add(1, Ordering::SeqCst);
    Ok("Hello, world".into())
}

/// A binary resource.
#[mcp_resource(uri = "test://logo", mime_type = "image/png", private)]
async fn logo(_cx: &mut ToolContext) -> Result<Vec<u8>, ToolError> {
    Ok(vec![0x89, b'P', b'N', b'G'])
}

#[derive(Deserialize, JsonSchema)]
struct ItemVars {
    id: u32,
    part: String,
}

/// A template whose variables arrive typed; it asks for confirmation of a large id.
#[mcp_resource(template = "test://items/{id}/{+part}", mime_type = "application/json", complete(part = complete_part))]
async fn item(cx: &mut ToolContext, vars: ItemVars) -> Result<String, ToolError> {
    if vars.id > 1000 {
        let sure: Sure = cx
            .ask(format!("Item {} is large; read it?", vars.id))
            .await?;
        if !sure.ok {
            return Err(ToolError::failed("not read"));
        }
    }
    Ok(json!({"id": vars.id, "part": vars.part}).to_string())
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Sure {
    /// Read it?
    ok: bool,
}

async fn complete_part(cx: CompleteContext) -> Result<Vec<String>, ToolError> {
    // the other variables already filled in narrow the suggestions
    let id = cx.arguments.get("id").cloned().unwrap_or_default();
    Ok((0..150)
        .map(|i| format!("{id}-part{i}"))
        .filter(|p| p.contains(&cx.value))
        .collect())
}

/// A tool using the same flow.
#[mcp_tool]
async fn checkout(cx: &mut ToolContext) -> Result<String, ToolError> {
    let b = pick_branch(cx).await?;
    Ok(format!("checked out {b}"))
}

fn server(page: usize) -> Server {
    Server::builder(Implementation::new("catalog", "0"))
        .sealer(Sealer::new(
            Keyring::new("k", vec![3u8; 32]).unwrap(),
            SealConfig::default(),
        ))
        .state(Branches(vec!["main".into(), "dev".into()]))
        .prompt(review_changes::prompt())
        .prompt(hello::prompt())
        .resource(motd::resource())
        .resource(logo::resource())
        .resource(item::resource())
        .tool(checkout::tool())
        .page_size(page)
        .build()
        .expect("builds")
}

async fn rpc(s: &Server, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    });
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let r = s.handle(msg, &Principal::named("ann")).await.unwrap();
    serde_json::to_value(&r).unwrap()
}

fn accept(v: Value) -> Value {
    json!({"action": "accept", "content": v})
}

#[tokio::test]
async fn discover_advertises_what_is_registered() {
    let s = server(10);
    let r = rpc(&s, "server/discover", json!({})).await;
    let caps = &r["result"]["capabilities"];
    assert!(caps["tools"].is_object() && caps["prompts"].is_object());
    assert!(caps["resources"].is_object() && caps["completions"].is_object());
    let bare = Server::builder(Implementation::new("bare", "0"))
        .prompt(hello::prompt())
        .build()
        .unwrap();
    let r = rpc(&bare, "server/discover", json!({})).await;
    let caps = r["result"]["capabilities"].as_object().unwrap();
    // `logging` is always there: any code may call `cx.log` (sent only to clients that ask)
    assert_eq!(caps.keys().collect::<Vec<_>>(), ["logging", "prompts"]);
}

#[tokio::test]
async fn lists_are_paginated_with_checked_cursors() {
    let s = server(1);
    let r = rpc(&s, "prompts/list", json!({})).await;
    let res = &r["result"];
    assert_eq!(res["prompts"].as_array().unwrap().len(), 1);
    assert_eq!(res["prompts"][0]["name"], "review_changes");
    assert_eq!(res["prompts"][0]["title"], "Review changes");
    assert_eq!(
        res["prompts"][0]["arguments"],
        json!([
            {"name": "focus", "description": "What to focus on.", "required": true},
            {"name": "strictness", "description": "How strict to be, 1 to 5.", "required": false}
        ])
    );
    assert!(res["ttlMs"].is_u64() && res["cacheScope"] == "public");
    let cursor = res["nextCursor"].as_str().unwrap().to_owned();
    let r = rpc(&s, "prompts/list", json!({"cursor": cursor})).await;
    assert_eq!(r["result"]["prompts"][0]["name"], "hello");
    assert!(r["result"].get("nextCursor").is_none());
    // a cursor of another list, or made up, is -32602
    for bad in [json!("junk"), json!(5), json!(cursor.clone() + "x")] {
        let r = rpc(&s, "resources/list", json!({"cursor": bad})).await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
    let r = rpc(&s, "resources/list", json!({})).await;
    assert_eq!(r["result"]["resources"][0]["uri"], "test://motd");
    let r = rpc(&s, "resources/templates/list", json!({})).await;
    assert_eq!(
        r["result"]["resourceTemplates"][0]["uriTemplate"],
        "test://items/{id}/{+part}"
    );
    assert_eq!(
        r["result"]["resourceTemplates"][0]["mimeType"],
        "application/json"
    );
}

#[tokio::test]
async fn a_prompt_asks_before_it_answers() {
    let s = server(10);
    let args =
        json!({"name": "review_changes", "arguments": {"focus": "security", "strictness": "5"}});
    let r = rpc(&s, "prompts/get", args.clone()).await;
    let res = &r["result"];
    assert_eq!(res["resultType"], "input_required");
    assert_eq!(
        res["inputRequests"]["branch/choice"]["params"]["message"],
        "Which branch?"
    );
    assert!(res.get("ttlMs").is_none());
    let mut retry = args.clone();
    retry["requestState"] = res["requestState"].clone();
    retry["inputResponses"] = json!({"branch/choice": accept(json!({"branch": "dev"}))});
    let r = rpc(&s, "prompts/get", retry.clone()).await;
    let res = &r["result"];
    assert_eq!(res["resultType"], "complete", "{r}");
    assert_eq!(res["messages"][0]["content"]["type"], "resource");
    assert_eq!(
        res["messages"][0]["content"]["resource"]["uri"],
        "git://diff/dev"
    );
    assert_eq!(
        res["messages"][1]["content"]["text"],
        "Review the diff above, focusing on security (strictness 5)."
    );
    // the state is bound to prompts/get + this prompt + these arguments
    let mut other = retry.clone();
    other["arguments"]["focus"] = json!("style");
    assert_eq!(rpc(&s, "prompts/get", other).await["error"]["code"], -32602);
    let mut tool = json!({"name": "checkout", "arguments": {}});
    tool["requestState"] = retry["requestState"].clone();
    tool["inputResponses"] = retry["inputResponses"].clone();
    let r = rpc(&s, "tools/call", tool).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // an answer the prompt refuses is -32602 (a prompt has no isError result)
    let mut bad = retry.clone();
    bad["inputResponses"] = json!({"branch/choice": accept(json!({"branch": "nope"}))});
    assert_eq!(rpc(&s, "prompts/get", bad).await["error"]["code"], -32602);
}

#[tokio::test]
async fn prompt_errors() {
    let s = server(10);
    let r = rpc(&s, "prompts/get", json!({"name": "nope"})).await;
    assert_eq!(r["error"]["code"], -32602);
    // a missing required argument: -32602 before any code
    let r = rpc(
        &s,
        "prompts/get",
        json!({"name": "review_changes", "arguments": {}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"].as_str().unwrap().contains("focus"),
        "{r}"
    );
    // a value that does not parse into the field's type
    let r = rpc(
        &s,
        "prompts/get",
        json!({"name": "review_changes", "arguments": {"focus": "x", "strictness": "lots"}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("strictness"),
        "{r}"
    );
    let r = rpc(
        &s,
        "prompts/get",
        json!({"name": "hello", "arguments": {"x": 1}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602);
    let r = rpc(&s, "prompts/get", json!({"name": "hello"})).await;
    assert_eq!(r["result"]["messages"][0]["content"]["text"], "Say hello.");
}

#[tokio::test]
async fn resources_are_read_with_caching_hints() {
    let s = server(10);
    let r = rpc(&s, "resources/read", json!({"uri": "test://motd"})).await;
    let res = &r["result"];
    assert_eq!(
        res["contents"],
        json!([{"uri": "test://motd", "mimeType": "text/plain", "text": "Hello, world"}])
    );
    assert_eq!(res["ttlMs"], 30000);
    assert_eq!(res["cacheScope"], "public");
    let r = rpc(&s, "resources/read", json!({"uri": "test://logo"})).await;
    let res = &r["result"];
    assert_eq!(res["contents"][0]["blob"], "iVBORw==");
    assert_eq!(res["contents"][0]["mimeType"], "image/png");
    assert_eq!(res["cacheScope"], "private");
    let r = rpc(
        &s,
        "resources/read",
        json!({"uri": "test://items/7/a/b.txt"}),
    )
    .await;
    assert_eq!(
        serde_json::from_str::<Value>(r["result"]["contents"][0]["text"].as_str().unwrap())
            .unwrap(),
        json!({"id": 7, "part": "a/b.txt"})
    );
    // unknown: -32602 with data.uri; a template variable of the wrong type: -32602
    let r = rpc(&s, "resources/read", json!({"uri": "test://nothing"})).await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["error"]["data"]["uri"], "test://nothing");
    let r = rpc(&s, "resources/read", json!({"uri": "test://items/seven/x"})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn a_resource_read_may_need_input_and_is_then_not_cacheable() {
    let s = server(10);
    let uri = "test://items/5000/big";
    let r = rpc(&s, "resources/read", json!({"uri": uri})).await;
    let res = &r["result"];
    assert_eq!(res["resultType"], "input_required", "{r}");
    let st = res["requestState"].clone();
    let r = rpc(
        &s,
        "resources/read",
        json!({"uri": uri, "requestState": st, "inputResponses": {"sure": accept(json!({"ok": true}))}}),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["ttlMs"], 0);
    // the state is bound to the URI
    let r = rpc(
        &s,
        "resources/read",
        json!({"uri": "test://items/5001/big", "requestState": st, "inputResponses": {"sure": accept(json!({"ok": true}))}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602);
    // a client without elicitation: -32021 before any code
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {
        "uri": "test://motd",
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}});
    let before = READS.load(Ordering::SeqCst);
    let r = s.handle(msg, &Principal::anonymous()).await.unwrap();
    assert!(r.error_code().is_none(), "motd needs nothing");
    assert_eq!(READS.load(Ordering::SeqCst), before + 1);
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {
        "uri": uri,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}});
    let r = s.handle(msg, &Principal::anonymous()).await.unwrap();
    assert_eq!(r.error_code(), Some(-32021));
}

#[tokio::test]
async fn completion_of_prompt_arguments_and_template_variables() {
    let s = server(10);
    let r = rpc(
        &s,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "review_changes"}, "argument": {"name": "focus", "value": "s"}}),
    )
    .await;
    assert_eq!(
        r["result"]["completion"],
        json!({"values": ["security", "style", "speed", "structure"], "total": 4, "hasMore": false})
    );
    // at most 100 values, with the total and hasMore; context.arguments reach the completer
    let r = rpc(
        &s,
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "test://items/{id}/{+part}"},
               "argument": {"name": "part", "value": "part"},
               "context": {"arguments": {"id": "9"}}}),
    )
    .await;
    let c = &r["result"]["completion"];
    assert_eq!(c["values"].as_array().unwrap().len(), 100);
    assert_eq!(c["values"][0], "9-part0");
    assert_eq!(c["total"], 150);
    assert_eq!(c["hasMore"], true);
    // an argument without completer: no values; unknown prompt or argument: -32602
    let r = rpc(
        &s,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "review_changes"}, "argument": {"name": "strictness", "value": ""}}),
    )
    .await;
    assert_eq!(r["result"]["completion"]["values"], json!([]));
    for bad in [
        json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "x", "value": ""}}),
        json!({"ref": {"type": "ref/prompt", "name": "review_changes"}, "argument": {"name": "nope", "value": ""}}),
        json!({"ref": {"type": "ref/resource", "uri": "test://items/{id}/{+part}"}, "argument": {"name": "nope", "value": ""}}),
        json!({"ref": {"type": "ref/other"}, "argument": {"name": "x", "value": ""}}),
        json!({"ref": {"type": "ref/prompt", "name": "review_changes"}, "argument": {"name": "focus", "value": "x".repeat(5000)}}),
        json!({"ref": {"type": "ref/prompt", "name": "review_changes"}, "argument": {"name": "focus", "value": ""}, "context": {"arguments": {"a": 1}}}),
    ] {
        let r = rpc(&s, "completion/complete", bad.clone()).await;
        assert_eq!(r["error"]["code"], -32602, "{bad} -> {r}");
    }
}

#[tokio::test]
async fn direct_mode_runs_prompts_and_resources_as_written() {
    use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult};
    use mcp_tool_runtime::testing::ScriptedHost;
    let form = json!({"branch": "main"}).as_object().cloned().unwrap();
    let host = ScriptedHost::new(ClientCapabilities::all())
        .answer("branch/choice", ElicitResult::accept(form));
    let mut cx = mcp_tool_runtime::testing::direct(host);
    let msgs = review_changes(
        &mut cx,
        ReviewArgs {
            focus: "style".into(),
            strictness: None,
        },
        State::new(Branches(vec!["main".into()])),
    )
    .await
    .unwrap();
    assert_eq!(msgs.len(), 2);
    let mut cx = mcp_tool_runtime::testing::direct(ScriptedHost::new(ClientCapabilities::all()));
    let text = item(
        &mut cx,
        ItemVars {
            id: 3,
            part: "x".into(),
        },
    )
    .await
    .unwrap();
    assert!(text.contains("\"id\":3"));
}

#[test]
fn registration_checks_templates_and_completers() {
    #[derive(Deserialize, JsonSchema)]
    struct Wrong {
        #[allow(dead_code)]
        nope: String,
    }

    /// Requires a variable the template does not have.
    #[mcp_resource(template = "test://w/{id}")]
    async fn wrong(_cx: &mut ToolContext, _vars: Wrong) -> Result<String, ToolError> {
        Ok(String::new())
    }

    /// An invalid template.
    #[mcp_resource(template = "test://w/{id*}")]
    async fn invalid(_cx: &mut ToolContext) -> Result<String, ToolError> {
        Ok(String::new())
    }

    for r in [
        Arc::new(wrong::resource()) as Arc<dyn Resource>,
        Arc::new(invalid::resource()),
    ] {
        let e = Server::builder(Implementation::new("x", "0"))
            .resource(r)
            .build()
            .unwrap_err();
        assert!(
            matches!(e, mcp_tool_runtime::RegistrationError::InvalidInfo { .. }),
            "{e}"
        );
    }
    // a prompt taking state the server lacks
    let e = Server::builder(Implementation::new("x", "0"))
        .prompt(review_changes::prompt())
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("Branches"), "{e}");
    assert_eq!(review_changes::prompt().info().rounds.max_rounds, 1);
    assert!(
        review_changes::prompt()
            .info()
            .rounds
            .capabilities
            .elicitation
    );
    let contents = ResourceContents::text("u", None, "t");
    assert_eq!(contents.uri(), "u");
}
