//! Serving the router: binding, the accept loop with its connection bounds and header read
//! timeout, graceful shutdown ([`HttpHandle`]), and the warning for exposed endpoints.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;

use crate::server::Server;

use super::config::*;
use super::router::*;

/// Binds `addr` and serves the endpoint until the process ends. With the default
/// [`OriginPolicy`], localhost origins are accepted only when `addr` is a loopback address.
///
/// # Errors
/// When binding or serving fails.
pub async fn serve(
    addr: SocketAddr,
    server: impl Into<Arc<Server>>,
    config: HttpConfig,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let config = resolve_for(config, &local);
    tracing::info!(address = %local, path = %config.path, "serving MCP over Streamable HTTP");
    let limits = ConnectionLimits::of(&config);
    accept_loop(
        listener,
        router(server, config),
        limits,
        std::future::pending(),
    )
    .await;
    Ok(())
}

/// What [`accept_loop`] enforces per connection.
#[derive(Clone, Copy)]
struct ConnectionLimits {
    max_connections: usize,
    header_read_timeout: Duration,
}

impl ConnectionLimits {
    fn of(config: &HttpConfig) -> Self {
        Self {
            max_connections: config.max_connections.max(1),
            header_read_timeout: config.header_read_timeout,
        }
    }
}

/// Accepts HTTP/1.1 connections until `shutdown` resolves, then lets open connections
/// finish (graceful shutdown). Beyond `max_connections` a new connection is closed at once;
/// a client that does not send its headers within `header_read_timeout` is disconnected.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()>,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
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
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
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
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
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
/// When binding fails.
pub async fn spawn(
    addr: SocketAddr,
    server: impl Into<Arc<Server>>,
    config: HttpConfig,
) -> std::io::Result<HttpHandle> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let config = resolve_for(config, &local);
    let path = config.path.clone();
    let limits = ConnectionLimits::of(&config);
    let app = router(server, config);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        accept_loop(listener, app, limits, async move {
            let _ = rx.await;
        })
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

fn resolve_for(mut config: HttpConfig, addr: &SocketAddr) -> HttpConfig {
    if config.origins.allow_localhost.is_none() {
        config.origins.allow_localhost = Some(addr.ip().is_loopback());
    }
    warn_if_exposed(addr, &config);
    config
}

/// Whether serving `config` at `addr` lets anyone in from beyond this machine: a
/// non-loopback address with an authenticator that [admits
/// anyone](Authenticator::admits_anyone) (the default [`AnonymousAuth`] among them).
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
