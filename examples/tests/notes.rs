//! The notes tools against a real SQLite file: `delete_notes` through all its rounds (one
//! confirmation per note), two server instances sharing the file and taking turns (in process
//! and over loopback HTTP), a note deleted or changed through the other instance between two
//! rounds, direct mode against the rounds, and decline/cancel keeping a note.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcp_tool_client::{
    BoxFuture, CallOutcome, ClientTransport, Direction, Driver, Host, HostError, HttpTransport,
    InProcessTransport, ScriptedHost, TransportError,
};
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use mcp_tool_examples::tools::notes::{DeleteNotesArgs, delete_notes};
use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult, InputRequest, InputResponse};
use mcp_tool_runtime::seal::{Binding, Keyring, SealConfig, Sealer};
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use mcp_tool_runtime::{Principal, Server};
use serde_json::{Value, json};

const KEY: &str = "5c1e0a9b8d7f6e5d4c3b2a19081726354a5b6c7d8e9fa0b1c2d3e4f5a6b7c8d9";

fn sealer() -> Sealer {
    Sealer::new(Keyring::from_hex("k1", KEY).unwrap(), SealConfig::default())
}

/// A server instance with every example tool and its own handle on `notes`.
fn server(notes: Notes) -> Arc<Server> {
    Arc::new(
        mcp_tool_examples::example_server(Some(sealer()), Repo::embedded_demo().unwrap(), notes)
            .unwrap(),
    )
}

/// A database file in a temporary directory, for handles opened on the same path.
struct SharedFile {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl SharedFile {
    fn new() -> SharedFile {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.sqlite3");
        SharedFile { _dir: dir, path }
    }

    fn open(&self) -> Notes {
        Notes::open(&self.path).unwrap()
    }
}

/// The notes every test starts from; "milk" matches #1, #3, #4 and #5.
async fn seed(notes: &Notes) {
    for (title, body) in [
        ("Groceries", "milk, eggs, bread"),
        ("Garden", "water the tomatoes"),
        ("Shopping list", "oat milk"),
        ("Recipes", "pancakes:\nflour, milk, eggs"),
        ("Milk delivery", "cancel on Friday"),
    ] {
        notes
            .add(&anonymous_owner(), title.into(), body.into())
            .await
            .unwrap();
    }
}

/// `(id, title, revision)` of every note left in the database.
async fn rows(notes: &Notes) -> Vec<(i64, String, i64)> {
    let (all, total) = notes.list(&anonymous_owner(), None, 1000).await.unwrap();
    assert_eq!(all.len(), total);
    all.into_iter()
        .map(|n| (n.id, n.title, n.revision))
        .collect()
}

fn yes() -> ElicitResult {
    confirm(true)
}

fn no() -> ElicitResult {
    confirm(false)
}

fn confirm(ok: bool) -> ElicitResult {
    ElicitResult::accept(json!({"confirm": ok}).as_object().cloned().unwrap())
}

fn scripted(answers: &[(&str, ElicitResult)]) -> ScriptedHost {
    let mut host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    for (key, answer) in answers {
        host.push(*key, answer.clone());
    }
    host
}

type Action = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

/// A scripted host that records `(key, message)` of every question (in a log the test keeps,
/// also when the host is moved into a direct-mode context) and, before answering a given
/// key, runs an action: another client's work between two rounds.
struct TestHost {
    inner: ScriptedHost,
    actions: HashMap<String, Action>,
    log: Arc<Mutex<Vec<(String, String)>>>,
}

impl TestHost {
    fn new(answers: &[(&str, ElicitResult)]) -> TestHost {
        TestHost {
            inner: scripted(answers),
            actions: HashMap::new(),
            log: Arc::default(),
        }
    }

    fn before<F>(mut self, key: &str, action: impl FnOnce() -> F + Send + 'static) -> TestHost
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.actions
            .insert(key.into(), Box::new(move || Box::pin(action())));
        self
    }
}

impl Host for TestHost {
    fn capabilities(&self) -> ClientCapabilities {
        self.inner.capabilities()
    }

    fn respond<'a>(
        &'a mut self,
        key: &'a str,
        req: &'a InputRequest,
    ) -> BoxFuture<'a, Result<InputResponse, HostError>> {
        let message = serde_json::to_value(req).unwrap()["params"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        self.log.lock().unwrap().push((key.to_owned(), message));
        let action = self.actions.remove(key);
        Box::pin(async move {
            if let Some(action) = action {
                action().await;
            }
            self.inner.respond(key, req).await
        })
    }
}

