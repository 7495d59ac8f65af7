"""What people read: columns that line up with wide characters, and nothing raw from the data."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessidx.model import Session
from sessidx.render import clean, columns, pad, picker_lines, shorten_left, table


def session(cwd: str, title: str = "t", sid: str = "abcdef12-0000") -> Session:
    return Session("claude", sid, cwd, "main", title, 1_700_000_000_000, 1, None, None, None, None, None)


def test_wide_characters_take_two_columns():
    assert columns("plain") == 5
    assert columns("café") == 4  # é is one column
    assert columns("日本") == 4
    assert columns("notes-🚀") == 8
    assert columns(pad("日本", 6)) == 6 and pad("日本", 6) == "日本  "


def test_shorten_left_counts_columns():
    cut = shorten_left("/home/alex/code/café-ünïcode-日本", 12)
    assert columns(cut) <= 12 and cut.startswith("…") and cut.endswith("日本")


def test_rows_line_up_whatever_the_folder_name():
    rows = table([session("/w/日本語のフォルダ", sid="a0000000-1"), session("/w/plain", sid="b0000000-1")], 160)
    titles_at = {columns(row[: row.rindex(" t")]) for row in rows}
    assert len(titles_at) == 1  # the title column starts at the same column on both rows
    shown = [line.rsplit("\t", 1)[0] for line in picker_lines([session("/w/🚀🚀", sid="c1"), session("/w/x", sid="d1")])[1:]]
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", s) for s in shown]
    assert len({columns(p[: p.rindex("main")]) for p in plain}) == 1


def test_clean_neutralises_control_characters():
    assert clean("a\x1b[31mb\tc\nd\x07") == "a?[31mb c d?"
    assert clean("x" * 50, 10) == "x" * 9 + "…"


def test_picker_puts_this_folders_sessions_first_newest_first_within():
    older_here = Session("claude", "here-old", "/w/here", None, "h1", 1_000, 1, None, None, None, None, None)
    newer_here = Session("claude", "here-new", "/w/here", None, "h2", 2_000, 1, None, None, None, None, None)
    elsewhere = Session("codex", "away", "/w/else", None, "e", 9_000, 1, None, None, None, None, None)
    keys = [line.rsplit("\t", 1)[1] for line in picker_lines([elsewhere, newer_here, older_here], here="/w/here")[1:]]
    assert keys == ["claude:here-new", "claude:here-old", "codex:away"]


@given(value=st.text(max_size=300), width=st.integers(min_value=1, max_value=80))
def test_shorten_left_keeps_the_longest_end_that_fits(value, width):
    cut = shorten_left(value, width)
    assert columns(cut) <= width
    if cut != value:
        kept = cut[1:]
        assert cut.startswith("…") and value.endswith(kept)
        longer = value[len(value) - len(kept) - 1:]
        assert columns(longer) > width - 1  # one more character would not have fitted


def test_shortening_a_4000_character_folder_is_one_pass(monkeypatch):
    """Once quadratic: 1.3 s per session for a legal 4,081-byte non-ASCII folder."""
    from sessidx import render

    calls = []
    real = render._char_columns
    monkeypatch.setattr(render, "_char_columns", lambda ch: calls.append(1) or real(ch))
    folder = "/" + "ü日" * 1360
    cut = shorten_left(folder, 36)
    assert columns(cut) <= 36 and cut.endswith("ü日")
    assert len(calls) <= 2 * len(folder) + 40


def test_ids_sharing_a_very_long_prefix():
    """Once an endless loop: Codex ids sharing a 5,000-character prefix."""
    import signal

    from sessidx.render import ID_WIDTH_MAX, id_width

    signal.alarm(20)  # a hang guard, not a speed goal
    try:
        prefix = "01a2294c" * 625
        ids = [session("/w", sid=f"{prefix}{i:04d}") for i in range(500)]
        assert id_width(ids) == ID_WIDTH_MAX
        assert id_width([session("/w", sid="abc"), session("/w", sid="abd")]) == 3
        assert id_width([session("/w", sid="01a2294c-8f8c"), session("/w", sid="01a2294c-9de4")]) == 10
        assert id_width([]) == 8
    finally:
        signal.alarm(0)


@pytest.mark.parametrize("terminal", [80, 120, 200])
def test_the_title_is_the_widest_column(terminal):
    """Issue 18: folder and branch took 35 + 25 columns and the title 22-27; now each has its
    share and the title the rest, with no id column in the picker's rows."""
    from sessidx.render import TITLE_MIN, list_width

    long = [session("/home/alex/code/" + "deep/" * 12 + f"repo-{i}", title=f"Title number {i} of a long list",
                    sid=f"{i:08d}-aaaa") for i in range(5)]
    for s in long:
        object.__setattr__(s, "branch", "feature/a-very-long-branch-name-indeed")
    width = list_width(terminal)
    lines = picker_lines(long, width=width)
    header = re.sub(r"\x1b\[[0-9;]*m", "", lines[0])
    assert header.split() == ["app", "age", "folder", "branch", "title"]  # the id is in the preview
    folder_at, branch_at, title_at = (header.index(word) for word in ("folder", "branch", "title"))
    title_width = width - 2 - title_at  # fzf's pointer takes two columns
    assert title_width >= TITLE_MIN and title_width > branch_at - folder_at and title_width > title_at - branch_at
    for row in lines[1:]:
        shown = re.sub(r"\x1b\[[0-9;]*m", "", row.rsplit("\t", 1)[0])
        assert shown.index("Title number") == title_at
        assert shown[folder_at:].startswith("…/")  # the folder's last parts, not its start


