"""Label sets against gold: reading every kind of source, the checks, and the statistics.

The statistics are recomputed here by hand or with plain numpy on small data, never
through :mod:`docket.agreement`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from docket.errors import ConfigError, InputError, UserError
from docket.ir.formats import Run
from docket.ir.label_agreement import compare_labels, evaluate_labels, label_agreement
from docket.ir.label_files import LabelSet, Scale, parse_scale, read_label_set
from docket.ir.label_rankings import check_runs, compare_scores, largest_change

GOLD = {("q1", "a"): 0, ("q1", "b"): 1, ("q1", "c"): 2, ("q1", "d"): 3,
        ("q2", "a"): 0, ("q2", "b"): 0, ("q2", "c"): 3, ("q2", "d"): 2}  # fmt: skip
LABELS = {("q1", "a"): 0, ("q1", "b"): 2, ("q1", "c"): 2, ("q1", "d"): 3,
          ("q2", "a"): 1, ("q2", "b"): 0, ("q2", "c"): 2,  # q2 d missing
          ("q3", "x"): 1}  # not in gold  # fmt: skip


def _qrels(path: Path, labels: dict) -> Path:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in labels.items()))
    return path


def _kappa(table: np.ndarray) -> float:
    p = table / table.sum()
    p_o, p_e = np.trace(p), p.sum(axis=1) @ p.sum(axis=0)
    return float((p_o - p_e) / (1 - p_e))


def test_statistics_by_hand(tmp_path: Path) -> None:
    gold = read_label_set(_qrels(tmp_path / "gold.txt", GOLD))
    labels = read_label_set(_qrels(tmp_path / "llm.qrels", LABELS))
    result = label_agreement(gold, labels, rel_level=2)
    assert (result.name, result.joined, result.gold_pairs, result.label_pairs) == ("llm", 7, 8, 8)
    assert (result.gold_coverage, result.label_coverage) == (7 / 8, 7 / 8)
    # Joined pairs (gold, label): (0,0) (1,2) (2,2) (3,3) (0,1) (0,0) (3,2).
    table = np.zeros((4, 4))
    for g, x in [(0, 0), (1, 2), (2, 2), (3, 3), (0, 1), (0, 0), (3, 2)]:
        table[g, x] += 1
    assert result.confusion == table.astype(int).tolist()
    assert result.kappa == pytest.approx(_kappa(table))
    for t in (1, 2, 3):
        binary = np.array([[table[:t, :t].sum(), table[:t, t:].sum()],
                           [table[t:, :t].sum(), table[t:, t:].sum()]])  # fmt: skip
        assert result.binary_kappa[t] == pytest.approx(_kappa(binary))
    # At >= 2: gold irrelevant (0,0) (1,2) (0,1) (0,0) -> 3 of 4 right; relevant 3 of 3.
    assert (result.recall_irrelevant, result.recall_relevant) == (0.75, 1.0)
    assert result.balanced_accuracy == pytest.approx(0.875)
    assert result.headline == result.binary_kappa[2]


def test_per_query_kappa(tmp_path: Path) -> None:
    gold = read_label_set(_qrels(tmp_path / "gold.txt", GOLD))
    labels = read_label_set(_qrels(tmp_path / "llm.txt", LABELS))
    rows = label_agreement(gold, labels, per_query=True).per_query
    assert [(r.qid, r.pairs) for r in rows] == [("q1", 4), ("q2", 3)]
    # q1: (0,0) (1,2) (2,2) (3,3): p_o = 3/4, p_e = (1*1 + 1*0 + 1*2 + 1*1) / 16 = 1/4
    assert rows[0].kappa == pytest.approx((3 / 4 - 1 / 4) / (3 / 4))


def test_jsonl_export_rows_and_undecided_pairs(tmp_path: Path) -> None:
    path = tmp_path / "judged.jsonl"
    rows = [
        {"qid": "q1", "docid": "a", "relevance": 2, "grade": 2, "label": 1},
        {"qid": "q1", "docid": "b", "relevance": None, "grade": None, "label": None},
        {"qid": "q1", "docid": "c", "grade": 1.0},
        {"qid": "q1", "docid": "d", "label": True},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = read_label_set(path)
    assert labels.labels == {("q1", "a"): 2, ("q1", "c"): 1, ("q1", "d"): 1}
    assert labels.undecided == 1


def test_bad_lines_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 0 a 1\nq1 0 b high\n")
    with pytest.raises(InputError, match=r"bad.txt:2: field 'grade': label 'high'"):
        read_label_set(bad)
    bad.write_text('{"qid": "q1", "docid": "a", "grade": 1.5}\n')
    with pytest.raises(InputError, match=r"bad.txt:1: field 'grade': label 1.5"):
        read_label_set(bad)
    bad.write_text("q1 0 a\n")
    with pytest.raises(InputError, match="expected 4 columns"):
        read_label_set(bad)


def test_duplicates_refused_only_when_they_disagree(tmp_path: Path) -> None:
    path = tmp_path / "dup.txt"
    path.write_text("q1 0 a 1\nq1 0 a 1\nq1 0 b 0\nq1 0 b 2\nq1 0 c 1\nq1 0 c 3\n")
    with pytest.raises(InputError) as caught:
        read_label_set(path)
    message = str(caught.value)
    assert "dup.txt:4: field 'grade': 2 duplicate lines" in message
    assert "(q1, b) labelled 0, then 2" in message
    path.write_text("q1 0 a 1\nq1 0 a 1\n")
    assert read_label_set(path).labels == {("q1", "a"): 1}


def test_out_of_scale_refused_or_clipped(tmp_path: Path) -> None:
    path = _qrels(tmp_path / "wide.txt", {("q1", "a"): 0, ("q1", "b"): 5, ("q1", "c"): -1})
    with pytest.raises(InputError) as caught:
        read_label_set(path)
    assert "wide.txt:2: field 'grade': 2 labels are outside the scale 0..3" in str(caught.value)
    assert "--clip 0:3" in caught.value.one_line()
    clipped = read_label_set(path, parse_scale("0:3", clip=True))
    assert clipped.labels == {("q1", "a"): 0, ("q1", "b"): 3, ("q1", "c"): 0}
    assert clipped.clipped == 2
    assert read_label_set(path, Scale(-1, 5)).labels[("q1", "b")] == 5


def test_scale_option_parsing() -> None:
    assert parse_scale("0:4") == Scale(0, 4)
    for bad in ("3", "a:b", "3:1"):
        with pytest.raises(ConfigError):
            parse_scale(bad)


def test_no_pair_in_common_gives_both_sizes(tmp_path: Path) -> None:
    gold = read_label_set(_qrels(tmp_path / "gold.txt", GOLD))
    other = read_label_set(_qrels(tmp_path / "other.txt", {("q9", "z"): 1, ("q9", "y"): 0}))
    with pytest.raises(UserError) as caught:
        label_agreement(gold, other)
    message = str(caught.value)
    assert "other.txt: no (qid, docid) pair in common" in message
    assert "2 pairs over 1 queries" in message and "gold 8 pairs over 2 queries" in message


def test_rel_level_must_be_a_threshold(tmp_path: Path) -> None:
    gold = read_label_set(_qrels(tmp_path / "gold.txt", GOLD))
    with pytest.raises(ConfigError, match="not a threshold"):
        compare_labels(gold, [gold], rel_level=4)


def test_report_sorted_by_headline_and_names_made_unique(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    gold = _qrels(tmp_path / "gold.txt", GOLD)
    worse = {k: (3 - v if k[0] == "q1" else v) for k, v in GOLD.items()}
    report = evaluate_labels(
        gold, [_qrels(tmp_path / "a" / "x.txt", worse), _qrels(tmp_path / "b" / "x.txt", GOLD)]
    )
    assert [r.source for r in report.results] == [str(tmp_path / "b" / "x.txt"),
                                                   str(tmp_path / "a" / "x.txt")]  # fmt: skip
    assert report.results[0].headline == pytest.approx(1.0)
    assert report.results[0].name == str(tmp_path / "b" / "x.txt")


def test_unknown_measure_fails_before_reading(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="unknown measure 'nDCG@ten'"):
        evaluate_labels(tmp_path / "missing.txt", ["also-missing"], measure="nDCG@ten")


def test_rankings_compare_scores() -> None:
    gold = {"A": 0.5, "B": 0.4, "C": 0.3, "D": 0.2}
    labels = {"A": 0.5, "B": 0.1, "C": 0.3, "D": 0.2}  # B drops from 2 to 4
    ranking = compare_scores("x", "nDCG@10", 3, gold, labels)
    assert ranking.largest_change.model_dump() == {"system": "B", "gold_rank": 2, "label_rank": 4}
    assert ranking.changed == 3
    # Pairs: (A,B) (A,C) (A,D) (C,D) concordant, (B,C) (B,D) discordant -> (4 - 2) / 6
    assert ranking.tau == pytest.approx(1 / 3)
    # Spearman: ranks (1,2,3,4) vs (1,4,2,3): d^2 = 0+4+1+1 -> 1 - 6*6/60 = 0.4
    assert ranking.rho == pytest.approx(0.4)
    assert largest_change({"A": 1}, {"A": 1}) is None


def test_runs_without_a_gold_query_are_refused() -> None:
    run = Run("elsewhere", {"q7": ("a",), "q8": ("b",)}, path="runs/elsewhere.txt")
    with pytest.raises(UserError, match=r"runs/elsewhere.txt: the run answers none of the 2 gold"):
        check_runs({"q1": {"a": 1}, "q2": {"a": 0}}, [run])


def test_label_set_as_qrels() -> None:
    labels = LabelSet("x", "x", {("q1", "a"): 2, ("q1", "b"): 0, ("q2", "a"): 1})
    assert labels.qrels() == {"q1": {"a": 2, "b": 0}, "q2": {"a": 1}}
