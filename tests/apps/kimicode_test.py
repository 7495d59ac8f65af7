"""Kimi Code 2.1.0 (npm `@moonshot-ai/kimi-code`) from the home its real CLI wrote
(fixtures/realdata/kimicode-home.tar.gz, with the kimi-cli home it migrated beside it): every
session indexed as `kimi session list` and the records say, the resume plan against the real
`--help`, loose modes held back, kimi-cli and Kimi Code under the one `kimi`, a migrated session
listed once."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from sessidx.apps import APPS
from sessidx.clihelp import HelpText
from sessidx.config import current_env
from sessidx.index import build
from tests.conftest import REALDATA, run_cli

FIELDS = ("app", "id", "cwd", "title", "branch", "model", "approval", "archived")
MANUAL = "session_40ab70dc-c197-4255-aac5-681582b1f70b"  # TUI, /title "Data tools tour", in 数据-tools
PLAN = "session_806cc890-d7c9-4a26-8d9c-3a568cbd8314"  # kimi --plan
YOLO = "session_5f3448be-13a8-44fc-9ef6-eabebd7ed648"  # kimi --yolo
AUTO = "session_89adf214-a650-461d-ba85-8a6879113746"  # kimi --auto
PRINT = "session_3b64299f-0385-42e8-bcc1-15b72a117cf7"  # kimi -p, then kimi -S ID -p
MIGRATED_YOLO = "ses_afe90848-0af4-45ff-b70d-7d3cf4237052"  # kimi-cli's /yolo session, migrated
HELP = (REALDATA / "kimicode-help.txt").read_text()


def expected() -> list[dict]:
    return json.loads((REALDATA / "kimicode-expected.json").read_text())


def rows(sessions) -> list[dict]:
    return [{**{f: getattr(s, f) for f in FIELDS}, "updated_ms": s.mtime} for s in sessions]


def session(realdata, sid: str):
    env = current_env({"SESSIDX_HOME": str(realdata("kimicode-home"))})
    return next(s for s in build(env, [APPS["kimicode"]]).sessions if s.id == sid)


def test_real_home_is_indexed_as_kimi_session_list_shows_it(realdata, monkeypatch):
    monkeypatch.setenv("SESSIDX_HOME", str(realdata("kimicode-home")))
    want = expected()
    assert rows(build(current_env(), [APPS["kimicode"]]).sessions) == want  # newest first, archived too
    listed = [json.loads(line) for line in run_cli("list", "--json", "--app", "kimicode").stdout.splitlines()]
    assert [r["id"] for r in listed] == [w["id"] for w in want if not w["archived"]]
    # the CLI's own listing, kept beside the home
    own = json.loads((REALDATA / "kimicode-listing.txt").read_text().split("--json (Kimi Code 2.1.0, HOME=/home/mika)\n")[1])
    assert [(s["id"], s["workDir"], s["updatedAt"], s["archived"]) for s in own] == \
        [(w["id"], w["cwd"], w["updated_ms"], w["archived"]) for w in want]


def test_kimi_code_home_moves_the_store(realdata, tmp_path, monkeypatch):
    moved = tmp_path / "moved"
    shutil.copytree(realdata("kimicode-home") / ".kimi-code", moved)
    monkeypatch.setenv("SESSIDX_HOME", str(tmp_path / "empty"))
    monkeypatch.setenv("KIMI_CODE_HOME", str(moved))
    assert len(build(current_env(), [APPS["kimicode"]]).sessions) == len(expected())


@pytest.mark.parametrize("sid", [MANUAL, PLAN, MIGRATED_YOLO])
def test_manual_and_plan_sessions_resume_with_dash_s_alone(realdata, sid):
    """2.1.0 restores plan mode by itself; a migrated kimi-cli yolo session came back in manual
    (it asked before the canary: `vscode_legacy_approval` is written, never read)."""
    plan = APPS["kimicode"].plan(session(realdata, sid), HelpText(HELP, found=True, version="2.1.0"), False,
                                 current_env({}))
    assert plan.argv == ["kimi", "-S", sid] and plan.refusal is None and not plan.warnings


@pytest.mark.parametrize(("sid", "mode"), [(YOLO, "yolo"), (AUTO, "auto"), (PRINT, "auto")])
def test_a_loose_mode_is_refused_without_the_opt_in_and_says_why(realdata, sid, mode):
    cli = HelpText(HELP, found=True, version="2.1.0")
    plain = APPS["kimicode"].plan(session(realdata, sid), cli, False, current_env({}))
    assert plain.refusal is not None and f"restores {mode} mode by itself" in plain.refusal
    assert "no flag brings a session back to manual" in plain.refusal and plain.refusal_kind == "loose_mode"
    assert [h.flag for h in plain.held_back] == [f"--{mode}"] and "kimi 2.1.0" in plain.held_back[0].reason
    opted = APPS["kimicode"].plan(session(realdata, sid), cli, True, current_env({}))
    assert opted.argv == ["kimi", "-S", sid] and opted.refusal is None  # the CLI restores it: nothing to add


def test_the_shell_line_cds_into_the_folder_first(realdata, tmp_path, stub_bin):
    """From another folder 2.1.0 exits 1 ("created under a different directory")."""
    home = tmp_path / "kimi-home"
    shutil.copytree(realdata("kimicode-home"), home)
    folder = tmp_path / "数据-tools"
    folder.mkdir()
    state = next((home / ".kimi-code/sessions").glob(f"*/{MANUAL}/state.json"))
    state.write_text(json.dumps({**json.loads(state.read_text()), "cwd": str(folder)}))
    _stub_kimi(stub_bin, HELP)
    env = {"SESSIDX_HOME": str(home), "PATH": f"{stub_bin}:{os.environ['PATH']}"}
    line = run_cli("resume", f"kimicode:{MANUAL}", "--shell", "bash", env=env)
    assert line.returncode == 0, line.stderr
    assert line.stdout.startswith(f"cd -- '{folder}'") or f"'{folder}'" in line.stdout.split("&&")[0]
    assert f"kimi -S {MANUAL}" in line.stdout


def _stub_kimi(folder: Path, help_text: str) -> None:
    script = folder / "kimi"
    script.write_text(f"#!/bin/sh\ncase \"$1\" in --help) cat <<'HELP'\n{help_text}HELP\nexit 0;;\n"
                      "--version|-V) echo 2.1.0; exit 0;; esac\necho ran\n")
    script.chmod(0o755)


KIMI_CLI_HELP = (REALDATA / "kimi-cli-help.txt").read_text()


def test_the_installed_kimi_decides_which_store_resumes(realdata, stub_bin):
    """One `kimi` on PATH: Kimi Code's help resumes Kimi Code sessions and sends kimi-cli ones to
    `kimi migrate`; kimi-cli's help resumes kimi-cli sessions and refuses Kimi Code ones."""
    code_home = realdata("kimicode-home")
    env = {"SESSIDX_HOME": str(code_home), "PATH": f"{stub_bin}:{os.environ['PATH']}"}
    _stub_kimi(stub_bin, HELP)
    ok = json.loads(run_cli("resume", f"kimicode:{MANUAL}", "--json", env=env).stdout)
    assert ok["argv"] == ["kimi", "-S", MANUAL] and ok["error"].startswith("folder no longer exists")
    legacy_env = {**env, "SESSIDX_HOME": str(realdata("kimi-home"))}
    legacy = json.loads(run_cli("resume", "kimi:94e83996-ea27-4f50-b1e0-993933a8efd9", "--json",
                                env=legacy_env).stdout)
    assert legacy["ok"] is False and "kimi migrate --run" in legacy["error"]
    (stub_bin / "kimi").unlink()
    _stub_kimi(stub_bin, KIMI_CLI_HELP)
    refused = json.loads(run_cli("resume", f"kimicode:{MANUAL}", "--json", env=env).stdout)
    assert refused["ok"] is False and "kimi-cli" in refused["error"]
    old = json.loads(run_cli("resume", "kimi:94e83996-ea27-4f50-b1e0-993933a8efd9", "--json", env=legacy_env).stdout)
    assert old["argv"][:2] == ["kimi", "-r"] and old["error"].startswith("folder no longer exists")


