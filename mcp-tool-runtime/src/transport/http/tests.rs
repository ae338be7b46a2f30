//! Unit tests of the endpoint's pieces (origins, headers, throttling, responses).

use super::config::*;
use super::sse::*;
use crate::protocol::headers::*;
use crate::throttle::Throttle;

#[test]
fn localhost_origins() {
    for o in [
        "http://localhost",
        "http://localhost:3000",
        "https://127.0.0.1:8443",
        "http://[::1]:80",
        "HTTP://LOCALHOST",
    ] {
        assert!(is_localhost_origin(o), "{o}");
    }
    for o in [
        "http://localhost.evil.com",
        "http://evil.com",
        "null",
        "http://127.0.0.1.nip.io",
        "ftp://localhost",
        "http://localhost:abc",
        "http://[::2]",
    ] {
        assert!(!is_localhost_origin(o), "{o}");
    }
}

#[test]
fn policy() {
    let p = OriginPolicy::only(["https://app.example.com"]);
    assert!(p.allows("https://app.example.com"));
    assert!(p.allows("HTTPS://APP.EXAMPLE.COM/"));
    assert!(!p.allows("http://localhost"));
    assert!(OriginPolicy::default().allows("http://localhost:1"));
    assert!(!OriginPolicy::default().allows("https://evil.example"));
    assert!(OriginPolicy::any().allows("https://evil.example"));
}

#[test]
fn header_value_codec() {
    for v in [
        "get_weather",
        "Hello, 世界",
        " padded ",
        "line1\nline2",
        "=?base64?literal?=",
    ] {
        assert_eq!(decode_header_value(&encode_header_value(v)).unwrap(), v);
    }
    assert_eq!(encode_header_value("get_weather"), "get_weather");
    assert_eq!(
        encode_header_value("Hello, 世界"),
        "=?base64?SGVsbG8sIOS4lueVjA==?="
    );
    assert!(decode_header_value("=?base64?!!!?=").is_err());
}

#[test]
fn the_throttle_lets_one_warning_a_second_through() {
    let t = Throttle::new();
    assert!(t.ready());
    for _ in 0..1000 {
        assert!(!t.ready());
    }
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert!(t.ready());
    assert!(!t.ready());
}

/// While nobody reads, at most `buffer` notifications wait; the rest are dropped, and
/// the response still has its slot.
#[test]
fn the_sse_channel_is_bounded_and_keeps_room_for_the_response() {
    let (sink, tx, mut rx) = sse_channel(4);
    for i in 0..1000 {
        sink.send(serde_json::json!({ "n": i }));
    }
    assert!(
        tx.try_send(StreamEvent::Done(None)).is_ok(),
        "room for the response"
    );
    let mut notes = 0;
    let mut done = false;
    while let Ok(ev) = rx.try_recv() {
        match ev {
            StreamEvent::Notification(_) => notes += 1,
            StreamEvent::Done(_) => done = true,
            StreamEvent::TimedOut => unreachable!(),
        }
    }
    assert_eq!(notes, 4);
    assert!(done);
    // Once read, there is room again.
    sink.send(serde_json::json!({ "n": "later" }));
    assert!(matches!(rx.try_recv(), Ok(StreamEvent::Notification(_))));
}

#[test]
fn status_mapping() {
    use super::super::http_status_for_code as s;
    assert_eq!(s(None), 200);
    for c in [-32602, -32020, -32021, -32022, -32700, -32600] {
        assert_eq!(s(Some(c)), 400);
    }
    assert_eq!(s(Some(-32601)), 404);
    assert_eq!(s(Some(-32603)), 200);
}

/// The endpoint's `POST` future is what every connection's slot holds and what hyper moves
/// into it per request: it stays small. It was 3,360 bytes when a time limit held its work
/// twice, the handler held the request and its parts both, and the trace scope held its
/// work twice; 1,320 since.
#[test]
fn the_post_future_stays_small() {
    let server = std::sync::Arc::new(
        crate::server::Server::builder(crate::protocol::Implementation::new("s", "1"))
            .build()
            .expect("a server with no tools builds"),
    );
    let endpoint = super::router::endpoint(server, HttpConfig::default());
    let request = axum::extract::Request::new(axum::body::Body::empty());
    let answer = super::post::handle_post(axum::extract::State(endpoint), request);
    let size = std::mem::size_of_val(&answer);
    assert!(size <= 1536, "the POST future grew to {size} bytes");
}
