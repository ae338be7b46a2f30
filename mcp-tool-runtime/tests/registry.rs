//! The run-time registry (`ServerBuilder::dynamic`, `Server::registry`): tools, prompts and
//! resources added and removed after `build()` are served at once, refused with the
//! builder's own errors (the server unchanged), announced on the hub of changes, declared
//! honestly in the capabilities, and never make a stale cursor or a retry of a removed
//! tool panic or silently skip.

use std::time::Duration;

use mcp_tool_runtime::State;
use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::server::{Server, WeakRegistry};
use mcp_tool_runtime::store::Change;
use mcp_tool_runtime::{
    Principal, RegistrationError, ToolContext, ToolError, mcp_prompt, mcp_resource, mcp_tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod support;

use support::{call_params, meta, request, resume, send_as};

/// A first tool.
#[mcp_tool]
async fn alpha(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("alpha".into())
}

/// A second tool.
#[mcp_tool]
async fn beta(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("beta".into())
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// Asks a name, then greets.
#[mcp_tool]
async fn asker(cx: &mut ToolContext) -> Result<String, ToolError> {
    let n: Name = cx.ask("Your name?").await?;
    Ok(format!("Hello, {}", n.name))
}

/// Something no builder was given.
struct Missing;

/// Takes state the server does not have.
#[mcp_tool]
async fn needs_state(_cx: &mut ToolContext, _m: State<Missing>) -> Result<String, ToolError> {
    Ok("never".into())
}

/// Has a name not served yet, and a form outside the elicitation subset.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Nested {
    inner: Name,
}

/// Asks for a nested object: its form is refused at registration.
#[mcp_tool]
async fn bad_form(cx: &mut ToolContext) -> Result<String, ToolError> {
    let n: Nested = cx.ask("Nested?").await?;
    Ok(n.inner.name)
}

/// A prompt.
#[mcp_prompt]
async fn hello_prompt(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("hello".into())
}

/// A resource.
#[mcp_resource(uri = "mem://one", name = "one")]
async fn one(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("one".into())
}

/// Removes `alpha` from the server it runs on.
#[mcp_tool]
async fn remover(_cx: &mut ToolContext, r: State<WeakRegistry>) -> Result<String, ToolError> {
    let r = r.upgrade().ok_or_else(|| ToolError::internal("gone"))?;
    Ok(r.remove_tool("alpha").to_string())
}

fn dynamic() -> Server {
    Server::builder(Implementation::new("reg", "1"))
        .dynamic(true)
        .page_size(1)
        .tool(alpha::tool())
        .tool(asker::tool())
        .tool(remover::tool())
        .build()
        .unwrap()
}

async fn call(server: &Server, id: i64, params: Value) -> Value {
    send_as(
        server,
        &Principal::anonymous(),
        request(id, "tools/call", params),
    )
    .await
    .to_value()
}

async fn list(server: &Server, method: &str, cursor: Option<&str>) -> Value {
    let mut params = json!({"_meta": meta(json!({}))});
    if let Some(c) = cursor {
        params["cursor"] = json!(c);
    }
    send_as(server, &Principal::anonymous(), request(1, method, params))
        .await
        .to_value()
}

/// Every tool name, following cursors.
async fn tool_names(server: &Server) -> Vec<String> {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = list(server, "tools/list", cursor.as_deref()).await;
        for t in page["result"]["tools"].as_array().unwrap() {
            names.push(t["name"].as_str().unwrap().to_owned());
        }
        match page["result"]["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return names,
        }
    }
}

