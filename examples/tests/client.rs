//! The interactive client (the `mcp-tool-cli` crate; `client` is this package's shim over
//! it), driven through a piped stdin: against the `serve` binary over stdio, and against the
//! example server over Streamable HTTP on loopback. Tool arguments are typed field by field
//! (asked from the `inputSchema`), or given whole as `NAME {JSON}` or `--args`.

use std::process::Stdio;
use std::time::Duration;

use mcp_tool_examples::serving::DemoAuth;
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle};
use tokio::io::AsyncWriteExt;

const CLIENT: &str = env!("CARGO_BIN_EXE_client");
const SERVE: &str = env!("CARGO_BIN_EXE_serve");

struct Run {
    ok: bool,
    stdout: String,
}

async fn run_client(args: &[&str], stdin: &str) -> Run {
    let mut child = tokio::process::Command::new(CLIENT)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .env("RUST_LOG", "warn")
        .kill_on_drop(true)
        .spawn()
        .expect("client starts");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).await.unwrap();
    drop(input);
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("client finishes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{stdout}");
    Run {
        ok: out.status.success(),
        stdout,
    }
}

/// The `serve` command for `--stdio`, its notes in `db` (the client kills the server when it
/// is done, so a temporary notes file of the server's own would be left behind).
fn serve_cmd(db: &tempfile::TempDir) -> String {
    format!(
        "'{SERVE}' --db '{}'",
        db.path().join("notes.sqlite3").display()
    )
}

