//! Hardening: untrusted input and misbehaving tools never take the server down.
//! Each test here pins a gap found in review (it failed before the fix).

use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::manual::Reentrant;
use mcp_tool_runtime::protocol::{CallToolResult, Implementation, JsonRpcResponse};
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::server::NotificationSink;
use mcp_tool_runtime::server::{Server, ServerBuilder};
use mcp_tool_runtime::{
    Principal, Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step},
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

mod support;

use support::{call_params, request, resume};

/// Panics on its first poll when `args.boom` is true, otherwise answers "ok".
struct Panicky;

impl Tool for Panicky {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("panicky")
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            let args: Value = mcp_tool_runtime::manual::parse_args(args)?;
            if args["boom"] == json!(true) {
                tokio::task::yield_now().await;
                panic!("tool bug: secret-detail-42");
            }
            Ok(Step::Complete(CallToolResult::text("ok")))
        })
    }
}

/// Panics synchronously in `step` itself, before returning a future.
struct PanicsBeforeFuture;

impl Tool for PanicsBeforeFuture {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("panics_early")
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        _args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        panic!("tool bug before the future");
    }
}

/// A builder with this file's fixed sealing key.
fn builder(name: &str, version: &str) -> ServerBuilder {
    Server::builder(Implementation::new(name, version)).sealer(support::sealer("k1", 7))
}

fn server() -> Server {
    builder("hardening", "0.1.0")
        .tool(Panicky)
        .tool(PanicsBeforeFuture)
        .build()
        .expect("server builds")
}

/// `_meta` declaring no capabilities.
fn meta() -> Value {
    support::meta(json!({}))
}

fn call_msg(id: i64, name: &str, args: Value) -> Value {
    request(id, "tools/call", call_params(name, args, meta(), json!({})))
}

async fn send(server: &Server, msg: Value) -> JsonRpcResponse {
    support::send_as(server, &Principal::anonymous(), msg).await
}

#[tokio::test]
async fn a_panicking_tool_answers_internal_error_and_the_server_lives_on() {
    let s = server();
    for (name, args) in [
        ("panicky", json!({"boom": true})),
        ("panics_early", json!({})),
    ] {
        let r = send(&s, call_msg(1, name, args)).await;
        assert_eq!(r.error_code(), Some(-32603), "{r:?}");
        let e = r.error_object().expect("error");
        // The panic message is a server-side detail: it goes to the log, not the client.
        assert!(!e.message.contains("secret-detail-42"), "{e:?}");
        assert_eq!(r.id(), Some(&1.into()));
    }
    // The same server keeps answering.
    let r = send(&s, call_msg(2, "panicky", json!({"boom": false}))).await;
    assert_eq!(
        r.result_value().expect("result")["content"][0]["text"],
        "ok"
    );
}

/// Asks for a URL elicitation and a sampling in round 0 (declares only elicitation, as a
/// hand-written tool may), completes once both answers are in.
struct UrlThenSample;

impl Tool for UrlThenSample {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("url_then_sample").needs(mcp_tool_runtime::protocol::Capability::Elicitation)
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        _args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            if state.is_none() {
                cx.request(
                    "login",
                    mcp_tool_runtime::requests::UrlElicit::new("Log in", "https://example.com/l")
                        .into_request()?,
                )?;
                cx.request(
                    "model",
                    mcp_tool_runtime::requests::Sample::user("hi").into_request()?,
                )?;
                return Step::suspend(&json!(1));
            }
            Ok(Step::Complete(CallToolResult::text("done")))
        })
    }
}

fn server_with(tool: impl Tool) -> Server {
    builder("hardening", "0.1.0")
        .tool(tool)
        .build()
        .expect("server builds")
}

/// `tools/call` of `name` without arguments, declaring `caps`, plus the members of `extra`.
async fn call_with_caps(
    s: &Server,
    id: i64,
    name: &str,
    caps: Value,
    extra: Value,
) -> JsonRpcResponse {
    let params = call_params(name, json!({}), support::meta(caps), extra);
    send(s, request(id, "tools/call", params)).await
}

