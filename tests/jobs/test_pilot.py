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
from docket.jobs.bill.pilot import PilotGate, pilot_sample
from docket.llm.fake import register_fake
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
