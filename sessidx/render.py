"""Text for people: the list table, the picker's lines, the preview pane. Printing is the caller's."""

from __future__ import annotations

import os
import sys
import time

from sessidx.model import Session

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from sessidx.resume import Plan

# What never reaches a terminal raw: C0 and C1 controls and DEL (escape sequences start with
# them), surrogates (bytes that were not UTF-8, or lone halves from JSON), and the invisible
# characters that reorder or break lines (bidi overrides, line and paragraph separators).
_UNSAFE = [*range(0x20), *range(0x7F, 0xA0), *range(0xD800, 0xE000), 0x200E, 0x200F, *range(0x2028, 0x202F),
           *range(0x2066, 0x206A)]
_CONTROL = dict.fromkeys(_UNSAFE, "?")
_CONTROL.update({ord("\n"): " ", ord("\t"): " "})
_JSON_ESCAPES: dict[int, str] = {}


def clean(value: str | None, width: int | None = None) -> str:
    """Safe for a terminal: the one step between session data and any screen or log.

    Newlines and tabs become spaces, every other unsafe character `?`."""
    if not value:
        return ""
    out = value if value.isprintable() else value.translate(_CONTROL)
    if width is not None and len(out) > width:
        out = out[: max(0, width - 1)] + "…"
    return out


def json_line(value: object) -> str:
    """One JSON document on one line, safe for a terminal: json escapes C0 controls itself; DEL,
    C1, surrogates and bidi controls become `\\uXXXX` too (still the same JSON value)."""
    import json

    line = json.dumps(value, ensure_ascii=False)
    if line.isprintable():
        return line
    if not _JSON_ESCAPES:  # built on first need: 2,000 entries that a key press need not pay for
        _JSON_ESCAPES.update({c: f"\\u{c:04x}" for c in _UNSAFE})
    return line.translate(_JSON_ESCAPES)


