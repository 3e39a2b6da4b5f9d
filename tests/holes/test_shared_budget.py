"""Two processes fill the same job with one hole budget: together they judge it once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import func, select

from docket.store import open_store
from docket.store.tables import JudgmentRecord

ROOT = Path(__file__).resolve().parents[2]
WORKER = """
import asyncio, json, sys
from docket.holes import fill_holes
from docket.jobs import JobSpec
from docket.relevance.types import Judgment

class SlowJudge:
    method, batch_step = "slow", False
    async def judge(self, pair):
        await asyncio.sleep(0.3)  # long enough for the two processes to overlap
        label = int(int(pair.docid[1:]) % 3 == 0)
        return Judgment(pair.qid, pair.docid, self.method, label, "judge", model="slow")
    def finalize(self, judgments):
        return judgments

qrels, runs, corpus, queries, db = sys.argv[1:6]
filled = fill_holes(qrels, runs.split(","), queries, corpus,
                    JobSpec.of(db=db, concurrency=4), depth=10, judge=SlowJudge(),
                    budget=40, order="bandit", batch=5, job="shared")
print(json.dumps({"asked": filled.budget, "judged": filled.run.outcome.judged,
                  "busy": filled.run.outcome.busy, "complete": filled.complete}))
"""


def _files(tmp: Path) -> list[str]:
    qrels = "".join(f"q{q} 0 d{q * 100 + d} {d % 2}\n" for q in range(8) for d in range(3))
    (tmp / "qrels.txt").write_text(qrels)
    runs = []
    for r in range(3):
        lines = [f"q{q} Q0 d{q * 100 + (d * (r + 1)) % 20} {d + 1} {20 - d} r{r}\n"
                 for q in range(8) for d in range(10)]  # fmt: skip
        path = tmp / f"r{r}.trec"
        path.write_text("".join(dict.fromkeys(lines)))
        runs.append(str(path))
    (tmp / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"d{q * 100 + d}", "text": f"doc {d}"}) + "\n"
        for q in range(8) for d in range(20)))  # fmt: skip
    (tmp / "queries.tsv").write_text("".join(f"q{q}\tquery {q}\n" for q in range(8)))
    return [str(tmp / "qrels.txt"), ",".join(runs), str(tmp / "corpus.jsonl"),
            str(tmp / "queries.tsv"), str(tmp / "shared.db")]  # fmt: skip


def test_two_processes_share_one_hole_budget(tmp_path: Path) -> None:
    args = _files(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, *args], env=env, cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]  # fmt: skip
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-2000:] for _, err in outs]
    reports = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    store = open_store(args[-1])
    with store.read_session() as session:
        stored = session.scalar(
            select(func.count()).select_from(JudgmentRecord).where(JudgmentRecord.job == "shared")
        )
    assert stored == 40  # not 40 per process, and not more through diverging orders
    assert sum(r["judged"] for r in reports) == 40, reports
    assert all(r["asked"] == 40 and r["busy"] == 0 and r["complete"] for r in reports)
