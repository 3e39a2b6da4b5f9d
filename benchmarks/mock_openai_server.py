"""A local OpenAI-compatible chat-completions server with simulated latencies.

Run: ``python benchmarks/mock_openai_server.py --port 8931 --latency small=0.3 --latency large=1.5``

Replies follow docket's adherence formats so the verifier parses them: ``PASS`` for a
``sim`` question, reasoning then ``VERDICT: PASS`` for a ``sub`` question, one ``[id] PASS``
line per rule for a holistic question. Usage reports ``prompt_tokens_details.cached_tokens``
as a prefix-caching engine would: the longest prefix shared with a recent prompt to the
same model (four characters per token).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import time
from collections import deque

import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel

from docket.adherence.verify.prompts import common_prefix_len

RULE_ID = re.compile(r"^\[([A-Za-z0-9_.\-]+)\] \(", re.M)


class ChatMessage(BaseModel):
    """One message of the request."""

    role: str
    content: str


class ChatRequest(BaseModel):
    """The fields of a chat completions request the mock reads."""

    model: str
    messages: list[ChatMessage]
    max_tokens: int | None = None


def _reply(messages: list[ChatMessage]) -> str:
    question = messages[-1].content
    if "one line per rule" in question:
        ids = RULE_ID.findall(messages[0].content)
        return "\n".join(f"[{rule_id}] PASS" for rule_id in ids)
    if "VERDICT:" in question:
        return "REASONING: The new turn reads naturally and follows the rule.\nVERDICT: PASS"
    return "PASS"


def create_app(latencies: dict[str, float], default_latency: float = 0.0) -> FastAPI:
    """The mock app; ``latencies`` maps model names to seconds per call."""
    app = FastAPI(title="docket mock OpenAI server")
    recent: dict[str, deque[str]] = {}

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/v1/chat/completions")
    async def chat(request: ChatRequest) -> dict:
        started = time.time()
        prompt = "".join(f"<|{m.role}|>{m.content}" for m in request.messages)
        history = recent.setdefault(request.model, deque(maxlen=8))
        cached_chars = max((common_prefix_len(prompt, old) for old in history), default=0)
        history.append(prompt)
        await asyncio.sleep(latencies.get(request.model, default_latency))
        text = _reply(request.messages)
        return {
            "id": f"mock-{started:.6f}",
            "object": "chat.completion",
            "created": int(started),
            "model": request.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": len(prompt) // 4,
                "completion_tokens": max(1, len(text) // 4),
                "total_tokens": len(prompt) // 4 + max(1, len(text) // 4),
                "prompt_tokens_details": {"cached_tokens": cached_chars // 4},
            },
        }

    return app


def main() -> None:
    """Parse ``--port`` and ``--latency name=seconds`` options and serve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8931)
    parser.add_argument("--latency", action="append", default=[], help="model=seconds")
    args = parser.parse_args()
    latencies = {
        name: float(value) for name, value in (item.split("=", 1) for item in args.latency)
    }
    uvicorn.run(create_app(latencies), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
