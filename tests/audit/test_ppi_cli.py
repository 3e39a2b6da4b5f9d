"""``docket eval systems --ppi``: refusals and intervals on small data."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import ir_measures
import pytest

from docket.cli.main import main

# Three queries, eight documents each; the LLM calls d1-d4 relevant, humans d1, d2, d5.
DOCS = [f"d{i}" for i in range(1, 9)]
QUERIES = ["q1", "q2", "q3"]
LLM = {q: {d: int(d in {"d1", "d2", "d3", "d4"}) for d in DOCS} for q in QUERIES}
HUMAN = {q: {d: int(d in {"d1", "d2", "d5"}) for d in DOCS} for q in QUERIES}
RUNS = {
    "good": ["d1", "d2", "d5", "d3", "d6"],
    "llm_fan": ["d3", "d4", "d1", "d2", "d7"],
    "poor": ["d6", "d7", "d8", "d3", "d1"],
}


def _qrels(path: Path, qrels: dict) -> Path:
    lines = [f"{q} 0 {d} {g}" for q, docs in qrels.items() for d, g in docs.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    runs = []
    for name, docs in RUNS.items():
        path = tmp_path / f"{name}.trec"
        lines = [f"{q} Q0 {d} {r} {10 - r} {name}" for q in QUERIES for r, d in enumerate(docs, 1)]
        path.write_text("\n".join(lines) + "\n")
        runs.append(path)
    return {"llm": _qrels(tmp_path / "llm.qrels", LLM), "runs": runs, "dir": tmp_path}


def _run(monkeypatch, capsys, *args: object) -> tuple[int, str, str]:
    argv = ["docket", "eval", "systems", *map(str, args)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as caught:
        main()
    captured = capsys.readouterr()
    return caught.value.code, captured.out, captured.err


def _base(files) -> list:
    return ["--qrels", files["llm"], "--runs", *files["runs"], "--measures", "P@5"]


def _refused(monkeypatch, capsys, *args) -> str:
    code, _, err = _run(monkeypatch, capsys, *args)
    assert code == 2
    line = err.strip()
    assert line.startswith("error: ") and "\n" not in line and "Traceback" not in err
    return line


def test_ppi_without_human_labels_is_refused(files, monkeypatch, capsys):
    line = _refused(monkeypatch, capsys, *_base(files), "--ppi")
    assert "--ppi needs human labels" in line


def test_human_sample_without_ppi_is_refused(files, monkeypatch, capsys):
    sample = _qrels(files["dir"] / "h.qrels", {"q1": {"d1": 1}})
    line = _refused(monkeypatch, capsys, *_base(files), "--human-sample", sample)
    assert "--human-sample is read only with --ppi" in line


def test_a_sampled_pair_outside_the_pool_is_refused(files, monkeypatch, capsys):
    sample = _qrels(files["dir"] / "h.qrels", {"q1": {"d1": 1, "d99": 0}})
    line = _refused(monkeypatch, capsys, *_base(files), "--ppi", "--human-sample", sample)
    assert "pair (q1, d99)" in line and "not in the pool" in line


@pytest.mark.parametrize("value", ["0", "1.5", "-0.2", "abc"])
def test_inclusion_probability_outside_zero_one_is_refused(files, monkeypatch, capsys, value):
    sample = _qrels(files["dir"] / "h.qrels", {"q1": {"d1": 1, "d2": 1}})
    inclusion = files["dir"] / "pi.tsv"
    inclusion.write_text(f"q1\td1\t0.5\nq1\td2\t{value}\n")
    args = (*_base(files), "--ppi", "--human-sample", sample, "--inclusion", inclusion)
    line = _refused(monkeypatch, capsys, *args)
    assert "pi.tsv:2: field 'probability'" in line and "not in (0, 1]" in line


def test_census_sample_gives_the_human_figures_exactly(files, monkeypatch, capsys):
    # Every pool pair judged by humans (pi = 1): the estimate is the human P@5, width 0.
    sample = _qrels(files["dir"] / "h.qrels", HUMAN)
    out_path = files["dir"] / "report.json"
    code, out, _ = _run(
        monkeypatch, capsys, *_base(files), "--ppi", "--human-sample", sample, "--out", out_path
    )
    assert code == 0
    ppi = json.loads(out_path.read_text())["ppi"]
    truth = _p5(HUMAN)
    naive = _p5(LLM)
    for name in RUNS:
        figures = ppi["systems"][name]["P@5"]
        assert figures["estimate"] == pytest.approx(truth[name])
        assert figures["ci_low"] == pytest.approx(truth[name])
        assert figures["ci_high"] == pytest.approx(truth[name])
        assert figures["naive"] == pytest.approx(naive[name])
        assert figures["human_only"]["ci_low"] == pytest.approx(truth[name])
    # The LLM ranks llm_fan first; humans rank good first, and say so.
    assert naive["llm_fan"] > naive["good"] and truth["good"] > truth["llm_fan"]
    pair = next(p for p in ppi["pairs"] if {p["a"], p["b"]} == {"good", "llm_fan"})
    assert pair["significant"]
    assert {"a": pair["a"], "b": pair["b"], "measure": "P@5", "naive": pair["naive"]} in ppi[
        "unsupported_orders"
    ]
    assert "LLM-only order llm_fan > good on P@5 (by 0.200) contradicted" in out


def test_uniform_sample_prints_intervals_for_every_system(files, monkeypatch, capsys):
    sampled = {q: {d: HUMAN[q][d] for d in DOCS[i : i + 5]} for i, q in enumerate(QUERIES)}
    sample = _qrels(files["dir"] / "h.qrels", sampled)
    out_path = files["dir"] / "report.json"
    code, out, _ = _run(
        monkeypatch, capsys, *_base(files), "--ppi", "--human-sample", sample, "--out", out_path
    )
    assert code == 0
    ppi = json.loads(out_path.read_text())["ppi"]
    assert ppi["design"] == "pairs" and ppi["human_labels"] == 15 and ppi["frame"] == 24
    for name in RUNS:
        f = ppi["systems"][name]["P@5"]
        assert f["ci_low"] <= f["estimate"] <= f["ci_high"]
        assert f["ci_low"] < f["ci_high"]
        assert f["human_only"]["ci_low"] < f["human_only"]["ci_high"]
        assert name in out
    assert len(ppi["pairs"]) == 3
    assert all({"difference", "ci_low", "ci_high", "significant"} <= set(p) for p in ppi["pairs"])
    assert "P@5: estimates with intervals" in out and "differences" in out


def _p5(qrels: dict) -> dict[str, float]:
    return _aggregate(qrels, "P@5")


def test_whole_queries_give_query_level_intervals_for_any_measure(files, monkeypatch, capsys):
    # Every query judged whole: the finite-population correction leaves no uncertainty.
    sample = _qrels(files["dir"] / "h.qrels", HUMAN)
    out_path = files["dir"] / "report.json"
    args = (*_base(files)[:-1], "nDCG@5,AP", "--ppi", "--ppi-queries")
    code, out, _ = _run(monkeypatch, capsys, *args, "--human-sample", sample, "--out", out_path)
    assert code == 0, out
    ppi = json.loads(out_path.read_text())["ppi"]
    assert ppi["design"] == "queries" and ppi["measures"] == ["nDCG@5", "AP"]
    truth = _aggregate(HUMAN, "nDCG@5")
    for name in RUNS:
        figures = ppi["systems"][name]["nDCG@5"]
        assert figures["estimate"] == pytest.approx(truth[name])
        assert figures["ci_low"] == pytest.approx(truth[name])
        assert figures["naive"] == pytest.approx(_aggregate(LLM, "nDCG@5")[name])


def test_a_query_not_judged_whole_is_refused(files, monkeypatch, capsys):
    sample = _qrels(files["dir"] / "h.qrels", {"q1": {"d1": 1, "d2": 1}})
    args = (*_base(files), "--ppi", "--ppi-queries", "--human-sample", sample)
    line = _refused(monkeypatch, capsys, *args)
    assert "query q1 is not judged whole" in line


def _aggregate(qrels: dict, name: str) -> dict[str, float]:
    measure = ir_measures.parse_measure(name)
    result = {}
    for system, docs in RUNS.items():
        run = {q: {d: float(10 - r) for r, d in enumerate(docs, 1)} for q in QUERIES}
        result[system] = ir_measures.calc_aggregate([measure], qrels, run)[measure]
    return result