/// The `inputRequests` keys of every `input_required` result, in order.
fn round_keys(out: &CallOutcome) -> Vec<Vec<String>> {
    out.transcript
        .iter()
        .filter(|e| e.direction == Direction::Received)
        .filter(|e| e.message.pointer("/result/resultType") == Some(&json!("input_required")))
        .map(|e| {
            e.message
                .pointer("/result/inputRequests")
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        })
        .collect()
}

/// The payload of every `requestState` of an anonymous call of `tool` with `args`, opened
/// with the server's key and context: `{"s": [stage, {name: value}], "p": {key: request or
/// its kind}}`.
fn states(out: &CallOutcome, tool: &str, args: &Value) -> Vec<Value> {
    let sealer = sealer().with_context("mcp-tool-examples");
    let anonymous = Principal::anonymous();
    let binding = Binding::new(&anonymous, "tools/call", tool, args);
    out.transcript
        .iter()
        .filter_map(|e| e.message.pointer("/result/requestState")?.as_str())
        .map(|token| sealer.open(&binding, token).unwrap().payload)
        .collect()
}

fn note(id: i64, title: &str) -> Value {
    json!({"id": id, "title": title})
}

#[tokio::test]
async fn delete_notes_asks_per_note_then_deletes_the_confirmed_ones() {
    let notes = Notes::temporary().unwrap();
    seed(&notes).await;
    let host = TestHost::new(&[
        ("delete_1/answer", yes()),
        ("delete_3/answer", no()),
        ("delete_4/answer", yes()),
        ("delete_5/answer", no()),
    ]);
    let log = host.log.clone();
    let mut d = Driver::new(InProcessTransport::new(server(notes.clone())), host);
    let out = d
        .call_tool("delete_notes", json!({"filter": "MILK"}))
        .await
        .unwrap();
    assert!(!out.is_error(), "{}", out.text());
    assert_eq!(out.rounds, 5);
    assert_eq!(
        round_keys(&out),
        [
            ["delete_1/answer"],
            ["delete_3/answer"],
            ["delete_4/answer"],
            ["delete_5/answer"]
        ]
    );
    assert_eq!(
        *log.lock().unwrap(),
        [
            (
                "delete_1/answer".to_owned(),
                "Delete note #1 “Groceries” (“milk, eggs, bread”)?".to_owned()
            ),
            (
                "delete_3/answer".to_owned(),
                "Delete note #3 “Shopping list” (“oat milk”)?".to_owned()
            ),
            (
                "delete_4/answer".to_owned(),
                "Delete note #4 “Recipes” (“pancakes: flour, milk, eggs”)?".to_owned()
            ),
            (
                "delete_5/answer".to_owned(),
                "Delete note #5 “Milk delivery” (“cancel on Friday”)?".to_owned()
            ),
        ]
    );
    assert_eq!(
        out.structured().unwrap(),
        &json!({
            "deleted": [note(1, "Groceries"), note(4, "Recipes")],
            "kept": [note(3, "Shopping list"), note(5, "Milk delivery")],
            "alreadyGone": [], "changed": [], "notAsked": 0
        })
    );
    assert_eq!(
        rows(&notes).await,
        [
            (2, "Garden".to_owned(), 1),
            (3, "Shopping list".to_owned(), 1),
            (5, "Milk delivery".to_owned(), 1)
        ]
    );
    // What crosses a round: the kept variables hold ids, titles and revisions, never a body
    // (nor the filter); the pending question is kept whole (its builder reads the preview,
    // which the stage after it does not keep), so a body's short preview travels with its
    // own question's round only.
    let states = states(&out, "delete_notes", &json!({"filter": "MILK"}));
    assert_eq!(states.len(), 4);
    for (i, st) in states.iter().enumerate() {
        let kept = st["s"].to_string();
        assert!(kept.contains("\"revision\":1"), "{kept}");
        for body_only in ["bread", "oat milk", "pancakes", "Friday", "MILK"] {
            assert!(!kept.contains(body_only), "{body_only} in {kept}");
        }
        let pending: Vec<&String> = st["p"].as_object().unwrap().keys().collect();
        assert_eq!(pending, round_keys(&out)[i].iter().collect::<Vec<_>>());
        assert!(st.to_string().len() < 2000, "{st}");
    }
    // the loop's remaining candidates: {id, title}
    let rest = json!([
        note(3, "Shopping list"),
        note(4, "Recipes"),
        note(5, "Milk delivery")
    ]);
    let vars = states[0]["s"][1].as_object().unwrap();
    assert!(vars.values().any(|v| *v == rest), "{vars:?}");
}

