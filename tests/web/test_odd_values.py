"""Authenticated requests with odd text get a 4xx in the one error shape, never a 500:
a lone surrogate in a submission or in feedback (the verify API: the run is refused, and
the next good one is saved). Odd numbers in review URLs: tests/review/test_odd_numbers.py.
"""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from docket.adherence.verify import Verifier, VerifierConfig
from docket.adherence.web.api import create_app as verify_app
from docket.store.adherence_tables import VerificationRun
from docket.store.base import Store
from tests.adherence.verify_helpers import ruleset, slow_model


def shape(response) -> dict:  # type: ignore[no-untyped-def]
    body = response.json()
    assert set(body) == {"error", "hint"} and body["hint"], body
    return body


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
            assert "surrogate" in shape(refused)["error"]
        assert _runs(store) == 0
        feedback = client.post(
            "/v1/feedback",
            content='{"result_id": "x", "action": "dismissed", "reason": "\\udfff"}',
            headers=AUTH,
        )
        assert feedback.status_code == 422 and "surrogate" in shape(feedback)["error"]
        saved = client.post("/v1/verify", content=good, headers=AUTH)
        assert saved.status_code == 200, saved.text
    assert _runs(store) == 1
