"""Calls in flight a user controls: the flag, the setting and the model-name parameter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app
from docket.store import open_store
from docket.store.tables import Job
from tests.scripted_server import serve

runner = CliRunner()
GOOD = json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "scripted"})


def _pairs(tmp_path: Path, n: int = 24) -> Path:
    path = tmp_path / "pairs.jsonl"
    rows = [{"qid": "q", "query": "egg", "docid": f"d{i}", "text": f"Egg {i}."} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    ("params", "flags", "env", "peak"),
    [
        ("max_in_flight=3", (), {}, 3),  # the model name's parameter
        ("", ("--max-in-flight", "5"), {}, 5),  # the flag
        ("", (), {"DOCKET_MAX_IN_FLIGHT": "4"}, 4),  # the setting (environment or docket.toml)
        ("max_in_flight=2", ("--max-in-flight", "6"), {}, 2),  # the name wins for its model
        ("", ("--max-in-flight", "8", "--concurrency", "3"), {}, 3),  # pairs at once caps it
    ],
)
def test_calls_in_flight_at_the_server(
    tmp_path: Path, monkeypatch, params: str, flags: tuple, env: dict, peak: int
) -> None:  # type: ignore[no-untyped-def]
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    db = tmp_path / "d.db"
    with serve(lambda _body: GOOD, delay_s=0.05) as server:
        args = ["judge", str(_pairs(tmp_path)), "--method", "single", "--db", str(db)]
        result = runner.invoke(app, [*args, "--model", server.model(params=params), *flags])
        assert result.exit_code == 0, result.output
    assert server.peak_in_flight == peak and len(server.requests) == 24
    with open_store(db).session() as session:
        [job] = session.query(Job).all()
    assert job.model == server.model()  # parameters tune calls, not the job's identity


def test_a_served_model_defaults_to_64_calls_in_flight(tmp_path: Path) -> None:
    # The limit starts at 8 and doubles each round trip while answers stay fast
    # (docket.llm.limit): enough pairs for it to reach the bound.
    with serve(lambda _body: GOOD, delay_s=0.2) as server:
        args = ["judge", str(_pairs(tmp_path, 400)), "--method", "single"]
        result = runner.invoke(
            app, [*args, "--model", server.model(), "--db", str(tmp_path / "d.db")]
        )
        assert result.exit_code == 0, result.output
    assert server.peak_in_flight == 64


def _peak_of_a_run(tmp_path: Path, server, db: str, pairs: int) -> int:  # type: ignore[no-untyped-def]
    server.peak_in_flight = 0
    args = ["judge", str(_pairs(tmp_path, pairs)), "--method", "single", "--db", db]
    result = runner.invoke(app, [*args, "--model", server.model(), "--cache", "off"])
    assert result.exit_code == 0, result.output
    return server.peak_in_flight


def test_a_user_bound_is_where_the_calls_in_flight_start(tmp_path: Path) -> None:
    # 48 pairs at --max-in-flight 48: one round trip, not 8, then 16, then 24.
    with serve(lambda _body: GOOD, delay_s=1.0) as server:
        args = ["judge", str(_pairs(tmp_path, 48)), "--method", "single", "--cache", "off"]
        result = runner.invoke(app, [*args, "--model", server.model(), "--max-in-flight", "48",
                                     "--db", str(tmp_path / "d.db")])  # fmt: skip
        assert result.exit_code == 0, result.output
    # All 48 at once (a slow start could not pass 32 here: 8, then 16, then 32).
    assert server.peak_in_flight > 40


def test_a_new_process_starts_at_the_limit_the_last_one_reached(tmp_path: Path) -> None:
    # Nothing known: the first run ramps from 8; the limit it reached is kept in the user's
    # cache directory (beside the response cache), and the next run starts there.
    with serve(lambda _body: GOOD, delay_s=1.0) as server:
        first = _peak_of_a_run(tmp_path, server, str(tmp_path / "a.db"), 40)
        kept = json.loads((tmp_path / "limits.json").read_text())[server.model()]["limit"]
        assert kept > first >= 8
        again = _peak_of_a_run(tmp_path, server, str(tmp_path / "b.db"), 40)
    assert again >= min(40, kept)  # its first round trip already sends that many
