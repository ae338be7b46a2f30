"""A remote-controlled client of the official MCP Python SDK (2.x, protocol 2026-07-28).

The Rust tests (tests/tests/python_client.rs, through tests/tests/python_peer/) start this
script with the venv's interpreter and drive it over stdin/stdout, one JSON object per line
each way: the test writes an operation, the script runs it with the SDK's high-level
`mcp.Client` and answers with one line. Nothing else is written to stdout (the SDK logs and
a stdio server's stderr go to stderr).

The first operation must be `connect`; `close` ends the session and the script.

    {"op": "connect", "transport": {"http": URL} | {"stdio": {"command", "args", "env"}},
     "answers": {KEY: {"elicitation": ElicitResult} | {"sampling": CreateMessageResult}
                       | {"roots": ListRootsResult}},
     "capabilities": ["elicitation", "sampling", "roots"]}        (optional subset)
    {"op": "list_tools" | "list_prompts" | "list_resources" | "list_resource_templates"}
    {"op": "call_tool", "name", "arguments"}
    {"op": "get_prompt", "name", "arguments"}
    {"op": "read_resource", "uri"}
    {"op": "complete", "ref", "argument", "context_arguments"}
    {"op": "get_prompt_once" | "call_tool_once" | "read_resource_once", ...,
     "input_responses", "request_state"}          (one round, no driver: ClientSession with
                                                   allow_input_required=True)
    {"op": "listen", "filter": {"tools_list_changed"?, "prompts_list_changed"?,
     "resources_list_changed"?, "resource_subscriptions"?}, "calls": [[NAME, ARGUMENTS], ...],
     "events": N}                                 (`Client.listen`: once acknowledged, makes
                                                   the calls, then collects N events within
                                                   10 s and leaves the subscription)
    {"op": "close"}

Every answer is {"ok": true, "result": <the SDK's parsed result, dumped by alias>,
"asked": [<what the callbacks were asked during the operation>]} or {"ok": false,
"error": {"type", "message", "code"?, "data"?}, "asked": [...]}.

The callbacks answer an input request by its key (the SDK passes the `inputRequests` key as
the callback context's `request_id`) from the `answers` of `connect`; a key without an
answer gets an error (`ErrorData` -32603), which makes the SDK abort the operation.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, TypeAdapter

try:
    _ExceptionGroup = BaseExceptionGroup  # Python >= 3.11
except NameError:  # Python 3.10: the backport anyio depends on
    from exceptiongroup import BaseExceptionGroup as _ExceptionGroup

_OUT = sys.stdout


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
    # A callback failure surfaces from the SDK's task group as a group of one.
    while isinstance(exc, _ExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    out: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, MCPError):
        out["code"] = exc.code
        if exc.data is not None:
            out["data"] = dump(exc.data)
    return out


class Host:
    """Answers input requests by key from the scripted answers, and records what it was asked."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.asked: list[dict[str, Any]] = []

    def _answer(self, kind: str, key: Any, params: Any) -> Any:
        self.asked.append({"kind": kind, "key": str(key), "params": dump(params)})
        scripted = self.answers.get(str(key), {})
        if kind not in scripted:
            return types.ErrorData(code=-32603, message=f"no scripted {kind} answer for key {key!r}")
        return scripted[kind]

    async def elicitation(self, context: Any, params: Any) -> Any:
        a = self._answer("elicitation", context.request_id, params)
        return a if isinstance(a, types.ErrorData) else types.ElicitResult.model_validate(a)

    async def sampling(self, context: Any, params: Any) -> Any:
        a = self._answer("sampling", context.request_id, params)
        return a if isinstance(a, types.ErrorData) else types.CreateMessageResult.model_validate(a)

    async def roots(self, context: Any) -> Any:
        a = self._answer("roots", context.request_id, None)
        return a if isinstance(a, types.ErrorData) else types.ListRootsResult.model_validate(a)


_REFERENCE: TypeAdapter[types.PromptReference | types.ResourceTemplateReference] = TypeAdapter(
    types.PromptReference | types.ResourceTemplateReference
)

_RESPONSES: TypeAdapter[types.InputResponses] = TypeAdapter(types.InputResponses)


