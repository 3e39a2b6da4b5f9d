"""At 80 columns the judge summary and the verify summary cut nothing (issue 20).

Run through the real entry point in a subprocess with ``COLUMNS=80``, as a terminal
would set it (rich reads it when its console is created, at import).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

SCRIPT = """\
import json, sys
from docket.llm.fake import register_fake
def split(request):
    text = request.messages[-1].content
    label = "relevant" if "you are agent A" in text or "S1" in text[-60:] else "irrelevant"
    return json.dumps({"label": label, "evidence": ["S1"], "reasoning": "scripted"})
register_fake("narrow", split)
register_fake("narrow-pass", lambda request: "PASS")
from docket.cli.main import main
sys.argv = ["docket", *sys.argv[1:]]
main()
"""


def _docket(tmp_path: Path, *args: str) -> str:
    script = tmp_path / "narrow.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    done = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, env=env,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_judge_summary_keeps_labels_whole_for_ms_marco_docids(tmp_path: Path) -> None:
    pairs = tmp_path / "msmarco.jsonl"
    rows = [
        {"qid": f"104858{i}", "query": "what is a cat", "text": "A cat is an animal.",
         "docid": f"msmarco_passage_41_12345678{i}"}
        for i in range(4)
    ]  # fmt: skip
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = _docket(
        tmp_path, "judge", str(pairs), "--model", "fake:narrow", "--db", str(tmp_path / "d.db"),
        "--cache", "off", "--rounds", "1",
    )  # fmt: skip
    table = [line for line in out.splitlines() if "msmarco_passage_41_" in line]
    assert len(table) >= 4
    assert all(len(line) <= 80 for line in table), table
    assert "…" not in "\n".join(table)
    for line in table[:4]:
        cells = line.replace("needs human", "needs-human").split()
        assert cells[0].startswith("104858") and cells[1].startswith("msmarco_passage_41_")
        assert cells[2] in ("relevant", "irrelevant", "needs-human", "needs")
        assert cells[3] in ("consensus", "escalated")


def test_verify_summary_wraps_rule_text_at_words(tmp_path: Path) -> None:
    words = "every assistant turn politely names the traveller's destination city and date"
    text = f"{words} {words}"
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"name": "narrow", "rules": [
        {"id": "F1", "text": text, "tier": "fmt", "scope": {"kind": "each_turn"},
         "check": {"checker": "word_count", "params": {"max": 50}}},
    ]}))  # fmt: skip
    data = tmp_path / "data.jsonl"
    turns = [{"role": "user", "text": "hello"}, {"role": "assistant", "text": "Where to?"}]
    data.write_text(json.dumps({"id": "r1", "turns": turns}) + "\n")
    out = _docket(
        tmp_path, "verify", "--rules", str(rules), str(data), "--sim-model",
        "fake:narrow-pass", "--sub-model", "fake:narrow-pass", "--cache", "off",
    )  # fmt: skip
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    start = next(i for i, line in enumerate(lines) if "F1" in line)
    shown = []
    for line in lines[start:]:
        if "┴" in line or "└" in line:
            break
        shown.append(line.rsplit("│", 2)[-2].strip())
    shown_words = " ".join(shown).split()
    assert shown_words[-1] == "…"  # shortened, and only between words
    assert all(w in text.split() for w in shown_words[:-1]), shown_words
