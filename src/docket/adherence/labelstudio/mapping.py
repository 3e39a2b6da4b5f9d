"""Which parts of a Label Studio task and annotation make docket's submission.

A mapping file (YAML) names, for one labelling config::

    dialogue:                 # the dialogue so far, from the task's data
      data: dialogue          # the data key a <Paragraphs value="$dialogue"> shows
      role_key: author        # the key of a message naming its speaker
      text_key: text          # the key of a message holding its text
      roles: {Customer: user, Agent: assistant}   # speaker -> role (others kept as is)
    turn:                     # the annotator's answer, checked as the new turn
      control: response       # a <TextArea name="response">
      role: assistant
    fields:                   # record fields that rules read
      summary: {control: answer}     # from a TextArea of the annotation
      source: {data: text}           # from the task's data
    feedback: docket          # the read-only <TextArea> where the feedback is shown

Without a file, :func:`default_mapping` reads the common templates: the first
``Paragraphs`` is the dialogue and a TextArea pointing at it the new turn; other shown data
keys and other TextAreas become fields of the same name. :func:`check_mapping` refuses,
in one line, a mapping that names what the config lacks or leaves a rule's field unfilled.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from docket.adherence.labelstudio.config import LabelConfig, Tag
from docket.adherence.rules import RuleSet
from docket.errors import InputError
from docket.reading import read_text, validation_error

DEFAULT_FEEDBACK = "docket"
"""The name of the TextArea that shows docket's feedback when the mapping names none."""


class DialogueSource(BaseModel):
    """The dialogue so far: a list of messages in one task data key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    data: str
    role_key: str = "author"
    text_key: str = "text"
    roles: dict[str, str] = {}


class TurnSource(BaseModel):
    """The annotator's answer, appended to the dialogue as the new turn."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    control: str
    role: str = "assistant"


class FieldSource(BaseModel):
    """Where one record field comes from: a task data key or a TextArea (exactly one)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    data: str | None = None
    control: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> FieldSource:
        if (self.data is None) == (self.control is None):
            raise ValueError("give exactly one of 'data' or 'control'")
        return self


class Mapping(BaseModel):
    """How a task (and an annotation) becomes a submission; see the module docstring."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dialogue: DialogueSource | None = None
    turn: TurnSource | None = None
    fields: dict[str, FieldSource] = {}
    feedback: str = DEFAULT_FEEDBACK

    def controls(self) -> set[str]:
        """The TextArea names whose text the submission reads."""
        named = {source.control for source in self.fields.values() if source.control}
        return named | ({self.turn.control} if self.turn else set())


def load_mapping(path: str | Path) -> Mapping:
    """Read a mapping file.

    Raises:
        InputError: the file is missing, not YAML, or not a mapping (naming the field).
    """
    text = read_text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError("not valid YAML", path=str(path), line=line) from None
    try:
        return Mapping.model_validate(data or {})
    except ValidationError as exc:
        raise validation_error(exc, path, hint="see docs/adherence.md, Label Studio") from exc


def _dialogue_tag(config: LabelConfig) -> Tag | None:
    return next((tag for tag in config.objects() if tag.type.lower() == "paragraphs"), None)


def default_mapping(config: LabelConfig, feedback: str = DEFAULT_FEEDBACK) -> Mapping:
    """The mapping for the common dialogue and text templates (see the module docstring)."""
    chat = _dialogue_tag(config)
    dialogue = turn = None
    if chat is not None:
        dialogue = DialogueSource(
            data=chat.data_key,
            role_key=chat.attrs.get("nameKey", "author"),
            text_key=chat.attrs.get("textKey", "text"),
        )
        answer = next(
            (t for t in config.textareas() if t.name != feedback and chat.name in _targets(t)),
            None,
        )
        turn = TurnSource(control=answer.name) if answer is not None else None
    used = {feedback, *(t.control for t in [turn] if t)}
    fields = {
        tag.data_key: FieldSource(data=tag.data_key)
        for tag in config.objects()
        if chat is None or tag.data_key != chat.data_key
    }
    fields |= {
        tag.name: FieldSource(control=tag.name)
        for tag in config.textareas()
        if tag.name not in used
    }
    return Mapping(dialogue=dialogue, turn=turn, fields=fields, feedback=feedback)


def _targets(tag: Tag) -> list[str]:
    return [name.strip() for name in tag.to_name.split(",") if name.strip()]


def feedback_target(config: LabelConfig, mapping: Mapping) -> str:
    """The object the feedback TextArea points at (a prediction's ``to_name``)."""
    tag = config.named(mapping.feedback)
    return _targets(tag)[0] if tag is not None and _targets(tag) else ""


def check_mapping(mapping: Mapping, config: LabelConfig, rules: RuleSet) -> None:
    """Refuse a mapping the config cannot fill, in one line naming the missing piece.

    Raises:
        InputError: a mapped data key no tag shows, a mapped control that is not a TextArea
            of the config, a feedback TextArea the config lacks, or a rule's field the
            mapping does not fill.
    """
    shown = config.data_keys()
    if mapping.dialogue and mapping.dialogue.data not in shown:
        _missing_data(mapping.dialogue.data, "dialogue.data")
    if mapping.turn:
        _need_textarea(config, mapping.turn.control, "turn.control")
    for name, source in mapping.fields.items():
        if source.data is not None and source.data not in shown:
            _missing_data(source.data, f"fields.{name}.data")
        if source.control is not None:
            _need_textarea(config, source.control, f"fields.{name}.control")
    feedback = config.named(mapping.feedback)
    if feedback is None or not feedback.is_textarea or not _targets(feedback):
        raise InputError(
            f"the labelling config has no TextArea '{mapping.feedback}' for docket's feedback",
            field="feedback",
            hint=f'add <TextArea name="{mapping.feedback}" toName="..." editable="false"/>',
        )
    _check_rules(mapping, rules)


def _missing_data(key: str, where: str) -> None:
    raise InputError(
        f"the labelling config shows no data field '{key}'",
        field=where,
        hint=f'no tag has value="${key}"; fix the mapping or the config',
    )


def _need_textarea(config: LabelConfig, name: str, where: str) -> None:
    tag = config.named(name)
    if tag is None or not tag.is_textarea:
        found = f"it is a {tag.type}" if tag is not None else "there is no such tag"
        raise InputError(
            f"the labelling config has no TextArea '{name}' ({found})",
            field=where,
            hint="fix the mapping or the config",
        )


def _check_rules(mapping: Mapping, rules: RuleSet) -> None:
    for rule in rules.rules:
        field = rule.scope.field
        if rule.scope.kind == "field" and field not in mapping.fields:
            raise InputError(
                f"rule '{rule.id}' reads field '{field}', which the mapping does not fill",
                field=f"fields.{field}",
                hint="add it to the mapping file (--map) with its data key or TextArea",
            )
        if rule.scope.kind != "field" and mapping.dialogue is None and mapping.turn is None:
            raise InputError(
                f"rule '{rule.id}' reads dialogue turns, but the mapping has no dialogue or turn",
                field="dialogue",
                hint="add 'dialogue' or 'turn' to the mapping file (--map)",
            )
