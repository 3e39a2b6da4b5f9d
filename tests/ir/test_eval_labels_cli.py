"""``docket eval labels`` through the real entry point: every source, format and bad input."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import ir_measures
import pytest
from matplotlib.image import imread
from typer.testing import CliRunner

from docket.cli.main import app, main
from docket.llm.fake import register_fake

from .conftest import QRELS, write_qrels

runner = CliRunner()
# A label set that disagrees with QRELS on two of five pairs, and one that agrees.
NOISY = {"q1": {"d1": 2, "d2": 0, "d3": 0}, "q2": {"d4": 1, "d5": 1}}


def _invoke(*args: object):  # type: ignore[no-untyped-def]
    result = runner.invoke(app, ["eval", "labels", *map(str, args)])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.output
    return result


def _main(monkeypatch, capsys, *args: object) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["docket", "eval", "labels", *map(str, args)])
    with pytest.raises(SystemExit) as caught:
        main()
    return caught.value.code, capsys.readouterr().err.strip()


@pytest.fixture
def files(bench, tmp_path: Path) -> tuple[Path, Path, Path]:
    """Gold (the bench's qrels), a noisy label set and an exact copy."""
    return (
        bench.qrels,
        write_qrels(tmp_path / "noisy.txt", NOISY),
        write_qrels(tmp_path / "same.txt", QRELS),
    )


def test_every_format_gives_the_same_figures(files, tmp_path: Path) -> None:
    gold, noisy, same = files
    report = json.loads(_invoke(gold, noisy, same, "--format", "json").stdout)
    assert [r["name"] for r in report["results"]] == ["same", "noisy"]
    by_name = {r["name"]: r for r in report["results"]}
    assert by_name["same"]["kappa"] == pytest.approx(1.0)
    rows = list(csv.DictReader(io.StringIO(_invoke(gold, noisy, same, "--format", "csv").stdout)))
    assert [row["label set"] for row in rows] == ["same", "noisy"]
    for row in rows:
        for column, field in (("kappa", "kappa"), ("alpha ordinal", "alpha_ordinal")):
            assert float(row[column]) == pytest.approx(by_name[row["label set"]][field], abs=5e-5)
    markdown = _invoke(gold, noisy, same, "--format", "markdown").stdout.splitlines()
    assert markdown[0].startswith("| label set | pairs |") and len(markdown) == 4
    table = _invoke(gold, noisy, same).stdout
    assert "Binarised" in table and "noisy" in table


def test_runs_take_several_values_and_scores_match_ir_measures(
    bench, files, tmp_path: Path
) -> None:
    gold, noisy, _ = files
    out = tmp_path / "report.json"
    _invoke(gold, noisy, "--runs", *bench.runs, "--measure", "P@2", "--out", out)
    (ranking,) = json.loads(out.read_text())["rankings"]
    assert sorted(ranking["gold_scores"]) == ["A", "B", "C"]
    runs = {r.stem: r for r in bench.runs}
    for qrels, scores in ((QRELS, ranking["gold_scores"]), (NOISY, ranking["label_scores"])):
        for name, path in runs.items():
            run = list(ir_measures.read_trec_run(str(path)))
            expected = ir_measures.calc_aggregate([ir_measures.P @ 2], qrels, run)
            assert scores[name] == pytest.approx(expected[ir_measures.P @ 2])
    assert ranking["queries"] == 2 and ranking["measure"] == "P@2"


def test_the_readme_command_line(bench, files, tmp_path: Path) -> None:
    gold, noisy, same = files
    png = tmp_path / "confusion.png"
    args = [gold, noisy, same, "--clip", "0:3", "--rel-level", 2, "--runs", *bench.runs]
    result = _invoke(*args, "--measure", "nDCG@10", "--format", "markdown", "--plot", png)
    header, rule, *rows = result.stdout.splitlines()
    assert header.endswith("| kappa >=3 | alpha nominal | alpha ordinal | alpha interval | bAcc >=2 "
                           "| recall irrelevant | recall relevant | queries | tau | tau_ap | rho "
                           "| rank changes | largest change |")  # fmt: skip
    assert [row.split(" | ")[0] for row in rows] == ["| same", "| noisy"]
    assert rows[0].split(" | ")[-5:-1] == ["1.0000", "1.0000", "1.0000", "0"]  # same ranking
    assert png.stat().st_size > 0


def test_plot_one_heatmap_or_a_grid(files, tmp_path: Path) -> None:
    gold, noisy, same = files
    one, grid = tmp_path / "one.png", tmp_path / "grid.png"
    _invoke(gold, noisy, "--plot", one)
    _invoke(gold, noisy, same, noisy, "--plot", grid)
    assert one.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width = imread(one).shape[:2]
    grid_height, grid_width = imread(grid).shape[:2]
    assert grid_width > width and grid_height > height  # 2 x 2 panels


def test_per_query_tsv_and_json(files, tmp_path: Path) -> None:
    gold, noisy, _ = files
    tsv, data = tmp_path / "pq.tsv", tmp_path / "pq.json"
    _invoke(gold, noisy, "--per-query", tsv)
    _invoke(gold, noisy, "--per-query", data)
    lines = tsv.read_text().splitlines()
    assert lines[0] == "label_set\tqid\tpairs\tkappa\theadline_kappa"
    assert [line.split("\t")[:3] for line in lines[1:]] == [
        ["noisy", "q1", "3"],
        ["noisy", "q2", "2"],
    ]
    assert [q["qid"] for q in json.loads(data.read_text())["noisy"]] == ["q1", "q2"]


def test_clipping_is_reported(files, tmp_path: Path) -> None:
    gold, _, _ = files
    wide = write_qrels(tmp_path / "wide.txt", {"q1": {"d1": 9, "d2": 0, "d3": 2}})
    result = _invoke(gold, wide, "--clip", "0:3", "--format", "json")
    assert json.loads(result.stdout)["results"][0]["clipped"] == 1
    assert "wide: 1 label clipped into 0..3" in result.stderr


def _grader(request) -> str:  # type: ignore[no-untyped-def]
    grade = QRELS["q1"].get(request.prompt_text.split("DOC:")[1].split()[0], 0)
    return f"M: 1\nT: 1\n##final score: {grade}"


GRADER = register_fake("labels-grader", _grader)


def test_a_job_and_its_jsonl_export_give_the_same_figures(files, tmp_path: Path) -> None:
    gold, _, _ = files
    pairs, db = tmp_path / "pairs.jsonl", tmp_path / "j.db"
    rows = [
        {"qid": "q1", "query": "zebras", "docid": d, "text": f"DOC: {d} text."} for d in QRELS["q1"]
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    judge = ["judge", pairs, "--method", "single", "--scale", "graded", "--model", GRADER]
    assert runner.invoke(app, [str(a) for a in (*judge, "--db", db, "--job", "g")]).exit_code == 0
    exported = tmp_path / "g.jsonl"
    export = ["export", "--job", "g", "--db", db, "--format", "jsonl", "-o", exported]
    assert runner.invoke(app, [str(a) for a in export]).exit_code == 0
    from_job = json.loads(_invoke(gold, "job:g", "--db", db, "--format", "json").stdout)
    from_file = json.loads(_invoke(gold, exported, "--format", "json").stdout)
    (job,), (file,) = from_job["results"], from_file["results"]
    assert job["name"] == "job:g" and job["joined"] == file["joined"] == 3
    assert job["confusion"] == file["confusion"] and job["kappa"] == pytest.approx(1.0)


def test_irds_gold(irds_id: str, files) -> None:
    _, noisy, same = files
    report = json.loads(_invoke(f"irds:{irds_id}", same, "--format", "json").stdout)
    assert report["results"][0]["kappa"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("disjoint", "disjoint.txt: no (qid, docid) pair in common with the gold labels (1 pairs"),
        ("duplicate", "dup.txt:3: field 'grade': 1 duplicate lines give a pair a different label"),
        ("measure", "unknown measure 'nDCG@x'"),
        ("runs", "answers none of the 2 gold queries (1 queries in the run)"),
        ("scale", "wide.txt:1: field 'grade': 1 labels are outside the scale 0..3 (first: 7)"),
        ("format", "--format must be one of table, csv, json, markdown"),
        ("job", "no job named 'nope' in the store"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    case: str, expected: str, files, tmp_path: Path, monkeypatch, capsys
) -> None:
    gold, noisy, _ = files
    out = tmp_path / "report.json"
    args: list[object] = {
        "disjoint": [gold, write_qrels(tmp_path / "disjoint.txt", {"q9": {"x": 1}})],
        "duplicate": [gold, _text(tmp_path / "dup.txt", "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n")],
        "measure": [gold, noisy, "--measure", "nDCG@x"],
        "runs": [gold, noisy, "--runs", _text(tmp_path / "r.txt", "q9 Q0 d1 1 1.0 x\n")],
        "scale": [gold, _text(tmp_path / "wide.txt", "q1 0 d1 7\n")],
        "format": [gold, noisy, "--format", "xml"],
        "job": [gold, "job:nope", "--db", tmp_path / "empty.db"],
    }[case]
    code, err = _main(monkeypatch, capsys, *args, "--out", out)
    assert code == 2
    assert err.startswith("error: ") and expected in err and "\n" not in err
    assert not out.exists()


def _text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
