"""plan_job and ``docket plan`` / ``--plan``: figures from the real prompts, no LLM call."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app
from docket.errors import ConfigError
from docket.jobs import run_job
from docket.jobs.bill.figures import (
    CALL_OVERHEAD_S,
    START_UP_S,
    InFlight,
    depth_of,
    run_seconds,
    wall_seconds,
)
from docket.jobs.bill.plan import PlanInputs, plan_job
from docket.llm.fake import register_fake
from tests.jobs.fakes import EXAMPLES, Counting
from tests.scripted_server import Reply, serve

runner = CliRunner()


@pytest.fixture
def counting() -> tuple[str, Counting]:
    script = Counting()
    return register_fake("plan-counting", script), script


@pytest.mark.parametrize(
    ("method", "options", "low", "high"),
    [
        ("single", {}, 1, 1),
        ("majority", {"samples": 3}, 3, 3),
        ("dream", {"rounds": 2}, 2, 4),
        ("dream", {"rounds": 3, "agents": 3}, 3, 9),
        ("lara", {}, 1, 1),
    ],
)
def test_plan_gives_the_calls_range_of_each_method_without_a_call(
    tmp_path: Path, counting: tuple[str, Counting], method: str, options: dict, low: int, high: int
) -> None:
    model, script = counting
    plan = plan_job(
        EXAMPLES, method=method, model=model, db=str(tmp_path / "d.db"), cache="off", **options
    )
    assert script.calls == 0
    assert plan.todo == plan.pairs == 12
    assert (plan.calls.low, plan.calls.high) == (12 * low, 12 * high)
    assert plan.calls.low <= plan.calls.expected <= plan.calls.high
    assert plan.prompt_tokens.low > 0 and plan.prompt_tokens.high >= plan.prompt_tokens.low
    assert "estimate" in plan.token_source  # a fake model has no tokenizer: said so
    assert plan.cost.expected == 0 and any("no cost" in n for n in plan.notes)


def test_plan_leaves_out_what_the_store_holds(tmp_path: Path, counting) -> None:
    model, script = counting
    db = str(tmp_path / "d.db")
    lines = EXAMPLES.read_text().splitlines()
    part = tmp_path / "pairs.jsonl"
    part.write_text("\n".join(lines[:5]) + "\n")
    run_job(part, method="single", model=model, db=db, cache="off", job="j")
    assert script.calls == 5
    plan = plan_job(EXAMPLES, method="single", model=model, db=db, cache="off", job="j")
    assert script.calls == 5
    assert (plan.pairs, plan.done, plan.todo) == (12, 5, 7)
    assert plan.calls.expected == 7


def test_prices_latency_and_review_seconds_make_cost_time_and_hours(tmp_path, counting) -> None:
    model, _ = counting
    inputs = PlanInputs(
        prices={"input": 1.0, "output": 2.0, "cached_input": 0.5}, latency_s=2.0,
        review_seconds=90.0,
    )  # fmt: skip
    plan = plan_job(
        EXAMPLES, method="dream", model=model, db=str(tmp_path / "d.db"), cache="off",
        plan_inputs=inputs, max_in_flight=4, concurrency=2,
    )  # fmt: skip
    fresh = plan.prompt_tokens.high - plan.cached_tokens.high
    want = (fresh * 1.0 + plan.cached_tokens.high * 0.5 + plan.completion_tokens.high * 2.0) / 1e6
    assert plan.cost.high == pytest.approx(want)
    assert plan.parallel_calls == 4  # 2 pairs at once x 2 agents, within 4 calls in flight
    # 4 calls in flight from the first call (the user's bound), 2 s each; at most every
    # debate runs both rounds, the last ones after every other call: one round trip more;
    # docket's own start-up and time per call on top
    trips = math.ceil(plan.calls.high / 4) + 1
    assert plan.wall_s is not None
    own = START_UP_S + plan.calls.high * CALL_OVERHEAD_S
    assert plan.wall_s.high == pytest.approx(trips * 2 + own)
    # at fewest every debate agrees in round 1: no round after the others
    assert plan.wall_s.low == pytest.approx(
        math.ceil(plan.calls.low / 4) * 2 + START_UP_S + plan.calls.low * CALL_OVERHEAD_S
    )
    assert plan.escalations.high == 12
    assert plan.review_hours.high == pytest.approx(12 * 90 / 3600)


def test_wall_time_follows_the_runners_ramp() -> None:
    ramp = InFlight(start=8, bound=64, ramps=True)
    # 8 + 16 + 32 + 64 calls in four round trips, then 80 more in two of 64
    assert wall_seconds(200, 0.2, ramp, 64) == pytest.approx(6 * 0.2)
    assert wall_seconds(200, 0.2, InFlight(64, 64, False), 64) == pytest.approx(4 * 0.2)
    assert wall_seconds(200, 0.2, InFlight(1, 1, False), 1) == pytest.approx(200 * 0.2)
    assert wall_seconds(200, 0.2, ramp, 16) == pytest.approx((1 + 12) * 0.2)  # pairs cap it


def test_a_runs_wall_time_is_its_start_up_its_round_trips_and_its_own_time_per_call() -> None:
    ramp = InFlight(start=8, bound=64, ramps=True)
    # 200 single calls at 0.2 s, ramping 8 -> 64: six round trips (as above), 0.1 s to
    # start, 1 ms of docket's own per call
    assert START_UP_S == 0.1 and CALL_OVERHEAD_S == 0.001
    assert run_seconds(200, 0.2, ramp, 64) == pytest.approx(0.1 + 6 * 0.2 + 200 * 0.001)
    # 600 DREAM calls at 64 in flight from the first call, two rounds one after the other:
    # ten round trips of 64, then the last debates' second round
    known = InFlight(64, 64, False)
    assert run_seconds(600, 0.2, known, 64, depth=2) == pytest.approx(0.1 + 11 * 0.2 + 0.6)
    # a 1-slot server: one call at a time, whatever the rounds
    assert run_seconds(200, 0.2, InFlight(1, 1, False), 1) == pytest.approx(0.1 + 40 + 0.2)
    assert run_seconds(0, 0.2, known, 64, depth=2) == pytest.approx(0.1)  # nothing to send


def test_a_pairs_depth_is_its_rounds_one_after_another() -> None:
    assert depth_of(200, 200, 1) == 1  # one call a pair
    assert depth_of(600, 200, 3) == 1  # three samples, all at once
    assert depth_of(400, 200, 2) == 1  # every debate agrees in round 1
    assert depth_of(600, 200, 2) == 2  # half go on to round 2
    assert depth_of(800, 200, 2) == 2  # all do
    assert depth_of(0, 0, 2) == 1


def test_a_served_models_tokenize_endpoint_counts_the_tokens(tmp_path: Path) -> None:
    def script(body: dict) -> Reply | str:
        if "content" in body:  # POST /tokenize: one token per character, to tell it apart
            return Reply(body={"tokens": list(range(len(body["content"])))})
        return "never called"

    with serve(script) as server:
        plan = plan_job(
            EXAMPLES, method="single", model=server.model(), db=str(tmp_path / "d.db"),
            cache="off",
        )  # fmt: skip
        assert all("messages" not in body for body in server.requests)  # no chat call
    assert "/tokenize" in plan.token_source
    assert plan.prompt_tokens.expected > 12 * 500  # characters, not words


def test_plan_refuses_a_price_table_naming_an_unknown_model(tmp_path: Path, counting) -> None:
    model, _ = counting
    toml = tmp_path / "docket.toml"
    toml.write_text('[docket.prices."gpt-4o"]\ninput = 1\noutput = 2\n')
    with pytest.raises(ConfigError, match=r"docket.prices.gpt-4o: unknown model"):
        plan_job(EXAMPLES, method="single", model=model, db=str(tmp_path / "d.db"),
                 plan_inputs=PlanInputs(config_path=toml))  # fmt: skip
    toml.write_text('[docket.prices."openai:x"]\ninput = "cheap"\noutput = 2\n')
    with pytest.raises(ConfigError, match=r"docket.prices.openai:x.input: 'cheap' is not a number"):
        plan_job(EXAMPLES, method="single", model=model, db=str(tmp_path / "d.db"),
                 plan_inputs=PlanInputs(config_path=toml))  # fmt: skip


def test_docket_plan_and_judge_plan_print_without_a_call(tmp_path: Path, counting) -> None:
    model, script = counting
    db = str(tmp_path / "d.db")
    args = [str(EXAMPLES), "--model", model, "--db", db, "--cache", "off"]
    table = runner.invoke(app, ["judge", *args, "--plan", "--price-input", "1",
                                "--price-output", "2"], env={"COLUMNS": "200"})  # fmt: skip
    assert table.exit_code == 0, table.output
    assert "LLM calls" in table.output and "12 pairs to judge" in table.output
    as_json = runner.invoke(app, ["plan", *args, "--method", "single", "--json"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.output)
    assert data["calls"] == {"low": 12, "expected": 12, "high": 12}
    assert script.calls == 0


def test_a_bad_price_flag_is_one_line_and_exit_2(tmp_path: Path, counting) -> None:
    model, _ = counting
    args = [str(EXAMPLES), "--model", model, "--db", str(tmp_path / "d.db")]
    result = runner.invoke(app, ["plan", *args, "--price-input", "-1", "--price-output", "1"])
    assert result.exit_code != 0
    assert isinstance(result.exception, ConfigError)
    assert "--price-input" in result.exception.message


def test_holes_fill_caps_go_through_the_job_api_and_it_takes_no_plan_flag(tmp_path: Path) -> None:
    from tests.ir.conftest import make_bench

    bench = make_bench(tmp_path)
    answer = json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "scripted"})
    with serve(lambda body: answer) as server:
        args = ["holes", "fill", "--qrels", bench.qrels, "--runs", *bench.runs, "--depth", 3,
                "--corpus", bench.corpus, "--corpus-index", bench.index,
                "--queries", bench.queries, "--model", server.model(), "--method", "single",
                "--cache", "off", "--db", tmp_path / "d.db", "--job", "h",
                "--out-qrels", tmp_path / "c.qrels", "--provenance", tmp_path / "p.jsonl"]  # fmt: skip
        planned = runner.invoke(app, [str(a) for a in [*args, "--plan"]], env={"COLUMNS": "200"})
        assert planned.exit_code == 2 and "No such option" in planned.output  # not read: absent
        assert not any("messages" in body for body in server.requests)
        capped = runner.invoke(app, [str(a) for a in [*args, "--max-calls", "2"]])
        assert capped.exit_code == 5, capped.output
        assert sum("messages" in body for body in server.requests) <= 2
