//! `#[mcp_tool]` and `#[mcp_flow]`: one linear `async fn` with `ask` / `sample` / `roots`
//! suspension points becomes a resumable state machine implementing
//! `mcp_tool_runtime::Tool` (or, for a flow, a sub-machine that tools and flows call).
//!
//! ```ignore
//! /// Weather for a location, after a GitHub login.
//! #[mcp_tool(max_rounds = 3)]
//! async fn get_weather(
//!     cx: &mut ToolContext,
//!     args: WeatherArgs,
//!     forecasts: State<Forecasts>,          // application state, by type, never stored
//! ) -> Result<Forecast, ToolError> {
//!     let login = github_login(cx).await?;  // an #[mcp_flow]: it may suspend too
//!     let raw = forecasts.fetch(&args.location).await?;   // an ordinary await: not a round
//!     let verdict = cx.sample(Sample::user(format!("Rate: {raw}"))).key("verdict").await?.text()?;
//!     Ok(Forecast { user: login, verdict })
//! }
//! ```
//!
//! # What the macro generates
//! The function stays as written (it runs in *direct mode* against a `Host`), except that each
//! suspension point whose key is derived gets a hidden `.__mcp_default_key("…")` (or
//! `.__mcp_default_keys(&[…])` for `round`) before its `.await`, and each flow call gets its
//! call-site name, so that direct mode asks the host with the keys the state machine sends (see
//! *Suspension points*). Next to it, a braced struct of the same name and visibility
//! (`get_weather::tool()`) implements `Tool`: each call of `step` deserializes the previous
//! state into a generic enum declared inside the generated function, runs the code from that
//! stage to the next suspension point, and either carries on (when `round_ready()`) or returns
//! `Step::Suspend` with the variables still needed. `mcp-tool-macros/tests/expand/` holds the
//! expansions of small examples.
//!
//! # Signature
//! `async fn name(cx: &mut ToolContext, args: Args, s: State<S>, …) -> Result<T, E>`:
//! - `cx` first; then at most one arguments type (`Deserialize + JsonSchema`: the
//!   `inputSchema`), parsed again every round (never stored, cannot be `mut`); then any number
//!   of parameters taken from the context every round through `mcp_tool_runtime::FromContext`,
//!   such as `State<T>` (the server's application state, given with `ServerBuilder::state`; a
//!   missing type fails `build()`). Recognised **by position, then checked by type**: the
//!   parameter right after `cx` is the arguments unless its type is spelled `State<…>` (then
//!   there are none); every later one must implement `FromContext`, whatever its name (an alias
//!   of `State`, a full path, a type of your own), else a compile error names the trait. A
//!   flow's parameters are its caller's values, except those spelled `State<…>`.
//! - The return type is `Result<T, E>` or any alias of it (`anyhow::Result<T>`), recognised
//!   through traits: `T` is `String` (text), `CallToolResult` (as is) or any `Serialize +
//!   JsonSchema` type (`structuredContent` and `outputSchema`); `E: From<ToolError>` (`ToolError`,
//!   `anyhow::Error`, a boxed error, your own), because the `?` after `cx.ask(..).await` converts
//!   into it; a `ToolError` inside an `anyhow::Error` or a boxed error keeps its meaning.
//!
//! # Suspension points
//! `cx.ask::<T>(msg)`, `cx.elicit::<T>(msg)`, `cx.elicit_url(msg, url)`, `cx.sample(s)`,
//! `cx.roots()`, `cx.round((a, b, …))` and `cx.checkpoint()`, optionally followed by builder
//! calls such as `.key("…")`, and then `.await`, where `cx` is the first parameter; and flow
//! calls `flow_fn(cx, args…).await` (optionally `.key(site)` before `.await`).
//!
//! **Keys** come from `.key("…")`, else from the name the result is bound to (`let login = …`
//! -> `"login"`, `let (a, b) = cx.round(…)` -> `"a"`, `"b"`, `x = …` -> `"x"`), else — for a
//! point that nothing names, such as an `if` condition or an argument of a call — from the
//! method and its ordinal among that method's points in source order (`"ask_1"`, `"ask_2"`,
//! `"sample_1"`): stable across rounds and across builds of the same code. A written or bound
//! key equal to an ordinal one is a compile error. A key set on the builder value itself
//! (built elsewhere, `fn req() -> Sample { Sample::user(..).key("summary") }`, or computed,
//! `.key(format!("n{i}"))`) wins at run time: the derived key is only the default. Direct mode
//! uses the same keys, with the same precedence, so one host scripted by key answers both
//! modes. Literal keys that clash are a compile error; run-time keys that clash in one round
//! are the runtime's duplicate-key error. A key cannot contain `/`.
//!
//! **Where** a suspension point may sit: wherever Rust lets `.await` stand, in Rust's
//! evaluation order. The body is first brought to A-normal form: what runs before a suspension
//! point in the same expression (operands, arguments, the receiver) is bound to a temporary
//! and runs once, in the round before, its value kept in the state when it is used after;
//! `&&`/`||` keep their short-circuit (the right side asks only when evaluated);
//! value-producing `if`/`match`/blocks/loops in any position, `break value` from any loop,
//! `while` and `else if` conditions, `match` scrutinees, `for` iterables and `let … else`
//! blocks may suspend; a variable declared again inside a suspending branch is renamed so the
//! outer one stays intact. `let x;` assigned later, in branches or after a suspension point,
//! works. Refused, each with a spanned message: a closure or an `async` block (not part of the
//! tool's state machine), another macro's arguments (its expansion is not visible), a match
//! guard (it runs while the arm's bindings borrow the scrutinee), an `unsafe` block (its safety
//! argument holds for one uninterrupted run), a `let` chain, the place an assignment writes to,
//! a kept value that does not serialize, a kept borrow, and the `cx.round((…))` shapes above.
//!
//! # Flows
//! `#[mcp_flow] async fn name(cx: &mut ToolContext, p: P, …) -> Result<T, E>` is written like a
//! tool (its parameters may be borrows when they are not used after a suspension point, and
//! `State<T>` parameters are taken from the context) and called as `name(cx, p).await` from
//! tools and other flows, in branches and loops. Its state is nested in the caller's; its keys
//! are namespaced by the call site (`site/key`: the binding's name, else the assignment target,
//! else the flow's name, `_2`, `_3` for repeats, or `.key(site)` on the call); its capabilities,
//! state types, schema checks and layout count as the calling tool's. Awaiting a function that
//! takes the context but is not a flow is a compile error at the call, saying to add
//! `#[mcp_flow]`. Awaited outside a transform, a flow call runs the function as written.
//!
//! # Kept values
//! The variables in scope at a suspension point that are used afterwards are stored in the
//! state and need `Serialize + DeserializeOwned` (no borrows; one error at the variable
//! otherwise). Borrows of the arguments are not stored but bound again from them (the arguments
//! arrive again, checked against the sealed digest): `let name = &args.name;`,
//! `args.name.as_str()`, and `for` loops over `&args.items` or `args.items.iter()` (which keep
//! only their position). So do `for` loops over a borrow of a local declared without `mut`
//! (`&kids.picks`, `kids.iter().enumerate()`): the local is kept, the loop keeps its position
//! and binds its item again after a suspension point. A `for` loop over anything else collects its iterable into a
//! `VecDeque` kept in the state, so its items must be serializable owned values and the
//! iterable finite.
//!
//! # Options
//! `name`, `title`, `description` (default: the doc comments), `max_rounds` (default: the
//! number of suspension points and those of the flows called, or 100 when one is inside a
//! loop), `ttl = "10m"` or seconds, `read_only`, `destructive`, `idempotent`, `open_world`
//! (flags or `= bool`), `journal` and `early_answers` (offer answers sent on a first call).
//! `once` (tools only): single use — every state the tool issues is claimed in the server's
//! ledger when presented, and a replay of it gets the first presentation's stored response
//! instead of a second run (`mcp_tool_runtime::ledger`; not with `task`).
//! `#[mcp_flow]` takes no options but `crate`.
//!
//! `crate = "path"` (on every attribute): the path of `mcp_tool_runtime` for a crate that
//! re-exports it, e.g. `crate = "::my_framework::mcp"` when `my_framework` has `pub use
//! mcp_tool_runtime as mcp;` (default `::mcp_tool_runtime`). Generated code names only that
//! root, never the user's `serde`, `serde_json` or `schemars`, so depending on the runtime
//! (or the framework) alone is enough.
//!
//! # Versions
//! Generated code names the runtime's private module by this crate's version,
//! `<root>::__private::v0_1_0`, and the runtime pins this crate exactly. A pair of another
//! runtime and these macros (this crate named directly in a `Cargo.toml` at another version)
//! fails to compile with "no `v0_1_0` in `…::__private`": use the macros the runtime
//! re-exports (`mcp_tool_runtime::mcp_tool`, …), which always match.

mod analyse;
mod errors;
mod expand;
mod fallback;
mod parse;
mod pipeline;
mod rt;

use proc_macro::TokenStream;

/// Compiles a linear async tool function into a resumable MCP tool. See the crate docs.
#[proc_macro_attribute]
pub fn mcp_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    pipeline::expand_tool(attr.into(), item.into()).into()
}

/// Compiles a linear async prompt function (it may ask before it answers) into an MCP prompt.
/// See the crate docs.
#[proc_macro_attribute]
pub fn mcp_prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    pipeline::expand_prompt(attr.into(), item.into()).into()
}

/// Compiles a linear async resource function (it may ask before it answers) into an MCP
/// resource at a fixed URI or an RFC 6570 URI template. See the crate docs.
#[proc_macro_attribute]
pub fn mcp_resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    pipeline::expand_resource(attr.into(), item.into()).into()
}

/// Compiles a helper async function with suspension points into a sub-flow that tools and
/// other flows call as `let v = name(cx, args…).await?;`. See the crate docs.
#[proc_macro_attribute]
pub fn mcp_flow(attr: TokenStream, item: TokenStream) -> TokenStream {
    pipeline::expand_flow(attr.into(), item.into()).into()
}
