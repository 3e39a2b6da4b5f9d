"""RE-AD on the embedded model (``--model local``): extraction, verdict share, RE-AD-Eval.

Three measurements, each through the CLI a user would run, on ``examples/sop``:

1. ``docket rules extract`` on the example SOP: rules produced by tier, wall time, calls;
2. ``docket verify`` of the example dialogues against the example rules: the share of
   sim/sub results that get a verdict (pass or fail) rather than needs_review;
3. ``docket bench readeval build`` (the same model generates sim/sub violations and
   judges them, so the build warns about self-preference) and ``run`` in atomic and
   holistic mode: precision, recall and F1 per tier and persona.

Small samples keep it to about 20 minutes on a busy 2-core machine; the sizes are
recorded. The fmt tier scoring P = R = 1 only shows routing: its ground truth comes
from the same checkers.

    nice .venv/bin/python benchmarks/adherence_local.py [--samples 6] [--model local]

Writes ``benchmarks/results/adherence_local.json`` (and the run report beside it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _table import Table, print_tables, write_results

ROOT = Path(__file__).resolve().parents[1]
SOP = ROOT / "examples" / "sop"


def docket(*args: str, timeout: float) -> tuple[int, float, str]:
    """Run ``python -m docket ARGS``; return (exit code, seconds, stderr tail)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "docket", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    tail = "\n".join((done.stderr or "").strip().splitlines()[-3:])
    return done.returncode, time.perf_counter() - started, tail


def extract(model: str, work: Path) -> dict[str, Any]:
    """Rules extracted from the example SOP, by tier, with time and calls."""
    rules, report = work / "extracted.yaml", work / "extract_report.json"
    code, seconds, tail = docket(
        "rules", "extract", str(SOP / "dialogue_sop.md"), "-o", str(rules), "--model", model,
        "--cache", "off", "--report", str(report), timeout=1800,
    )  # fmt: skip
    result: dict[str, Any] = {"exit_code": code, "seconds": round(seconds, 1), "stderr": tail}
    if report.exists():
        data = json.loads(report.read_text())
        result.update({k: data[k] for k in ("sections", "candidates", "kept", "llm_calls")})
        result["sections_skipped"] = len(data["sections_skipped"])
    if rules.exists():
        from docket.adherence.rules import load_rules

        result["tiers"] = load_rules(rules).tier_counts()
    return result


def subset_rules(work: Path, per_tier: int | None) -> Path:
    """The example rules, or all fmt rules plus the first ``per_tier`` sim and sub rules."""
    if per_tier is None:
        return SOP / "rules.yaml"
    from docket.adherence.rules import dump_rules, load_rules

    ruleset = load_rules(SOP / "rules.yaml")
    kept = [*ruleset.by_tier("fmt"), *ruleset.by_tier("sim")[:per_tier]]
    kept += ruleset.by_tier("sub")[:per_tier]
    path = work / "rules_subset.yaml"
    dump_rules(ruleset.model_copy(update={"rules": kept}), path)
    return path


def verdict_share(model: str, work: Path, records: int, rules: Path) -> dict[str, Any]:
    """Share of sim/sub results with a verdict on the first example dialogues."""
    out, data = work / "verdicts.jsonl", work / "dialogues.jsonl"
    lines = (SOP / "dialogues.jsonl").read_text(encoding="utf-8").splitlines()
    data.write_text("\n".join(lines[:records]) + "\n", encoding="utf-8")
    code, seconds, tail = docket(
        "verify", "--rules", str(rules), str(data),
        "--model", model, "--cache", "off", "-o", str(out), "--concurrency", "1",
        timeout=1800,
    )  # fmt: skip
    statuses: Counter[str] = Counter()
    for line in out.read_text().splitlines() if out.exists() else []:
        for result in json.loads(line)["results"]:
            if result["tier"] != "fmt":
                statuses[result["status"]] += 1
    total = sum(statuses.values())
    decided = statuses["pass"] + statuses["fail"]
    return {
        "exit_code": code,
        "records": min(records, len(lines)),
        "seconds": round(seconds, 1),
        "llm_results": total,
        "statuses": dict(statuses),
        "share_with_verdict": decided / total if total else None,
        "stderr": tail,
    }


