"""Build the judge for a set of options."""

from __future__ import annotations

from docket.relevance.methods import GetModel, method_spec
from docket.relevance.options import JudgeOptions
from docket.relevance.types import Judge

__all__ = ["GetModel", "build_judge"]


def build_judge(options: JudgeOptions, get_model: GetModel) -> Judge:
    """Return the judge for ``options.method``.

    Args:
        options: validated judge options.
        get_model: resolves model names; called once per distinct role here, so the
            caller may share Model instances (and their caches and limits).

    Raises:
        ConfigError: an option combination the method cannot run.
    """
    spec = method_spec(options.method)
    return spec.build(options, get_model, get_model(None))
