"""The real entry point: docket holes find|fill|compose|simulate and docket eval systems|rag."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app, main
from docket.errors import InputError
from docket.ir.formats import read_qrels
from docket.ir.provenance import read_provenance
from docket.llm.fake import register_fake
from docket.llm.types import Request

from .conftest import QRELS

runner = CliRunner()


def _zebra(request: Request) -> str:
    """Agents agree: relevant iff the chunk mentions zebras; 'ambiguous' chunks split by stance."""
    prompt = request.prompt_text
    chunk = prompt.split("<chunk>", 1)[1].split("</chunk>", 1)[0].lower()
    relevant = (
        bool(re.search(r"\bRELEVANT\b", prompt)) if "ambiguous" in chunk else "zebra" in chunk
    )
    label = "relevant" if relevant else "irrelevant"
    return f"LABEL: {label}\nEVIDENCE: S1\nREASONING: the chunk is {label}."


MODEL = register_fake("ir-zebra", _zebra)


def _invoke(*args: object):
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.output
    return result


def _base(bench, command: str) -> list:
    return ["holes", command, "--qrels", bench.qrels, "--runs", *bench.runs]


def test_find_reports_hole_at_k(bench, tmp_path: Path) -> None:
    holes, report = tmp_path / "holes.jsonl", tmp_path / "report.json"
    result = _invoke(
        *_base(bench, "find"),
        "--depth",
        3,
        "--out",
        holes,
        "--report",
        report,
        "--corpus",
        bench.corpus,
        "--corpus-index",
        bench.index,
    )
    rows = {
        line.split()[1]: line.split()[3]
        for line in result.output.splitlines()
        if re.match(r"^│ [ABC] ", line)
    }
    assert rows == {"A": "0.333", "B": "0.667", "C": "0.000"}
    assert "11 pairs, 6 unjudged" in result.output
    lines = [json.loads(line) for line in holes.read_text().splitlines()]
    assert [(h["qid"], h["docid"]) for h in lines][:2] == [("q1", "d7"), ("q1", "d8")]
    data = json.loads(report.read_text())
    assert data["per_query"]["B"] == pytest.approx({"q1": 2 / 3, "q2": 2 / 3})
    assert data["missing_documents"] == 0


def test_fill_with_debate_writes_qrels_and_provenance(bench, tmp_path: Path) -> None:
    completed, prov = tmp_path / "completed.qrels", tmp_path / "prov.jsonl"
    result = _invoke(
        *_base(bench, "fill"),
        "--depth",
        3,
        "--corpus",
        bench.corpus,
        "--corpus-index",
        bench.index,
        "--queries",
        bench.queries,
        "--method",
        "dream",
        "--model",
        MODEL,
        "--cache",
        "off",
        "--concurrency",
        2,
        "--out-qrels",
        completed,
        "--provenance",
        prov,
    )
    qrels = read_qrels(completed)
    assert qrels["q1"] == {**QRELS["q1"], "d7": 1, "d8": 1, "d9": 0}
    assert qrels["q2"] == {**QRELS["q2"], "d8": 1, "d9": 0}  # d6: agents disagree, pending
    records = {(r.qid, r.docid, r.source) for r in read_provenance(prov)}
    assert ("q2", "d6", "escalated-pending") in records and ("q1", "d7", "consensus") in records
    assert "6 holes at depth 3; judged 6 pairs now; 5 labels added" in result.output
    # compose the original-only level back from the provenance
    original = tmp_path / "original.qrels"
    _invoke(
        "holes",
        "compose",
        "--qrels",
        bench.qrels,
        "--provenance",
        prov,
        "--level",
        "original",
        "--out-qrels",
        original,
    )
    assert read_qrels(original) == QRELS


def test_fill_audit_reports_disagreements(bench, tmp_path: Path) -> None:
    result = _invoke(
        *_base(bench, "fill"),
        "--depth",
        3,
        "--corpus",
        bench.corpus,
        "--corpus-index",
        bench.index,
        "--queries",
        bench.queries,
        "--model",
        MODEL,
        "--cache",
        "off",
        "--audit",
        "--out-qrels",
        tmp_path / "c.qrels",
        "--provenance",
        tmp_path / "p.jsonl",
    )
    # the fake model calls d1, d3, d4 (judged relevant) irrelevant: three disagreements
    assert "audit: 3 disagreements" in result.output
    assert read_qrels(tmp_path / "c.qrels")["q1"]["d1"] == 1


def test_eval_systems_json_and_plot(bench, tmp_path: Path) -> None:
    report, plot = tmp_path / "report.json", tmp_path / "shifts.png"
    result = _invoke(
        "eval",
        "systems",
        "--qrels",
        bench.qrels,
        "--completed-qrels",
        bench.completed,
        "--runs",
        *bench.runs,
        "--measures",
        "P@3,nDCG@10",
        "--plot",
        plot,
        "--out",
        report,
    )
    data = json.loads(report.read_text())
    assert data["shifts"] == {"A": 0, "B": 1, "C": -1}
    assert data["primary"] == "P@3"
    completed = next(c for c in data["comparisons"] if c["variant"] == "completed")
    assert completed["tau"] == pytest.approx(-0.5) and completed["tau_ap"] == pytest.approx(-1.0)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (
        "completed: Kendall's tau -0.500, tau_AP -1.000, 2 of 3 systems changed rank"
        in result.output
    )


def test_eval_rag(bench, tmp_path: Path) -> None:
    generation = tmp_path / "gen.jsonl"
    generation.write_text(
        "".join(
            json.dumps({"system": s, "qid": q, "correct": c}) + "\n"
            for s, q, c in [
                ("A", "q1", 1),
                ("A", "q2", 0),
                ("B", "q1", 1),
                ("B", "q2", 1),
                ("C", "q1", 0),
                ("C", "q2", 1),
            ]
        )
    )
    out = tmp_path / "rag.json"
    _invoke(
        "eval",
        "rag",
        "--qrels",
        bench.qrels,
        "--completed-qrels",
        bench.completed,
        "--runs",
        *bench.runs,
        "--generation",
        generation,
        "--k",
        3,
        "--measure",
        "P",
        "--out",
        out,
    )
    data = {r["variant"]: r for r in json.loads(out.read_text())}
    assert set(data) == {"original", "completed"}
    # completed P@3: A 1/2, B 2/3, C 1/2 vs correctness A 0.5, B 1, C 0.5: perfectly aligned
    assert data["completed"]["pearson"] == pytest.approx(1.0)
    assert data["original"]["pearson"] < data["completed"]["pearson"]


def test_simulate_with_fake_model(bench, tmp_path: Path) -> None:
    out = tmp_path / "sim.json"
    result = _invoke(
        *_base(bench, "simulate"),
        "--corpus",
        bench.corpus,
        "--corpus-index",
        bench.index,
        "--queries",
        bench.queries,
        "--model",
        MODEL,
        "--cache",
        "off",
        "--fraction",
        1.0,
        "--measure",
        "P@3",
        "--out",
        out,
    )
    data = json.loads(out.read_text())
    # every judged pair is called irrelevant by the fake model: gold d1 d3 d4 are missed
    assert data["confusion"] == {"tp": 0, "fn": 3, "fp": 0, "tn": 2}
    assert data["balanced_accuracy"] == pytest.approx(0.5)
    assert "dropped 5 judged pairs" in result.output


def test_bad_run_line_names_file_and_line(bench, tmp_path: Path) -> None:
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d1 1 2.0 bad\nq1 Q0 d2 2 oops bad\n")
    report = tmp_path / "report.json"
    result = runner.invoke(app, [str(a) for a in (*_base(bench, "find"), bad, "--report", report)])
    assert isinstance(result.exception, InputError)
    assert "bad.trec:2: field 'score'" in str(result.exception)
    assert not report.exists()


def test_user_error_is_one_line_exit_2(bench, tmp_path: Path, monkeypatch, capsys) -> None:
    bad = tmp_path / "bad.qrels"
    bad.write_text("q1 0 d1 1\nq1 0 d2 9\n")
    monkeypatch.setattr(
        sys,
        "argv",
        ["docket", "eval", "systems", "--qrels", str(bad), "--runs", *map(str, bench.runs)],
    )
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "bad.qrels:2: field 'grade'" in err and "\n" not in err