/// Capabilities are never inferred from earlier requests: when a retry with missing
/// answers declares fewer capabilities than the first round, the pending requests it can
/// no longer receive must not be sent again.
#[tokio::test]
async fn asking_again_never_sends_a_request_the_retry_did_not_declare() {
    let s = server_with(UrlThenSample);
    let full = json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}});
    let r = call_with_caps(&s, 1, "url_then_sample", full.clone(), json!({})).await;
    let first = r.result_value().expect("result").clone();
    assert_eq!(first["resultType"], "input_required");
    let state = first["requestState"].clone();

    // Same capabilities, no answers: asked again, same state.
    let r = call_with_caps(
        &s,
        2,
        "url_then_sample",
        full,
        json!({"requestState": state}),
    )
    .await;
    assert_eq!(
        r.result_value().expect("result")["inputRequests"],
        first["inputRequests"]
    );

    // Form-only elicitation and no sampling on the retry: the URL elicitation and the
    // sampling request cannot be sent; -32021 names what is missing.
    let r = call_with_caps(
        &s,
        3,
        "url_then_sample",
        json!({"elicitation": {}}),
        json!({"requestState": state}),
    )
    .await;
    assert_eq!(r.error_code(), Some(-32021), "{r:?}");
    let data = r.error_object().and_then(|e| e.data.clone()).expect("data");
    let required = &data["requiredCapabilities"];
    assert!(required.is_object(), "{data}");
    assert!(required.get("sampling").is_some(), "{data}");
    assert!(required["elicitation"].get("url").is_some(), "{data}");
}

/// A `Mcp-Param-*` header for a value the body does not carry (absent or null) is a
/// header/body disagreement: an intermediary routing on the header would act on a value
/// the server never sees.
#[test]
fn a_param_header_without_a_body_value_is_a_mismatch() {
    use mcp_tool_runtime::transport::params::{check_param_headers, header_params};
    let schema = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}}});
    let params = header_params(schema.as_object().expect("object")).expect("valid");
    let with_header = |name: &str| {
        name.eq_ignore_ascii_case("Mcp-Param-Region")
            .then(|| Ok("us-west1".to_owned()))
    };
    for args in [json!({}), json!({"region": null})] {
        assert!(
            check_param_headers(&params, &args, with_header).is_err(),
            "{args}"
        );
        assert!(
            check_param_headers(&params, &args, |_| None).is_ok(),
            "{args}"
        );
    }
    assert!(check_param_headers(&params, &json!({"region": "us-west1"}), with_header).is_ok());
}

/// Clients must drop a tool whose `x-mcp-header` annotations are invalid, so a server
/// that lists one publishes a tool nobody can call: refuse it at registration.
#[test]
fn an_invalid_x_mcp_header_annotation_fails_registration() {
    struct BadHeader;
    impl Tool for BadHeader {
        fn info(&self) -> ToolInfo {
            let schema = json!({"type": "object", "properties": {
                "amount": {"type": "number", "x-mcp-header": "Amount"}}});
            ToolInfo::new("bad_header").input_schema(schema.as_object().expect("obj").clone())
        }
        fn step<'a>(
            &'a self,
            _cx: &'a mut ToolContext,
            _args: &'a RawValue,
            _state: Option<&'a RawValue>,
        ) -> BoxFuture<'a, Result<Step, ToolError>> {
            Box::pin(async { Ok(Step::Complete(CallToolResult::text("x"))) })
        }
    }
    let err = builder("s", "1")
        .tool(BadHeader)
        .build()
        .expect_err("an invalid x-mcp-header is a registration error");
    let text = err.to_string();
    assert!(
        text.contains("bad_header") && text.contains("x-mcp-header"),
        "{text}"
    );
}

