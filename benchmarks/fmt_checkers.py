"""Speed of every fmt checker, and of the 8 fmt rules of the example rule set.

Each checker runs on a realistic input (an assistant turn of about 120 words, or an
8-turn dialogue for record-level checkers); the median of 7 repeats of N calls is
reported in microseconds per call.

Usage:
    .venv/bin/python benchmarks/fmt_checkers.py [--number 2000]

Prints a table and writes benchmarks/results/fmt_checkers.json.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import timeit
from pathlib import Path

from _table import Table, print_tables, write_results

from docket.adherence.checks import CATALOGUE, validate_params
from docket.adherence.record import Record, Turn, read_records
from docket.adherence.rules import load_rules
from docket.adherence.verify.fmt import run_fmt

ROOT = Path(__file__).resolve().parents[1]
TURN = (
    "Good morning, and I'm sorry your train was cancelled. Cancelled journeys are refunded in full, "
    "so you will get all of your money back. Could you tell me your booking reference? It starts with "
    "NR and has five digits. Once I have it, I will start the refund straight away and you will see the "
    "money on your card within five working days. If you booked with a railcard, the discount is "
    "refunded too. You do not need to send the paper tickets back. **Please note** that seat "
    "reservations are refunded automatically. Is there anything else I can help you with today?\n\n"
    "- Refund: full\n- Time: five working days\n1. Send the reference\n2. Wait for the e-mail"
)
DIALOGUE = Record(
    id="bench",
    turns=[
        Turn(role="user" if i % 2 == 0 else "assistant", text=f"{TURN[: 60 + 40 * i]} {i}")
        for i in range(8)
    ],
    fields={"scenario": "refund"},
)
PARAMS = {
    "word_count": {"max": 120}, "sentence_count": {"max": 10}, "paragraph_count": {"max": 3},
    "char_count": {"max": 2000}, "letter_count": {"letter": "e", "min": 3}, "uppercase_word_count": {"max": 3},
    "keywords_required": {"keywords": ["refund", "reference"]}, "keywords_forbidden": {"keywords": ["damn", "bot"]},
    "keyword_count": {"keyword": "refund", "max": 5}, "regex_must_match": {"pattern": r"NR\d{0,5}"},
    "regex_must_not_match": {"pattern": r"\b(?:lol|omg)\b", "ignore_case": True}, "starts_with": {"text": "Good"},
    "ends_with": {"text": "e-mail"}, "letter_case": {"case": "lower"}, "punctuation_banned": {"chars": "!"},
    "bullet_list": {"min": 1}, "numbered_list": {"min": 1, "sequential": True}, "highlighted_sections": {"min": 1},
    "placeholders": {"max": 0}, "json_valid": {}, "json_schema": {"schema": {"type": "object"}},
    "urls": {"present": False}, "emails": {"present": False}, "phone_numbers": {"present": False},
    "turn_count": {"min": 4, "max": 12}, "role_alternation": {"first_role": "user"},
    "no_repeated_turns": {"threshold": 0.9}, "fields_required": {"names": ["scenario"]},
    "title": {}, "section_count": {"max": 3}, "separated_responses": {},
    "paragraph_first_word": {"paragraph": 1, "word": "good"}, "postscript": {},
    "wrapped_in": {}, "response_language": {"language": "en"},
}  # fmt: skip


def per_call_us(fn, number: int) -> float:  # type: ignore[no-untyped-def]
    """Median over 7 repeats of the mean time per call, in microseconds."""
    return statistics.median(timeit.repeat(fn, number=number, repeat=7)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="calls per repeat")
    args = parser.parse_args()
    missing = set(CATALOGUE) - set(PARAMS)
    if missing:
        raise SystemExit(f"no benchmark input for: {sorted(missing)}")
    rows = {}
    for name, found in sorted(CATALOGUE.items()):
        params = validate_params(name, PARAMS[name])
        target = DIALOGUE if found.level == "record" else TURN
        rows[name] = per_call_us(lambda f=found, t=target, p=params: f.fn(t, p), args.number)
    ruleset = load_rules(ROOT / "examples" / "sop" / "rules.yaml")
    record = read_records(ROOT / "examples" / "sop" / "dialogues.jsonl")[0]
    fmt_rules = ruleset.by_tier("fmt")
    all_fmt = per_call_us(
        lambda: [run_fmt(rule, record) for rule in fmt_rules], max(1, args.number // 10)
    )
    result = {
        "per_checker_us": rows,
        "example_fmt_rules_us": all_fmt,
        "fmt_rules": len(fmt_rules),
        "number": args.number,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    write_results(ROOT / "benchmarks" / "results" / "fmt_checkers.json", result)
    print_tables(tables(result))


def tables(result: dict) -> list[Table]:
    """Microseconds per call of each checker; the whole example rule set as a note."""
    rows = result["per_checker_us"]
    table = Table(["checker", "us/call"], [[name, value] for name, value in rows.items()])
    table.notes += [
        f"all {result['fmt_rules']} fmt rules of examples/sop/rules.yaml on one record: "
        f"{result['example_fmt_rules_us']:.1f} us",
        f"slowest checker: {max(rows, key=rows.get)} {max(rows.values()):.1f} us; "
        f"median {statistics.median(rows.values()):.1f} us",
    ]
    return [table]


if __name__ == "__main__":
    main()