def test_a_folder_is_shortened_as_people_read_it():
    from sessidx.render import short_folder

    assert short_folder("/home/alex/code/shop-api", 40, ) == "/home/alex/code/shop-api"
    assert short_folder("/w/a/very/deep/tree/shop-api/src", 16) == "…/shop-api/src"
    assert short_folder("/w/" + "x" * 30, 10) == "…" + "x" * 9
    from sessidx import render

    assert short_folder(render._HOME + "/code/shop-api", 40) == "~/code/shop-api"


def test_list_rows_never_wrap_and_carry_a_header():
    rows = table([session("/w/" + "x" * 80, title="t" * 300, sid=f"{i}bcdef12-0000") for i in range(3)], 80,
                 header=True)
    assert rows[0].split() == ["app", "age", "id", "folder", "branch", "title"]
    assert all(columns(r) <= 80 for r in rows)


def test_marked_rows_carry_their_mark_and_sort_below_resumable_ones_of_the_same_age():
    gone = session("/w/gone", title="gone one", sid="a1")
    fine = session("/w/here", title="here one", sid="b1")
    lines = picker_lines([gone, fine], marks={gone.key: "✗ folder gone"})
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line.rsplit("\t", 1)[0]) for line in lines[1:]]
    assert plain[0].endswith("  here one") and plain[1].endswith("✗ folder gone gone one")


def test_sessions_whose_branch_changed_are_marked(home, tmp_path):
    """The picker's feed reads each folder's HEAD (no git process) and marks a changed branch."""
    import subprocess

    from homes import ClaudeSession

    from tests.conftest import run_cli

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "feature/new", str(repo)], check=True)
    (repo / "sub").mkdir()
    moved = ClaudeSession(cwd=str(repo / "sub"), prompt="Recorded on main", branch="main")
    same = ClaudeSession(cwd=str(repo), prompt="Recorded on the same branch", branch="feature/new")
    for s in (moved, same):
        s.write(home)
    lines = run_cli("lines", env={"SESSIDX_HOME": str(home)}).stdout.splitlines()
    plain = {line.rsplit("\t")[-1]: re.sub(r"\x1b\[[0-9;]*m", "", line.rsplit("\t", 1)[0]) for line in lines}
    assert plain[f"claude:{moved.session_id}"].endswith("⎇ now feature/new Recorded on main")
    assert plain[f"claude:{same.session_id}"].endswith("  Recorded on the same branch")


def test_git_branch_reads_heads_worktrees_and_detached(tmp_path):
    from sessidx.readers import git_branch

    (tmp_path / "a/.git").mkdir(parents=True)
    (tmp_path / "a/.git/HEAD").write_text("ref: refs/heads/fix/retry\n")
    (tmp_path / "a/deep/er").mkdir(parents=True)
    assert git_branch(str(tmp_path / "a/deep/er")) == "fix/retry"
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt/.git").write_text("gitdir: ../a/.git\n")
    assert git_branch(str(tmp_path / "wt")) == "fix/retry"
    (tmp_path / "a/.git/HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n")
    assert git_branch(str(tmp_path / "a")) is None


