"""Label Studio task JSON: export with the debate, import back, idempotence, bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from docket.errors import InputError
from docket.review.auth import add_reviewer
from docket.review.labelstudio import LABEL_CONFIG, export_labelstudio
from docket.review.labelstudio_import import import_labelstudio
from docket.review.models import Decision, Reviewer, ReviewTask
from docket.review.queue import enqueue, final_labels, record_decision
from docket.store.base import Store, open_store
from tests.review.review_helpers import relevance_payload


def _reviewed(store: Store) -> None:
    with store.session() as session:
        task = enqueue(
            session,
            job="j",
            kind="relevance",
            item_key="q1/d1",
            payload=relevance_payload(gold=1),
            required_reviews=2,
        )
        enqueue(session, job="j", kind="relevance", item_key="q1/d2", payload=relevance_payload())
        record_decision(session, task.id, "ann", 0, note="first look")
        record_decision(session, task.id, "ann", 1, grade=2, note="S1 answers it", seconds=9)
        record_decision(session, task.id, "bob", 1)


def test_export_carries_debate_decisions_and_agent_predictions(store: Store, tokens: dict) -> None:
    _reviewed(store)
    with store.session() as session:
        tasks = export_labelstudio(session, job="j")
    first = tasks[0]
    assert first["data"]["query"] == "what is the boiling point of water"
    assert (
        first["data"]["text"].splitlines()[0]
        == "S1. Water boils at 100 degrees Celsius at sea level."
    )
    assert (
        "Round 2, agent B (arguing irrelevant): irrelevant; evidence S2, S9"
        in first["data"]["debate"]
    )
    assert len(first["data"]["docket"]["decisions"]) == 3  # the full append-only history
    annotations = {a["completed_by"]["email"]: a for a in first["annotations"]}
    assert set(annotations) == {"ann", "bob"}  # latest per reviewer
    ann = annotations["ann"]["result"]
    assert ann[0]["value"]["choices"] == ["relevant"] and ann[1]["value"]["choices"] == ["2"]
    assert ann[2]["value"]["text"] == ["S1 answers it"] and annotations["ann"]["lead_time"] == 9
    predictions = {
        p["model_version"]: p["result"][0]["value"]["choices"] for p in first["predictions"]
    }
    assert predictions == {"agent-A": ["relevant"], "agent-B": ["irrelevant"]}
    assert tasks[1]["annotations"] == []
    for tag in (
        'name="relevance"',
        'value="$text"',
        'value="$debate"',
        'name="grade"',
        'name="note"',
    ):
        assert tag in LABEL_CONFIG


def test_round_trip_into_a_fresh_store_and_reimport_is_idempotent(
    store: Store, tokens: dict, tmp_path: Path
) -> None:
    _reviewed(store)
    path = tmp_path / "ls.json"
    with store.session() as session:
        path.write_text(json.dumps(export_labelstudio(session)))
        before = final_labels(session)
    other = open_store(tmp_path / "other.db")
    with other.session() as session:
        report = import_labelstudio(session, path)
    assert (report["tasks_new"], report["history"], report["decisions"]) == (2, 3, 0)
    assert report["unchanged"] == 2 and report["refused"] == []
    with other.session() as session:
        assert final_labels(session) == before
        again = import_labelstudio(session, path)
        assert (again["tasks_existing"], again["decisions"], again["history"]) == (2, 0, 0)
        assert len(session.scalars(select(Decision)).all()) == 3
    with store.session() as session:  # and back into the original store: nothing new
        assert import_labelstudio(session, path)["decisions"] == 0
    other.close()


def test_import_annotations_made_in_label_studio(store: Store, tmp_path: Path) -> None:
    ls_tasks = [
        {
            "id": 7,
            "data": {"qid": "q9", "query": "capital of France", "docid": "d3", "text": "Paris is."},
            "annotations": [
                {
                    "completed_by": 12,
                    "lead_time": 3.5,
                    "result": [
                        {
                            "from_name": "relevance",
                            "type": "choices",
                            "value": {"choices": ["relevant"]},
                        },
                        {"from_name": "grade", "type": "choices", "value": {"choices": ["3"]}},
                    ],
                },
                {
                    "completed_by": {"email": "eve@example.org"},
                    "result": [
                        {
                            "from_name": "relevance",
                            "type": "choices",
                            "value": {"choices": ["relevant"]},
                        }
                    ],
                },
                {"was_cancelled": True, "result": []},
            ],
        }
    ]
    path = tmp_path / "ls.json"
    path.write_text(json.dumps(ls_tasks))
    with store.session() as session:
        report = import_labelstudio(session, path, job="imported")
        task = session.scalars(select(ReviewTask)).one()
        names = set(session.scalars(select(Reviewer.name)))
        decisions = session.scalars(select(Decision)).all()
    assert report["decisions"] == 1 and report["refused"] == [
        "imported q9/d3 (eve@example.org): task 1 already has its 1 required review(s)"
    ]
    assert (task.job, task.item_key, task.payload["sentences"]) == (
        "imported",
        "q9/d3",
        ["Paris is."],
    )
    assert names == {"ls-user-12", "eve@example.org"}
    assert [(d.label, d.grade, d.seconds, d.source) for d in decisions] == [
        (1, 3, 3.5, "labelstudio")
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"data": {}}', "expected a JSON list"),
        ('[{"data": {"qid": "q", "docid": "d", "text": "t"}}]', "tasks[0].data.query"),
        (
            '[{"data": {"qid": "q", "query": "x", "docid": "d", "text": "t"}, "annotations": '
            '[{"result": [{"from_name": "relevance", "value": {"choices": ["maybe"]}}]}]}]',
            "tasks[0].annotations[0].result",
        ),
        (
            '[{"data": {"qid": "q", "query": "x", "docid": "d", "text": "t"}, "annotations": '
            '[{"completed_by": "<x>", "result": [{"from_name": "relevance", "value": '
            '{"choices": ["relevant"]}}]}]}]',
            "completed_by",
        ),
    ],
)
def test_bad_files_name_the_place_and_write_nothing(
    store: Store, tmp_path: Path, content: str, message: str
) -> None:
    good = {"data": {"qid": "q0", "query": "ok", "docid": "d0", "text": "fine"}}
    path = tmp_path / "bad.json"
    text = content if not content.startswith("[") else json.dumps([good, *json.loads(content)])
    path.write_text(text.replace("tasks[0]", "tasks[1]"))
    expected = message.replace("tasks[0]", "tasks[1]")
    pattern = expected.replace("[", r"\[").replace("]", r"\]")
    with pytest.raises(InputError, match=pattern) as err, store.session() as session:
        import_labelstudio(session, path, job="j")
    assert str(path) in str(err.value)
    with store.session() as session:
        assert session.scalars(select(ReviewTask)).all() == []


def test_history_is_validated_before_anything_stays(store: Store, tmp_path: Path) -> None:
    with store.session() as session:
        add_reviewer(session, "ann")
    task = {
        "data": {
            "docket": {
                "job": "j",
                "kind": "relevance",
                "item_key": "k",
                "payload": relevance_payload(),
                "decisions": [{"reviewer": "ann", "label": 5}],
            }
        }
    }
    path = tmp_path / "h.json"
    path.write_text(json.dumps([task]))
    with pytest.raises(InputError, match="decisions"), store.session() as session:
        import_labelstudio(session, path)
    with store.session() as session:
        assert session.scalars(select(ReviewTask)).all() == []
