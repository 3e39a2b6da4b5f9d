"""Budget caps: a run stops before a cap would pass, keeps what it finished, and resumes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app
from docket.errors import ConfigError
from docket.jobs import run_job
from docket.jobs.bill.caps import Caps
from docket.llm.fake import register_fake
from docket.llm.types import Request
from docket.llm.usage import Price
from docket.store import open_store
from docket.store.spend import spend_of
from tests.jobs.fakes import AGREE, EXAMPLES, Counting
from tests.scripted_server import serve

runner = CliRunner()


def _model(name: str, script: Counting) -> str:
    return register_fake(name, script)


def test_a_call_cap_stops_the_run_and_a_higher_cap_resumes_with_no_repeated_call(tmp_path):
    script = Counting()
    model = _model("caps-count", script)
    db = str(tmp_path / "d.db")
    kw = dict(method="dream", model=model, db=db, cache="off", job="j")
    first = run_job(EXAMPLES, caps=Caps(calls=10), **kw)
    assert script.calls <= 10
    assert "--max-calls 10" in first.stopped_by
    assert 0 < len(first.results) < 12
    assert first.spend is not None and first.spend["calls"] == script.calls
    judged_first = len(first.results)
    second = run_job(EXAMPLES, caps=Caps(calls=100), **kw)
    assert second.stopped_by == "" and len(second.results) == 12
    # every pair agrees in round 1: 2 calls a pair, none repeated across the two runs
    assert script.calls == 24
    assert second.outcome.skipped == judged_first


def test_cost_and_token_caps_hold_at_the_actual_spend(tmp_path: Path) -> None:
    script = Counting()
    model = _model("caps-cost", script)
    db = str(tmp_path / "d.db")
    price = Price(100.0, 100.0, 100.0)  # $0.0001 a token: a pair's worst case is ~$0.2
    run = run_job(EXAMPLES, method="single", model=model, db=db, cache="off", job="c",
                  caps=Caps(cost=0.25, tokens=20_000), price=price)  # fmt: skip
    with open_store(db).read_session() as session:
        spent = spend_of(session, "c")
    assert spent["cost"] <= 0.25 and spent["tokens"] <= 20_000
    assert "--max-cost 0.25" in run.stopped_by
    assert script.calls == len(run.results) > 0


def test_retries_count_as_spend_and_the_cap_holds_under_faults(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("docket.llm.model.RetryPolicy.delay", lambda self, attempt: 0.0)
    script = Counting(fail_every=5)  # 20 % of the attempts fail and are retried
    model = _model("caps-faults", script)
    run = run_job(EXAMPLES, method="dream", model=model, db=str(tmp_path / "d.db"),
                  cache="off", job="f", caps=Caps(calls=15))  # fmt: skip
    assert script.calls <= 15  # every attempt the provider saw, failed ones included
    assert run.spend is not None and run.spend["calls"] == script.calls
    assert run.stopped_by


def test_an_escalation_cap_stops_before_more_pairs_escalate(tmp_path: Path) -> None:
    def never_agree(request: Request) -> str:
        agent = "agent A" in request.messages[-1].content.split("you are", 1)[-1][:20]
        word = "relevant" if agent else "irrelevant"
        return json.dumps({"label": word, "evidence": ["S1"], "reasoning": "my stance"})

    model = register_fake("caps-escalate", never_agree)
    run = run_job(EXAMPLES, method="dream", model=model, db=str(tmp_path / "d.db"),
                  cache="off", job="e", caps=Caps(escalations=3))  # fmt: skip
    escalated = [j for _, j in run.judgments(reviewed=False) if j.decided_by == "escalated"]
    assert len(escalated) == 3
    assert "--max-escalations 3" in run.stopped_by


@pytest.mark.parametrize("field", ["calls", "cost", "tokens", "escalations"])
def test_a_zero_or_negative_cap_is_refused(field: str) -> None:
    with pytest.raises(ConfigError, match="must be greater than 0"):
        Caps(**{field: 0})
    with pytest.raises(ConfigError, match="must be greater than 0"):
        Caps(**{field: -1})


def test_the_cli_exits_5_naming_the_cap_and_2_for_a_bad_cap(tmp_path: Path) -> None:
    script = Counting()
    model = _model("caps-cli", script)
    args = ["judge", str(EXAMPLES), "--model", model, "--db", str(tmp_path / "d.db"),
            "--cache", "off"]  # fmt: skip
    bad = runner.invoke(app, [*args, "--max-calls", "0"])
    assert isinstance(bad.exception, ConfigError) and script.calls == 0
    capped = runner.invoke(app, [*args, "--max-calls", "7"], env={"COLUMNS": "200"})
    assert capped.exit_code == 5, capped.output
    assert (
        "stopped by --max-calls 7" in capped.output and "rerun with a higher cap" in capped.output
    )
    assert script.calls <= 7
    done = runner.invoke(app, [*args, "--max-calls", "1000"])
    assert done.exit_code == 0, done.output
    assert script.calls == 24


def test_two_processes_sharing_a_job_share_its_cap(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.db")
    pairs = tmp_path / "pairs.jsonl"
    rows = [{"qid": f"q{i}", "query": f"query {i}", "docid": f"d{i}",
             "text": f"Passage {i} about topic {i}."} for i in range(40)]  # fmt: skip
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with serve(lambda body: AGREE, delay_s=0.02) as server:
        args = [sys.executable, "-m", "docket", "judge", str(pairs), "--method", "single",
                "--model", server.model(params="max_in_flight=4"), "--db", db, "--cache",
                "off", "--job", "shared", "--max-calls", "25"]  # fmt: skip
        env = {**os.environ, "COLUMNS": "200"}
        procs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for _ in range(2)]  # fmt: skip
        codes = [p.wait(timeout=120) for p in procs]
        chat_calls = sum(1 for body in server.requests if "messages" in body)
    assert chat_calls <= 25
    assert 5 in codes  # at least one process was stopped by the cap
    with open_store(db).read_session() as session:
        assert spend_of(session, "shared")["calls"] == chat_calls
