//! The stdio transport: newline-delimited JSON-RPC, one message per line, on
//! stdin/stdout. Logs must go to stderr (in binaries, configure `tracing-subscriber`
//! with `.with_writer(std::io::stderr)`), because stdout carries only protocol messages.
//!
//! Lines are handled concurrently (up to [`StdioConfig::max_in_flight`] at once); each
//! response is written by a single writer task as one complete line, so responses never
//! interleave, though they may come back in a different order than the requests (JSON-RPC
//! matches them by id). Notifications of a request (`notifications/progress`, when the
//! request's `_meta` has a `progressToken`) are written as lines before its response.
//! Serving ends at end of input, after every in-flight request
//! has been answered.
//!
//! Dual era: an `initialize` line opens the process's legacy session (see
//! [`ServerBuilder::legacy`](crate::ServerBuilder::legacy)). From then on, lines without modern `_meta` belong to it: requests are
//! handled concurrently as above, with the tool's requests to the client written as lines
//! before the response; the client's responses are routed to the waiting calls as they
//! arrive. At end of input, calls waiting for the client's answers fail (nobody can answer
//! them); every request is still answered.
//!
//! The session's notifications (`notifications/*/list_changed` of a dynamic server,
//! `notifications/resources/updated` for its subscriptions) are written as lines as they
//! happen, from when `initialize` is answered until end of input. A client that reads too
//! slowly holds the writer back; once the session's listener falls
//! [`HUB_CAPACITY`](crate::changes::HUB_CAPACITY) changes behind, the changes it missed
//! are replaced by every `list_changed` (the client re-lists) and updates are lost.

use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Semaphore, mpsc};

use super::error_response;
use crate::legacy::{self, Route, Session};
use crate::notify::NotificationSink;
use crate::principal::Principal;
use crate::protocol::errors;
use crate::protocol::{INVALID_REQUEST, JsonRpcResponse, PARSE_ERROR, Reply, RequestId};
use crate::server::{Listened, Server};
use crate::sync::lock;

/// Default longest accepted line: 1 MiB (the HTTP body limit, `DEFAULT_MAX_BODY_BYTES` of
/// `transport::http`, for the same reasons; the build checks that the two are equal).
pub const DEFAULT_MAX_LINE_BYTES: usize = 1024 * 1024;
#[cfg(feature = "http-server")]
const _: () = assert!(DEFAULT_MAX_LINE_BYTES == super::http::DEFAULT_MAX_BODY_BYTES);

/// Configuration of the stdio transport.
#[derive(Debug, Clone)]
pub struct StdioConfig {
    /// The principal every message is handled as (default: anonymous). A stdio server
    /// has exactly one client: the process that spawned it.
    pub principal: Principal,
    /// Longest accepted line in bytes; longer lines are answered with -32600 and skipped.
    pub max_line_bytes: usize,
    /// How many messages may be handled at once (at least 1; 1 = strictly sequential).
    pub max_in_flight: usize,
}

impl Default for StdioConfig {
    fn default() -> Self {
        Self {
            principal: Principal::anonymous(),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_in_flight: 32,
        }
    }
}

impl StdioConfig {
    /// Sets the principal.
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = principal;
        self
    }

    /// Sets the line limit.
    pub fn max_line_bytes(mut self, limit: usize) -> Self {
        self.max_line_bytes = limit;
        self
    }

    /// Sets the concurrency limit (1 = handle one line at a time, answer in order).
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }
}

/// Serves `server` on the process's stdin/stdout until stdin reaches end of file.
///
/// # Errors
/// I/O errors on stdin or stdout.
pub async fn serve_stdio(
    server: impl Into<Arc<Server>>,
    config: StdioConfig,
) -> std::io::Result<()> {
    let stdin = tokio::io::BufReader::new(tokio::io::stdin());
    let stdout = tokio::io::stdout();
    serve(server, stdin, stdout, config).await
}

enum Line {
    Eof,
    TooLong,
    Data(Vec<u8>),
}

