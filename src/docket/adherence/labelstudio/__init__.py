"""Label Studio: its labelling config, the mapping to docket's submissions, and predictions.

``config`` reads a labelling config; ``mapping`` says which task data keys and TextAreas
are the dialogue, the new turn and the fields rules read (a YAML file, or defaults for the
common templates); ``convert`` turns tasks and results into submissions and verdicts into
predictions; ``projects`` resolves the mapping per project. The HTTP endpoints are
:mod:`docket.adherence.web.labelstudio`. See docs/adherence.md, "Label Studio".
"""

from docket.adherence.labelstudio.config import LabelConfig, Tag, parse_config
from docket.adherence.labelstudio.convert import annotation_errors, prediction, request_of
from docket.adherence.labelstudio.mapping import (
    Mapping,
    check_mapping,
    default_mapping,
    load_mapping,
)
from docket.adherence.labelstudio.projects import MappingResolver

__all__ = [
    "LabelConfig",
    "Mapping",
    "MappingResolver",
    "Tag",
    "annotation_errors",
    "check_mapping",
    "default_mapping",
    "load_mapping",
    "parse_config",
    "prediction",
    "request_of",
]
