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
