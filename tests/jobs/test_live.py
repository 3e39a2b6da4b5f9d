"""While a job runs and after: spend in the progress lines, planned against actual, show --job."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from docket.cli.main import app
from docket.jobs.bill.live import LiveSpend
from docket.llm.fake import register_fake
from docket.llm.usage import Price, Usage

EXAMPLES = Path(__file__).resolve().parents[1] / "cli" / "pairs12.jsonl"
AGREE = json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "on topic"})
runner = CliRunner()


def test_live_spend_projects_the_rest_from_the_pace_so_far() -> None:
    usage = Usage(calls=10, prompt_tokens=1_000_000, completion_tokens=0)
    live = LiveSpend(usage=lambda: usage, price=Price(2.0, 1.0, 4.0))
    text = live.status(5, 20)
    assert text.startswith("spent $2.0000 (10 calls), projected $8.0000, ETA ")
    assert LiveSpend().status(1, 2) == ""


def test_judge_prints_spend_in_progress_planned_vs_actual_and_show_job_reports_it(tmp_path):
    model = register_fake("live-agree", lambda request: AGREE)
    db = str(tmp_path / "d.db")
    args = ["judge", str(EXAMPLES), "--model", model, "--db", db, "--cache", "off", "--job",
            "j", "--price-input", "1", "--price-output", "2", "--max-calls", "1000"]  # fmt: skip
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "spent $" in result.output and "projected $" in result.output  # progress lines
    assert "planned vs actual" in result.output
    # every pair agrees: 24 calls against a planned 36 (half the debates assumed to run on)
    assert "-33%" in result.output
    shown = runner.invoke(app, ["show", "--job", "j", "--db", db, "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    assert data["spend"]["calls"] == 24
    assert [n["kind"] for n in data["notes"]] == ["plan"]
    assert data["notes"][0]["calls"]["expected"] == 36
    text = runner.invoke(app, ["show", "--job", "j", "--db", db], env={"COLUMNS": "200"})
    assert "24 calls" in text.output and "plan: 12 pairs, 36 calls" in text.output
