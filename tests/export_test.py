"""`sessidx export` (issue 31): any session, of every app's real format, as a readable Markdown or
JSON document with every secret masked; Alt-E in the picker writes one to a new file."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from homes import ClaudeSession

from sessidx.export import markdown
from tests.conftest import require, run_cli
from tests.content_test import REAL_HOMES, SYNTHETIC, a_plain_prompt, home_for, plant, sessions_of
from tests.stubs import recorded, write_stub

SECRET = "ghp_" + "Zq8XvN2kLmR4tY7wB1cD9eF3gH5jK6pQ0sUa"  # a GitHub token's shape


@pytest.mark.parametrize("app", [*REAL_HOMES, *SYNTHETIC])
def test_a_session_of_every_app_exports_masked(app, realdata, tmp_path, monkeypatch):
    home = home_for(app, realdata, tmp_path)
    session, prompt = a_plain_prompt(sessions_of(home, monkeypatch, app))
    plant(app, session, prompt, f"{prompt} and then GITHUB_TOKEN={SECRET} was pasted")
    key, env = f"{app}:{session.id}", {"SESSIDX_HOME": str(home)}
    done = run_cli("export", key, env=env)
    assert done.returncode == 0, done.stderr
    page = done.stdout
    assert page.startswith("# ") and f"| app | {app} |" in page and "## Conversation" in page
    assert "### You" in page and prompt in page
    assert "GITHUB_TOKEN=•••" in page and SECRET not in page and SECRET[4:16] not in page
    if session.cwd:
        assert session.cwd.replace("|", "\\|") in page
    doc = json.loads(run_cli("export", "--json", key, env=env, check=True).stdout)
    assert (doc["app"], doc["session_id"], doc["folder"], doc["branch"]) == (app, session.id, session.cwd,
                                                                             session.branch)
    planted = next(p for p in sessions_of(home, monkeypatch, app) if p.id == session.id)  # its mtime: the plant's
    assert abs(datetime.fromisoformat(doc["last_used"]).timestamp() - planted.mtime / 1000) < 1
    assert doc["exported"] and doc["id"] == key
    assert any(m["role"] == "user" and prompt in m["text"] for m in doc["messages"])
    assert all(m["role"] in ("user", "assistant", "tool") and SECRET not in m["text"] for m in doc["messages"])
    assert json.loads(run_cli("export", "--format", "json", key, env=env).stdout)["messages"] == doc["messages"]


def test_tool_calls_and_outputs_are_gists_in_code_blocks(realdata, tmp_path, monkeypatch):
    home = home_for("codex", realdata, tmp_path)
    done = run_cli("export", "codex:01a2294c-9921-7c40-80d2-48b5ddcf2514", env={"SESSIDX_HOME": str(home)}, check=True)
    page = done.stdout
    at = page.index("### Tool")
    assert page[at:].split("\n")[2] == "```" and "git status" in page[at:at + 400]


def test_to_a_file_and_the_bad_ids(home, tmp_path):
    s = ClaudeSession(cwd="/w/p", prompt="Fix the flaky login test")
    s.write(home)
    out = tmp_path / "page.md"
    done = run_cli("export", s.session_id[:8], "-o", str(out))
    assert done.returncode == 0 and done.stdout == "" and f"exported to {out}" in done.stderr
    assert "Fix the flaky login test" in out.read_text()
    for bad, said in ((["export"], "export needs a session"), (["export", "nosuch-id"], "no session matches"),
                      (["export", "ab"], "too short"), (["export", s.session_id, "-o", str(tmp_path / "no/such/dir.md")],
                                                         "cannot write"), (["export", s.session_id, "-o", "/dev/full"],
                                                                           "cannot write /dev/full: No space left")):
        done = run_cli(*bad)
        assert done.returncode == 1 and said in done.stderr and done.stderr.count("\n") == 1, (bad, done.stderr)


def test_markdown_cannot_be_broken_by_what_was_said():
    """A tool output holding a fence, a title with a pipe, terminal escapes: the page holds."""
    doc = {"app": "claude", "id": "claude:x", "session_id": "x", "title": "a | b\x1b[31m red", "folder": "/w/a|b",
           "messages": [{"role": "tool", "text": "```\nrm -rf /\n````"}, {"role": "user", "text": "hi\x1b]0;pwn\x07"}]}
    page = markdown(doc)
    assert "\x1b" not in page and "\x07" not in page
    assert "| folder | `/w/a\\|b` |" in page
    fence = page.split("### Tool\n\n", 1)[1].split("\n", 1)[0]
    assert fence == "`````" and page.count(fence) == 2


def test_the_picker_key_writes_a_new_file_each_time(home, tmp_path, monkeypatch):
    s = ClaudeSession(cwd="/w/p", prompt="Export me please")
    s.write(home)
    monkeypatch.chdir(tmp_path)
    first = run_cli("export", "--picker", "--", f"claude:{s.session_id}")
    second = run_cli("export", "--picker", "--", f"claude:{s.session_id}")
    name = f"sessidx-claude-{s.session_id}"
    assert first.stdout == f"change-header:exported to {tmp_path}/{name}.md\n"
    assert second.stdout == f"change-header:exported to {tmp_path}/{name}-2.md\n"
    assert "Export me please" in (tmp_path / f"{name}-2.md").read_text()
    assert run_cli("export", "--picker", "--", "").stdout == "change-header:no session to export\n"
    assert run_cli("export", "--picker", "--", "claude:nope-nope").stdout.startswith("change-header:not exported: ")


@pytest.mark.shell
def test_alt_e_in_the_picker_exports_the_selected_session(tmp_path, home, stub_bin):
    """The real fzf in a real bash: Alt-E writes the file in the shell's folder, says where, stays open."""
    require("tmux")
    require("bash")
    from tests.shell_test import Shell, session_in

    write_stub(stub_bin, "claude")
    s = session_in(tmp_path / "work", home, prompt="Export this one")
    shell = Shell("bash", tmp_path, home, stub_bin)
    try:
        shell.pick("Export this one", key="M-e")
        written = tmp_path / f"sessidx-claude-{s.session_id}.md"
        shell.tmux.until_file(written, "the exported file")
        screen = shell.tmux.until(lambda scr: "exported to" in scr, "where it went, in the header")
        assert "session>" in screen  # the picker is still open
        assert "Export this one" in written.read_text()
        shell.tmux.send("Escape")
    finally:
        shell.tmux.kill()
    assert recorded(stub_bin, "claude") is None
