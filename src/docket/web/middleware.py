"""ASGI middleware of the kit: security headers, the Host check, body and JSON limits.

They wrap the whole application (outside routing and authentication), so their rules
hold for every response, including 404s, static files, JSON errors and refusals made
by the limits themselves. Order, outermost first: headers, host, body limit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from docket.web.errors import error_body

log = logging.getLogger(__name__)
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    # "no-referrer" would make browsers send "Origin: null" on same-site forms.
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}


async def send_json(send: Send, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
    """Send a complete JSON response through a raw ASGI ``send``."""
    data = json.dumps(body).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})


class SecurityHeaders:
    """Add the security headers (and ``Cache-Control: no-store`` off /static) to every answer.

    An exception that escapes the application is logged and answered with a 500 in the
    one error shape, so even that answer carries the headers.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = dict(SECURITY_HEADERS)
        if not scope["path"].startswith("/static/"):
            extra["cache-control"] = "no-store"
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                names = {k.lower() for k, _ in message.get("headers", [])}
                added = [
                    (k.encode(), v.encode()) for k, v in extra.items() if k.encode() not in names
                ]
                message["headers"] = [*message.get("headers", []), *added]
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:  # the last line of defence: no traceback to the client
            log.exception("unexpected error on %s", scope.get("path"))
            if not started:
                body = error_body(f"internal error: {type(exc).__name__}", "see the server log")
                await send_json(send, 500, body, extra)


class HostCheck:
    """Refuse a request whose Host header is not allowed (guards against DNS rebinding)."""

    def __init__(self, app: ASGIApp, allowed: tuple[str, ...] | None) -> None:
        self.app, self.allowed = app, None if allowed is None else {h.lower() for h in allowed}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.allowed is not None:
            host = _header(scope, b"host").lower()
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if host not in self.allowed and name not in self.allowed:
                body = error_body(
                    f"host '{host}' is not served here", "use the address printed at start-up"
                )
                await send_json(send, 400, body, {})
                return
        await self.app(scope, receive, send)


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return ""


def json_depth(value: Any) -> int:
    """Deepest nesting of lists and dicts in a parsed JSON value (a scalar is 0)."""
    depth, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            depth = max(depth, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return depth


class BodyLimits:
    """Read the whole body first, counting bytes: 413 past ``max_bytes``, 400 past ``max_depth``.

    The body is read before the application sees the request, so nothing is parsed and
    nobody is authenticated for an oversized request, and at most ``max_bytes`` are ever
    held. A declared ``Content-Length`` above the limit is refused without reading.
    JSON bodies are checked for nesting depth (a parser would otherwise recurse).
    """

    def __init__(self, app: ASGIApp, max_bytes: int, max_depth: int) -> None:
        self.app, self.max_bytes, self.max_depth = app, max_bytes, max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(send)
            return
        body = await self._read(receive)
        if body is None:
            await self._too_large(send)
            return
        refusal = self._json_refusal(scope, body)
        if refusal:
            await send_json(send, 400, error_body(refusal, "send flatter JSON"), {})
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read(self, receive: Receive) -> bytes | None:
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    def _json_refusal(self, scope: Scope, body: bytes) -> str:
        if "json" not in _header(scope, b"content-type").lower() or not body:
            return ""
        try:
            value = json.loads(body)
        except RecursionError:
            return f"the JSON body is nested deeper than {self.max_depth} levels"
        except ValueError:
            return ""  # malformed JSON: the route reports it in its own words
        if json_depth(value) > self.max_depth:
            return f"the JSON body is nested deeper than {self.max_depth} levels"
        return ""

    async def _too_large(self, send: Send) -> None:
        message = f"the request body is larger than {self.max_bytes} bytes"
        await send_json(send, 413, error_body(message, "send less data per request"), {})


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # later calls wait for the disconnect (SSE relies on it)

    return replay
