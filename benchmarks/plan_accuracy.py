"""How close a plan comes to the bill: plan, pilot and caps against actual runs.

A scripted OpenAI-compatible server on loopback (a thread of this process) answers chat
calls after a fixed latency, with labels that depend on the pair, the agent and the round
(so some debates agree in round 1 and some run on), and answers ``POST /tokenize`` with the
same count it reports in each reply's usage (characters / 4), as llama.cpp and vLLM do.
For each data set and method it measures:

- plan without a pilot against the actual run: calls, tokens, cost (prices given);
- plan after ``--pilot 20`` against the actual run of the remaining pairs: calls, tokens,
  wall time;
- cap overshoot: ``--max-calls`` at half the actual calls, with 20 % of the attempts
  failing (HTTP 500, retried): attempts the server saw beyond the cap;
- wall time on 200 pairs (``--latency`` given as the server's time per call): the plan
  and the projection of ``--pilot 20`` against the run, with the server answering after
  0.2 s with 64 calls in flight, and as a 1-slot server (one call at a time, the others
  queue; it reports ``total_slots`` at ``/props`` as llama.cpp's server does).

    python benchmarks/plan_accuracy.py            # both data sets, four methods
    python benchmarks/plan_accuracy.py --quick    # dl21 only

Prints a table and writes benchmarks/results/plan_accuracy.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _table import Table, print_tables, write_results

from docket.jobs import Caps, JobSpec, PlanInputs, plan_job, run_job, run_pilot
from docket.llm.usage import Price

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "plan_accuracy.json"
DATA = {
    "dl21": ROOT.parent / "shared" / "data" / "trec_dl21_dev.jsonl",
    "dl20": ROOT.parent / "shared" / "data" / "dl20" / "trec_dl20_pairs.jsonl",
}
METHODS = {"single": {}, "majority": {"samples": 3}, "dream": {"rounds": 2}, "lara": {}}
PRICE = Price(0.15, 0.075, 0.60)
LATENCY_S = 0.02


def tokens(text: str) -> int:
    """The server's own token count (what its /tokenize and its usage both report)."""
    return max(1, len(text) // 4)


class Server:
    """The scripted server's state: attempts seen, faults to inject, latency, slots."""

    def __init__(self, latency_s: float = LATENCY_S, slots: int = 0) -> None:
        self.attempts = 0
        self.fault_every = 0
        self.lock = threading.Lock()
        self.latency_s = latency_s
        self.slots = slots
        self.slot = threading.Semaphore(slots) if slots else None

    def props(self) -> tuple[int, dict[str, Any]]:
        """``GET /props``: the slots, as llama.cpp's server reports them (404 if unlimited)."""
        return (200, {"total_slots": self.slots}) if self.slots else (404, {})

    def wait(self) -> None:
        """The server's time for one call; with slots, calls queue for a free one."""
        if self.slot is None:
            time.sleep(self.latency_s)
            return
        with self.slot:
            time.sleep(self.latency_s)

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if "messages" not in body:  # /tokenize
            text = body.get("content") or body.get("prompt") or ""
            return 200, {"tokens": list(range(tokens(text)))}
        with self.lock:
            self.attempts += 1
            fault = self.fault_every and self.attempts % self.fault_every == 0
        self.wait()
        if fault:
            return 500, {"error": {"message": "injected fault"}}
        prompt = "\n".join(m["content"] for m in body["messages"])
        text = _answer(prompt, body.get("max_tokens", 256))
        usage = {"prompt_tokens": tokens(prompt), "completion_tokens": tokens(text)}
        choice = {"index": 0, "message": {"role": "assistant", "content": text},
                  "finish_reason": "stop"}  # fmt: skip
        return 200, {"id": "x", "object": "chat.completion", "choices": [choice], "usage": usage}


def _answer(prompt: str, max_tokens: int) -> str:
    digest = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    if max_tokens <= 4:  # LARA's yes/no question
        return "Yes" if digest % 3 else "No"
    label = "relevant" if digest % 3 else "irrelevant"
    reasoning = "The chunk answers part of the query. " * (1 + digest % 4)
    return json.dumps({"label": label, "evidence": ["S1"], "reasoning": reasoning.strip()})


def serve(state: Server) -> tuple[ThreadingHTTPServer, str]:
    """Start the server; returns it and its /v1 base URL."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            self._send(*(state.props() if self.path == "/props" else (404, {})))

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            self._send(*state.reply(json.loads(self.rfile.read(length) or b"{}")))

        def _send(self, status: int, body: dict[str, Any]) -> None:
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *_args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/v1"


def serve_apart(state: Server) -> tuple[str, multiprocessing.Process]:
    """Start the server in a process of its own; returns its /v1 base URL and the process."""
    ready: multiprocessing.Queue = multiprocessing.Queue()
    process = multiprocessing.Process(target=_serve_forever, args=(state, ready), daemon=True)
    process.start()
    return ready.get(timeout=30), process


def _serve_forever(state: Server, ready: multiprocessing.Queue) -> None:
    httpd, base = serve(state)
    ready.put(base)
    threading.Event().wait()


def _err(planned: float, actual: float) -> float | None:
    return None if not actual else round(100 * (planned - actual) / actual, 1)


def measure(data: str, method: str, base: str, state: Server, work: Path) -> dict[str, Any]:
    """Plan, run, pilot and cap one method on one data set."""
    model = f"openai-compatible:{base}#mock?max_in_flight=8"
    pairs = DATA[data]
    inputs = PlanInputs(prices={"input": PRICE.input, "cached_input": PRICE.cached_input,
                                "output": PRICE.output}, latency_s=LATENCY_S)  # fmt: skip
    shared = dict(model=model, db=str(work / f"{data}-{method}.db"), cache="off",
                  **METHODS[method])  # fmt: skip
    spec = JobSpec.of(method, plan_inputs=inputs, **shared)
    plan = plan_job(pairs, spec, job="plain")
    state.fault_every = 0
    run = run_job(pairs, spec, job="plain")
    u = run.usage
    cost = PRICE.cost(u.prompt_tokens, u.cached_prompt_tokens, u.completion_tokens)
    priced = JobSpec.of(method, price=PRICE, **shared)
    report = run_pilot(pairs, priced, 20, job="pilot")
    piloted = run_job(pairs, priced, job="pilot")
    main = piloted.usage
    cap = max(1, u.calls // 2)
    state.fault_every, before = 5, state.attempts
    capped = run_job(pairs, JobSpec.of(method, caps=Caps(calls=cap), **shared), job="cap")
    attempts = state.attempts - before
    state.fault_every = 0
    return {
        "data": data, "method": method, "pairs": plan.todo, "token_source": plan.token_source,
        "plan_calls": plan.calls.expected, "calls": u.calls,
        "plan_calls_err": _err(plan.calls.expected, u.calls),
        "plan_tokens_err": _err(plan.tokens.expected, u.tokens),
        "plan_cost_err": _err(plan.cost.expected, cost),
        "pilot_calls_err": _err(report.projected["calls"].expected, main.calls),
        "pilot_tokens_err": _err(report.projected["prompt_tokens"].expected
                                 + report.projected["completion_tokens"].expected, main.tokens),
        "pilot_wall_err": _err(report.projected["wall_s"].expected, piloted.elapsed_s),
        "cap": cap, "cap_attempts": attempts, "cap_overshoot": attempts - cap,
        "cap_stopped": bool(capped.stopped_by),
    }  # fmt: skip


WALL_PAIRS = 200
WALL = {  # scenario: (server latency, slots, max_in_flight, methods)
    "0.2 s, 64 in flight": (0.2, 0, 64, ("single", "dream")),
    "1-slot server, 0.2 s": (0.2, 1, None, ("single",)),
}


def measure_wall(scenario: str, method: str, work: Path) -> dict[str, Any]:
    """The plan's and the pilot's wall time against the runs, on the 200 pairs of dl20.

    The server runs in a process of its own, so its threads do not share docket's GIL.
    """
    latency, slots, in_flight, _ = WALL[scenario]
    base, server = serve_apart(Server(latency, slots))
    try:
        model = f"openai-compatible:{base}#mock" + (
            f"?max_in_flight={in_flight}" if in_flight else ""
        )
        shared = dict(model=model, db=str(work / f"wall-{slots}-{method}.db"), cache="off",
                      limit=WALL_PAIRS, **METHODS[method])  # fmt: skip
        spec = JobSpec.of(method, plan_inputs=PlanInputs(latency_s=latency), **shared)
        plan = plan_job(DATA["dl20"], spec, job="plain")
        run = run_job(DATA["dl20"], spec, job="plain")
        report = run_pilot(DATA["dl20"], spec, 20, job="pilot")
        main = run_job(DATA["dl20"], spec, job="pilot")
    finally:
        server.terminate()
        server.join()
    planned, projected = plan.wall_s.expected, report.projected["wall_s"].expected
    return {
        "scenario": scenario, "method": method, "pairs": plan.todo, "calls": run.usage.calls,
        "plan_wall_s": round(planned, 2), "wall_s": round(run.elapsed_s, 2),
        "plan_wall_err": _err(planned, run.elapsed_s),
        "pilot_wall_s": round(projected, 2), "main_wall_s": round(main.elapsed_s, 2),
        "pilot_wall_err": _err(projected, main.elapsed_s),
    }  # fmt: skip


def main() -> None:
    """Run every data set and method; print the table and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="dl21 only")
    parser.add_argument("--wall-only", action="store_true", help="only the wall-time rows")
    args = parser.parse_args()
    rows, walls = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for scenario, (*_, methods) in WALL.items():
            for method in methods:
                walls.append(measure_wall(scenario, method, Path(tmp)))
                print(json.dumps(walls[-1]), flush=True)
        if not args.wall_only:
            rows = _bill_rows(["dl21"] if args.quick else list(DATA), Path(tmp))
    if args.wall_only and RESULTS.exists():  # keep the other rows of the last full run
        rows = json.loads(RESULTS.read_text())["rows"]
    # A shared machine slows the server's answers and docket alike: the context of the rows.
    result = {"latency_s": LATENCY_S, "rows": rows, "wall": walls, "load": os.getloadavg()[0]}
    write_results(RESULTS, result)
    print_tables(tables(result))
    print(f"written {RESULTS}")


