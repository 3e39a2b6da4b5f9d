"""--pilot N: a seeded stratified sample judged first, measured, re-planned, gated."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.exits import exit_code
from docket.cli.main import app
from docket.errors import ConfigError, PilotRejectedError
from docket.jobs import JobSpec, job_input, run_job, run_pilot
from docket.jobs.bill.caps import Caps
from docket.jobs.bill.figures import CALL_OVERHEAD_S, START_UP_S, InFlight
from docket.jobs.bill.pilot import PilotGate, measure, pilot_sample
from docket.llm.fake import register_fake
from docket.llm.usage import Price
from docket.relevance.types import Judgment, Pair
from docket.store import load_judgments, open_store
from docket.store.spend import notes_of
from tests.jobs.fakes import EXAMPLES, Counting

runner = CliRunner()


def _spec(model: str, db: str, **bill) -> JobSpec:
    return JobSpec.of("dream", model=model, db=db, cache="off", **bill)


def test_the_sample_is_seeded_and_spread_over_queries_and_labels() -> None:
    pairs = list(job_input(EXAMPLES))
    first, again = pilot_sample(pairs, 6), pilot_sample(pairs, 6)
    assert [p.key for p in first] == [p.key for p in again]
    assert len({p.qid for p in first}) >= 3 and {p.label for p in first} == {0, 1}
    with pytest.raises(ConfigError, match="--pilot 13: must be between 1 and the job's 12"):
        pilot_sample(pairs, 13)


def test_the_main_run_reuses_the_pilot_and_the_pilot_projects_the_rest(tmp_path: Path) -> None:
    script = Counting()
    model = register_fake("pilot-agree", script)
    db = str(tmp_path / "d.db")
    spec = _spec(model, db)
    report = run_pilot(EXAMPLES, spec, 4, job="p")
    assert script.calls == 8
    run_job(EXAMPLES, spec, job="p")
    assert script.calls == 24  # 12 pairs x 2 agreeing agents: the pilot's 4 pairs not repeated
    assert report.pairs == 4 and report.remaining == 8
    assert report.per_pair["calls"].expected == 2
    assert report.projected["calls"].expected == 16
    assert report.per_pair["escalations"].expected == 0
    # all relevant against balanced gold: bAcc 0.5, kappa 0
    assert report.bacc.expected == pytest.approx(0.5) and report.kappa.expected == pytest.approx(0)
    with open_store(db).read_session() as session:
        assert [kind for kind, _ in notes_of(session, "p")] == ["pilot"]


def _piloted(calls: list[int], latency_s: float) -> list[tuple[Pair, Judgment]]:
    """Pilot pairs that needed ``calls`` calls each, every call answered in ``latency_s``."""
    return [
        (Pair(f"q{i}", "q", f"d{i}", "t"),
         Judgment(f"q{i}", f"d{i}", "dream", 1, "consensus",
                  usage={"calls": n, "latency_s": n * latency_s}))
        for i, n in enumerate(calls)
    ]  # fmt: skip


def test_the_pilot_projects_the_main_runs_own_wall_time_not_its_own_pace() -> None:
    # 20 single pairs at 0.5 s a call; 180 remain, 64 in flight from the first call: the
    # main run starts once, takes ceil(180 / 64) = 3 round trips, and 1 ms a call of its own
    # (the pilot's own start-up and its 20 pairs that could not fill 64 slots are not
    # charged again per pair)
    known = InFlight(64, 64, False)
    report = measure(_piloted([1] * 20, 0.5), 180, Price(0, 0, 0), known, 64)
    assert report.latency_s == pytest.approx(0.5)
    want = START_UP_S + 3 * 0.5 + 180 * CALL_OVERHEAD_S
    assert report.projected["wall_s"].expected == pytest.approx(want)


def test_the_pilot_projects_a_debates_rounds_one_after_another() -> None:
    # half the pilot's debates ran both rounds (2 calls a round): 3 calls a pair, 540 for
    # the 180 left, ceil(540 / 64) = 9 round trips, then the last debates' second round
    known = InFlight(64, 64, False)
    report = measure(_piloted([2, 4] * 10, 0.2), 180, Price(0, 0, 0), known, 64, per_round=2)
    want = START_UP_S + (9 + 1) * 0.2 + 540 * CALL_OVERHEAD_S
    assert report.projected["calls"].expected == pytest.approx(540)
    assert report.projected["wall_s"].expected == pytest.approx(want)


def test_a_pilot_below_min_kappa_stops_before_the_main_run_and_keeps_its_pairs(tmp_path):
    script = Counting()
    model = register_fake("pilot-gate", script)
    db = str(tmp_path / "d.db")
    # 4 pairs with gold are too few for a kappa: the gate stops the run rather than pass it.
    with pytest.raises(PilotRejectedError, match="too few to check --min-kappa 0.5") as rejected:
        run_pilot(EXAMPLES, _spec(model, db), 4, gate=PilotGate(min_kappa=0.5), job="g")
    assert rejected.value.report.pairs == 4  # the report comes with the error
    assert script.calls == 8
    with open_store(db).read_session() as session:
        assert len(load_judgments(session, "g")) == 4


def test_a_cap_below_the_pilots_own_spend_is_refused_before_any_call(tmp_path: Path) -> None:
    script = Counting()
    model = register_fake("pilot-cap", script)
    spec = _spec(model, str(tmp_path / "d.db"), caps=Caps(calls=5))
    with pytest.raises(
        ConfigError, match=r"--max-calls 5 is lower than the pilot's own calls: at least 8"
    ):
        run_pilot(EXAMPLES, spec, 4, job="c")
    assert script.calls == 0


def test_the_cli_prints_the_pilot_and_exits_4_or_2(tmp_path: Path) -> None:
    script = Counting()
    model = register_fake("pilot-cli", script)
    args = ["judge", str(EXAMPLES), "--model", model, "--db", str(tmp_path / "d.db"),
            "--cache", "off"]  # fmt: skip
    too_big = runner.invoke(app, [*args, "--pilot", "50"])
    assert isinstance(too_big.exception, ConfigError) and script.calls == 0
    rejected = runner.invoke(app, [*args, "--pilot", "4", "--max-escalation", "0.5",
                                   "--min-kappa", "0.9"], env={"COLUMNS": "200"})  # fmt: skip
    assert isinstance(rejected.exception, PilotRejectedError), rejected.output
    assert exit_code(rejected.exception) == 4  # what `docket` exits with (cli.exits)
    assert "too few to check --min-kappa 0.9" in rejected.exception.message
    assert "per pair" in rejected.output and "too few (n=4)" in rejected.output
    passed = runner.invoke(app, [*args, "--pilot", "4"], env={"COLUMNS": "200"})
    assert passed.exit_code == 0, passed.output
    assert "projected for 8 pairs" in passed.output
    assert script.calls == 24


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--max-escalation", "20"], "--max-escalation 20.0: a share between 0 and 1"),
        (["--min-kappa", "2"], "--min-kappa 2.0: must be between -1 and 1"),
        (["--latency", "-1"], "--latency -1.0: must be greater than 0"),
        (["--review-seconds", "0"], "--review-seconds 0.0: must be greater than 0"),
        (["--max-cost", "-5"], "--max-cost -5.0: a cap must be greater than 0"),
        (["--pilot", "-2"], "--pilot -2: must be between 1 and the job's 12 pairs"),
    ],
)
def test_bad_plan_and_pilot_flags_are_one_line_before_any_call(tmp_path, flags, message) -> None:
    script = Counting()
    model = register_fake("pilot-bad", script)
    args = ["judge", str(EXAMPLES), "--model", model, "--db", str(tmp_path / "d.db"),
            "--cache", "off", *flags]  # fmt: skip
    result = runner.invoke(app, args)
    assert isinstance(result.exception, ConfigError), result.output
    assert message in result.exception.message
    assert script.calls == 0
