"""What reviewers must see: every cited id (invalid ones struck through), no contradictions."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from docket.review.models import Decision
from docket.review.queue import enqueue, record_decision
from docket.store.base import Store
from tests.review.conftest import login
from tests.review.review_helpers import relevance_payload

JSON = {"Accept": "application/json"}


def _engine_payload() -> dict:
    """As runner/escalate.py stores it: valid ids in evidence, the others apart, as numbers."""
    payload = relevance_payload()
    payload["transcript"][0]["evidence"] = ["S1"]
    payload["transcript"][0]["invalid_evidence"] = [12, 0]
    payload["transcript"][3]["evidence"] = ["S2"]
    payload["transcript"][3]["invalid_evidence"] = ["S9"]
    return payload


def test_invalid_citations_reach_the_page_struck_through(
    client: TestClient, store: Store, tokens: dict
) -> None:
    with store.session() as session:
        task_id = enqueue(
            session, job="j", kind="relevance", item_key="q1\td1", payload=_engine_payload()
        ).id
    login(client, tokens["ann"])
    rounds = client.get(f"/tasks/{task_id}.json").json()["relevance"]["rounds"]
    first, last = rounds[0]["turns"][0], rounds[1]["turns"][1]
    assert first["evidence"] == [
        {"id": "S1", "valid": True},
        {"id": "S12", "valid": False},
        {"id": "S0", "valid": False},
    ]
    assert last["evidence"] == [{"id": "S2", "valid": True}, {"id": "S9", "valid": False}]
    html = client.get(f"/tasks/{task_id}").text
    for bad in ("S12", "S0", "S9"):
        assert f'<span class="invalid" title="not a sentence of this chunk">{bad}</span>' in html
    assert '<a href="#S1">S1</a>' in html


@pytest.mark.parametrize(("label", "grade"), [(0, 2), (0, 3), (1, 0)])
def test_contradictory_label_and_grade_are_refused(
    client: TestClient, store: Store, tokens: dict, label: int, grade: int
) -> None:
    with store.session() as session:
        task_id = enqueue(
            session, job="j", kind="relevance", item_key="k", payload=relevance_payload()
        ).id
    csrf = login(client, tokens["ann"])
    data = {"label": str(label), "grade": str(grade), "csrf_token": csrf}
    refused = client.post(f"/tasks/{task_id}/decision", data=data, headers=JSON)
    assert refused.status_code == 400
    assert "contradicts itself" in refused.json()["error"]
    assert "grades 2-3 mean relevant" in refused.json()["hint"]
    page = client.post(f"/tasks/{task_id}/decision", data=data)  # a browser sees the page
    assert page.status_code == 400 and "contradicts itself" in page.text
    with store.session() as session:
        assert session.scalars(select(Decision)).all() == []


@pytest.mark.parametrize(("label", "grade"), [(0, 0), (0, 1), (1, 1), (1, 2), (1, 3), (0, None)])
def test_consistent_pairs_are_accepted(store: Store, tokens: dict, label: int, grade) -> None:  # type: ignore[no-untyped-def]
    with store.session() as session:
        task_id = enqueue(
            session, job="j", kind="relevance", item_key="k", payload=relevance_payload()
        ).id
        assert record_decision(session, task_id, "ann", label, grade).grade == grade


def test_adherence_tasks_are_not_held_to_relevance_grades(store: Store, tokens: dict) -> None:
    payload = {
        "record": {"turn": "hi"},
        "rule": {"id": "R1", "text": "greet"},
        "result": {"status": "fail"},
    }
    with store.session() as session:
        task_id = enqueue(session, job="j", kind="adherence", item_key="a", payload=payload).id
        assert record_decision(session, task_id, "ann", 1, 0).label == 1
