//! Cost growth (issue 12, item 4): a 20-question tool, `collect`, in three versions, and a
//! tool that keeps N bytes or N items across one round, `keep`.
//!
//! ```text
//! cost_growth round --impl flat|all|replay --round K --calls N
//!     # request K of one `collect` call handled N times in process (`Server::handle_text`),
//!     # for instruction counts under callgrind (scripts/cost_growth.sh: run with N and
//!     # with 0, subtract, divide)
//! cost_growth sizes
//!     # `STATE <impl> <k> <bytes>`: the requestState returned by request k of `collect`;
//!     # `KEEP <kind> <n> <bytes, compression off> <bytes, compression on>`: the state `keep`
//!     # seals after its one question, keeping n bytes of text / of random characters, or
//!     # n numbers
//! ```
//!
//! `collect` asks [`QUESTIONS`] form elicitations in a loop, one per round (`Note k of 20?`,
//! answered with a 40-character note), and returns how many notes and the longest one:
//!
//! - `flat`: `#[mcp_tool]`, keeps the count and the longest note so far (constant state);
//! - `all`: `#[mcp_tool]`, keeps every note in a `Vec` (state grows with the round);
//! - `replay`: hand-written, the way an SDK whose resolvers re-run the tool from the top
//!   works: the state is a journal of every earlier answer as received, and on each round
//!   the code runs again from question 0, re-deriving every earlier question (the request,
//!   schema included) and re-parsing its journaled answer, up to the first question without
//!   an answer.
//!
//! All three return the same result (checked before measuring). The sealing key is fixed
//! (measurement only).

use mcp_tool_runtime::manual::Reentrant;
use mcp_tool_runtime::server::NotificationSink;
use std::hint::black_box;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use clap::{Parser, Subcommand, ValueEnum};
use mcp_tool_runtime::protocol::{Capability, ElicitAction, ElicitResult, Implementation};
use mcp_tool_runtime::requests::elicitation_schema;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::{
    Principal, RegistrationError, Server, Tool, ToolContext, ToolError, ToolInfo,
    manual::{BoxFuture, Step, output_result, parse_args, parse_state},
    mcp_tool,
    requests::Ask,
};
use rand::distributions::Alphanumeric;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// Questions `collect` asks, one per round.
const QUESTIONS: u32 = 20;

/// Measure the cost of a 20-round tool by round, and the state size against kept data.
#[derive(Parser, Debug)]
#[command(name = "cost_growth")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Handle request `--round` of one `collect` call `--calls` times in process.
    Round {
        /// Which version of `collect`.
        #[arg(long = "impl", value_enum)]
        which: Impl,
        /// The request: 0 (asks note 0) to 20 (completes).
        #[arg(long)]
        round: usize,
        /// How many times.
        #[arg(long)]
        calls: u64,
    },
    /// Print the state sizes of `collect` by round and of `keep` by kept data.
    Sizes,
}

/// The versions of `collect`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Impl {
    /// `#[mcp_tool]`, keeping a count and the longest note.
    Flat,
    /// `#[mcp_tool]`, keeping every note.
    All,
    /// Hand-written, re-running every earlier round from a journal.
    Replay,
}

/// The arguments of `collect`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CollectArgs {
    /// A topic, quoted in every question.
    pub topic: String,
}

/// The form of every question.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Entry {
    /// A note.
    pub note: String,
}

/// The result of `collect`.
#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Summary {
    /// Notes collected.
    pub count: u32,
    /// The longest (the first of equal length).
    pub longest: String,
}

fn question(topic: &str, i: u32) -> String {
    format!("Note {i} of {QUESTIONS} about {topic}?")
}

/// Asks for 20 notes, one per round; keeps only the count and the longest.
#[mcp_tool(max_rounds = 20)]
pub async fn collect_flat(cx: &mut ToolContext, args: CollectArgs) -> Result<Summary, ToolError> {
    let mut count = 0u32;
    let mut longest = String::new();
    while count < QUESTIONS {
        let entry: Entry = cx.ask(question(&args.topic, count)).await?;
        if entry.note.len() > longest.len() {
            longest = entry.note;
        }
        count += 1;
    }
    Ok(Summary { count, longest })
}

/// Asks for 20 notes, one per round; keeps every note.
#[mcp_tool(max_rounds = 20)]
pub async fn collect_all(cx: &mut ToolContext, args: CollectArgs) -> Result<Summary, ToolError> {
    let mut notes: Vec<String> = Vec::new();
    while (notes.len() as u32) < QUESTIONS {
        let entry: Entry = cx.ask(question(&args.topic, notes.len() as u32)).await?;
        notes.push(entry.note);
    }
    let mut longest = String::new();
    for note in &notes {
        if note.len() > longest.len() {
            longest = note.clone();
        }
    }
    Ok(Summary {
        count: notes.len() as u32,
        longest,
    })
}

/// The replay version's state: every answer so far, as received.
#[derive(Default, Serialize, Deserialize)]
struct Journal {
    answers: Vec<Value>,
}