async def run_op(client: Client, op: dict[str, Any]) -> Any:
    name = op.get("op")
    if name == "list_tools":
        return await client.list_tools()
    if name == "list_prompts":
        return await client.list_prompts()
    if name == "list_resources":
        return await client.list_resources()
    if name == "list_resource_templates":
        return await client.list_resource_templates()
    if name == "call_tool":
        return await client.call_tool(op["name"], op.get("arguments"))
    if name == "get_prompt":
        return await client.get_prompt(op["name"], op.get("arguments"))
    if name == "read_resource":
        return await client.read_resource(op["uri"])
    if name == "complete":
        return await client.complete(
            _REFERENCE.validate_python(op["ref"]), op["argument"], op.get("context_arguments")
        )
    if name == "listen":
        return await listen(client, op)
    raw = op.get("input_responses")
    responses = _RESPONSES.validate_python(raw) if raw is not None else None
    state = op.get("request_state")
    session = client.session
    if name == "get_prompt_once":
        return await session.get_prompt(
            op["name"], op.get("arguments"), input_responses=responses, request_state=state, allow_input_required=True
        )
    if name == "call_tool_once":
        return await session.call_tool(
            op["name"], op.get("arguments"), input_responses=responses, request_state=state, allow_input_required=True
        )
    if name == "read_resource_once":
        return await session.read_resource(
            op["uri"], input_responses=responses, request_state=state, allow_input_required=True
        )
    raise ValueError(f"unknown op {name!r}")


async def listen(client: Client, op: dict[str, Any]) -> dict[str, Any]:
    """Opens a listen stream with the SDK, makes the calls, collects the events."""
    events: list[dict[str, Any]] = []
    async with client.listen(**op.get("filter", {})) as sub:
        honored = dump(sub.honored)
        for tool, arguments in op.get("calls", []):
            await client.call_tool(tool, arguments)
        with anyio.fail_after(10):
            async for event in sub:
                events.append({"type": type(event).__name__, **vars(event)})
                if len(events) >= op.get("events", 1):
                    break
    return {"honored": honored, "events": events}


async def read_op() -> dict[str, Any] | None:
    line = await anyio.to_thread.run_sync(sys.stdin.readline)
    if not line:
        return None
    return json.loads(line)


async def main() -> None:
    first = await read_op()
    if first is None or first.get("op") != "connect":
        emit({"ok": False, "error": {"type": "Protocol", "message": "the first operation must be connect"}})
        return
    transport = first["transport"]
    if "http" in transport:
        server: Any = transport["http"]
    else:
        s = transport["stdio"]
        server = StdioServerParameters(command=s["command"], args=s.get("args", []), env=s.get("env"))
    host = Host(first.get("answers", {}))
    wanted = set(first.get("capabilities", ["elicitation", "sampling", "roots"]))
    client = Client(
        server,
        elicitation_callback=host.elicitation if "elicitation" in wanted else None,
        sampling_callback=host.sampling if "sampling" in wanted else None,
        list_roots_callback=host.roots if "roots" in wanted else None,
        client_info=types.Implementation(name="python-sdk-peer", version="0.1.0"),
    )
    try:
        async with client:
            session = client.session
            emit({
                "ok": True,
                "result": {
                    "protocolVersion": client.protocol_version,
                    "serverInfo": dump(client.server_info),
                    "capabilities": dump(client.server_capabilities),
                    "instructions": client.instructions,
                    "discovered": session.discover_result is not None,
                    "initialized": session.initialize_result is not None,
                    "sdkVersion": _sdk_version(),
                },
                "asked": [],
            })
            while (op := await read_op()) is not None:
                if op.get("op") == "close":
                    emit({"ok": True, "result": None, "asked": []})
                    break
                host.asked = []
                try:
                    result = await run_op(client, op)
                    emit({"ok": True, "result": dump(result), "asked": host.asked})
                except Exception as exc:  # reported to the test, which decides
                    traceback.print_exc(file=sys.stderr)
                    emit({"ok": False, "error": describe(exc), "asked": host.asked})
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        emit({"ok": False, "error": describe(exc), "asked": []})


def _sdk_version() -> str:
    from importlib.metadata import version

    return version("mcp")


if __name__ == "__main__":
    anyio.run(main)
