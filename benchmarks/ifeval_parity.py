"""Agreement of docket's fmt checkers with IFEval's verdicts, per instruction type.

Input: JSONL records with ``instruction_id_list``, ``kwargs`` (IFEval's input_data) and
``response`` plus ``follow_instruction_list`` (IFEval's eval_results_strict), one record
per response. The default is the sample shipped with the tests (real GPT-4 responses
from IFEval's repository). Each instruction becomes docket rules
(``docket.adherence.rules.ifeval``); docket agrees when "every rule passes" equals
IFEval's verdict. An undecided docket check (e.g. no language detectable) is counted
apart, as a disagreement.

``--ifeval DIR`` reads IFEval's published files instead: ``input_data`` (the archived
set that line-aligns with the responses), ``responses_gpt4.jsonl`` and ``verdicts.jsonl``
(IFEval's strict verdict per instruction; ``nondeterministic`` ones, made with a random
letter, are the artefacts). The default runs the shipped sample and, when the shared data
folder is beside the project, all 541 prompts (834 instructions) from it.

    .venv/bin/python benchmarks/ifeval_parity.py [--data merged.jsonl | --ifeval DIR]

Prints a table per type and writes ``benchmarks/results/ifeval_parity.json`` (and
``ifeval_parity_full.json`` for the full set).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from _table import Table, print_tables, write_results

from docket.adherence.record import Record, Turn
from docket.adherence.rules.ifeval import IFEVAL_TYPES, ifeval_rules
from docket.adherence.verify.fmt import run_fmt

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "tests" / "adherence" / "data" / "ifeval_gpt4_sample.jsonl"
SHARED = ROOT.parent / "shared" / "data" / "ifeval"
RESULTS = ROOT / "benchmarks" / "results"


def docket_verdict(instruction: str, kwargs: dict, response: str) -> bool | None:
    """True/False when every rule passes / one fails; None when a check is undecided."""
    record = Record(id="r", turns=[Turn(role="assistant", text=response)])
    outcomes = [run_fmt(rule, record) for rule in ifeval_rules(instruction, kwargs)]
    if any(o.undecided for o in outcomes):
        return None
    return all(o.passed for o in outcomes)


def read_jsonl(path: Path) -> list[dict]:
    """The records of a merged JSONL file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def read_ifeval_dir(folder: Path) -> list[dict]:
    """IFEval's published prompts, GPT-4 responses and strict verdicts as merged records."""
    prompts = read_jsonl(folder / "input_data_gpt4_20231107_145030.jsonl")
    responses = read_jsonl(folder / "responses_gpt4.jsonl")
    records = [
        {
            **prompt,
            "response": reply["response"],
            "follow_instruction_list": [],
            "ifeval_artefact": [],
        }
        for prompt, reply in zip(prompts, responses, strict=True)
    ]
    for verdict in read_jsonl(folder / "verdicts.jsonl"):
        record = records[verdict["response_index"]]
        assert (
            record["instruction_id_list"][verdict["instruction_index"]] == verdict["instruction_id"]
        )
        record["follow_instruction_list"].append(verdict["strict"])
        record["ifeval_artefact"].append(verdict["nondeterministic"])
    return records


def compare(path: Path) -> dict[str, dict[str, int]]:
    """Per type: instances, agreements, undecided, and the disagreement directions."""
    return compare_records(read_jsonl(path))


def compare_records(records: list[dict]) -> dict[str, dict[str, int]]:
    """:func:`compare` over records already read."""
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for item in records:
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


def report(name: str, records: list[dict], out: Path) -> dict:
    """Print the table of one data set and write its JSON."""
    table = compare_records(records)
    total = sum(r.get("n", 0) for r in table.values())
    agree = sum(r.get("agree", 0) for r in table.values())
    artefacts = sum(r.get("ifeval_artefacts", 0) for r in table.values())
    result = {
        "data": name,
        "instances": total,
        "ifeval_artefacts_left_out": artefacts,
        "agreement": agree / max(total, 1),
        "by_type": table,
        "types_without_instances": [t for t in IFEVAL_TYPES if t not in table],
    }
    write_results(out, result)
    print_tables(tables(result))
    print(f"wrote {out}")
    return result


def tables(result: dict) -> list[Table]:
    """Agreement with IFEval's own checkers per instruction type."""
    table = Table(["type", "n", "agree", "undecided", "artefacts"], title=result["data"])
    for kind, row in result["by_type"].items():
        share = f"{row['agree'] / row['n']:.1%}" if row.get("n") else "-"
        table.add(kind, row.get("n", 0), share, row.get("undecided", 0),
                  row.get("ifeval_artefacts", 0))  # fmt: skip
    table.add("all", result["instances"], f"{result['agreement']:.1%}", None,
              result["ifeval_artefacts_left_out"])  # fmt: skip
    table.notes.append(
        f"types without instances in this data: {len(result['types_without_instances'])}"
    )
    return [table]


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--data", type=Path, help="merged JSONL records")
    source.add_argument("--ifeval", type=Path, help="folder of IFEval's published files")
    parser.add_argument("--out", type=Path, help="JSON to write (with --data or --ifeval)")
    args = parser.parse_args()
    if args.data:
        report(_shown(args.data), read_jsonl(args.data), args.out or RESULTS / "ifeval_parity.json")
    elif args.ifeval:
        out = args.out or RESULTS / "ifeval_parity_full.json"
        report(_shown(args.ifeval), read_ifeval_dir(args.ifeval), out)
    else:
        report(_shown(DEFAULT), read_jsonl(DEFAULT), RESULTS / "ifeval_parity.json")
        if SHARED.is_dir():
            full = RESULTS / "ifeval_parity_full.json"
            report("../shared/data/ifeval (541 prompts)", read_ifeval_dir(SHARED), full)


if __name__ == "__main__":
    main()