#[tokio::test]
async fn decline_and_cancel_keep_the_note() {
    let notes = Notes::temporary().unwrap();
    seed(&notes).await;
    let host = scripted(&[
        ("delete_1/answer", ElicitResult::decline()),
        ("delete_3/answer", ElicitResult::cancel()),
        ("delete_4/answer", yes()),
        ("delete_5/answer", ElicitResult::cancel()),
    ]);
    let mut d = Driver::new(InProcessTransport::new(server(notes.clone())), host);
    let out = d
        .call_tool("delete_notes", json!({"filter": "milk"}))
        .await
        .unwrap();
    assert!(!out.is_error(), "{}", out.text());
    assert_eq!(
        out.structured().unwrap(),
        &json!({
            "deleted": [note(4, "Recipes")],
            "kept": [note(1, "Groceries"), note(3, "Shopping list"), note(5, "Milk delivery")],
            "alreadyGone": [], "changed": [], "notAsked": 0
        })
    );
    let left: Vec<i64> = rows(&notes).await.iter().map(|r| r.0).collect();
    assert_eq!(left, [1, 2, 3, 5]);
}

/// Sends request i to instance i % n.
struct Alternating<T> {
    instances: Vec<T>,
    next: AtomicUsize,
    used: Mutex<Vec<usize>>,
}

impl<T> Alternating<T> {
    fn new(instances: Vec<T>) -> Self {
        Alternating {
            instances,
            next: AtomicUsize::new(0),
            used: Mutex::new(Vec::new()),
        }
    }
}

impl<T: ClientTransport> ClientTransport for Alternating<T> {
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        let i = self.next.fetch_add(1, Ordering::SeqCst) % self.instances.len();
        self.used.lock().unwrap().push(i);
        self.instances[i].send(message)
    }
}

fn alternate_answers() -> ScriptedHost {
    scripted(&[
        ("delete_1/answer", yes()),
        ("delete_3/answer", yes()),
        ("delete_4/answer", no()),
        ("delete_5/answer", yes()),
    ])
}

fn alternate_report() -> Value {
    json!({
        "deleted": [note(1, "Groceries"), note(3, "Shopping list"), note(5, "Milk delivery")],
        "kept": [note(4, "Recipes")],
        "alreadyGone": [], "changed": [], "notAsked": 0
    })
}

#[tokio::test]
async fn two_instances_sharing_the_file_take_turns() {
    let file = SharedFile::new();
    let (notes_a, notes_b) = (file.open(), file.open());
    seed(&notes_a).await;
    let transport = Alternating::new(vec![
        InProcessTransport::new(server(notes_a)),
        InProcessTransport::new(server(notes_b)),
    ]);
    let mut d = Driver::new(transport, alternate_answers());
    let out = d
        .call_tool("delete_notes", json!({"filter": "milk"}))
        .await
        .unwrap();
    // round 1 on A, 2 on B, 3 on A, 4 on B, the last (the deletion) on A
    assert_eq!(*d.transport().used.lock().unwrap(), [0, 1, 0, 1, 0]);
    assert_eq!(out.structured().unwrap(), &alternate_report());
    let left: Vec<i64> = rows(&file.open()).await.iter().map(|r| r.0).collect();
    assert_eq!(left, [2, 4]);
}

#[tokio::test]
async fn two_http_servers_sharing_the_file_take_turns() {
    let file = SharedFile::new();
    let (notes_a, notes_b) = (file.open(), file.open());
    seed(&notes_a).await;
    let addr = "127.0.0.1:0".parse().unwrap();
    let a = http::spawn(addr, server(notes_a), HttpConfig::default())
        .await
        .unwrap();
    let b = http::spawn(addr, server(notes_b), HttpConfig::default())
        .await
        .unwrap();
    let transport = Alternating::new(vec![
        HttpTransport::new(a.url()),
        HttpTransport::new(b.url()),
    ]);
    let mut d = Driver::new(transport, alternate_answers());
    let out = d
        .call_tool("delete_notes", json!({"filter": "milk"}))
        .await
        .unwrap();
    assert_eq!(*d.transport().used.lock().unwrap(), [0, 1, 0, 1, 0]);
    assert_eq!(out.structured().unwrap(), &alternate_report());
    let left: Vec<i64> = rows(&file.open()).await.iter().map(|r| r.0).collect();
    assert_eq!(left, [2, 4]);
}