def _plain(line: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", line.rsplit("\t", 1)[0] if "\t" in line else line)


@pytest.mark.parametrize("width", [80, 200])
@pytest.mark.parametrize("with_hosts", [False, True])
def test_every_row_lines_up_with_the_longest_app_and_host(width, with_hosts):
    """`openhands` (9 letters) and a long host name take their columns: the folder and the title
    start at the same column on every row and the header, and no row is wider than the list
    (issue 29, point 3)."""
    from sessidx.hosts import HostSession

    rows: list[Session] = [Session(app, f"{app}-1", f"/w/{app}", "main", f"title of {app}", 1_700_000_000_000 - i,
                                   1, None, None, None, None, None)
                           for i, app in enumerate(["openhands", "cn", "claude", "opencode"])]
    if with_hosts:
        rows += [HostSession("build-server-eu", "codex", "x-1", "/srv/x", "main", "title of host codex",
                             1_600_000_000_000), HostSession("b", "pi", "y-1", "/srv/y", "dev", "title of host pi",
                                                             1_600_000_000_000)]
    for lines in (picker_lines(rows, width=width - 2), table(rows, width, header=True)):
        head, *body = [_plain(line) for line in lines]
        assert len(body) == len(rows)
        title_at, folder_at = columns(head[:head.index("title")]), columns(head[:head.index("folder")])
        for row in body:
            assert columns(row[:row.index("title of")]) == title_at, (row, head)
            assert row[folder_at - 1] == " " and row[folder_at] != " ", (row, head)  # (ASCII: a column each)
            assert columns(row) <= width
    # a list of short names only does not keep room for long ones
    assert _plain(picker_lines(rows[1:2], width=100)[1]).startswith("cn   ")


def test_the_app_column_holds_every_registered_app():
    from sessidx.apps import APPS
    from sessidx.render import APP_WIDTH, content_header, content_row

    assert max(map(len, APPS)) == APP_WIDTH
    head = _plain(content_header())
    rows = [_plain(content_row(Session(app, "i", "/w/a", None, "t", 1_700_000_000_000, 1, None, None, None, None,
                                       None), "the snippet", [])) for app in ("openhands", "cn")]
    assert {row.index("/w/a") for row in rows} == {head.index("folder")}


def test_the_preview_sits_beside_the_list_only_where_the_title_keeps_60_columns():
    """Issue 29, point 7: at 160 columns the preview moved beside the list and the title fell
    from 85 to 45 columns. Now it moves only where the title keeps at least 60, folder and
    branch at their whole shares, the longest app name in the row."""
    from sessidx.render import PREVIEW_SIDE, TITLE_BESIDE, WIDE, _title_room, list_width, preview_window

    long = [Session("openhands", "x1", "/home/alex/code/" + "deep/" * 12 + "repo", "feature/" + "b" * 40, "T" * 300,
                    1_700_000_000_000, 1, None, None, None, None, None)]

    def title_columns(terminal: int) -> int:
        header = _plain(picker_lines(long, width=list_width(terminal))[0])
        return list_width(terminal) - 2 - header.index("title")  # fzf's pointer takes two columns

    assert preview_window(WIDE - 1, 50).startswith("down") and preview_window(WIDE, 50).startswith("right")
    assert title_columns(WIDE - 1) > title_columns(WIDE) >= 60
    assert 160 < WIDE <= 200
    first = next(c for c in range(80, 1000) if _title_room(c * (100 - PREVIEW_SIDE) // 100) >= TITLE_BESIDE)
    assert first == WIDE  # written out in render.py: the first width where the title keeps its columns


def test_the_app_counts_fit_in_the_cycles_order_the_least_used_leaving_first():
    from sessidx.render import with_counts

    counts = [("claude", 40), ("codex", 3), ("gemini", 12), ("openhands", 1), ("crush", 7)]
    whole = with_counts("app all: 63 of 63 · ", counts, 200)
    assert whole == "app all: 63 of 63 · claude 40 codex 3 gemini 12 openhands 1 crush 7"
    cut = with_counts("app all: 63 of 63 · ", counts, 50)
    assert cut == "app all: 63 of 63 · claude 40 gemini 12 +3 more" and columns(cut) <= 50
    assert with_counts("x · ", counts, 3).startswith("x · ")  # never fails, however narrow
