"""A reference legacy server written with the official Python SDK 1.30's own FastMCP.

It speaks protocol 2025-11-25 (`initialize`, a session, server-to-client requests in the
middle of `tools/call`) and mirrors three of our example tools closely enough that the
Rust tests (tests/tests/python_legacy.rs) run the same flows against it and against our
`serve`, and compare what the client was asked:

* `get_weather(location)`: a form elicitation "Please provide your GitHub username" with a
  `{name: string}` schema (`ctx.elicit`), then the forecast of
  examples/src/tools/get_weather.rs (same table, same made-up values, same texts for
  accept, decline and cancel).
* `summarize_repo(audience, critique=false)`: two `sampling/createMessage` requests
  (`ctx.session.create_message`), `pick_files` then `summary`, with the prompts, system
  prompt, model preferences, `maxTokens` and `includeContext` of
  examples/src/tools/summarize_repo.rs, over the repository given with `--repo` (the tests
  pass examples/demo-repo, the files of our embedded demo repository). The model's picks
  are checked like ours (a JSON array of at most three listed files). A client that did not
  declare sampling gets an error result naming the capability, and no request.
* `list_roots()`: one `roots/list` request, reported as `{count, roots: [{uri, name,
  local}]}`.

Every server-to-client request is sent with the `tools/call` as its related request, so
over Streamable HTTP it travels in that POST's SSE response (as in our server), not on
the GET stream.

    reference_legacy_server.py --repo DIR                      # stdio
    reference_legacy_server.py --repo DIR --http 127.0.0.1:0   # Streamable HTTP at /mcp

Over HTTP it writes `listening on http://HOST:PORT/mcp` to stderr once bound (like
`serve`).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.shared.message import ServerMessageMetadata
from pydantic import BaseModel, Field

PICK_FILES_PROMPT = "Choose three representative files and return a JSON array."
SYSTEM_PROMPT = "Return only the requested value."
SKIPPED_DIRS = {".git", "target"}
MAX_PICKS = 3

server = FastMCP("reference-legacy-server")
REPO: Path | None = None


class GithubLogin(BaseModel):
    name: str = Field(description="Your GitHub username.")


def forecast(location: str) -> tuple[str, int]:
    key = location.strip().lower()
    table = {"london": ("cloudy", 14), "new york": ("sunny", 22), "paris": ("rain", 17)}
    if key in table:
        return table[key]
    h = 7
    for b in key.encode():
        h = (h * 31 + b) % (1 << 64)
    return (["sunny", "cloudy", "windy", "rain"][h % 4], 5 + h % 25)


def text_result(text: str, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structuredContent=structured
    )


@server.tool(description="Get the weather for a location (asks for your GitHub username first).")
async def get_weather(location: str, ctx: Context) -> types.CallToolResult:
    answer = await ctx.elicit("Please provide your GitHub username", GithubLogin)
    if answer.action == "accept":
        sky, high = forecast(location)
        user = answer.data.name
        return text_result(
            f"Weather in {location} for {user}: {sky}, high {high} °C.",
            {"location": location, "sky": sky, "highC": high, "requestedBy": user},
        )
    if answer.action == "decline":
        return text_result(
            f"No problem: without a GitHub username I can't look up the weather for {location}. "
            "Ask again whenever you like."
        )
    return text_result("Cancelled: the weather lookup was stopped, nothing was done.")


def list_files(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIPPED_DIRS]
        for f in filenames:
            out.append((Path(dirpath) / f).relative_to(root).as_posix())
    return sorted(out)


def common(messages_text: str) -> dict[str, Any]:
    return dict(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=messages_text))],
        system_prompt=SYSTEM_PROMPT,
        model_preferences=types.ModelPreferences(costPriority=0.8, intelligencePriority=0.2),
        max_tokens=400,
        include_context="none",
    )


def answer_text(result: types.CreateMessageResult) -> str:
    if not isinstance(result.content, types.TextContent):
        raise ToolError("the model answered without text")
    return result.content.text


@server.tool(description="Summarize the server's repository for an audience with your model.")
async def summarize_repo(audience: str, ctx: Context, critique: bool = False) -> types.CallToolResult:
    assert REPO is not None
    caps = types.ClientCapabilities(sampling=types.SamplingCapability())
    if not ctx.session.check_client_capability(caps):
        raise ToolError("summarize_repo needs the client's sampling capability, which it did not declare")
    files = list_files(REPO)
    listing = f"{PICK_FILES_PROMPT}\n\nFiles in the repository:\n" + "".join(f"- {f}\n" for f in files)
    picked = await ctx.session.create_message(**common(listing), related_request_id=ctx.request_id)
    try:
        picks = json.loads(answer_text(picked))
    except json.JSONDecodeError as e:
        raise ToolError(f"pick_files: not JSON: {e}") from e
    if (
        not isinstance(picks, list)
        or len(picks) > MAX_PICKS
        or not all(isinstance(p, str) and p in files for p in picks)
    ):
        raise ToolError("pick_files: expected a JSON array of at most three listed files")
    text = f"Summarize this repository in at most three sentences for the audience below.\nAudience: {audience}\n"
    for p in picks:
        text += f"\n=== {p} ===\n{(REPO / p).read_text()}\n"
    summary_result = await ctx.session.create_message(**common(text), related_request_id=ctx.request_id)
    summary = answer_text(summary_result)
    structured: dict[str, Any] = {"files": picks, "summary": summary}
    out = f"Files: {', '.join(picks)}\n\nSummary: {summary}"
    if critique:
        c = await ctx.session.create_message(
            **common(f"Critique this summary in one sentence: what is missing or misleading?\n\nSummary:\n{summary}"),
            related_request_id=ctx.request_id,
        )
        structured["critique"] = answer_text(c)
        out += f"\n\nCritique: {structured['critique']}"
    return text_result(out, structured)


@server.tool(description="List the directories (roots) your client shares with this server.")
async def list_roots(ctx: Context) -> types.CallToolResult:
    # ServerSession.list_roots() has no related request; send it with one so that it
    # travels in this call's SSE response over HTTP.
    roots = await ctx.session.send_request(
        types.ServerRequest(types.ListRootsRequest()),
        types.ListRootsResult,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
    )
    report = {
        "count": len(roots.roots),
        "roots": [{"uri": str(r.uri), "name": r.name, "local": str(r.uri).startswith("file://")} for r in roots.roots],
    }
    return text_result(json.dumps(report), report)


async def serve_http(host: str, port: int) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    bound = sock.getsockname()[1]
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)
    print(f"listening on http://{host}:{bound}/mcp", file=sys.stderr, flush=True)
    await uv.serve(sockets=[sock])


def main() -> None:
    global REPO
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    parser.add_argument("--http", metavar="HOST:PORT")
    args = parser.parse_args()
    REPO = Path(args.repo).resolve()
    if args.http:
        host, _, port = args.http.rpartition(":")
        anyio.run(serve_http, host, int(port))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
