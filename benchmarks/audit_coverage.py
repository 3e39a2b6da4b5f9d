"""Coverage and width of the label-quality certificate's intervals (``docket.audit``).

Setting: the LLMJudge test set (``../shared/data/llmjudge``, 4,423 pairs with human grades,
relevant = grade >= 2). Two of the challenge's judge files stand in for DREAM's two agents:
a pair on which both binarised labels agree gets that label automatically (strata: the
agreed label), a pair on which they disagree is escalated and decided by the human label
(the census). Per replicate, an audit of 60, 200 or 400 pairs is drawn as ``draw_audit``
draws it (proportional allocation, at least one pair per stratum, a simple random sample
within each stratum) and answered with the human labels. Checked:

- the stratified interval of the automatic labels' accuracy
  (:func:`docket.audit.proportions.stratified_proportion`) against their true accuracy
  over the whole population, at nominal 0.90 and 0.95;
- the balanced-accuracy interval of the final labels
  (:func:`docket.audit.estimates.final_label_estimates`) against the replicate's true
  balanced accuracy (final labels: human on audited and escalated pairs, automatic
  elsewhere), at 0.90.

Usage:
    .venv/bin/python benchmarks/audit_coverage.py [--reps 1000] [--judge-pairs 8] [--seed 0]

Prints a table and writes benchmarks/results/audit_coverage.json.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np
from _table import Table, print_tables, write_results

from docket.audit.estimates import Sample, final_label_estimates
from docket.audit.proportions import (
    Stratum,
    allocate,
    minimum_per_stratum,
    stratified_proportion,
)
from docket.ir.formats import read_qrels

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "llmjudge"
OUT = Path(__file__).resolve().parent / "results" / "audit_coverage.json"
SIZES = (60, 200, 400)


def _labels(path: Path, keys: list[tuple[str, str]]) -> np.ndarray:
    found = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 4:
            found[(parts[0], parts[2])] = min(max(int(float(parts[3])), 0), 3)
    return np.array([found.get(k, 0) >= 2 for k in keys], dtype=int)


def _balanced(truth: np.ndarray, final: np.ndarray) -> float:
    recalls = [float(np.mean(final[truth == c] == c)) for c in (1, 0)]
    return sum(recalls) / 2


def one_pair(truth, first, second, reps, rng) -> dict:
    """Coverage over ``reps`` audits of every size for one pair of judges."""
    agreed = first == second
    strata = {c: np.flatnonzero(agreed & (first == c)) for c in (1, 0)}
    sizes = {str(c): len(idx) for c, idx in strata.items()}
    census = truth[~agreed]
    accuracy = float(np.mean(first[agreed] == truth[agreed]))
    row = {"automatic": int(agreed.sum()), "escalated": int((~agreed).sum()), "accuracy": accuracy}
    for n in SIZES:
        split = allocate(sizes, n, minimum=minimum_per_stratum(sizes, n))
        hits90 = hits95 = hits_ba = 0
        widths = []
        for _ in range(reps):
            chosen = {c: rng.choice(idx, split[str(c)], replace=False) for c, idx in strata.items()}
            cells = [
                Stratum(str(c), len(strata[c]), len(chosen[c]),
                        int(np.sum(truth[chosen[c]] == c)))
                for c in (1, 0)
            ]  # fmt: skip
            i90 = stratified_proportion(cells, 0.90)
            i95 = stratified_proportion(cells, 0.95)
            hits90 += i90.low <= accuracy <= i90.high
            hits95 += i95.low <= accuracy <= i95.high
            widths.append((i90.high - i90.low) / 2)
            final = first.copy()
            final[~agreed] = census
            samples = []
            for c in (1, 0):
                final[chosen[c]] = truth[chosen[c]]
                units = [(int(truth[i]), c) for i in chosen[c]]
                samples.append(Sample(len(strata[c]), units))
            ba = final_label_estimates(list(map(int, census)), samples, 0.90).balanced_accuracy
            hits_ba += ba.low <= _balanced(truth, final) <= ba.high
        row[f"n{n}"] = {
            "coverage_90": hits90 / reps, "coverage_95": hits95 / reps,
            "half_width_90": float(np.mean(widths)), "balanced_coverage_90": hits_ba / reps,
        }  # fmt: skip
    return row


def run(reps: int, judge_pairs: int, seed: int) -> dict:
    """Measure coverage for ``judge_pairs`` random pairs of judge files."""
    human = read_qrels(DATA / "human_qrels.txt")
    keys = [(q, d) for q in sorted(human) for d in sorted(human[q])]
    truth = np.array([human[q][d] >= 2 for q, d in keys], dtype=int)
    files = sorted((DATA / "submissions").glob("*.txt"))
    rng = np.random.default_rng(seed)
    picked = [tuple(rng.choice(len(files), 2, replace=False)) for _ in range(judge_pairs)]
    rows = []
    for a, b in picked:
        row = one_pair(truth, _labels(files[a], keys), _labels(files[b], keys), reps, rng)
        rows.append({"judges": f"{files[a].stem} + {files[b].stem}", **row})
    return {"reps": reps, "seed": seed, "pairs": len(keys), "rows": rows}


def tables(result: dict) -> list[Table]:
    """The coverage table of one result document: one row per judge pair and audit size."""
    columns = ["judges", "audit", "automatic", "escalated", "accuracy", "cov 0.90",
               "cov 0.95", "half-width 0.90", "balanced acc. cov 0.90"]  # fmt: skip
    title = f"Certificate coverage on LLMJudge ({result['reps']} audits per row)"
    table = Table(columns, title=title)
    for r in result["rows"]:
        for n in SIZES:
            c = r[f"n{n}"]
            table.add(
                r["judges"], n, r["automatic"], r["escalated"], r["accuracy"],
                c["coverage_90"], c["coverage_95"], c["half_width_90"],
                c["balanced_coverage_90"],
            )  # fmt: skip
    means = {
        key: float(np.mean([r[f"n{n}"][key] for r in result["rows"] for n in SIZES]))
        for key in ("coverage_90", "coverage_95", "balanced_coverage_90")
    }
    table.notes.append(
        f"mean coverage: accuracy {means['coverage_90']:.3f} at 0.90, "
        f"{means['coverage_95']:.3f} at 0.95; balanced accuracy {means['balanced_coverage_90']:.3f}"
        " at 0.90"
    )
    return [table]


def main() -> None:
    """Run, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--judge-pairs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    result = run(args.reps, args.judge_pairs, args.seed)
    result["seconds"] = round(time.perf_counter() - start, 1)
    result["machine"] = platform.platform()
    print_tables(tables(result))
    write_results(OUT, result)


if __name__ == "__main__":
    main()
