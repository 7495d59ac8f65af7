"""`sessidx doctor`: why a session may be missing or not resume as it should, app by app, then the
caches and the hosts. `diagnose` returns data; `screen` and the JSON are made from it (cli prints).

Per app: where its home was looked for and whether it is there (with the app's own variables
unset too, to see a home moved away from where the variable points); the sessions listed and
the sources skipped, with why (the index's own notes); the CLI on PATH, its version, and the
version the plans were proven on (the app's `proven_on`); whether its help still offers every
flag a plan of its newest session passes (the help probe and cache of `clihelp`); and the record
types in its newest sessions' data the adapter does not know (the app's `unknown_records`).

A finding is a `problem` (something is wrong: the exit code is 1) or a `note` (worth knowing, not
wrong: a CLI newer than the one the plans were proven on, record types never seen). Each says
what to do in one line where there is something to do.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from sessidx import cache, render
from sessidx.apps import APPS
from sessidx.config import Env

if TYPE_CHECKING:
    from sessidx.apps.base import App
    from sessidx.model import Session

RECORDS_CHECKED = 20  # each app's newest sessions whose records are counted


@dataclass
class Finding:
    level: str  # "problem" or "note"
    text: str
    fix: str | None = None


@dataclass
class HomeLook:
    path: str
    by: str  # the variable that named it, or "default"
    found: bool


@dataclass
class AppReport:
    app: str
    homes: list[HomeLook]
    listed: int
    skipped: list[str]
    cli: str | None  # the program found on PATH
    version: str | None
    proven_on: str | None
    plan_flags: list[str]  # the flags a plan of the newest session passes
    missing_flags: list[str]  # of those, the ones the installed CLI's help does not offer
    unknown_records: dict[str, int] | None  # None: the adapter cannot tell
    sessions_checked: int
    findings: list[Finding] = field(default_factory=list)

    @property
    def present(self) -> bool:
        """Anything of this app on the machine: a home, a session, a CLI, or a finding."""
        return bool(self.listed or self.skipped or self.cli or self.findings or any(h.found for h in self.homes))


@dataclass
class FileReport:
    what: str
    path: str | None
    bytes: int | None
    modified_ms: int | None


@dataclass
class HostReport:
    name: str
    sessions: int
    heard_ms: int
    note: str | None
    kept: str


@dataclass
class Report:
    apps: list[AppReport]
    files: list[FileReport]
    hosts: list[HostReport]
    findings: list[Finding]  # not of one app: the caches, the hosts

    @property
    def problems(self) -> int:
        return sum(f.level == "problem" for f in self.findings) + sum(
            f.level == "problem" for a in self.apps for f in a.findings)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "problems": self.problems, "ok": self.problems == 0}


def diagnose(env: Env) -> Report:
    return Report([_app(env, app) for app in APPS.values()], _files(env), *_hosts(env))


_XDG = {"XDG_DATA_HOME": ".local/share", "XDG_CONFIG_HOME": ".config", "XDG_STATE_HOME": ".local/state",
        "XDG_CACHE_HOME": ".cache"}  # where each XDG folder is when its variable is unset


def _homes(env: Env, app: App) -> tuple[list[HomeLook], tuple[str, ...]]:
    """Where the app's data is looked for: each of its variables that is set (an XDG one as the
    app's folder in it), then its default folders under the home; and the variables that moved it."""
    looks, moved = [], []
    for var in app.home_vars:
        value = env.get(var)
        if not value:
            continue
        if var in _XDG:
            base = _XDG[var] + os.sep
            paths = [os.path.join(value, d[len(base):]) for d in app.home_dirs if d.startswith(base)]
        else:
            paths = [value]
        looks += [HomeLook(p, var, os.path.exists(p)) for p in paths]
        moved += [var] if paths else []
    looks += [HomeLook(os.path.join(env.home, d), "default", os.path.isdir(os.path.join(env.home, d)))
              for d in app.home_dirs]
    return looks, tuple(moved)


def _without(env: Env, names: tuple[str, ...]) -> Env:
    return Env(env.home, {k: v for k, v in env.vars.items() if k not in names})


def _sources(app: App, env: Env) -> int:
    try:
        return sum(1 for _ in app.sources(env))
    except Exception:  # a store that cannot even be listed: the listing says why
        return 0


