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
        artefacts = item.get("ifeval_artefact") or [None] * len(item["instruction_id_list"])
        rows = zip(
            item["instruction_id_list"],
            item["kwargs"],
            item["follow_instruction_list"],
            artefacts,
            strict=True,
        )
        for instruction, kwargs, ifeval, artefact in rows:
            ours = docket_verdict(instruction, kwargs, item["response"])
            row = table[instruction]
            if artefact:  # IFEval's verdict is not about this argument: reported apart
                row["ifeval_artefacts"] += 1
                continue
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
    total = sum(r.get("n", 0) for r in table.values())
    agree = sum(r.get("agree", 0) for r in table.values())
    artefacts = sum(r.get("ifeval_artefacts", 0) for r in table.values())
    print(f"{'type':48} {'n':>4} {'agree':>6} {'undec':>6} {'artefacts':>9}")
    for name, row in table.items():
        share = f"{row['agree'] / row['n']:.1%}" if row.get("n") else "-"
        row_artefacts = row.get("ifeval_artefacts", 0)
        print(
            f"{name:48} {row.get('n', 0):>4} {share:>6} {row.get('undecided', 0):>6} {row_artefacts:>9}"
        )
    print(
        f"{'all':48} {total:>4} {agree / max(total, 1):>6.1%}   (+{artefacts} IFEval artefacts left out)"
    )
    missing = [t for t in IFEVAL_TYPES if t not in table]
    result = {
        "data": str(args.data.relative_to(ROOT) if args.data.is_relative_to(ROOT) else args.data),
        "instances": total,
        "ifeval_artefacts_left_out": artefacts,
        "agreement": agree / max(total, 1),
        "by_type": table,
        "types_without_instances": missing,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"types without instances in this data: {len(missing)}; wrote {args.out}")


if __name__ == "__main__":
    main()