async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, max: usize) -> std::io::Result<Line> {
    let mut buf = Vec::new();
    let mut too_long = false;
    let mut saw_any = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            if !saw_any {
                return Ok(Line::Eof);
            }
            break;
        }
        saw_any = true;
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !too_long {
            if buf.len() + chunk.len() > max {
                too_long = true;
                buf = Vec::new();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let consumed = done.unwrap_or(available.len());
        reader.consume(consumed);
        if done.is_some() {
            break;
        }
    }
    if too_long {
        Ok(Line::TooLong)
    } else {
        Ok(Line::Data(buf))
    }
}

/// A line's text and its JSON (`None` for a blank line or the end of input); `Err` is the
/// error to answer a line with that is too long (over `limit`), not UTF-8 or not JSON.
fn parse_line(line: Line, limit: usize) -> Result<Option<(String, Value)>, (i64, &'static str)> {
    let text = match line {
        Line::Eof => return Ok(None),
        Line::TooLong => {
            tracing::warn!(limit, "stdio line too long; skipped");
            return Err((INVALID_REQUEST, "Invalid Request: message too large"));
        }
        Line::Data(d) => String::from_utf8(d).map_err(|_| (PARSE_ERROR, "Parse error"))?,
    };
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let message = serde_json::from_str(trimmed).map_err(|_| (PARSE_ERROR, "Parse error"))?;
    Ok(Some((text, message)))
}

