"""The demo's job end to end on the real embedded model (Gemma 3 270M through llama.cpp)."""

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
    assert "decided by" in first.stdout and "LLM calls" in first.stdout
    with open_store(db).session() as session:
        records = load_judgments(session, "demo")
    assert len(records) == 12
    for record in records:
        assert record.model == "local" and record.prompt_hash and record.docket_version
        assert record.usage["calls"] >= 2 and record.usage["completion_tokens"] > 0
        # a label exists exactly when the agents agreed; never a default on a parse failure
        assert (record.label is None) == (record.decided_by == "escalated")
        for turn in record.transcript:
            assert turn["raw"], "every turn keeps the model's raw text"
            assert turn["parsed"] or turn["label"] is None
    second = _docket(*args, "--cache", "off")
    assert second.returncode == 0, second.stderr[-3000:]
    assert "12 already judged" in " ".join(second.stdout.split())
