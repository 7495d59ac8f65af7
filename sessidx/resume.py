"""Resume plans: the adapter's command line plus the safety checks every app shares.

Rules (SPEC "Safe resume"): run in the recorded folder, refuse if it is gone; compare the
recorded branch with the folder's current one and ask when they differ (never check out;
an unknown branch on either side is no mismatch); carry model and effort; carry a recorded
approval mode only when it is at least as strict as the CLI's default, unless the person
opts in for this one launch (`--allow-permissive`, Alt-Enter in the picker).
"""

from __future__ import annotations

import os

from sessidx.apps import app_named
from sessidx.apps.base import HeldBack
from sessidx.cache import cache_dir
from sessidx.clihelp import learn
from sessidx.config import Env
from sessidx.errors import SessidxError
from sessidx.model import Session
from sessidx.quoting import cd_and_run
from sessidx.readers import git_branch
from sessidx.refusals import Refusal, after_plan, before_plan

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable


class Plan:
    """What Enter would do for one session, here or on an SSH host (made there, and checked:
    remote.HostPlace). (Not a dataclass: importing `dataclasses` costs the preview, which runs
    on every arrow key, a tenth of its time.)"""

    def __init__(self, app: str, id: str, cwd: str | None, argv: list[str], branch_recorded: str | None,
                 branch_current: str | None, held_back: list[HeldBack] | None = None,
                 warnings: list[str] | None = None) -> None:
        self.app = app
        self.id = id
        self.cwd = cwd
        self.argv = argv
        self.branch_recorded = branch_recorded
        self.branch_current = branch_current
        self.held_back = held_back or []
        self.warnings = warnings or []
        self.refusal: Refusal | None = None  # why it must not run at all (refusals.py)
        self.error: str | None = None  # the refusal's reason
        self.branch_differs = False  # runs only once the person agreed
        self.host: str | None = None  # an SSH host's plan (made there): its name
        self.line_for: Callable[[str], str] | None = None  # a host's: the `ssh -t` line for a shell

    @property
    def ok(self) -> bool:
        return self.error is None and not self.branch_differs

    def to_json(self) -> dict[str, object]:
        return {
            "app": self.app,
            "id": self.id,
            "cwd": self.cwd,
            "argv": self.argv,
            "branch": {"recorded": self.branch_recorded, "current": self.branch_current},
            "held_back": [h.to_json() for h in self.held_back],
            "warnings": self.warnings,
            "error": self.error,
            "refused": self.refusal.to_json() if self.refusal else None,
            "branch_differs": self.branch_differs,
            "ok": self.ok,
        }

    def shell_line(self, shell: str) -> str:
        if self.cwd is None:
            raise SessidxError(f"{self.app} session {self.id} has no recorded folder")
        if self.line_for is not None:
            return self.line_for(shell)
        return cd_and_run(self.cwd, self.argv, shell)

    @property
    def where(self) -> str:
        """` on HOST` for a host's plan, for the messages that name the session."""
        return f" on {self.host}" if self.host else ""


def current_branch(cwd: str) -> str | None:
    """The branch checked out in cwd; None outside git, on a detached HEAD, or without git.

    Read from git's HEAD file (the preview runs on every arrow key: a git process costs it a
    fifth), as `git symbolic-ref --short -q HEAD` answers: also on a branch with no commits
    yet, nothing when detached. git itself is asked only where the file cannot say: a
    reftable repository (HEAD then names `refs/heads/.invalid`) or a GIT_DIR set by hand.
    """
    if "GIT_DIR" not in os.environ and (branch := git_branch(cwd)) != ".invalid":
        return branch
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", cwd, "symbolic-ref", "--short", "-q", "HEAD"],
            capture_output=True, timeout=5, stdin=subprocess.DEVNULL,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    branch = done.stdout.decode("utf-8", "replace").strip()
    return branch if done.returncode == 0 and branch and branch != "HEAD" else None


def make_plan(session: Session, env: Env, allow_permissive: bool = False, wait_for_cli: bool = True) -> Plan:
    """`wait_for_cli=False` (the preview): a CLI not probed yet is probed in the background."""
    if (refused := before_plan(session)) is not None:
        raise SessidxError(f"not resuming {session.app} session {session.id!r}: {refused.reason}")
    app = app_named(session.app)
    assert app is not None
    cli = learn(app.program, app.help_args, cache_dir(env), env.get("PATH"), wait=wait_for_cli,
                timeout=getattr(app, "help_timeout", None))  # the few apps whose help is slow declare it
    decided = app.plan(session, cli, allow_permissive, env)
    plan = Plan(
        app=session.app,
        id=session.id,
        cwd=session.cwd,
        argv=decided.argv,
        branch_recorded=session.branch,
        branch_current=None,
        held_back=decided.held_back,
        warnings=list(decided.warnings),
    )
    if not cli.found:
        plan.warnings.append(f"{app.program} is not on PATH")
    plan.refusal = after_plan(session, decided)  # the one list of checks every listing reads
    plan.error = plan.refusal.reason if plan.refusal else None
    if plan.error is None and session.cwd is not None:
        plan.branch_current = current_branch(session.cwd)
        if session.branch and plan.branch_current and session.branch != plan.branch_current:
            plan.branch_differs = True
    return plan
