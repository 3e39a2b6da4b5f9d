"""Human samples for prediction-powered intervals: from an audit and from files."""

from __future__ import annotations

from pathlib import Path

import pytest

from docket.audit.draw import AuditedPair as Drawn
from docket.audit.samples import from_audit, read_human_sample
from docket.errors import InputError


def test_an_audit_gives_answered_pairs_with_probabilities_for_the_answered_share():
    pairs = [
        Drawn("q1", "d1", "round1-relevant", 0.1, 0, None, 1, 3),
        Drawn("q1", "d2", "round1-relevant", 0.1, 1, None, 0, 0),
        Drawn("q1", "d3", "round1-relevant", 0.1, 1, None, None, None),  # not answered yet
        Drawn("q2", "d1", "round2-irrelevant", 0.5, 0, None, 0, None),
    ]
    sample = from_audit(pairs, "J")
    assert sample.unanswered == 1 and sample.source == "audit of job J"
    # Binary automatic labels: the human label, not the grade.
    assert sample.grades == {("q1", "d1"): 1, ("q1", "d2"): 0, ("q2", "d1"): 0}
    # Two of three drawn pairs answered in the first stratum: 0.1 * 2/3.
    assert sample.probability[("q1", "d1")] == pytest.approx(0.1 * 2 / 3)
    assert sample.probability[("q2", "d1")] == pytest.approx(0.5)
    assert sample.strata[("q2", "d1")] == "round2-irrelevant"
    assert sample.automatic == {("q1", "d1"): 0, ("q1", "d2"): 1, ("q2", "d1"): 0}


def test_a_graded_job_reads_the_human_grade():
    sample = from_audit([Drawn("q1", "d1", "s", 0.2, 1, 2, 1, 3)], "J")
    assert sample.grades == {("q1", "d1"): 3}
    assert sample.automatic == {("q1", "d1"): 2}


def test_files_with_and_without_inclusion_probabilities(tmp_path: Path):
    qrels = tmp_path / "h.qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    assert read_human_sample(qrels).probability == {}
    tsv = tmp_path / "pi.tsv"
    tsv.write_text("q1\td1\t0.25\tA\nq1\td2\t1\tB\n")
    sample = read_human_sample(qrels, tsv)
    assert sample.probability == {("q1", "d1"): 0.25, ("q1", "d2"): 1.0}
    assert sample.strata == {("q1", "d1"): "A", ("q1", "d2"): "B"}


def test_a_sampled_pair_without_a_probability_is_refused(tmp_path: Path):
    qrels = tmp_path / "h.qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    tsv = tmp_path / "pi.tsv"
    tsv.write_text("q1 d1 0.25\n")
    with pytest.raises(InputError, match=r"pair \(q1, d2\) of the human sample has no inclusion"):
        read_human_sample(qrels, tsv)


def test_a_binary_audit_reads_on_the_completed_qrels_scale():
    """Completed qrels written at --rel-level 2 against a 0/1 audit: with every pair audited
    (a census), P(rel=2)@2 is the human figure exactly, automatic and human labels alike."""
    from docket.audit.systems import evaluate_systems_ppi

    human = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"a": 0, "b": 1, "c": 0}}
    auto = {"q1": {"a": 1, "b": 1, "c": 0}, "q2": {"a": 0, "b": 0, "c": 0}}
    completed = {q: {d: 2 * label for d, label in docs.items()} for q, docs in auto.items()}
    pairs = [
        Drawn(q, d, "all", 1.0, auto[q][d], None, human[q][d], None)
        for q in human
        for d in human[q]
    ]
    runs = {"first": {"q1": ("a", "b"), "q2": ("a", "b")},
            "second": {"q1": ("c", "a"), "q2": ("b", "c")}}  # fmt: skip
    sample = from_audit(pairs, "J")
    report = evaluate_systems_ppi(
        [_run(name, ranking) for name, ranking in runs.items()], completed, sample, ["P(rel=2)@2"]
    )
    estimates = {e.system: e for e in report.systems}
    assert estimates["first"].estimate == pytest.approx(0.5)  # q1: a; q2: b -> 1/2 and 1/2
    assert estimates["second"].estimate == pytest.approx(0.75)  # q1: c, a; q2: b
    assert estimates["first"].naive == pytest.approx(0.5)  # the LLM: q1 a, b; q2 none
    assert estimates["second"].naive == pytest.approx(0.25)
    # One system alone gets its interval (a dataset card may carry one run); no differences.
    alone = evaluate_systems_ppi([_run("first", runs["first"])], completed, sample, ["P(rel=2)@2"])
    assert [e.estimate for e in alone.systems] == [pytest.approx(0.5)] and not alone.pairs


def _run(name: str, ranking: dict[str, tuple[str, ...]]):
    from docket.ir.formats import Run

    return Run(name=name, ranking=ranking)
