"""Metrics on a hand-computed case, and reading pairs and human labels."""

from __future__ import annotations

import json

import pytest

from docket.errors import InputError
from docket.relevance import Judgment, class_recalls, compute_metrics, read_labels, read_pairs


def test_class_recalls_hand_computed():
    r = class_recalls([1, 1, 0, 1, 0, 0], [1, 1, 1, 0, 0, 0])
    assert (r.relevant_recall, r.irrelevant_recall) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert r.balanced_accuracy == pytest.approx(2 / 3) and r.accuracy == pytest.approx(4 / 6)
    only_relevant = class_recalls([1, 0], [1, 1])
    assert only_relevant.irrelevant_recall is None and only_relevant.balanced_accuracy is None


def j(docid, label, decided_by, calls=1, tokens=10, **kw):
    usage = {"calls": calls, "prompt_tokens": tokens, "completion_tokens": 2}
    return Judgment("q", docid, "dream", label, decided_by, usage=usage, **kw)


def test_compute_metrics_hand_computed():
    gold = {("q", d): g for d, g in zip("abcdefgh", [1, 1, 1, 1, 0, 0, 0, 0], strict=True)}
    judgments = [
        j("a", 1, "consensus"),
        j("b", 1, "consensus"),
        j("c", 0, "consensus", parse_failures=1),  # wrong
        j("d", None, "escalated", calls=4),  # human (gold) -> 1
        j("e", 1, "consensus"),  # wrong
        j("f", 0, "adjudicator", calls=5, invalid_evidence=2),
        j("g", None, "escalated", calls=4),  # human (gold) -> 0
        j("h", 0, "consensus"),
    ]
    m = compute_metrics("dream", judgments, gold)
    # final labels: a1 b1 c0 d1 | e1 f0 g0 h0 -> relevant 3/4, irrelevant 3/4
    assert m.relevant_recall == 0.75 and m.irrelevant_recall == 0.75 and m.balanced_accuracy == 0.75
    assert m.escalation_rate == 0.25 and m.escalated == 2
    assert m.automatic_pairs == 6 and m.automatic_accuracy == pytest.approx(4 / 6)
    assert m.calls_per_pair == pytest.approx(18 / 8)
    assert m.tokens_per_pair == pytest.approx(12.0)
    assert (m.parse_failures, m.invalid_evidence, m.unresolved) == (1, 2, 0)
    # supplied human decisions instead of gold: d wrongly 0, g missing -> unresolved
    h = compute_metrics("dream", judgments, gold, humans={("q", "d"): 0})
    assert h.relevant_recall == 0.5 and h.irrelevant_recall == pytest.approx(2 / 3)
    assert h.unresolved == 1 and h.escalation_rate == 0.25


def write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def row(**kw):
    base = {"qid": "1", "query": "q one", "docid": "d1", "text": "Some text."}
    return json.dumps({**base, **kw})


def test_read_pairs_jsonl_passage_grade_and_duplicates(tmp_path):
    path = write(
        tmp_path,
        "p.jsonl",
        [
            row(label=1),
            "",
            json.dumps({"qid": 2, "query": "q2", "docid": "d2", "passage": "P.", "grade": 2}),
            row(label=1),  # identical duplicate
            json.dumps(
                {"qid": "3", "query": "q3", "docid": "d3", "text": "T.", "grade": 1, "label": 0}
            ),
        ],
    )
    pairs = read_pairs(path)
    assert [(p.qid, p.docid, p.text, p.label, p.grade) for p in pairs] == [
        ("1", "d1", "Some text.", 1, None),
        ("2", "d2", "P.", 1, 2),
        ("3", "d3", "T.", 0, 1),
    ]
    assert pairs.duplicates == 1 and isinstance(pairs, list)


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        (row(query="  "), "query", "empty"),
        (row(text=""), "text", "empty"),
        (json.dumps({"qid": "1", "query": "q", "docid": "d"}), "text", "missing"),
        (row(label=2), "label", "not a binary label"),
        (row(label="yes"), "label", "not a binary label"),
        (row(grade="high"), "grade", "not a grade"),
        ('{"qid": "1", "query"', None, "not valid JSON"),
        ("[1, 2]", None, "expected a JSON object"),
        (row(docid="d1", text="Other text.", label=1), "docid", "repeats line 1"),
    ],
)
def test_read_pairs_errors_name_file_line_field(tmp_path, line, field, message):
    path = write(tmp_path, "bad.jsonl", [row(label=1), line])
    with pytest.raises(InputError, match=message) as info:
        read_pairs(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 2, field)
    assert f"{path}:2" in str(info.value)


def test_read_pairs_tsv_and_its_errors(tmp_path):
    path = write(
        tmp_path,
        "p.tsv",
        ["qid\tquery\tdocid\ttext\tlabel", "1\tq\td1\tA text.\t0", "2\tq2\td2\tB.\t"],
    )
    pairs = read_pairs(path)
    assert [(p.qid, p.label) for p in pairs] == [("1", 0), ("2", None)]
    no_header = write(tmp_path, "n.tsv", ["1\tq\td1\tA text.", "2\tq\td2\tB."])
    with pytest.raises(InputError, match="header") as info:
        read_pairs(no_header)
    assert info.value.line == 1
    short = write(tmp_path, "s.tsv", ["qid\tquery\tdocid\tpassage", "1\tq\td1"])
    with pytest.raises(InputError, match="4 tab-separated columns") as info:
        read_pairs(short)
    assert info.value.line == 2
    with pytest.raises(InputError, match="file not found"):
        read_pairs(tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="no pairs"):
        read_pairs(write(tmp_path, "empty.jsonl", [""]))


def test_read_labels(tmp_path):
    path = write(tmp_path, "h.jsonl", [json.dumps({"qid": "1", "docid": "d1", "label": 1})])
    assert read_labels(path) == {("1", "d1"): 1}
    bad = write(tmp_path, "h2.tsv", ["qid\tdocid\tlabel", "1\td1\t3"])
    with pytest.raises(InputError, match="binary"):
        read_labels(bad)
