"""A notebook session on the job API: a DataFrame judged against a real HTTP chat server,
interrupted halfway, resumed with no repeated call, escalations in the review queue."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from docket.errors import InputError
from docket.jobs import FRAME_COLUMNS, JobSpec, run_job
from docket.review.queue import select_tasks
from tests.scripted_server import serve, user_text

AGENT = re.compile(r"you are agent (\w)")
DOCID = re.compile(r"<chunk>\n\[S1\] doc-(\d+)")


def _debater(body: dict) -> str:
    """A argues relevant, B irrelevant; B concedes unless the docid is a multiple of 10."""
    text = user_text(body)
    agent = AGENT.search(text).group(1)
    number = int(DOCID.search(text).group(1))
    relevant = agent == "A" or number % 10 != 0
    label = "relevant" if relevant else "irrelevant"
    return json.dumps({"label": label, "evidence": ["S1"], "reasoning": f"agent {agent} says so"})


def _frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "qid": [f"q{i % 25}" for i in range(rows)],
            "query": [f"question {i % 25}?" for i in range(rows)],
            "docid": [f"d{i}" for i in range(rows)],
            "text": [f"doc-{i} An answer sentence. Another sentence." for i in range(rows)],
            "label": [i % 2 for i in range(rows)],
        }
    )


class Interrupt:
    """A progress callback that raises Ctrl-C once ``at`` pairs are settled (the notebook's ■)."""

    def __init__(self, at: int) -> None:
        self.at, self.seen = at, []

    def __call__(self, done: int, total: int) -> None:
        self.seen.append((done, total))
        if done >= self.at:
            raise KeyboardInterrupt


def test_a_dataframe_job_resumes_after_an_interrupt_and_queues_escalations(tmp_path: Path):
    frame = _frame(1000)
    with serve(_debater) as server:
        # One call in flight (as with the embedded model): nothing is cut mid-call by the
        # interrupt, so resuming repeats no call at all, with or without the cache.
        spec = JobSpec.of(
            "dream", model=server.model("m"), db=str(tmp_path / "nb.db"), cache="off",
            max_in_flight=1, rounds=2,
        )  # fmt: skip
        stop = Interrupt(at=500)
        with pytest.raises(KeyboardInterrupt):
            run_job(frame, spec, job="nb", on_progress=stop)
        first = len(server.requests)
        assert stop.seen[-1][1] == 1000 and 0 < first < 1000 * 4

        run = run_job(frame, spec, job="nb")
        # every pair paid once: 2 calls when agents agree in round 1, 4 when they never do
        escalated = sum(1 for i in range(1000) if i % 10 == 0)
        assert len(server.requests) == 2 * 1000 + 2 * escalated
        assert run.complete and (run.outcome.skipped, run.outcome.judged) == (500, 500)
        assert run.usage.calls == len(server.requests) - first

        again = run_job(frame, spec, job="nb")
        assert again.usage.calls == 0 and len(server.requests) == 2 * 1000 + 2 * escalated

    table = run.to_pandas()
    assert list(table.columns) == list(FRAME_COLUMNS) and len(table) == 1000
    assert (
        table["gold_label"] == frame.set_index("docid").loc[table["docid"], "label"].values
    ).all()
    assert set(table.loc[table["label"].isna(), "docid"]) == {f"d{i}" for i in range(0, 1000, 10)}
    assert len(run.escalations()) == escalated
    with run.store.session() as session:
        tasks = select_tasks(session, job="nb", kind="relevance")
    assert len(tasks) == escalated

    qrels = run.qrels()
    assert sum(len(docs) for docs in qrels.values()) == 1000 - escalated
    assert all(value == 1 for docs in qrels.values() for value in docs.values())


def test_a_bad_dataframe_row_names_its_row_and_column(tmp_path: Path):
    frame = _frame(3)
    frame.loc[1, "text"] = "   "
    with pytest.raises(InputError) as caught:
        run_job(frame, model="fake:echo", db=str(tmp_path / "x.db"))
    assert caught.value.line == 2 and caught.value.field == "text"
    assert not (tmp_path / "x.db").exists()  # nothing was created for a bad input


def test_pyterrier_column_names_and_missing_labels_are_read(tmp_path: Path):
    frame = _frame(4).rename(columns={"docid": "docno"})
    frame["label"] = [1, None, 0, None]  # pandas makes this a float column with NaN
    from docket.jobs import job_input

    pairs = list(job_input(frame))
    assert [p.docid for p in pairs] == ["d0", "d1", "d2", "d3"]
    assert [p.label for p in pairs] == [1, None, 0, None]
