"""What an OpenAI-compatible server reports about itself, asked once before the first call.

* ``GET <root>/props``: llama.cpp's C++ server gives ``total_slots``, the calls it serves
  at once; docket sends no more than that. Other servers (llama-cpp-python's, vLLM,
  Ollama) answer 404: nothing is known, and the limit on calls in flight finds out.
* ``GET <base>/models``: the model ids it serves. A server that serves one model often
  ignores the request's ``model`` field, so a typo (``#qwn`` for ``#qwen``) would pass
  silently; a name the list does not hold is refused with the list.

Both are best effort: a server that does not answer them is left to the first call, which
reports a dead server the usual way.
"""

from __future__ import annotations

import json
from typing import Any

from docket.errors import ModelUnavailableError

ASK_TIMEOUT_S = 10.0


async def ask_server(client: Any, name: str, model: str, base_url: str) -> int | None:
    """The server's slot count (None: not reported); refuses a model it does not list."""
    base = base_url.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    props = await _get_json(client, f"{root}/props")
    listed = await _get_json(client, f"{base}/models")
    ids = _model_ids(listed)
    if ids and not _serves(model, ids):
        shown = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
        raise ModelUnavailableError(
            f"model '{name}': the server serves {shown}, not '{model}'",
            hint=f"write the model as openai-compatible:{base}#{ids[0]}",
        )
    slots = props.get("total_slots") if isinstance(props, dict) else None
    return slots if isinstance(slots, int) and slots > 0 else None


async def _get_json(client: Any, url: str) -> Any:
    import aiohttp

    try:
        timeout = aiohttp.ClientTimeout(total=ASK_TIMEOUT_S)
        async with client.get(url, timeout=timeout) as response:
            if response.status != 200:
                return None  # 404: this server does not offer it
            return json.loads(await response.read())
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return None


def _model_ids(listed: Any) -> list[str]:
    data = listed.get("data") if isinstance(listed, dict) else None
    if not isinstance(data, list):
        return []
    return [str(item["id"]) for item in data if isinstance(item, dict) and item.get("id")]


def _serves(model: str, ids: list[str]) -> bool:
    """``model`` is listed as it is, as a file name (a server run on a GGUF path lists the
    path), or as Ollama's default tag."""
    names = set(ids)
    for served in ids:
        file_name = served.replace("\\", "/").rsplit("/", 1)[-1]
        names |= {file_name, file_name.removesuffix(".gguf")}
    return model in names or f"{model}:latest" in names
