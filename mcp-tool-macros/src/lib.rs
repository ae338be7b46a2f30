//! `#[mcp_tool]`: turns one linear `async fn` with `ask` / `sample` / `roots` suspension points
//! into a resumable state machine implementing `mcp_tool_runtime::Tool`.
//!
//! ```ignore
//! /// Weather for a location, after a GitHub login.
//! #[mcp_tool(max_rounds = 3)]
//! async fn get_weather(cx: &mut ToolContext, args: WeatherArgs) -> Result<Forecast, ToolError> {
//!     let github_login: GitHubLogin = cx.ask("Please provide your GitHub username").await?;
//!     let raw = fetch_forecast(&args.location).await?;   // an ordinary await: not a round
//!     let verdict = cx.sample(Sample::user(format!("Rate: {raw}"))).key("verdict").await?.text()?;
//!     Ok(Forecast { user: github_login.name, verdict })
//! }
//! ```
//!
//! # What the macro generates
//! The function stays as written (it runs in *direct mode* against a `Host`), except that each
//! suspension point whose key is derived gets a hidden `.__mcp_default_key("…")` (or
//! `.__mcp_default_keys(&[…])` for `round`) before its `.await`, so that direct mode asks the
//! host with the keys the state machine sends (see *Suspension points*). Next to it, a
//! braced struct of the same name (`get_weather::tool()`) implements `Tool`: each call of
//! `step` deserializes the previous state into a generic enum declared inside the generated
//! function, runs the code from that stage to the next suspension point, and either carries on
//! (when `round_ready()`) or returns `Step::Suspend` with the variables still needed.
//!
//! # Suspension points
//! `cx.ask::<T>(msg)`, `cx.elicit::<T>(msg)`, `cx.elicit_url(msg, url)`, `cx.sample(s)`,
//! `cx.roots()`, `cx.round((a, b, …))` and `cx.checkpoint()`, optionally followed by builder
//! calls such as `.key("…")`, and then `.await`, where `cx` is the first parameter. Keys come
//! from `.key("…")` or from the name the result is bound to (`let login = …` -> `"login"`,
//! `let (a, b) = cx.round(…)` -> `"a"`, `"b"`, `x = …` -> `"x"`). A key set on the builder
//! value itself (built elsewhere, `fn req() -> Sample { Sample::user(..).key("summary") }`, or
//! computed, `.key(format!("n{i}"))`) wins at run time: the derived key is only the default.
//! Direct mode uses the same keys, with the same precedence, so one host scripted by key
//! answers both modes. Literal keys that clash are a compile error; run-time keys that clash
//! in one round are the runtime's duplicate-key error.
//!
//! A suspension point may be the first thing evaluated in a `let` initializer, an expression
//! statement, an assignment, a `return` or the final expression, in any nesting of `if`,
//! `if let`, `match` arms, `loop`, `while`, `while let`, `for`, blocks and labelled blocks, and
//! in an `if` condition, `match` scrutinee or `for` iterable (hoisted into a `let`). It may not
//! be inside a closure, an `async` block, a match guard, a loop condition, another macro's
//! arguments, after effectful code in the same expression, or inside an `if`/`match`/block
//! whose value is used — except a `let` initializer: `let x = match … { … }`, `let x = loop {
//! … break v; }` and `let x = 'a: { … break 'a v; … }` may suspend inside. A suspension in the
//! `else` block of a `let … else` is rejected (write a `match` whose other arm suspends).
//!
//! # `for` loops
//! A `for` loop that contains a suspension point collects its iterable into a `VecDeque` up
//! front (kept in the state while the loop runs), so the items must be serializable owned
//! values (ranges, `Vec<T>`, …) and the iterable must be finite.
//!
//! # Kept values
//! The variables in scope at a suspension point that are used afterwards are stored in the
//! state and need `Serialize + DeserializeOwned` (no borrows). The arguments are parsed again
//! every round, so they are never stored (and cannot be `mut`).
//!
//! # Options
//! `name`, `title`, `description` (default: the doc comments), `max_rounds` (default: the
//! number of suspension points, or 100 when one is inside a loop), `ttl = "10m"` or seconds,
//! `read_only`, `destructive`, `idempotent`, `open_world` (flags or `= bool`), and `journal`.

mod analyse;
mod errors;
mod expand;
mod fallback;
mod parse;
mod pipeline;

use proc_macro::TokenStream;

/// Compiles a linear async tool function into a resumable MCP tool. See the crate docs.
#[proc_macro_attribute]
pub fn mcp_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    pipeline::expand_tool(attr.into(), item.into()).into()
}

/// Compiles a helper async function with suspension points into a sub-flow that tools and
/// other flows call as `let v = name(cx, args…).await?;`. See the crate docs.
#[proc_macro_attribute]
pub fn mcp_flow(attr: TokenStream, item: TokenStream) -> TokenStream {
    pipeline::expand_flow(attr.into(), item.into()).into()
}
