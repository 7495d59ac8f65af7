"""Why Enter would refuse a session: one ordered list of checks, each with its reason and its mark.

`resume.make_plan` (Enter, `check`, `resume --json`), the picker's title and content rows,
`sessidx list` and `list --json` all read this one list, so no listing can show as resumable a
session that Enter refuses. The order is Enter's: the app's own refusal (its adapter knows the
CLI: a loose mode it restores by itself, a cleanup that would delete the session, ...), then
the checks every app shares: files gone, no folder, folder gone, archived. A branch change is
no refusal: Enter asks first, and its row says so (`⎇ now main`).

A key-press module (the feeds mark their rows): builtins and `os` only.
"""

from __future__ import annotations

import os

from sessidx.apps import app_named
from sessidx.ids import id_fits
from sessidx.model import Fields
from sessidx.readers import git_branch

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable

    from sessidx.apps.base import App, AppPlan
    from sessidx.config import Env
    from sessidx.model import Session

# Every kind of refusal and its mark: the two or three words a row shows (`✗ loose mode`).
# An adapter refuses with one of these kinds (`ArgvBuilder.refuse`); the shared checks below
# use the rest. A test fails if a kind in use has no mark here, or two kinds share a mark.
MARKS = {
    "unknown_app": "unknown app",  # a cache from another version of sessidx
    "bad_id": "bad id",  # not an id of the app's form: a damaged cache
    "cannot_resume": "cannot resume",  # the installed CLI lost its resume flag
    "loose_mode": "loose mode",  # the CLI restores a mode looser than its default, with no flag to stop it
    "cleanup_deletes": "cleanup deletes",  # the CLI's own cleanup would delete the resumed session
    "rollout_moved": "rollout moved",  # the CLI looks only at a recorded path that is gone
    "unknown_mode": "unknown mode",  # a recorded mode not known to be as strict as the default
    "other_cli": "other CLI",  # the installed command is another app's under the same name (kimi)
    "migrate_first": "migrate first",  # the installed CLI reads only the store this session must move to
    "files_gone": "files gone",
    "no_folder": "no folder",
    "folder_gone": "folder gone",
    "archived": "archived",
}


class Refusal(Fields):
    """Why Enter will not resume a session: its kind (a key of MARKS) and the reason in full."""

    __slots__ = ("kind", "reason")

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        self.reason = reason

    @property
    def mark(self) -> str:
        return refusal_mark(self.kind)


def refusal_mark(kind: str) -> str:
    return f"✗ {MARKS.get(kind) or kind.replace('_', ' ')}"


def branch_mark(now: str) -> str:
    """A row whose folder is on another branch now: Enter asks first."""
    return f"⎇ now {now}"


class Looks:
    """The file system as the checks see it: each path looked at once (a listing of many
    sessions shares few folders)."""

    def __init__(self, present: frozenset[str] = frozenset()) -> None:
        # `present`: files the listing being checked stat'ed a moment ago, in this process (not
        # asked again: 10,000 stats of a warm `list`); Enter's own check looks at the disk
        self._exists: dict[str, bool] = dict.fromkeys(present, True)
        self._isdir: dict[str, bool] = {}

    def exists(self, path: str) -> bool:
        found = self._exists.get(path)
        if found is None:
            found = self._exists[path] = os.path.exists(path)
        return found

    def isdir(self, path: str) -> bool:
        found = self._isdir.get(path)
        if found is None:
            found = self._isdir[path] = os.path.isdir(path)
        return found


# The checks every app shares, in Enter's order: (kind, does it refuse, the reason).
SHARED: tuple[tuple[str, Callable[[Session, Looks], bool], Callable[[Session], str]], ...] = (
    ("files_gone", lambda s, look: bool(s.path) and not look.exists(s.path or ""),
     lambda s: f"its files are gone: {s.path}"),  # deleted since the list was made
    ("no_folder", lambda s, look: s.cwd is None, lambda s: "the session has no recorded folder"),
    ("folder_gone", lambda s, look: not look.isdir(s.cwd or ""), lambda s: f"folder no longer exists: {s.cwd}"),
    ("archived", lambda s, look: s.archived,
     lambda s: f"archived in {s.app}: listed with --archived only, and never resumed"),
)


