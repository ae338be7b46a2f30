//! `https://`: the framework's Streamable HTTP server (`transport::http::router`) behind TLS
//! with a self-signed certificate made here (rcgen), reached by `HttpTransport` and by the
//! `mcp-tool` binary, trusting that certificate through `trusting_pem` / `--ca-cert`.
//! Without it the certificate is refused: verification stays on.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use mcp_tool_client::{ClientTransport, Driver, HttpTransport, ScriptedHost};
use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::protocol::{CallToolResult, ClientCapabilities, Implementation};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::http::{HttpConfig, router};
use mcp_tool_runtime::{
    Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step},
};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{ServerConfig, crypto};

const CLIENT: &str = env!("CARGO_BIN_EXE_mcp-tool");

/// `greet {name}`: one required string of at least two characters.
struct Greet;

impl Tool for Greet {
    fn info(&self) -> ToolInfo {
        let schema = json!({"type": "object",
            "properties": {"name": {"type": "string", "minLength": 2, "description": "Who."}},
            "required": ["name"]});
        let Value::Object(schema) = schema else {
            unreachable!("a JSON object literal")
        };
        ToolInfo::new("greet").input_schema(schema)
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            let args: Value = mcp_tool_runtime::manual::parse_args(args)?;
            let name = args["name"].as_str().unwrap_or("?");
            Ok(Step::Complete(CallToolResult::text(format!(
                "Hello, {name}!"
            ))))
        })
    }
}

/// Serves the framework's router over TLS on 127.0.0.1 with a new self-signed certificate
/// for `localhost` and `127.0.0.1`; returns the endpoint URL and the certificate (PEM).
async fn tls_server() -> (String, String) {
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap();
    let cert_pem = certified.cert.pem();
    let cert = CertificateDer::from(certified.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let tls = ServerConfig::builder_with_provider(Arc::new(crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(tls));

    let server = Server::builder(Implementation::new("tls-test", "1"))
        .tool(Greet)
        .build()
        .unwrap();
    let app = router(server, HttpConfig::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let (acceptor, app) = (acceptor.clone(), app.clone());
            tokio::spawn(async move {
                // A client that refuses the certificate ends the handshake: nothing to serve.
                let Ok(stream) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = TowerToHyperService::new(app);
                let _ = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (format!("https://localhost:{}/mcp", addr.port()), cert_pem)
}

#[tokio::test]
async fn http_transport_reaches_a_tls_server_trusting_its_certificate() {
    let (url, pem) = tls_server().await;
    let t = HttpTransport::new(url.clone())
        .trusting_pem(pem.as_bytes())
        .unwrap();
    let mut d = Driver::new(t, ScriptedHost::new(ClientCapabilities::default()));
    d.discover().await.unwrap();
    let out = d.call_tool("greet", json!({"name": "TLS"})).await.unwrap();
    assert_eq!(out.text(), "Hello, TLS!");

    // The same server without trusting its certificate: refused during the handshake.
    let untrusted = HttpTransport::new(url);
    let e = untrusted
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, mcp_tool_client::TransportError::Io(m) if m.contains("certificate")),
        "{e:?}"
    );

    // Not a certificate at all: a configuration error, not a client that trusts nothing new.
    let e = HttpTransport::new("https://localhost:1/mcp")
        .trusting_pem(b"not a certificate")
        .unwrap_err();
    assert!(
        matches!(e, mcp_tool_client::TransportError::Config(_)),
        "{e:?}"
    );
}

/// Runs the client binary with `args`, `stdin` piped in; (success, stdout, stderr).
async fn run_client(args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = tokio::process::Command::new(CLIENT)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("mcp-tool starts");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).await.unwrap();
    drop(input);
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("mcp-tool finishes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    println!("{stdout}\n{stderr}");
    (out.status.success(), stdout, stderr)
}

#[tokio::test]
async fn the_cli_calls_over_https_with_ca_cert_asking_the_arguments_per_field() {
    let (url, pem) = tls_server().await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pem).unwrap();
    let ca = ca.to_str().unwrap();

    // `name` is asked from the inputSchema: "X" is too short and asked again.
    let (ok, out, _) = run_client(
        &["--url", &url, "--ca-cert", ca, "--call", "greet"],
        "X\nWorld\n",
    )
    .await;
    assert!(ok, "{out}");
    assert!(out.contains("server tls-test 1"), "{out}");
    assert!(out.contains("── arguments of `greet`"), "{out}");
    assert!(out.contains("at least 2 characters; try again"), "{out}");
    assert!(
        out.contains("→ tools/call (id 3) greet {\"name\":\"World\"}"),
        "{out}"
    );
    assert!(out.contains("Hello, World!"), "{out}");

    // `--args` for scripts, the same endpoint.
    let (ok, out, _) = run_client(
        &[
            "--url",
            &url,
            "--ca-cert",
            ca,
            "--call",
            "greet",
            "--args",
            r#"{"name":"Script"}"#,
        ],
        "",
    )
    .await;
    assert!(ok, "{out}");
    assert!(out.contains("Hello, Script!"), "{out}");

    // Without --ca-cert the self-signed certificate is refused (no retries to wait for).
    let (ok, _, err) = run_client(&["--url", &url, "--retries", "0", "--list"], "").await;
    assert!(!ok);
    assert!(err.contains("server/discover"), "{err}");
    assert!(err.contains("certificate"), "{err}");
}
