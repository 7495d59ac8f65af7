"""Session ids that look like options, planted in every app's real on-disk format (file names,
JSON fields and database rows): never listed, never resumable, said under `build -v`. Ids come
from files other programs write (Crush keeps its database inside the project folder, so a cloned
repository can plant one), and the CLIs parse what follows `--resume` as options."""

from __future__ import annotations

import contextlib
import json
import marshal
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from homes import ClaudeSession
from synthetic_apps import MAKERS, make_home

from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.index import build, cache_path
from tests.conftest import REALDATA, run_cli

HOSTILE = ["--dangerously-skip-permissions", "-cmcp_servers.x.command=evil", "--dangerously-bypass-approvals-and-sandbox",
           "--yolo", "with space", "two\nlines", "id=1", "-"]


def fixture_of(app: str) -> str:
    return "opencode-home" if app == "kilo" else f"{app}-home"


# Aider has no ids: sessidx makes one from the history file's folder (16 hex digits), so no data
# can plant one. The other apps with no real CLI here come from fixtures/synthetic_apps.py.
ID_APPS = [app for app in APPS if app != "aider"]


def copy_home(realdata, app: str, target: Path) -> Path:
    """A copy of the app's real home under `target`; returns the home folder."""
    if app in MAKERS:
        make_home(target)
        return target / "home"
    shutil.copytree(realdata(fixture_of(app)), target, dirs_exist_ok=True)
    if app == "crush":  # rooted at `/`: its project list names absolute data folders
        listing = target / "home/sam/.local/share/crush/projects.json"
        doc = json.loads(listing.read_text())
        for project in doc["projects"]:
            project["data_dir"] = str(target) + project["data_dir"]
        listing.write_text(json.dumps(doc))
        return target / "home/sam"
    if app == "kilo":  # kilo is opencode under another name: its real files, renamed
        src = target / ".local/share/opencode"
        (target / ".local/share/kilo").mkdir(parents=True)
        for f in src.iterdir():
            shutil.move(str(f), target / ".local/share/kilo" / f.name.replace("opencode", "kilo"))
        src.rmdir()
    return target


def plant(home: Path, old: str, new: str, names: bool = True) -> None:
    """Every trace of session `old` renamed `new`: database rows, JSON text, file and folder names."""
    paths = sorted(home.rglob("*"), key=lambda p: len(p.parts), reverse=True)  # deepest first
    for path in paths:
        if path.is_file() and not path.is_symlink() and path.read_bytes()[:16] == b"SQLite format 3\x00":
            conn = sqlite3.connect(path)
            for (table,) in conn.execute("select name from sqlite_master where type = 'table'").fetchall():
                for column in [row[1] for row in conn.execute(f"pragma table_info('{table}')")]:
                    escaped = json.dumps(new)[1:-1]
                    # JSON text gets the id as JSON writes it; Cursor's meta is hex-encoded JSON
                    for was, now, shape in ((old, escaped, "in ('{', '[')"), (old, new, "not in ('{', '[')"),
                                            (old.encode().hex(), escaped.encode().hex(), "is not null")):
                        with contextlib.suppress(sqlite3.Error):  # a virtual table, a constraint
                            conn.execute(f'update "{table}" set "{column}" = replace("{column}", ?, ?) '
                                         f'where typeof("{column}") = \'text\' and instr("{column}", ?) '
                                         f'and substr("{column}", 1, 1) {shape}', (was, now, was))
            conn.commit()
            conn.execute("pragma wal_checkpoint(TRUNCATE)")
            conn.close()
    for path in paths:
        if path.is_file() and not path.is_symlink() and not path.name.endswith(("-wal", "-shm", "-journal")):
            data = path.read_bytes()
            if data[:16] != b"SQLite format 3\x00" and old.encode() in data:
                path.write_bytes(data.replace(old.encode(), json.dumps(new)[1:-1].encode()))
    for path in paths if names else ():
        if old in path.name:
            path.rename(path.with_name(path.name.replace(old, new)))


def listed(app: str) -> tuple[set[str], list[str]]:
    index = build(current_env(), [APPS[app]])
    return {s.id for s in index.sessions}, index.problems


def sibling(ident: str) -> str:
    """Another id of the same form: the last character changed."""
    last = ident[-1]
    return ident[:-1] + (("7" if last != "7" else "8") if last.isdigit() else ("e" if last != "e" else "d"))


