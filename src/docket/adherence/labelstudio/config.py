"""Reading a Label Studio labelling config: which tags it has, what they show, what they fill.

A labelling config is XML (``<View><Paragraphs name="chat" value="$dialogue"/>...``).
Object tags show task data (their ``value`` is ``$key``); control tags (``TextArea``,
``Choices``...) are filled by the annotator and point at an object with ``toName``.
Only what the mapping needs is read: names, types, the data key and a few attributes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.etree import ElementTree

from docket.errors import InputError


@dataclass(frozen=True)
class Tag:
    """One named tag of a labelling config.

    Attributes:
        type: the tag's name as written (``Paragraphs``, ``TextArea``, ``Text``...).
        name: its ``name`` attribute.
        data_key: the task data key it shows (``value="$dialogue"`` -> ``dialogue``), or "".
        to_name: the object a control tag points at (``toName``), or "".
        attrs: every attribute, as written.
    """

    type: str
    name: str
    data_key: str = ""
    to_name: str = ""
    attrs: dict[str, str] = field(default_factory=dict)

    @property
    def is_textarea(self) -> bool:
        """True for a ``TextArea`` control (the only control docket reads text from)."""
        return self.type.lower() == "textarea"


@dataclass(frozen=True)
class LabelConfig:
    """The named tags of a labelling config, in document order."""

    tags: tuple[Tag, ...]

    def named(self, name: str) -> Tag | None:
        """The tag called ``name``, or None."""
        return next((tag for tag in self.tags if tag.name == name), None)

    def textareas(self) -> list[Tag]:
        """The TextArea controls."""
        return [tag for tag in self.tags if tag.is_textarea]

    def objects(self) -> list[Tag]:
        """The tags that show a task data key."""
        return [tag for tag in self.tags if tag.data_key]

    def data_keys(self) -> set[str]:
        """The task data keys the config shows."""
        return {tag.data_key for tag in self.objects()}


def parse_config(xml: str) -> LabelConfig:
    """Read the named tags of a labelling config.

    Raises:
        InputError: the config is not XML (field ``label_config``).
    """
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as exc:
        raise InputError(f"the labelling config is not XML: {exc}", field="label_config") from None
    tags = []
    for element in root.iter():
        name = element.get("name")
        if not name:
            continue
        value = element.get("value", "")
        tags.append(
            Tag(
                type=str(element.tag),
                name=name,
                data_key=value[1:] if value.startswith("$") else "",
                to_name=element.get("toName", ""),
                attrs=dict(element.attrib),
            )
        )
    return LabelConfig(tuple(tags))
