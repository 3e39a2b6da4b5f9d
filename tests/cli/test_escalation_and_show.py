"""Every method escalates the same way through `docket judge`; `docket show` prints it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app
from docket.llm.fake import register_chat_fake, register_fake
from docket.llm.types import Completion, Request, TokenLogprob
from docket.review.models import ReviewTask
from docket.store import load_judgments, open_store

PAIRS = Path(__file__).resolve().parent / "pairs12.jsonl"
runner = CliRunner()


def _user(request: Request) -> str:
    return next(m.content for m in request.messages if m.role == "user")


def _judge(tmp_path: Path, model: str, *extra: str, pairs: Path = PAIRS):  # type: ignore[no-untyped-def]
    db = tmp_path / "d.db"
    args = ["judge", str(pairs), "--model", model, "--db", str(db), "--job", "j"]
    return runner.invoke(app, [*args, "--cache", "off", *extra]), db


def _queue(db: Path) -> dict[str, dict]:
    with open_store(db).session() as session:
        return {t.item_key: t.payload for t in session.query(ReviewTask).all()}


def _unreadable(request: Request) -> str:
    # what a chat model does with a protocol it ignores: prose, no label
    return "The passage seems to be about the topic of the query."


def _lara_reply(request: Request) -> Completion:
    # P(yes) grows with the pair's number, so the pairs nearest 0.5 are the middle ones
    number = int(re.search(r"\[S1\] (.*)", _user(request)).group(1)[:3].count("e")) + 1
    p = min(0.95, 0.1 * number + 0.2)
    top = {"Yes": p, "No": 1 - p}
    return Completion(
        text="Yes" if p >= 0.5 else "No",
        logprobs=(
            TokenLogprob("Yes" if p >= 0.5 else "No", 0.0, {k: _log(v) for k, v in top.items()}),
        ),
    )


def _log(p: float) -> float:
    import math

    return math.log(p)


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("single", ()),
        ("single", ("--scale", "graded")),
        ("majority", ("--samples", "3")),
        ("dream", ()),
    ],
)
def test_an_unreadable_reply_escalates_to_the_queue_for_every_method(tmp_path, method, extra):
    model = register_fake(f"unreadable-{method}-{len(extra)}", _unreadable)
    result, db = _judge(tmp_path, model, "--method", method, *extra)
    assert result.exit_code == 0, result.output
    queue = _queue(db)
    assert len(queue) == 12  # every pair, with its transcript
    for payload in queue.values():
        assert payload["method"] == method
        turns = payload["transcript"]
        assert turns and all(t["round"] == 1 and t["agent"] for t in turns)
        assert all(t["parsed"] is False and len(t["raw"]) == 2 for t in turns)  # one re-ask
    with open_store(db).session() as session:
        records = load_judgments(session, "j")
    assert all(r.label is None and r.decided_by == "escalated" for r in records)


def test_lara_budget_escalations_reach_the_queue(tmp_path):
    model = register_fake("lara-budget", _lara_reply)
    result, db = _judge(tmp_path, model, "--method", "lara", "--lara-budget", "0.25")
    assert result.exit_code == 0, result.output
    queue = _queue(db)
    assert len(queue) == 3  # 25% of 12 pairs
    for payload in queue.values():
        (turn,) = payload["transcript"]
        assert turn["round"] == 1 and turn["agent"] == "judge" and "P(yes)" in turn["reasoning"]
    rerun, _ = _judge(tmp_path, model, "--method", "lara", "--lara-budget", "0.25")
    assert rerun.exit_code == 0, rerun.output  # a rerun queues nothing twice and does not fail
    assert len(_queue(db)) == 3


def _stubborn(request: Request) -> dict:
    # each agent keeps its stance: every pair goes to round 2 and then to a human
    agent = re.search(r"you are agent (\w)", _user(request)).group(1)
    label = "relevant" if agent == "A" else "irrelevant"
    return {"label": label, "evidence": ["S1", "S7"], "reasoning": f"agent {agent} [holds] firm"}


def test_chat_styled_replies_parse_and_the_debate_is_shown(tmp_path):
    model = register_chat_fake("stubborn-chat", _stubborn)
    result, db = _judge(tmp_path, model, pairs=_first(tmp_path, 2))
    assert result.exit_code == 0, result.output
    with open_store(db).session() as session:
        records = load_judgments(session, "j")
    assert all(r.parse_failures == 0 and r.rounds == 2 for r in records)  # fences, prose: read
    out = " ".join(result.output.split())
    assert "one debate, round by round" in out
    assert "agent A [holds] firm" in out  # brackets survive: printed as text, not markup
    assert "cited but not in the chunk: S7" in out
    assert "2 pair(s) wait for a human" in out and "docket review serve --db" in out

    shown = runner.invoke(app, ["show", "q1", "d1", "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert "round 2, A, stance relevant: relevant" in shown.output
    assert "waits for a human reviewer" in shown.output
    as_json = json.loads(runner.invoke(app, ["show", "q1", "d1", "--db", str(db), "--json"]).output)
    assert as_json["decided_by"] == "escalated" and len(as_json["transcript"]) == 4
    assert as_json["transcript"][0]["raw"]


def test_a_reply_without_label_is_reasked_once(tmp_path):
    styles = ("unlabelled", "json")
    decide = lambda r: {"label": "irrelevant", "evidence": [], "reasoning": "off topic"}  # noqa: E731
    model = register_chat_fake("first-unlabelled", decide, styles=styles)
    result, db = _judge(tmp_path, model, "--method", "single", pairs=_first(tmp_path, 3))
    assert result.exit_code == 0, result.output
    with open_store(db).session() as session:
        records = load_judgments(session, "j")
    failures = sorted(r.parse_failures for r in records)
    assert failures == [0, 1, 1]  # first replies 1 and 3 had no label: each re-asked once
    assert all(r.label == 0 for r in records)  # and the re-ask answered it
    stored = next(line for line in result.output.splitlines() if "stored" in line)
    pairs, calls, _tokens, reasked = re.findall(r"\d+", stored)
    assert (pairs, calls, reasked) == ("3", "5", "2")
    assert "decided: judge 3" in result.output


def test_show_unknown_pair_is_one_clear_line(tmp_path):
    open_store(tmp_path / "d.db").close()  # a store without that pair (no store: refused)
    result = runner.invoke(app, ["show", "q9", "nope", "--db", str(tmp_path / "d.db")])
    assert result.exit_code != 0
    assert "no judgment of pair q9 / nope" in str(result.exception)


def test_rerun_totals_say_this_run_made_no_call(tmp_path):
    model = register_chat_fake("rerun-chat", _stubborn)
    first, _ = _judge(tmp_path, model, "--rounds", "1", pairs=_first(tmp_path, 2))
    again, _ = _judge(tmp_path, model, "--rounds", "1", pairs=_first(tmp_path, 2))
    assert again.exit_code == 0, again.output
    this_run = next(line for line in again.output.splitlines() if "this run" in line)
    assert re.findall(r"\d+", this_run)[:2] == ["0", "0"]  # 0 pairs judged, 0 LLM calls
    assert "0 judged by this run, 2 already judged before it" in " ".join(again.output.split())


def test_big_jobs_print_a_capped_table_with_complete_totals(tmp_path):
    pairs = tmp_path / "many.jsonl"
    rows = [
        {"qid": f"q{i}", "query": "what is water", "docid": f"d{i}", "text": "Water is wet."}
        for i in range(40)
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    model = register_chat_fake(
        "agree-chat", lambda r: {"label": "relevant", "evidence": ["S1"], "reasoning": "x"}
    )
    result, _ = _judge(tmp_path, model, "--method", "single", pairs=pairs)
    assert result.exit_code == 0, result.output
    assert "first 25 of 40 pairs" in " ".join(result.output.split())
    assert "q39" not in result.output
    stored = next(line for line in result.output.splitlines() if "stored" in line)
    assert re.findall(r"\d+", stored)[0] == "40"
    # Not a terminal: progress comes as plain lines (a live bar would print nothing).
    # Each line ends with the spend so far, the projected total and the ETA.
    progress = [line.split(";")[0] for line in result.output.splitlines()
                if line.startswith("judging: ")]  # fmt: skip
    assert progress[0] == "judging: 2/40 pairs" and progress[-1] == "judging: 40/40 pairs"
    assert len(progress) <= 21


def _first(tmp_path: Path, n: int) -> Path:
    subset = tmp_path / f"first{n}.jsonl"
    subset.write_text("".join(PAIRS.read_text().splitlines(keepends=True)[:n]))
    return subset
