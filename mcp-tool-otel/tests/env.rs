//! What `layer()` makes of the `OTEL_*` variables: export off without an endpoint or when
//! the SDK is disabled or another exporter is named, a refused gRPC without the feature
//! `grpc`, and an OTLP/HTTP exporter that posts the runtime's spans (not others) to
//! `/v1/traces` when its guard flushes, and reports an export nobody answers.
//!
//! One test: the variables are the process's, and the steps set them one after another.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use tracing_subscriber::Registry;
use tracing_subscriber::layer::SubscriberExt as _;

/// Sets (`Some`) or removes (`None`) each variable.
fn env(vars: &[(&str, Option<&str>)]) {
    for (k, v) in vars {
        // SAFETY: this test binary has one test, and no other thread reads the environment
        // while it changes (the exporter's threads start after, in `layer()`).
        unsafe {
            match v {
                Some(v) => std::env::set_var(k, v),
                None => std::env::remove_var(k),
            }
        }
    }
}

#[test]
fn the_variables_decide_whether_and_how_spans_are_exported() {
    const ALL: &[&str] = &[
        "OTEL_SDK_DISABLED",
        "OTEL_TRACES_EXPORTER",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
    ];
    env(&ALL.iter().map(|k| (*k, None)).collect::<Vec<_>>());

    // no endpoint: off
    assert!(mcp_tool_otel::layer::<Registry>().unwrap().is_none());
    // an endpoint, but the SDK disabled, or another exporter named: off
    env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", Some("http://127.0.0.1:9")),
        ("OTEL_SDK_DISABLED", Some("TRUE")),
    ]);
    assert!(mcp_tool_otel::layer::<Registry>().unwrap().is_none());
    env(&[
        ("OTEL_SDK_DISABLED", Some("false")),
        ("OTEL_TRACES_EXPORTER", Some("console, zipkin")),
    ]);
    assert!(mcp_tool_otel::layer::<Registry>().unwrap().is_none());

    // gRPC: refused without the feature (with it, made inside a Tokio runtime)
    env(&[
        ("OTEL_TRACES_EXPORTER", Some("console,otlp")),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", Some("grpc")),
    ]);
    #[cfg(not(feature = "grpc"))]
    {
        let err = mcp_tool_otel::layer::<Registry>().err().expect("refused");
        assert!(err.0.contains("`grpc`"), "{err}");
    }
    #[cfg(feature = "grpc")]
    {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _in = rt.enter();
        let made = mcp_tool_otel::layer::<Registry>().unwrap();
        assert!(made.is_some());
    }

    // OTLP/HTTP (the default protocol): the runtime's span is posted on flush, another
    // target's is not
    let (port, posts) = collector();
    env(&[
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", None),
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            Some(&format!("http://127.0.0.1:{port}")),
        ),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", Some("5000")),
    ]);
    let (layer, guard) = mcp_tool_otel::layer::<Registry>()
        .unwrap()
        .expect("export on");
    let subscriber = Registry::default().with(layer);
    tracing::subscriber::with_default(subscriber, || {
        tracing::info_span!(target: "someone_else", "other.span").in_scope(|| {});
        tracing::info_span!(target: "mcp_tool_runtime::server", "mcp.server").in_scope(|| {});
    });
    guard.flush().expect("exported");
    let post = posts
        .recv_timeout(Duration::from_secs(10))
        .expect("a request");
    assert!(
        post.head.starts_with("POST /v1/traces HTTP/1.1\r\n"),
        "{}",
        post.head
    );
    assert!(
        post.head
            .to_ascii_lowercase()
            .contains("content-type: application/x-protobuf"),
        "{}",
        post.head
    );
    let has = |needle: &[u8]| post.body.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"mcp.server"), "the runtime's span");
    assert!(has(b"mcp-tool-runtime"), "its scope");
    assert!(!has(b"other.span"), "only the runtime's spans");
    guard.shutdown().expect("nothing left to send");

    // a collector that does not answer: the flush reports it
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    drop(silent);
    env(&[(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        Some(&format!("http://127.0.0.1:{silent_port}")),
    )]);
    let (layer, guard) = mcp_tool_otel::layer::<Registry>()
        .unwrap()
        .expect("export on");
    let subscriber = Registry::default().with(layer);
    tracing::subscriber::with_default(subscriber, || {
        tracing::info_span!(target: "mcp_tool_runtime::server", "mcp.server").in_scope(|| {});
    });
    assert!(guard.flush().is_err(), "nothing listens on {silent_port}");
}

/// One request a collector got.
struct Post {
    /// The request line and the headers.
    head: String,
    body: Vec<u8>,
}

/// A collector on loopback answering every request `200` (an empty protobuf answer); its
/// port, and the requests it got.
fn collector() -> (u16, mpsc::Receiver<Post>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let tx = tx.clone();
            std::thread::spawn(move || serve(stream, &tx));
        }
    });
    (port, rx)
}

/// Answers the requests of one connection.
fn serve(stream: TcpStream, tx: &mpsc::Sender<Post>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        let length = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let answer =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if stream.write_all(answer.as_bytes()).is_err() || tx.send(Post { head, body }).is_err() {
            return;
        }
    }
}