/// Between the rounds of one `delete_notes` call on A, another client works through B:
/// deletes #3 before A asks about it, changes #1 after the user confirmed it, deletes #4
/// after the user confirmed it. None of this is an error; each is reported.
#[tokio::test]
async fn notes_deleted_or_changed_through_the_other_instance_are_reported() {
    let file = SharedFile::new();
    let (notes_a, notes_b) = (file.open(), file.open());
    seed(&notes_a).await;
    let a = server(notes_a);
    let b = server(notes_b.clone());

    let b1 = b.clone();
    let b2 = b.clone();
    let host = TestHost::new(&[
        ("delete_1/answer", yes()),
        ("delete_4/answer", yes()),
        ("delete_5/answer", yes()),
    ])
    .before("delete_1/answer", move || async move {
        // another user deletes "Shopping list" through B, with its own confirmation
        let mut d = Driver::new(
            InProcessTransport::new(b1),
            scripted(&[("delete_3/answer", yes())]),
        );
        let out = d
            .call_tool("delete_notes", json!({"filter": "oat milk"}))
            .await
            .unwrap();
        assert_eq!(
            out.structured().unwrap()["deleted"],
            json!([note(3, "Shopping list")])
        );
    })
    .before("delete_4/answer", move || async move {
        // ... and edits "Groceries" (already confirmed on A) through B
        let mut d = Driver::new(
            InProcessTransport::new(b2),
            scripted(&[("replace/answer", yes())]),
        );
        let out = d
            .call_tool(
                "edit_note",
                json!({"id": 1, "body": "milk, eggs, bread, butter"}),
            )
            .await
            .unwrap();
        assert_eq!(
            out.structured().unwrap(),
            &json!({"note": note(1, "Groceries"), "outcome": "replaced", "revision": 2})
        );
    })
    .before("delete_5/answer", move || async move {
        // ... and deletes "Recipes" (already confirmed on A) through B's own store handle
        assert!(notes_b.delete(&anonymous_owner(), 4).await.unwrap());
    });
    let log = host.log.clone();
    let mut d = Driver::new(InProcessTransport::new(a), host);
    let out = d
        .call_tool("delete_notes", json!({"filter": "milk"}))
        .await
        .unwrap();
    assert!(!out.is_error(), "{}", out.text());
    // #3 was gone when its turn came: not asked
    let asked: Vec<String> = log.lock().unwrap().iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(
        asked,
        ["delete_1/answer", "delete_4/answer", "delete_5/answer"]
    );
    assert_eq!(
        out.structured().unwrap(),
        &json!({
            "deleted": [note(5, "Milk delivery")],
            "kept": [],
            "alreadyGone": [note(3, "Shopping list"), note(4, "Recipes")],
            "changed": [note(1, "Groceries")],
            "notAsked": 0
        })
    );
    assert_eq!(
        rows(&file.open()).await,
        [(1, "Groceries".to_owned(), 2), (2, "Garden".to_owned(), 1)]
    );
}

/// The function called directly (no rounds, no state) asks the same questions under the same
/// keys and leaves the same rows as the state machine, for every mix of answers.
#[tokio::test]
async fn direct_mode_matches_the_rounds() {
    let answers = [yes(), no(), ElicitResult::decline(), ElicitResult::cancel()];
    for (i, first) in answers.iter().enumerate() {
        let second = &answers[(i + 1) % answers.len()];
        let script = [
            ("delete_1/answer", first.clone()),
            ("delete_3/answer", second.clone()),
            ("delete_4/answer", yes()),
            ("delete_5/answer", first.clone()),
        ];

        let rounds_db = Notes::temporary().unwrap();
        seed(&rounds_db).await;
        let host = TestHost::new(&script);
        let rounds_log = host.log.clone();
        let mut d = Driver::new(InProcessTransport::new(server(rounds_db.clone())), host);
        let out = d
            .call_tool("delete_notes", json!({"filter": "milk"}))
            .await
            .unwrap();

        let direct_db = Notes::temporary().unwrap();
        seed(&direct_db).await;
        let host = TestHost::new(&script);
        let direct_log = host.log.clone();
        let mut cx = mcp_tool_runtime::testing::ContextBuilder::direct(host)
            .state(direct_db.clone())
            .build();
        let notes = cx.state::<Notes>().unwrap();
        let report = delete_notes(
            &mut cx,
            DeleteNotesArgs {
                filter: "milk".into(),
            },
            notes,
        )
        .await
        .unwrap();

        assert_eq!(
            Some(&serde_json::to_value(&report).unwrap()),
            out.structured()
        );
        assert_eq!(*direct_log.lock().unwrap(), *rounds_log.lock().unwrap());
        assert_eq!(rows(&direct_db).await, rows(&rounds_db).await);
        assert_eq!(direct_log.lock().unwrap().len(), 4);
    }
}