/// Declares elicitation and asks a form; a client that declares URL-mode elicitation only
/// passes the coarse pre-check, but it is the client that lacks a capability (form mode):
/// -32021 naming the mode, not an internal error.
#[tokio::test]
async fn a_declared_capability_in_a_mode_the_client_lacks_is_32021() {
    struct AsksForm;
    impl Tool for AsksForm {
        fn info(&self) -> ToolInfo {
            ToolInfo::new("asks_form").needs(mcp_tool_runtime::protocol::Capability::Elicitation)
        }
        fn step<'a>(
            &'a self,
            cx: &'a mut ToolContext,
            _args: &'a RawValue,
            _state: Option<&'a RawValue>,
        ) -> BoxFuture<'a, Result<Step, ToolError>> {
            Box::pin(async move {
                #[derive(serde::Deserialize, schemars::JsonSchema)]
                struct Name {
                    #[allow(dead_code)]
                    name: String,
                }
                cx.request(
                    "name",
                    mcp_tool_runtime::requests::Ask::<Name>::new("Name?").into_request()?,
                )?;
                Step::suspend(&json!(1))
            })
        }
    }
    let s = server_with(AsksForm);
    let r = call_with_caps(
        &s,
        1,
        "asks_form",
        json!({"elicitation": {"url": {}}}),
        json!({}),
    )
    .await;
    assert_eq!(r.error_code(), Some(-32021), "{r:?}");
    let data = r.error_object().and_then(|e| e.data.clone()).expect("data");
    assert_eq!(
        data["requiredCapabilities"],
        json!({"elicitation": {"form": {}}})
    );
}

/// Integer `Mcp-Param-*` values compare numerically (`42.0` == `42`), but only inside the
/// safe integer range: past 2^53 two different integers are the same `f64`, and a header
/// an intermediary routes on could then differ from the body the server acts on.
#[test]
fn integer_param_headers_compare_exactly() {
    use mcp_tool_runtime::transport::params::{check_param_headers, header_params};
    let schema = json!({"type": "object", "properties": {
        "n": {"type": "integer", "x-mcp-header": "N"}}});
    let params = header_params(schema.as_object().expect("object")).expect("valid");
    let header = |v: &'static str| move |_: &str| Some(Ok(v.to_owned()));
    assert!(check_param_headers(&params, &json!({"n": 42}), header("42")).is_ok());
    assert!(check_param_headers(&params, &json!({"n": 42}), header("42.0")).is_ok());
    assert!(check_param_headers(&params, &json!({"n": -7}), header("-7")).is_ok());
    assert!(check_param_headers(&params, &json!({"n": 42}), header("43")).is_err());
    let big = json!({"n": 9_007_199_254_740_993_i64});
    assert!(check_param_headers(&params, &big, header("9007199254740992")).is_err());
    assert!(check_param_headers(&params, &big, header("9007199254740993")).is_err());
}

#[test]
fn param_text_of_the_most_negative_integer_does_not_overflow() {
    use mcp_tool_runtime::transport::params::{ParamKind, param_text};
    assert_eq!(param_text(ParamKind::Integer, &json!(i64::MIN)), None);
    assert_eq!(
        param_text(ParamKind::Integer, &json!(-42)),
        Some("-42".into())
    );
    assert_eq!(
        param_text(ParamKind::Integer, &json!(42.0)),
        Some("42".into())
    );
    assert_eq!(param_text(ParamKind::Integer, &json!(1e300)), None);
}