def _bill_rows(datasets: list[str], work: Path) -> list[dict[str, Any]]:
    state = Server()
    httpd, base = serve(state)
    rows = []
    try:
        for data in datasets:
            for method in METHODS:
                rows.append(measure(data, method, base, state, work))
                print(json.dumps(rows[-1]), flush=True)
    finally:
        httpd.shutdown()
    return rows


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:+.0f} %"


def _row(table: Table, row: dict[str, Any]) -> None:
    cap = (
        f"{row['cap_attempts']} of {row['cap']}, {row['cap_overshoot']:+d}"
        if "cap" in row
        else None
    )
    table.add(row["data"], row["method"], row["pairs"], row["calls"],
              f"{_pct(row['plan_calls_err'])} / {_pct(row['plan_tokens_err'])} / {_pct(row['plan_cost_err'])}",
              f"{_pct(row['pilot_calls_err'])} / {_pct(row['pilot_tokens_err'])} / {_pct(row['pilot_wall_err'])}",
              cap)  # fmt: skip


def _empty() -> Table:
    return Table(["data", "method", "pairs", "calls", "plan calls / tokens / cost error",
                  "pilot 20 calls / tokens / wall error", "cap (20 % faults): attempts, overshoot"])  # fmt: skip


def tables(result: dict) -> list[Table]:
    """One line per data set and method: the plan's and the pilot's errors, the cap."""
    table = _empty()
    for row in result["rows"]:
        _row(table, row)
    wall = Table(["server", "method", "pairs", "calls", "plan wall s", "run wall s",
                  "plan error", "pilot 20 projects s", "main run s", "pilot error"],
                 title=f"wall time on {WALL_PAIRS} pairs (target ±25 %)")  # fmt: skip
    for w in result.get("wall", []):
        wall.add(w["scenario"], w["method"], w["pairs"], w["calls"], w["plan_wall_s"],
                 w["wall_s"], _pct(w["plan_wall_err"]), w["pilot_wall_s"], w["main_wall_s"],
                 _pct(w["pilot_wall_err"]))  # fmt: skip
    return [table, wall]


if __name__ == "__main__":
    main()