#[tokio::test]
async fn at_most_twenty_notes_are_asked_about_per_call() {
    let notes = Notes::temporary().unwrap();
    for i in 0..25 {
        notes
            .add(&anonymous_owner(), format!("todo {i}"), "something".into())
            .await
            .unwrap();
    }
    let host = ScriptedHost::from_fn(ClientCapabilities::none().with_elicitation(), |_, _| {
        Ok(yes().into())
    });
    let mut d =
        Driver::new(InProcessTransport::new(server(notes.clone())), host).with_max_rounds(30);
    let out = d
        .call_tool("delete_notes", json!({"filter": "todo"}))
        .await
        .unwrap();
    assert_eq!(out.rounds, 21);
    let report = out.structured().unwrap();
    assert_eq!(report["deleted"].as_array().unwrap().len(), 20);
    assert_eq!(report["notAsked"], 5);
    let left: Vec<i64> = rows(&notes).await.iter().map(|r| r.0).collect();
    assert_eq!(left, [21, 22, 23, 24, 25]);
}

#[tokio::test]
async fn no_match_is_one_round_and_bad_input_is_refused() {
    let notes = Notes::temporary().unwrap();
    seed(&notes).await;
    let mut d = Driver::new(
        InProcessTransport::new(server(notes.clone())),
        scripted(&[]),
    );
    let out = d
        .call_tool("delete_notes", json!({"filter": "nothing like this"}))
        .await
        .unwrap();
    assert_eq!(out.rounds, 1);
    assert_eq!(out.structured().unwrap()["deleted"], json!([]));
    for bad in [
        json!(""),
        json!("   "),
        json!("x".repeat(101)),
        json!("a\u{0}b"),
    ] {
        let out = d
            .call_tool("delete_notes", json!({"filter": bad}))
            .await
            .unwrap();
        assert!(out.is_error(), "{bad}");
        assert!(out.text().contains("filter"), "{}", out.text());
    }
    assert_eq!(rows(&notes).await.len(), 5);
    // an answer of the wrong shape is refused (-32602) and deletes nothing
    let wrong = ElicitResult::accept(json!({"confirm": "yes"}).as_object().cloned().unwrap());
    let mut d = Driver::new(
        InProcessTransport::new(server(notes.clone())),
        scripted(&[("delete_1/answer", wrong)]),
    );
    let err = d
        .call_tool("delete_notes", json!({"filter": "milk"}))
        .await
        .unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32602), "{err}");
    assert_eq!(rows(&notes).await.len(), 5);
    // without elicitation the call is refused before any code runs
    let mut d = Driver::new(
        InProcessTransport::new(server(notes.clone())),
        ScriptedHost::new(ClientCapabilities::none()),
    );
    let err = d
        .call_tool("delete_notes", json!({"filter": "milk"}))
        .await
        .unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32021), "{err}");
    assert_eq!(rows(&notes).await.len(), 5);
}

