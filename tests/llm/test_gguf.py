"""Locating and assembling the embedded model file."""

from __future__ import annotations

import hashlib
import types
from pathlib import Path

import pytest

from docket.errors import ConfigError
from docket.llm import gguf


def make_parts(folder: Path, chunks: list[bytes]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, chunk in enumerate(chunks):
        path = folder / f"model.gguf.part{i:02d}"
        path.write_bytes(chunk)
        paths.append(path)
    return paths


def test_assemble_joins_parts_in_order(tmp_path) -> None:
    chunks = [b"GGUF", b"-middle-", b"end"]
    parts = make_parts(tmp_path / "pkg", chunks)
    target = tmp_path / "cache" / "model.gguf"
    digest = hashlib.sha256(b"".join(chunks)).hexdigest()
    assert gguf.assemble(parts, target, digest) == target
    assert target.read_bytes() == b"GGUF-middle-end"
    assert list(target.parent.iterdir()) == [target]  # no temporary file left behind


def test_assemble_with_wrong_digest_leaves_nothing(tmp_path) -> None:
    parts = make_parts(tmp_path / "pkg", [b"a", b"b"])
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(ConfigError, match="SHA-256"):
        gguf.assemble(parts, target, "0" * 64)
    assert list(target.parent.iterdir()) == []


def test_assemble_with_a_missing_part_names_it(tmp_path) -> None:
    parts = make_parts(tmp_path / "pkg", [b"a"]) + [tmp_path / "pkg" / "gone.part01"]
    with pytest.raises(ConfigError, match="gone.part01"):
        gguf.assemble(parts, tmp_path / "out.gguf", "0" * 64)


def test_embedded_model_is_assembled_once(tmp_path, monkeypatch) -> None:
    chunks = [b"x" * 10, b"y" * 5]
    parts = make_parts(tmp_path / "pkg", chunks)
    package = types.SimpleNamespace(
        MODEL_NAME="m.gguf",
        EXPECTED_SHA256=hashlib.sha256(b"".join(chunks)).hexdigest(),
        chunk_paths=lambda: parts,
    )
    monkeypatch.setattr(gguf, "_package", lambda: package)
    calls = []
    real_assemble = gguf.assemble
    monkeypatch.setattr(gguf, "assemble", lambda *a: calls.append(a) or real_assemble(*a))
    first = gguf.ensure_embedded_model(tmp_path / "cache")
    second = gguf.ensure_embedded_model(tmp_path / "cache")
    assert first == second == tmp_path / "cache" / "m.gguf"
    assert len(calls) == 1
    first.write_bytes(b"truncated")  # a damaged file is rebuilt
    assert gguf.ensure_embedded_model(tmp_path / "cache").read_bytes() == b"".join(chunks)
    assert len(calls) == 2


def test_override_must_exist(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(gguf.MODEL_ENV, str(tmp_path / "missing.gguf"))
    with pytest.raises(ConfigError, match="does not exist"):
        gguf.default_model_path()
    real = tmp_path / "real.gguf"
    real.write_bytes(b"GGUF")
    monkeypatch.setenv(gguf.MODEL_ENV, str(real))
    assert gguf.default_model_path() == real


def test_default_cache_dir_is_the_user_cache() -> None:
    assert gguf.model_cache_dir().parts[-2:] == ("docket", "models")
