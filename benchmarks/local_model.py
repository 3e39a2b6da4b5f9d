"""Speed of the embedded model (``local``): prefill, generation and prefix reuse.

Run: ``python benchmarks/local_model.py [--repeats 3] [--threads N]``

Measures, on the in-process llama.cpp provider with the embedded default model:

- prompt tokens/s: a cold ~500-token prompt (no shared prefix), one generated token;
- generated tokens/s: greedy, 128 tokens, prompt already in the KV cache;
- prefix reuse: a call sharing a ~1000-token prefix with the previous call vs the same
  call cold (only the chat header shared).

Targets from the issue: >= 15 generated tokens/s and >= 150 prompt tokens/s on 2 cores.
The load average is recorded because other processes may share the CPU.
Writes ``benchmarks/results/local_model.json``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

from _table import Table, print_tables, write_results

from docket.llm import Message, Model, Request
from docket.llm.local import LocalProvider

RESULTS = Path(__file__).parent / "results" / "local_model.json"
TARGETS = {"generated_tokens_per_s": 15.0, "prompt_tokens_per_s": 150.0}
FILLER = (
    "The assessor reads the query and the passage, weighs whether the passage states the "
    "facts a searcher needs, notes partial answers, and records a graded judgment. "
)


def request(text: str, max_tokens: int) -> Request:
    """A one-message greedy request."""
    return Request(messages=(Message("user", text),), max_tokens=max_tokens)


def prefill_rate(local: LocalProvider, run: int) -> dict[str, float]:
    """Prompt tokens/s of a cold ~500-token prompt."""
    # A distinct first word breaks the shared prefix right after the chat header.
    completion = local.generate_blocking(request(f"Case {run * 7919}. " + FILLER * 16, 1))
    new_tokens = completion.prompt_tokens - completion.cached_prompt_tokens
    return {
        "prompt_tokens": completion.prompt_tokens,
        "cached_prompt_tokens": completion.cached_prompt_tokens,
        "seconds": completion.latency_s,
        "tokens_per_s": new_tokens / completion.latency_s,
    }


def generation_rate(local: LocalProvider, run: int) -> dict[str, float]:
    """Generated tokens/s, greedy, with the prompt already cached."""
    prompt = f"List {run}: one, two, three,"
    local.generate_blocking(request(prompt, 1))  # put the prompt in the KV cache first
    completion = local.generate_blocking(request(prompt, 128))
    return {
        "completion_tokens": completion.completion_tokens,
        "seconds": completion.latency_s,
        "tokens_per_s": completion.completion_tokens / completion.latency_s,
    }


def prefix_reuse(local: LocalProvider, run: int) -> dict[str, float]:
    """A cold call vs a call sharing a ~1000-token prefix with the previous one."""
    shared = f"Guidelines {run}. " + FILLER * 32
    local.generate_blocking(request(f"Unrelated warm-up {run}.", 1))
    cold = local.generate_blocking(request(shared + "Query: first question?", 1))
    warm = local.generate_blocking(request(shared + "Query: second question?", 1))
    return {
        "prompt_tokens": warm.prompt_tokens,
        "cold_s": cold.latency_s,
        "cold_cached_tokens": cold.cached_prompt_tokens,
        "warm_s": warm.latency_s,
        "warm_cached_tokens": warm.cached_prompt_tokens,
        "speedup": cold.latency_s / warm.latency_s,
    }


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    """Median of each field over the runs."""
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def main() -> None:
    """Run the measurements, print the table and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="default: all usable cores")
    args = parser.parse_args()
    if args.threads:
        os.environ["DOCKET_LOCAL_THREADS"] = str(args.threads)
    local = Model("local").provider
    started = time.perf_counter()
    local.engine()
    load_s = time.perf_counter() - started
    load_before = os.getloadavg()
    prefill = median_of([prefill_rate(local, i) for i in range(args.repeats)])
    generation = median_of([generation_rate(local, i) for i in range(args.repeats)])
    reuse = median_of([prefix_reuse(local, i) for i in range(args.repeats)])
    report = {
        "model": local.name,
        "model_file": str(local.model_path),
        "n_threads": local.n_threads,
        "cpu_count": os.cpu_count(),
        "load_average_before_after": [load_before, os.getloadavg()],
        "platform": platform.platform(),
        "repeats": args.repeats,
        "load_s": load_s,
        "prefill": prefill,
        "generation": generation,
        "prefix_reuse": reuse,
        "targets": TARGETS,
        "meets_targets": {
            "generated_tokens_per_s": generation["tokens_per_s"]
            >= TARGETS["generated_tokens_per_s"],
            "prompt_tokens_per_s": prefill["tokens_per_s"] >= TARGETS["prompt_tokens_per_s"],
        },
    }
    write_results(RESULTS, report)
    print_tables(tables(report))
    print(f"wrote {RESULTS}")


def tables(report: dict) -> list[Table]:
    """The headline numbers against their targets."""
    prefill, gen, reuse = report["prefill"], report["generation"], report["prefix_reuse"]
    table = Table(
        ["measure", "value", "target / note"],
        title=f"local model, {report['n_threads']} threads, "
        f"load avg {report['load_average_before_after'][0][0]:.2f}",
    )
    table.add("model load, s", report["load_s"], "")
    table.add(
        "prompt tokens/s (cold, ~500 tok)",
        prefill["tokens_per_s"],
        f">= {TARGETS['prompt_tokens_per_s']:.0f}",
    )
    table.add(
        "generated tokens/s (greedy, 128)",
        gen["tokens_per_s"],
        f">= {TARGETS['generated_tokens_per_s']:.0f}",
    )
    table.add(f"cold call, {reuse['prompt_tokens']:.0f}-token prompt, s", reuse["cold_s"], "")
    table.add(f"warm call, {reuse['warm_cached_tokens']:.0f} tokens reused, s", reuse["warm_s"],
              f"x{reuse['speedup']:.1f} faster")  # fmt: skip
    return [table]


if __name__ == "__main__":
    main()