def warn(message: str) -> None:
    """`sessidx: MESSAGE` on stderr, cleaned. Never on stdout, which the shell function runs."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(f"sessidx: {clean(message)}\n")
        stream.flush()
    except (OSError, ValueError):
        pass


_HOME = os.path.expanduser("~")
# Our own colours (SGR), added after `clean`, never taken from session data.
_DIM, _CYAN, _YELLOW, _RED, _GREEN, _RESET = "\x1b[2m", "\x1b[36m", "\x1b[33m", "\x1b[31m", "\x1b[32m", "\x1b[0m"


def terminal_width(default: int) -> int:
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError):
        return default


def tilde(path: str | None, home: str = _HOME) -> str:
    if not path:
        return ""
    if home and home != "/" and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home):]
    return path


# East Asian wide and emoji blocks: two terminal columns per character. (Not unicodedata:
# it is a C extension to load on every key press, and these ranges cover folder names.)
_WIDE = ((0x1100, 0x115F), (0x2E80, 0x303E), (0x3041, 0x33FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
         (0xA000, 0xA4CF), (0xAC00, 0xD7A3), (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFF60),
         (0xFFE0, 0xFFE6), (0x1F300, 0x1F64F), (0x1F680, 0x1F6FF), (0x1F900, 0x1F9FF), (0x1FA70, 0x1FAFF),
         (0x20000, 0x3FFFD))


def _char_columns(ch: str) -> int:
    o = ord(ch)
    return 2 if o >= 0x1100 and any(lo <= o <= hi for lo, hi in _WIDE) else 1


def columns(value: str) -> int:
    """How many terminal columns `value` takes."""
    if value.isascii():
        return len(value)
    return sum(map(_char_columns, value))


def pad(value: str, width: int) -> str:
    """`value` left-aligned in `width` terminal columns."""
    return value + " " * max(0, width - columns(value))


def shorten_left(value: str, width: int) -> str:
    """At most `width` columns, cut on the left: the end of a path is what tells folders apart.
    One pass from the right, so a 4,000-character folder costs what its kept end costs."""
    if len(value) <= width and columns(value) <= width:
        return value
    if value.isascii():
        return "…" + value[len(value) - (width - 1):] if width > 1 else "…"[:width]
    room, start = width - 1, len(value)
    while start > 0 and (w := _char_columns(value[start - 1])) <= room:
        room -= w
        start -= 1
    return "…" + value[start:]


def age(mtime_ms: int, now: float | None = None) -> str:
    """`now`, `5m`, `3h`, `2d`, `1w`, `4mo`, `2y` (a chain of ifs: this runs once per row)."""
    seconds = (now or time.time()) - mtime_ms / 1000
    if seconds < 3600:
        return f"{int(seconds // 60)}m" if seconds >= 60 else "now"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    if seconds < 7 * 86400:
        return f"{int(seconds // 86400)}d"
    if seconds < 30 * 86400:
        return f"{int(seconds // (7 * 86400))}w"
    if seconds < 365 * 86400:
        return f"{int(seconds // (30 * 86400))}mo"
    return f"{int(seconds // (365 * 86400))}y"


def _ago(mtime_ms: int) -> str:
    text = age(mtime_ms)
    return text if text == "now" else f"{text} ago"


ID_WIDTH_MAX = 36  # a whole UUID; longer ids are cut in lists (the picker passes the whole id)


def id_width(sessions: list[Session]) -> int:
    """The shortest prefix length (at least 8, at most 36) that tells these ids apart (UUIDv7s
    share their first 8). Neighbours in sorted order share the longest prefixes, so one pass
    over them finds it, however long the ids or their shared start."""
    distinct = {s.id for s in sessions}
    if len({i[:8] for i in distinct}) == len(distinct):
        return min(8, max(map(len, distinct))) if distinct else 8  # random ids (UUIDv4) differ early
    ids = sorted({i[: ID_WIDTH_MAX + 1] for i in distinct})
    if len(ids) < len(distinct):
        return ID_WIDTH_MAX  # some differ only past the widest column
    need = 8
    for a, b in zip(ids, ids[1:], strict=False):
        if a[:need] != b[:need]:
            continue  # told apart within the width found so far
        need = len(os.path.commonprefix([a, b])) + 1
        if need >= ID_WIDTH_MAX:
            return ID_WIDTH_MAX
    longest = max(map(len, ids), default=8)
    return min(need, longest) if ids else 8


def size(nbytes: int | None) -> str:
    if nbytes is None:
        return "?"
    value = float(nbytes)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{nbytes} B"


def shorten_right(value: str, width: int) -> str:
    """At most `width` columns, cut on the right (a title, a branch: their start tells them apart)."""
    if len(value) <= width and (value.isascii() or columns(value) <= width):
        return value
    if value.isascii():
        return value[: width - 1] + "…" if width > 0 else ""
    room, end = width - 1, 0
    while end < len(value) and (w := _char_columns(value[end])) <= room:
        room -= w
        end += 1
    return value[:end] + "…"


def _cells(values: Iterable[str | None], width: int, cut: Callable[[str, int], str]) -> dict[str | None, str]:
    """Each distinct value cleaned, cut and padded to exactly `width` columns: folders and
    branches repeat across sessions, so each is laid out once."""
    return {v: pad(cut(clean(tilde(v) if cut is shorten_left else v), width), width) for v in set(values)}


def _ages(sessions: list[Session], now: float) -> list[str]:
    """Each session's age; sessions of the same minute share one (lists are newest first)."""
    memo: dict[int, str] = {}
    out = []
    for s in sessions:
        minute = int(now - s.mtime / 1000) // 60
        text = memo.get(minute)
        if text is None:
            text = memo[minute] = age(s.mtime, now)
        out.append(text)
    return out


def _plain_cells(values: list[str], width: int, cut: Callable[[str, int], str]) -> list[str]:
    """Each value cleaned and cut to `width` columns; a list of plain short ASCII costs one check."""
    joined = "".join(values)
    if joined.isascii() and joined.isprintable() and max(map(len, values), default=0) <= width:
        return values
    return [cut(clean(v), width) for v in values]


def _padded(values: list[str], width: int) -> list[str]:
    if "".join(values).isascii():
        return [v.ljust(width) for v in values]
    return [pad(v, width) for v in values]


def table(sessions: list[Session], width: int = 160, header: bool = False,
          marks: dict[str, str] | None = None) -> list[str]:
    """The human `list`: the picker's columns (app, age, id, folder, branch, title), each row cut
    to `width` so nothing wraps; the column header on a terminal. `marks` (by key, refusals.py)
    say before the title why Enter would refuse a session, as the picker's rows do."""
    head, rows = _layout(sessions, width, colour=False, title_cap=None, marks=marks)
    return ([head] if header else []) + rows


