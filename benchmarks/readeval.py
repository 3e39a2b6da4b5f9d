"""RE-AD-Eval on the example SOP: build a dataset, verify it, print the scores.

Without a model, only fmt violations are injected (code mutations, no LLM) and the
verifier runs with the 8 fmt rules: fmt precision and recall must be 1.0 by construction
(anything else is a bug). The build is made twice to check that it is reproducible.
With ``--model``, a few sim/sub samples are also written by that model and checked by
``--judge-model`` (default: the same model, which the build warns about), then verified
with the same model on all 20 rules. The embedded ``local`` model (Gemma 3 270M, a base
model) cannot really judge; keep such a run tiny (``--llm-samples`` <= 5).

Usage:
    .venv/bin/python benchmarks/readeval.py [--samples 300] [--seed 0]
    .venv/bin/python benchmarks/readeval.py --model local --llm-samples 3

Prints a table and writes benchmarks/results/readeval.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _table import Table, print_tables, write_results

from docket.adherence.record import read_records
from docket.adherence.rules import load_rules
from docket.errors import UserError
from docket.llm import Model
from docket.readeval import (
    PAPER_F1,
    BuildConfig,
    BuildModels,
    Dataset,
    build_dataset,
    checkers_without_operator,
    run_readeval,
)

ROOT = Path(__file__).resolve().parents[1]
SOP = ROOT / "examples" / "sop"
OUT = ROOT / "benchmarks" / "results" / "readeval.json"


def clean_seeds() -> list[Any]:
    """The example dialogues marked as breaking no rule."""
    rows = [json.loads(line) for line in (SOP / "dialogues.jsonl").read_text().splitlines() if line]
    clean = {row["id"] for row in rows if not row.get("expected_violations")}
    return [record for record in read_records(SOP / "dialogues.jsonl") if record.id in clean]


def fmt_part(ruleset: Any, seeds: list[Any], samples: int, seed: int) -> dict[str, Any]:
    """Build fmt-only twice (reproducibility), verify with the fmt rules, score."""
    config = BuildConfig(samples=samples, seed=seed, tiers=("fmt",))
    started = time.perf_counter()
    result = asyncio.run(build_dataset(ruleset, seeds, config))
    build_s = time.perf_counter() - started
    again = asyncio.run(build_dataset(ruleset, seeds, config))
    fmt_rules = ruleset.model_copy(update={"rules": ruleset.by_tier("fmt")})
    report = asyncio.run(run_readeval(result.dataset, fmt_rules))
    atomic = report.modes["atomic"]
    overall = atomic.needs_review_as_flag.overall
    return {
        "attempted": samples,
        "kept": len(result.dataset.samples),
        "dropped": dict(Counter(d.reason for d in result.drops)),
        "reproducible": result.dataset == again.dataset,
        "build_s": build_s,
        "build_ms_per_sample": build_s * 1000 / samples,
        "kept_by_rule": dict(Counter(s.rule_id for s in result.dataset.samples)),
        "kept_by_persona": dict(Counter(s.persona for s in result.dataset.samples)),
        "operators": dict(Counter(s.operator for s in result.dataset.samples)),
        "iterations": result.dataset.header.summary.iterations,
        "scores": overall.model_dump(),
        "by_rule": {k: v.model_dump() for k, v in atomic.needs_review_as_flag.by_rule.items()},
        "verify_latency_ms": atomic.latency_ms,
        "bug": overall.precision != 1.0 or overall.recall != 1.0,
    }


def llm_part(ruleset: Any, seeds: list[Any], args: argparse.Namespace) -> dict[str, Any]:
    """A tiny sim/sub build with the model, then a run with it on all rules."""
    model = Model(args.model)
    judge = Model(args.judge_model) if args.judge_model else model
    config = BuildConfig(samples=args.llm_samples, seed=args.seed, tiers=("sim", "sub"))
    models = BuildModels(generator=model, judge_sim=judge, judge_sub=judge)
    started = time.perf_counter()
    seeds = seeds[: args.llm_seeds]
    part: dict[str, Any] = {"model": model.name, "judge": judge.name, "seeds": len(seeds)}
    try:
        result = asyncio.run(build_dataset(ruleset, seeds, config, models, concurrency=1))
    except UserError as exc:  # e.g. a model that judges every seed as breaking a rule
        usage = {m.name: m.usage.to_json() for m in {model, judge}}
        return {
            **part,
            "error": exc.one_line(),
            "build_s": time.perf_counter() - started,
            "usage": usage,
        }
    build_s = time.perf_counter() - started
    part |= {
        "attempted": args.llm_samples,
        "kept": len(result.dataset.samples),
        "skipped_seeds": result.dataset.header.skipped_seeds,
        "dropped": [d.__dict__ for d in result.drops],
        "warnings": result.warnings,
        "build_s": build_s,
        "usage": result.usage,
    }
    if result.dataset.samples:
        part["run"] = _llm_run(result.dataset, ruleset, model)
    return part


def _llm_run(dataset: Dataset, ruleset: Any, model: Model) -> dict[str, Any]:
    report = asyncio.run(
        run_readeval(dataset, ruleset, sim_model=model, sub_model=model, concurrency=1)
    )
    atomic = report.modes["atomic"]
    return {
        "scores_needs_review_as_flag": atomic.needs_review_as_flag.overall.model_dump(),
        "scores_needs_review_as_pass": atomic.needs_review_as_pass.overall.model_dump(),
        "needs_review": atomic.needs_review.model_dump(),
        "latency_ms": atomic.latency_ms,
        "llm_calls": atomic.llm_calls,
        "warnings": report.warnings,
    }


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def tables(result: dict[str, Any]) -> list[Table]:
    """The fmt scores per rule, then the totals (and the LLM part if any) as notes."""
    fmt = result["fmt"]
    table = Table(["fmt rule", "samples", "P", "R"], title="fmt tier, per rule")
    for rule_id, counts in fmt["by_rule"].items():
        table.add(rule_id, counts["tp"] + counts["fn"], counts["precision"], counts["recall"])
    scores, latency = fmt["scores"], fmt.get("verify_latency_ms")
    table.notes += [
        f"fmt tier: {fmt['kept']}/{fmt['attempted']} samples kept, precision "
        f"{_fmt(scores['precision'])}, recall {_fmt(scores['recall'])}, F1 {_fmt(scores['f1'])} "
        f"({'BUG: should be 1.0 by construction' if fmt.get('bug') else 'as expected by construction'})",
        f"build {fmt['build_ms_per_sample']:.2f} ms/sample, reproducible: {fmt['reproducible']}"
        + (f"; verify p50 {latency['p50']:.2f} ms, p95 {latency['p95']:.2f} ms" if latency else ""),
        f"drops: {fmt['dropped'] or 'none'}; checkers without operator: {result['operators_missing']}",
    ]  # fmt: skip
    llm = result.get("llm")
    if llm:
        table.notes.append(f"LLM part ({llm['model']}, judge {llm['judge']}): " + (
            f"build stopped: {llm['error']}" if "error" in llm
            else f"{llm['kept']}/{llm['attempted']} kept"))  # fmt: skip
        for drop in llm.get("dropped", []):
            table.notes.append(f"dropped {drop['tier']} {drop['rule_id']}: {drop['reason']}")
        if "run" in llm:
            run = llm["run"]["scores_needs_review_as_flag"]
            table.notes.append(f"run on all rules: F1 (needs_review as flag) {_fmt(run['f1'])}")
    table.notes.append(
        f"reference: the RE-AD paper reports F1 {result['paper_f1']} on its own benchmark "
        "(not a target)"
    )
    return [table]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300, help="fmt samples to attempt")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", help="generator (and default judge and verifier) model")
    parser.add_argument("--judge-model", help="independent judge for the LLM samples")
    parser.add_argument("--llm-samples", type=int, default=3, help="sim/sub samples (keep tiny)")
    parser.add_argument("--llm-seeds", type=int, default=1, help="clean seeds for the LLM part")
    args = parser.parse_args()
    ruleset = load_rules(SOP / "rules.yaml")
    seeds = clean_seeds()
    result: dict[str, Any] = {
        "seeds": [seed.id for seed in seeds],
        "ruleset": {
            "name": ruleset.name,
            "version": ruleset.version,
            "tiers": ruleset.tier_counts(),
        },
        "operators_missing": checkers_without_operator(),
        "fmt": fmt_part(ruleset, seeds, args.samples, args.seed),
        "args": vars(args),
        "paper_f1": PAPER_F1,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    if args.model:
        result["llm"] = llm_part(ruleset, seeds, args)
    write_results(OUT, result)
    print_tables(tables(result))


if __name__ == "__main__":
    main()