#[tokio::test]
async fn tools_prompts_and_resources_come_and_go_and_each_change_is_announced() {
    let server = dynamic();
    let registry = server.registry().expect("dynamic");
    let mut changes = server.changes().subscribe();

    registry.add_tool(beta::tool()).unwrap();
    assert_eq!(*changes.try_recv().unwrap(), Change::ToolsListChanged);
    assert_eq!(
        tool_names(&server).await,
        ["alpha", "asker", "remover", "beta"]
    );
    let r = call(
        &server,
        2,
        call_params("beta", json!({}), meta(json!({})), json!({})),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "beta", "{r}");

    assert!(registry.remove_tool("beta"));
    assert_eq!(*changes.try_recv().unwrap(), Change::ToolsListChanged);
    assert!(!registry.remove_tool("beta"), "already gone: no change");
    assert!(
        changes.try_recv().is_err(),
        "nothing happened, nothing announced"
    );
    let r = call(
        &server,
        3,
        call_params("beta", json!({}), meta(json!({})), json!({})),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Unknown tool")
    );

    registry.add_prompt(hello_prompt::prompt()).unwrap();
    assert_eq!(*changes.try_recv().unwrap(), Change::PromptsListChanged);
    let p = list(&server, "prompts/list", None).await;
    assert_eq!(p["result"]["prompts"][0]["name"], "hello_prompt");
    assert!(registry.remove_prompt("hello_prompt"));
    assert_eq!(*changes.try_recv().unwrap(), Change::PromptsListChanged);

    registry.add_resource(one::resource()).unwrap();
    assert_eq!(*changes.try_recv().unwrap(), Change::ResourcesListChanged);
    assert!(server.serves_resource("mem://one"));
    assert!(registry.remove_resource("mem://one"));
    assert_eq!(*changes.try_recv().unwrap(), Change::ResourcesListChanged);
    assert!(!server.serves_resource("mem://one"));
    assert_eq!(registry.generation(), 6);
}

#[tokio::test]
async fn a_refused_addition_is_the_builders_error_and_changes_nothing() {
    let server = dynamic();
    let registry = server.registry().unwrap();
    let mut changes = server.changes().subscribe();
    let before = tool_names(&server).await;

    // the same errors as the builder's, for the same tools
    let built = |t: std::sync::Arc<dyn mcp_tool_runtime::Tool>| {
        Server::builder(Implementation::new("b", "1"))
            .tool(t)
            .build()
            .unwrap_err()
    };
    let dup = registry.add_tool(alpha::tool()).unwrap_err();
    assert_eq!(dup, RegistrationError::DuplicateTool("alpha".into()));
    let state = registry.add_tool(needs_state::tool()).unwrap_err();
    assert!(
        matches!(state, RegistrationError::MissingState { .. }),
        "{state:?}"
    );
    assert_eq!(state, built(std::sync::Arc::new(needs_state::tool())));
    let form = registry.add_tool(bad_form::tool()).unwrap_err();
    assert!(matches!(form, RegistrationError::Schema { .. }), "{form:?}");
    assert_eq!(form, built(std::sync::Arc::new(bad_form::tool())));

    assert_eq!(tool_names(&server).await, before);
    assert!(changes.try_recv().is_err(), "a refusal announces nothing");
    assert_eq!(registry.generation(), 0);
}

#[tokio::test]
async fn capabilities_say_listchanged_only_when_the_lists_can_change() {
    let caps = |s: &Server| serde_json::to_value(s.capabilities()).unwrap();
    let dynamic = Server::builder(Implementation::new("d", "1"))
        .dynamic(true)
        .build()
        .unwrap();
    // a legacy session hears list changes (GET stream, stdout) and serves subscriptions
    let session = serde_json::to_value(dynamic.session_capabilities()).unwrap();
    assert_eq!(session["tools"]["listChanged"], true, "{session}");
    assert_eq!(session["prompts"]["listChanged"], true, "{session}");
    assert_eq!(session["resources"]["listChanged"], true, "{session}");
    assert_eq!(session["resources"]["subscribe"], true, "{session}");
    // a modern client hears them on a subscriptions/listen stream (`resourceSubscriptions`
    // for resource updates)
    let d = caps(&dynamic);
    for list in ["tools", "prompts", "resources"] {
        assert!(
            d[list].is_object(),
            "a dynamic server declares {list} even while empty"
        );
        assert_eq!(d[list]["listChanged"], json!(true), "{d}");
    }
    assert_eq!(d["resources"]["subscribe"], json!(true), "{d}");

    let fixed = Server::builder(Implementation::new("s", "1"))
        .tool(alpha::tool())
        .build()
        .unwrap();
    assert!(
        fixed.registry().is_none(),
        "a static server hands out no registry"
    );
    let s = caps(&fixed);
    assert!(s["tools"].get("listChanged").is_none(), "{s}");
    assert!(
        s.get("prompts").is_none() && s.get("resources").is_none(),
        "{s}"
    );
}

