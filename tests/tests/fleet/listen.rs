//! A listener on one replica hears what is done through another (the change feed of the
//! shared store): `subscriptions/listen` over Streamable HTTP (a POST answered with
//! `text/event-stream`) on replica B, while a note is edited and tasks change status through
//! replica A.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Replica, call, post, task_request};

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// An open `subscriptions/listen` stream: its server-sent events, one JSON-RPC message each.
pub struct Listen {
    resp: reqwest::Response,
    buf: Vec<u8>,
}

impl Listen {
    /// POSTs `subscriptions/listen` (JSON-RPC id `id`, the Tasks extension declared) with
    /// `filter` to `url` as `who`; the response must be an event stream.
    ///
    /// # Panics
    /// When the answer is not `200 text/event-stream` (the test fails).
    pub async fn open(
        client: &reqwest::Client,
        url: &str,
        who: &str,
        id: u64,
        filter: Value,
    ) -> Listen {
        let body = task_request(
            id,
            "subscriptions/listen",
            json!({ "notifications": filter }),
        );
        let mut req = client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {who}"));
        for (k, v) in mcp_tool_client::HttpTransport::mcp_headers(&body) {
            req = req.header(k, v);
        }
        let resp = req
            .body(serde_json::to_vec(&body).expect("JSON"))
            .send()
            .await
            .expect("subscriptions/listen sent");
        let status = resp.status().as_u16();
        let ct = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        if status != 200 || !ct.starts_with("text/event-stream") {
            let text = resp.text().await.unwrap_or_default();
            panic!("subscriptions/listen: HTTP {status} {ct}: {text}");
        }
        Listen {
            resp,
            buf: Vec::new(),
        }
    }

    /// The next message on the stream within `within` (`None`: none came, or the stream
    /// ended). Comments (keep-alives) and events without data are skipped.
    pub async fn next(&mut self, within: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(end) = find_event_end(&self.buf) {
                let event: Vec<u8> = self.buf.drain(..end.1).collect();
                let text = String::from_utf8_lossy(&event[..end.0]);
                let data: Vec<&str> = text
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(|d| d.strip_prefix(' ').unwrap_or(d))
                    .collect();
                if data.is_empty() {
                    continue;
                }
                let joined = data.join("\n");
                return Some(
                    serde_json::from_str(&joined)
                        .unwrap_or_else(|e| panic!("an event that is not JSON ({e}): {joined}")),
                );
            }
            match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                Ok(Ok(Some(chunk))) => self.buf.extend_from_slice(&chunk),
                Ok(Ok(None)) | Ok(Err(_)) | Err(_) => return None,
            }
        }
    }
}

/// Where the first event in `buf` ends: (end of its text, end including the blank line).
fn find_event_end(buf: &[u8]) -> Option<(usize, usize)> {
    let lf = buf
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|i| (i, i + 2));
    let crlf = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, i + 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// A successful `tools/call` through `url`: its result.
async fn tool(client: &reqwest::Client, url: &str, who: &str, body: &Value) -> Value {
    let (status, text) = post(client, url, who, body).await.expect("HTTP");
    assert_eq!(status, 200, "{text}");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    assert!(v.get("error").is_none(), "{v}");
    v["result"].clone()
}

