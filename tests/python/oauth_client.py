"""The official MCP Python SDK 2.x client running its whole OAuth flow against our server.

Used by tests/tests/oauth_interop.rs. Reads one JSON object from stdin, writes one to stdout:

    in:  {"url": MCP endpoint, "subject": account to log in as at the provider,
          "calls": [{"name", "arguments", "answers": {KEY: ElicitResult}}]}
    out: {"ok": true, "results": [CallToolResult | {"error": ...}], "authorizations":
          [{"scope", "resource", "login_hint"}], "prm": the metadata the SDK discovered}

The SDK does everything the MCP authorization spec asks of a client: on our 401 it reads
`resource_metadata` from the challenge, fetches the RFC 9728 metadata, discovers the
authorization server (RFC 8414 / OpenID), registers a client (RFC 7591), runs the
authorization code flow with PKCE and `resource` (RFC 8707), and retries with the token; on
a 403 `insufficient_scope` it authorizes again with the union of the scopes.

The one thing a person would do, the browser part, is done here: `redirect_handler` follows
the authorization URL with a cookie-keeping HTTP client (adding `login_hint=<subject>`, which
the test provider's automatic login uses as the account), until the provider redirects to
our redirect URI; `callback_handler` hands the code, state and iss to the SDK.

Mode `token` (argv[1] == "token") skips MCP: it registers a client and runs the code flow by
hand, printing {"access_token", "scope"} for {"issuer", "resource", "subject", "scope"}, so
that the Rust test can present one subject's token with another subject's state.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sys
import traceback
import urllib.parse as up
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URI = "http://127.0.0.1:9/callback"  # never contacted: the redirect is caught


def follow_to_redirect_uri(client: httpx2.Client, url: str) -> dict[str, str]:
    """Follows the provider's redirects (login, consent) until it sends us to REDIRECT_URI."""
    for _ in range(20):
        response = client.get(url)
        location = response.headers.get("location")
        if location is None:
            raise RuntimeError(f"the provider stopped at {response.status_code}: {response.text[:300]}")
        url = up.urljoin(url, location)
        if url.startswith(REDIRECT_URI):
            query = dict(up.parse_qsl(up.urlparse(url).query))
            if "code" not in query:
                raise RuntimeError(f"the provider refused the authorization: {query}")
            return query
    raise RuntimeError("too many redirects at the provider")


def with_login_hint(url: str, subject: str) -> str:
    parts = up.urlparse(url)
    query = up.parse_qsl(parts.query) + [("login_hint", subject)]
    return up.urlunparse(parts._replace(query=up.urlencode(query)))


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


async def flow(request: dict[str, Any]) -> dict[str, Any]:
    subject = request["subject"]
    authorizations: list[dict[str, Any]] = []
    redirect: dict[str, str] = {}
    browser = httpx2.Client()

    async def redirect_handler(url: str) -> None:
        query = dict(up.parse_qsl(up.urlparse(url).query))
        authorizations.append(
            {"scope": query.get("scope"), "resource": query.get("resource"), "login_hint": subject}
        )
        result = await anyio.to_thread.run_sync(follow_to_redirect_uri, browser, with_login_hint(url, subject))
        redirect.clear()
        redirect.update(result)

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=redirect["code"], state=redirect.get("state"), iss=redirect.get("iss"))

    storage = MemoryStorage()
    auth = OAuthClientProvider(
        server_url=request["url"],
        client_metadata=OAuthClientMetadata(
            client_name="mcp-tool oauth interop",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    answers: dict[str, Any] = {}

    async def elicitation(context: Any, params: Any) -> Any:
        answer = answers.get(str(context.request_id))
        if answer is None:
            return types.ErrorData(code=-32603, message=f"no answer for {context.request_id!r}")
        return types.ElicitResult.model_validate(answer)

    results: list[Any] = []
    async with create_mcp_http_client(auth=auth) as http:
        async with Client(streamable_http_client(request["url"], http_client=http), elicitation_callback=elicitation) as client:
            for call in request["calls"]:
                answers.clear()
                answers.update(call.get("answers", {}))
                try:
                    result = await client.call_tool(call["name"], call.get("arguments"))
                    results.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
                except Exception as exc:  # reported to the test
                    traceback.print_exc(file=sys.stderr)
                    results.append({"error": {"type": type(exc).__name__, "message": str(exc)}})
    prm = auth.context.protected_resource_metadata
    return {
        "ok": True,
        "results": results,
        "authorizations": authorizations,
        "prm": prm.model_dump(mode="json", exclude_none=True) if prm else None,
        "granted": storage.tokens.scope if storage.tokens else None,
    }


def token(request: dict[str, Any]) -> dict[str, Any]:
    """A token for `subject` with `scope`, by the code flow done by hand (see the module doc)."""
    issuer, resource = request["issuer"], request["resource"]
    with httpx2.Client() as client:
        config = client.get(f"{issuer}/.well-known/oauth-authorization-server").json()
        registered = client.post(
            config["registration_endpoint"],
            json={
                "redirect_uris": [REDIRECT_URI],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
            },
        ).json()
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = {
            "response_type": "code",
            "client_id": registered["client_id"],
            "redirect_uri": REDIRECT_URI,
            "state": secrets.token_urlsafe(16),
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": resource,
            "scope": request.get("scope", ""),
            "login_hint": request["subject"],
        }
        redirect = follow_to_redirect_uri(client, f"{config['authorization_endpoint']}?{up.urlencode(query)}")
        answer = client.post(
            config["token_endpoint"],
            data={
                "grant_type": "authorization_code",
                "code": redirect["code"],
                "redirect_uri": REDIRECT_URI,
                "client_id": registered["client_id"],
                "code_verifier": verifier,
                "resource": resource,
            },
        ).json()
    if "access_token" not in answer:
        raise RuntimeError(f"no token: {answer}")
    return {"ok": True, "access_token": answer["access_token"], "scope": answer.get("scope")}


def main() -> None:
    request = json.loads(sys.stdin.read())
    try:
        if len(sys.argv) > 1 and sys.argv[1] == "token":
            out = token(request)
        else:
            out = anyio.run(flow, request)
    except BaseException as exc:  # reported to the test, which decides
        traceback.print_exc(file=sys.stderr)
        out = {"ok": False, "error": {"type": type(exc).__name__, "message": str(exc)}}
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