@pytest.mark.parametrize("app", ID_APPS)
def test_option_like_ids_are_skipped_in_every_apps_real_format(app, realdata, tmp_path, monkeypatch):
    assert app in MAKERS or (REALDATA / f"{fixture_of(app)}.tar.gz").exists(), \
        f"every app needs its real home in fixtures/realdata (or a synthetic one): {app}"
    monkeypatch.setenv("SESSIDX_HOME", str(copy_home(realdata, app, tmp_path / "pristine")))
    before, _ = listed(app)
    assert before, app
    old = sorted(before)[0]
    # the control: an id of the app's own form, planted the same way, is listed
    control = tmp_path / "control"
    monkeypatch.setenv("SESSIDX_HOME", str(copy_home(realdata, app, control)))
    plant(control, old, sibling(old))
    assert listed(app)[0] == before - {old} | {sibling(old)}, "the planting does not reach this app's ids"
    for i, hostile in enumerate(HOSTILE):
        root = tmp_path / f"h{i}"
        monkeypatch.setenv("SESSIDX_HOME", str(copy_home(realdata, app, root)))
        plant(root, old, hostile, names=app != "amp")  # amp lists only `T-*.json`: the id inside
        ids, problems = listed(app)
        assert ids == before - {old}, hostile
        assert any(("not of" in p or "control characters" in p) for p in problems), (hostile, problems)
    # through the command line: `build -v` says so, the id resumes nothing, the picker lists the rest
    env = {"SESSIDX_HOME": str(copy_home(realdata, app, tmp_path / "cli"))}
    plant(tmp_path / "cli", old, "--dangerously-skip-permissions", names=app != "amp")
    done = run_cli("build", "-v", env=env)
    assert done.returncode == 0 and "'--dangerously-skip-permissions'" in done.stderr, done.stderr
    for ident in (f"{app}:--dangerously-skip-permissions", "--dangerously-skip-permissions"):
        resume = run_cli("resume", ident, "--json", env=env)
        assert resume.returncode != 0 and resume.stdout == "" and "Traceback" not in resume.stderr, ident
    assert "dangerously" not in run_cli("lines", env=env).stdout


def test_a_normal_id_goes_after_an_equals_sign_or_a_double_dash(home, realdata):
    """Checked on the real claude 2.1.332 and codex 0.171.0 (see README): `--resume --x` turns
    on --x, `--resume=--x` searches for a session named `--x`; `codex resume … -- --x` looks
    for the id `--x`. So even an id that slipped past the grammar could add nothing."""
    from homes import CodexThread, write_codex_home

    s = ClaudeSession(cwd=str(home), prompt="normal")
    s.write(home)
    t = CodexThread(cwd=str(home), title="normal")
    write_codex_home(home, [t])
    claude = json.loads(run_cli("resume", s.session_id, "--json", check=True).stdout)["argv"]
    assert claude[:2] == ["claude", f"--resume={s.session_id}"] and s.session_id not in claude
    codex = json.loads(run_cli("resume", t.thread_id, "--json", check=True).stdout)["argv"]
    assert codex[-2:] == ["--", t.thread_id] and codex.count(t.thread_id) == 1


@pytest.mark.parametrize("bad", ["two\nlines", "--dangerously-skip-permissions", "with space", ""])
def test_a_damaged_id_in_the_cache_is_dropped_when_read(home, bad):
    """Once: a cached id holding a newline was served as three picker rows."""
    good = ClaudeSession(cwd="/w/good", prompt="good one")
    good.write(home)
    odd = ClaudeSession(cwd="/w/odd", prompt="odd one")
    odd.write(home)
    run_cli("build", check=True)
    path = Path(cache_path(current_env()) or "")
    data = marshal.loads(path.read_bytes())
    for rows in data["apps"]["claude"][1].values():
        for row in rows:
            if row[1] == odd.session_id:
                row[1] = bad
    path.write_bytes(marshal.dumps(data))
    for args in (["lines"], ["list"]):
        out = run_cli(*args, check=True).stdout
        assert good.session_id[:8] in out and (not bad or bad not in out), args
        rows = [line for line in out.splitlines() if re.sub(r"\x1b\[[0-9;]*m", "", line).startswith("claude")]
        assert len(rows) == 2, (args, out)  # the odd one read again from its file, once
    assert run_cli("preview", "--shell", "bash", f"claude:{bad}").returncode != 0


def test_a_cached_id_of_the_wrong_form_is_not_resumed(home):
    """A printable id that no claude writes: the cache is read without a regex on a key press,
    but a cached session is checked against the full grammar before it becomes a command."""
    s = ClaudeSession(cwd=str(home), prompt="one")
    s.write(home)
    run_cli("build", check=True)
    path = Path(cache_path(current_env()) or "")
    data = marshal.loads(path.read_bytes())
    for rows in data["apps"]["claude"][1].values():
        for row in rows:
            row[1] = "not-a-claude-id"
    path.write_bytes(marshal.dumps(data))
    for args in (["preview", "--shell", "bash", "claude:not-a-claude-id"], ["resume", "claude:not-a-claude-id"]):
        done = run_cli(*args)
        assert "not-a-claude-id" not in done.stdout and "Traceback" not in done.stderr, args


def test_aider_ids_are_made_by_sessidx(tmp_path, monkeypatch):
    """Aider keeps no ids, so nothing in its data becomes one: the id is a digest of the folder."""
    make_home(tmp_path / "syn")
    monkeypatch.setenv("SESSIDX_HOME", str(tmp_path / "syn" / "home"))
    ids = {s.id for s in build(current_env(), APPS.values()).sessions if s.app == "aider"}
    assert ids and all(len(i) == 16 and set(i) <= set("0123456789abcdef") for i in ids)