_REFUSED, _ASKS, _RUNS, _MISSING = "✗ will not resume:", "? Enter asks first:", "✓ Enter runs:", "MISSING"
_VERDICTS = {_REFUSED: _RED, _ASKS: _YELLOW, _RUNS: _GREEN}


TALL = 30  # below WIDE, from this many lines on it sits below the list; on fewer it is hidden (Ctrl-/)
PREVIEW_SIDE = 40  # per cent of the width the preview takes beside the list
TITLE_BESIDE = 60  # the title's least columns in a list beside the preview
TITLE_MIN = 24
FOLDER_SHARE, BRANCH_SHARE = 22, 15  # per cent of a picker row's room: the title takes the rest
# The longest app name (`openhands`; a test checks it against the registry, which a key press
# does not load): the app column of rows that come one by one or in batches holds any app.
APP_WIDTH = 9
# fzf's pointer, age and the gaps between columns (the app column's width is the list's own)
_FIXED = 2 + 2 + 4 + 2 + 2 + 2


def fit(width: int, folders: int, branches: int, id_cols: int = 0, app_cols: int = 8) -> tuple[int, int]:
    """Folder and branch column widths in a row `width` columns wide: each at most its share of
    the room, so the title is always the widest column and the folder gives way first."""
    room = width - _FIXED - app_cols - (id_cols + 2 if id_cols else 0)
    folder = max(0, min(folders, max(6, room * FOLDER_SHARE // 100)))
    branch = max(0, min(branches, room * BRANCH_SHARE // 100))
    return folder, branch


def _title_room(list_columns: int) -> int:
    """The title's columns in a list this wide when the folder and branch take their whole shares."""
    room = list_columns - _FIXED - APP_WIDTH
    folder, branch = fit(list_columns, room, room, 0, APP_WIDTH)
    return list_columns - _FIXED - APP_WIDTH - folder - branch  # beside fzf's pointer


# From this many columns on the preview sits beside the list: the first width where the title
# keeps TITLE_BESIDE columns beside it (at 160 it kept 45 of 85, issue 29, point 7). Written
# out: searching for it cost every process that loads this module 1.2 M instructions; a test
# searches for it with _title_room.
WIDE = 194


def list_width(terminal: int) -> int:
    """How wide fzf's list is: beside the preview on a wide terminal, the whole width else."""
    return terminal * (100 - PREVIEW_SIDE) // 100 if terminal >= WIDE else terminal


def preview_window(columns: int, lines: int) -> str:
    """fzf's --preview-window for a terminal of this size: beside the list on a wide one, below
    it on a tall one, hidden (Ctrl-/ shows it) on a small one, so that the list keeps its rows.
    `noinfo`: fzf's scroll counter would cover the end of the verdict line."""
    if columns >= WIDE:
        return f"right,{PREVIEW_SIDE}%,sharp,wrap,noinfo"
    return f"down,45%,sharp,wrap,noinfo{'' if lines >= TALL else ',hidden'}"


def short_folder(path: str | None, width: int) -> str:
    """A folder as people read it in `width` columns: `~` for the home, then its last parts
    (`…/shop-api/src`), the last part cut on the left only when it alone is too long."""
    shown = clean(tilde(path))
    if columns(shown) <= width:
        return shown
    parts = shown.split("/")
    kept = parts[-1]
    for part in reversed(parts[:-1]):
        longer = f"{part}/{kept}"
        if columns(longer) + 2 > width:
            break
        kept = longer
    return "…/" + kept if columns(kept) + 2 <= width else shorten_left(kept, width)


STREAM_WIDTHS = (36, 24, 0)  # folder and branch columns while rows stream in, app after app

def picker_lines(sessions: list[Session], here: str | None = None, width: int = 200,
                 marks: dict[str, str] | None = None, widths: tuple[int, int, int] | None = None) -> list[str]:
    """Lines for fzf: the row, a tab, then its key (`app:id`, `@host/app:id` for a host's),
    which fzf never draws (picker.KEY_AFTER_TAB); the first line the column header (fzf's
    --header-lines=1). `marks` (by key) say why Enter would refuse a session (`✗ …`) or ask
    first (`⎇ now main`); refused rows sort below the resumable ones of the same age, and this
    folder's sessions (`here`) come first."""
    marks = marks or {}
    ages = _ages(sessions, time.time())
    group: list[int] = []
    last: str | None = None
    for when in ages:  # lists come newest first: a run of equal ages is one group
        group.append(len(group) if when != last else group[-1])
        last = when
    order = sorted(range(len(sessions)), key=lambda i: (sessions[i].cwd != here if here is not None else False,
                                                        group[i], marks.get(sessions[i].key, "").startswith("✗")))
    sessions = [sessions[i] for i in order]
    ages = [ages[i] for i in order]
    head, rows = _layout(sessions, width, colour=True, title_cap=200, marks=marks, widths=widths, ages=ages,
                         with_id=False)
    return [head] + [f"{row}\t{s.key}" for s, row in zip(sessions, rows, strict=True)]


def _layout(sessions: list[Session], width: int, colour: bool, title_cap: int | None,
            marks: dict[str, str] | None = None, widths: tuple[int, int, int] | None = None,
            ages: list[str] | None = None, with_id: bool = True) -> tuple[str, list[str]]:
    """The one place a row is built: the column header and one row per session, app, age,
    (id), folder, branch, (mark) title aligned with spaces (fzf would draw tabs as tab stops),
    fitted to `width` columns so the title is the widest; with `title_cap` None each row is
    cut to `width`. (A new column, such as a host, goes here and in the header.)"""
    if widths:  # fixed, so that rows arriving in batches line up
        fw, bw, iw = widths
        aw = APP_WIDTH
    else:
        fw = max((columns(clean(tilde(c))) for c in {s.cwd for s in sessions}), default=0)
        bw = max((columns(shorten_right(clean(b), 24)) for b in {s.branch for s in sessions}), default=0)
        iw = id_width(sessions) if with_id else 0
        aw = max([3, *(len(a) for a in {s.app for s in sessions})])  # `openhands` has 9 letters
    # SSH hosts: a host column after the app, blank for this machine, when any row has a host
    host_names = [clean(getattr(s, "host", None)) for s in sessions]
    hw = min(16, max(4, *map(columns, host_names))) if any(host_names) else 0
    width -= hw + 2 if hw else 0
    fw, bw = fit(width, max(fw, 6), max(bw, 6), iw, aw)
    folders = {c: pad(short_folder(c, fw), fw) for c in {s.cwd for s in sessions}}
    branches = _cells((s.branch for s in sessions), bw, shorten_right)
    ids = _padded(_plain_cells([s.id[:iw] for s in sessions], iw, shorten_right), iw) if iw else [""] * len(sessions)
    id_cols = iw + 2 if iw else 0
    title_room = title_cap or max(10, width - _FIXED - aw + 2 - id_cols - fw - bw)
    titles = _plain_cells([f"[archived] {s.title or ''}" if s.archived and not marks else s.title or ""
                           for s in sessions], title_room, shorten_right)
    dim, cyan, yellow, red, reset = (_DIM, _CYAN, _YELLOW, _RED, _RESET) if colour else ("", "", "", "", "")
    if marks:  # each distinct mark drawn once: a home whose folders are gone marks every row
        drawn = {m: f"{red if m.startswith('✗') else yellow}{clean(m)}{reset} " for m in set(marks.values())}
        titles = [drawn[m] + t if (m := marks.get(f"{s.app}:{s.id}")) else t  # Session.key, without the call
                  for s, t in zip(sessions, titles, strict=True)]
    hosts = [pad(shorten_right(h, hw), hw) + "  " for h in host_names] if hw else [""] * len(sessions)
    host_head = f"{'host':<{hw}}  " if hw else ""
    idh = f"{'id':<{iw}}  " if iw else ""
    head = f"{dim}{'app':<{aw}}  {host_head}{'age':>4}  {idh}{'folder'[:fw]:<{fw}}  {'branch'[:bw]:<{bw}}  title{reset}"
    rows = [
        f"{cyan}{s.app:<{aw}}{reset}  {host}{when:>4}  " + (f"{dim}{sid}{reset}  " if iw else "")
        + f"{folders[s.cwd]}  {yellow}{branches[s.branch]}{reset}  {title}"
        for s, host, when, sid, title in zip(sessions, hosts, ages or _ages(sessions, time.time()), ids, titles,
                                             strict=True)
    ]
    return head, rows


def conversation(said: list[tuple[str, str]], width: int, words: list[str] | None = None,
                 title: str = "said lately") -> list[str]:
    """Messages, a few lines each, cut to the pane: `you`, `agent`, `tool` (a command or path)."""
    lines = [f"── {title} " + "─" * max(0, width - len(title) - 4)] if said else []
    room = max(10, width - 6)
    for role, text in said:
        label = {"user": "you  ", "assistant": "agent"}.get(role, "tool ")
        rows = _wrapped(clean(" ".join(text.split())), room, 3 if role != "tool" else 1)
        for i, row in enumerate(rows):
            lines.append(f"{label if i == 0 else '     '} {mark_words(row, words) if words else row}")
    return lines


def _wrapped(text: str, width: int, most: int) -> list[str]:
    """`text` in rows of at most `width` columns, broken at spaces; at most `most` rows, the last
    one ending in `…` when there was more."""
    rows: list[str] = []
    row = ""
    for word in text.split(" "):
        if row and columns(row) + 1 + columns(word) > width:
            rows.append(row)
            row = ""
            if len(rows) == most:
                rows[-1] = shorten_right(rows[-1] + " " + word, width)
                if not rows[-1].endswith("…"):
                    rows[-1] = shorten_right(rows[-1], width - 1) + "…"
                return rows
        row = f"{row} {word}" if row else word
    if row:
        rows.append(shorten_right(row, width))
    return rows[:most]


def preview(session: Session, plan: Plan, shell: str, colour: bool = False) -> list[str]:
    from sessidx.redact import mask

    exists = session.cwd is not None and os.path.isdir(session.cwd)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(session.mtime / 1000))  # not datetime: 2 ms a move
    branch = session.branch or "(unknown)"
    if plan.branch_differs:
        branch += f"   now {plan.branch_current}: differs, you will be asked"
    elif plan.branch_current and session.branch:
        branch += "   (matches)"
    mode = session.approval or "(not recorded)"
    if session.sandbox:
        mode += f" / sandbox {session.sandbox}"
    # The verdict and the exact command first: what Enter does must show without scrolling.
    command = "  " + plan.shell_line(shell) if plan.cwd else "  (no folder recorded)"
    if plan.error:
        lines = [f"{_REFUSED} {plan.error}", "otherwise Enter would run:", command]
    elif plan.branch_differs:
        lines = [f"{_ASKS} the branch changed", "then runs:", command]
    else:
        lines = [_RUNS, command]
    lines += [f"held back: {h.flag} ({h.reason})" for h in plan.held_back]
    lines += [f"warning: {w}" for w in plan.warnings]
    lines += [
        "",
        f"{session.app}  {session.id}" + ("  [archived]" if session.archived else ""),
        f"title     {mask(session.title) if session.title else '(none)'}",
        f"folder    {tilde(session.cwd) or '(none)'}" + ("" if exists else f"   {_MISSING}"),
        f"branch    {branch}",
        f"model     {session.model or '(default)'}" + (f"   effort {session.effort}" if session.effort else ""),
        f"approval  {mode}",
        f"last used {_ago(session.mtime)} ({when})" + (f"   size {size(session.bytes)}" if session.bytes else ""),
    ]
    # Every line cleaned whole, whatever field it came from; then only our own labels, at the
    # places we put them, are coloured: the data can bring no escape sequence in.
    shown = [clean(line) for line in lines]
    if not colour:
        return shown
    shown[0] = next((f"{code}{label}{_RESET}{shown[0][len(label):]}" for label, code in _VERDICTS.items()
                     if shown[0].startswith(label)), shown[0])
    folder_line = next(i for i, line in enumerate(shown) if line.startswith("folder    "))
    if not exists and shown[folder_line].endswith(_MISSING):
        shown[folder_line] = shown[folder_line][: -len(_MISSING)] + f"{_RED}{_MISSING}{_RESET}"
    return shown


_CONTENT_FOLDER = 28
CONTENT_PROMPT = "content"


def prompt_of(content: bool, app: str | None, scope: str | bool | None) -> str:
    """fzf's prompt, which holds the picker's filters (fzf hands it to every command it runs
    as FZF_PROMPT): `session> `, `codex@here> `, `content> `, `content:codex@repo> `.
    `scope`: None (everywhere), "here" (this folder), "repo" (this repository); True is "here"."""
    name = f"{CONTENT_PROMPT}:{app}" if content and app else CONTENT_PROMPT if content else app or "session"
    scope = "here" if scope is True else scope or None
    return f"{name}{'@' + scope if scope else ''}> "


def with_counts(start: str, counts: list[tuple[str, int]], width: int) -> str:
    """`start` and each app's count, in the order given (Ctrl-A's), in `width` columns: the least
    used apps leave first, and what is left out is counted (`+3 more`)."""
    shown = list(counts)
    while True:
        more = len(counts) - len(shown)
        line = start + " ".join(f"{a} {n}" for a, n in shown) + (f" +{more} more" if more else "")
        if columns(line) <= width or not shown:
            return line
        shown.remove(min(shown, key=lambda pair: (pair[1], -counts.index(pair))))


def prompt_state(prompt: str | None) -> tuple[bool, str | None, str | None]:
    """(content mode, app, scope) from a prompt made by prompt_of."""
    name, _, scope = (prompt or "").removesuffix("> ").strip().partition("@")
    content = name == CONTENT_PROMPT or name.startswith(CONTENT_PROMPT + ":")
    if content:
        name = name.partition(":")[2]
    return content, name if name and name != "session" else None, scope if scope in ("here", "repo") else None


CONTENT_HINT = "type a word that was said"


def content_header(hint: bool = False) -> str:
    """Content mode's column names; `hint`: the query is empty, and the list says what to type."""
    head = f"{_DIM}{'app':<{APP_WIDTH}}  {'age':>4}  {'folder':<{_CONTENT_FOLDER}}  what was said{_RESET}"
    return f"{head}  ({CONTENT_HINT})" if hint else head


def content_row(session: Session, snippet: str, words: list[str], also: str = "", mark: str = "") -> str:
    """A row of the picker's content mode: app, age, folder, and the hit with the query's words
    marked; a near answer (content/near.py) says first what it matched instead. `mark`, as in
    the title rows: why Enter would refuse it (`✗ loose mode`), or ask first."""
    host = getattr(session, "host", None)  # a host's session: its folder is there, and says so
    if host:
        name = shorten_right(clean(host), _CONTENT_FOLDER // 2)
        where = f"{name}:{short_folder(session.cwd, _CONTENT_FOLDER - columns(name) - 1)}"
    else:
        where = short_folder(session.cwd, _CONTENT_FOLDER)  # cut at its parts, as title rows are
    folder = pad(where, _CONTENT_FOLDER)
    when = _ages([session], time.time())[0]
    # a near answer (`total → totalled, …`, content/near.py): only what it found, marked as the words are
    found = [pair.rpartition(" → ")[2] for pair in also.split(", ")] if also else []
    near = f"{_DIM}≈ {clean(' '.join(found))}{_RESET} " if found else ""
    refused = f"{_RED if mark.startswith('✗') else _YELLOW}{clean(mark)}{_RESET} " if mark else ""
    marked = mark_words(clean(snippet), [*words, *found])
    return f"{_CYAN}{session.app:<{APP_WIDTH}}{_RESET}  {when:>4}  {folder}  {refused}{near}{marked}"


def with_also(snippet: str, also: str) -> str:
    """A hit's snippet, a near answer's (content/near.py) headed by what it matched instead."""
    return f"(also: {also}) {snippet}" if also else snippet


def mark_words(text: str, words: list[str]) -> str:
    """`text` with each of `words` (any case) in bold yellow. (No `re`: this runs per keystroke.)"""
    low = text.lower()
    if not words or len(low) != len(text):  # a case change that changes lengths: left unmarked
        return text
    marked = [False] * len(text)
    for word in {w.lower() for w in words if w}:
        at = low.find(word)
        while at >= 0:
            marked[at:at + len(word)] = [True] * len(word)
            at = low.find(word, at + 1)
    out, inside = [], False
    for c, m in zip(text, marked, strict=True):
        if m != inside:
            out.append("\x1b[1;33m" if m else _RESET)
            inside = m
        out.append(c)
    return "".join(out) + (_RESET if inside else "")
