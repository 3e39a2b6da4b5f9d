"""The demo's job end to end on the real embedded model (Qwen2.5-Coder-0.5B-Instruct through llama.cpp)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from docket.store import load_judgments, open_store

pytestmark = pytest.mark.slow
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "pairs.jsonl"


def _docket(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "docket", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=900)


def test_debate_on_the_embedded_model_then_resume(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    db = tmp_path / "demo.db"
    args = ("judge", str(EXAMPLES), "--model", "local", "--db", str(db), "--job", "demo")
    first = _docket(*args, "--cache", str(tmp_path / "cache.sqlite"))
    assert first.returncode == 0, first.stderr[-3000:]
    assert "decided" in first.stdout and "calls" in first.stdout
    assert (
        "one debate, round by round" in first.stdout
        and "round 1, A, stance relevant" in first.stdout
    )
    n_pairs = len(EXAMPLES.read_text().splitlines())
    with open_store(db).session() as session:
        records = load_judgments(session, "demo")
    assert len(records) == n_pairs
    turns = [turn for record in records for turn in record.transcript]
    for record in records:
        assert record.model == "local:qwen-0.5b" and record.prompt_hash and record.docket_version
        assert record.usage["calls"] >= 2 and record.usage["completion_tokens"] > 0
        # a label exists exactly when the agents agreed; never a default on a parse failure
        assert (record.label is None) == (record.decided_by == "escalated")
    for turn in turns:
        assert turn["raw"], "every turn keeps the model's raw text"
        assert turn["parsed"] or turn["label"] is None
    # a turn says something or was counted as unreadable (re-asked); never an empty turn
    for turn in turns:
        assert turn["reasoning"].strip() or turn["parse_failures"] >= 1
    # every later-round turn that parsed is classed, and the usage counts them
    for record in records:
        classed = [t for t in record.transcript if t.get("engagement")]
        later = [t for t in record.transcript if t["round"] > 1 and t["parsed"]]
        assert len(classed) == len(later) == record.usage["later_turns"]
        assert record.usage["engaged_turns"] == sum(t["engagement"] != "repeats" for t in classed)
    assert any(turn["evidence"] for turn in turns)
    second = _docket(*args, "--cache", "off")
    assert second.returncode == 0, second.stderr[-3000:]
    rerun = " ".join(second.stdout.split())
    assert f"0 judged by this run, {n_pairs} already judged before it" in rerun
