"""Every gate acts or refuses: LARA's escalations under the cap, a cost cap needs a price,
LARA needs log-probabilities, a pilot answered from the cache still projects its calls."""

from __future__ import annotations

import json
import math
import re
import sys

import pytest
from typer.testing import CliRunner

from docket.cli.main import app, main
from docket.errors import ConfigError, TransientModelError
from docket.jobs import Caps, JobSpec, run_job, run_pilot
from docket.llm.fake import register_fake
from docket.llm.types import Completion, Request, TokenLogprob
from docket.store import load_judgments, open_store
from docket.store.spend import spend_of
from tests.jobs.fakes import EXAMPLES, Counting
from tests.scripted_server import Reply, serve

runner = CliRunner()


class Lara:
    """Yes/no with log-probabilities; P(yes) differs per pair; counts calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: Request) -> Completion:
        self.calls += 1
        user = next(m.content for m in request.messages if m.role == "user")
        words = len(re.findall(r"\w+", user))
        p = 0.05 + (words % 17) / 18
        top = {"Yes": math.log(p), "No": math.log(1 - p)}
        answer = "Yes" if p >= 0.5 else "No"
        return Completion(text=answer, logprobs=(TokenLogprob(answer, top[answer], top),))


def _escalated(db: str, job: str) -> int:
    with open_store(db).read_session() as session:
        return sum(r.decided_by == "escalated" for r in load_judgments(session, job))


def test_max_escalations_binds_larass_batch_step_and_the_spend_row_counts_it(tmp_path) -> None:
    db = str(tmp_path / "d.db")
    model = register_fake("gate-lara", Lara())
    kw = dict(method="lara", model=model, db=db, cache="off", lara_budget=0.5)
    run = run_job(EXAMPLES, job="l", caps=Caps(escalations=2), **kw)
    assert "--max-escalations 2" in run.stopped_by and "would escalate 6" in run.stopped_by
    assert _escalated(db, "l") == 2 and run.queued == 2
    with open_store(db).read_session() as session:
        assert spend_of(session, "l")["escalations"] == 2
    again = run_job(EXAMPLES, job="l", caps=Caps(escalations=10), **kw)  # a higher cap resumes
    assert again.stopped_by == "" and _escalated(db, "l") == 6 and again.outcome.judged == 0
    with open_store(db).read_session() as session:
        assert spend_of(session, "l")["escalations"] == 6


def test_max_escalations_on_the_command_line_exits_5_for_lara(tmp_path) -> None:
    model = register_fake("gate-lara-cli", Lara())
    args = ["judge", str(EXAMPLES), "--model", model, "--db", str(tmp_path / "d.db"),
            "--cache", "off", "--method", "lara", "--lara-budget", "0.5",
            "--max-escalations", "3"]  # fmt: skip
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 5, result.output
    assert "stopped by --max-escalations 3" in result.output
    assert _escalated(str(tmp_path / "d.db"), "pairs12-lara") == 3


def _agree(_body: dict) -> str:
    return json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "on topic"})


def test_a_cost_cap_on_a_model_with_no_price_is_refused_before_any_call(tmp_path) -> None:
    with serve(_agree) as server:
        spec = JobSpec.of("single", model=server.model(), db=str(tmp_path / "d.db"),
                          cache="off", caps=Caps(cost=1.0))  # fmt: skip
        with pytest.raises(ConfigError, match="--max-cost 1: no price is known") as refused:
            run_job(EXAMPLES, spec)
        assert "--price-input" in refused.value.hint
        result = runner.invoke(app, ["judge", str(EXAMPLES), "--model", server.model(),
                                     "--db", str(tmp_path / "d.db"), "--max-cost", "1"])  # fmt: skip
        assert isinstance(result.exception, ConfigError)
        assert not any("messages" in body for body in server.requests)
        priced = runner.invoke(app, ["judge", str(EXAMPLES), "--model", server.model(),
                                     "--db", str(tmp_path / "d.db"), "--method", "single",
                                     "--cache", "off", "--max-cost", "1", "--price-input",
                                     "0.1", "--price-output", "0.2"])  # fmt: skip
        assert priced.exit_code == 0, priced.output


def test_lara_on_a_model_without_logprobs_is_refused_before_any_pair(tmp_path) -> None:
    script = Counting()  # JSON text, no log-probabilities
    model = register_fake("gate-nologprobs", script)
    db = str(tmp_path / "d.db")
    with pytest.raises(ConfigError, match="--method lara reads the answer's log-probabilities"):
        run_job(EXAMPLES, method="lara", model=model, db=db, cache="off")
    assert script.calls == 1  # the first pair's own question, asked once; nothing judged
    with open_store(db).read_session() as session:
        assert load_judgments(session, "pairs12-lara") == []
    cli = runner.invoke(app, ["judge", str(EXAMPLES), "--model", model, "--db", db,
                              "--method", "lara"])  # fmt: skip
    assert isinstance(cli.exception, ConfigError) and "log-probabilities" in cli.exception.message


def test_laras_check_of_its_model_is_the_first_pairs_own_call_and_the_cap_counts_it(
    tmp_path,
) -> None:
    """With the cache off, 12 pairs cost 12 calls (the check was a 13th), and the spend row
    counts all 12 (it missed the check's call, made before the caps were set)."""
    script = Lara()
    model = register_fake("gate-lara-once", script)
    db = str(tmp_path / "d.db")
    run = run_job(EXAMPLES, job="l", method="lara", model=model, db=db, cache="off",
                  caps=Caps(calls=100))  # fmt: skip
    assert run.outcome.judged == 12 and script.calls == 12
    with open_store(db).read_session() as session:
        assert spend_of(session, "l")["calls"] == 12


class FailsFirst(Lara):
    """Lara whose very first request fails once (a transient server error, retried)."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0

    def __call__(self, request: Request) -> Completion:
        self.attempts += 1
        if self.attempts == 1:
            raise TransientModelError("injected fault")
        return super().__call__(request)


def test_a_retried_check_counts_each_attempt_against_the_cap(tmp_path) -> None:
    """The check's call needed two requests: the cap of 6 calls counts both, so the server
    sees 6 requests in all (it saw 7 when the check counted as one)."""
    script = FailsFirst()
    model = register_fake("gate-lara-retried", script)
    db = str(tmp_path / "d.db")
    run = run_job(EXAMPLES, job="l", method="lara", model=model, db=db, cache="off",
                  caps=Caps(calls=6))  # fmt: skip
    assert run.stopped_by and script.attempts == 6
    with open_store(db).read_session() as session:
        assert spend_of(session, "l")["calls"] == 6


def _refuse_logprobs(body: dict) -> Reply | str:
    if body.get("logprobs"):  # as OpenAI answers for its reasoning models
        return Reply(400, {"error": {"message": "logprobs is not supported with this model"}})
    return "Yes"


@pytest.mark.parametrize(
    ("script", "said"),
    [(lambda body: "Yes", "returns none"), (_refuse_logprobs, "logprobs is not supported")],
)
def test_a_served_model_without_logprobs_stops_lara_after_one_call(
    tmp_path, monkeypatch, capsys, script, said
) -> None:  # type: ignore[no-untyped-def]
    """A server that drops the log-probabilities, or refuses them with a 400: one line and
    exit 2 after the first pair's own call, nothing stored (the 400 was a traceback)."""
    db = str(tmp_path / "d.db")
    with serve(script) as server:
        monkeypatch.setattr(sys, "argv", ["docket", "judge", str(EXAMPLES), "--method", "lara",
                                          "--model", server.model(), "--db", db, "--cache", "off"])  # fmt: skip
        with pytest.raises(SystemExit) as stopped:
            main()
        assert len(server.requests) == 1
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert "reads the answer's log-probabilities" in err and said in err
    with open_store(db).read_session() as session:
        assert load_judgments(session, "pairs12-lara") == []


def test_a_pilot_answered_from_the_cache_projects_what_its_pairs_needed(tmp_path) -> None:
    script = Counting()
    model = register_fake("gate-cached-pilot", script)
    cache = str(tmp_path / "cache.sqlite")
    spec = JobSpec.of("dream", model=model, db=str(tmp_path / "d.db"), cache=cache)
    fresh = run_pilot(EXAMPLES, spec, 4, job="first")
    calls = script.calls
    cached = run_pilot(EXAMPLES, spec, 4, job="second")  # same pairs, another job
    assert script.calls == calls  # every answer came from the cache
    assert cached.cache_hits == 8 and fresh.cache_hits == 0
    for name in ("calls", "prompt_tokens", "completion_tokens"):
        assert cached.projected[name].expected == fresh.projected[name].expected > 0, name
    assert any("8 of the pilot's 8 calls came from the response cache" in n for n in cached.notes)


def test_the_dream_plan_says_what_its_point_estimate_assumes(tmp_path) -> None:
    model = register_fake("gate-plan", Counting())
    args = ["plan", str(EXAMPLES), "--model", model, "--db", str(tmp_path / "d.db")]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "expected*" in result.output
    assert "* expected assumes 50% of debates run every round (not measured" in result.output
    single = runner.invoke(app, [*args, "--method", "single"], env={"COLUMNS": "200"})
    assert "expected*" not in single.output


def test_the_pilot_error_carries_its_report_from_construction() -> None:
    from docket.errors import PilotRejectedError

    with pytest.raises(TypeError):
        PilotRejectedError("missed")  # type: ignore[call-arg]
    assert PilotRejectedError("missed", report="r").report == "r"
