"""tokens.counted: the C counting (sessidx/_words.c) and the Python one give the same tokens and
the same identifier parts, in the same order, on any text; and the C one is what runs."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sessidx.content import tokens
from sessidx.content.near import PART


def native():  # noqa: ANN201 - the built function
    from sessidx import _words  # built by `pip install` wherever a C compiler is (CI's machine has one)

    return _words.counted


@pytest.mark.parametrize("text", [
    "", " ", "a", "A", "flushPendingAcks", "HTTPServer", "getHTTPResponseCode", "v2Beta", "ABC1 ABC1", "IDs",
    "SessionTokenRefresher and sessionTokenRefresher", "snake_case kebab-case camelCase", "x" * 200 + "Y" * 100 + "z",
    "aA" * 100, "résuméParser naïveBayes", "日本語のFooBar", "\ue000FooBar", "tab\tSeparatedWords\nNextLine",
])
def test_known_words_the_same_both_ways(text):
    assert tokens.counted(text) == tokens.python_counted(text)


def test_the_parts_of_an_identifier():
    count, parts = tokens.counted("call flushPendingAcks now")
    assert count == 3
    assert parts == [PART + p for p in ("flush", "Pending", "Acks", "PendingAcks")]


# letters of both cases, digits, the characters that part words, and a few beyond ASCII
_ALPHABET = st.sampled_from("aAbBzZ09_- .:/\n\tÉéß日İ")


@settings(max_examples=400, deadline=None)
@given(st.text(_ALPHABET, max_size=60) | st.text(max_size=40))
@example("AAa aA AAAa")
def test_generated_text_the_same_both_ways(text):
    assert tokens.counted(text) == tokens.python_counted(text)


def test_the_c_counting_is_what_runs():
    assert tokens._native_counted is native()  # noqa: SLF001 - the module's own switch


def test_bytes_and_str_alike_and_nothing_else():
    assert native()(b"fooBar", PART) == native()("fooBar", PART)
    with pytest.raises(ValueError, match="not ASCII"):
        native()("é", PART)
    with pytest.raises(TypeError):
        native()(3, PART)


def test_the_python_counting_is_what_runs_without_the_build(monkeypatch):
    monkeypatch.setattr(tokens, "_native_counted", None)
    assert tokens.counted("fooBar baz") == (2, [PART + "foo", PART + "Bar"])
