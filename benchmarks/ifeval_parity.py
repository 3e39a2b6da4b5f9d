"""Agreement of docket's fmt checkers with IFEval's verdicts, per instruction type.

Input: JSONL records with ``instruction_id_list``, ``kwargs`` (IFEval's input_data) and
``response`` plus ``follow_instruction_list`` (IFEval's eval_results_strict), one record
per response. The default is the sample shipped with the tests (real GPT-4 responses
from IFEval's repository). Each instruction becomes docket rules
(``docket.adherence.rules.ifeval``); docket agrees when "every rule passes" equals
IFEval's verdict. An undecided docket check (e.g. no language detectable) is counted
apart, as a disagreement.

    .venv/bin/python benchmarks/ifeval_parity.py [--data merged.jsonl]

Prints a table per type and writes ``benchmarks/results/ifeval_parity.json``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from docket.adherence.record import Record, Turn
from docket.adherence.rules.ifeval import IFEVAL_TYPES, ifeval_rules
from docket.adherence.verify.fmt import run_fmt

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "tests" / "adherence" / "data" / "ifeval_gpt4_sample.jsonl"


def docket_verdict(instruction: str, kwargs: dict, response: str) -> bool | None:
    """True/False when every rule passes / one fails; None when a check is undecided."""
    record = Record(id="r", turns=[Turn(role="assistant", text=response)])
    outcomes = [run_fmt(rule, record) for rule in ifeval_rules(instruction, kwargs)]
    if any(o.undecided for o in outcomes):
        return None
    return all(o.passed for o in outcomes)


def compare(path: Path) -> dict[str, dict[str, int]]:
    """Per type: instances, agreements, undecided, and the disagreement directions."""
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        triples = zip(
            item["instruction_id_list"],
            item["kwargs"],
            item["follow_instruction_list"],
            strict=True,
        )
        for instruction, kwargs, ifeval in triples:
            ours = docket_verdict(instruction, kwargs, item["response"])
            row = table[instruction]
            row["n"] += 1
            row["agree"] += ours == ifeval
            row["undecided"] += ours is None
            row["docket_pass_ifeval_fail"] += ours is True and not ifeval
            row["docket_fail_ifeval_pass"] += ours is False and ifeval
    return {k: dict(v) for k, v in sorted(table.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/ifeval_parity.json")
    args = parser.parse_args()
    table = compare(args.data)
    total = sum(r["n"] for r in table.values())
    agree = sum(r["agree"] for r in table.values())
    print(f"{'type':48} {'n':>4} {'agree':>6} {'undec':>6}")
    for name, row in table.items():
        print(f"{name:48} {row['n']:>4} {row['agree'] / row['n']:>6.1%} {row['undecided']:>6}")
    print(f"{'all':48} {total:>4} {agree / max(total, 1):>6.1%}")
    missing = [t for t in IFEVAL_TYPES if t not in table]
    result = {
        "data": str(args.data.relative_to(ROOT) if args.data.is_relative_to(ROOT) else args.data),
        "instances": total,
        "agreement": agree / max(total, 1),
        "by_type": table,
        "types_without_instances": missing,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"types without instances in this data: {len(missing)}; wrote {args.out}")


if __name__ == "__main__":
    main()
