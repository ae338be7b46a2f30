//! The client driver: rounds, ids, state echo, latest answers only, limits, errors,
//! transcripts — in-process against the hand-written example tool, and against scripted
//! transports that misbehave.

mod transport_support;

use std::sync::Mutex;

use mcp_tool_client::{
    BoxFuture, ClientTransport, Direction, Driver, DriverError, HostError, InProcessTransport,
    ScriptedHost, TransportError,
};
use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult};
use serde_json::{Value, json};
use transport_support::*;

fn driver(host: ScriptedHost) -> Driver<InProcessTransport, ScriptedHost> {
    Driver::new(InProcessTransport::new(server()), host)
}

fn sent(outcome: &[mcp_tool_client::TranscriptEntry]) -> Vec<&Value> {
    outcome
        .iter()
        .filter(|e| e.direction == Direction::Sent)
        .map(|e| &e.message)
        .collect()
}

fn received(outcome: &[mcp_tool_client::TranscriptEntry]) -> Vec<&Value> {
    outcome
        .iter()
        .filter(|e| e.direction == Direction::Received)
        .map(|e| &e.message)
        .collect()
}

#[tokio::test]
async fn drives_a_three_request_call_to_completion() {
    let mut d = driver(booking_host());
    let out = d.call_tool("book_table", args()).await.unwrap();
    assert_eq!(out.rounds, 3);
    assert!(!out.is_error());
    assert_eq!(out.structured(), Some(&booked()));
    assert_eq!(out.transcript.len(), 6);
    assert_eq!(d.host().asked_keys(), vec!["when", "confirm"]);
}

#[tokio::test]
async fn each_round_has_a_new_id_and_the_same_name_and_arguments() {
    let mut d = driver(booking_host());
    let out = d.call_tool("book_table", args()).await.unwrap();
    let sent = sent(&out.transcript);
    let ids: Vec<_> = sent.iter().map(|m| m["id"].clone()).collect();
    assert_eq!(ids, vec![json!(1), json!(2), json!(3)]);
    for m in &sent {
        assert_eq!(m["method"], "tools/call");
        assert_eq!(m["params"]["name"], "book_table");
        assert_eq!(m["params"]["arguments"], args());
        assert_eq!(
            m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            VERSION
        );
        assert!(
            m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["elicitation"]
                .is_object()
        );
    }
    // Ids keep increasing across calls of the same driver.
    let out2 = d.call_tool("book_table", args()).await.unwrap();
    assert_eq!(
        sent_ids(&out2.transcript),
        vec![json!(4), json!(5), json!(6)]
    );
}

fn sent_ids(t: &[mcp_tool_client::TranscriptEntry]) -> Vec<Value> {
    sent(t).iter().map(|m| m["id"].clone()).collect()
}

#[tokio::test]
async fn request_state_is_echoed_byte_for_byte_and_only_latest_answers_are_sent() {
    let mut d = driver(booking_host());
    let out = d.call_tool("book_table", args()).await.unwrap();
    let sent = sent(&out.transcript);
    let recv = received(&out.transcript);
    assert!(sent[0]["params"].get("requestState").is_none());
    assert!(sent[0]["params"].get("inputResponses").is_none());
    for round in 0..2 {
        let state = recv[round]["result"]["requestState"].as_str().unwrap();
        assert_eq!(
            sent[round + 1]["params"]["requestState"].as_str().unwrap(),
            state
        );
        let asked: Vec<_> = recv[round]["result"]["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        let answered: Vec<_> = sent[round + 1]["params"]["inputResponses"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(asked, answered, "round {round}: only this round's answers");
    }
    assert_eq!(
        sent[2]["params"]["inputResponses"]["confirm"],
        json!({"action": "accept", "content": {"confirm": true}})
    );
}

#[tokio::test]
async fn round_limit_stops_the_call() {
    let mut d = driver(booking_host()).with_max_rounds(2);
    let err = d.call_tool("book_table", args()).await.unwrap_err();
    assert_eq!(err, DriverError::TooManyRounds { limit: 2 });
}

#[tokio::test]
async fn host_without_an_answer_is_a_typed_error() {
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    let mut d = driver(host);
    let err = d.call_tool("book_table", args()).await.unwrap_err();
    assert!(
        matches!(&err, DriverError::Host { key, source: HostError::NoAnswer { .. } } if key == "when"),
        "{err:?}"
    );
}

#[tokio::test]
async fn fallback_closure_answers_and_records() {
    let host = ScriptedHost::from_fn(ClientCapabilities::none().with_elicitation(), |key, req| {
        assert_eq!(req.method(), "elicitation/create");
        Ok(match key {
            "when" => accept(json!({"date": "2026-08-01", "time": "19:30"})).into(),
            _ => accept(json!({"confirm": false})).into(),
        })
    });
    let mut d = driver(host);
    let out = d.call_tool("book_table", args()).await.unwrap();
    assert_eq!(out.text(), "Nothing was booked.");
    assert_eq!(d.host().asked().len(), 2);
}

#[tokio::test]
async fn decline_is_a_polite_tool_error() {
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation())
        .answer("when", ElicitResult::decline());
    let mut d = driver(host);
    let out = d.call_tool("book_table", args()).await.unwrap();
    assert!(out.is_error());
    assert_eq!(out.rounds, 2);
}