/// `RequestId = string | number`: a numeric id outside `i64` (or not an integer) is
/// accepted and echoed back as received, not rejected with -32600.
#[tokio::test]
async fn any_json_number_is_a_request_id_echoed_as_received() {
    let s = server();
    for raw_id in [
        "18446744073709551615",
        "9223372036854775808",
        "1.5",
        "-0.25",
        "7",
    ] {
        let raw = format!(
            r#"{{"jsonrpc":"2.0","id":{raw_id},"method":"tools/call","params":{{"name":"panicky","arguments":{{}},"_meta":{meta}}}}}"#,
            meta = meta()
        );
        let r = s
            .handle_text(&raw, &Principal::anonymous(), NotificationSink::none())
            .await
            .expect("a request gets a response")
            .into_response();
        assert_eq!(r.error_code(), None, "{raw_id}: {r:?}");
        let text = serde_json::to_string(&r).expect("serializes");
        assert!(
            text.contains(&format!(r#""id":{raw_id},"#)),
            "{raw_id}: {text}"
        );
    }
    // Still not an id: null, booleans, objects.
    for bad in [json!(null), json!(true), json!({"n": 1})] {
        let r = send(
            &s,
            json!({"jsonrpc": "2.0", "id": bad, "method": "tools/list", "params": {"_meta": meta()}}),
        )
        .await;
        assert_eq!(r.error_code(), Some(-32600), "{r:?}");
        assert_eq!(r.id(), None);
    }
}

/// `params` present but not an object: the method is checked first (a removed method
/// is -32601 whatever its params), then a known method answers -32602 (invalid params),
/// not -32600 (the envelope itself is fine).
#[tokio::test]
async fn non_object_params_are_invalid_params_after_the_method_check() {
    let s = server();
    for params in [json!([1]), json!("x"), json!(3), json!(true)] {
        for method in ["tools/list", "tools/call", "server/discover"] {
            let r = send(&s, request(9, method, params.clone())).await;
            assert_eq!(r.error_code(), Some(-32602), "{method} {params}: {r:?}");
            assert_eq!(r.id(), Some(&9.into()));
        }
        for method in ["initialize", "ping", "no/such"] {
            let r = send(&s, request(9, method, params.clone())).await;
            assert_eq!(r.error_code(), Some(-32601), "{method} {params}: {r:?}");
        }
    }
}

/// Asks the model once, then keeps the whole answer in its state and checkpoints.
struct KeepsTheAnswer;

impl Tool for KeepsTheAnswer {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("keeps_the_answer")
            .needs(mcp_tool_runtime::protocol::Capability::Sampling)
            .max_rounds(3)
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        _args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            let state: Option<serde_json::Value> = state
                .map(mcp_tool_runtime::manual::parse_state)
                .transpose()?;
            match state {
                None => {
                    cx.request(
                        "answer",
                        mcp_tool_runtime::requests::Sample::user("hi").into_request()?,
                    )?;
                    Step::suspend(&json!(0))
                }
                Some(s) if s == json!(0) => {
                    let kept = cx.take_sampling("answer")?.text()?;
                    Step::suspend(&json!({ "kept": kept }))
                }
                Some(_) => Ok(Step::Complete(CallToolResult::text("done"))),
            }
        })
    }
}

fn sampling_answer(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "m"})
}

/// Round 0 of `keeps_the_answer`, then its retry carrying `text` as the model's answer.
async fn answer_with(s: &Server, text: &str) -> JsonRpcResponse {
    let caps = json!({"sampling": {}});
    let r = call_with_caps(s, 1, "keeps_the_answer", caps.clone(), json!({})).await;
    let state = r.result_value().expect("result")["requestState"].clone();
    let extra = resume(&state, json!({"answer": sampling_answer(text)}));
    call_with_caps(s, 2, "keeps_the_answer", caps, extra).await
}

/// An answer over the per-answer cap is -32602 (checked before any tool code runs), not
/// a -32603 from failing to seal the state that would keep it. The cap is configurable.
#[tokio::test]
async fn an_oversized_answer_is_invalid_params() {
    let s = server_with(KeepsTheAnswer);
    let secret = "secret-content ";
    let huge = secret.repeat(80 * 1024 / secret.len());
    let r = answer_with(&s, &huge).await;
    assert_eq!(r.error_code(), Some(-32602), "{r:?}");
    let e = r.error_object().expect("error");
    assert!(e.message.contains("too large"), "{e:?}");
    assert!(e.message.contains("answer"), "{e:?}");
    assert!(!e.message.contains("secret-content"), "{e:?}");

    // A small answer goes through.
    let r = answer_with(&s, "short").await;
    assert_eq!(
        r.result_value().expect("result")["resultType"],
        "input_required"
    );

    // Configurable: a 2 KiB answer over a 1 KiB cap, or over a 1 KiB total.
    let two_k = "x".repeat(2048);
    for builder in [
        Server::builder(Implementation::new("h", "0")).max_answer_bytes(1024),
        Server::builder(Implementation::new("h", "0")).max_answers_total_bytes(1024),
    ] {
        let s = builder.tool(KeepsTheAnswer).build().expect("builds");
        let r = answer_with(&s, &two_k).await;
        assert_eq!(r.error_code(), Some(-32602), "{r:?}");
    }
}

