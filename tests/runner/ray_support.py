"""Shared by the Ray tests: a local Ray for a test module, the pairs, a deterministic reply."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docket.relevance.types import Pair
from tests.scripted_server import user_text

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [Pair(f"q{i % 3}", "boil an egg", f"d{i}", f"Egg fact number {i}.") for i in range(24)]


def reply(body: dict) -> str:
    """Deterministic: the label depends only on the pair's text, so agents agree."""
    text = user_text(body)
    number = int(text.split("Egg fact number ")[1].split(".")[0])
    label = "relevant" if hashlib.sha256(str(number).encode()).digest()[0] % 2 else "irrelevant"
    return json.dumps({"label": label, "evidence": ["S1"], "reasoning": f"fact {number}"})


def started_ray() -> Iterator[Any]:
    """A local Ray (temp dir in the project cache, this worktree's sources in the workers)."""
    import ray

    from docket.runner.ray_executor import init_ray

    env = {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    init_ray(temp_dir=ROOT / ".cache" / "r", num_cpus=2, runtime_env={"env_vars": env})
    yield ray
    ray.shutdown()


def judge_killing_one_actor(store: Any, kill_after: int) -> tuple[Any, int]:
    """Judge PAIRS (DREAM) on 2 Ray actors into job ``j`` of ``store``, SIGKILLing the first
    actor after ``kill_after`` results; return the outcome and the calls the server saw.

    Checks on the way that Ray restarted the killed actor.
    """
    import asyncio
    import signal
    from functools import partial

    import ray

    from docket.config import Settings
    from docket.jobs.compose import make_judge
    from docket.relevance import JudgeOptions
    from docket.runner import judge_pairs
    from docket.runner.ray_executor import RayExecutor
    from docket.store import upsert_job
    from tests.scripted_server import serve

    with store.session() as session:
        upsert_job(session, name="j", method="dream", model="m", options={}, source="t")
    with serve(reply, delay_s=0.1) as server:
        options = JudgeOptions.checked(method="dream")
        settings = Settings(model=server.model(), cache="off")
        executor = RayExecutor(partial(make_judge, options, settings), workers=2, batch=2)
        victim = ray.get(executor.start()[0].pid.remote())
        seen: list[str] = []

        def on_result(pair: Pair, _judgment: Any) -> None:
            seen.append(pair.docid)
            if len(seen) == kill_after:
                os.kill(victim, signal.SIGKILL)

        judge = make_judge(options, settings)
        try:
            outcome = asyncio.run(
                judge_pairs(
                    store, "j", PAIRS, judge, concurrency=8, executor=executor, on_result=on_result
                )  # fmt: skip
            )
            assert ray.get(executor.actors[0].pid.remote()) != victim  # restarted
        finally:
            executor.stop()
        return outcome, len(server.requests)


def dying_judge(poison: str, attempts: Path) -> Any:
    """A judge whose process dies (no exception, no cleanup) whenever it judges ``poison``.

    Each death first appends a line to ``attempts``, so a test counts the tries across
    processes.
    """
    from tests.helpers_judges import KeywordJudge

    class Dying(KeywordJudge):
        async def judge(self, pair: Pair) -> Any:
            if pair.docid == poison:
                with attempts.open("a") as marks:
                    marks.write(f"{os.getpid()}\n")
                os._exit(1)
            return await super().judge(pair)

    return Dying()


def judge_with_a_dying_worker(store: Any, tmp_path: Path) -> tuple[Any, list[Any], int]:
    """Judge PAIRS on one Ray actor (batches of 2) whose process dies on d5, every time.

    Returns the outcome, the failed pairs and how often d5's batch was attempted.
    """
    import asyncio
    from functools import partial

    from docket.runner import judge_pairs
    from docket.runner.ray_executor import RayExecutor
    from docket.store import upsert_job
    from docket.store.claims import failed_pairs
    from tests.helpers_judges import KeywordJudge

    with store.session() as session:
        upsert_job(session, name="j", method="keyword", model="m", options={}, source="t")
    marks = tmp_path / "attempts.txt"
    executor = RayExecutor(partial(dying_judge, "d5", marks), workers=1, batch=2)
    try:
        outcome = asyncio.run(
            judge_pairs(store, "j", PAIRS, KeywordJudge(), concurrency=2, executor=executor)
        )
    finally:
        executor.stop()
    with store.session() as session:
        failed = failed_pairs(session, "j")
    return outcome, failed, len(marks.read_text().splitlines())
