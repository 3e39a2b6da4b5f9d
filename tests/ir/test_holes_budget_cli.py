"""``holes fill --budget --order`` and ``holes simulate --budget --order`` through the CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app, main
from docket.llm.fake import register_fake
from docket.llm.types import Request

runner = CliRunner()
CALLS = {"n": 0}


def _zebra(request: Request) -> str:
    CALLS["n"] += 1
    chunk = request.prompt_text.split("<chunk>", 1)[1].split("</chunk>", 1)[0].lower()
    label = "relevant" if "zebra" in chunk else "irrelevant"
    return f"LABEL: {label}\nEVIDENCE: S1\nREASONING: the chunk is {label}."


MODEL = register_fake("budget-zebra", _zebra)


def _fill_args(bench, tmp_path: Path, *extra: object) -> list[str]:  # type: ignore[no-untyped-def]
    args = ["holes", "fill", "--qrels", bench.qrels, "--runs", *bench.runs, "--depth", 3]
    args += ["--corpus", bench.corpus, "--corpus-index", bench.index, "--queries", bench.queries]
    args += ["--model", MODEL, "--cache", "off", "--db", tmp_path / "d.db", "--method", "single"]
    args += ["--out-qrels", tmp_path / "c.qrels", "--provenance", tmp_path / "p.jsonl", *extra]
    return [str(a) for a in args]


def _error(monkeypatch, capsys, args: list[str]) -> str:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_fill_stops_at_the_budget_and_a_rerun_continues(bench, tmp_path: Path) -> None:
    first = runner.invoke(app, _fill_args(bench, tmp_path, "--budget", "50%", "--order", "mtf"))
    assert first.exit_code == 0, first.output
    text = " ".join(first.output.split())
    assert "budget: 3 of the holes, drawn in mtf order" in text and "judged 3 pairs now" in text
    assert len((tmp_path / "c.qrels").read_text().splitlines()) == 5 + 3
    calls = CALLS["n"]
    again = runner.invoke(app, _fill_args(bench, tmp_path, "--budget", "6", "--order", "mtf"))
    assert again.exit_code == 0, again.output
    assert "judged 3 pairs now, 3 already in the store" in " ".join(again.output.split())
    assert CALLS["n"] - calls == 3  # only the three new holes reach the model


@pytest.mark.parametrize(
    ("extra", "message"),
    [(("--budget", "0"), "budget 0 is 0 pairs of the 6 in the pool"),
     (("--budget", "7"), "budget 7 is 7 pairs, over the 6 in the pool"),
     (("--budget", "200%"), "budget 200% is 12 pairs, over the 6 in the pool"),
     (("--budget", "lots"), "budget 'lots' is not N or P%"),
     (("--order", "best"), "unknown order 'best'"),
     (("--budget", "2", "--limit", "3"), "replace --limit, --audit and --whole-pool")],
)  # fmt: skip
def test_fill_bad_budget_is_one_line_exit_2_and_writes_nothing(
    bench, tmp_path: Path, monkeypatch, capsys, extra: tuple[str, ...], message: str
) -> None:
    err = _error(monkeypatch, capsys, _fill_args(bench, tmp_path, *extra))
    assert message in err
    assert not (tmp_path / "c.qrels").exists() and not (tmp_path / "p.jsonl").exists()


def _sim_args(bench, tmp_path: Path, *extra: object) -> list[str]:  # type: ignore[no-untyped-def]
    args = ["holes", "simulate", "--qrels", bench.qrels, "--runs", *bench.runs]
    args += ["--db", tmp_path / "s.db", "--cache", "off", *extra]
    return [str(a) for a in args]


def test_simulate_with_the_oracle_needs_no_text_and_no_model(bench, tmp_path: Path) -> None:
    calls = CALLS["n"]
    result = runner.invoke(app, _sim_args(bench, tmp_path, "--oracle", "--fraction", "1"))
    assert result.exit_code == 0, result.output
    assert "kappa 1.000, balanced accuracy 1.000" in result.output
    assert "refilled vs full qrels (nDCG@10): tau 1.000" in result.output
    assert CALLS["n"] == calls


def test_simulate_orders_table_json_and_plot(bench, tmp_path: Path) -> None:
    out, plot = tmp_path / "b.json", tmp_path / "b.png"
    args = _sim_args(bench, tmp_path, "--oracle", "--fraction", "1", "--budget", "2,100%")
    result = runner.invoke(app, [*args, "--out", str(out), "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert "dropped 5 judged pairs (3 relevant" in " ".join(result.output.split())
    report = json.loads(out.read_text())
    assert [(p["order"], p["budget"]) for p in report["points"]] == [
        (order, b) for order in ("depth", "mtf", "bandit") for b in (2, 5)
    ]
    for point in report["points"]:
        assert point["recovered"] <= min(point["budget"], 3)
        if point["budget"] == 5:  # everything refilled by the oracle: all found, same ranking
            assert point["recovered"] == 3 and point["share"] == 1.0 and point["tau"] == 1.0
    assert all(len(curve) == 5 for curve in report["curves"].values())
    assert plot.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("extra", "message"),
    [(("--oracle", "--budget", "0"), "budget 0 is 0 pairs of the"),
     (("--oracle", "--fraction", "1", "--budget", "6"), "budget 6 is 6 pairs, over the 5"),
     (("--oracle", "--budget", "2", "--order", "best"), "unknown order 'best'"),
     (("--fraction", "0.5",), "--queries and --corpus are needed unless the judge is --oracle"),
     (("--oracle", "--plot", "x.png"), "--plot draws budgeted orders")],
)  # fmt: skip
def test_simulate_bad_input_is_one_line_exit_2(
    bench, tmp_path: Path, monkeypatch, capsys, extra: tuple[str, ...], message: str
) -> None:
    assert message in _error(monkeypatch, capsys, _sim_args(bench, tmp_path, *extra))


def test_the_oracle_is_not_a_method_for_real_holes(
    bench, tmp_path: Path, monkeypatch, capsys
) -> None:
    args = _fill_args(bench, tmp_path)
    args[args.index("single")] = "oracle"
    assert "invalid judge option method" in _error(monkeypatch, capsys, args)
    assert not (tmp_path / "c.qrels").exists()
    result = runner.invoke(app, [*_fill_args(bench, tmp_path), "--oracle"])
    assert result.exit_code == 2 and "No such option" in result.output


def test_simulate_orders_with_a_model_judges_each_pair_once_across_orders(
    bench, tmp_path: Path
) -> None:
    out = tmp_path / "m.json"
    args = _sim_args(bench, tmp_path, "--fraction", "1", "--budget", "100%", "--out", out)
    args += ["--corpus", str(bench.corpus), "--corpus-index", str(bench.index)]
    args += ["--queries", str(bench.queries), "--model", MODEL, "--method", "single"]
    calls = CALLS["n"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert CALLS["n"] - calls == report["dropped"] == 5 == report["calls"]  # 3 orders, 5 calls
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and CALLS["n"] - calls == 5  # a rerun replays from the store
    assert json.loads(out.read_text())["points"] == report["points"]
