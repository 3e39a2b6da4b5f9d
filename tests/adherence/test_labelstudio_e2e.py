"""End to end with the real Label Studio 1.23.2 on loopback and docket's backend.

A project with a dialogue template connects docket's backend (Basic auth, the token as the
password); its tasks get predictions through Label Studio's own API, with the violated
fmt rules as feedback regions; the annotator's interactive request is checked as the new
turn; an annotation and its update reach the webhook, and ``docket verify stats`` counts
the flags and the fix. Label Studio comes from its own virtualenv (``make labelstudio``):
without it the test is skipped, except in CI (``CI=true``), where that is a failure.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from docket.adherence.models import VerificationRun
from docket.cli.main import app as cli
from docket.store.base import Store
from tests.adherence.labelstudio_helpers import TOKEN, backend
from tests.browser_support import serve
from tests.labelstudio_support import LS_STAMP, LabelStudio, label_studio

pytestmark = pytest.mark.slow

CONFIG = """<View>
  <Paragraphs name="chat" value="$dialogue" layout="dialogue" nameKey="author" textKey="text"/>
  <Header value="Write the assistant's next turn"/>
  <TextArea name="response" toName="chat" rows="3" editable="true" maxSubmissions="1"/>
  <Header value="docket's feedback"/>
  <TextArea name="docket" toName="chat" editable="false"/>
</View>"""
TASKS = [
    {"dialogue": [
        {"author": "user", "text": "Where can I book? I saw www.example.com"},
        {"author": "assistant", "text": "Right here, where to?"},
    ]},
    {"dialogue": [
        {"author": "user", "text": "I need a train to Leeds"},
        {"author": "assistant", "text": "Which day?"},
        {"author": "user", "text": "Friday morning"},
        {"author": "assistant", "text": "The 8:10 has seats."},
    ]},
]  # fmt: skip


def _answer(text: str) -> list[dict[str, Any]]:
    value = {"text": [text]}
    return [
        {
            "id": "ans1",
            "from_name": "response",
            "to_name": "chat",
            "type": "textarea",
            "value": value,
        }
    ]


def _flagged(prediction: dict[str, Any]) -> set[str]:
    texts = [text for region in prediction["result"] for text in region["value"]["text"]]
    return {text.split("]")[0][1:] for text in texts}


def _wait_for_runs(store: Store, count: int, timeout_s: float = 30) -> list[VerificationRun]:
    deadline = time.monotonic() + timeout_s
    while True:
        with store.session() as session:
            runs = list(session.query(VerificationRun).order_by(VerificationRun.created_at))
        if len([r for r in runs if r.status != "running"]) >= count or time.monotonic() > deadline:
            return runs
        time.sleep(0.2)


def connect(ls: LabelStudio, backend_url: str) -> tuple[int, int, list[int]]:
    """Create the project, import the tasks, connect docket: (project, backend, task ids)."""
    project = ls.api.post("/api/projects", json={"title": "docket e2e", "label_config": CONFIG})
    assert project.status_code == 201, project.text
    pid = project.json()["id"]
    assert ls.api.post(f"/api/projects/{pid}/import", json=TASKS).status_code == 201
    model = ls.api.post(
        "/api/ml",
        json={
            "url": backend_url, "project": pid, "title": "docket", "is_interactive": True,
            "auth_method": "BASIC_AUTH", "basic_auth_user": "labelstudio", "basic_auth_pass": TOKEN,
        },
    )  # fmt: skip
    assert model.status_code == 201 and model.json()["readable_state"] == "Connected", model.text
    # The webhook Label Studio made for the backend carries no credentials: add the token.
    (hook,) = ls.api.get("/api/webhooks", params={"project": pid}).json()
    headers = {"headers": {"Authorization": f"Bearer {TOKEN}"}}
    assert ls.api.patch(f"/api/webhooks/{hook['id']}", json=headers).status_code == 200
    tasks = ls.api.get("/api/tasks", params={"project": pid}).json()["tasks"]
    return pid, model.json()["id"], sorted(task["id"] for task in tasks)


def run_flow(ls: LabelStudio, backend_url: str, store: Store, db_url: str) -> dict[str, float]:
    """Everything an annotation team does with the backend; returns the timings."""
    started = time.monotonic()
    pid, mlid, (first, second) = connect(ls, backend_url)
    action = {"id": "retrieve_tasks_predictions", "project": pid}
    retrieved = ls.api.post(
        "/api/dm/actions", params=action, json={"selectedItems": {"all": True, "excluded": []}}
    )
    assert retrieved.status_code == 200, retrieved.text
    predictions = {
        task: ls.api.get("/api/predictions", params={"task": task}).json()
        for task in (first, second)
    }
    assert _flagged(predictions[first][0]) == {"URL", "LEN"}  # a URL; two of 4-12 turns
    assert _flagged(predictions[second][0]) == set() and predictions[second][0]["score"] == 1.0
    interactive = ls.api.post(
        f"/api/ml/{mlid}/interactive-annotating",
        json={"task": second, "context": {"result": _answer("I am a bot, see http://x.com")}},
    )
    assert interactive.status_code == 200, interactive.text
    assert _flagged(interactive.json()["data"]) == {"URL", "BOT"}
    created = ls.api.post(
        f"/api/tasks/{second}/annotations", json={"result": _answer("I am a bot.")}
    )
    assert created.status_code == 201, created.text
    assert [r.status for r in _wait_for_runs(store, 1)] == ["fail"]
    fixed = {"result": _answer("Happy to help.")}
    assert ls.api.patch(f"/api/annotations/{created.json()['id']}", json=fixed).status_code == 200
    runs = _wait_for_runs(store, 2)
    assert [(r.source, r.annotator, r.status) for r in runs] == [
        ("labelstudio", "ls-user-1", "fail"),
        ("labelstudio", "ls-user-1", "pass"),
    ]
    stats = CliRunner().invoke(cli, ["verify", "stats", "--db", db_url, "--json"])
    people = json.loads(stats.output)["flags_by_annotator"]
    assert [(p["key"], p["flags"], p["fixed"]) for p in people] == [("ls-user-1", 1, 1)]
    return {"label_studio_start_s": ls.started_s, "flow_s": time.monotonic() - started}


def test_label_studio_shows_docket_feedback_and_the_webhook_feeds_verify_stats(
    tmp_path: Path, store: Store, db_url: str
) -> None:
    if not LS_STAMP.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("Label Studio's virtualenv is missing: run `make labelstudio`")
        pytest.skip("Label Studio's virtualenv is missing (`make labelstudio` makes it)")
    with serve(backend(store)) as backend_url, label_studio(tmp_path / "ls") as ls:
        timings = run_flow(ls, backend_url, store, db_url)
    print(f"\nLabel Studio timings: {json.dumps({k: round(v, 1) for k, v in timings.items()})}")
