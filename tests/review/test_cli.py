"""The ``docket review`` commands."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from docket.cli.review import app
from docket.review.models import Assignment, Reviewer
from docket.review.queue import enqueue, record_decision
from docket.store.base import open_store
from docket.web import sha256
from tests.review.review_helpers import relevance_payload

runner = CliRunner()


def _run(*args: str) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "docket.db")
    store = open_store(path)
    with store.session() as session:
        for i in range(2):
            enqueue(
                session,
                job="j",
                kind="relevance",
                item_key=f"q/{i}",
                payload=relevance_payload(gold=1),
                required_reviews=2,
            )
    store.close()
    return path


def test_add_reviewer_prints_a_token_stored_only_as_hash(db: str) -> None:
    token = _run("add-reviewer", "ann", "--db", db, "--admin").strip()
    assert token.startswith("dkr_") and len(token) > 40
    with open_store(db).session() as session:
        reviewer = session.scalars(select(Reviewer)).one()
    assert reviewer.is_admin and reviewer.token_hash == sha256(token)
    new = _run("reset-token", "ann", "--db", db).strip()
    assert new != token and new.startswith("dkr_")
    assert "ann" in _run("reviewers", "--db", db)


def test_duplicate_reviewer_is_one_line_exit_2(
    db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from docket.cli.main import main

    _run("add-reviewer", "ann", "--db", db)
    monkeypatch.setattr(sys, "argv", ["docket", "review", "add-reviewer", "ann", "--db", db])
    with pytest.raises(SystemExit) as exit_info:
        main()
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1
    assert "reviewer 'ann' already exists" in err and "reset-token ann" in err


def test_assign_stats_blind_close(db: str) -> None:
    for name in ("ann", "bob"):
        _run("add-reviewer", name, "--db", db)
    assert _run("assign", "--job", "j", "-r", "ann", "-r", "bob", "--db", db).strip() == (
        "4 new assignment(s)"
    )
    store = open_store(db)
    with store.session() as session:
        assert len(session.scalars(select(Assignment)).all()) == 4
        record_decision(session, 1, "ann", 1, seconds=3)
        record_decision(session, 1, "bob", 0, seconds=5)
    data = json.loads(_run("stats", "--db", db, "--json"))
    assert data["tasks"] == {"total": 2, "open": 1, "done": 1, "closed": 0}
    assert data["time"]["mean_seconds"] == 4.0 and data["gold"]["all"]["accuracy"] == 0.5
    table = _run("stats", "--db", db)
    assert "Fleiss' kappa" in table and "2 (1 / 1 / 0)" in table
    assert _run("blind", "--job", "j", "--fraction", "1", "--db", db).strip() == "1 task(s) blind"
    assert _run("close", "2", "--db", db).strip() == "task 2 closed"
    assert "active=False" in _run("set-reviewer", "bob", "--inactive", "--db", db)


def test_labelstudio_export_and_import(db: str, tmp_path: Path) -> None:
    out, config = tmp_path / "ls.json", tmp_path / "config.xml"
    assert "2 task(s) written" in _run(
        "export-labelstudio", str(out), "--db", db, "--config", str(config)
    )
    assert json.loads(out.read_text())[0]["data"]["docket"]["job"] == "j"
    assert '<Choices name="relevance"' in config.read_text()
    fresh = str(tmp_path / "fresh.db")
    assert "tasks new: 2" in _run("import-labelstudio", str(out), "--db", fresh)
    assert "tasks existing: 2" in _run("import-labelstudio", str(out), "--db", fresh)


def test_serve_starts_the_app_and_prints_its_address(db: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    docket = Path(sys.executable).with_name("docket")
    process = subprocess.Popen(
        [str(docket), "review", "serve", "--db", db, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert line.startswith(f"docket review: http://127.0.0.1:{port}/")
        deadline = time.monotonic() + 20
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/queue", follow_redirects=False)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline, "server did not come up"
                time.sleep(0.1)
        assert response.status_code == 303 and response.headers["location"].startswith("/login")
        foreign = httpx.get(f"http://127.0.0.1:{port}/login", headers={"Host": "evil.example"})
        assert foreign.status_code == 400  # DNS-rebinding guard on the real server
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
