"""Coverage and width of prediction-powered intervals (``docket.audit.ppi``) on real labels.

Three settings, each over many random human samples (a fresh sample, and fresh simulated
LLM labels, per replicate):

1. DL20 pair level (``../shared/data/dl20``): six runs, the pool is the union of their
   top-10s over the 54 judged queries (1,349 pairs). LLM labels are drawn per pair from
   GPT-4o's recorded confusion with the NIST grades (``P(LLM says relevant | grade)`` on the
   200 pairs of ``trec_dl20_pairs.jsonl``); humans are the NIST grades, relevant = grade
   >= 2. Uniform human samples of 100/200/400 pairs; 90% intervals of P@10 and binary
   DCG@10 for every system, and of the 15 pairwise differences (Bonferroni intervals for
   simultaneous coverage, Holm's test for the partial order). Truth: the measure on the
   NIST grades of the pool. Also a stratified draw that oversamples the pairs ranked in
   the top 3 of some run (heavy DCG weights), 2x their share (``top3x2``).
2. LLMJudge prevalence (``../shared/data/llmjudge``): each of the 33 judge files (labels
   clipped to 0-3) against the human qrels, relevant = grade >= 2, uniform samples of
   100/200/400 pairs.
3. DL20 query level: nDCG@10 (NIST grades as gains; LLM labels binary) with 10 and 20
   whole queries judged by humans: ``ppi_mean_finite`` (finite-population correction,
   Student-t quantiles).

Usage:
    .venv/bin/python benchmarks/ppi_coverage.py [--reps 1000] [--judge-reps 2000] [--seed 0]

Prints tables and writes benchmarks/results/ppi_coverage.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import time
from pathlib import Path

import numpy as np
from _table import Table, print_tables, write_results

from docket.audit.linear import Pool, coefficients, parse_linear
from docket.audit.ppi import pair_estimates, ppi_mean_finite, quantile
from docket.ir.formats import read_qrels, read_runs

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "ppi_coverage.json"
ALPHA = 0.10
SIZES = (100, 200, 400)
ESTIMATORS = (  # (name, lam, model-assisted variance floor)
    ("ppi", "tuned", True),  # docket's default
    ("ppi_design_var", "tuned", False),
    ("difference", 1.0, True),
    ("human_only", 0.0, True),
)


def llm_confusion() -> np.ndarray:
    """``P(GPT-4o says relevant | NIST grade 0..3)`` on the 200 recorded DL20 pairs."""
    counts, hits = np.zeros(4), np.zeros(4)
    for line in (DATA / "dl20" / "trec_dl20_pairs.jsonl").read_text().splitlines():
        record = json.loads(line)
        counts[record["grade"]] += 1
        hits[record["grade"]] += record["llm_labels"]["gpt-4o"]
    return hits / counts


def dl20() -> tuple[list, Pool, np.ndarray]:
    """The six runs, the pool of their top-10s over the judged queries, its NIST grades."""
    runs = read_runs(sorted((DATA / "dl20").glob("run.*.txt")))
    qrels = read_qrels(DATA / "dl20" / "qrels.dl20.txt")
    queries = tuple(sorted(qrels))
    pairs = sorted({(q, d) for run in runs for q in queries for d in run.top(q, 10)})
    pool = Pool(tuple(pairs), queries)
    return runs, pool, pool.grades(qrels)  # an unjudged pair has grade 0, as in trec_eval


def contrasts(coef: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Rows of every system followed by every pairwise difference."""
    pairs = list(itertools.combinations(range(coef.shape[0]), 2))
    diffs = np.array([coef[a] - coef[b] for a, b in pairs])
    return np.vstack([coef, diffs]), pairs


def uniform_samples(rng: np.random.Generator, reps: int, size: int, n: int) -> np.ndarray:
    """``reps`` simple random samples of ``n`` of ``size`` units, as index rows."""
    return np.argsort(rng.random((reps, size)), axis=1)[:, :n]


def holm_reject(p: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's decisions for each column of ``p`` (hypotheses along axis 0)."""
    m = p.shape[0]
    order = np.argsort(p, axis=0)
    sorted_p = np.take_along_axis(p, order, axis=0)
    adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m))[:, None] * sorted_p))
    reject = np.empty_like(p, dtype=bool)
    np.put_along_axis(reject, order, adjusted <= alpha, axis=0)
    return reject


