"""Where sentences end: the rules shared by evidence ids and the sentence_count check."""

from __future__ import annotations

from docket.text import is_abbreviation, sentence_ends


def ends(text: str) -> list[int]:
    return [match.end() for match in sentence_ends(text)]


def test_sentence_ends_skip_abbreviations_and_initials():
    text = "Dr. J. Smith met Smith et al. at 5 p.m. today. Done!"
    assert ends(text) == [len("Dr. J. Smith met Smith et al. at 5 p.m. today."), len(text)]


def test_sentence_ends_keep_closing_quotes_and_ellipsis():
    text = 'He said "stop." Then\u2026 nothing? No'
    assert ends(text) == [len('He said "stop."'), len('He said "stop." Then\u2026'), 30]


def test_is_abbreviation_needs_a_period_right_after_the_word():
    assert is_abbreviation("see (e.g", ".") and is_abbreviation("Mr", '.")')
    assert not is_abbreviation("Mr", "!") and not is_abbreviation("Mr ", ".")
    assert not is_abbreviation("", ".") and not is_abbreviation("the end", ".")


def test_a_list_number_opening_its_line_does_not_end_a_sentence():
    text = "1. Apples are red.\n2. Pears are green."
    assert ends(text) == [len("1. Apples are red."), len(text)]
    assert ends("It rose by 5. Then it fell.") == [len("It rose by 5."), 27]
    assert ends("Pi is 3.14 exactly. Yes.") == [len("Pi is 3.14 exactly."), 24]


def test_markdown_emphasis_after_the_stop_closes_the_sentence():
    assert ends("*One.* Two.") == [6, 11]
    assert ends("**Done!** _Next._ Last") == [9, 17]


def test_no_is_an_abbreviation_only_before_a_number():
    text = "Did they listen? No. And no. 5 or No. #6 won."
    assert ends(text) == [len("Did they listen?"), len("Did they listen? No."), len(text)]
    assert not is_abbreviation("No", ".", " And") and is_abbreviation("see no", ".", " 12")