def test_a_migrated_session_is_listed_once(realdata, tmp_path, monkeypatch):
    """The home holds kimi-cli's store and Kimi Code's copy of its five sessions (`ses_<id>`)."""
    home = tmp_path / "kimi-home"
    shutil.copytree(realdata("kimicode-home"), home)
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    both = build(current_env(), [APPS["kimi"], APPS["kimicode"]]).sessions
    legacy = {s.id for s in both if s.app == "kimi"}
    copies = {s.id[len("ses_"):] for s in both if s.app == "kimicode" and s.id.startswith("ses_")}
    assert legacy == set() and len(copies) == 5
    # a Kimi Code store that never got this one: kimi-cli's own session is listed again
    shutil.rmtree(next((home / ".kimi-code/sessions").glob("*/" + MIGRATED_YOLO)))
    index = home / ".kimi-code/session_index.jsonl"
    index.write_text("".join(line for line in index.read_text().splitlines(keepends=True) if MIGRATED_YOLO not in line))
    again = build(current_env(), [APPS["kimi"], APPS["kimicode"]]).sessions
    assert {s.id for s in again if s.app == "kimi"} == {MIGRATED_YOLO[len("ses_"):]}
    assert [s.approval for s in again if s.app == "kimi"] == ["yolo"]


def test_the_conversation_is_what_was_said_without_the_reminders(realdata):
    said = run_cli("preview", f"kimicode:{MANUAL}", env={"SESSIDX_HOME": str(realdata("kimicode-home"))}).stdout
    assert "Summarise the README of this folder" in said and "Hello from mock." in said
    assert "touch /tmp/apps-work/canary-manual" in said and "the user rejected the approval request" in said
    assert "system-reminder" not in said and "Today's date is" not in said
    assert said.count("Summarise the README of this folder") == 1
    migrated = run_cli("preview", f"kimicode:{MIGRATED_YOLO}",
                       env={"SESSIDX_HOME": str(realdata("kimicode-home"))}).stdout
    assert "Summarise these notes" in migrated and "Hello from mock." in migrated


