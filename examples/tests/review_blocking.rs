//! The repository prompt, template and completer do their file-system work on tokio's
//! blocking pool, never on an async worker (issue 18, item 14): on a current-thread runtime,
//! a task that only counts and yields keeps counting while a completion, a resource read or
//! the prompt walks a large repository. Done inline, the walk would hold the only thread and
//! the counter would stand still (the control below shows the harness sees that).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use mcp_tool_client::{Driver, InProcessTransport, ScriptedHost};
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::{Limits, Repo};
use mcp_tool_examples::tools::review::complete_path;
use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult};
use mcp_tool_runtime::{CompleteContext, Principal};
use serde_json::json;

/// Files in the repository: a walk of milliseconds (thousands of counter steps when it runs
/// on the blocking pool).
const FILES: usize = 2_000;
/// Counter steps that show the other task ran during the work (inline work allows none but
/// the few yields of the request path itself).
const MIN_STEPS: u64 = 200;

/// A repository of `FILES` small files (all offered), with limits raised so the walk visits
/// and lists every one of them.
fn big_repo() -> (tempfile::TempDir, Repo) {
    let root = tempfile::tempdir().unwrap();
    for d in 0..20 {
        let dir = root.path().join(format!("d{d:02}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..FILES / 20 {
            std::fs::write(dir.join(format!("f{f:04}.md")), "x").unwrap();
        }
    }
    std::fs::write(root.path().join("README.md"), "# big").unwrap();
    let repo = Repo::open(root.path()).unwrap().with_limits(Limits {
        max_visited: 10 * FILES,
        max_listed: 10 * FILES,
        ..Limits::default()
    });
    (root, repo)
}

/// Runs `work` on a current-thread runtime next to a task that counts and yields; returns
/// what `work` returned and how far the counter moved while `work` ran.
fn steps_during<F: Future>(work: impl FnOnce() -> F) -> (F::Output, u64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let count = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = tokio::spawn({
            let (count, stop) = (count.clone(), stop.clone());
            async move {
                while !stop.load(Ordering::Relaxed) {
                    count.fetch_add(1, Ordering::Relaxed);
                    tokio::task::yield_now().await;
                }
            }
        });
        tokio::task::yield_now().await;
        let work = work();
        let before = count.load(Ordering::Relaxed);
        let out = work.await;
        let during = count.load(Ordering::Relaxed) - before;
        stop.store(true, Ordering::Relaxed);
        ticker.await.unwrap();
        (out, during)
    })
}

#[test]
fn the_harness_sees_inline_blocking_work() {
    let (_root, repo) = big_repo();
    let (listed, steps) = steps_during(|| async { repo.list_files().unwrap().len() });
    assert_eq!(listed, FILES + 1);
    assert!(
        steps < MIN_STEPS,
        "inline work let the other task run {steps} times"
    );
}

#[test]
fn completion_runs_on_the_blocking_pool() {
    let (_root, repo) = big_repo();
    let cx = CompleteContext::new("path", "d07/", Default::default(), Principal::anonymous())
        .with_state(repo);
    let (values, steps) = steps_during(|| complete_path(cx));
    let values = values.unwrap();
    assert_eq!(values.len(), FILES / 20);
    assert!(values.iter().all(|v| v.starts_with("d07/")));
    assert!(steps >= MIN_STEPS, "the other task ran only {steps} times");
}

#[test]
fn the_resource_and_the_prompt_run_on_the_blocking_pool() {
    let (_root, repo) = big_repo();
    let server = Arc::new(
        mcp_tool_examples::example_server(None, repo, Notes::temporary().unwrap()).unwrap(),
    );
    let host = || ScriptedHost::new(ClientCapabilities::none().with_elicitation());

    let mut d = Driver::new(InProcessTransport::new(server.clone()), host());
    let last = format!("repo://files/d19/f{:04}.md", FILES / 20 - 1);
    let (out, steps) = steps_during(|| d.read_resource(&last));
    assert_eq!(out.unwrap().result["contents"][0]["text"], "x");
    assert!(
        steps >= MIN_STEPS,
        "resource read: the other task ran only {steps} times"
    );

    let answer = ElicitResult::accept(json!({"path": "README.md"}).as_object().cloned().unwrap());
    let mut d = Driver::new(
        InProcessTransport::new(server),
        host().answer("file", answer),
    );
    let (out, steps) = steps_during(|| d.get_prompt("review_file", json!({"focus": "x"})));
    let out = out.unwrap();
    assert_eq!(out.rounds, 2);
    assert_eq!(
        out.result["messages"][0]["content"]["resource"]["text"],
        "# big"
    );
    // two walks (the question's listing, then the read), each off the runtime's thread
    assert!(
        steps >= 2 * MIN_STEPS,
        "prompt: the other task ran only {steps} times"
    );
}
