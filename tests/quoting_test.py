"""Quoting round-trips through the real shells: any folder name comes back byte for byte."""

from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessidx.quoting import cd_and_run, command_line
from tests.conftest import require

HOSTILE = [
    "it's $(rm -rf ~)",
    "`id`; echo & ls * ?",
    "back\\slash \\' \\\\",
    "tab\there",
    "new\nline",
    "-leading-dash",
    "--",
    "",
    "ünïcode 日本 🚀",
    "non-utf8 \udcff\udcfe end",
    "ctrl \x01\x1b[31m\x7f",
    "{a,b} ~user $HOME ${x} !! !$ %1 #hash",
    '"double" \'single\'',
    "(fish) $var; and or not | end",
    "claude-opus-4-5\n",  # safe characters, then a newline: `$` in a regex matches before it
    "plain\r",
    "\nplain",
    "=0", "%self", "=",
]
CHUNKS = st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=12)
BYTESY = st.binary(max_size=10).filter(lambda b: b"\x00" not in b).map(lambda b: b.decode("utf-8", "surrogateescape"))
# Words that are almost safe to leave bare: one odd character before, inside or after safe ones.
SAFE = st.text(alphabet="abcXYZ019_@%+=:,./-", min_size=1, max_size=8)
ODD = st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00")
NEARLY_SAFE = st.tuples(SAFE, ODD, SAFE).flatmap(
    lambda t: st.sampled_from([t[0] + t[1], t[1] + t[0], t[0] + t[1] + t[2]]))
WORDS = st.lists(st.one_of(CHUNKS, BYTESY, NEARLY_SAFE, st.sampled_from(HOSTILE)), min_size=1, max_size=15)


def echo_back(shell: str, words: list[str]) -> list[str]:
    """Run `printf '%s\\0' WORDS...` as the quoted line in the real shell; decode what it printed."""
    line = "printf '%s\\0' " + command_line(words, shell)
    argv = {"bash": ["bash", "--norc", "--noprofile", "-c"], "zsh": ["zsh", "-f", "-c"],
            "fish": ["fish", "--no-config", "-c"]}[shell]
    done = subprocess.run([*argv, os.fsencode(line)], capture_output=True, timeout=30,
                          env={**os.environ, "LC_ALL": "C.UTF-8"})
    assert done.returncode == 0, done.stderr
    return [w.decode("utf-8", "surrogateescape") for w in done.stdout.split(b"\0")[:-1]]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_hostile_names_round_trip(shell):
    require(shell)
    assert echo_back(shell, HOSTILE) == HOSTILE


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@settings(max_examples=60, deadline=None)
@given(words=WORDS)
def test_any_words_round_trip(shell, words):
    require(shell)
    assert echo_back(shell, words) == words


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_cd_line_enters_a_hostile_folder(shell, tmp_path):
    require(shell)
    name = "-it's $(touch pwned) `touch pwned2`; & * \\ \t\nend"
    folder = tmp_path / name
    folder.mkdir()
    line = cd_and_run(str(folder), ["pwd"], shell)
    argv = {"bash": ["bash", "--norc", "-c"], "zsh": ["zsh", "-f", "-c"], "fish": ["fish", "--no-config", "-c"]}[shell]
    done = subprocess.run([*argv, line], capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == str(folder) + "\n"
    assert not list(tmp_path.glob("pwned*"))
