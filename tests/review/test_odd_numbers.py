"""Odd numbers in review URLs and forms are a 404 or 400 in the one error shape, never a
500: a task number or ``after=`` too large for the store's integers, or not ASCII digits."""

from __future__ import annotations

from fastapi.testclient import TestClient

from docket.review.web import create_app
from docket.store.base import Store
from tests.review.conftest import login
from tests.web.test_odd_values import shape

HUGE = "9" * 30
ENORMOUS = "9" * 5000
JSON = {"Accept": "application/json"}


def test_huge_task_numbers_and_after_values_are_refused_not_crashed(store: Store, tokens) -> None:  # type: ignore[no-untyped-def]
    with TestClient(create_app(store), raise_server_exceptions=False) as client:
        csrf = login(client, tokens["root"])
        for path in (f"/tasks/{HUGE}", f"/tasks/{HUGE}.json", f"/tasks/{ENORMOUS}.json"):
            response = client.get(path, headers=JSON)
            assert response.status_code == 404, (path[:40], response.status_code)
            shape(response)
        for path in ("/queue.json", "/next.json"):
            for value in (HUGE, ENORMOUS, "²", "-1"):
                response = client.get(path, params={"after": value}, headers=JSON)
                assert response.status_code == 400, (path, value[:10], response.text[:200])
                assert "task number" in shape(response)["error"]
        decided = client.post(
            f"/tasks/{HUGE}/decision", data={"label": "1", "csrf_token": csrf}, headers=JSON
        )
        assert decided.status_code == 404
        shape(decided)
        closed = client.post(f"/tasks/{HUGE}/close", data={"csrf_token": csrf}, headers=JSON)
        assert closed.status_code == 404
        assigned = client.post(
            "/admin/assign",
            data={"job": "j", "reviewers": "ann", "per_task": HUGE, "csrf_token": csrf},
            headers=JSON,
        )
        assert assigned.status_code == 400 and "whole number" in shape(assigned)["error"]


def test_a_lone_surrogate_in_a_json_body_is_a_400(store: Store, tokens) -> None:  # type: ignore[no-untyped-def]
    with TestClient(create_app(store), raise_server_exceptions=False) as client:
        csrf = login(client, tokens["ann"])
        body = '{"label": 1, "note": "bad \\ud800", "csrf_token": "' + csrf + '"}'
        headers = {**JSON, "Content-Type": "application/json"}
        response = client.post("/tasks/1/decision", content=body, headers=headers)
        assert response.status_code == 400, response.text[:300]
        assert "surrogate" in shape(response)["error"]
