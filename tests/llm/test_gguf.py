"""Locating and assembling the embedded model file."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from docket.errors import ConfigError, MissingDependencyError
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


def fake_model(tmp_path: Path, chunks: list[bytes]) -> gguf.EmbeddedModel:
    """An EmbeddedModel whose parts are importable packages written under tmp_path."""
    for number, chunk in enumerate(chunks, start=1):
        package = tmp_path / "site" / f"fake_gguf_part{number}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{number:02d}.bin").write_bytes(chunk)
    joined = b"".join(chunks)
    return gguf.EmbeddedModel(
        short_name="fake",
        file_name="fake.gguf",
        package_prefix="fake_gguf_part",
        parts=len(chunks),
        size=len(joined),
        sha256=hashlib.sha256(joined).hexdigest(),
        extra="local",
        upstream="test",
    )


def test_embedded_model_is_assembled_once(tmp_path, monkeypatch) -> None:
    chunks = [b"x" * 10, b"y" * 5]
    model = fake_model(tmp_path, chunks)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    calls = []
    real_assemble = gguf.assemble
    monkeypatch.setattr(gguf, "assemble", lambda *a, **k: calls.append(a) or real_assemble(*a, **k))
    first = gguf.ensure_embedded_model(model, tmp_path / "cache")
    second = gguf.ensure_embedded_model(model, tmp_path / "cache")
    assert first == second == tmp_path / "cache" / "fake.gguf"
    assert len(calls) == 1
    first.write_bytes(b"truncated")  # a damaged file is rebuilt
    assert gguf.ensure_embedded_model(model, tmp_path / "cache").read_bytes() == b"".join(chunks)
    assert len(calls) == 2


def test_a_missing_part_package_names_the_extra(tmp_path, monkeypatch) -> None:
    model = fake_model(tmp_path, [b"a", b"b"])
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    missing = gguf.EmbeddedModel(**{**model.__dict__, "parts": 3})
    with pytest.raises(MissingDependencyError, match="fake-gguf-part3") as info:
        gguf.ensure_embedded_model(missing, tmp_path / "cache")
    assert "docket[local]" in info.value.hint


def test_the_two_embedded_models_are_pinned() -> None:
    small, large = gguf.EMBEDDED_MODELS["qwen-0.5b"], gguf.EMBEDDED_MODELS["qwen-1.5b"]
    assert (small.parts, small.size) == (6, 491_400_064)
    assert small.sha256.startswith("1d9614638d18")
    assert (large.parts, large.size) == (22, 1_117_320_768)
    assert large.sha256.startswith("cc324af070c2")
    assert gguf.DEFAULT_EMBEDDED == "qwen-0.5b"
    with pytest.raises(ConfigError, match="unknown embedded model"):
        gguf.embedded_model("gemma")


def test_model_file_must_exist(tmp_path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        gguf.check_model_file(tmp_path / "missing.gguf")
    real = tmp_path / "real.gguf"
    real.write_bytes(b"GGUF")
    assert gguf.check_model_file(real) == real


def test_default_cache_dir_is_the_user_cache() -> None:
    assert gguf.model_cache_dir().parts[-2:] == ("docket", "models")
