//! A client transport over newline-delimited JSON-RPC: a child process's stdin/stdout
//! ([`LineTransport::spawn`]) or any pair of async streams.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::BoxFuture;
use crate::transport::{ClientTransport, Exchange, TransportError};

struct Io<W, R> {
    writer: W,
    reader: R,
}

/// Sends one JSON message per line and reads lines until the response with the same id.
/// Requests are serialized: one exchange at a time.
pub struct LineTransport<W, R> {
    io: Mutex<Io<W, R>>,
    child: Option<Mutex<tokio::process::Child>>,
}

impl<W, R> std::fmt::Debug for LineTransport<W, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineTransport")
            .field("child", &self.child.is_some())
            .finish_non_exhaustive()
    }
}

impl<W, R> LineTransport<W, R>
where
    W: AsyncWrite + Unpin + Send,
    R: AsyncBufRead + Unpin + Send,
{
    /// A transport writing requests to `writer` and reading responses from `reader`.
    pub fn new(writer: W, reader: R) -> Self {
        Self {
            io: Mutex::new(Io { writer, reader }),
            child: None,
        }
    }
}

/// The transport type of a spawned child process.
pub type ChildTransport =
    LineTransport<tokio::process::ChildStdin, BufReader<tokio::process::ChildStdout>>;

impl ChildTransport {
    /// Spawns `command` with piped stdin/stdout (stderr is inherited, for its logs).
    /// The child is killed when the transport is dropped.
    ///
    /// # Errors
    /// When the process cannot be spawned.
    pub fn spawn(mut command: tokio::process::Command) -> std::io::Result<Self> {
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("child has no stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("child has no stdout"))?;
        Ok(Self {
            io: Mutex::new(Io {
                writer: stdin,
                reader: BufReader::new(stdout),
            }),
            child: Some(Mutex::new(child)),
        })
    }

    /// Closes the child's stdin (its end of input) and waits for it to exit.
    ///
    /// # Errors
    /// When waiting fails.
    pub async fn close(self) -> std::io::Result<Option<std::process::ExitStatus>> {
        let Self { io, child } = self;
        drop(io);
        match child {
            Some(c) => Ok(Some(c.into_inner().wait().await?)),
            None => Ok(None),
        }
    }
}

impl<W, R> ClientTransport for LineTransport<W, R>
where
    W: AsyncWrite + Unpin + Send,
    R: AsyncBufRead + Unpin + Send,
{
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        Box::pin(async move { Ok(self.exchange(message).await?.response) })
    }

    /// Keeps the notification lines read before the response.
    fn exchange<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Exchange, TransportError>> {
        Box::pin(async move {
            let io_err = |e: std::io::Error| TransportError::Io(e.to_string());
            let id = message.get("id").cloned();
            let mut line =
                serde_json::to_vec(&message).map_err(|e| TransportError::Io(e.to_string()))?;
            line.push(b'\n');
            let mut io = self.io.lock().await;
            io.writer.write_all(&line).await.map_err(io_err)?;
            io.writer.flush().await.map_err(io_err)?;
            let Some(id) = id else {
                return Ok(Exchange::default());
            };
            let mut notifications = Vec::new();
            let mut buf = String::new();
            loop {
                buf.clear();
                let n = io.reader.read_line(&mut buf).await.map_err(io_err)?;
                if n == 0 {
                    return Err(TransportError::Io(
                        "the server closed its output before answering".into(),
                    ));
                }
                if buf.trim().is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(buf.trim())
                    .map_err(|e| TransportError::InvalidResponse(e.to_string()))?;
                let is_response = v.get("result").is_some() || v.get("error").is_some();
                // Our response, or an error the server could not attribute to an id.
                if is_response && (v.get("id") == Some(&id) || v.get("id").is_none()) {
                    return Ok(Exchange {
                        notifications,
                        response: Some(v),
                        retry_after: None,
                    });
                }
                // Notifications (progress, logs) are kept; other traffic is skipped. One
                // exchange at a time, so every notification belongs to this request.
                if !is_response && v.get("method").is_some() && v.get("id").is_none() {
                    notifications.push(v);
                }
            }
        })
    }
}
