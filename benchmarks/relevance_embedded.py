"""The relevance methods on the embedded instruct models, on the 80 TREC DL 2021 pairs.

Run: ``python benchmarks/relevance_embedded.py [--models qwen-0.5b,qwen-1.5b]
[--methods dream,single,graded,lara,majority] [--limit N] [--samples 3]``

For each embedded model and method it reports, on ``../shared/data/trec_dl21_dev.jsonl``:

- first-reply parse rate (replies readable without the re-ask), calls, tokens and seconds
  per pair (seconds only mean something when ``uncached_calls`` is every call: delete
  ``.cache/relevance_embedded.sqlite`` for a timed run);
- balanced accuracy with escalations answered by gold (simulated humans), escalation
  rate, balanced accuracy of the automatic labels alone, and Cohen's kappa of the final
  labels against gold;
- for DREAM, how pairs ended: decided in round 1, decided in round 2, escalated; and the
  share of debate turns after round 1 that engaged (answered or cited the other side, or
  changed their own turn: ``docket.relevance.engagement``).

Pairs are judged one at a time (the embedded model runs one call at a time anyway), so
seconds per pair are wall time per pair. The load average is recorded: on a shared machine
the speed figures vary, the accuracy figures do not (greedy decoding). Writes
``benchmarks/results/relevance_embedded.json`` (merged per model, so models can be run
separately; ``--out`` writes elsewhere, e.g. for a ``--limit`` run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections import Counter
from pathlib import Path

from _table import Table, print_tables

from docket.agreement import cohen_kappa
from docket.fanout import bounded_map
from docket.llm import Model
from docket.llm.cache import ResponseCache
from docket.relevance import JudgeOptions, Judgment, Pair, build_judge
from docket.relevance.engagement import engagement_share
from docket.relevance.metrics import class_recalls

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_dl21_dev.jsonl"
RESULTS = Path(__file__).parent / "results" / "relevance_embedded.json"
CACHE = Path(__file__).resolve().parents[1] / ".cache" / "relevance_embedded.sqlite"
METHODS = {
    "dream": {"method": "dream"},
    "single": {"method": "single"},
    "graded": {"method": "single", "scale": "graded"},
    "lara": {"method": "lara"},
    "majority": {"method": "majority"},
}


def load_pairs(limit: int | None) -> list[Pair]:
    """The DL21 pairs, interleaved by gold label so a prefix of them stays balanced."""
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    pos = [r for r in rows if r["label"] == 1]
    neg = [r for r in rows if r["label"] == 0]
    mixed = [r for pair in zip(pos, neg, strict=False) for r in pair]
    mixed += pos[len(neg) :] + neg[len(pos) :]
    pairs = [Pair(r["qid"], r["query"], r["docid"], r["passage"], r["label"]) for r in mixed]
    return pairs[:limit] if limit else pairs


def first_reply_counts(judgments: list[Judgment]) -> tuple[int, int]:
    """(model replies asked for, first replies that could not be parsed)."""
    turns = [t for j in judgments for t in j.transcript]
    return len(turns), sum(1 for t in turns if t.get("parse_failures", 0) >= 1)


def score(name: str, judgments: list[Judgment], pairs: list[Pair], seconds: float) -> dict:
    """Every number of the report for one method."""
    gold = {p.key: p.label for p in pairs}
    final = [j.label if j.label is not None else gold[(j.qid, j.docid)] for j in judgments]
    truth = [gold[(j.qid, j.docid)] for j in judgments]
    auto = [(j.label, gold[(j.qid, j.docid)]) for j in judgments if j.label is not None]
    turns, first_failed = first_reply_counts(judgments)
    recalls = class_recalls(final, truth)
    auto_recalls = class_recalls([a for a, _ in auto], [g for _, g in auto]) if auto else None
    ended = Counter("escalated" if j.label is None else f"round {j.rounds}" for j in judgments)
    engaged, later = engagement_share(j.usage for j in judgments)
    return {
        "method": name,
        "pairs": len(judgments),
        "first_reply_parse_rate": 1 - first_failed / turns if turns else None,
        "replies": turns,
        "calls_per_pair": sum(j.usage.get("calls", 0) for j in judgments) / len(judgments),
        "tokens_per_pair": sum(
            j.usage.get("prompt_tokens", 0) + j.usage.get("completion_tokens", 0) for j in judgments
        )
        / len(judgments),
        "seconds_per_pair": seconds / len(judgments),
        "balanced_accuracy": recalls.balanced_accuracy,
        "irrelevant_recall": recalls.irrelevant_recall,
        "relevant_recall": recalls.relevant_recall,
        "escalation_rate": sum(j.label is None for j in judgments) / len(judgments),
        "automatic_balanced_accuracy": auto_recalls.balanced_accuracy if auto_recalls else None,
        "kappa": cohen_kappa(final, truth),
        "ended": dict(sorted(ended.items())),
        "later_turns": later,
        "engaged_share": engaged / later if later else None,
    }


async def run_method(model: Model, name: str, pairs: list[Pair], samples: int) -> dict:
    """Judge every pair with one method and score it."""
    options = JudgeOptions(**METHODS[name], samples=samples)
    judge = build_judge(options, lambda _name=None: model)
    started = time.perf_counter()
    done = 0

    def progress(_index: int, _judgment: Judgment) -> None:
        nonlocal done
        done += 1
        if done % 10 == 0:
            print(f"  {model.name} {name}: {done}/{len(pairs)}", flush=True)

    judgments = await bounded_map(pairs, judge.judge, limit=1, on_done=progress)
    judgments = judge.finalize(judgments)
    return score(name, judgments, pairs, time.perf_counter() - started)


COLUMNS = {
    "model": "model", "method": "method", "first_reply_parse_rate": "parse1",
    "calls_per_pair": "calls", "tokens_per_pair": "tok", "seconds_per_pair": "s/pair",
    "balanced_accuracy": "bAcc", "escalation_rate": "esc",
    "automatic_balanced_accuracy": "autoBA", "kappa": "kappa", "engaged_share": "engaged",
    "ended": "ended",
}  # fmt: skip


def _table(rows: list[dict]) -> Table:
    """One line per model and method."""
    return Table(list(COLUMNS.values()), [[r.get(k) for k in COLUMNS] for r in rows])


def tables(result: dict) -> list[Table]:
    """The stored results, one line per model and method."""
    rows = [{"model": short, **row} for short, entry in result.items()
            for row in entry["methods"].values()]  # fmt: skip
    return [_table(rows)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="qwen-0.5b,qwen-1.5b")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--limit", type=int, default=None, help="first N pairs (balanced)")
    parser.add_argument("--samples", type=int, default=3, help="majority votes per pair")
    parser.add_argument("--out", type=Path, default=RESULTS, help="JSON to merge results into")
    args = parser.parse_args()
    pairs = load_pairs(args.limit)
    rows = []
    for short in args.models.split(","):
        # A response cache makes an interrupted run resume where it stopped (greedy
        # decoding: a cached answer is the answer the model gives).
        model = Model(f"local:{short}", cache=ResponseCache(CACHE))
        for name in args.methods.split(","):
            result = asyncio.run(run_method(model, name, pairs, args.samples))
            rows.append({"model": short, **result})
            print_tables([_table(rows[-1:])])
            save(args.out, short, len(pairs), rows[-1])  # after each method: keep the work
    print()
    print_tables([_table(rows)])
    print(f"wrote {args.out}")


def save(path: Path, short: str, n_pairs: int, row: dict) -> None:
    """Merge one method's result into the JSON file ``path``, under its model."""
    data = json.loads(path.read_text()) if path.exists() else {}
    entry = data.setdefault(short, {"methods": {}})
    entry.update(
        pairs=n_pairs,
        threads=os.environ.get("DOCKET_LOCAL_THREADS", "all cores"),
        load_average=os.getloadavg(),
    )
    entry["methods"][row["method"]] = row
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