/// `collect` re-run from the top on every round, answering earlier questions from a journal
/// carried in the state (what an SDK's resolvers do).
struct CollectReplay;

impl CollectReplay {
    fn run(
        &self,
        cx: &mut ToolContext,
        args: &RawValue,
        state: Option<&RawValue>,
    ) -> Result<Step, ToolError> {
        let args: CollectArgs = parse_args(args)?;
        let mut journal: Journal = state.map(parse_state).transpose()?.unwrap_or_default();
        let mut count = 0u32;
        let mut longest = String::new();
        while count < QUESTIONS {
            // the code up to this question runs again: the request is derived again …
            let request = Ask::<Entry>::new(question(&args.topic, count)).into_request()?;
            let i = count as usize;
            // … and answered from the journal, or from this round's answer (journaled), or
            // asked
            if i == journal.answers.len() {
                match cx.take_response("entry") {
                    Some(answer) => journal.answers.push(serde_json::to_value(answer)?),
                    None => {
                        cx.request("entry", request)?;
                        return Step::suspend(&journal);
                    }
                }
            }
            black_box(request);
            let answer: ElicitResult = serde_json::from_value(journal.answers[i].clone())
                .map_err(|e| ToolError::invalid_input("entry", e))?;
            let entry: Entry = match (answer.action, answer.content) {
                (ElicitAction::Accept, Some(content)) => {
                    serde_json::from_value(Value::Object(content))
                        .map_err(|e| ToolError::invalid_input("entry", e))?
                }
                _ => return Err(ToolError::failed("declined")),
            };
            if entry.note.len() > longest.len() {
                longest = entry.note;
            }
            count += 1;
        }
        Ok(Step::Complete(output_result(&Summary { count, longest })?))
    }
}

impl Tool for CollectReplay {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("collect_replay")
            .description("Asks for 20 notes, one per round; re-runs every earlier round.")
            .input_schema_of::<CollectArgs>()
            .needs(Capability::Elicitation)
            .max_rounds(QUESTIONS)
            .layout("collect_replay/v1")
    }

    fn validate(&self) -> Result<(), RegistrationError> {
        elicitation_schema::<Entry>()
            .map(drop)
            .map_err(|error| RegistrationError::Schema {
                tool: "collect_replay".into(),
                key: "entry".into(),
                error,
            })
    }

    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move { self.run(cx, args, state) })
    }
}

/// The arguments of `keep`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct KeepArgs {
    /// `text` (prose-like words), `random` (random letters and digits) or `items` (numbers).
    pub kind: String,
    /// Bytes of text, or numbers.
    pub n: usize,
}

/// What `keep` returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Kept {
    /// Bytes of text kept.
    pub text_bytes: usize,
    /// Numbers kept.
    pub items: usize,
    /// The answer.
    pub note: String,
}

/// `n` bytes of words from a vocabulary of 32 (compresses like prose), or of random letters
/// and digits (does not compress), drawn by a generator seeded with `seed`.
fn text(seed: u64, random: bool, n: usize) -> String {
    const WORDS: [&str; 32] = [
        "state", "round", "seal", "answer", "request", "tool", "model", "client", "server",
        "replica", "key", "token", "layout", "journal", "stage", "flow", "sample", "elicit",
        "roots", "file", "repo", "listing", "summary", "limit", "bytes", "digest", "binding",
        "nonce", "cipher", "buffer", "stream", "header",
    ];
    let mut rng = StdRng::seed_from_u64(seed);
    if random {
        return (&mut rng)
            .sample_iter(Alphanumeric)
            .take(n)
            .map(char::from)
            .collect();
    }
    let mut out = String::with_capacity(n + 8);
    while out.len() < n {
        out.push_str(WORDS[rng.gen_range(0..WORDS.len())]);
        out.push(' ');
    }
    out.truncate(n);
    out
}

