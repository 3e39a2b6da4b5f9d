"""The web apps' start-up faults are one docket line and exit 2, before the address line.

A port in use used to print the serving address, then uvicorn's ``ERROR: [Errno 98]``,
and exit 3; ``--port 99999`` printed a 71-line traceback.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from docket.cli.main import main
from docket.errors import ConfigError
from docket.web.serve import base_url, bind

RULES = str(Path(__file__).resolve().parents[2] / "examples" / "sop" / "rules.yaml")


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port another program listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.bind(("127.0.0.1", 0))
        other.listen(1)
        yield other.getsockname()[1]


def _main(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    with pytest.raises(SystemExit) as caught:
        main()
    captured = capsys.readouterr()
    return caught.value.code, captured.out, captured.err.strip()


def _serve_args(app: str, tmp_path: Path) -> list[str]:
    db = ["--db", str(tmp_path / "d.db")]
    return ["review", "serve", *db] if app == "review" else ["verify", "serve", "-r", RULES, *db]


@pytest.mark.parametrize("app", ["review", "verify"])
def test_a_port_in_use_is_one_line_and_exit_2_before_the_address(
    app: str,
    taken_port: int,
    tmp_path: Path,
    monkeypatch,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    args = [*_serve_args(app, tmp_path), "--port", str(taken_port), "--model", "fake:echo"]
    args = args if app == "verify" else args[:-2]
    code, out, err = _main(monkeypatch, capsys, *args)
    assert code == 2, (out, err)
    assert "http://" not in out, out
    assert err == (
        f"error: cannot listen on 127.0.0.1:{taken_port}: the port is in use "
        "(give another --port, or stop the program that uses it)"
    ), err


@pytest.mark.parametrize("app", ["review", "verify"])
def test_a_port_out_of_range_is_one_line_and_exit_2(
    app: str,
    tmp_path: Path,
    monkeypatch,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    code, out, err = _main(monkeypatch, capsys, *_serve_args(app, tmp_path), "--port", "99999")
    assert code == 2 and "http://" not in out
    assert err == "error: --port 99999 is not a TCP port (give 1 to 65535)", err


def test_a_host_that_is_not_this_machine_is_refused() -> None:
    with pytest.raises(ConfigError, match="cannot listen on 192.0.2.1:8765"):
        bind("192.0.2.1", 8765).close()  # TEST-NET-1: no machine's own address


def test_port_0_binds_a_free_port_and_the_address_shows_it() -> None:
    sock = bind("127.0.0.1", 0)
    try:
        port = sock.getsockname()[1]
        assert port > 0 and base_url(sock, "127.0.0.1") == f"http://127.0.0.1:{port}"
    finally:
        sock.close()