def pair_cell(rows, truth, yhat, sample, human, pi, groups, lam, systems, floor=False):
    """Coverage and half-widths of one (measure, size, estimator) cell."""
    from scipy import stats

    est, var, _ = pair_estimates(rows, yhat, sample, human, pi, groups, lam, floor)
    se = np.sqrt(np.maximum(var, 0))
    z, zb = quantile(ALPHA), quantile(ALPHA / (len(rows) - systems))
    covered = np.abs(est - truth[:, None]) <= z * se
    diff_err = np.abs(est[systems:] - truth[systems:, None])
    simultaneous = np.all(diff_err <= zb * se[systems:], axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2 * stats.norm.sf(np.abs(est[systems:]) / se[systems:])
    p = np.where(np.isnan(p), 1.0, p)
    reject = holm_reject(p, ALPHA)
    wrong = reject & (np.sign(est[systems:]) != np.sign(truth[systems:, None]))
    return {
        "coverage": covered[:systems].mean(axis=1).tolist(),
        "half_width": (z * se[:systems]).mean(axis=1).tolist(),
        "simultaneous_bonferroni": float(simultaneous.mean()),
        "holm_no_false_order": float(1 - wrong.any(axis=0).mean()),
        "holm_orders_found": float(reject.sum(axis=0).mean()),
    }


def dl20_pairs(runs, pool, grades, confusion, reps, rng) -> dict:
    """Setting 1: pair-level P@10 and DCG@10 on DL20, uniform and stratified samples."""
    y = (grades >= 2).astype(float)
    size, systems = len(pool.pairs), len(runs)
    heavy = _heavy_pairs(runs, pool)
    out: dict = {
        "pool_pairs": size,
        "unjudged": _unjudged(pool),
        "systems": [r.name for r in runs],
        "cells": [],
    }
    for name in ("P@10", "DCG(rel=2)@10"):
        rows, _ = contrasts(coefficients(parse_linear(name), runs, pool))
        truth = rows @ y
        for n, design in itertools.product(SIZES, ("uniform", "top3x2")):
            yhat = (rng.random((reps, size)) < confusion[grades.astype(int)]).astype(float)
            sample, pi, groups = _draw(rng, reps, size, n, design, heavy)
            cell = {"measure": name, "n": n, "design": design}
            for label, lam, floor in ESTIMATORS:
                cell[label] = pair_cell(
                    rows, truth, yhat, sample, y[sample], pi, groups, lam, systems, floor
                )
            naive = np.einsum("kj,rj->kr", rows[:systems], yhat)
            cell["naive_bias"] = (naive.mean(axis=1) - truth[:systems]).tolist()
            out["cells"].append(cell)
    return out


def _unjudged(pool: Pool) -> int:
    qrels = read_qrels(DATA / "dl20" / "qrels.dl20.txt")
    return sum(1 for q, d in pool.pairs if d not in qrels[q])


def _heavy_pairs(runs, pool) -> np.ndarray:
    """Pairs ranked in the top 3 of at least one run."""
    top = {(q, d) for run in runs for q in pool.queries for d in run.top(q, 3)}
    return np.array([pair in top for pair in pool.pairs])


def _draw(rng, reps, size, n, design, heavy):
    """Uniform, or stratified with the heavy stratum sampled at 2x its share."""
    if design == "uniform":
        return uniform_samples(rng, reps, size, n), n / size, None
    strata = [np.flatnonzero(heavy), np.flatnonzero(~heavy)]
    share = len(strata[0]) / size
    n_heavy = min(len(strata[0]), round(n * min(0.9, 2 * share)))
    parts, pis, groups = [], [], []
    for g, (units, m) in enumerate(zip(strata, (n_heavy, n - n_heavy), strict=True)):
        parts.append(units[uniform_samples(rng, reps, len(units), m)])
        pis.append(np.full(m, m / len(units)))
        groups.append(np.full(m, g))
    return np.hstack(parts), np.concatenate(pis), np.concatenate(groups)


def llmjudge(reps, rng) -> dict:
    """Setting 2: prevalence of grade >= 2 for each of the 33 judges."""
    human = read_qrels(DATA / "llmjudge" / "human_qrels.txt")
    pool = Pool.of(human)
    y = (pool.grades(human) >= 2).astype(float)
    coef = np.full((1, len(pool.pairs)), 1.0 / len(pool.pairs))
    truth = float(y.mean())
    judges = []
    for path in sorted((DATA / "llmjudge" / "submissions").glob("*.txt")):
        labels = _judge_labels(path)
        yhat = np.array([min(max(labels.get(p, 0), 0), 3) >= 2 for p in pool.pairs], float)
        row = {"judge": path.stem, "naive": float(yhat.mean())}
        for n in SIZES:
            sample = uniform_samples(rng, reps, len(pool.pairs), n)
            for label, lam, floor in ESTIMATORS:
                est, var, _ = pair_estimates(
                    coef, yhat, sample, y[sample], n / len(pool.pairs), None, lam, floor
                )
                half = quantile(ALPHA) * np.sqrt(np.maximum(var[0], 0))
                row[f"{label}_{n}"] = {
                    "coverage": float(np.mean(np.abs(est[0] - truth) <= half)),
                    "half_width": float(half.mean()),
                }
        judges.append(row)
    return {"truth": truth, "pairs": len(pool.pairs), "judges": judges}


def _judge_labels(path: Path) -> dict[tuple[str, str], int]:
    labels = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 4:
            labels[(parts[0], parts[2])] = int(float(parts[3]))
    return labels


def dl20_queries(runs, pool, grades, confusion, reps, rng) -> dict:
    """Setting 3: query-level nDCG@10 with 10 and 20 whole queries judged by humans."""
    dcg = coefficients(parse_linear("DCG@10"), runs, pool) * len(pool.queries)
    members = np.array([[q == qid for q, _ in pool.pairs] for qid in pool.queries])
    truth_q = _ndcg(dcg, members, grades[None, :])[0]  # (S, Q)
    cells = []
    for n in (10, 20):
        rows = []
        for _ in range(reps):
            yhat = (rng.random(len(pool.pairs)) < confusion[grades.astype(int)]).astype(float)
            pred_q = _ndcg(dcg, members, yhat[None, :])[0]
            chosen = rng.choice(len(pool.queries), n, replace=False)
            rows.append(_query_rep(truth_q, pred_q, chosen))
        rows = np.array(rows)  # reps x rows x (covered, half)
        cells.append(
            {
                "n_queries": n,
                "coverage_systems": rows[:, : len(runs), 0].mean(axis=0).tolist(),
                "coverage_differences": rows[:, len(runs) :, 0].mean(axis=0).tolist(),
                "half_width_systems": rows[:, : len(runs), 1].mean(axis=0).tolist(),
                "coverage_mean": float(rows[:, :, 0].mean()),
            }
        )
    return {"queries": len(pool.queries), "cells": cells}


def _query_rep(truth_q, pred_q, chosen):
    systems = truth_q.shape[0]
    pairs = list(itertools.combinations(range(systems), 2))
    values = [(truth_q[s], pred_q[s]) for s in range(systems)]
    values += [(truth_q[a] - truth_q[b], pred_q[a] - pred_q[b]) for a, b in pairs]
    result = []
    for f, fhat in values:
        e = ppi_mean_finite(f[chosen], fhat[chosen], fhat, alpha=ALPHA)
        result.append((e.low <= f.mean() <= e.high, (e.high - e.low) / 2))
    return result


def _ndcg(dcg: np.ndarray, members: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """Per-query nDCG@10 ``(R, S, Q)`` from per-pair gains ``(R, N)``, ideal from the pool."""
    discounts = 1 / np.log2(np.arange(2, 12))
    per_query = np.einsum("sj,qj,rj->rsq", dcg, members, gains)
    ideal = np.zeros((gains.shape[0], members.shape[0]))
    for q, mask in enumerate(members):
        top = -np.sort(-gains[:, mask], axis=1)[:, :10]
        ideal[:, q] = top @ discounts[: top.shape[1]]
    return np.where(ideal[:, None, :] > 0, per_query / np.where(ideal > 0, ideal, 1)[:, None, :], 0)


def summarise(pairs: dict, judges: dict, queries: dict) -> dict:
    """The targets of issue 23, checked on the measured cells (uniform draws, lam = 1)."""
    summary = {}
    for est in ("ppi", "ppi_design_var", "difference"):
        cells = [c for c in pairs["cells"] if c["design"] == "uniform"]
        cov = np.array([c[est]["coverage"] for c in cells])
        ratio = [
            np.mean(c[est]["half_width"]) / np.mean(c["human_only"]["half_width"]) for c in cells
        ]
        judge_cov = np.array(
            [[j[f"{est}_{n}"]["coverage"] for n in SIZES] for j in judges["judges"]]
        )
        summary[est] = {
            "dl20_coverage_mean": float(cov.mean()),
            "dl20_coverage_min": float(cov.min()),
            "dl20_coverage_max": float(cov.max()),
            "dl20_simultaneous_min": min(c[est]["simultaneous_bonferroni"] for c in cells),
            "dl20_holm_no_false_order_min": min(c[est]["holm_no_false_order"] for c in cells),
            "dl20_width_ratio_max": float(max(ratio)),
            "llmjudge_coverage_mean": float(judge_cov.mean()),
            "llmjudge_coverage_min": float(judge_cov.min()),
            "llmjudge_coverage_max": float(judge_cov.max()),
        }
    q = [c["coverage_mean"] for c in queries["cells"]]
    summary["query_level_coverage"] = q
    return summary


def tables(result: dict) -> list[Table]:
    """Coverage and width of every setting: DL20 pairs, LLMJudge prevalence, DL20 queries."""
    pairs, judges, queries = result["dl20_pairs"], result["llmjudge"], result["dl20_queries"]
    pair_table = Table(
        ["measure", "n", "design", "estimator", "coverage", "min-max", "simultaneous",
         "Holm ok", "width / human"],
        title=f"DL20 pair level: {pairs['pool_pairs']} pool pairs ({pairs['unjudged']} "
        "unjudged: grade 0), 90% intervals",
    )  # fmt: skip
    for c in pairs["cells"]:
        for est in ("ppi", "ppi_design_var", "difference", "human_only"):
            r = c[est]
            ratio = np.mean(r["half_width"]) / np.mean(c["human_only"]["half_width"])
            pair_table.add(c["measure"], c["n"], c["design"], est, float(np.mean(r["coverage"])),
                           f"{min(r['coverage']):.3f}-{max(r['coverage']):.3f}",
                           r["simultaneous_bonferroni"], r["holm_no_false_order"], float(ratio))  # fmt: skip
    judge_table = Table(["estimator", "n", "mean coverage", "min", "max", "half-width"],
                        title="LLMJudge prevalence (grade >= 2), 90% intervals over 33 judges")  # fmt: skip
    for est, _, _ in ESTIMATORS:
        for n in SIZES:
            cov = [j[f"{est}_{n}"]["coverage"] for j in judges["judges"]]
            width = np.mean([j[f"{est}_{n}"]["half_width"] for j in judges["judges"]])
            judge_table.add(est, n, float(np.mean(cov)), min(cov), max(cov), float(width))
    query_table = Table(["queries", "coverage", "systems min-max", "differences min-max"],
                        title="DL20 query level nDCG@10 (finite-population PPI++, t quantiles)")  # fmt: skip
    for c in queries["cells"]:
        query_table.add(c["n_queries"], c["coverage_mean"],
                        f"{min(c['coverage_systems']):.3f}-{max(c['coverage_systems']):.3f}",
                        f"{min(c['coverage_differences']):.3f}-{max(c['coverage_differences']):.3f}")  # fmt: skip
    return [pair_table, judge_table, query_table]


def main() -> None:
    """Run the three settings, print tables, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--judge-reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    runs, pool, grades = dl20()
    confusion = llm_confusion()
    pairs = dl20_pairs(runs, pool, grades, confusion, args.reps, rng)
    judges = llmjudge(args.judge_reps, rng)
    queries = dl20_queries(runs, pool, grades, confusion, args.reps, rng)
    summary = summarise(pairs, judges, queries)
    result = {
        "benchmark": "ppi_coverage",
        "alpha": ALPHA,
        "reps": args.reps,
        "judge_reps": args.judge_reps,
        "seed": args.seed,
        "llm_confusion": confusion.tolist(),
        "dl20_pairs": pairs,
        "llmjudge": judges,
        "dl20_queries": queries,
        "summary": summary,
        "seconds": round(time.perf_counter() - start, 1),
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
    }
    write_results(RESULTS, result)
    print_tables(tables(result))
    print("\nsummary:", json.dumps(summary, indent=1))
    print(f"\n{result['seconds']} s; written to {RESULTS}")


if __name__ == "__main__":
    main()
