"""Serving an app: the socket is bound first, so a start-up fault is one docket error.

uvicorn binds its socket after it has started, so a port in use, a port out of range or
a host that is no local address came out as uvicorn's log line or a traceback, after the
app had already printed its address. :func:`serve` binds first, raising a
:class:`~docket.errors.ConfigError` naming the host and port, then announces the address
(the real one: port 0 picks a free port) and hands the bound socket to uvicorn.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable
from typing import Any

from docket.errors import ConfigError

MAX_PORT = 65_535
_PORT_HINT = "give another --port, or stop the program that uses it"


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (port 0: any free port).

    Raises:
        ConfigError: the port is out of range or in use, the host is no address of this
            machine, or listening there needs privileges.
    """
    if not 0 <= port <= MAX_PORT:
        raise ConfigError(f"--port {port} is not a TCP port", hint=f"give 1 to {MAX_PORT}")
    where = f"{_shown(host)}:{port}"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise ConfigError(
            f"cannot listen on {where}: unknown host '{host}' ({exc})",
            hint="give an address of this machine with --host, e.g. 127.0.0.1",
        ) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise _bind_error(where, port, exc) from None
    sock.set_inheritable(True)
    return sock


def _bind_error(where: str, port: int, exc: OSError) -> ConfigError:
    if exc.errno == errno.EADDRINUSE:
        return ConfigError(f"cannot listen on {where}: the port is in use", hint=_PORT_HINT)
    if exc.errno == errno.EACCES:
        return ConfigError(
            f"cannot listen on {where}: permission denied",
            hint="ports below 1024 need privileges; give a --port above 1023",
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return ConfigError(
            f"cannot listen on {where}: not an address of this machine",
            hint="give an address of this machine with --host, e.g. 127.0.0.1",
        )
    return ConfigError(f"cannot listen on {where}: {exc.strerror or exc}", hint=_PORT_HINT)


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def base_url(sock: socket.socket, host: str) -> str:
    """``http://host:port`` of a bound socket, with the port it really got."""
    return f"http://{_shown(host)}:{sock.getsockname()[1]}"


def serve(app: Any, host: str, port: int, announce: Callable[[str], None]) -> None:
    """Bind ``host``:``port``, call ``announce(base url)``, then serve ``app`` until stopped.

    Raises:
        ConfigError: the socket cannot be bound (see :func:`bind`); nothing is announced.
    """
    import uvicorn

    sock = bind(host, port)
    try:
        announce(base_url(sock, host))
        config = uvicorn.Config(app, log_level="warning")
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
