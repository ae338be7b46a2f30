//! `crate = "…"`: a framework re-exports the runtime (`pub use mcp_tool_runtime as mcp;`) and
//! its users write every attribute with `crate = "crate::framework::mcp"`. The user code below
//! names the runtime, serde, serde_json and schemars only through that re-export (the derives
//! included, with `#[serde(crate = …)]` / `#[schemars(crate = …)]`); a tool, a flow it calls,
//! a prompt and a resource are driven through their rounds. That generated code names nothing
//! but the given root is checked on the expansion itself (`tests/expand.rs`,
//! `crate_path_reaches_everything_through_the_root`).

/// What a framework built on the runtime exposes.
mod framework {
    pub use mcp_tool_runtime as mcp;
}

/// A user of the framework: no `mcp_tool_runtime`, `serde` or `schemars` path below.
mod user {
    use crate::framework::mcp::schemars::JsonSchema;
    use crate::framework::mcp::serde::{Deserialize, Serialize};
    use crate::framework::mcp::{
        State, ToolContext, ToolError, mcp_flow, mcp_prompt, mcp_resource, mcp_tool,
    };

    /// The greeting's arguments.
    #[derive(Deserialize, JsonSchema)]
    #[serde(crate = "crate::framework::mcp::serde")]
    #[schemars(crate = "crate::framework::mcp::schemars")]
    pub struct Greeting {
        /// The greeting word.
        pub greeting: String,
    }

    /// An elicitation form.
    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(crate = "crate::framework::mcp::serde")]
    #[schemars(crate = "crate::framework::mcp::schemars")]
    pub struct Who {
        /// Your name.
        pub name: String,
    }

    /// Application state: a salutation suffix.
    pub struct Punctuation(pub &'static str);

    /// Asks for a name.
    #[mcp_flow(crate = "crate::framework::mcp")]
    pub async fn ask_name(cx: &mut ToolContext) -> Result<String, ToolError> {
        let who: Who = cx.ask("Your name?").await?;
        Ok(who.name)
    }

    /// Greets by name.
    #[mcp_tool(crate = "crate::framework::mcp")]
    pub async fn greet(
        cx: &mut ToolContext,
        args: Greeting,
        mark: State<Punctuation>,
    ) -> Result<String, ToolError> {
        let name = ask_name(cx).await?;
        Ok(format!("{}, {name}{}", args.greeting, mark.0))
    }

    /// A prompt that asks first.
    #[mcp_prompt(crate = "crate::framework::mcp")]
    pub async fn introduce(cx: &mut ToolContext) -> Result<String, ToolError> {
        let name = ask_name(cx).await?;
        Ok(format!("Introduce {name}."))
    }

    /// A fixed resource.
    #[mcp_resource(crate = "crate::framework::mcp", uri = "test://motto")]
    pub async fn motto(_cx: &mut ToolContext) -> Result<String, ToolError> {
        Ok("Be brief.".into())
    }
}

use framework::mcp::protocol::{ClientCapabilities, ElicitResult, Implementation};
use framework::mcp::serde_json::{Value, json};
use framework::mcp::testing::ScriptedHost;
use mcp_tool_client::{Driver, InProcessTransport};

fn driver() -> Driver<InProcessTransport, ScriptedHost> {
    let server = framework::mcp::Server::builder(Implementation::new("framework", "0"))
        .state(user::Punctuation("!"))
        .tool(user::greet::tool())
        .prompt(user::introduce::prompt())
        .resource(user::motto::resource())
        .build()
        .expect("builds");
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation()).with_fallback(
        |_key, _request| {
            let form = json!({"name": "Ada"}).as_object().cloned().expect("object");
            Ok(ElicitResult::accept(form).into())
        },
    );
    Driver::new(InProcessTransport::new(server), host)
}

#[tokio::test]
async fn a_tool_and_its_flow_run_through_a_reexported_runtime() {
    let mut d = driver();
    let out = d
        .call_tool("greet", json!({"greeting": "Hello"}))
        .await
        .expect("completes");
    assert_eq!(out.rounds, 2, "input_required, then complete");
    assert_eq!(out.text(), "Hello, Ada!");
}

#[tokio::test]
async fn a_prompt_and_a_resource_run_through_a_reexported_runtime() {
    let mut d = driver();
    let out = d.get_prompt("introduce", json!({})).await.expect("prompt");
    assert_eq!(out.rounds, 2);
    let text = out.result["messages"][0]["content"]["text"].clone();
    assert_eq!(text, Value::from("Introduce Ada."));
    let out = d.read_resource("test://motto").await.expect("resource");
    assert_eq!(out.result["contents"][0]["text"], "Be brief.");
}
