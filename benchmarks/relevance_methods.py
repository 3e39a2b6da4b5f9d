"""Relevance methods on the embedded model: parse rate, calls, tokens and time per pair.

Run: ``python benchmarks/relevance_methods.py [--pairs 12] [--model local]``

Judges the first N pairs of ``../shared/data/trec_dl21_dev.jsonl`` with DREAM, the single
judge and LARA (no response cache, so every call is real), and reports per method the
share of pairs whose replies parsed, the label distribution, balanced accuracy against the
NIST labels, escalation rate, LLM calls, tokens and seconds per pair. The point is that the
reply formats parse on Gemma 3 270M (about 20 tokens/s on 2 shared cores); its accuracy is
not expected to mean much. Writes ``benchmarks/results/relevance_methods.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from pathlib import Path

from docket.llm import Model
from docket.relevance import JudgeOptions, build_judge, compute_metrics, read_pairs

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_dl21_dev.jsonl"
RESULTS = Path(__file__).parent / "results" / "relevance_methods.json"
METHODS = ("dream", "single", "lara")


async def run_method(method: str, pairs: list, model: Model) -> dict:
    judge = build_judge(JudgeOptions(method=method), lambda name: model)
    started = time.perf_counter()
    judgments = []
    for pair in pairs:  # one at a time: the embedded model runs one call at a time anyway
        judgments.append(await judge.judge(pair))
    seconds = time.perf_counter() - started
    judgments = judge.finalize(judgments)
    gold = {p.key: p.label for p in pairs}
    metrics = compute_metrics(method, judgments, gold).to_json()
    turns = [t for j in judgments for t in j.transcript]
    return {
        **metrics,
        "turns": len(turns),
        "turns_parsed_share": sum(t["parsed"] for t in turns) / len(turns),
        "labels": {str(k): sum(j.label == k for j in judgments) for k in (1, 0, None)},
        "seconds_per_pair": seconds / len(pairs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--model", default="local")
    args = parser.parse_args()
    pairs = read_pairs(DATA)[: args.pairs]
    model = Model(args.model)
    load = os.getloadavg()
    results = {m: asyncio.run(run_method(m, pairs, model)) for m in METHODS}
    report = {"model": args.model, "pairs": len(pairs), "load_average_before": load,
              "load_average_after": os.getloadavg(), "methods": results}  # fmt: skip
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    header = f"{'method':8} {'parsed':>7} {'rel/irr/esc':>12} {'bAcc':>6} {'esc':>6} {'calls':>6} {'tokens':>7} {'s/pair':>7}"
    print(header)
    for name, r in results.items():
        labels = f"{r['labels']['1']}/{r['labels']['0']}/{r['labels']['None']}"
        bacc = "-" if r["balanced_accuracy"] is None else f"{r['balanced_accuracy']:.3f}"
        print(f"{name:8} {r['turns_parsed_share']:7.0%} {labels:>12} {bacc:>6} "
              f"{r['escalation_rate']:6.1%} {r['calls_per_pair']:6.2f} {r['tokens_per_pair']:7.0f} "
              f"{r['seconds_per_pair']:7.1f}")  # fmt: skip
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
