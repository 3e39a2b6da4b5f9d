"""Take docs/labelstudio-feedback.png: docket's feedback in Label Studio's editor.

Starts docket's Label Studio backend (the test rules, a scripted sim model) in-process,
and uses a Label Studio started as in tests/labelstudio_support.py (``--label-studio URL``
for one already running with that user, else a fresh one from .cache/labelstudio-venv).
It creates a project with the dialogue template, connects the backend, retrieves
predictions, opens the task in headless Chromium and saves a screenshot.

Usage:
    PYTHONPATH=src .venv/bin/python scripts/labelstudio_screenshot.py [--label-studio URL]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docket.store.base import open_store  # noqa: E402
from tests.adherence.labelstudio_helpers import backend  # noqa: E402
from tests.adherence.test_labelstudio_e2e import connect  # noqa: E402
from tests.browser_support import chromium, serve  # noqa: E402
from tests.labelstudio_support import (  # noqa: E402
    PASSWORD,
    USER,
    USER_TOKEN,
    LabelStudio,
    label_studio,
)

OUT = ROOT / "docs" / "labelstudio-feedback.png"


def shoot(ls: LabelStudio, backend_url: str, out: Path, login: tuple[str, str]) -> None:
    """Connect, retrieve predictions, open the first task's editor and save a screenshot."""
    pid, _mlid, (first, _second) = connect(ls, backend_url)
    action = {"id": "retrieve_tasks_predictions", "project": pid}
    ls.api.post(
        "/api/dm/actions", params=action, json={"selectedItems": {"all": True, "excluded": []}}
    )
    version = ls.api.get("/api/predictions", params={"task": first}).json()[0]["model_version"]
    ls.api.patch(
        f"/api/projects/{pid}", json={"show_collab_predictions": True, "model_version": version}
    )
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{ls.url}/user/login")
        page.fill("input[name=email]", login[0])
        page.fill("input[name=password]", login[1])
        page.click("button[type=submit]")
        page.wait_for_load_state("networkidle")
        page.goto(f"{ls.url}/projects/{pid}/data?task={first}")
        try:
            page.wait_for_selector("text=No turn contains a URL", timeout=60_000)
        finally:
            page.wait_for_timeout(1500)
            page.screenshot(path=str(out))


def main() -> None:
    """Parse options, start what is needed, take the screenshot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label-studio", help="URL of a running Label Studio (else start one)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--user", default=USER, help="a running Label Studio's user")
    parser.add_argument("--password", default=PASSWORD)
    parser.add_argument("--token", default=USER_TOKEN, help="that user's legacy API token")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp())
    store = open_store(f"sqlite:///{work / 'docket.db'}")
    with ExitStack() as stack:
        backend_url = stack.enter_context(serve(backend(store)))
        if args.label_studio:
            headers = {"Authorization": f"Token {args.token}"}
            api = stack.enter_context(
                httpx.Client(base_url=args.label_studio, headers=headers, timeout=120)
            )
            ls = LabelStudio(args.label_studio, api, 0.0)
        else:
            ls = stack.enter_context(label_studio(work / "ls"))
        shoot(ls, backend_url, args.out, (args.user, args.password))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
