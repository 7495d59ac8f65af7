"""A list made for the other mode (issue 29, point 1): a content search typed just before Ctrl-F
can land after the titles' reload (fzf keeps one pending search request), and the picker then
showed content rows under the titles' prompt for good. Each list says what it was made for
(picker.WORDS_FILE, content lists too); the load event and Enter's check compare it with the
mode and the query, and make the list again. The scripts run in a real `sh`, as fzf runs them,
with the state file fzf's list would have left."""

from __future__ import annotations

import os
import subprocess

import pytest
from homes import ClaudeSession

from sessidx import picker
from sessidx.config import current_env
from sessidx.render import prompt_of
from tests.conftest import run_cli

ME = "/bin/sessidx-stub"
TITLES, CONTENT = prompt_of(False, None, None), prompt_of(True, None, None)


def run_script(script: str, prompt: str, query: str, made_for: str | None, state: str) -> str:
    """What the script prints in `sh` (its parent: this process, whose pid names the state
    file, as fzf's does), with the list on screen made for `made_for` (None: the first list)."""
    path = picker.words_file(state, os.getpid())
    if made_for is None:
        if os.path.exists(path):
            os.unlink(path)
    else:
        with open(path, "w") as f:
            f.write(made_for + "\n")
    env = {"PATH": os.environ["PATH"], "FZF_PROMPT": prompt, "FZF_QUERY": query, "FZF_HEADER_LABEL": "=",
           "FZF_INPUT_LABEL": "=", "FZF_LIST_LABEL": ""}
    return subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize(("prompt", "query", "made_for", "reload"), [
    (TITLES, "", f"{CONTENT}|app:codex", f"reload(exec {ME} lines)"),  # content rows under the titles' prompt
    (TITLES, "kettle app:codex", f"{CONTENT}|app:codex", f"reload(exec {ME} lines)"),
    (CONTENT, "kettle", None, f"reload(exec {ME} lines --content {{q}})"),  # the first title list in content mode
    (CONTENT, "kettle app:codex", f"{TITLES}|app:codex", f"reload(exec {ME} lines --content {{q}})"),
    (CONTENT, "kettle app:codex", f"{CONTENT}|app:cl", f"reload(exec {ME} lines --content {{q}})"),
    (TITLES, "kettle app:codex", f"{TITLES}|app:codex", None),  # made for what is asked: nothing to do
    (CONTENT, "kettle app:codex", f"{CONTENT}|app:codex", None),
    (CONTENT, "kettle", f"{CONTENT}|", None),
])
def test_the_load_event_makes_a_list_made_for_the_other_mode_again(tmp_path, prompt, query, made_for, reload):
    script = picker.load_script(ME, str(tmp_path), None, False)
    done = run_script(script, prompt, query, made_for, str(tmp_path))
    if reload is None:
        assert "reload" not in done
    else:
        assert done.endswith(reload) and done.count("reload") == 1


def test_it_does_so_at_most_three_times_for_the_same_filters(tmp_path):
    """A list that cannot say what it was made for (a cache folder gone) must not reload for good."""
    script = picker.load_script(ME, str(tmp_path), None, False)
    label = "="
    for _ in range(3):
        done = run_script(script.replace("$FZF_INPUT_LABEL", f"'{label}'"), CONTENT, "kettle", None, str(tmp_path))
        assert "reload" in done
        label = done.split("change-input-label(")[1].split(")")[0]
    done = run_script(script.replace("$FZF_INPUT_LABEL", f"'{label}'"), CONTENT, "kettle", None, str(tmp_path))
    assert "reload" not in done


def test_a_content_list_says_what_it_was_made_for(home, tmp_path):
    ClaudeSession(cwd="/w/kettle", prompt="descale the kettle").write(home)
    env = {"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache"), "FZF_PROMPT": CONTENT,
           "FZF_QUERY": "kettle since:5d"}
    run_cli("lines", "--content", "kettle since:5d", env=env)
    folder = tmp_path / "cache" / "sessidx"
    (noted,) = [p for p in folder.iterdir() if p.name.startswith(picker.WORDS_FILE)]
    assert noted.read_text() == f"{CONTENT}|since:5d\n"