/// The URI of note `id` as replica `url` advertises the notes: a resource template (or a
/// resource) whose URI mentions notes, its one variable set to the id.
async fn note_uri(client: &reqwest::Client, url: &str, who: &str, id: i64) -> String {
    let templates = tool(
        client,
        url,
        who,
        &task_request(5, "resources/templates/list", json!({})),
    )
    .await;
    let found = templates["resourceTemplates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["uriTemplate"].as_str())
        .find(|t| t.to_ascii_lowercase().contains("note"));
    let Some(template) = found else {
        panic!("no notes resource template on {url} (the listen branch adds one): {templates}");
    };
    // `scheme://…{var}…` or `{+var}`: the one expression becomes the id
    let (start, end) = (
        template.find('{').expect("a variable"),
        template.find('}').expect("a variable"),
    );
    format!("{}{id}{}", &template[..start], &template[end + 1..])
}

/// Edits note `id` through `url` (`edit_note`, its confirmation accepted): two rounds.
async fn edit_note(client: &reqwest::Client, url: &str, who: &str, id: i64, body: &str) {
    let args = json!({ "id": id, "body": body });
    let first = tool(
        client,
        url,
        who,
        &call(11, "edit_note", args.clone(), json!({})),
    )
    .await;
    let state = first["requestState"].as_str().expect("a confirmation");
    let key = first["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("an input request");
    let second = tool(
        client,
        url,
        who,
        &call(
            12,
            "edit_note",
            args,
            json!({
                "requestState": state,
                "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}},
            }),
        ),
    )
    .await;
    assert_eq!(
        second["structuredContent"]["outcome"], "replaced",
        "{second}"
    );
}

/// Starts `slow_job` as a task through `url`: its id.
async fn start_task(client: &reqwest::Client, url: &str, who: &str, seconds: f64) -> String {
    let body = task_request(
        21,
        "tools/call",
        json!({"name": "slow_job", "arguments": {"seconds": seconds, "label": "fleet"}}),
    );
    let r = tool(client, url, who, &body).await;
    assert_eq!(r["resultType"], "task", "{r}");
    r["taskId"].as_str().expect("a task id").to_owned()
}

/// Two replicas of `serve` (`exe`) on the store `store` (and one notes file in `dir`): a
/// client listening on B for a note's URI and two tasks' ids hears, through the store's
/// feed, in order and once each: the acknowledgement; the note's
/// `notifications/resources/updated` after it was edited through A; task 2 cancelled
/// through A; task 1 completed on A. Every message carries the subscription id; nothing
/// else comes.
pub async fn a_listener_on_b_hears_what_is_done_through_a(
    exe: &str,
    dir: &Path,
    store: &[&str],
    label: &str,
) {
    let db = dir.join("notes.sqlite3");
    let (a, b) = (
        Replica::start(exe, &db, store),
        Replica::start(exe, &db, store),
    );
    let client = reqwest::Client::new();
    let who = format!("listener-{label}");

    let note = tool(
        &client,
        &a.url,
        &who,
        &call(
            10,
            "add_note",
            json!({"title": "fleet", "body": "before"}),
            json!({}),
        ),
    )
    .await;
    let id = note["structuredContent"]["id"].as_i64().expect("note id");
    let uri = note_uri(&client, &b.url, &who, id).await;
    let t1 = start_task(&client, &a.url, &who, 6.0).await;
    let t2 = start_task(&client, &a.url, &who, 120.0).await;
    // The changes raised so far (the note added, the tasks created) must have crossed to B
    // before the listen opens, or B's listener would hear them too: the SQLite feed polls
    // every 100 ms; PostgreSQL and Redis deliver in about a millisecond.
    tokio::time::sleep(Duration::from_millis(600)).await;

    let filter = json!({"resourceSubscriptions": [uri], "taskIds": [t1, t2]});
    let mut listen = Listen::open(&client, &b.url, &who, 77, filter).await;
    let ack = listen
        .next(Duration::from_secs(10))
        .await
        .expect("an acknowledgement");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], 77, "{ack}");
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!([uri]),
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([t1, t2]),
        "{ack}"
    );

    let started = Instant::now();
    edit_note(&client, &a.url, &who, id, "after, through A").await;
    let cancelled = tool(
        &client,
        &a.url,
        &who,
        &task_request(30, "tasks/cancel", json!({"taskId": t2})),
    )
    .await;
    assert!(
        cancelled.get("status").is_none_or(|s| s == "cancelled"),
        "{cancelled}"
    );

    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let done = |got: &[Value]| {
        got.iter().any(|m| {
            m["method"] == "notifications/tasks"
                && m["params"]["taskId"] == t1.as_str()
                && m["params"]["status"] == "completed"
        })
    };
    while !done(&got) && Instant::now() < deadline {
        if let Some(m) = listen.next(Duration::from_secs(1)).await {
            got.push(m);
        }
    }
    // anything more (a duplicate) would come soon after
    while let Some(m) = listen.next(Duration::from_secs(1)).await {
        got.push(m);
    }
    println!(
        "{label} fleet listen: {} notifications on B within {} ms of the edit through A: {}",
        got.len(),
        started.elapsed().as_millis(),
        got.iter()
            .map(|m| format!(
                "{} {}",
                m["method"].as_str().unwrap_or("?"),
                m["params"]["status"].as_str().unwrap_or("")
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for m in &got {
        assert_eq!(m["params"]["_meta"][SUBSCRIPTION_ID], 77, "{m}");
        assert!(
            ["notifications/resources/updated", "notifications/tasks"]
                .contains(&m["method"].as_str().unwrap_or("")),
            "a notification not asked for: {m}"
        );
    }
    let seen: Vec<(String, String)> = got
        .iter()
        .map(|m| {
            if m["method"] == "notifications/resources/updated" {
                (
                    "updated".to_owned(),
                    m["params"]["uri"].as_str().unwrap_or("").to_owned(),
                )
            } else {
                (
                    m["params"]["taskId"].as_str().unwrap_or("").to_owned(),
                    m["params"]["status"].as_str().unwrap_or("").to_owned(),
                )
            }
        })
        .collect();
    let position = |k: &(String, String)| {
        let hits: Vec<usize> = (0..seen.len()).filter(|&i| &seen[i] == k).collect();
        assert_eq!(hits.len(), 1, "{k:?} heard {} times: {seen:?}", hits.len());
        hits[0]
    };
    let edited = position(&("updated".to_owned(), uri.clone()));
    let t2_cancelled = position(&(t2.clone(), "cancelled".to_owned()));
    let t1_completed = position(&(t1.clone(), "completed".to_owned()));
    assert!(
        edited < t2_cancelled && t2_cancelled < t1_completed,
        "out of order: {seen:?}"
    );
    // no other URI, no other task
    for (k, v) in &seen {
        assert!(
            (k == "updated" && v == &uri) || k == &t1 || k == &t2,
            "not asked for: {k} {v}"
        );
    }
    drop((a, b));
}
