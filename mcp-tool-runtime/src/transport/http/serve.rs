//! Serving the endpoint: binding, the accept loop with its connection bounds (count, header
//! read timeout, write timeout, send buffer) and each connection's service
//! ([`Connection`]), graceful shutdown ([`HttpHandle`]), and the warning for exposed
//! endpoints.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::server::Server;

use super::config::*;
use super::connection::Connection;
use super::endpoint::Endpoint;
use super::post::handle_post;
use super::router::*;

/// Binds `addr` and serves the endpoint until the process ends. With the default
/// [`OriginPolicy`], localhost origins are accepted only when `addr` is a loopback address.
///
/// # Errors
/// When `config` does not [validate](HttpConfig::validate) (`InvalidInput`, saying why),
/// or binding or serving fails.
pub async fn serve(
    addr: SocketAddr,
    server: impl Into<Arc<Server>>,
    config: HttpConfig,
) -> std::io::Result<()> {
    let (listener, local, config) = bind(addr, config).await?;
    tracing::info!(address = %local, path = %config.path, "serving MCP over Streamable HTTP");
    let limits = ConnectionLimits::of(&config);
    let server: Arc<Server> = server.into();
    accept_loop(
        listener,
        endpoint(server.clone(), config),
        limits,
        std::future::pending(),
        server,
    )
    .await;
    Ok(())
}

/// What [`accept_loop`] enforces per connection.
#[derive(Clone, Copy)]
struct ConnectionLimits {
    max_connections: usize,
    header_read_timeout: Duration,
    write_timeout: Duration,
    send_buffer_bytes: Option<usize>,
}

impl ConnectionLimits {
    fn of(config: &HttpConfig) -> Self {
        Self {
            max_connections: config.max_connections.max(1),
            header_read_timeout: config.header_read_timeout,
            write_timeout: config.write_timeout,
            send_buffer_bytes: config.send_buffer_bytes,
        }
    }
}

/// A connection whose writes fail (and so close it) once one has made no progress for
/// `timeout`: a client that stops reading cannot keep its connection and the answers
/// queued for it.
struct WriteTimeout<S> {
    inner: S,
    timeout: Duration,
    /// Running while a write (or flush, or shutdown) waits for room.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<S> WriteTimeout<S> {
    fn new(inner: S, timeout: Duration) -> Self {
        Self {
            inner,
            timeout,
            stalled: None,
        }
    }

    /// `polled` as it is when it is ready (progress: the clock stops); pending, the clock
    /// runs, and an error once it has run out.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if polled.is_ready() {
            self.stalled = None;
            return polled;
        }
        let timeout = self.timeout;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match stalled.as_mut().poll(cx) {
            Poll::Ready(()) => {
                throttled_warn!(
                    timeout_ms = timeout.as_millis() as u64,
                    "a client did not read its answers in time: closing the connection"
                );
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "write made no progress in time",
                )))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteTimeout<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteTimeout<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.watch(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.watch(cx, polled)
    }
}

/// Accepts HTTP/1.1 connections until `shutdown` resolves, then closes `server`'s
/// `subscriptions/listen` subscriptions gracefully (each stream gets its result and ends)
/// and lets open connections finish (graceful shutdown). Beyond `max_connections` a new connection is closed at once;
/// a client that does not send its headers within `header_read_timeout`, or does not read
/// what is written to it within `write_timeout`, is disconnected; a connection's kernel
/// send buffer is `send_buffer_bytes`.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    endpoint: Arc<Endpoint>,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()>,
    server: Arc<Server>,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let service = Connection::new(endpoint.clone(), routes(endpoint), handle_post);
    let open = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and the like: back off instead of spinning.
                throttled_warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            throttled_warn!(
                max_connections = limits.max_connections,
                "connection limit reached: closing a new connection"
            );
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        if let Some(bytes) = limits.send_buffer_bytes
            && let Err(e) = socket2::SockRef::from(&stream).set_send_buffer_size(bytes)
        {
            throttled_warn!(error = %e, "could not set a connection's send buffer");
        }
        let io = TokioIo::new(WriteTimeout::new(stream, limits.write_timeout));
        let conn = graceful.watch(builder.serve_connection(io, service.for_peer(peer)));
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    server.close_subscriptions();
    graceful.shutdown().await;
}

/// A server started by [`spawn`]: its address, and shutdown on [`HttpHandle::shutdown`] or drop.
#[derive(Debug)]
pub struct HttpHandle {
    addr: SocketAddr,
    path: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl HttpHandle {
    /// The bound address (useful after binding port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint URL, e.g. `http://127.0.0.1:41234/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// Stops accepting connections and waits for the server task to end.
    ///
    /// # Errors
    /// The server task's I/O error, if it failed.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.task.take() {
            Some(task) => task
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string()))),
            None => Ok(()),
        }
    }
}

impl Drop for HttpHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Binds `addr` (port 0 picks a free port) and serves the endpoint on a background task.
///
/// # Errors
/// When `config` does not [validate](HttpConfig::validate) (`InvalidInput`, saying why),
/// or binding fails.
pub async fn spawn(
    addr: SocketAddr,
    server: impl Into<Arc<Server>>,
    config: HttpConfig,
) -> std::io::Result<HttpHandle> {
    let (listener, local, config) = bind(addr, config).await?;
    let path = config.path.clone();
    let limits = ConnectionLimits::of(&config);
    let server: Arc<Server> = server.into();
    let endpoint = endpoint(server.clone(), config);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        accept_loop(
            listener,
            endpoint,
            limits,
            async move {
                let _ = rx.await;
            },
            server,
        )
        .await;
        Ok(())
    });
    Ok(HttpHandle {
        addr: local,
        path,
        shutdown: Some(tx),
        task: Some(task),
    })
}

/// `config` [validated](HttpConfig::validate) (an I/O error, `InvalidInput`, when not),
/// `addr` bound, and the config resolved for the bound address (localhost origins allowed
/// by default only on a loopback address; a warning when exposed).
async fn bind(
    addr: SocketAddr,
    mut config: HttpConfig,
) -> io::Result<(tokio::net::TcpListener, SocketAddr, HttpConfig)> {
    config
        .validate()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    if config.origins.allow_localhost.is_none() {
        config.origins.allow_localhost = Some(local.ip().is_loopback());
    }
    warn_if_exposed(&local, &config);
    Ok((listener, local, config))
}

/// Whether serving `config` at `addr` lets anyone in from beyond this machine: a
/// non-loopback address with an authenticator that [admits
/// anyone](crate::transport::auth::Authenticator::admits_anyone) (the default
/// [`AnonymousAuth`](crate::transport::auth::AnonymousAuth) among them).
pub fn exposes_anyone(addr: &SocketAddr, config: &HttpConfig) -> bool {
    !addr.ip().is_loopback() && config.authenticator.admits_anyone()
}

/// Logs a warning when [`exposes_anyone`] holds ([`serve`] and [`spawn`] call it).
pub fn warn_if_exposed(addr: &SocketAddr, config: &HttpConfig) {
    if exposes_anyone(addr, config) {
        tracing::warn!(
            address = %addr,
            "serving MCP on a non-loopback address with an authenticator that admits anyone \
             (anonymous or unverified callers): every caller on the network can use the tools; \
             configure a real Authenticator (HttpConfig::authenticator) or bind 127.0.0.1"
        );
    }
}