#[tokio::test]
async fn add_list_and_edit() {
    let notes = Notes::temporary().unwrap();
    let s = server(notes.clone());
    let host = TestHost::new(&[("replace/answer", no())]);
    let log = host.log.clone();
    let mut d = Driver::new(InProcessTransport::new(s.clone()), host);
    // add_note needs no capability and takes one round
    let out = d
        .call_tool(
            "add_note",
            json!({"title": "  Plans ", "body": "fly\nto Lisbon"}),
        )
        .await
        .unwrap();
    assert_eq!(out.rounds, 1);
    assert_eq!(
        out.structured().unwrap(),
        &json!({"id": 1, "title": "Plans", "body": "fly\nto Lisbon", "revision": 1})
    );
    for bad in [
        json!({"title": "", "body": "b"}),
        json!({"title": "t", "body": " \n "}),
        json!({"title": "x".repeat(201), "body": "b"}),
        json!({"title": "t", "body": "y".repeat(4001)}),
        json!({"title": "t\u{1b}[31m", "body": "b"}),
    ] {
        let out = d.call_tool("add_note", bad.clone()).await.unwrap();
        assert!(out.is_error(), "{bad}");
    }
    d.call_tool(
        "add_note",
        json!({"title": "Other", "body": "lisbon trams"}),
    )
    .await
    .unwrap();
    let out = d
        .call_tool("list_notes", json!({"filter": "LISBON"}))
        .await
        .unwrap();
    assert_eq!(out.structured().unwrap()["total"], 2);
    let out = d
        .call_tool("list_notes", json!({"filter": "plans"}))
        .await
        .unwrap();
    assert_eq!(out.structured().unwrap()["notes"][0]["id"], 1);
    assert_eq!(out.structured().unwrap()["total"], 1);
    let out = d.call_tool("list_notes", json!({})).await.unwrap();
    assert_eq!(out.structured().unwrap()["total"], 2);

    // edit_note: "no" keeps the text
    let out = d
        .call_tool("edit_note", json!({"id": 1, "body": "take the train"}))
        .await
        .unwrap();
    assert_eq!(round_keys(&out), [["replace/answer"]]);
    assert_eq!(
        log.lock().unwrap()[0].1,
        "Replace the text of note #1 “Plans” (“fly to Lisbon”) with “take the train”?"
    );
    assert_eq!(out.structured().unwrap()["outcome"], "kept");
    assert_eq!(
        notes
            .get(&anonymous_owner(), 1)
            .await
            .unwrap()
            .unwrap()
            .body,
        "fly\nto Lisbon"
    );
    // "yes" replaces it and bumps the revision
    let mut d = Driver::new(
        InProcessTransport::new(s),
        scripted(&[("replace/answer", yes())]),
    );
    let out = d
        .call_tool("edit_note", json!({"id": 1, "body": "take the train"}))
        .await
        .unwrap();
    assert_eq!(
        out.structured().unwrap(),
        &json!({"note": note(1, "Plans"), "outcome": "replaced", "revision": 2})
    );
    let plans = notes.get(&anonymous_owner(), 1).await.unwrap().unwrap();
    assert_eq!((plans.body.as_str(), plans.revision), ("take the train", 2));
    // an unknown id is a tool error, asked nothing
    let out = d
        .call_tool("edit_note", json!({"id": 99, "body": "x"}))
        .await
        .unwrap();
    assert!(out.is_error());
    assert!(out.text().contains("no note #99"), "{}", out.text());
    assert_eq!(out.rounds, 1);
}

/// Two handles on one file (two connections, as two replicas have) writing at the same time:
/// the busy timeout makes each writer wait for the other's lock instead of failing, and
/// every write lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_on_two_handles_wait_instead_of_failing() {
    let file = SharedFile::new();
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let notes = file.open();
            tokio::spawn(async move {
                for i in 0..30 {
                    let note = notes
                        .add(&anonymous_owner(), format!("w{w} n{i}"), "body".into())
                        .await
                        .unwrap();
                    // a read-modify-write on the same handle, under the other's writes
                    let replaced = notes
                        .replace_body(
                            &anonymous_owner(),
                            note.id,
                            note.revision,
                            format!("body {i}"),
                        )
                        .await
                        .unwrap();
                    assert_eq!(
                        replaced,
                        mcp_tool_examples::notes::ReplaceOutcome::Replaced { revision: 2 }
                    );
                }
            })
        })
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    let all = rows(&file.open()).await;
    assert_eq!(all.len(), 60);
    assert!(all.iter().all(|(_, _, revision)| *revision == 2));
}