def before_plan(session: Session, app: App | None = None) -> Refusal | None:
    """What is refused before the adapter is asked: an app sessidx does not know, an id not of
    its form (the last guard: a damaged cache read without a regex). `app`: the session's, if
    looked up already."""
    app = app or app_named(session.app)
    if app is None:
        return Refusal("unknown_app", "no such app")
    if not id_fits(app.id_pattern, session.id):
        return Refusal("bad_id", f"not an id of {app.name}'s form")
    return None


def after_plan(session: Session, decided: AppPlan, looks: Looks | None = None) -> Refusal | None:
    """The first check that refuses, the adapter's own decision first; None when Enter may run."""
    if decided.refusal:
        return Refusal(decided.refusal_kind or "cannot_resume", decided.refusal)
    look = looks or Looks()
    for kind, refuses, reason in SHARED:
        if refuses(session, look):
            return Refusal(kind, reason(session))
    return None


class UnknownCli:
    """The CLI as the listings see it: not probed (that runs `--help`, and loads subprocess into
    a feed). A refusal rests on what was recorded, not on the installed CLI's flags; Enter makes
    the full plan again."""

    found = known = pending = False
    version: str | None = None

    def has(self, flag: str) -> bool:
        return False

    def said(self) -> str:
        return ""

    def accepts(self, flag: str, value: str) -> bool:
        return False

    def version_at_least(self, *wanted: int) -> bool | None:
        return None


_UNKNOWN_CLI = UnknownCli()


def refusals(env: Env, sessions: list[Session], looks: Looks | None = None) -> dict[str, Refusal]:
    """Why Enter would refuse each of `sessions` (by key), by the checks Enter makes, in its
    order, without probing the CLI. One look per distinct path. A host's session is checked on
    its host (remote.py), not here."""
    look = looks or Looks()
    found: dict[str, Refusal] = {}
    apps: dict[str, App | None] = {}  # each looked up once
    decided_for: dict[tuple[object, ...], AppPlan] = {}  # by the values of the app's refusal_fields
    for s in sessions:
        if getattr(s, "host", None):
            continue
        app = apps[s.app] if s.app in apps else apps.setdefault(s.app, app_named(s.app))
        refused = before_plan(s, app)
        if refused is None and app is not None:
            fields = getattr(app, "refusal_fields", None)
            decides = (s.app, *(getattr(s, f) for f in fields)) if fields is not None else None
            decided = decided_for.get(decides) if decides is not None else None
            if decided is None:
                try:
                    decided = app.plan(s, _UNKNOWN_CLI, False, env)
                except Exception:  # a plan that cannot be made here is made again, and reported, on Enter
                    continue
                if decides is not None:
                    decided_for[decides] = decided
            refused = after_plan(s, decided, look)
        if refused is not None:
            found[s.key] = refused
    return found


def row_marks(env: Env, sessions: list[Session], present: frozenset[str] = frozenset()) -> dict[str, str]:
    """Each row's mark: why Enter would refuse it (`✗ folder gone`, `✗ loose mode`), or that
    it asks first (`⎇ now main`). One look per distinct folder, not per session; `present`:
    as Looks takes it."""
    look = Looks(present)
    refused = refusals(env, sessions, look)
    marks = {key: r.mark for key, r in refused.items()}
    branch_now: dict[str, str | None] = {}
    for s in sessions:
        if s.key in marks or not s.branch or not s.cwd or getattr(s, "host", None):
            continue
        if s.cwd not in branch_now:
            branch_now[s.cwd] = git_branch(s.cwd)
        if (now := branch_now[s.cwd]) and now != s.branch:
            marks[s.key] = branch_mark(now)
    return marks
