"""ASGI middleware of the kit: security headers, the Host check, body and JSON limits.

They wrap the whole application (outside routing), so their rules hold for every
response, including 404s, static files, JSON errors and refusals made by the limits
themselves. Order, outermost first: headers, host, body limit. The body limit asks the
app's gate for credentials before it reads a body (do no work for strangers).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.concurrency import run_in_threadpool

from docket.web.errors import error_body

log = logging.getLogger(__name__)
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
# Says whether a request may have its body read; returns the refusal (an ASGI app) if not.
Gate = Callable[[Scope], Awaitable[ASGIApp | None]]
# Bodies larger than this are depth-scanned in a worker thread, not on the event loop.
SCAN_IN_THREAD_BYTES = 256 * 1024

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


def json_depth(body: bytes) -> int:
    """Deepest nesting of arrays and objects in a JSON text (a scalar is 0), without parsing.

    A vectorised byte scan: escaped backslashes and quotes are dropped, a running count
    of quotes marks what is inside strings, and the running sum of brackets outside
    strings is the depth. numpy releases the GIL in these loops, so a scan in a worker
    thread leaves the event loop free. On malformed JSON it is the deepest a recursive
    parser could go before failing.
    """
    import numpy as np  # lazily: the CLI's start-up must not pay for numpy

    if b"\\" in body:
        body = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    data = np.frombuffer(body, dtype=np.uint8)
    outside = (np.cumsum(data == ord('"'), dtype=np.uint8) & 1) == 0  # parity survives wrap
    opens = (data == ord("[")) | (data == ord("{"))
    closes = (data == ord("]")) | (data == ord("}"))
    steps = (opens & outside).view(np.int8) - (closes & outside).view(np.int8)
    return int(np.cumsum(steps, dtype=np.int32).max(initial=0))


def _has_body(scope: Scope) -> bool:
    declared = _header(scope, b"content-length")
    return declared not in ("", "0") or "chunked" in _header(scope, b"transfer-encoding").lower()


class BodyLimits:
    """Credentials first, then the body, counting bytes: 413 past ``max_bytes``, 400 past
    ``max_depth``.

    A declared ``Content-Length`` above the limit is refused without reading. Otherwise a
    request with a body goes through ``gate`` first: a stranger is refused there and
    their body is never read, let alone parsed. The body is then read (at most
    ``max_bytes`` are ever held) and a JSON body is checked for nesting depth with a byte
    scan (a parser would otherwise recurse), in a worker thread when it is large.
    """

    def __init__(
        self, app: ASGIApp, max_bytes: int, max_depth: int, gate: Gate | None = None
    ) -> None:
        self.app, self.max_bytes, self.max_depth, self.gate = app, max_bytes, max_depth, gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared.isascii() and declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(send)
            return
        refused = await self.gate(scope) if self.gate and _has_body(scope) else None
        if refused is not None:
            await refused(scope, receive, send)
            return
        body = await self._read(receive)
        if body is None:
            await self._too_large(send)
            return
        refusal = await self._json_refusal(scope, body)
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

    async def _json_refusal(self, scope: Scope, body: bytes) -> str:
        if "json" not in _header(scope, b"content-type").lower() or not body:
            return ""
        if len(body) > SCAN_IN_THREAD_BYTES:
            depth = await run_in_threadpool(json_depth, body)
        else:
            depth = json_depth(body)
        if depth > self.max_depth:
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