async fn http_server() -> HttpHandle {
    let server = mcp_tool_examples::example_server(
        None,
        mcp_tool_examples::repo::Repo::embedded_demo().unwrap(),
        mcp_tool_examples::notes::Notes::temporary().unwrap(),
    )
    .unwrap();
    http::spawn(
        "127.0.0.1:0".parse().unwrap(),
        server,
        HttpConfig::default().authenticator(DemoAuth::new()),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn stdio_session_answers_an_elicitation_at_the_prompt() {
    // The argument `location` asked from the inputSchema (an empty answer is asked again).
    let input = "get_weather\n\nParis\na\nmona\n\n";
    let db = tempfile::tempdir().unwrap();
    let run = run_client(&["--stdio", &serve_cmd(&db)], input).await;
    assert!(run.ok);
    let out = &run.stdout;
    assert!(out.contains("server mcp-tool-examples"), "{out}");
    assert!(out.contains("summarize_repo — "), "{out}");
    assert!(out.contains("── arguments of `get_weather`"), "{out}");
    assert!(out.contains("   location (text): "), "{out}");
    assert!(out.contains("a value is required"), "{out}");
    assert!(out.contains("→ tools/call (id 3) get_weather {\"location\":\"Paris\"}"));
    assert!(out.contains("← input_required: github_login (elicitation/create) + requestState"));
    assert!(
        out.contains("── elicitation `github_login` (form): Please provide your GitHub username")
    );
    assert!(out.contains("+ inputResponses [github_login] + requestState"));
    assert!(
        out.contains("Weather in Paris for mona: rain, high 17 °C."),
        "{out}"
    );
}

#[tokio::test]
async fn stdio_session_revalidates_bad_input_and_loops() {
    // prune_branches: the branches as a comma-separated list (an array of strings in the
    // inputSchema), then one yes/no form per branch; "maybe" is refused and asked again.
    let input = "prune_branches\nold, keep-me\na\nmaybe\ny\na\nn\n\n";
    let db = tempfile::tempdir().unwrap();
    let run = run_client(&["--stdio", &serve_cmd(&db)], input).await;
    assert!(run.ok);
    let out = &run.stdout;
    assert!(out.contains("answer y or n; try again"), "{out}");
    assert!(out.contains("Delete branch `old`?"));
    assert!(out.contains("Delete branch `keep-me`?"));
    assert!(out.contains("\"deleted\": [\n    \"old\"\n  ]"), "{out}");
    assert!(out.contains("result after 3 round(s)"));
}

#[tokio::test]
async fn stdio_decline_gives_the_polite_result() {
    // The arguments given whole on the tool's line, as JSON.
    let input = "get_weather {\"location\": \"Paris\"}\nd\n\n";
    let db = tempfile::tempdir().unwrap();
    let run = run_client(&["--stdio", &serve_cmd(&db)], input).await;
    assert!(run.ok);
    assert!(
        run.stdout.contains("No problem: without a GitHub username"),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn http_call_with_a_fixed_sampling_responder() {
    let h = http_server().await;
    let run = run_client(
        &[
            "--url",
            &h.url(),
            "--call",
            "summarize_repo",
            "--args",
            r#"{"audience": "tester"}"#,
            "--sampling",
            r#"fixed:["README.md"]"#,
            "--bearer",
            "alice",
        ],
        "",
    )
    .await;
    assert!(run.ok, "{}", run.stdout);
    let out = &run.stdout;
    assert!(out.contains("← input_required: pick_files (sampling/createMessage) + requestState"));
    assert!(out.contains("── sampling `pick_files`"));
    assert!(out.contains("system: Return only the requested value."));
    assert!(out.contains("← input_required: summary (sampling/createMessage) + requestState"));
    assert!(out.contains("result after 3 round(s)"));
    assert!(out.contains("Files: README.md"), "{out}");
}

#[tokio::test]
async fn http_call_with_an_echo_responder_is_refused_as_invalid_model_output() {
    let h = http_server().await;
    let run = run_client(
        &[
            "--url",
            &h.url(),
            "--call",
            "summarize_repo",
            "--args",
            r#"{"audience": "tester"}"#,
            "--sampling",
            "echo",
        ],
        "",
    )
    .await;
    assert!(!run.ok);
    assert!(run.stdout.contains("← error -32602"), "{}", run.stdout);
    assert!(run.stdout.contains("call failed"));
}

#[tokio::test]
async fn http_roots_from_flags_and_missing_capability() {
    let h = http_server().await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let run = run_client(
        &["--url", &h.url(), "--call", "list_roots", "--root", root],
        "",
    )
    .await;
    assert!(run.ok, "{}", run.stdout);
    assert!(run.stdout.contains("── roots `roots`: 1 root(s)"));
    assert!(run.stdout.contains("\"count\": 1"));
    assert!(run.stdout.contains("\"local\": true"));

    let run = run_client(&["--url", &h.url(), "--call", "list_roots"], "").await;
    assert!(!run.ok);
    assert!(run.stdout.contains("← error -32021"), "{}", run.stdout);
}

#[tokio::test]
async fn list_only() {
    let h = http_server().await;
    let run = run_client(&["--url", &h.url(), "--list"], "").await;
    assert!(run.ok);
    for t in [
        "summarize_repo",
        "get_weather",
        "link_accounts",
        "sum_of_squares",
        "list_roots",
        "prune_branches",
        "add_note",
        "list_notes",
        "delete_notes",
        "edit_note",
        "donate",
        "balance",
    ] {
        assert!(run.stdout.contains(&format!("  {t} — ")), "{t}");
    }
    assert!(run.stdout.contains("12 tool(s)"), "{}", run.stdout);
}

/// An empty `--stdio` command is an error message and exit status 1, not an index panic.
#[test]
fn an_empty_stdio_command_is_an_error_not_a_panic() {
    let out = std::process::Command::new(CLIENT)
        .args(["--stdio", ""])
        .stdin(Stdio::null())
        .output()
        .expect("client runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("empty command"), "{stderr}");
}

/// `delete_notes` at the prompt: one yes/no form per matching note; the server's file was
/// written by this process first.
#[tokio::test]
async fn stdio_session_confirms_note_by_note() {
    let db = tempfile::tempdir().unwrap();
    let notes = mcp_tool_examples::notes::Notes::open(db.path().join("notes.sqlite3")).unwrap();
    for (title, body) in [
        ("Groceries", "milk"),
        ("Garden", "water"),
        ("Shop", "oat milk"),
    ] {
        notes
            .add(&anonymous_owner(), title.into(), body.into())
            .await
            .unwrap();
    }
    // accept + yes for #1, decline #3
    let input = "delete_notes\nmilk\na\ny\nd\n\n";
    let run = run_client(&["--stdio", &serve_cmd(&db)], input).await;
    assert!(run.ok);
    let out = &run.stdout;
    assert!(
        out.contains(
            "── elicitation `delete_1/answer` (form): Delete note #1 “Groceries” (“milk”)?"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "── elicitation `delete_3/answer` (form): Delete note #3 “Shop” (“oat milk”)?"
        )
    );
    assert!(out.contains("result after 3 round(s)"), "{out}");
    let (left, _) = notes.list(&anonymous_owner(), None, 10).await.unwrap();
    let ids: Vec<i64> = left.iter().map(|n| n.id).collect();
    assert_eq!(ids, [2, 3]);
}

/// The owner of the notes an anonymous client adds (every client in this file but where a
/// test names a principal).
fn anonymous_owner() -> mcp_tool_examples::notes::Owner {
    mcp_tool_examples::notes::Owner::of(&mcp_tool_runtime::Principal::anonymous())
}