#[tokio::test]
async fn json_rpc_errors_are_typed() {
    let mut d = driver(booking_host());
    let err = d.call_tool("no_such_tool", json!({})).await.unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32602));
    assert!(matches!(&err, DriverError::Rpc { method, .. } if method == "tools/call"));

    // The tool needs elicitation; a host that declares nothing gets -32021 before any tool code.
    let mut d = driver(ScriptedHost::new(ClientCapabilities::none()));
    let err = d.call_tool("book_table", args()).await.unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32021));
    let DriverError::Rpc { error, .. } = err else {
        unreachable!()
    };
    assert!(error.data.unwrap()["requiredCapabilities"]["elicitation"].is_object());

    // Unsupported protocol version.
    let mut d = driver(booking_host()).with_protocol_version("1999-01-01");
    let err = d.discover().await.unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32022));
}

#[tokio::test]
async fn malformed_answers_are_rejected_by_the_server() {
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation())
        .answer("when", accept(json!({"date": "tomorrow", "time": "soon"})));
    let mut d = driver(host);
    let err = d.call_tool("book_table", args()).await.unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32602));
}

#[tokio::test]
async fn discover_and_list_tools() {
    let mut d = driver(booking_host());
    let disc = d.discover().await.unwrap();
    assert!(
        disc["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!(VERSION))
    );
    let list = d.list_tools().await.unwrap();
    let tools = list["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["name"], "book_table");
    assert_eq!(tools[0]["inputSchema"]["type"], "object");
    assert_eq!(d.transcript().len(), 4);
    assert_eq!(d.take_transcript().len(), 4);
    assert!(d.transcript().is_empty());
}

/// A transport that answers from a script and records what it was sent.
struct Scripted {
    replies: Mutex<Vec<Value>>,
    sent: Mutex<Vec<Value>>,
}

impl Scripted {
    fn new(replies: Vec<Value>) -> Self {
        Self {
            replies: Mutex::new(replies.into_iter().rev().collect()),
            sent: Mutex::new(Vec::new()),
        }
    }
}

impl ClientTransport for Scripted {
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        self.sent.lock().unwrap().push(message);
        let reply = self.replies.lock().unwrap().pop();
        Box::pin(async move { Ok(reply) })
    }
}

#[tokio::test]
async fn checkpoint_rounds_echo_state_without_answers() {
    // A load-shedding round: requestState only, no inputRequests.
    let t = Scripted::new(vec![
        json!({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s-1"}}),
        json!({"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}}),
    ]);
    let mut d = Driver::new(t, ScriptedHost::new(ClientCapabilities::none()));
    let out = d.call_tool("t", json!({})).await.unwrap();
    assert_eq!(out.text(), "done");
    let sent = d.transport().sent.lock().unwrap().clone();
    assert_eq!(sent[1]["params"]["requestState"], "s-1");
    assert!(sent[1]["params"].get("inputResponses").is_none());
}

#[tokio::test]
async fn misbehaving_servers_are_reported() {
    // Wrong id.
    let t = Scripted::new(vec![json!({"jsonrpc":"2.0","id":99,"result":{}})]);
    let mut d = Driver::new(t, ScriptedHost::new(ClientCapabilities::none()));
    assert!(matches!(
        d.discover().await,
        Err(DriverError::InvalidResponse(_))
    ));

    // No response at all.
    let t = Scripted::new(vec![]);
    let mut d = Driver::new(t, ScriptedHost::new(ClientCapabilities::none()));
    assert!(matches!(
        d.discover().await,
        Err(DriverError::NoResponse { .. })
    ));

    // input_required with neither requests nor state.
    let t = Scripted::new(vec![
        json!({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}),
    ]);
    let mut d = Driver::new(t, ScriptedHost::new(ClientCapabilities::none()));
    assert!(matches!(
        d.call_tool("t", json!({})).await,
        Err(DriverError::InvalidResponse(_))
    ));

    // A server that never stops asking hits the round limit.
    let ask = |id: u64| json!({"jsonrpc":"2.0","id":id,"result":{"resultType":"input_required","requestState":"x"}});
    let t = Scripted::new((1..=10).map(ask).collect());
    let mut d = Driver::new(t, ScriptedHost::new(ClientCapabilities::none())).with_max_rounds(3);
    assert_eq!(
        d.call_tool("t", json!({})).await.unwrap_err(),
        DriverError::TooManyRounds { limit: 3 }
    );
}

#[tokio::test]
async fn transcript_entries_print() {
    let mut d = driver(booking_host());
    let out = d.call_tool("book_table", args()).await.unwrap();
    let printed = out.transcript[0].to_string();
    assert!(printed.starts_with("client -> server\n{"));
    assert!(
        out.transcript[1]
            .to_string()
            .starts_with("server -> client\n")
    );
}
