"""One list of refusals (issue 27): every listing marks exactly the sessions Enter refuses.

Over the real homes in fixtures/realdata, all in one home as a new user's machine holds them:
the picker's title rows (`lines`), its content rows (`lines --content`), `sessidx list` and
`list --json` each name the sessions that Enter (`resume --json`, the plan `check` makes)
refuses, no more and no fewer, with the same kind."""

from __future__ import annotations

import ast
import io
import json
import re
import tarfile
from pathlib import Path

import pytest

from sessidx.refusals import MARKS, SHARED, refusal_mark
from tests.conftest import REALDATA, ROOT, _data_without_absolute_links, run_cli

ANSI = re.compile(r"\x1b\[[0-9;]*m")
HOMES = ["claude", "codex", "gemini", "copilot", "cline", "qwen", "droid", "kimi", "vibe", "opencode", "cn", "auggie",
         "crush", "goose", "amp", "pi", "hermes", "openhands", "gptme"]
# words said in nearly every session: the content rows to compare come from these searches
COMMON_WORDS = ["the", "file", "test", "a", "is", "to", "hello", "what", "run", "code", "list", "and"]


@pytest.fixture(scope="module")
def real_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("every")
    for app in HOMES:
        with tarfile.open(REALDATA / f"{app}-home.tar.gz") as tar:
            tar.extractall(home, filter=_data_without_absolute_links)
    return home


@pytest.fixture(scope="module")
def enter_refuses(real_home, tmp_path_factory) -> dict[str, str]:
    """key -> the kind Enter refuses it with, for every session of the home (archived ones too);
    resumable ones are absent. Asked of `resume --json` in this process, as the CLI runs it."""
    from sessidx import commands
    from sessidx.config import current_env
    from sessidx.errors import SessidxError

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SESSIDX_HOME", str(real_home))
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        patch.setenv("PATH", "/nonexistent")  # no agent CLI: the plan rests on what was recorded
        env = current_env()
        listed = [json.loads(line) for line in _cli(real_home, "list", "--json", "--archived").stdout.splitlines()]
        refused: dict[str, str] = {}
        for row in listed:
            key = f"{row['app']}:{row['id']}"
            said = io.StringIO()
            try:
                commands.resume(env, lambda line, said=said: said.write(line), key, as_json=True, shell="bash")
            except SessidxError as exc:
                raise AssertionError(f"{key}: {exc}") from None
            plan = json.loads(said.getvalue())
            assert (plan["error"] is None) == (plan["refused"] is None), plan
            if plan["refused"]:
                refused[key] = plan["refused"]["kind"]
                assert plan["error"] == plan["refused"]["reason"]
    return refused


def _cli(home: Path, *args: str, **extra: str):
    return run_cli(*args, env={"SESSIDX_HOME": str(home), "PATH": "/nonexistent", "FZF_COLUMNS": "200", **extra},
                   check=True)


def test_the_real_homes_hold_refusals_of_several_kinds(enter_refuses):
    """The comparisons below are not vacuous: Enter refuses sessions here, for several reasons."""
    kinds = set(enter_refuses.values())
    assert len(enter_refuses) >= 10 and {"loose_mode", "cleanup_deletes", "folder_gone", "archived"} <= kinds, kinds


def test_list_json_says_what_enter_refuses(real_home, enter_refuses):
    rows = [json.loads(line) for line in _cli(real_home, "list", "--json", "--archived").stdout.splitlines()]
    said = {f"{r['app']}:{r['id']}": r["refused"]["kind"] for r in rows if r["refused"]}
    assert said == enter_refuses
    assert all(r["refused"] is None or r["refused"]["reason"] for r in rows)


def test_list_marks_what_enter_refuses(real_home, enter_refuses):
    """`sessidx list`: the mark before the title, the rows in `list --json`'s order."""
    keys = [f"{r['app']}:{r['id']}" for r in map(json.loads, _cli(real_home, "list", "--json", "--archived")
                                                 .stdout.splitlines())]
    table = _cli(real_home, "list", "--archived", COLUMNS="300").stdout.splitlines()
    assert len(table) == len(keys)
    for key, row in zip(keys, table, strict=True):
        kind = enter_refuses.get(key)
        assert (refusal_mark(kind) + " " in row) if kind else "✗" not in row, (key, row)