/// Serves `server` on any line reader and writer (stdin/stdout, pipes, in-memory
/// duplex streams in tests) until the reader reaches end of input.
///
/// # Errors
/// I/O errors on the reader or writer.
pub async fn serve<R, W>(
    server: impl Into<Arc<Server>>,
    mut reader: R,
    writer: W,
    config: StdioConfig,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let server: Arc<Server> = server.into();
    let principal = Arc::new(config.principal.clone());
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(64);
    let writer_task = tokio::spawn(async move {
        let mut writer = writer;
        while let Some(mut line) = rx.recv().await {
            line.push(b'\n');
            writer.write_all(&line).await?;
            writer.flush().await?;
        }
        Ok::<(), std::io::Error>(())
    });
    let limit = Arc::new(Semaphore::new(config.max_in_flight.max(1)));
    // The legacy session of this process, once `initialize` opened it, and the task that
    // writes its notifications.
    let mut session: Option<Arc<Session>> = None;
    let mut notifier: Option<tokio::task::JoinHandle<()>> = None;
    let mut tasks = tokio::task::JoinSet::new();
    let listens = Listens::default();

    let read_result = loop {
        if tx.is_closed() {
            // The writer failed (e.g. stdout closed): nobody can read answers any more.
            break Ok(());
        }
        let line = match read_line(&mut reader, config.max_line_bytes).await {
            Ok(Line::Eof) => break Ok(()),
            Ok(line) => parse_line(line, config.max_line_bytes),
            Err(e) => break Err(e),
        };
        let (text, message) = match line {
            Ok(Some(line)) => line,
            Ok(None) => continue,
            Err((code, what)) => {
                if send_value(&tx, &error_response(None, code, what))
                    .await
                    .is_err()
                {
                    break Ok(());
                }
                continue;
            }
        };
        let trimmed = text.trim();
        // `initialize` opens the process's legacy session, answered before the next line
        // is read; in the session, the client's responses and notifications are routed at
        // once (a tool waiting for an answer holds a slot of `max_in_flight`).
        // routed by the members read from the text (no copy of the tree written back to text)
        let route = crate::protocol::text::MessageIn::parse(trimmed)
            .map_or(Route::Session, |m| legacy::route_in(&m));
        let in_session = match route {
            Route::Initialize => {
                let resp = match &session {
                    Some(_) => JsonRpcResponse::error(
                        message.get("id").and_then(RequestId::from_value),
                        errors::invalid_request(
                            "Invalid Request: this session is already initialized",
                        ),
                    ),
                    None => {
                        let (opened, resp) = server.initialize(&message, &principal);
                        session = opened;
                        resp
                    }
                };
                // listening starts before the answer: no change after it is missed
                let changes = server.changes().subscribe();
                if send_value(&tx, &resp.to_value()).await.is_err() {
                    break Ok(());
                }
                if let (Some(s), None) = (&session, &notifier) {
                    notifier = Some(tokio::spawn(notify_session(
                        server.clone(),
                        s.clone(),
                        changes,
                        tx.clone(),
                    )));
                }
                continue;
            }
            Route::Modern => None,
            Route::Session => session.clone(),
        };
        // `subscriptions/listen` runs on its own task for as long as it lasts, without a
        // slot of `max_in_flight` (the subscription caps bound it); `notifications/cancelled`
        // naming one ends it.
        if in_session.is_none() && crate::server::listen::is_listen(&message) {
            listens
                .open(&server, &principal, &tx, &mut tasks, message)
                .await;
            continue;
        }
        if listens.cancel(&message) {
            continue;
        }
        if let Some(s) = &in_session
            && !is_request(&message)
        {
            let _ = server
                .handle_in_session(s.clone(), message, NotificationSink::none())
                .await;
            continue;
        }
        let Ok(permit) = limit.clone().acquire_owned().await else {
            break Ok(());
        };
        let server = server.clone();
        let principal = principal.clone();
        let tx = tx.clone();
        tasks.spawn(async move {
            let _permit = permit;
            // Messages of this request (progress; in a legacy session the tool's requests to
            // the client) are written as lines before its response, as they are produced.
            let (sink, mut notes) = NotificationSink::channel();
            let handling: crate::error::BoxFuture<'_, Option<Reply>> = match in_session {
                Some(s) => {
                    let answer = server.handle_in_session(s, message, sink);
                    Box::pin(async move { answer.await.map(Reply::from) })
                }
                // a modern request is read again from its text (the typed request path)
                None => server.handle_text(&text, &principal, sink),
            };
            tokio::pin!(handling);
            let answer = loop {
                tokio::select! {
                    biased;
                    Some(n) = notes.recv() => { let _ = send_value(&tx, &n).await; }
                    answer = &mut handling => break answer,
                }
            };
            while let Ok(n) = notes.try_recv() {
                let _ = send_value(&tx, &n).await;
            }
            if let Some(resp) = answer {
                match resp.to_vec() {
                    Ok(bytes) => {
                        let _ = tx.send(bytes).await;
                    }
                    Err(e) => tracing::error!(error = %e, "could not serialize a response"),
                }
            }
        });
        // Reap finished tasks so the set does not grow without bound.
        while tasks.try_join_next().is_some() {}
    };

    // The client can send nothing more: calls waiting for its answers fail (their tools
    // report it), the others complete and are answered.
    if let Some(s) = &session {
        s.end_of_input();
    }
    // Open subscriptions end gracefully: each gets its `subscriptions/listen` result.
    listens.end_of_input();
    while tasks.join_next().await.is_some() {}
    if let Some(n) = notifier {
        n.abort();
        let _ = n.await;
    }
    drop(tx);
    let write_result = writer_task
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
    read_result.and(write_result)
}