#[tokio::test]
async fn a_cursor_from_before_a_change_is_refused_clearly() {
    let server = dynamic();
    let registry = server.registry().unwrap();
    let first = list(&server, "tools/list", None).await;
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_owned();
    // still valid while nothing changed
    let second = list(&server, "tools/list", Some(&cursor)).await;
    assert_eq!(second["result"]["tools"][0]["name"], "asker");

    registry.add_tool(beta::tool()).unwrap();
    let stale = list(&server, "tools/list", Some(&cursor)).await;
    assert_eq!(stale["error"]["code"], -32602, "{stale}");
    assert!(
        stale["error"]["message"]
            .as_str()
            .unwrap()
            .contains("list again from the start"),
        "{stale}"
    );
    // from the start again, the whole new list
    assert_eq!(
        tool_names(&server).await,
        ["alpha", "asker", "remover", "beta"]
    );
}

#[tokio::test]
async fn a_retry_of_a_removed_tool_fails_cleanly() {
    let server = dynamic();
    let registry = server.registry().unwrap();
    let caps = json!({"elicitation": {"form": {}}});
    let r = call(
        &server,
        1,
        call_params("asker", json!({}), meta(caps.clone()), json!({})),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let state = r["result"]["requestState"].clone();
    let key = r["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    assert!(registry.remove_tool("asker"));
    let answers = json!({ key: {"action": "accept", "content": {"name": "Ada"}} });
    let retry = call(
        &server,
        2,
        call_params("asker", json!({}), meta(caps), resume(state, answers)),
    )
    .await;
    assert_eq!(retry["error"]["code"], -32602, "{retry}");
    assert!(
        retry["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Unknown tool")
    );
}

#[tokio::test]
async fn a_tool_can_change_its_own_server_without_keeping_it_alive() {
    let server = dynamic();
    let r = call(
        &server,
        1,
        call_params("remover", json!({}), meta(json!({})), json!({})),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "true", "{r}");
    assert_eq!(tool_names(&server).await, ["asker", "remover"]);
    // the WeakRegistry in the server's state does not keep it alive
    let weak = server.registry().unwrap().downgrade();
    drop(server);
    assert!(weak.upgrade().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_changes_while_lists_are_read_never_panic_or_tear() {
    let server = dynamic();
    let registry = server.registry().unwrap();
    // however the two tasks are scheduled, lists are read while the writer writes: it starts
    // after the first list, and halfway waits for one more
    let (read, mut reads_seen) = tokio::sync::watch::channel(0usize);
    let writer = tokio::spawn(async move {
        for i in 0..200 {
            if i == 0 || i == 100 {
                let seen = *reads_seen.borrow();
                reads_seen.wait_for(|&n| n > seen).await.unwrap();
            }
            registry.add_tool(beta::tool()).unwrap();
            tokio::task::yield_now().await;
            assert!(registry.remove_tool("beta"));
        }
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut reads = 0;
    while !writer.is_finished() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the writer never finished"
        );
        let page = list(&server, "tools/list", None).await;
        let name = page["result"]["tools"][0]["name"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(name, "alpha");
        // every list is one whole snapshot: alpha, asker, remover, then beta or not
        let total = page["result"]["tools"].as_array().unwrap().len();
        assert_eq!(total, 1, "page size 1");
        reads += 1;
        read.send_replace(reads);
        tokio::task::yield_now().await;
    }
    writer.await.unwrap();
}