def readeval(
    model: str, samples: int, work: Path, rules: Path, judge: bool, tag: str
) -> dict[str, Any]:
    """Build a small RE-AD-Eval set with the model and score atomic and holistic runs."""
    dataset = work / "readeval.jsonl"
    report = ROOT / f"benchmarks/results/adherence_local{tag}_run.json"
    judging = ["--judge-model", model, "--judge-timeout", "120"] if judge else []
    build_code, build_s, build_tail = docket(
        "bench", "readeval", "build", "--rules", str(rules),
        "--seeds", str(SOP / "dialogues.jsonl"), "-o", str(dataset), "--samples", str(samples),
        "--generator-model", model, *judging, "--max-iterations", "2",
        "--concurrency", "1", "--cache", "off", timeout=3600,
    )  # fmt: skip
    result: dict[str, Any] = {
        "build": {"exit_code": build_code, "seconds": round(build_s, 1), "stderr": build_tail}
    }
    if build_code != 0:
        return result
    header = json.loads(dataset.read_text().splitlines()[0])
    summary = header["summary"]
    result["build"].update(
        attempted=summary["attempted"],
        kept=summary["kept"],
        kept_by=summary["kept_by"],
        dropped_by=summary["dropped_by"],
        judge_checked=header["judge_checked"],
        warnings=header["warnings"],
    )
    run_code, run_s, run_tail = docket(
        "bench", "readeval", "run", "--dataset", str(dataset), "--rules", str(rules),
        "--model", model, "--mode", "atomic", "--mode", "holistic", "--timeout", "120",
        "--concurrency", "1", "--cache", "off", "--out", str(report), timeout=3600,
    )  # fmt: skip
    result["run"] = {"exit_code": run_code, "seconds": round(run_s, 1), "stderr": run_tail}
    if report.exists():
        result["run"]["scores"] = _scores(json.loads(report.read_text()))
    return result


def _scores(report: dict[str, Any]) -> dict[str, Any]:
    def cell(counts: dict[str, Any]) -> dict[str, Any]:
        keys = ("tp", "fp", "fn", "tn", "precision", "recall", "f1")
        return {key: counts.get(key) for key in keys}

    scores: dict[str, Any] = {"scored": report["scored"]}
    for mode, data in report["modes"].items():
        scores[mode] = {
            variant: {
                "overall": cell(data[key]["overall"]),
                "by_tier": {t: cell(c) for t, c in data[key]["by_tier"].items()},
                "by_persona": {p: cell(c) for p, c in data[key]["by_persona"].items()},
            }
            for variant, key in (
                ("nr_as_flag", "needs_review_as_flag"),
                ("nr_as_pass", "needs_review_as_pass"),
            )  # fmt: skip
        }
        scores[mode]["needs_review"] = data["needs_review"]
        scores[mode]["latency_ms"] = data["latency_ms"]
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--samples", type=int, default=6, help="RE-AD-Eval samples to build")
    parser.add_argument("--records", type=int, default=3, help="example dialogues to verify")
    parser.add_argument("--no-judge", action="store_true", help="build without a judge model")
    parser.add_argument("--tag", default="", help="suffix of the result files")
    parser.add_argument(
        "--llm-rules", type=int, default=None, help="keep only N sim and N sub rules (speed)"
    )
    parser.add_argument("--skip", nargs="*", default=[], choices=["extract", "verify", "readeval"])
    args = parser.parse_args()
    result: dict[str, Any] = {
        "model": args.model,
        "samples": args.samples,
        "records": args.records,
        "llm_rules_per_tier": args.llm_rules,
        "judge": not args.no_judge,
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rules = subset_rules(work, args.llm_rules)
        if "extract" not in args.skip:
            result["extract"] = extract(args.model, work)
            print("extract:", json.dumps(result["extract"]))
        if "verify" not in args.skip:
            result["verify"] = verdict_share(args.model, work, args.records, rules)
            print("verify:", json.dumps(result["verify"]))
        if "readeval" not in args.skip:
            result["readeval"] = readeval(
                args.model, args.samples, work, rules, not args.no_judge, args.tag
            )
            print("readeval:", json.dumps(result["readeval"])[:2000])
    out = ROOT / "benchmarks" / "results" / f"adherence_local{args.tag}.json"
    write_results(out, result)
    print_tables(tables(result))
    print(f"wrote {out}")


def tables(result: dict[str, Any]) -> list[Table]:
    """One line per step run (extract, verify, READ-Eval build and run); a run report's modes."""
    if "modes" in result:  # the READ-Eval run report written beside the result
        table = Table(["mode", "samples", "F1 (needs review as flag)", "LLM calls", "p50 ms"])
        for mode, row in result["modes"].items():
            table.add(mode, row["samples"], row["needs_review_as_flag"]["overall"]["f1"],
                      row["llm_calls"], row["latency_ms"]["p50"])  # fmt: skip
        return [table]
    table = Table(["step", "exit", "seconds", "outcome"],
                  title=f"model {result['model']}, started {result['started']}")  # fmt: skip
    if extract := result.get("extract"):
        table.add("extract rules", extract["exit_code"], extract["seconds"],
                  f"{extract.get('kept')} rules kept from {extract.get('sections')} sections, "
                  f"{extract.get('sections_skipped')} skipped")  # fmt: skip
    if verify := result.get("verify"):
        table.add("verify records", verify["exit_code"], verify["seconds"],
                  f"{verify.get('share_with_verdict', 0):.0%} of LLM results with a verdict")  # fmt: skip
    for step, row in (result.get("readeval") or {}).items():
        outcome = (f"{row.get('kept')} of {row.get('attempted')} samples kept" if step == "build"
                   else f"{row.get('scores', {}).get('scored')} samples scored")  # fmt: skip
        table.add(f"READ-Eval {step}", row["exit_code"], row["seconds"], outcome)
    return [table]


if __name__ == "__main__":
    main()