/// Notes belong to the principal that added them (issue 18, item 12): over HTTP with the demo
/// authenticator, bob neither lists, finds, edits nor deletes alice's notes (each is to him
/// exactly like a note that does not exist), alice does not see bob's, and the anonymous
/// principal sees neither.
#[tokio::test]
async fn another_principal_neither_sees_nor_deletes_the_notes() {
    let notes = Notes::temporary().unwrap();
    let handle = http::spawn(
        "127.0.0.1:0".parse().unwrap(),
        server(notes.clone()),
        HttpConfig::default().authenticator(mcp_tool_examples::serving::DemoAuth::new()),
    )
    .await
    .unwrap();
    let client = |who: Option<&str>, host: TestHost| {
        let t = HttpTransport::new(handle.url());
        Driver::new(who.map_or(t.clone(), |w| t.bearer(w)), host)
    };
    let total = |out: &CallOutcome| out.structured().unwrap()["total"].clone();

    let mut alice = client(Some("alice"), TestHost::new(&[]));
    for (title, body) in [("Groceries", "milk, eggs"), ("Plans", "fly to Lisbon")] {
        let out = alice
            .call_tool("add_note", json!({"title": title, "body": body}))
            .await
            .unwrap();
        assert!(!out.is_error(), "{}", out.text());
    }

    // bob: an empty store, whatever he asks
    let bob_host = TestHost::new(&[("delete_1/answer", yes()), ("delete_3/answer", yes())]);
    let bob_log = bob_host.log.clone();
    let mut bob = client(Some("bob"), bob_host);
    let out = bob.call_tool("list_notes", json!({})).await.unwrap();
    assert_eq!(out.structured().unwrap(), &json!({"notes": [], "total": 0}));
    let out = bob
        .call_tool("list_notes", json!({"filter": "milk"}))
        .await
        .unwrap();
    assert_eq!(total(&out), 0);
    let out = bob
        .call_tool("delete_notes", json!({"filter": "milk"}))
        .await
        .unwrap();
    assert_eq!(out.rounds, 1);
    assert_eq!(
        out.structured().unwrap(),
        &json!({"deleted": [], "kept": [], "alreadyGone": [], "changed": [], "notAsked": 0})
    );
    assert!(
        bob_log.lock().unwrap().is_empty(),
        "bob was asked about alice's note"
    );
    // editing alice's note #1 reads exactly like editing a note that does not exist
    let theirs = bob
        .call_tool("edit_note", json!({"id": 1, "body": "hijacked"}))
        .await
        .unwrap();
    let missing = bob
        .call_tool("edit_note", json!({"id": 99, "body": "hijacked"}))
        .await
        .unwrap();
    assert!(theirs.is_error() && missing.is_error());
    assert_eq!(theirs.rounds, 1);
    assert_eq!(
        theirs.text().replace("#1", "#N"),
        missing.text().replace("#99", "#N")
    );
    assert!(bob_log.lock().unwrap().is_empty());

    // bob's own note: his delete_notes asks about it alone and deletes it alone
    let out = bob
        .call_tool("add_note", json!({"title": "Bob's", "body": "oat milk"}))
        .await
        .unwrap();
    assert_eq!(out.structured().unwrap()["id"], 3);
    let out = bob
        .call_tool("delete_notes", json!({"filter": "milk"}))
        .await
        .unwrap();
    assert_eq!(round_keys(&out), [["delete_3/answer"]]);
    assert_eq!(
        out.structured().unwrap()["deleted"],
        json!([note(3, "Bob's")])
    );

    // the anonymous principal sees nothing; alice still has both notes, unchanged
    let mut anonymous = client(None, TestHost::new(&[]));
    let out = anonymous.call_tool("list_notes", json!({})).await.unwrap();
    assert_eq!(total(&out), 0);
    let out = alice.call_tool("list_notes", json!({})).await.unwrap();
    assert_eq!(total(&out), 2);
    let alice_owner = mcp_tool_examples::notes::Owner::of(&Principal::named("alice"));
    let (left, _) = notes.list(&alice_owner, None, 10).await.unwrap();
    let left: Vec<(i64, &str, i64)> = left
        .iter()
        .map(|n| (n.id, n.body.as_str(), n.revision))
        .collect();
    assert_eq!(left, [(1, "milk, eggs", 1), (2, "fly to Lisbon", 1)]);
    handle.shutdown().await.unwrap();
}

/// The owner of the notes an anonymous client adds (every client in this file but where a
/// test names a principal).
fn anonymous_owner() -> mcp_tool_examples::notes::Owner {
    mcp_tool_examples::notes::Owner::of(&mcp_tool_runtime::Principal::anonymous())
}

