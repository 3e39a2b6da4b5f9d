"""`docket judge` and `docket export` through the real entry point, on a scripted model."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app, main
from docket.errors import ModelUnavailableError, TransientModelError
from docket.llm.fake import register_fake
from docket.llm.types import Request
from docket.review.auth import add_reviewer
from docket.review.models import ReviewTask
from docket.review.queue import record_decision
from docket.store import load_judgments, open_store

# Twelve made-up pairs with fixed ids; the scripted debaters below know their contents.
EXAMPLES = Path(__file__).resolve().parent / "pairs12.jsonl"
runner = CliRunner()
AGENT = re.compile(r"you are agent (\w)")


def _user(request: Request) -> str:
    return next(m.content for m in request.messages if m.role == "user")


def _chunk(request: Request) -> str:
    return re.search(r"<chunk>\n(.*?)\n</chunk>", _user(request), re.S).group(1)


def _egg_debater(request: Request) -> str:
    """A argues relevant; B agrees only when the chunk mentions eggs."""
    agent = AGENT.search(_user(request)).group(1)
    relevant = agent == "A" or "egg" in _chunk(request).lower()
    label = "relevant" if relevant else "irrelevant"
    return json.dumps({"label": label, "evidence": ["S1"], "reasoning": "scripted"})


class Counter:
    """Counts the calls of a registered script."""

    def __init__(self, name: str, script) -> None:  # type: ignore[no-untyped-def]
        self.calls = 0
        self.script = script
        self.model = register_fake(name, self)

    def __call__(self, request: Request) -> str:
        self.calls += 1
        return self.script(request)


def _judge(db: Path, model: str, *extra: str, pairs: Path = EXAMPLES):  # type: ignore[no-untyped-def]
    args = ["judge", str(pairs), "--model", model, "--db", str(db), "--job", "j", *extra]
    return runner.invoke(app, args)


def test_debate_labels_agreements_and_escalates_the_rest(tmp_path: Path) -> None:
    fake = Counter("cli-egg", _egg_debater)
    result = _judge(tmp_path / "d.db", fake.model)
    assert result.exit_code == 0, result.output
    store = open_store(tmp_path / "d.db")
    with store.session() as session:
        records = {r.docid: r for r in load_judgments(session, "j")}
        tasks = session.query(ReviewTask).count()
    assert len(records) == 12
    assert {d for d, r in records.items() if r.decided_by == "consensus"} == {"d1", "d2"}
    assert all(r.label is None for d, r in records.items() if d not in ("d1", "d2"))
    assert records["d3"].rounds == 2 and len(records["d3"].transcript) == 4
    assert tasks == 10
    assert "10 pair(s) wait for a human" in result.output
    assert "calls" in result.output and "decided" in result.output
    # the scripted debaters say "scripted" every round: no round-2 turn engaged
    assert "debate turns after round 1 that engaged: 0 of 20 (0%)" in result.output


def _engaging_debater(request: Request) -> str:
    """Like the egg debater, but A answers B by name after round 1."""
    reply = json.loads(_egg_debater(request))
    if AGENT.search(_user(request)).group(1) == "A" and "Round 2" in _user(request):
        reply["reasoning"] = "Agent B misses that S1 answers the query."
    return json.dumps(reply)


def test_summary_shows_the_share_of_later_turns_that_engaged(tmp_path: Path) -> None:
    result = _judge(tmp_path / "d.db", Counter("cli-engaging", _engaging_debater).model)
    assert result.exit_code == 0, result.output
    assert "debate turns after round 1 that engaged: 10 of 20 (50%)" in result.output
    store = open_store(tmp_path / "d.db")
    with store.session() as session:
        record = next(r for r in load_judgments(session, "j") if r.docid == "d3")
    assert [t.get("engagement") for t in record.transcript] == [None, None, "answers", "repeats"]


def test_rerun_resumes_without_any_model_call(tmp_path: Path) -> None:
    fake = Counter("cli-egg-rerun", _egg_debater)
    assert _judge(tmp_path / "d.db", fake.model).exit_code == 0
    calls = fake.calls
    result = _judge(tmp_path / "d.db", fake.model)
    assert result.exit_code == 0, result.output
    assert fake.calls == calls
    assert "0 judged by this run, 12 already judged before it" in result.output


def _main(monkeypatch, capsys, *args: str) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    """Run the installed entry point as a user would; return exit code and stderr."""
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    with pytest.raises(SystemExit) as caught:
        main()
    return caught.value.code, capsys.readouterr().err.strip()


def test_malformed_line_names_file_line_field_and_writes_nothing(
    tmp_path: Path,
    monkeypatch,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    pairs = tmp_path / "bad.jsonl"
    good = json.dumps({"qid": "q", "query": "x", "docid": "d", "text": "t"})
    pairs.write_text(
        good + "\n" + json.dumps({"qid": "q", "query": "", "docid": "e", "text": "t"}) + "\n"
    )
    db = tmp_path / "d.db"
    code, err = _main(
        monkeypatch, capsys, "judge", str(pairs), "--model", "fake:echo", "--db", str(db)
    )
    assert code == 2
    assert err.startswith(f"error: {pairs}:2: field 'query'") and "\n" not in err
    assert not db.exists()


def test_bad_option_is_one_line_not_a_traceback(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    args = ("judge", str(EXAMPLES), "--model", "fake:echo", "--db", str(tmp_path / "d.db"))
    code, err = _main(monkeypatch, capsys, *args, "--stances", "sideways")
    assert code == 2
    assert err.startswith("error: ") and "stances" in err and "\n" not in err


def test_duplicates_are_judged_once(tmp_path: Path) -> None:
    fake = Counter("cli-dupes", _egg_debater)
    pairs = tmp_path / "dupes.jsonl"
    line = EXAMPLES.read_text().splitlines()[0]
    pairs.write_text(f"{line}\n{line}\n")
    result = _judge(tmp_path / "d.db", fake.model, pairs=pairs)
    assert result.exit_code == 0, result.output
    assert fake.calls == 2  # one round, two agents, one pair


def test_failing_server_keeps_finished_pairs(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DOCKET_MAX_RETRIES", "1")
    state = {"calls": 0}

    def dying(request: Request) -> str:
        state["calls"] += 1
        if state["calls"] > 8:
            raise TransientModelError("503 from server")
        return _egg_debater(request)

    model = register_fake("cli-dying", dying)
    result = _judge(tmp_path / "d.db", model, "--concurrency", "1")
    assert isinstance(result.exception, ModelUnavailableError)
    assert "failed after 2 attempts" in str(result.exception)
    store = open_store(tmp_path / "d.db")
    with store.session() as session:
        saved = load_judgments(session, "j")
    assert 1 <= len(saved) < 12
    state["calls"] = -1000  # the server is back: the rerun finishes the rest
    result = _judge(tmp_path / "d.db", model)
    assert result.exit_code == 0, result.output
    with store.session() as session:
        assert len(load_judgments(session, "j")) == 12


def test_export_as_judged_and_as_reviewed(tmp_path: Path) -> None:
    fake = Counter("cli-export", _egg_debater)
    db = tmp_path / "d.db"
    assert _judge(db, fake.model).exit_code == 0
    store = open_store(db)
    with store.session() as session:
        add_reviewer(session, "ana")
        task = session.query(ReviewTask).filter_by(item_key="q2\td3").one()
        record_decision(session, task.id, "ana", 1, note="tilt explains seasons")
    judged, reviewed = tmp_path / "judged.qrels", tmp_path / "reviewed.qrels"
    for path, labels in ((judged, "judged"), (reviewed, "reviewed")):
        result = runner.invoke(
            app, ["export", "--job", "j", "--db", str(db), "-o", str(path), "--labels", labels]
        )
        assert result.exit_code == 0, result.output
    assert judged.read_text().splitlines() == ["q1 0 d1 1", "q1 0 d2 1"]
    assert reviewed.read_text().splitlines() == ["q1 0 d1 1", "q1 0 d2 1", "q2 0 d3 1"]
    jsonl = tmp_path / "all.jsonl"
    runner.invoke(
        app, ["export", "--job", "j", "--db", str(db), "-o", str(jsonl), "--format", "jsonl"]
    )
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    d3 = next(r for r in rows if r["docid"] == "d3")
    assert (d3["source"], d3["judged_label"], d3["label"]) == ("human", None, 1)
    assert d3["transcript"] and d3["prompt_hash"] and d3["docket_version"]


def test_export_of_unknown_job_is_a_clear_error(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    open_store(tmp_path / "d.db").close()  # a store without that job (no store: refused)
    args = ("export", "--job", "nope", "--db", str(tmp_path / "d.db"), "-o", str(tmp_path / "x"))
    code, err = _main(monkeypatch, capsys, *args)
    assert code == 2 and "no job named 'nope'" in err


def test_eval_methods_answers_escalations_with_recorded_reviews(tmp_path: Path) -> None:
    fake = Counter("cli-eval-review", _egg_debater)
    db = tmp_path / "d.db"
    assert _judge(db, fake.model).exit_code == 0
    gold = {
        (row["qid"], row["docid"]): row["label"]
        for row in map(json.loads, EXAMPLES.read_text().splitlines())
    }
    store = open_store(db)
    with store.session() as session:
        add_reviewer(session, "ana")
        for task in session.query(ReviewTask).all():
            qid, docid = task.item_key.split("\t")
            record_decision(session, task.id, "ana", gold[(qid, docid)])
    report = tmp_path / "report.json"
    args = ["eval", "methods", str(EXAMPLES), "--methods", "dream", "--model", fake.model]
    args += ["--humans", "review", "--db", str(db), "--out", str(report)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    dream = json.loads(report.read_text())["methods"]["dream"]
    assert dream["unresolved"] == 0 and dream["escalated"] == 10
    # d1 and d2 are labelled relevant by consensus (d2 wrongly); reviewers decide the rest
    assert dream["relevant_recall"] == 1.0
    assert dream["irrelevant_recall"] == 5 / 6


def test_ctrl_c_keeps_finished_pairs_and_says_how_to_resume(tmp_path: Path) -> None:
    # A real SIGINT to a real process, after the first pairs are stored.
    import signal
    import subprocess
    import time

    script = tmp_path / "slow_fake.py"
    script.write_text(
        "import sys, time\n"
        "from docket.llm.fake import register_fake\n"
        "def slow(request):\n"
        "    time.sleep(1.0)\n"
        '    return \'{"label": "relevant", "evidence": [], "reasoning": "s"}\'\n'
        "register_fake('slow', slow)\n"
        "from docket.cli.main import main\n"
        "sys.argv = ['docket', *sys.argv[1:]]\n"
        "main()\n"
    )
    db = tmp_path / "d.db"
    args = [sys.executable, str(script), "judge", str(EXAMPLES), "--model", "fake:slow"]
    args += ["--db", str(db), "--job", "j", "--concurrency", "1", "--cache", "off"]
    # An earlier test in the same pytest process may leave SIGINT ignored, and an ignored
    # signal is inherited by children: give the child the default disposition, as a shell does.
    process = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _stored(db):
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    err = " ".join(err.split())
    assert process.returncode == 130
    assert "interrupted" in err and "run the same command again to resume" in err
    saved = _stored(db)
    assert 1 <= saved < 12
    resumed = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"{saved} already judged before it" in " ".join(resumed.stdout.split())
    assert _stored(db) == 12


def _stored(db: Path) -> int:
    import sqlite3

    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
    except sqlite3.OperationalError:  # tables not created yet
        return 0


def test_a_model_id_the_server_does_not_list_leaves_no_store(
    tmp_path: Path, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    from tests.scripted_server import Reply, serve

    listed = {"object": "list", "data": [{"id": "qwen", "object": "model"}]}
    db = tmp_path / "d.db"
    with serve(lambda _body: "never asked", gets={"/v1/models": Reply(200, listed)}) as server:
        args = ("judge", str(EXAMPLES), "--model", server.model("qwn"), "--db", str(db))
        code, err = _main(monkeypatch, capsys, *args, "--cache", "off")
        assert server.requests == []
    assert code == 2 and "serves qwen, not 'qwn'" in err
    assert not db.exists()
