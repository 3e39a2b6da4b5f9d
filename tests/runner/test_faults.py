"""Faults that must not stop a job, each against a scripted chat server on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app
from docket.store import load_judgments, open_store
from docket.store.claims import failed_pairs
from tests.scripted_server import Reply, serve, user_text

runner = CliRunner()
GOOD = json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "scripted"})
REFUSAL = Reply(400, {"error": {"message": "maximum context length is 8192 tokens"}})


def _pairs(tmp_path: Path, texts: dict[str, str]) -> Path:
    path = tmp_path / "pairs.jsonl"
    lines = [
        json.dumps({"qid": "q1", "query": "boil an egg", "docid": d, "text": t})
        for d, t in texts.items()
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


TEXTS = {
    "d1": "Boil the egg six minutes.",
    "d2": "HUGE DOCUMENT that no context holds.",
    "d3": "Eggs cook in water.",
    "d4": "Chickens lay eggs.",
}


def _refuse_huge(body: dict, limit: dict[str, bool]) -> Reply | str:
    return REFUSAL if limit["small"] and "HUGE DOCUMENT" in user_text(body) else GOOD


def _judge(db: Path, pairs: Path, model: str, *extra: str, method: str = "single"):  # type: ignore[no-untyped-def]
    args = ["judge", str(pairs), "--method", method, "--model", model, "--db", str(db)]
    return runner.invoke(app, [*args, "--job", "j", "--cache", "off", "--max-retries", "1", *extra])


def test_a_refused_pair_fails_alone_and_is_retried_only_when_asked(tmp_path: Path) -> None:
    pairs, db = _pairs(tmp_path, TEXTS), tmp_path / "d.db"
    limit = {"small": True}
    with serve(lambda body: _refuse_huge(body, limit)) as server:
        first = _judge(db, pairs, server.model())
        assert first.exit_code == 3, first.output  # failed pairs fail the command
        assert "failed (q1, d2): model" in first.output and "8192 tokens" in first.output
        assert "--retry-failed" in first.output
        assert len(server.requests) == 4  # a refusal is not retried
        with open_store(db).session() as session:
            assert {r.docid for r in load_judgments(session, "j")} == {"d1", "d3", "d4"}
            [(qid, docid, reason)] = failed_pairs(session, "j")
        assert (qid, docid) == ("q1", "d2") and "(400)" in reason
        rerun = _judge(db, pairs, server.model(), "--allow-failed")
        assert rerun.exit_code == 0 and len(server.requests) == 4  # no call at all
        assert "failed (q1, d2)" in rerun.output
        export = runner.invoke(
            app, ["export", "--job", "j", "--db", str(db), "-o", str(tmp_path / "q")]
        )
        assert "1 failed pairs not exported" in export.output
        limit["small"] = False  # the user gave the server a longer context
        retried = _judge(db, pairs, server.model(), "--retry-failed")
        assert retried.exit_code == 0, retried.output
        assert len(server.requests) == 5 and "failed (" not in retried.output
    with open_store(db).session() as session:
        assert len(load_judgments(session, "j")) == 4 and failed_pairs(session, "j") == []


@pytest.mark.parametrize(
    "broken",
    [
        Reply(200, "{truncated", "application/json"),
        Reply(200, "<html><h1>502 Bad Gateway</h1></html>", "text/html"),
        Reply(200, {"id": "x", "object": "chat.completion", "choices": []}),
    ],
    ids=["invalid-json", "html-page", "empty-choices"],
)
def test_malformed_replies_are_retried_then_escalated_never_a_traceback(
    tmp_path: Path, broken: Reply
) -> None:
    seen: dict[str, int] = {}

    def script(body: dict) -> Reply | str:
        text = user_text(body)
        key = next(d for d, t in TEXTS.items() if t in text)
        seen[key] = seen.get(key, 0) + 1
        if key == "d2" or (key == "d3" and seen[key] == 1):
            return broken  # d2 always, d3 once
        return GOOD

    with serve(script) as server:
        # DREAM: its escalations reach the review queue (issue 8 fixes the single judge's).
        result = _judge(tmp_path / "e.db", _pairs(tmp_path, TEXTS), server.model(), method="dream")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    with open_store(tmp_path / "e.db").session() as session:
        records = {r.docid: r for r in load_judgments(session, "j")}
    assert records["d2"].decided_by == "escalated" and records["d2"].label is None
    assert "unreadable reply" in json.dumps(records["d2"].transcript)
    assert records["d3"].usage["retries"] == 1 and records["d3"].decided_by == "consensus"
    assert records["d1"].usage["retries"] == 0


def test_stored_usage_and_the_summary_count_every_request_the_server_saw(
    tmp_path: Path,
) -> None:
    # d2: every reply malformed (its calls exhaust their retries, the pair is escalated);
    # d3: one 503 then answers; d1, d4: answered at once.
    seen: dict[str, int] = {}

    def script(body: dict) -> Reply | str:
        key = next(d for d, t in TEXTS.items() if t in user_text(body))
        seen[key] = seen.get(key, 0) + 1
        if key == "d2":
            return Reply(200, "<html>502 Bad Gateway</html>", "text/html")
        if key == "d3" and seen[key] == 1:
            return Reply(503, {"error": {"message": "loading"}})
        return GOOD

    db = tmp_path / "u.db"
    with serve(script) as server:
        result = _judge(db, _pairs(tmp_path, TEXTS), server.model(), "--max-retries", "2")
    assert result.exit_code == 0, result.output
    with open_store(db).session() as session:
        stored = [r.usage for r in load_judgments(session, "j")]
    requests = sum(u["calls"] + u["retries"] + u["failures"] for u in stored)
    assert requests == len(server.requests) == sum(seen.values())
    assert sum(u["failures"] for u in stored) == 1  # d2's one call that gave up
    summary = next(line for line in result.output.splitlines() if "LLM requests:" in line)
    assert summary.startswith(f"{len(server.requests)} LLM requests: 3 answered, ")
    assert "calls failed" in summary and summary.endswith("1 calls failed")


def test_pairs_left_to_a_live_worker_make_the_job_incomplete_exit_75(tmp_path: Path) -> None:
    from docket.jobs import JobSpec
    from docket.jobs.compose import open_job
    from docket.store.claims import claim

    pairs, db = _pairs(tmp_path, TEXTS), tmp_path / "b.db"
    store = open_store(db)
    with serve(lambda body: GOOD) as server:
        open_job(store, "j", JobSpec.of("single", model=server.model()), str(pairs))
        with store.session() as session:  # a worker on another machine holds d4
            claim(session, "j", [("q1", "d4")], "elsewhere:1:abc", lease_s=3600)
        result = _judge(db, pairs, server.model())
        assert len(server.requests) == 3, result.output  # d4 is left to its live owner
    assert result.exit_code == 75, result.output
    assert "1 pairs were being judged by another worker" in result.output
    assert "incomplete" in result.output