def test_a_session_without_state_or_with_a_hostile_id_is_skipped(realdata, tmp_path, monkeypatch):
    home = tmp_path / "kimi-home"
    shutil.copytree(realdata("kimicode-home"), home)
    folder = next((home / ".kimi-code/sessions").glob(f"*/{PLAN}"))
    (folder / "state.json").write_text("{not json")
    other = next((home / ".kimi-code/sessions").glob(f"*/{YOLO}/state.json"))
    other.write_text(json.dumps({**json.loads(other.read_text()), "id": "--yolo"}))
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    ids = {s.id for s in build(current_env(), [APPS["kimicode"]]).sessions}
    assert PLAN not in ids and "--yolo" not in ids and YOLO not in ids and MANUAL in ids


def test_a_word_said_mid_session_is_found_by_search(realdata, tmp_path):
    """A copy of the record holding a prompt, saying a rare word, in the middle of the event log
    between filler copies longer than the tail the list reads: the content index finds it."""
    home = tmp_path / "kimi-home"
    shutil.copytree(realdata("kimicode-home"), home)
    wire = next((home / ".kimi-code/sessions").glob(f"*/{MANUAL}/agents/main/wire.jsonl"))
    lines = wire.read_bytes().splitlines(keepends=True)
    prompt = b"Summarise the README of this folder"
    line = next(ln for ln in lines if prompt in ln and b'"agent.message.appended"' in ln)
    filler = [line.replace(prompt, f"filler number {i}".encode()) for i in range(700 * 1024 // len(line) + 1)]
    at = lines.index(line) + 1
    lines[at:at] = [*filler, line.replace(prompt, b"we spoke of the zqxkimicodeneedle here"), *filler]
    wire.write_bytes(b"".join(lines))
    done = run_cli("search", "zqxkimicodeneedle", "--json", env={"SESSIDX_HOME": str(home)})
    hits = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(h["app"], h["id"]) for h in hits] == [("kimicode", MANUAL)] and "zqxkimicodeneedle" in hits[0]["snippet"]


KIMI_CREDENTIALS = (".kimi-code/config.toml", ".kimi-code/server.token", ".kimi/config.toml")


def test_the_homes_are_only_read_and_no_credential_is_opened(realdata, tmp_path, monkeypatch):
    """Kimi Code's config.toml may hold `api_key`s and server.token is `kimi web`'s bearer token."""
    from sessidx.content import reading, store
    from sessidx.content.query import search
    from sessidx.conversation import recent
    from tests.readonly_test import RECORDER

    home = tmp_path / "kimi-home"
    shutil.copytree(realdata("kimicode-home"), home)
    for cred in KIMI_CREDENTIALS:
        (home / cred).write_text('api_key = "do-not-open"\n')
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    RECORDER.roots = (str(home),)
    before = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in home.rglob("*"))
    RECORDER.active = True
    try:
        index = build(current_env(), [APPS["kimi"], APPS["kimicode"]])
        db = store.connect(current_env())
        stats = reading.refresh(db, index.sessions)
        found = search(db, "mock")
        previewed = [recent(s, APPS[s.app]) for s in index.sessions]
    finally:
        RECORDER.active = False
    assert len(index.sessions) == 11 and stats["messages"] > 0 and found and all(previewed)
    assert RECORDER.writes == []
    opened = {os.path.relpath(p, home) for p in RECORDER.opened}
    assert not opened & set(KIMI_CREDENTIALS) and ".kimi-code/session_index.jsonl" in opened
    after = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in home.rglob("*"))
    assert before == after
