"""The mapping from a labelling config to docket's submission, and the Prodigy adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from docket.adherence.labelstudio import (
    Mapping,
    check_mapping,
    default_mapping,
    load_mapping,
    parse_config,
    request_of,
)
from docket.adherence.prodigy import validate_answer
from docket.adherence.rules import RuleSet
from docket.errors import InputError
from tests.adherence.labelstudio_helpers import RULES, verifier

SUMMARY = """<View>
  <Header value="Please read the text"/>
  <Text name="text" value="$text"/>
  <TextArea name="answer" toName="text" maxSubmissions="1" editable="true"/>
  <TextArea name="docket" toName="text" editable="false"/>
</View>"""

FIELD_RULE = {
    "id": "SUM",
    "text": "The summary has at most 20 words.",
    "tier": "fmt",
    "scope": {"kind": "field", "field": "answer"},
    "check": {"checker": "word_count", "params": {"max": 20}},
}


def test_the_text_template_maps_the_shown_text_and_the_answer_to_fields() -> None:
    mapping = default_mapping(parse_config(SUMMARY))
    assert mapping.dialogue is None and mapping.turn is None
    assert {name: s.model_dump(exclude_none=True) for name, s in mapping.fields.items()} == {
        "text": {"data": "text"},
        "answer": {"control": "answer"},
    }
    rules = RuleSet.model_validate({"name": "s", "rules": [FIELD_RULE]})
    check_mapping(mapping, parse_config(SUMMARY), rules)
    task = {"id": 7, "data": {"text": "A long story."}}
    result = [
        {"id": "r1", "from_name": "answer", "type": "textarea", "value": {"text": ["Short."]}}
    ]
    wanted = request_of(task, result, mapping, "ls-1-task-7")
    assert wanted.record.fields == {"text": "A long story.", "answer": "Short."}
    assert wanted.turn is None


def test_a_rule_reading_an_unmapped_field_is_refused_in_one_line() -> None:
    rule = {**FIELD_RULE, "scope": {"kind": "field", "field": "summary"}}
    rules = RuleSet.model_validate({"name": "s", "rules": [rule]})
    config = parse_config(SUMMARY)
    with pytest.raises(InputError) as refused:
        check_mapping(default_mapping(config), config, rules)
    assert str(refused.value).startswith("field 'fields.summary': rule 'SUM' reads field 'summary'")


def test_dialogue_rules_need_a_dialogue_or_a_turn() -> None:
    config = parse_config(SUMMARY)
    with pytest.raises(InputError, match="no dialogue or turn"):
        check_mapping(default_mapping(config), config, RuleSet.model_validate(RULES))


def test_a_mapping_file_is_read_and_a_bad_key_is_named(tmp_path: Path) -> None:
    good = tmp_path / "map.yaml"
    good.write_text(
        "dialogue: {data: chat, roles: {Customer: user, Agent: assistant}}\n"
        "turn: {control: reply}\nfeedback: checks\n",
        encoding="utf-8",
    )
    mapping = load_mapping(good)
    assert mapping.feedback == "checks" and mapping.dialogue and mapping.dialogue.roles["Agent"]
    task = {"id": 1, "data": {"chat": [{"author": "Customer", "text": "Hi"}]}}
    assert request_of(task, None, mapping, "x").record.turns[0].role == "user"
    bad = tmp_path / "bad.yaml"
    bad.write_text("turn: {control: reply, speaker: assistant}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.yaml: field 'turn\.speaker'"):
        load_mapping(bad)
    both = tmp_path / "both.yaml"
    both.write_text("fields: {x: {data: a, control: b}}\n", encoding="utf-8")
    with pytest.raises(InputError, match="exactly one of 'data' or 'control'"):
        load_mapping(both)


def test_a_dialogue_that_is_not_a_list_of_messages_is_refused() -> None:
    mapping = Mapping.model_validate({"dialogue": {"data": "chat"}})
    with pytest.raises(InputError, match="task 3: data field 'chat' is not a list"):
        request_of({"id": 3, "data": {"chat": "hello"}}, None, mapping, "x")


def test_a_config_that_is_not_xml_is_one_line() -> None:
    with pytest.raises(InputError, match="the labelling config is not XML"):
        parse_config("<View><Text name='t'")


def test_validate_answer_raises_value_error_with_the_feedback_and_passes_clean_answers() -> None:
    check = validate_answer(verifier())
    eg = {
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "I am a bot, see www.example.com"},
        ],
        "_task_hash": 12,
    }
    with pytest.raises(ValueError) as refused:
        check(eg)
    feedback = str(refused.value)
    assert "[URL] No turn contains a URL." in feedback and "[BOT]" in feedback
    assert "[LEN]" in feedback  # a whole example is final: two turns is too few
    clean = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello, how can I help?"},
    ] * 2
    assert check({"messages": clean}) is None
