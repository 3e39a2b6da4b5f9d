"""The Label Studio ML backend's five endpoints, fed the request bodies Label Studio sends.

Bodies are the ones Label Studio 1.23.2 sent on loopback (tests/adherence/data/labelstudio):
setup, batch and interactive predict, the annotation webhooks. Credentials come first:
a stranger's body is never read; Label Studio's Basic auth carries the token.
"""

from __future__ import annotations

import json

import anyio
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from docket.adherence.labelstudio import Mapping
from docket.adherence.models import VerificationRun
from docket.cli.main import app as cli
from docket.store.base import Store
from tests.adherence.labelstudio_helpers import BASIC, BEARER, backend, recorded


@pytest.fixture
def client(store: Store) -> TestClient:
    return TestClient(backend(store))


def test_health_root_and_metrics_answer_without_a_token(client: TestClient) -> None:
    assert client.get("/health").json()["status"] == "UP"
    assert client.get("/").json()["status"] == "UP"
    assert client.get("/metrics").json() == {}


def test_setup_with_labelstudios_basic_auth_names_the_model_version(client: TestClient) -> None:
    answer = client.post("/setup", json=recorded("setup"), headers=BASIC)
    assert answer.status_code == 200, answer.text
    assert answer.json()["model_version"].startswith("docket-ls-dialogue-")