def test_the_title_rows_mark_what_enter_refuses(real_home, enter_refuses):
    out = _cli(real_home, "lines").stdout.splitlines()[1:]
    rows = {line.rsplit("\t", 1)[1]: ANSI.sub("", line.rsplit("\t", 1)[0]) for line in out}
    assert rows
    for key, row in rows.items():  # the picker lists no archived session
        kind = enter_refuses.get(key)
        assert (refusal_mark(kind) + " " in row) if kind else "✗" not in row, (key, row)
    assert {k for k in enter_refuses if k in rows} == {k for k, r in rows.items() if "✗" in r}


def test_the_content_rows_mark_what_enter_refuses(real_home, enter_refuses, tmp_path):
    """Ctrl-F: a search's rows carry the same marks; the searches reach most refused sessions."""
    _cli(real_home, "search", "--refresh")
    seen: dict[str, str] = {}
    for word in COMMON_WORDS:
        out = _cli(real_home, "lines", "--content", word, FZF_PROMPT="content> ").stdout.splitlines()[1:]
        seen.update((line.rsplit("\t", 1)[1], ANSI.sub("", line.rsplit("\t", 1)[0])) for line in out)
    for key, row in seen.items():
        kind = enter_refuses.get(key)
        assert (refusal_mark(kind) + " " in row) if kind else "✗" not in row, (key, row)
    reached = {k for k in enter_refuses if k in seen}
    assert len(reached) >= len(enter_refuses) // 2, sorted(set(enter_refuses) - reached)


def _refuse_kinds() -> list[tuple[str, object]]:
    """(file, kind) of every `.refuse(reason, kind)` call in the adapters."""
    found = []
    for path in sorted((ROOT / "sessidx" / "apps").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "refuse":
                kind = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords
                                                                     if k.arg == "kind"), None)
                found.append((path.name, kind.value if isinstance(kind, ast.Constant) else kind))
    return found


def test_every_refusal_kind_has_its_own_mark():
    """A kind an adapter refuses with, or a shared check's, that has no mark fails here; so do two
    kinds with one mark (every mark says why, and tells the kinds apart)."""
    used = _refuse_kinds()
    assert len(used) >= 10  # the probe finds the adapters' refusals
    for name, kind in used:
        assert isinstance(kind, str) and kind in MARKS, f"{name}: refuse(..., {kind!r}) has no mark in refusals.MARKS"
    for kind, _, _ in SHARED:
        assert kind in MARKS
    marks = list(MARKS.values())
    assert len(set(marks)) == len(marks) and all(marks)
    assert "refused" not in marks  # a mark says why


def test_gptme_says_why_it_refuses(real_home, enter_refuses):
    """Issue 29: gptme's row read `✗ refused`; it restores no_confirm by itself (a loose mode)."""
    gptme = [k for k in enter_refuses if k.startswith("gptme:")]
    assert gptme and {enter_refuses[k] for k in gptme} == {"loose_mode"}



def test_each_shared_check_in_enter_s_order(home, tmp_path):
    """The shared checks over sessions made to fail each one, and one that passes them all."""
    from sessidx.config import current_env
    from sessidx.model import Session
    from sessidx.refusals import refusals, row_marks

    here, transcript = tmp_path / "here", tmp_path / "t.jsonl"
    here.mkdir()
    transcript.write_text("{}\n")
    uid = "0b4ad1b6-9f27-4cb1-8a6e-7d7a0f3c1e5"
    made = {
        "ok": Session("claude", uid + "0", str(here), path=str(transcript)),
        "files_gone": Session("claude", uid + "1", str(here), path=str(tmp_path / "deleted.jsonl")),
        "no_folder": Session("claude", uid + "2", None, path=str(transcript)),
        "folder_gone": Session("claude", uid + "3", str(tmp_path / "gone"), path=str(transcript)),
        "archived": Session("claude", uid + "4", str(here), path=str(transcript), archived=True),
        "unknown_app": Session("nosuchapp", "x1"),
        "bad_id": Session("claude", "-not-an-id"),
    }
    found = refusals(current_env(), list(made.values()))
    assert {k: r.kind for k, r in found.items()} == {s.key: kind for kind, s in made.items() if kind != "ok"}
    marks = row_marks(current_env(), list(made.values()))
    assert made["ok"].key not in marks and marks[made["files_gone"].key] == "✗ files gone"