/// Keeps `n` bytes of text or `n` numbers across one question.
#[mcp_tool(max_rounds = 1)]
pub async fn keep(cx: &mut ToolContext, args: KeepArgs) -> Result<Kept, ToolError> {
    let mut kept_text = String::new();
    let mut kept_items: Vec<u64> = Vec::new();
    match args.kind.as_str() {
        "text" => kept_text = text(1, false, args.n),
        "random" => kept_text = text(1, true, args.n),
        "items" => {
            let mut rng = StdRng::seed_from_u64(0x2545_F491_4F6C_DD1D);
            kept_items = (0..args.n).map(|_| rng.r#gen()).collect();
        }
        _ => return Err(ToolError::failed("kind: text, random or items")),
    }
    let entry: Entry = cx.ask("Go on?").await?;
    Ok(Kept {
        text_bytes: kept_text.len(),
        items: kept_items.len(),
        note: entry.note,
    })
}

fn server(tool: Box<dyn Tool>, compress: bool) -> anyhow::Result<Server> {
    let sealer = Sealer::new(
        Keyring::new("k1", b"bench-key-0123456789abcdef-0123456789".to_vec())?,
        SealConfig::default()
            .with_ttl(Duration::from_secs(3600))
            .with_compress(compress)
            // measure past the default 64 KiB cap (the script marks what exceeds it)
            .with_max_len(16 << 20),
    );
    Ok(Server::builder(Implementation::new("cost", "0"))
        .sealer(sealer)
        .tool(tool)
        .build()?)
}

fn collect_server(which: Impl) -> anyhow::Result<(Server, &'static str)> {
    Ok(match which {
        Impl::Flat => (
            server(Box::new(collect_flat::tool()), true)?,
            "collect_flat",
        ),
        Impl::All => (server(Box::new(collect_all::tool()), true)?, "collect_all"),
        Impl::Replay => (server(Box::new(CollectReplay), true)?, "collect_replay"),
    })
}

fn request(
    id: u64,
    tool: &str,
    args: &Value,
    answers: Option<Value>,
    state: Option<&str>,
) -> String {
    let mut params = json!({"name": tool, "arguments": args, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }});
    if let Some(a) = answers {
        params["inputResponses"] = a;
    }
    if let Some(s) = state {
        params["requestState"] = json!(s);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// The note answering question `i`: 40 random letters and digits (41 for note 7, the
/// longest).
fn note(i: usize) -> String {
    text(i as u64 + 2, true, if i == 7 { 41 } else { 40 })
}

/// Drives one call; returns every request line and the final result.
async fn drive(server: &Server, tool: &str, args: Value) -> anyhow::Result<(Vec<String>, Value)> {
    let anyone = Principal::anonymous();
    let mut lines = vec![request(1, tool, &args, None, None)];
    let mut asked = 0;
    loop {
        let line = lines.last().context("a request")?.clone();
        let resp = server
            .handle_text(&line, &anyone, NotificationSink::none())
            .await
            .context("no response")?
            .into_response()
            .to_value();
        let result = &resp["result"];
        if result["resultType"] == "complete" {
            ensure!(result["isError"] != true, "tool error: {resp}");
            return Ok((lines, result["structuredContent"].clone()));
        }
        let reqs = result["inputRequests"]
            .as_object()
            .with_context(|| format!("inputRequests in {resp}"))?;
        let mut answers = serde_json::Map::new();
        for (k, r) in reqs {
            if r["method"] != "elicitation/create" {
                bail!("unexpected input request {r}");
            }
            answers.insert(
                k.clone(),
                json!({"action": "accept", "content": {"note": note(asked)}}),
            );
            asked += 1;
        }
        lines.push(request(
            lines.len() as u64 + 1,
            tool,
            &args,
            Some(Value::Object(answers)),
            result["requestState"].as_str(),
        ));
    }
}

fn state_len(line: &str) -> anyhow::Result<usize> {
    let v: Value = serde_json::from_str(line)?;
    Ok(v["params"]["requestState"].as_str().map_or(0, str::len))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let topic = json!({"topic": "cost growth"});
    match Cli::parse().command {
        Command::Round {
            which,
            round,
            calls,
        } => {
            let (server, tool) = collect_server(which)?;
            let (lines, _) = drive(&server, tool, topic).await?;
            let line = lines.get(round).context("--round is 0 to 20")?;
            let anyone = Principal::anonymous();
            for _ in 0..calls {
                let resp = server
                    .handle_text(black_box(line), &anyone, NotificationSink::none())
                    .await;
                black_box(resp.map(|r| r.into_response().to_value().to_string()));
            }
            println!("{which:?} request {round}: {calls} handled");
        }
        Command::Sizes => {
            let mut results = Vec::new();
            for which in [Impl::Flat, Impl::All, Impl::Replay] {
                let (server, tool) = collect_server(which)?;
                let (lines, result) = drive(&server, tool, topic.clone()).await?;
                ensure!(
                    lines.len() == QUESTIONS as usize + 1,
                    "{tool}: {} requests",
                    lines.len()
                );
                // request k + 1 carries the state request k returned
                for (k, line) in lines.iter().enumerate().skip(1) {
                    println!("STATE {which:?} {} {}", k - 1, state_len(line)?);
                }
                results.push(result);
            }
            ensure!(
                results.windows(2).all(|w| w[0] == w[1]),
                "the versions disagree: {results:?}"
            );
            for (kind, ns) in [
                (
                    "text",
                    &[
                        0usize,
                        1 << 10,
                        4 << 10,
                        16 << 10,
                        32 << 10,
                        64 << 10,
                        128 << 10,
                    ][..],
                ),
                (
                    "random",
                    &[0, 1 << 10, 4 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10][..],
                ),
                ("items", &[0, 64, 256, 1024, 2048, 4096, 8192][..]),
            ] {
                for &n in ns {
                    let args = json!({"kind": kind, "n": n});
                    let mut sizes = Vec::new();
                    for compress in [false, true] {
                        let server = server(Box::new(keep::tool()), compress)?;
                        let (lines, _) = drive(&server, "keep", args.clone()).await?;
                        sizes.push(state_len(&lines[1])?);
                    }
                    println!("KEEP {kind} {n} {} {}", sizes[0], sizes[1]);
                }
            }
        }
    }
    Ok(())
}
