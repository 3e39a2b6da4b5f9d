"""Read-only commands: a mistyped --db is refused, a read-only store is read (issues 19, 20).

The store is made read-only the way users meet it (a chmod 444 file, a chmod 555
directory). Root ignores permissions, so as root the commands run without the
capabilities that let it (as a user's process would).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from docket.errors import StoreError
from docket.store import open_store

PAIRS = Path(__file__).resolve().parents[1] / "cli" / "pairs12.jsonl"
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER = 24, 1, 2, 3


def _docket(*args: str, as_stranger: bool = False) -> subprocess.CompletedProcess[str]:
    def drop() -> None:  # the child only: root loses the capabilities that skip permissions
        if as_stranger and os.geteuid() == 0:
            libc = ctypes.CDLL(None, use_errno=True)
            for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER):
                if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                    raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    return subprocess.run(
        [sys.executable, "-m", "docket", *args], capture_output=True, text=True, timeout=120,
        preexec_fn=drop, cwd="/",
    )  # fmt: skip


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    # Not tmp_path: its parents are 0700, and nobody must reach the store.
    folder = Path(tempfile.mkdtemp(prefix="docket-ro-"))
    folder.chmod(0o755)
    (folder / "out").mkdir(mode=0o777)
    (folder / "out").chmod(0o777)
    yield folder
    for path in (folder, folder / "store"):
        if path.exists():
            path.chmod(0o755)
    shutil.rmtree(folder)


@pytest.mark.parametrize("folder_mode", [0o755, 0o555])
def test_export_show_and_stats_read_a_read_only_store(shared_dir: Path, folder_mode: int) -> None:
    store_dir = shared_dir / "store"
    store_dir.mkdir(mode=0o755)
    db = store_dir / "d.db"
    judged = _docket("judge", str(PAIRS), "--model", "fake:echo", "--method", "single",
                     "--limit", "2", "--db", str(db), "--job", "j", "--cache", "off")  # fmt: skip
    assert judged.returncode == 0, judged.stderr
    db.chmod(0o444)
    store_dir.chmod(folder_mode)
    before = db.read_bytes()
    out = shared_dir / "out" / "e.jsonl"
    exported = _docket("export", "--db", str(db), "--job", "j", "--format", "jsonl",
                       "-o", str(out), as_stranger=True)  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["qid"], r["docid"]) for r in rows] == [("q1", "d1"), ("q1", "d2")]
    shown = _docket("show", "q1", "d1", "--db", str(db), "--job", "j", as_stranger=True)
    assert shown.returncode == 0, shown.stderr
    assert "q1" in shown.stdout
    stats = _docket("review", "stats", "--db", str(db), "--json", as_stranger=True)
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["tasks"]["total"] == 0
    assert db.read_bytes() == before  # SQLite may add its -shm file where it can; no write


@pytest.mark.parametrize(
    "args",
    [
        ("export", "--job", "j", "-o", "OUT"),
        ("show", "q1", "d1"),
        ("review", "stats"),
        ("review", "tasks"),
    ],
)
def test_a_mistyped_db_is_refused_and_not_created(tmp_path: Path, args: tuple[str, ...]) -> None:
    db = tmp_path / "typo.db"
    argv = [str(tmp_path / "out.jsonl") if a == "OUT" else a for a in args]
    done = _docket(*argv, "--db", str(db))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: no docket store at '{db}' "
        "(check --db; a judging command (docket judge) creates the store)"
    )
    assert not db.exists() and list(tmp_path.iterdir()) == []


def test_open_store_read_only_refuses_an_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(StoreError, match="no docket store at"):
        open_store(empty, read_only=True)
    open_store(tmp_path / "new.db").close()  # a judging command still creates its store
    open_store(tmp_path / "new.db", read_only=True).close()
