"""Every judging command exits by the same rules: failed pairs exit 3 unless --allow-failed."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from docket.cli.common import EXIT_FAILED
from docket.errors import RequestRefusedError
from docket.llm.fake import register_fake
from docket.llm.types import Request

runner = CliRunner()


def _refuse_huge(request: Request) -> str:
    if "HUGE" in request.prompt_text:
        raise RequestRefusedError("context length exceeded")
    return "LABEL: relevant\nEVIDENCE: S1\nREASONING: it says so."


REFUSING = register_fake("exit-codes-refuse-huge", _refuse_huge)


def _pairs(tmp_path: Path) -> Path:
    path = tmp_path / "gold.jsonl"
    texts = {"d1": "Boil eggs six minutes.", "d2": "HUGE text.", "d3": "Eggs boil in water."}
    rows = [
        {"qid": "q1", "query": "boil an egg", "docid": d, "text": t, "label": 1}
        for d, t in texts.items()
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_eval_methods_exits_3_on_failed_pairs_and_0_with_allow_failed(tmp_path: Path) -> None:
    from docket.cli.main import app

    args = ["eval", "methods", str(_pairs(tmp_path)), "--methods", "single"]
    args += ["--model", REFUSING, "--cache", "off", "--db", str(tmp_path / "e.db")]
    failed = runner.invoke(app, args)
    assert failed.exit_code == EXIT_FAILED == 3, failed.output
    assert "1 failed pairs are not scored" in " ".join(failed.output.split())
    allowed = runner.invoke(app, [*args, "--allow-failed"])
    assert allowed.exit_code == 0, allowed.output
