"""A remote-controlled legacy client: the official MCP Python SDK 1.30 (protocol 2025-11-25).

The Rust tests (tests/tests/python_legacy.rs, through tests/tests/python_peer/) start this
script with the venv's interpreter and drive it over stdin/stdout, one JSON object per line
each way: the test writes an operation, the script runs it with the SDK 1.x API
(`mcp.ClientSession` over `mcp.client.stdio.stdio_client` or
`mcp.client.streamable_http.streamablehttp_client`) and answers with one line. Nothing else
is written to stdout (the SDK's logs and a stdio server's stderr go to stderr).

The first operation must be `connect` (it runs `initialize`); `close` ends the session and
the script.

    {"op": "connect", "transport": {"http": URL} | {"stdio": {"command", "args", "env"}},
     "answers": [RULE, ...],
     "capabilities": ["elicitation", "sampling", "roots"],     (optional subset: which
                                                                  callbacks are given)
     "read_timeout_s": 40}                                     (optional)
    {"op": "list_tools"}
    {"op": "call_tool", "name", "arguments"}
    {"op": "call_tools_concurrently", "calls": [{"name", "arguments"}, ...],
     "stagger": true, "hold_until_requests": N}
    {"op": "close"}

Any operation may carry `"answers"` to replace the rules from then on.

A RULE answers the server's requests (`elicitation/create`, `sampling/createMessage`,
`roots/list`) that reach the SDK's callbacks:

    {"method": M, "contains": TEXT?, "once": true?,
     "result": ElicitResult | CreateMessageResult | ListRootsResult}   or   "error": {code, message}

The first rule whose method matches and whose `contains` occurs in the request's text (the
elicitation message; the text of the sampling messages) answers; a `once` rule is used up
by its first match. A request no rule answers gets `ErrorData(-32603)`. For a capability left
out of `capabilities` the SDK's own default callback answers (1.30: `-32600 "Sampling not
supported"`, ...), which "asked" does not show and "wire" does.

`call_tools_concurrently` runs the calls with `asyncio.gather` in one session. With
`stagger`, call k+1 starts only once the server has sent its k-th request of the operation
(so the first request belongs to call 0, and so on, when each call makes one request before
the next starts). With `hold_until_requests: N`, a callback does not answer before the server
has sent N requests in this operation (or 10 s passed): the SDK handles server requests one
at a time, so this is observed below the SDK, on the messages the transport delivered.

Every answer is {"ok": true, "result": ..., ...} or {"ok": false, "error": {"type",
"message", "code"?, "data"?}, ...} with, besides:

* "asked": what the callbacks were asked during the operation, in order: {"method",
  "params" (as the SDK parsed them), "raw" (the params on the wire), "requestId" (the
  server's JSON-RPC id), "callsStarted" (calls started when that request arrived), "callsDone", "requestsSeen", "held"?};
* "wire": every JSON-RPC message of the operation, {"dir": "out" | "in", "msg"};
* "http" (HTTP only): every HTTP request ({"method", "headers", "body"}) and response
  ({"status", "for", "headers", and "body" for an error status}) of the operation, in order
  (a response is logged when its headers arrive).

`call_tools_concurrently` answers {"ok": true, "result": [{"ok", "result" | "error"}, ...]}.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
import traceback
import warnings
from datetime import timedelta
from typing import Any

import anyio
import anyio.to_thread
import httpx
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import McpError
from mcp.shared.message import SessionMessage
from pydantic import BaseModel

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from mcp.client.streamable_http import streamablehttp_client

try:
    _ExceptionGroup = BaseExceptionGroup  # Python >= 3.11
except NameError:  # Python 3.10: the backport anyio depends on
    from exceptiongroup import BaseExceptionGroup as _ExceptionGroup

_OUT = sys.stdout
HOLD_TIMEOUT_S = 10.0


def emit(message: dict[str, Any]) -> None:
    _OUT.write(json.dumps(message, separators=(",", ":")) + "\n")
    _OUT.flush()


def dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, mode="json", exclude_none=True)
    if isinstance(value, (list, tuple)):
        return [dump(v) for v in value]
    if isinstance(value, dict):
        return {k: dump(v) for k, v in value.items()}
    return value


def describe(exc: BaseException) -> dict[str, Any]:
    # A failure inside a task group surfaces as a group of one.
    while isinstance(exc, _ExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    out: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, McpError):
        out["code"] = exc.error.code
        out["message"] = exc.error.message
        if exc.error.data is not None:
            out["data"] = dump(exc.error.data)
    if isinstance(exc, _ExceptionGroup):
        out["exceptions"] = [describe(e) for e in exc.exceptions]
    return out


class Log:
    """What happened during the current operation: JSON-RPC messages and HTTP exchanges."""

    def __init__(self) -> None:
        self.wire: list[dict[str, Any]] = []
        self.http: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []  # raw server requests, this operation
        # calls of this operation started so far, and that number when each server request
        # arrived (by its id): the host's callback may run later, after another call started
        self.calls_started = 0
        self.started_at: dict[Any, int] = {}

    def reset(self) -> None:
        self.wire, self.http, self.server_requests = [], [], []
        self.calls_started, self.started_at = 0, {}


LOG = Log()


def _headers(h: httpx.Headers) -> dict[str, str]:
    skip = {"host", "user-agent", "accept-encoding", "connection", "content-length", "date", "server"}
    return {k.lower(): v for k, v in h.items() if k.lower() not in skip}


async def _on_request(request: httpx.Request) -> None:
    entry: dict[str, Any] = {"method": request.method, "headers": _headers(request.headers)}
    if request.content:
        try:
            entry["body"] = json.loads(request.content)
        except ValueError:
            entry["body"] = request.content.decode("utf-8", "replace")
    LOG.http.append(entry)


async def _on_response(response: httpx.Response) -> None:
    body = response.request.content
    rpc: Any = None
    if body:
        try:
            parsed = json.loads(body)
            rpc = {k: parsed[k] for k in ("id", "method") if k in parsed}
        except ValueError:
            pass
    entry: dict[str, Any] = {
        "status": response.status_code,
        "for": {"method": response.request.method, "rpc": rpc},
        "headers": _headers(response.headers),
    }
    LOG.http.append(entry)
    if response.status_code >= 400:
        # The SDK never reads the body of an error response: keep it for the test.
        try:
            raw = await response.aread()
            try:
                entry["body"] = json.loads(raw)
            except ValueError:
                entry["body"] = raw.decode("utf-8", "replace")
        except Exception as exc:  # noqa: BLE001 - best effort
            entry["body"] = f"<unreadable: {exc!r}>"


def recording_http_client(
    headers: dict[str, str] | None = None, timeout: httpx.Timeout | None = None, auth: httpx.Auth | None = None
) -> httpx.AsyncClient:
    client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
    client.event_hooks = {"request": [_on_request], "response": [_on_response]}
    return client


class Relay:
    """Sits between the SDK's transport and its ClientSession: records every message and buffers
    what the server sends, so the script sees a server request as soon as the transport has it,
    even while the session is still busy with an earlier one."""

    def __init__(self, read: Any, write: Any) -> None:
        self.transport_read = read
        self.transport_write = write
        self.to_session, self.session_read = anyio.create_memory_object_stream[SessionMessage | Exception](math.inf)
        self.session_write, self.from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def pump_in(self) -> None:
        async with self.to_session:
            async for item in self.transport_read:
                if isinstance(item, SessionMessage):
                    msg = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
                    LOG.wire.append({"dir": "in", "msg": msg})
                    if "method" in msg and "id" in msg:
                        LOG.server_requests.append(msg)
                        LOG.started_at[msg["id"]] = LOG.calls_started
                else:
                    LOG.wire.append({"dir": "in", "error": repr(item)})
                await self.to_session.send(item)

    async def pump_out(self) -> None:
        async with self.from_session:
            async for item in self.from_session:
                msg = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
                LOG.wire.append({"dir": "out", "msg": msg})
                await self.transport_write.send(item)
        await self.transport_write.aclose()


class Host:
    """Answers the server's requests from the rules and records what it was asked."""

    def __init__(self, rules: list[dict[str, Any]]) -> None:
        self.rules = [dict(r) for r in rules]
        self.asked: list[dict[str, Any]] = []
        self.calls_started = 0
        self.calls_done = 0
        self.hold_until: int | None = None

    def _raw(self, request_id: Any) -> Any:
        for m in reversed(LOG.server_requests):
            if m.get("id") == request_id:
                return m.get("params")
        return None

    async def _answer(self, method: str, context: Any, params: Any, text: str) -> Any:
        entry: dict[str, Any] = {
            "method": method,
            "params": dump(params),
            "raw": self._raw(context.request_id),
            "requestId": context.request_id,
            "callsStarted": LOG.started_at.get(context.request_id, self.calls_started),
            "callsDone": self.calls_done,
            "requestsSeen": len(LOG.server_requests),
        }
        self.asked.append(entry)
        if self.hold_until is not None:
            start = time.monotonic()
            while len(LOG.server_requests) < self.hold_until and time.monotonic() - start < HOLD_TIMEOUT_S:
                await anyio.sleep(0.01)
            entry["held"] = {
                "until": self.hold_until,
                "reached": len(LOG.server_requests) >= self.hold_until,
                "ms": round((time.monotonic() - start) * 1000),
            }
        for rule in self.rules:
            if rule.get("method") != method or rule.get("used"):
                continue
            if "contains" in rule and rule["contains"] not in text:
                continue
            if rule.get("once"):
                rule["used"] = True
            if "error" in rule:
                return types.ErrorData(code=rule["error"]["code"], message=rule["error"]["message"])
            return rule["result"]
        return types.ErrorData(code=-32603, message=f"no scripted answer for {method}: {text[:80]!r}")

    async def elicitation(self, context: Any, params: types.ElicitRequestParams) -> Any:
        a = await self._answer("elicitation/create", context, params, params.message)
        return a if isinstance(a, types.ErrorData) else types.ElicitResult.model_validate(a)

    async def sampling(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        texts = []
        for m in params.messages:
            blocks = m.content if isinstance(m.content, list) else [m.content]
            texts += [b.text for b in blocks if isinstance(b, types.TextContent)]
        a = await self._answer("sampling/createMessage", context, params, "\n".join(texts))
        return a if isinstance(a, types.ErrorData) else types.CreateMessageResult.model_validate(a)

    async def roots(self, context: Any) -> Any:
        a = await self._answer("roots/list", context, None, "")
        return a if isinstance(a, types.ErrorData) else types.ListRootsResult.model_validate(a)


def outcome(value: Any) -> dict[str, Any]:
    if isinstance(value, BaseException):
        return {"ok": False, "error": describe(value)}
    return {"ok": True, "result": dump(value)}


async def call_concurrently(session: ClientSession, host: Host, op: dict[str, Any]) -> list[dict[str, Any]]:
    calls = op["calls"]
    stagger = bool(op.get("stagger"))
    host.hold_until = op.get("hold_until_requests")

    async def one(k: int, call: dict[str, Any]) -> Any:
        if stagger and k > 0:
            start = time.monotonic()
            while len(LOG.server_requests) < k and time.monotonic() - start < HOLD_TIMEOUT_S:
                await anyio.sleep(0.01)
        host.calls_started += 1
        LOG.calls_started = host.calls_started
        try:
            return await session.call_tool(call["name"], call.get("arguments"))
        finally:
            host.calls_done += 1

    try:
        results = await asyncio.gather(*(one(k, c) for k, c in enumerate(calls)), return_exceptions=True)
    finally:
        host.hold_until = None
    return [outcome(r) for r in results]


async def run_op(session: ClientSession, host: Host, op: dict[str, Any]) -> Any:
    name = op.get("op")
    if name == "list_tools":
        return await session.list_tools()
    if name == "call_tool":
        return await session.call_tool(op["name"], op.get("arguments"))
    if name == "call_tools_concurrently":
        return await call_concurrently(session, host, op)
    raise ValueError(f"unknown op {name!r}")


async def read_op() -> dict[str, Any] | None:
    line = await anyio.to_thread.run_sync(sys.stdin.readline)
    if not line:
        return None
    return json.loads(line)


def reply(ok: bool, value: Any, host: Host | None, is_http: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"ok": ok}
    out["result" if ok else "error"] = dump(value)
    out["asked"] = host.asked if host else []
    out["wire"] = LOG.wire
    if is_http:
        out["http"] = LOG.http
    return out


async def session_main(first: dict[str, Any], state: dict[str, Any]) -> None:
    transport = first["transport"]
    is_http = "http" in transport
    state["is_http"] = is_http
    host = Host(first.get("answers", []))
    state["host"] = host
    wanted = set(first.get("capabilities", ["elicitation", "sampling", "roots"]))
    get_session_id = None
    if is_http:
        opened: Any = streamablehttp_client(transport["http"], httpx_client_factory=recording_http_client)
    else:
        s = transport["stdio"]
        opened = stdio_client(StdioServerParameters(command=s["command"], args=s.get("args", []), env=s.get("env")))
    async with opened as streams:
        if is_http:
            read, write, get_session_id = streams
        else:
            read, write = streams
        relay = Relay(read, write)
        async with anyio.create_task_group() as tg:
            tg.start_soon(relay.pump_in)
            tg.start_soon(relay.pump_out)
            async with ClientSession(
                relay.session_read,
                relay.session_write,
                read_timeout_seconds=timedelta(seconds=float(first.get("read_timeout_s", 40))),
                elicitation_callback=host.elicitation if "elicitation" in wanted else None,
                sampling_callback=host.sampling if "sampling" in wanted else None,
                list_roots_callback=host.roots if "roots" in wanted else None,
                client_info=types.Implementation(name="python-sdk1-peer", version="0.1.0"),
            ) as session:
                await serve_ops(session, host, first, state, is_http, get_session_id)
            tg.cancel_scope.cancel()
    # Here the transport has shut down (stdio: stdin closed and the server waited for;
    # HTTP: the session DELETEd).


async def serve_ops(
    session: ClientSession, host: Host, first: dict[str, Any], state: dict[str, Any], is_http: bool, get_session_id: Any
) -> None:
    init = await session.initialize()
    # Let the initialized notification (and, over HTTP, the GET stream attempt) go out.
    await anyio.sleep(0.05)
    emit(
        reply(
            True,
            {
                "protocolVersion": init.protocolVersion,
                "serverInfo": dump(init.serverInfo),
                "capabilities": dump(init.capabilities),
                "instructions": init.instructions,
                "sessionId": get_session_id() if get_session_id else None,
                "sdkVersion": _sdk_version(),
            },
            host,
            is_http,
        )
    )
    while True:
        LOG.reset()
        host.asked = []
        op = await read_op()
        if op is None or op.get("op") == "close":
            state["closing"] = True
            return
        if "answers" in op:
            host.rules = [dict(r) for r in op["answers"]]
        try:
            result = await run_op(session, host, op)
            emit(reply(True, result, host, is_http))
        except Exception as exc:  # reported to the test, which decides
            traceback.print_exc(file=sys.stderr)
            emit(reply(False, describe(exc), host, is_http))


async def main() -> None:
    first = await read_op()
    if first is None or first.get("op") != "connect":
        emit({"ok": False, "error": {"type": "Protocol", "message": "the first operation must be connect"}})
        return
    state: dict[str, Any] = {}
    try:
        await session_main(first, state)
        emit(reply(True, None, None, state.get("is_http", False)))
        return
    except BaseException as exc:  # noqa: BLE001 - the transport died: report it
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        traceback.print_exc(file=sys.stderr)
        failure = describe(exc)
        if state.get("closing"):
            # The session was being closed: report the failure but close anyway.
            emit(reply(True, {"closeError": failure}, None, state.get("is_http", False)))
            return
        failure["sessionEnded"] = True
        emit(reply(False, failure, state.get("host"), state.get("is_http", False)))
    # The session is gone: every later operation fails, close succeeds.
    while (op := await read_op()) is not None:
        if op.get("op") == "close":
            emit({"ok": True, "result": None, "asked": [], "wire": []})
            return
        emit({"ok": False, "error": {"type": "SessionEnded", "message": "the session ended earlier"}, "asked": []})


def _sdk_version() -> str:
    from importlib.metadata import version

    return version("mcp")


if __name__ == "__main__":
    anyio.run(main)
