"""``--trec-eval`` writes trec_eval's own measure names, as scripts reading ``-q`` expect."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from docket.cli.main import main
from docket.ir.per_query import trec_eval_name

IR = Path(__file__).resolve().parents[2] / "examples" / "ir"


@pytest.mark.parametrize(
    ("measure", "expected"),
    [
        ("nDCG@10", "ndcg_cut_10"),
        ("nDCG", "ndcg"),
        ("P@10", "P_10"),
        ("P(rel=2)@5", "P_5"),
        ("AP", "map"),
        ("AP@100", "map_cut_100"),
        ("RR", "recip_rank"),
        ("R@1000", "recall_1000"),
        ("Judged@10", "judged_10"),
        ("Rprec", "Rprec"),
        ("Bpref", "bpref"),
        ("Success@5", "success_5"),
        ("RR@10", "RR@10"),  # no trec_eval form: the ir_measures name stays
        ("nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@10"),
    ],
)
def test_measure_names(measure: str, expected: str) -> None:
    assert trec_eval_name(measure) == expected


def test_the_cli_writes_trec_eval_names(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "q.txt"
    args = ["docket", "eval", "systems", "--qrels", str(IR / "qrels.txt"), "--runs",
            str(IR / "bm25.trec"), "--measures", "nDCG@10,P@10,AP,RR,Judged@10",
            "--trec-eval", str(out)]  # fmt: skip
    monkeypatch.setattr(sys, "argv", args)
    with pytest.raises(SystemExit) as caught:
        main()
    assert not caught.value.code, capsys.readouterr().err
    names = {line.split("\t")[0].strip() for line in out.read_text().splitlines()}
    assert names == {"runid", "ndcg_cut_10", "P_10", "map", "recip_rank", "judged_10"}