def test_a_listing_names_the_transcripts_it_statted_and_a_cached_one_none(home, monkeypatch):
    """`list` and the picker's fresh list check "its files are gone" against the stats the
    listing just made (10,000 stats fewer at 10,000 sessions); a listing made without a stat
    (the cache alone) vouches for nothing, and Enter's own check looks at the disk."""
    import time

    from homes import ClaudeSession

    from sessidx.apps import APPS
    from sessidx.config import current_env
    from sessidx.index import build
    from sessidx.refusals import Looks, refusals

    monkeypatch.setenv("SESSIDX_HOME", str(home))
    path = ClaudeSession(cwd=str(home), prompt="hello", mtime=time.time() - 60).write(home)
    env = current_env()
    fresh = build(env, APPS.values())
    assert str(path) in fresh.present and all(p.startswith("/") for p in fresh.present)
    assert build(env, APPS.values(), refresh=False).present == frozenset()
    path.unlink()  # gone after the listing: the listing's own look says present, the disk says gone
    (session,) = fresh.sessions
    assert session.key not in refusals(env, [session], Looks(fresh.present))
    assert refusals(env, [session])[session.key].kind == "files_gone"


# Values a session's fields take: the modes and words the adapters decide on, folders that
# exist and that do not, nothing; the rest is drawn as text.
_WORDS = ["default", "auto", "plan", "acceptEdits", "bypassPermissions", "dontAsk", "yolo", "auto-edit", "never",
          "on-request", "untrusted", "danger-full-access", "workspace-write", "read-only", "high", "medium", "low",
          "off", "max", "build", "accept-edits", "cli", "exec", "sdk-cli", "gpt-5", "claude-sonnet-5-5", "main"]


def _field_values(name: str, folders: list[str]):
    from hypothesis import strategies as st

    if name == "mtime":
        return st.integers(min_value=0, max_value=2**42)
    if name == "bytes":
        return st.none() | st.integers(min_value=0, max_value=2**40)
    if name == "archived":
        return st.booleans()
    if name in ("app", "id"):
        return st.just(None)  # kept: the app's own, an id of its form
    return st.none() | st.sampled_from(_WORDS + folders) | st.text(max_size=12)


def test_an_apps_refusal_rests_on_its_refusal_fields_alone(tmp_path):
    """An app's `refusal_fields` let every listing make one plan per distinct value of them,
    not one per session (refusals.refusals). Each app that declares them refuses, with the
    same reason, whatever its other fields hold."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from sessidx.apps import APPS
    from sessidx.config import current_env
    from sessidx.model import Session
    from sessidx.refusals import _UNKNOWN_CLI

    folders = [str(tmp_path), str(tmp_path / "gone"), "/"]
    declared = [app for app in APPS.values() if getattr(app, "refusal_fields", None) is not None]
    assert {"claude", "gemini", "opencode"} <= {app.name for app in declared}
    env = current_env()
    session_values = st.fixed_dictionaries({name: _field_values(name, folders) for name in Session.__slots__})

    @settings(max_examples=400, deadline=None)
    @given(st.sampled_from(declared), session_values, session_values)
    def check(app, one, other) -> None:
        first = Session(**{**one, "app": app.name, "id": "0c4b8f57-5f5e-4a53-9d7c-9d1e0e2c3b4a"})
        second = Session(**{**other, **{f: getattr(first, f) for f in app.refusal_fields},
                            "app": app.name, "id": "9a1e7c2d-3b4f-4e5a-8c6d-7f8091a2b3c4"})
        planned = [app.plan(s, _UNKNOWN_CLI, False, env) for s in (first, second)]
        assert [(p.refusal, p.refusal_kind) for p in planned][0] == (planned[1].refusal, planned[1].refusal_kind)

    check()


def test_a_listing_makes_one_plan_per_kind_of_row_and_marks_as_enter_does(monkeypatch):
    """55,000 plans were half a warm `list`: the rows of an app whose refusal rests on a few
    fields share a plan, and each row still gets its own shared checks (its own folder)."""
    from sessidx.apps import app_named
    from sessidx.config import current_env
    from sessidx.model import Session
    from sessidx.refusals import refusals

    made: list[str] = []
    claude = app_named("claude")
    real = type(claude).plan

    def counted(self, session, *args):
        made.append(session.id)
        return real(self, session, *args)

    monkeypatch.setattr(type(claude), "plan", counted)
    ids = [f"0c4b8f57-5f5e-4a53-9d7c-{i:012x}" for i in range(50)]
    sessions = [Session("claude", sid, cwd="/" if i % 2 else "/no/such/folder", path=None) for i, sid in enumerate(ids)]
    found = refusals(current_env(), sessions)
    assert len(made) == 1
    assert {key for key, r in found.items() if r.kind == "folder_gone"} == {s.key for s in sessions[::2]}