def _app(env: Env, app: App) -> AppReport:
    from sessidx.clihelp import learn, which
    from sessidx.index import build

    findings: list[Finding] = []
    homes, own_vars = _homes(env, app)
    index = build(env, [app])
    sessions = [s for s in index.sessions if s.app == app.name]
    skipped = list(index.problems)
    for problem in skipped:
        findings.append(Finding("problem", f"skipped: {problem}"))
    if own_vars and not sessions and (elsewhere := _sources(app, _without(env, own_vars))):
        where = ", ".join(f"{v}={env.get(v)}" for v in own_vars)
        findings.append(Finding(
            "problem", f"no session listed from {where}, but the default home ({render.tilde(homes[-1].path)}) "
                       f"holds {elsewhere} session source(s)",
            f"unset {' and '.join(own_vars)}, or point {'them' if len(own_vars) > 1 else 'it'} at the folder "
            "the sessions are in"))
    else:
        findings += [Finding("problem", f"{h.by}={env.get(h.by)}: {h.path} does not exist, nothing is listed from it",
                             f"point {h.by} at the app's folder, or unset it") for h in homes
                     if h.by != "default" and not h.found and not h.by.startswith("XDG_")]
    binary = which(app.program, env.get("PATH"))
    cli = learn(app.program, app.help_args, cache.cache_dir(env), env.get("PATH"),
                timeout=getattr(app, "help_timeout", None)) if binary else None
    proven = getattr(app, "proven_on", None)
    version = cli.version if cli is not None else None
    flags, missing = _flags(env, app, sessions, cli)
    if cli is not None and not cli.known:
        findings.append(Finding("problem", f"{binary} --help could not be read: only the flags safety needs are "
                                           "passed", f"run `{app.program} {' '.join(app.help_args)}` to see why"))
    if missing:
        findings.append(Finding(
            "problem", f"{app.program} {version or '(version unknown)'}'s help has no {', '.join(missing)}, which "
                       f"the plan passes: {_missing_means(env, app, sessions[0], cli, missing)}",
            f"install {app.program} {proven}, the version the plans were proven on, or a sessidx that knows "
            f"{version or 'this one'}" if proven else None))
    if proven and version and version != proven:
        newer = _version(version) > _version(proven)
        findings.append(Finding("note", f"{app.program} {version} is installed; the plans were proven on {proven} "
                                        f"({'newer' if newer else 'older'})",
                                "nothing to do while its help has every flag the plan uses" if flags and not missing
                                else None))
    unknown, checked = _unknown_records(app, sessions)
    if unknown:
        said = ", ".join(f"{n} of type {kind!r}" for kind, n in sorted(unknown.items(), key=lambda kv: -kv[1]))
        findings.append(Finding("note", f"records this sessidx does not know in its {checked} newest session(s): "
                                        f"{said}; they are not read (not listed, searched or shown)",
                                "a newer sessidx may read them; if sessions are missing, report the type"))
    return AppReport(app.name, homes, len(sessions), skipped, binary, version, proven, flags, missing, unknown,
                     checked, findings)


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for word in text.replace("-", ".").split("."):
        digits = "".join(c for c in word if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _planned(env: Env, app: App, session: Session) -> list[list[str]]:
    """The argv of the plans of `session` (with and without the opt-in) for a CLI that takes
    every flag: what a plan would pass, before the installed help leaves anything out."""
    from sessidx.clihelp import HelpText

    every_flag = HelpText("", found=False)
    out = []
    for permissive in (False, True):
        try:
            out.append(app.plan(session, every_flag, permissive, env).argv)
        except Exception:  # an adapter that cannot plan this session: the resume says why
            continue
    return out


def _flag_words(argv: list[str]) -> list[str]:
    return [w.split("=", 1)[0] for w in argv[1:] if w.startswith("-") and len(w) > 1]


def _missing_means(env: Env, app: App, session: Session, cli: Any, missing: list[str]) -> str:
    """What the flags the installed help lacks do to the plan made with it."""
    try:
        plan = app.plan(session, cli, False, env)
    except Exception as exc:  # an adapter that cannot plan this session at all
        return f"the plan fails ({type(exc).__name__}: {exc})"
    if plan.refusal:
        return "Enter refuses to resume"
    passed = [f for f in missing if f in _flag_words(plan.argv)]
    if passed:
        return f"{', '.join(passed)} passed all the same (safety needs it): the CLI may refuse to start"
    return "left out of the resume, with a warning"


def _flags(env: Env, app: App, sessions: list[Session], cli: Any) -> tuple[list[str], list[str]]:
    if not sessions:
        return [], []
    flags = list(dict.fromkeys(f for argv in _planned(env, app, sessions[0]) for f in _flag_words(argv)))
    if cli is None or not cli.found or not cli.known:
        return flags, []
    return flags, [f for f in flags if not cli.has(f)]


def _unknown_records(app: App, sessions: list[Session]) -> tuple[dict[str, int] | None, int]:
    count = getattr(app, "unknown_records", None)
    if count is None:
        return None, 0
    found: dict[str, int] = {}
    newest = sessions[:RECORDS_CHECKED]
    for session in newest:
        for kind, n in count(session).items():
            found[kind] = found.get(kind, 0) + n
    return found, len(newest)


def _stat(what: str, path: str | None) -> FileReport:
    try:
        st = os.stat(path) if path else None
    except OSError:
        st = None
    return FileReport(what, path, st.st_size if st else None, st.st_mtime_ns // 1_000_000 if st else None)


def _files(env: Env) -> list[FileReport]:
    from sessidx.content.store import db_path
    from sessidx.index import cache_path

    return [_stat("index cache", cache_path(env)), _stat("content index", db_path(env))]


def _hosts(env: Env) -> tuple[list[HostReport], list[Finding]]:
    from sessidx.hosts import configured, read_cache
    from sessidx.remote import kept_note

    findings: list[Finding] = []
    folder = cache.cache_dir(env)
    if folder is None:
        findings.append(Finding("problem", "no cache folder: every key press reads every session again",
                                "set XDG_CACHE_HOME (or HOME) to an absolute path"))
    elif os.path.isdir(folder) and (problem := cache.folder_problem(folder)):
        findings.append(Finding("problem", f"the cache folder is not used: {problem}",
                                f"remove {folder} (sessidx makes it again, mode 0700)"))
    hosts, problems = configured(env)
    findings += [Finding("problem", problem, "correct the name in SESSIDX_HOSTS or ~/.config/sessidx/hosts")
                 for problem in problems]
    out = []
    for host in hosts:
        heard = read_cache(env, host)
        out.append(HostReport(host.name, len(heard.cached_rows()), heard.at, heard.note, kept_note(heard)))
        if heard.note:
            findings.append(Finding("problem", heard.note, f"check it with: ssh {host.name} true"))
        elif not heard.at:
            findings.append(Finding("note", f"{host.name} was never heard from",
                                    "sessidx hosts --refresh asks it now"))
    return out, findings


# The screen --------------------------------------------------------------------------------------


def _when(ms: int | None) -> str:
    return "never" if not ms else "just now" if render.age(ms) == "now" else f"{render.age(ms)} ago"


def _findings(findings: list[Finding], indent: str) -> list[str]:
    lines = []
    for f in findings:
        lines.append(f"{indent}{'✗' if f.level == 'problem' else '!'} {f.text}")
        if f.fix:
            lines.append(f"{indent}  fix: {f.fix}")
    return lines


def screen(report: Report) -> list[str]:
    """The report in lines, an app per line (and its findings under it); apps with nothing on
    this machine in one line at the end of their part."""
    lines: list[str] = []
    absent = []
    for a in report.apps:
        if not a.present:
            absent.append(a.app)
            continue
        home = a.homes[0] if a.homes else None  # where the app looks: its variable when set, else the default
        where = (("" if home.by == "default" else f"{home.by}=") + render.tilde(home.path)
                 + ("" if home.found else " (not there)")) if home else "(no home)"
        cli = (f"{a.cli and os.path.basename(a.cli)} {a.version or '(version unknown)'}"
               + (f", proven on {a.proven_on}" if a.proven_on else "")) if a.cli else "CLI not on PATH"
        flags = ("" if not a.plan_flags or not a.cli else
                 f"  flags: {len(a.plan_flags) - len(a.missing_flags)} of {len(a.plan_flags)} in its help")
        unknown = sum((a.unknown_records or {}).values())
        records = ("" if a.unknown_records is None or not a.sessions_checked else
                   f"  records: {f'{unknown} unknown' if unknown else 'all known'} ({a.sessions_checked} newest)")
        skipped = f", {len(a.skipped)} skipped" if a.skipped else ""
        lines.append(render.clean(f"{a.app:<9} {a.listed} listed{skipped}  {where}  {cli}{flags}{records}"))
        lines += [render.clean(line) for line in _findings(a.findings, "  ")]
    if no_cli := [a.app for a in report.apps if a.listed and not a.cli]:
        lines.append(render.clean(f"! no CLI on PATH, so Enter cannot resume their sessions (listed all the same): "
                                  f"{', '.join(no_cli)}"))
    if absent:
        lines.append(render.clean(f"not on this machine (no home, no session, no CLI): {', '.join(absent)}"))
    lines.append("")
    for f in report.files:
        lines.append(render.clean(f"{f.what:<14} {render.tilde(f.path) if f.path else '(none)'}  "
                                  + (f"{render.size(f.bytes)}, written {_when(f.modified_ms)}"
                                     if f.bytes is not None else "not made yet")))
    for h in report.hosts:
        kept = f" ({h.kept})" if h.kept else ""
        lines.append(render.clean(f"host {h.name}  {h.sessions} sessions{kept}  heard {_when(h.heard_ms)}"))
    if not report.hosts:
        from sessidx.hosts import NONE_NAMED

        lines.append(f"hosts          {NONE_NAMED}")
    lines += [render.clean(line) for line in _findings(report.findings, "  ")]
    problems = report.problems
    lines.append(f"{problems} problem{'s' if problems != 1 else ''}" if problems else "no problems")
    return lines