def test_enter_on_a_list_made_for_the_other_mode_makes_it_again(home, tmp_path, monkeypatch):
    """Enter's check in content mode over a list of titles: the content list is made again and
    the key held (not the row resumed); in title mode over content rows, the titles."""
    session = ClaudeSession(cwd=str(tmp_path), prompt="descale the kettle")
    session.write(home)
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    run_cli("build", env={"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(cache)})
    state = picker.state_folder(current_env())
    assert state is not None
    for prompt, made_for, feed in ((CONTENT, f"{TITLES}|", "lines --content {q}"),
                                   (TITLES, f"{CONTENT}|", "lines)")):
        with open(picker.words_file(state, os.getpid()), "w") as f:
            f.write(made_for + "\n")
        env = {"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(cache), "FZF_PROMPT": prompt, "FZF_QUERY": "kettle",
               "FZF_LIST_LABEL": "enter", "SESSIDX_ROW": "claude"}
        done = run_cli("check", f"claude:{session.session_id}", env=env, check=True).stdout  # its parent: this process
        assert "enter-again" in done and feed in done and "accept" not in done


def test_only_the_warm_press_fresh_list_runs_behind_the_screen(tmp_path):
    """The fresh list a warm press's load event makes (the kept rows already on screen) runs at
    a lower CPU priority (`lines --background`); a list someone waits for never does: the
    first press's whole list (its note says the rows are coming), Ctrl-A's, content mode's,
    the one the load event makes again for the query."""
    state, cut = str(tmp_path), str(tmp_path / "cut")
    warm = picker.fzf_command("", "fzf", None, "bash", state=state)
    [first] = [arg for arg in warm if arg.startswith(f"--bind={picker.FIRST_LOAD}:")]
    assert first.count("lines --background") == 1 and "reload-sync(exec " in first
    assert not any("--background" in arg for arg in warm if arg != first)
    [later] = [arg for arg in warm if arg.startswith(f"--bind={picker.LATER_LOADS}:")]
    script = later.removeprefix(f"--bind={picker.LATER_LOADS}:transform:")
    assert "--background" not in run_script(script, TITLES, "kettle app:codex", f"{TITLES}|app:cl", state)
    cold = picker.fzf_command("", "fzf", None, "bash", cold=True, state=state, cut=cut)
    assert not any("--background" in arg for arg in cold)


def test_the_warm_press_draws_its_first_list_before_any_shell_runs(tmp_path):
    """fzf (0.71 on) draws no list until a load event's actions are done: the warm press's first
    load forks no shell (its fresh list is started by an action, not by a script), and every later
    load runs the script that checks the list's words and a held key."""
    warm = picker.fzf_command("", "fzf", None, "bash", state=str(tmp_path))
    binds = dict(arg.removeprefix("--bind=").split(":", 1) for arg in warm if arg.startswith("--bind="))
    assert binds["load"] == f"trigger({picker.LATER_LOADS},{picker.FIRST_LOAD})"
    first = binds[picker.FIRST_LOAD]
    assert first.startswith("change-header-label(=)+reload-sync(exec ") and first.endswith(
        f"+unbind({picker.FIRST_LOAD})+rebind({picker.LATER_LOADS})")
    assert "transform" not in first and "execute" not in first
    assert binds[picker.LATER_LOADS].startswith("transform:")
    assert f",{picker.LATER_LOADS})" in binds["start"]  # bound from the first load on


@pytest.mark.parametrize(("query", "made_for", "held", "searched"), [
    ("harbour9x", None, "", "search:harbour9x"),
    ("harbour9x", None, "enter", "rebind(result)+search:harbour9x"),  # the key checked at that search's result
    ("kettle app:codex", f"{TITLES}|app:codex", "alt-enter-again", "rebind(result)+search:kettle"),
    ("", None, "", "search:"),
])
def test_a_title_list_loaded_is_searched_again(tmp_path, query, made_for, held, searched):
    """fzf's matcher may run a keystroke's search asked while a reload-sync was reading, on the
    list before it, and then never match the list that came in: each load in title mode asks for
    the search once more (picker._SEARCH_AGAIN), and a held key is checked at its result."""
    script = picker.load_script(ME, str(tmp_path), None, False).replace("$FZF_LIST_LABEL", f"'{held}'")
    done = run_script(script, TITLES, query, made_for, str(tmp_path))
    assert done.endswith(searched) and " check " not in done and "reload" not in done


def test_a_content_list_loaded_checks_a_held_key_at_once(tmp_path):
    """Content mode's rows are the content index's answer to the query: fzf's search stays off."""
    script = picker.load_script(ME, str(tmp_path), None, False).replace("$FZF_LIST_LABEL", "'enter'")
    script = script.replace(f"exec {ME} check", "printf CHECKED; : ")
    done = run_script(script, CONTENT, "kettle", f"{CONTENT}|", str(tmp_path))
    assert "search:" not in done and done.endswith("CHECKED")