/// The notes tools declare `notes:read` / `notes:write`; the example server ignores them
/// (its authenticators grant no scopes), and with [`Scopes::Enforced`] (what an OAuth mode
/// passes) a caller needs them: reading with `notes:read`, writing with `notes:write`.
#[tokio::test]
async fn the_notes_tools_declare_scopes_that_the_oauth_mode_enforces() {
    use mcp_tool_client::DriverError;
    use mcp_tool_examples::Scopes;
    use mcp_tool_runtime::protocol::INSUFFICIENT_SCOPE;

    let scopes_of = |server: &Server, name: &str| {
        let info = server.tools().into_iter().find(|t| t.name == name).unwrap();
        info.scopes.clone()
    };
    let ignoring = server(Notes::temporary().unwrap());
    assert!(!ignoring.enforces_scopes());
    assert_eq!(scopes_of(&ignoring, "list_notes"), ["notes:read"]);
    for write in ["add_note", "edit_note", "delete_notes"] {
        assert_eq!(scopes_of(&ignoring, write), ["notes:write"], "{write}");
    }
    assert!(scopes_of(&ignoring, "get_weather").is_empty());

    let enforcing = Arc::new(
        mcp_tool_examples::example_server_with(
            Some(sealer()),
            Repo::embedded_demo().unwrap(),
            Notes::temporary().unwrap(),
            Scopes::Enforced,
        )
        .unwrap(),
    );
    assert!(enforcing.enforces_scopes());
    let as_caller = |p: Principal| {
        Driver::new(
            InProcessTransport::new(enforcing.clone()).with_principal(p),
            ScriptedHost::new(ClientCapabilities::none().with_elicitation()),
        )
    };
    let reader = Principal::issued("https://idp.example", "alice").with_scopes(["notes:read"]);
    let writer = reader.clone().with_scopes(["notes:write"]);
    let add = json!({"title": "milk", "body": "2 litres"});
    match as_caller(reader.clone())
        .call_tool("add_note", add.clone())
        .await
    {
        Err(DriverError::Rpc { error, .. }) => {
            assert_eq!(error.code, INSUFFICIENT_SCOPE);
            assert_eq!(
                error.data.unwrap()["requiredScopes"],
                json!(["notes:write"])
            );
        }
        other => panic!("expected the scope error, got {other:?}"),
    }
    let added = as_caller(writer).call_tool("add_note", add).await.unwrap();
    assert_eq!(
        added.result["structuredContent"]["title"], "milk",
        "{:?}",
        added.result
    );
    let listed = as_caller(reader)
        .call_tool("list_notes", json!({}))
        .await
        .unwrap();
    assert_eq!(
        listed.result["structuredContent"]["total"], 1,
        "{:?}",
        listed.result
    );
    // a tool that declares no scope needs none (list_roots then fails for want of roots)
    let anyone = Principal::issued("https://idp.example", "carol");
    let r = as_caller(anyone).call_tool("list_roots", json!({})).await;
    assert!(
        !matches!(&r, Err(DriverError::Rpc { error, .. }) if error.code == INSUFFICIENT_SCOPE),
        "{r:?}"
    );
}

/// The notes tools tell the listeners of a note's URI (`notes://notes/{id}`) when it is
/// added or edited, and no one else; the note is readable at that URI.
#[tokio::test]
async fn note_changes_reach_the_listeners_of_that_note() {
    let file = SharedFile::new();
    let notes = file.open();
    seed(&notes).await;
    let server = server(notes);
    let yes = scripted(&[("replace/answer", confirm(true))]);
    let mut d = Driver::new(InProcessTransport::new(server.clone()), yes);
    let mut one = d
        .listen(json!({"resourceSubscriptions": ["notes://notes/1"]}))
        .await
        .unwrap();
    let mut six = d
        .listen(json!({"resourceSubscriptions": ["notes://notes/6"]}))
        .await
        .unwrap();
    for l in [&mut one, &mut six] {
        let ack = l.next().await.unwrap().unwrap();
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        assert_eq!(
            ack["params"]["notifications"]["resourceSubscriptions"]
                .as_array()
                .unwrap()
                .len(),
            1,
            "{ack}"
        );
    }
    let added = d
        .call_tool("add_note", json!({"title": "New", "body": "a new note"}))
        .await
        .unwrap();
    assert_eq!(added.structured().unwrap()["id"], 6, "{}", added.text());
    let got = six.next().await.unwrap().unwrap();
    assert_eq!(got["method"], "notifications/resources/updated");
    assert_eq!(got["params"]["uri"], "notes://notes/6");
    let read = d.read_resource("notes://notes/6").await.unwrap();
    let text = read.result["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("a new note"), "{}", read.result);
    // The listener of note 1 heard nothing of note 6, and hears its own edit.
    d.call_tool("edit_note", json!({"id": 1, "body": "milk"}))
        .await
        .unwrap();
    let got = one.next().await.unwrap().unwrap();
    assert_eq!(got["params"]["uri"], "notes://notes/1", "{got}");
}
