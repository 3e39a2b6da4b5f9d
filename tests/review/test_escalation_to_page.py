"""From `docket judge` to the item page: an agent's citation of a sentence that does not
exist reaches the reviewer, struck through."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from docket.cli.main import app
from docket.llm.fake import register_fake
from docket.llm.types import Request
from docket.review.auth import add_reviewer
from docket.review.web import create_app
from docket.store.base import open_store
from tests.review.conftest import login

PAIR = {
    "qid": "q1",
    "query": "how long should you boil an egg for a soft yolk",
    "docid": "d1",
    "text": "Cook the egg for six minutes. Then cool it in cold water.",
    "label": 1,
}


def _stubborn(request: Request) -> str:
    user = next(m.content for m in request.messages if m.role == "user")
    agent = re.search(r"you are agent (\w)", user).group(1)
    if agent == "A":  # S7 is not a sentence of this two-sentence chunk
        return json.dumps({"label": "relevant", "evidence": ["S1", "S7"], "reasoning": "S1"})
    return json.dumps({"label": "irrelevant", "evidence": ["S2"], "reasoning": "S2"})


def test_an_invalid_citation_from_the_debate_is_struck_through(tmp_path: Path) -> None:
    pairs, db = tmp_path / "pairs.jsonl", tmp_path / "d.db"
    pairs.write_text(json.dumps(PAIR) + "\n")
    model = register_fake("stubborn-evidence", _stubborn)
    args = ["judge", str(pairs), "--model", model, "--db", str(db), "--job", "j", "--cache", "off"]
    result = CliRunner().invoke(app, [*args, "--method", "dream"])
    assert result.exit_code == 0, result.output
    store = open_store(db)
    with store.session() as session:
        token = add_reviewer(session, "ann")[1]
    with TestClient(create_app(store)) as client:
        login(client, token)
        [task] = client.get("/queue.json").json()["tasks"]
        data = client.get(f"/tasks/{task['id']}.json").json()["relevance"]
        a_turns = [t for r in data["rounds"] for t in r["turns"] if t["agent"] == "A"]
        assert a_turns and all(
            t["evidence"] == [{"id": "S1", "valid": True}, {"id": "S7", "valid": False}]
            for t in a_turns
        )
        html = client.get(f"/tasks/{task['id']}").text
        assert '<span class="invalid" title="not a sentence of this chunk">S7</span>' in html
    store.close()