/// An answer under the caps that still makes the state too large to seal: -32603 with the
/// generic message; the log names the tool and the sizes, never the content.
#[tokio::test]
async fn a_state_too_large_to_seal_is_internal_error_without_content() {
    #[derive(Clone, Default)]
    struct Log(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Log {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("log").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let log = Log::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    // The process-wide default (no other test of this binary sets one): a thread-local
    // default lost events under load when another test thread cached a callsite's interest
    // without it (tracing's interest cache). Other tests' events land in this log too; the
    // checks below look for this test's lines and for the secret, which no other test logs.
    tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");
    tracing::callsite::rebuild_interest_cache();

    // Uncompressed: the repetitive answer must not shrink under the cap.
    let sealer = Sealer::new(
        Keyring::random("k1").expect("keyring"),
        SealConfig::default().with_compress(false),
    );
    let s = builder("hardening", "0.1.0")
        .sealer(sealer)
        .tool(KeepsTheAnswer)
        .build()
        .expect("server builds");
    let secret = "secret-content ";
    let big = secret.repeat(60 * 1024 / secret.len());
    let r = answer_with(&s, &big).await;
    assert_eq!(r.error_code(), Some(-32603), "{r:?}");
    let e = r.error_object().expect("error");
    // The client gets the generic message; the detail is in the log.
    assert_eq!(e.message, "Internal error", "{e:?}");

    let log = String::from_utf8(log.0.lock().expect("log").clone()).expect("utf-8");
    let line = log
        .lines()
        .find(|l| l.contains("requestState too large to seal"))
        .unwrap_or_else(|| panic!("no log line: {log}"));
    assert!(line.contains("keeps_the_answer"), "{line}");
    assert!(line.contains("token_bytes="), "{line}");
    assert!(line.contains("state_bytes="), "{line}");
    assert!(
        log.lines()
            .any(|l| l.contains("could not save its state") && l.contains("bytes exceed")),
        "{log}"
    );
    assert!(!log.contains("secret-content"), "{log}");
}

/// A panic inside a user-supplied `Authenticator` is answered `500` with a -32603 body
/// (fail closed, not 401: it is a server bug, not a credential problem); the connection
/// and the server live on.
#[tokio::test]
async fn a_panicking_authenticator_is_500_and_the_connection_lives_on() {
    use mcp_tool_runtime::transport::auth::AuthError;
    use mcp_tool_runtime::transport::http::{self, HttpConfig};

    let auth = |r: &axum::http::request::Parts| -> Result<Principal, AuthError> {
        if r.headers.contains_key("x-boom") {
            panic!("authenticator bug: secret-token-99");
        }
        Ok(Principal::named("alice"))
    };
    let handle = http::spawn(
        "127.0.0.1:0".parse().expect("addr"),
        server(),
        HttpConfig::default().authenticator(auth),
    )
    .await
    .expect("serves");
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}});
    // One client: its pooled keep-alive connection is reused across the requests.
    let client = reqwest::Client::new();
    let post = |boom: bool| {
        let mut req = client
            .post(handle.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/list")
            .body(body.to_string());
        if boom {
            req = req.header("x-boom", "1");
        }
        req.send()
    };
    for _ in 0..2 {
        let resp = post(true)
            .await
            .expect("an answer, not a dropped connection");
        assert_eq!(resp.status().as_u16(), 500);
        let v: Value = resp.json().await.expect("a JSON-RPC body");
        assert_eq!(v["error"]["code"], -32603, "{v}");
        assert!(!v.to_string().contains("secret-token-99"), "{v}");

        let resp = post(false).await.expect("the server still answers");
        assert_eq!(resp.status().as_u16(), 200);
        let v: Value = resp.json().await.expect("JSON");
        assert!(v["result"]["tools"].is_array(), "{v}");
    }
    handle.shutdown().await.expect("shuts down");
}