/// The open `subscriptions/listen` subscriptions of this stdio connection.
#[derive(Default)]
struct Listens {
    /// What ends each one, by the id of its request.
    open: Arc<
        std::sync::Mutex<std::collections::HashMap<RequestId, tokio::sync::oneshot::Sender<()>>>,
    >,
    /// Set at end of input (the graceful end of every subscription).
    eof: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Listens {
    /// Opens the subscription of `message` and drives it on a task of `tasks`: its messages
    /// are written as lines, until `notifications/cancelled` names it (no response), it
    /// lags (the server sends `notifications/cancelled` for it) or input ends (its result).
    async fn open(
        &self,
        server: &Arc<Server>,
        principal: &Arc<Principal>,
        tx: &mpsc::Sender<Vec<u8>>,
        tasks: &mut tokio::task::JoinSet<()>,
        message: Value,
    ) {
        let Some(id) = message.get("id").and_then(RequestId::from_value) else {
            let resp = error_response(None, INVALID_REQUEST, "Invalid Request: bad id");
            let _ = send_value(tx, &resp).await;
            return;
        };
        let (cancel, mut cancelled) = tokio::sync::oneshot::channel::<()>();
        let duplicate = {
            let mut open = lock(&self.open);
            if open.contains_key(&id) {
                true
            } else {
                open.insert(id.clone(), cancel);
                false
            }
        };
        if duplicate {
            let resp = JsonRpcResponse::error(
                Some(id),
                errors::invalid_request(
                    "Invalid Request: a subscription with this id is already open",
                ),
            );
            let _ = send_value(tx, &resp.to_value()).await;
            return;
        }
        let (server, principal, tx) = (server.clone(), principal.clone(), tx.clone());
        let open = self.open.clone();
        let mut eof = self.eof.subscribe();
        tasks.spawn(async move {
            let subscription = server.listen(&message, &principal).await;
            let mut subscription = match subscription {
                Ok(s) => s,
                Err(refused) => {
                    lock(&open).remove(&id);
                    let _ = send_value(&tx, &refused.to_value()).await;
                    return;
                }
            };
            loop {
                let step = {
                    let next = subscription.next();
                    tokio::pin!(next);
                    tokio::select! {
                        biased;
                        _ = &mut cancelled => Step::Cancelled,
                        _ = eof.wait_for(|e| *e) => Step::EndOfInput,
                        listened = &mut next => Step::Next(listened),
                    }
                };
                let last = !matches!(step, Step::Next(Listened::Notification(_)));
                let line = match step {
                    Step::Cancelled => break,
                    Step::EndOfInput => subscription.close().to_value(),
                    Step::Next(Listened::Notification(n)) => n,
                    Step::Next(Listened::Closed(result)) => result.to_value(),
                    Step::Next(Listened::Lagged) => subscription.cancelled(),
                };
                if send_value(&tx, &line).await.is_err() || last {
                    break;
                }
            }
            lock(&open).remove(&id);
        });
    }

    /// Ends the subscription a `notifications/cancelled` names; whether it named one.
    fn cancel(&self, message: &Value) -> bool {
        if message.get("method").and_then(Value::as_str) != Some("notifications/cancelled")
            || message.get("id").is_some()
        {
            return false;
        }
        let Some(id) = message
            .get("params")
            .and_then(|p| p.get("requestId"))
            .and_then(RequestId::from_value)
        else {
            return false;
        };
        let cancel = lock(&self.open).remove(&id);
        match cancel {
            Some(cancel) => {
                let _ = cancel.send(());
                true
            }
            None => false,
        }
    }

    fn end_of_input(&self) {
        self.eof.send_replace(true);
    }
}

/// What ended the wait for a subscription's next message.
enum Step {
    /// `notifications/cancelled` named it.
    Cancelled,
    /// Input ended.
    EndOfInput,
    /// Its next message.
    Next(Listened),
}

/// Writes the notifications of the process's session as lines until it closes, the hub
/// goes, or stdout does.
async fn notify_session(
    server: Arc<Server>,
    session: Arc<Session>,
    mut changes: tokio::sync::broadcast::Receiver<Arc<crate::changes::Change>>,
    tx: mpsc::Sender<Vec<u8>>,
) {
    use crate::server::SessionNotice;
    loop {
        let messages = match server
            .next_session_notification(&session, &mut changes)
            .await
        {
            SessionNotice::Message(m) => vec![m],
            SessionNotice::Lagged => {
                throttled_warn!(
                    "the stdio session fell behind the hub of changes; telling it to re-list"
                );
                server.all_list_changed()
            }
            SessionNotice::Closed => return,
        };
        for m in &messages {
            if send_value(&tx, m).await.is_err() {
                return;
            }
        }
    }
}

/// Whether `message` is a request (a method and an id), which gets a response.
fn is_request(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_some()
}

async fn send_value(tx: &mpsc::Sender<Vec<u8>>, v: &Value) -> Result<(), ()> {
    let bytes = serde_json::to_vec(v).map_err(|_| ())?;
    tx.send(bytes).await.map_err(|_| ())
}