def test_setup_refuses_a_config_missing_a_mapped_field_in_one_line(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    mapping = Mapping.model_validate(
        {"turn": {"control": "answer"}, "dialogue": {"data": "dialogue"}}
    )
    answer = TestClient(backend(store, mapping)).post(
        "/setup", json=recorded("setup"), headers=BASIC
    )
    assert answer.status_code == 400
    error = answer.json()
    assert "no TextArea 'answer'" in error["error"] and "turn.control" in error["error"]
    assert "\n" not in error["error"] and error["hint"]
    assert any(
        "no TextArea 'answer'" in r.getMessage() for r in caplog.records
    )  # the operator sees it


def test_setup_refuses_a_config_without_the_feedback_textarea(client: TestClient) -> None:
    body = recorded("setup")
    body["schema"] = body["schema"].replace('<TextArea name="docket"', '<TextArea name="other"')
    answer = client.post("/setup", json=body, headers=BASIC)
    assert answer.status_code == 400 and "TextArea 'docket'" in answer.json()["error"]


def _texts(prediction: dict) -> dict[str, str]:
    return {
        text.split("]")[0][1:]: text
        for region in prediction["result"]
        for text in region["value"]["text"]
    }


def test_batch_predict_flags_the_tasks_violations_as_read_only_regions(client: TestClient) -> None:
    answer = client.post("/predict", json=recorded("predict"), headers=BASIC)
    assert answer.status_code == 200, answer.text
    (prediction,) = answer.json()["results"]
    assert set(_texts(prediction)) == {"URL", "LEN"}  # www.example.com; 2 of 4-12 turns
    (region,) = prediction["result"]  # one feedback TextArea, one text per flagged rule
    assert (region["from_name"], region["to_name"], region["type"]) == (
        "docket",
        "chat",
        "textarea",
    )
    assert region["readonly"] is True
    url = _texts(prediction)["URL"]
    assert "No turn contains a URL." in url and "Why:" in url and "Fix:" in url
    assert prediction["score"] == 0.5  # WORDS and BOT pass, URL and LEN fail
    assert prediction["model_version"] == answer.json()["model_version"]


def test_interactive_predict_checks_the_annotators_answer_as_the_new_turn(
    client: TestClient,
) -> None:
    answer = client.post("/predict", json=recorded("predict_interactive"), headers=BASIC)
    (prediction,) = answer.json()["results"]
    texts = _texts(prediction)
    assert set(texts) == {"URL", "BOT"}  # the answer: "I am a bot, visit http://x.com"
    assert "http://x.com" in texts["URL"] and "bot" in texts["BOT"].lower()
    # LEN is not_yet at turn three (later turns can bring it to four): left out, not scored.
    assert prediction["score"] == pytest.approx(1 / 3)


def test_the_8065_shape_puts_flags_on_the_annotators_region(client: TestClient) -> None:
    body = recorded("predict_interactive")
    answer = client.post("/predict?shape=errors", json=body, headers=BASIC)
    assert answer.status_code == 200, answer.text
    (errors,) = answer.json()["results"]
    assert errors["global-errors"] == []
    assert list(errors["per-result-errors"]) == ["abc123"]  # the response TextArea's region
    assert len(errors["per-result-errors"]["abc123"]) == 2
    batch = client.post("/predict?shape=errors", json=recorded("predict"), headers=BASIC).json()
    assert (
        len(batch["results"][0]["global-errors"]) == 2
        and not batch["results"][0]["per-result-errors"]
    )


def _runs(store: Store) -> list[VerificationRun]:
    with store.session() as session:
        return list(session.query(VerificationRun).order_by(VerificationRun.created_at))


def test_the_webhook_saves_verdicts_that_verify_stats_reports_per_annotator(
    client: TestClient, store: Store, db_url: str
) -> None:
    created = client.post("/webhook", json=recorded("webhook_created"), headers=BEARER)
    assert created.status_code == 200 and created.json()["status"] == "queued"
    updated = client.post("/webhook", json=recorded("webhook_updated"), headers=BEARER)
    assert updated.json()["record_id"] == created.json()["record_id"] == "ls-1-task-1-annotation-1"
    runs = _runs(store)
    assert [(r.source, r.annotator, r.status) for r in runs] == [
        ("labelstudio", "ls-user-1", "fail"),
        ("labelstudio", "ls-user-1", "not_yet"),  # fixed; only the turn count is still open
    ]
    stats = CliRunner().invoke(cli, ["verify", "stats", "--db", db_url, "--json"])
    assert stats.exit_code == 0, stats.output
    people = json.loads(stats.output)["flags_by_annotator"]
    assert [(p["key"], p["flags"], p["flagged_items"], p["fixed"]) for p in people] == [
        ("ls-user-1", 2, 2, 2)
    ]


def test_the_webhook_ignores_other_events_and_skipped_tasks(
    client: TestClient, store: Store
) -> None:
    body = recorded("webhook_created")
    assert (
        client.post("/webhook", json={**body, "action": "PROJECT_UPDATED"}, headers=BEARER).json()[
            "status"
        ]
        == "ignored"
    )
    body["annotation"]["was_cancelled"] = True
    assert client.post("/webhook", json=body, headers=BEARER).json()["status"] == "ignored"
    assert _runs(store) == []


@pytest.mark.parametrize("path", ["/setup", "/predict", "/webhook", "/login"])
def test_a_stranger_without_the_token_is_refused_before_the_body_is_read(
    store: Store, path: str
) -> None:
    app, reads, sent = backend(store), [], []

    async def receive():  # type: ignore[no-untyped-def]
        reads.append(1)
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message) -> None:  # type: ignore[no-untyped-def]
        sent.append(message)

    for auth in ([], [(b"authorization", b"Basic bHM6d3Jvbmc=")]):  # none; ls:wrong
        scope = {
            "type": "http", "method": "POST", "path": path, "raw_path": path.encode(),
            "query_string": b"", "root_path": "", "scheme": "http", "http_version": "1.1",
            "server": ("127.0.0.1", 9090), "client": ("127.0.0.1", 5000),
            "headers": [(b"host", b"127.0.0.1:9090"), (b"content-type", b"application/json"),
                        (b"content-length", b"2"), *auth],
        }  # fmt: skip
        anyio.run(app, scope, receive, send)
        assert sent[0]["status"] == 401 and reads == []
        sent.clear()


def test_a_body_over_the_limit_is_refused_with_413(store: Store) -> None:
    small = TestClient(backend(store, max_body_bytes=1_000))
    answer = small.post("/predict", json=recorded("predict_interactive"), headers=BASIC)
    assert answer.status_code == 413 and answer.json()["error"]


def test_a_task_without_data_is_one_clear_refusal(client: TestClient) -> None:
    body = recorded("predict")
    del body["tasks"][0]["data"]
    answer = client.post("/predict", json=body, headers=BASIC)
    assert (
        answer.status_code == 400
        and answer.json()["error"] == "field 'tasks': task 1 has no 'data' object"
    )
