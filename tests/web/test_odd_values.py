"""Authenticated requests with odd values get a 4xx in the one error shape, never a 500.

A task number or ``after=`` too large for the store's integers (the review app), a lone
surrogate in a submission or in feedback (the verify API: the run is refused, and the
next good one is saved).
"""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from docket.adherence.verify import Verifier, VerifierConfig
from docket.adherence.web.api import create_app as verify_app
from docket.review.web import create_app as review_app
from docket.store.adherence_tables import VerificationRun
from docket.store.base import Store
from tests.adherence.verify_helpers import ruleset, slow_model
from tests.review.conftest import login

HUGE = "9" * 30
ENORMOUS = "9" * 5000
JSON = {"Accept": "application/json"}


def _shape(response) -> dict:  # type: ignore[no-untyped-def]
    body = response.json()
    assert set(body) == {"error", "hint"} and body["hint"], body
    return body


def test_huge_task_numbers_and_after_values_are_refused_not_crashed(store: Store, tokens) -> None:  # type: ignore[no-untyped-def]
    with TestClient(review_app(store), raise_server_exceptions=False) as client:
        csrf = login(client, tokens["root"])
        for path in (f"/tasks/{HUGE}", f"/tasks/{HUGE}.json", f"/tasks/{ENORMOUS}.json"):
            response = client.get(path, headers=JSON)
            assert response.status_code == 404, (path[:40], response.status_code)
            _shape(response)
        for path in ("/queue.json", "/next.json"):
            for value in (HUGE, ENORMOUS, "²", "-1"):
                response = client.get(path, params={"after": value}, headers=JSON)
                assert response.status_code == 400, (path, value[:10], response.text[:200])
                assert "task number" in _shape(response)["error"]
        decided = client.post(
            f"/tasks/{HUGE}/decision", data={"label": "1", "csrf_token": csrf}, headers=JSON
        )
        assert decided.status_code == 404
        _shape(decided)
        closed = client.post(f"/tasks/{HUGE}/close", data={"csrf_token": csrf}, headers=JSON)
        assert closed.status_code == 404
        assigned = client.post(
            "/admin/assign",
            data={"job": "j", "reviewers": "ann", "per_task": HUGE, "csrf_token": csrf},
            headers=JSON,
        )
        assert assigned.status_code == 400 and "whole number" in _shape(assigned)["error"]


TOKEN = "odd-values-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


def _verifier() -> Verifier:
    return Verifier(
        ruleset(),
        sim_model=slow_model("odd-sim", 0.0, "PASS"),
        sub_model=slow_model("odd-sub", 0.0, "REASONING: ok.\nVERDICT: PASS"),
        config=VerifierConfig(timeout_s=10),
    )


def _runs(store: Store) -> int:
    with store.session() as session:
        return session.scalar(select(func.count()).select_from(VerificationRun))


def test_a_lone_surrogate_sent_to_verify_is_refused_and_the_next_run_is_saved(store: Store) -> None:
    app = verify_app(_verifier(), store=store, tokens={TOKEN: "ann"})
    bad = '{"record": {"id": "d1", "turns": [{"role": "user", "text": "hi \\ud800"}]}}'
    good = json.dumps({"record": {"id": "d2", "turns": [{"role": "user", "text": "hi"}]}})
    with TestClient(app, raise_server_exceptions=False) as client:
        for path in ("/v1/verify", "/v1/verify/stream"):
            refused = client.post(path, content=bad, headers=AUTH)
            assert refused.status_code == 422, (path, refused.status_code, refused.text[:300])
            assert "surrogate" in _shape(refused)["error"]
        assert _runs(store) == 0
        feedback = client.post(
            "/v1/feedback",
            content='{"result_id": "x", "action": "dismissed", "reason": "\\udfff"}',
            headers=AUTH,
        )
        assert feedback.status_code == 422 and "surrogate" in _shape(feedback)["error"]
        saved = client.post("/v1/verify", content=good, headers=AUTH)
        assert saved.status_code == 200, saved.text
    assert _runs(store) == 1
