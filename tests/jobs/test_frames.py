"""Results that round-trip into pandas: the input's id types are kept, and the method
comparison and evaluation reports have ``to_pandas()`` too."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from docket.ir.evaluate import compare_systems
from docket.ir.formats import read_qrels, read_run
from docket.jobs import JobSpec, compare_methods, run_job
from docket.llm.fake import register_fake
from tests.jobs.fakes import Counting

IR = Path(__file__).resolve().parents[2] / "examples" / "ir"


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "qid": [101, 101, 102, 102],
            "query": ["soft egg", "soft egg", "green tea", "green tea"],
            "docid": [7, 8, 9, 10],
            "text": ["Boil it.", "Tea.", "Steep it.", "Eggs."],
            "label": [1, 0, 1, 0],
        }
    )


def _spec(tmp_path: Path, name: str, **values) -> JobSpec:  # type: ignore[no-untyped-def]
    model = register_fake(name, Counting())
    return JobSpec.of(model=model, db=str(tmp_path / "f.db"), cache="off", **values)


def test_to_pandas_keeps_integer_ids_so_a_merge_works(tmp_path: Path) -> None:
    frame = _frame()
    run = run_job(frame, _spec(tmp_path, "frames-int", method="single"), job="ints")
    table = run.to_pandas()
    assert table["qid"].dtype == frame["qid"].dtype and table["docid"].dtype == frame["docid"].dtype
    merged = frame.merge(table[["qid", "docid", "label"]], on=["qid", "docid"], suffixes=("", "_j"))
    assert len(merged) == 4 and set(merged["label_j"]) == {1}


def test_text_ids_stay_text(tmp_path: Path) -> None:
    frame = _frame().astype({"qid": str, "docid": str})
    table = run_job(frame, _spec(tmp_path, "frames-str", method="single"), job="text").to_pandas()
    assert table["qid"].tolist() == ["101", "101", "102", "102"]


def test_a_method_comparison_to_pandas(tmp_path: Path) -> None:
    comparison = compare_methods(_frame(), ["single", "dream"], _spec(tmp_path, "frames-cmp"),
                                 dream_rounds=(1,))  # fmt: skip
    methods = comparison.to_pandas()
    assert set(methods["method"]) == set(comparison.report.metrics) and len(methods) >= 2
    assert "balanced_accuracy" in methods.columns
    pairs = comparison.to_pandas(pairs=True)
    assert set(pairs["run"]) == set(comparison.runs) and pairs["qid"].dtype.kind == "i"
    curves = comparison.report.to_pandas(curves=True)
    assert {"method", "setting", "escalation_rate"} <= set(curves.columns)


def test_a_systems_report_to_pandas() -> None:
    report = compare_systems([read_run(IR / "bm25.trec")], read_qrels(IR / "qrels.txt"))
    table = report.to_pandas()
    assert list(table.columns) == ["variant", "system", "measure", "value", "rank"]
    assert set(table["measure"]) == set(report.measures) and "original" in set(table["variant"])
    assert (table[table.variant == "original"]["rank"] == 1).all()


def test_a_labels_report_to_pandas() -> None:
    from docket.ir.label_agreement import compare_labels
    from docket.ir.label_files import read_label_set

    gold = read_label_set(IR / "qrels.txt")
    report = compare_labels(gold, [read_label_set(IR / "qrels.txt")])
    table = report.to_pandas()
    assert len(table) == 1 and table.loc[0, "joined"] == table.loc[0, "gold_pairs"]
    assert "binary_kappa.1" in table.columns and "confusion" not in table.columns


def test_a_hole_fill_to_pandas(tmp_path: Path) -> None:
    from docket.holes import fill_holes
    from docket.ir.documents import Document
    from docket.ir.formats import Run
    from tests.helpers_judges import KeywordJudge

    class Corpus:
        def get_many(self, docids):  # type: ignore[no-untyped-def]
            return {d: Document(d, "zebra" if "g" in d else "horse") for d in docids}

    runs = [Run("good", {"q1": ("g1", "g2", "judged")})]
    filled = fill_holes({"q1": {"judged": 0}}, runs, {"q1": "zebra food"}, Corpus(),
                        JobSpec.of(db=str(tmp_path / "h.db")), depth=3,
                        judge=KeywordJudge())  # fmt: skip
    table = filled.to_pandas()
    assert table[["docid", "source"]].values.tolist()[0] == ["judged", "original"]
    new = table[table.source != "original"]
    assert sorted(new.docid) == ["g1", "g2"] and set(new.relevance) == {1}
    assert {"qid", "docid", "relevance", "label", "source", "rounds"} <= set(table.columns)
