"""A scripted OpenAI-compatible chat server on loopback, for tests of real HTTP paths.

It is a real ``http.server`` in a thread: the client under test opens sockets, sends JSON
and reads whatever status and body the script chose (including broken ones), so fault
handling is tested against the wire, not against a mocked SDK.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """What the server answers: a status, a body (dict = JSON) and a content type."""

    status: int = 200
    body: dict[str, Any] | str = ""
    content_type: str = "application/json"


Script = Callable[[dict[str, Any]], Reply | str]
"""Maps a request body to a Reply, or to the text of a normal chat completion."""


def chat(text: str, prompt_tokens: int = 20, completion_tokens: int = 2) -> dict[str, Any]:
    """The JSON of a well-formed chat completion answering ``text``."""
    return {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }  # fmt: skip


@dataclass
class ScriptedServer:
    """Counts requests, keeps their bodies and the peak of requests in flight."""

    script: Script
    delay_s: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    peak_in_flight: int = 0
    port: int = 0
    gets: dict[str, Reply] = field(default_factory=dict)
    """Replies to GET requests by path (``/props``, ``/v1/models``); others get a 404."""
    get_paths: list[str] = field(default_factory=list)
    slots: int = 0
    """Requests served at once (0: all); the others queue, as at a llama.cpp server."""
    _slots: threading.Semaphore | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        """The ``/v1`` base URL of the server."""
        return f"http://127.0.0.1:{self.port}/v1"

    def model(self, name: str = "m", params: str = "") -> str:
        """A docket model name for this server, e.g. with ``params='max_in_flight=4'``."""
        return f"openai-compatible:{self.base_url}#{name}" + (f"?{params}" if params else "")

    def answer(self, body: dict[str, Any]) -> Reply:
        """Run the script for one request, keeping count."""
        with self._lock:
            self.requests.append(body)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self._slots is not None:
                with self._slots:
                    return self._run(body)
            return self._run(body)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _run(self, body: dict[str, Any]) -> Reply:
        if self.delay_s:
            time.sleep(self.delay_s)
        reply = self.script(body)
        return Reply(body=chat(reply)) if isinstance(reply, str) else reply


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body go out in two writes: with Nagle's algorithm on, the
        # body waits for the client's delayed ACK, about 40 ms a reply on Linux loopback.
        disable_nagle_algorithm = True

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            with server._lock:
                server.get_paths.append(self.path)
            self._send(server.gets.get(self.path, Reply(404, {"detail": "Not Found"})))

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("Content-Length") or 0)
            self._send(server.answer(json.loads(self.rfile.read(length) or b"{}")))

        def _send(self, reply: Reply) -> None:
            data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
            payload = data.encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

        def log_message(self, *_args: Any) -> None:
            pass

    return Handler


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # socketserver's 5 would make clients wait to connect

    def handle_error(self, request, client_address) -> None:  # type: ignore[no-untyped-def]
        # Tests kill clients mid-request on purpose; a reset connection is expected there.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def serve(
    script: Script,
    *,
    delay_s: float = 0.0,
    gets: dict[str, Reply] | None = None,
    slots: int = 0,
) -> Iterator[ScriptedServer]:
    """Run a :class:`ScriptedServer` on a free loopback port for the ``with`` block."""
    state = ScriptedServer(script, delay_s=delay_s, gets=dict(gets or {}), slots=slots)
    state._slots = threading.Semaphore(slots) if slots else None
    httpd = _Server(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def user_text(body: dict[str, Any]) -> str:
    """All message contents of a request body, joined."""
    return "\n".join(m["content"] for m in body.get("messages", []))
