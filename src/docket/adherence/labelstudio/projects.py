"""Per-project state of the Label Studio backend: the resolved mapping, ids and annotators.

Label Studio sends each project's labelling config with every request (``/setup``'s
``schema``, ``/predict``'s ``label_config``, the webhook's ``project.label_config``), so
the backend keeps no project registry: the mapping is resolved from the config on each
request and cached by the config's hash.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from docket.adherence.labelstudio.config import parse_config
from docket.adherence.labelstudio.mapping import (
    Mapping,
    check_mapping,
    default_mapping,
    feedback_target,
)
from docket.adherence.rules import RuleSet

CACHED_CONFIGS = 64
"""Labelling configs whose resolved mapping is kept (one per project and config version)."""


@dataclass(frozen=True)
class Resolved:
    """A project's mapping, checked against its config, and where feedback regions point."""

    mapping: Mapping
    to_name: str


class MappingResolver:
    """Resolves (and caches) the mapping for a labelling config; safe across threads.

    Args:
        rules: the rule set (every field a rule reads must be mapped).
        mapping: the mapping file's content, or None for :func:`default_mapping`.
    """

    def __init__(self, rules: RuleSet, mapping: Mapping | None = None) -> None:
        self.rules, self.mapping = rules, mapping
        self._cache: OrderedDict[str, Resolved] = OrderedDict()
        self._lock = threading.Lock()

    def resolve(self, label_config: str) -> Resolved:
        """The checked mapping for ``label_config``.

        Raises:
            InputError: the config is not XML, or the mapping does not fit it (one line).
        """
        key = hashlib.sha256(label_config.encode()).hexdigest()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        config = parse_config(label_config)
        mapping = self.mapping or default_mapping(config)
        check_mapping(mapping, config, self.rules)
        resolved = Resolved(mapping, feedback_target(config, mapping))
        with self._lock:
            self._cache[key] = resolved
            while len(self._cache) > CACHED_CONFIGS:
                self._cache.popitem(last=False)
        return resolved


def project_id(project: Any) -> str:
    """The project's id from ``"3.1733221"`` (setup, predict) or ``{"id": 3}`` (webhook)."""
    if isinstance(project, dict):
        return str(project.get("id", ""))
    return str(project or "").split(".", 1)[0]


def task_record_id(project: Any, task: dict[str, Any]) -> str:
    """The record id of a task's predictions: ``ls-<project>-task-<task>``."""
    return f"ls-{project_id(project)}-task-{task.get('id', '')}"


def annotation_record_id(project: Any, task: dict[str, Any], annotation: dict[str, Any]) -> str:
    """The record id of an annotation (its updates share it): ``...-annotation-<id>``."""
    return f"{task_record_id(project, task)}-annotation-{annotation.get('id', '')}"


def annotator_of(annotation: dict[str, Any]) -> str:
    """Who made an annotation: ``ls-user-<id>`` (Label Studio's webhook sends the user id),
    or the e-mail when a newer Label Studio sends the user as an object."""
    user = annotation.get("completed_by")
    if isinstance(user, dict):
        user = user.get("email") or user.get("id")
    return f"ls-user-{user}" if isinstance(user, int) or str(user).isdigit() else str(user)
