"""sessidx on a host, over ssh: listing, the resume plan, content search.

Decision: the host runs **this** sessidx's own code, shipped over the connection to the
host's `python3` (3.10 or newer), not a sessidx installed there. Both ends are then the same
version, so the rows, the plan and the search hits always mean the same thing, and a host
needs nothing but python3. The code travels once per version: a small loader arrives on
python's stdin (`python3 -X utf8 - ARGS`), finds the code in the host's own sessidx cache
(`$XDG_CACHE_HOME/sessidx/remote/<hash>/`), and only when it is not there asks for it; the
second call carries it (a zip of the package, about 150 KB) and the loader unpacks it there.
That cache, and the index and help caches the code keeps as it does locally, are all that is
ever written on a host. No install, no agent file touched.

Everything a host sends is hostile: each row is checked field by field (an app we know, an
id that fits the app's id grammar, an absolute folder, types and lengths) or dropped with a
note; the plan likewise. Shown text goes through `render.clean`; what reaches a shell is
quoted here, never taken as a line from the host: the host makes the plan (the folder
exists there, the branch there, the modes and flags of the CLI installed there), and this
side quotes its folder and argv into `cd -- DIR && ARGV` for `sh -c` on the host, that for
the host's login shell, and the whole `ssh -t -- HOST '...'` for the local shell.
"""

from __future__ import annotations

import os
import time
from operator import attrgetter, itemgetter

from sessidx import local, render
from sessidx.apps.base import HeldBack
from sessidx.errors import ExitCode, SessidxError
from sessidx.hosts import (
    HOST_TEXT,
    NONE_NAMED,
    Call,
    Heard,
    Host,
    HostSession,
    Reply,
    call,
    configured,
    failure,
    host_named,
    newest_count,
    rows_kept,
    timeout,
)
from sessidx.keys import split_host_key
from sessidx.model import Session
from sessidx.refusals import MARKS, Refusal
from sessidx.resume import Plan

TYPE_CHECKING = False  # see model.Fields
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from sessidx.config import Env

    Out = Callable[[str], None]
    Meanwhile = TypeVar("Meanwhile")  # what this machine's search gives, beside the hosts' (ask_hosts)

NEED_CODE, OLD_PYTHON = 98, 97  # the loader's exit codes

LOADER = r'''
import os, sys
H = "{hash}"
P = {payload}
if sys.version_info < (3, 10):
    sys.stderr.write("sessidx: python3 here is %d.%d, sessidx needs 3.10 or newer\n" % sys.version_info[:2])
    sys.exit(97)
base = os.environ.get("XDG_CACHE_HOME") or ""
if not os.path.isabs(base):
    base = os.path.join(os.path.expanduser("~"), ".cache")
root = os.path.join(base, "sessidx", "remote", H)
if not os.path.isfile(os.path.join(root, "sessidx", "cli.py")):
    if P is None:
        sys.exit(98)
    import base64, io, shutil, tempfile, zipfile
    parent = os.path.dirname(root)
    try:
        os.makedirs(parent, mode=0o700, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=parent, prefix=H + ".")
    except OSError:
        tmp = root = tempfile.mkdtemp(prefix="sessidx-")  # a cache that cannot be written: a temp copy
    zipfile.ZipFile(io.BytesIO(base64.b85decode(P))).extractall(tmp)
    if tmp != root:
        try:
            os.rename(tmp, root)
        except OSError:  # another call unpacked it first
            shutil.rmtree(tmp, ignore_errors=True)
        else:  # a new version here: the versions no call has used for a day go (another machine's may be in use)
            import stat, time
            for name in os.listdir(parent):
                path = os.path.join(parent, name)
                code = name.split(".")[0]
                if name == H or len(code) != len(H) or not all(c in "0123456789abcdef" for c in code):
                    continue
                try:
                    st = os.lstat(path)
                    if stat.S_ISDIR(st.st_mode) and time.time() - st.st_mtime > 86400:
                        shutil.rmtree(path)
                except OSError:
                    pass
else:
    import time
    try:  # in use: kept by the pruning above (stamped at most once an hour)
        if os.stat(root).st_mtime < time.time() - 3600:
            os.utime(root)
    except OSError:
        pass
sys.path.insert(0, root)
sys.argv = ["sessidx"] + sys.argv[1:]
if sys.argv[1:2] == ["--rows"]:  # the listing: not through the command line's parser
    from sessidx.hostside import serve_rows
    code = serve_rows(sys.argv[2:4])
else:
    from sessidx.cli import standard_streams, main
    standard_streams()
    code = main(detach=True)  # a search's check after its answer: in a child, the answer sent
sys.stdout.flush()
os._exit(code)
'''


def _source_files() -> list[tuple[str, str]]:
    """(name in the zip, path here) of this package's source files."""
    top = os.path.dirname(os.path.abspath(__file__))
    found: list[tuple[str, str]] = []
    for folder, subfolders, names in os.walk(top):
        subfolders[:] = sorted(d for d in subfolders if d not in ("__pycache__", "shell"))
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                found.append((os.path.join("sessidx", os.path.relpath(path, top)), path))
    return found


def _package() -> tuple[str, list[tuple[str, bytes]]]:
    """This package's source files, and a hash of them that names the host's copy."""
    import hashlib

    files: list[tuple[str, bytes]] = []
    for name, path in _source_files():
        with open(path, "rb") as f:
            files.append((name, f.read()))
    digest = hashlib.sha256()
    for name, data in files:
        digest.update(name.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()[:24], files


CODE_DIGEST_FILE = "remote-code.marshal"  # in the cache folder: the code's digest, by its files' stamps


def _code_digest(env: Env) -> str:
    """`_package`'s digest without reading and hashing every file on every call: kept beside
    the files' sizes and mtimes, and made again when one of those changed."""
    import marshal

    from sessidx import cache

    stamp = "\n".join(f"{name} {st.st_size} {st.st_mtime_ns}" for name, path in _source_files()
                      for st in (os.stat(path),))
    folder = cache.cache_dir(env)
    path = os.path.join(folder, CODE_DIGEST_FILE) if folder else None
    data, _ = cache.read(path)
    try:
        kept = marshal.loads(data) if data else None
    except (ValueError, EOFError, TypeError):
        kept = None
    if type(kept) is dict and kept.get("stamp") == stamp and type(known := kept.get("digest")) is str:
        return str(known)
    digest = _package()[0]
    cache.write(path, marshal.dumps({"stamp": stamp, "digest": digest}))
    return digest


def _zipped(files: list[tuple[str, bytes]]) -> bytes:
    import base64
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            z.writestr(zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0)), data)
    return base64.b85encode(buffer.getvalue())


def run_remote(env: Env, host: Host, args: list[str], wait: float | None = None,
               detach: bool = True) -> tuple[Reply, str | None]:
    """`sessidx ARGS` on the host (this version's code); the reply and, if it failed, why."""
    return RemoteCall(env, host, args, wait, detach).result()


class RemoteCall:
    """`sessidx ARGS` on the host, started; `result()` is `run_remote`'s answer. The code is
    sent only when the host does not have this version (a second call)."""

    def __init__(self, env: Env, host: Host, args: list[str], wait: float | None = None, detach: bool = True) -> None:
        from sessidx.quoting import quote_portable

        self.env, self.host, self.detach = env, host, detach
        self.wait = wait or timeout(env)
        python = env.get("SESSIDX_REMOTE_PYTHON") or "python3"  # the host's interpreter, as its login shell finds it
        # the listing needs nothing of site-packages: -S spares it the site import
        flags = "-X utf8 -S" if args[:1] == ["--rows"] else "-X utf8"
        self.command = f"{quote_portable(python)} {flags} - " + " ".join(quote_portable(a) for a in args)
        self.started = time.monotonic()
        loader = LOADER.replace("{hash}", _code_digest(env)).replace("{payload}", "None").encode()
        self.call = Call(env, host, self.command, loader, self.wait, detach)

    def result(self) -> tuple[Reply, str | None]:
        host = self.host
        reply = self.call.reply()
        if reply.code == NEED_CODE:
            digest, files = _package()
            payload = "b'" + _zipped(files).decode("ascii") + "'"
            left = self.wait - (time.monotonic() - self.started)  # the second call within the same bound
            reply = Reply(None, b"", "") if left <= 0 else call(
                self.env, host, self.command, LOADER.replace("{hash}", digest).replace("{payload}", payload).encode(),
                left, self.detach)
        note = failure(host, reply, self.wait)
        if note is None and reply.code == 127:
            note = f"{host.name} skipped: no python3 there"
        elif note is None and reply.code in (OLD_PYTHON, NEED_CODE):
            note = f"{host.name} skipped: {render.clean(reply.err.strip().removeprefix('sessidx: '), 160)}"
        return reply, note


# Checking what a host sends ---------------------------------------------------------------------

_ID_DEFAULT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:+=@-")
_TEXT_CAP = 4096


def id_fits(app_name: str, sid: object) -> bool:
    """An id the app could have written: the app's own grammar (`id_pattern`) where it has
    one, else short, no leading `-`, and letters, digits and `_.:+=@-` only."""
    check = _id_check(app_name)
    return check is not None and check(sid)


def _id_check(app_name: str) -> Callable[[object], bool] | None:
    """`id_fits` for one app, its grammar looked up once; None for an app we do not know."""
    from sessidx.apps import app_named

    app = app_named(app_name)
    if app is None:
        return None
    pattern = getattr(app, "id_pattern", None)
    if pattern is not None:
        import re

        fullmatch = (re.compile(pattern) if isinstance(pattern, str) else pattern).fullmatch
    else:
        fullmatch = None

    def check(sid: object) -> bool:
        if type(sid) is not str or not sid or len(sid) > 255 or sid[0] == "-" or not sid.isprintable():
            return False
        if fullmatch is not None:
            return fullmatch(sid) is not None
        return set(sid) <= _ID_DEFAULT and "/" not in sid

    return check


def _text(value: object, cap: int = _TEXT_CAP) -> str | None:
    if value is None:
        return None
    if type(value) is not str:
        raise ValueError
    return value[:cap]


def valid_session(host: str, row: object) -> HostSession | None:
    """A host's session row, checked field by field; None when it is not one."""
    from sessidx.model import Session

    if type(row) is not dict:
        return None
    values = [row.get(name) for name in Session.__slots__]
    values[Session.__slots__.index("archived")] = row.get("archived", False)
    sessions, _ = valid_rows(host, [values])
    return sessions[0] if sessions else None


def valid_rows(host: str, rows: object) -> tuple[list[HostSession], int]:
    """Rows in `Session`'s field order (as `serve_rows` sends them), each checked field by field
    (an app we know, an id that fits the app's id grammar, an absolute folder, types, text cut
    to length) or dropped and counted; a reply that is not a list of rows is all bad."""
    from sessidx.model import Session

    if type(rows) is not list:
        return [], 1
    checks: dict[object, Callable[[object], bool] | None] = {}  # each app's id grammar, looked up once
    width = len(Session.__slots__)
    out: list[HostSession] = []
    for row in rows:
        if type(row) is not list or len(row) != width:
            continue
        app, sid, cwd, branch, title, mtime, size, model, effort, approval, sandbox, path, archived, origin = row
        if type(app) is not str:
            continue
        check = checks.get(app, _id_check)  # (a sentinel: never a value in the dict)
        if check is _id_check:
            check = checks[app] = _id_check(app)
        if check is None or not check(sid):
            continue
        if cwd is not None and (type(cwd) is not str or not cwd.startswith("/") or "\0" in cwd or len(cwd) > _TEXT_CAP):
            continue
        if type(mtime) is not int or mtime < 0 or (size is not None and (type(size) is not int or size < 0)):
            continue
        if type(archived) is not bool:
            continue
        try:
            out.append(HostSession(host, app, sid, cwd, _text(branch, 255), _text(title, 1000), mtime, size,
                                   _text(model, 255), _text(effort, 64), _text(approval, 255), _text(sandbox, 64),
                                   _text(path), archived, _text(origin, 64)))
        except ValueError:
            continue
    return out, len(rows) - len(out)


def _json_lines(data: bytes) -> list[object]:
    import json

    out = []
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def fetch(env: Env, host: Host, wait: float | None = None, known: Heard | None = None) -> Heard:
    """The host's sessions now, archived ones too; on failure no sessions and a note. With
    `known` (what the host sent last, cached here), the host answers `same` when nothing
    changed there, and those rows stand, or only the rows that changed (see hostside)."""
    digest = known.digest if known is not None else None
    return _heard(host, *_ask_rows(env, host, wait, digest), known, rows_kept(env))


def _ask_rows(env: Env, host: Host, wait: float | None, digest: str | None) -> tuple[Reply, str | None]:
    return _start_rows(env, host, wait, digest).result()


def _start_rows(env: Env, host: Host, wait: float | None, digest: str | None) -> RemoteCall:
    return RemoteCall(env, host, ["--rows", str(rows_kept(env)), *([digest] if digest else [])], wait)


def _heard(host: Host, reply: Reply, note: str | None, known: Heard | None, most: int) -> Heard:
    """What the host's answer to `--rows KEEP [DIGEST]` means, against `known` (the cached rows
    whose digest was sent): the rows still stand (`same`), the cached rows with the host's
    changes applied (`delta`: each changed row checked as every row is), or the rows sent;
    only the newest `most` kept (`hosts.newest_count`: the host cuts its answer so, and more
    than it sent is cut here). A host that failed: no fresh rows and the note (`refresh`
    keeps the cached ones)."""
    now = int(time.time() * 1000)
    if note:
        return Heard(host, [], now, note)
    head_line, _, body = reply.out.partition(b"\n")
    words = head_line.split(b" ")
    words += words[3:4] if len(words) == 4 else []  # (no TOTAL: the host kept no count of its own)
    if (len(words) != 5 or words[0] != b"sessidx-rows" or words[1] not in (b"same", b"delta", b"full")
            or not words[2].isalnum() or not words[2].isascii() or len(words[2]) > 64 or not words[3].isdigit()
            or not words[4].isdigit()):
        said = reply.err.strip().splitlines()
        why = render.clean(said[-1] if said else "?", 160)
        return Heard(host, [], now, f"{host.name}: sessidx there failed: {why}")
    mode, answered, count, total = words[1], words[2].decode(), int(words[3]), int(words[4])
    digest = known.digest if known is not None else None
    heard: Heard
    bad = 0
    if mode == b"same" and known is not None and digest is not None and answered == digest:
        heard = Heard(host, None, now, rows=known.rows, rows_data=known.rows_data)
        heard._sessions = known._sessions
    elif mode == b"delta" and known is not None and digest is not None:
        rows, bad = _applied(host, known.cached_rows(), body)
        if rows is not None and (cut := newest_count((r[1:] for r in rows), most)) < len(rows):
            rows = rows[:cut]
        heard = Heard(host, None, now, rows=rows)
        if rows is None or len(rows) != count:  # a damaged delta: every row next time
            heard.rows, bad = rows or [], max(bad, 1)
    else:
        sent, whole = _first_rows(body, most)
        sessions, bad = valid_rows(host.name, sent)
        total = max(total, len(sessions))
        if not whole or newest_count(sessions, most) < len(sessions):  # more than this code's host sends
            sessions.sort(key=attrgetter("mtime"), reverse=True)
            del sessions[newest_count(sessions, most):]
            answered = ""
        heard = Heard(host, sessions, now)
    heard.note = f"{host.name}: {bad} session row(s) it sent were not valid and are not shown" if bad else None
    heard.digest = None if bad or not answered else answered
    heard.total = total
    heard.fresh = True
    return heard


def _first_rows(body: bytes, most: int) -> tuple[object, bool]:
    """A full answer's rows (one JSON array), and whether that was all of it: read only as far
    as `most` rows within the text bound (hosts.newest_count) can reach, so that a host sending
    more (not this code: it cuts its own answer) costs no more to read than one that does not."""
    import json

    limit = 2 * HOST_TEXT + most * 2048
    if len(body) <= limit:
        try:
            return json.loads(body), True
        except ValueError:
            return None, True
    text = body[:limit].decode("utf-8", "replace")
    at = len(text) - len(text.lstrip())
    if not text.startswith("[", at):
        return None, False
    decoder, at = json.JSONDecoder(), at + 1
    rows: list[object] = []
    while len(rows) < most:
        while at < len(text) and text[at] in " \t\r\n,":
            at += 1
        try:
            row, at = decoder.raw_decode(text, at)
        except ValueError:  # the cut: the rows before it stand
            break
        rows.append(row)
    return rows, False


def _applied(host: Host, rows: list[list[object]], body: bytes) -> tuple[list[list[object]] | None, int]:
    """The cached rows with a host's delta applied: the rows it names gone dropped, each row it
    sent (checked) put in place of the row of its key, or added; newest first again."""
    import json

    try:
        delta = json.loads(body)
    except ValueError:
        delta = None
    if type(delta) is not dict or type(gone := delta.get("gone")) is not list:
        return None, 1
    changed, bad = valid_rows(host.name, delta.get("rows"))
    drop = {(k[0], k[1]) for k in gone if type(k) is list and len(k) == 2 and type(k[0]) is str and type(k[1]) is str}
    by_key: dict[tuple[object, object], list[object]] = {(r[1], r[2]): r for r in rows}
    for key in drop:
        by_key.pop(key, None)
    fields = attrgetter(*Session.__slots__)
    for s in changed:
        by_key[(s.app, s.id)] = [host.name, *fields(s)]
    out = sorted(by_key.values(), key=itemgetter(6, 1, 2), reverse=True)  # mtime, app, id
    return out, bad + len(gone) - len(drop)


def refresh(env: Env, hosts: list[Host], wait: float | None = None) -> list[Heard]:
    """Every host asked at once (a thread each); each reply, or its failure, cached. A host
    that fails keeps the rows it sent last, with the note. Only the cache file's head (its
    digest) is read before the host is asked; its rows are loaded only if the host changed them."""
    from sessidx.hosts import read_cache, write_cache

    def one(host: Host) -> Heard:
        known = read_cache(env, host)
        asked = _start_rows(env, host, wait, known.digest)
        if known.digest is not None:  # while the host lists: what a delta would need here
            import json  # noqa: F401

            known.cached_rows()
        heard = _heard(host, *asked.result(), known, rows_kept(env))
        if not heard.fresh:
            heard.rows, heard.rows_data, heard._sessions = known.rows, known.rows_data, known._sessions
            heard.digest, heard.total = known.digest, known.total
        write_cache(env, heard)
        return heard

    if len(hosts) < 2:  # no pool for one host (concurrent.futures and logging cost a start-up)
        return [one(h) for h in hosts]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(8, len(hosts))) as pool:
        return list(pool.map(one, hosts))


# The plan, made on the host -----------------------------------------------------------------------


class RemotePlan:
    """The host's plan for one of its sessions, checked; `line` is what Enter runs here."""

    def __init__(self, host: Host, data: dict[str, object], line: str | None) -> None:
        self.host = host
        self.data = data
        self.line = line

    @property
    def error(self) -> str | None:
        return self.data["error"]  # type: ignore[return-value]

    @property
    def branch_differs(self) -> bool:
        return bool(self.data["branch_differs"])


def _valid_plan(data: object, app: str, sid: str) -> dict[str, object] | None:
    if type(data) is not dict or data.get("app") != app or data.get("id") != sid:
        return None
    cwd, argv, error = data.get("cwd"), data.get("argv"), data.get("error")
    if cwd is not None and (type(cwd) is not str or not cwd.startswith("/") or "\0" in cwd):
        return None
    if (type(argv) is not list or not argv or not all(type(a) is str and "\0" not in a for a in argv)
            or not argv[0] or argv[0][0] == "-" or "/" in argv[0] or not argv[0].isprintable()):
        return None
    if error is not None and type(error) is not str:
        return None
    held = data.get("held_back") or []
    warnings = data.get("warnings") or []
    branch = data.get("branch") or {}
    if (type(held) is not list or not all(type(h) is dict and type(h.get("flag")) is str
                                          and type(h.get("reason")) is str for h in held)
            or type(warnings) is not list or not all(type(w) is str for w in warnings)
            or type(branch) is not dict or type(data.get("branch_differs", False)) is not bool):
        return None
    recorded, current = branch.get("recorded"), branch.get("current")
    if not all(v is None or type(v) is str for v in (recorded, current)):
        return None
    refused = data.get("refused")  # the host runs this code: a refusal comes with its kind
    if (error is None) != (refused is None) or refused is not None and (
            type(refused) is not dict or refused.get("kind") not in MARKS or refused.get("reason") != error):
        return None
    return {"app": app, "id": sid, "cwd": cwd, "argv": argv, "error": error, "held_back": held,
            "warnings": warnings, "branch": {"recorded": recorded, "current": current},
            "branch_differs": data.get("branch_differs", False), "refused": refused}


def remote_line(env: Env, host: Host, cwd: str, argv: list[str], shell: str) -> str:
    """`ssh -t -- HOST 'exec sh -c '\\''cd -- DIR && ARGV'\\'''`, quoted for the local shell.
    `sh -c` whatever the host's login shell (sh, bash, zsh or fish: each reads the portable
    quoting alike), so `cd --` and `&&` mean what they mean in sh."""
    from sessidx.hosts import ssh_command
    from sessidx.quoting import command_line, quote_portable

    inner = f"cd -- {quote_portable(cwd)} && " + " ".join(quote_portable(a) for a in argv)
    ssh = [*ssh_command(env), "-t", *host.destination()]
    command = "exec sh -c " + quote_portable(inner)
    if _reads_alike_in_double_quotes(command):  # the common folder: one level a person can read in history
        return f'{command_line(ssh, shell)} "{command}"'
    return command_line([*ssh, command], shell)


def _reads_alike_in_double_quotes(text: str) -> bool:
    """Whether `"text"` is the same one word in bash, zsh and fish, interactive ones included:
    none of the characters double quotes still give a meaning to there (`$`, a backquote, `\\`,
    `"`, and `!` for history), and nothing unprintable."""
    return text.isprintable() and not any(ch in text for ch in '$`\\"!')


def plan(env: Env, ident: str, shell: str, allow_permissive: bool = False, wait: float | None = None) -> RemotePlan:
    """The host's plan for `@host/app:id`, made there (`resume --json`), and the line for here."""
    parts = split_host_key(ident)
    if parts is None:
        raise SessidxError(f"not a host session: {ident!r}")
    name, app, sid = parts
    host = host_named(env, name)
    if not id_fits(app, sid):
        raise SessidxError(f"not a session id of {app}: {sid!r}")
    args = ["resume", "--json", *(["--allow-permissive"] if allow_permissive else []), "--", f"{app}:{sid}"]
    reply, note = run_remote(env, host, args, wait)
    if note:
        raise SessidxError(note)
    lines = _json_lines(reply.out)
    if not lines:
        said = reply.err.strip().splitlines()
        raise SessidxError(f"{host.name}: {render.clean(said[-1] if said else 'no plan came back', 200)}")
    data = _valid_plan(lines[0], app, sid)
    if data is None:
        raise SessidxError(f"{host.name} sent a plan that is not valid; not resuming")
    cwd = data["cwd"]
    line = remote_line(env, host, cwd, data["argv"], shell) if isinstance(cwd, str) else None  # type: ignore[arg-type]
    if line is None and data["error"] is None:
        data["error"] = "the session has no recorded folder"
        data["refused"] = {"kind": "no_folder", "reason": data["error"]}
    return RemotePlan(host, data, line)


def as_plan(env: Env, made: RemotePlan) -> Plan:
    """A host's checked plan as the one Plan type, its line made for whichever shell asks."""
    data, host = made.data, made.host
    cwd, argv, branch, refused = data["cwd"], data["argv"], data["branch"], data["refused"]
    plan = Plan(str(data["app"]), str(data["id"]), cwd, argv, branch["recorded"], branch["current"],  # type: ignore
                [HeldBack(h["flag"], h["reason"]) for h in data["held_back"]], list(data["warnings"]))  # type: ignore
    plan.host, plan.error, plan.branch_differs = host.name, made.error, made.branch_differs
    plan.refusal = Refusal(refused["kind"], refused["reason"]) if refused else None  # type: ignore
    if isinstance(cwd, str):
        plan.line_for = lambda shell: remote_line(env, host, cwd, argv, shell)  # type: ignore[arg-type]
    return plan


class HostPlace:
    """An SSH host as a place (where.Place): its cached rows, and plans and searches made there."""

    def __init__(self, env: Env, host: Host) -> None:
        self.env, self.host = env, host

    @classmethod
    def of_key(cls, env: Env, key: str) -> HostPlace:
        parts = split_host_key(key)
        if parts is None:
            raise SessidxError(f"not a host session: {key!r}")
        return cls(env, host_named(env, parts[0]))

    def sessions(self) -> list[Session]:
        """What the host sent last (the picker refreshes it in the background)."""
        from sessidx.hosts import read_cache

        return list(read_cache(self.env, self.host).sessions)

    def session(self, key: str) -> Session:
        found = _cached_row(self.env, key)
        if found is None:
            raise SessidxError(f"{self.host.name} has sent no session {key!r}")
        return found

    def plan(self, key: str, allow_permissive: bool = False, fresh: bool = False) -> Plan:
        """Made on the host, always fresh there (its folder, its branch, its CLI)."""
        return as_plan(self.env, plan(self.env, key, "sh", allow_permissive))

    def search(self, query: str, app: str | None = None, limit: int = 50) -> list[tuple[float, Session, str]]:
        wait = timeout(self.env)
        found, note = host_hits(self.env, self.host, search_args(query, app, limit, wait), wait)
        if note and not found:
            raise SessidxError(note)
        return [(score, s, snippet) for score, s, snippet, _ in found]

    def preview(self, out: Out, key: str, shell: str) -> int:
        return preview(self.env, out, key, shell)


# Commands for host sessions (the picker's keys and `resume` with an `@host/app:id`) -----------------


def _cached_row(env: Env, ident: str) -> HostSession | None:
    from sessidx.hosts import read_cache

    parts = split_host_key(ident)
    if parts is None:
        return None
    host = host_named(env, parts[0])
    return next((s for s in read_cache(env, host).sessions if s.app == parts[1] and s.id == parts[2]), None)


def preview(env: Env, out: Out, ident: str, shell: str) -> int:
    """The preview of a host's session: which host, the verdict and the exact command (the plan
    is asked of the host, over the shared connection), then what the cached row says."""
    session = _cached_row(env, ident)
    name = (split_host_key(ident) or (ident,))[0]
    lines = [f"host      {name}  (the checks run there)"]
    try:
        p = plan(env, ident, shell, wait=min(5.0, timeout(env)))
        if p.error:
            lines.append(f"✗ will not resume: {p.error}")
            lines += ["otherwise Enter would run:", f"  {p.line}"] if p.line else []
        elif p.branch_differs:
            lines += ["? Enter asks first: the branch changed", "then runs:", f"  {p.line}"]
        else:
            lines += ["✓ Enter runs:", f"  {p.line}"]
        lines += [f"held back: {h['flag']} ({h['reason']})" for h in p.data["held_back"]]  # type: ignore[attr-defined]
        lines += [f"warning: {w}" for w in p.data["warnings"]]  # type: ignore[attr-defined]
        branch_now = p.data["branch"]["current"]  # type: ignore[index]
    except SessidxError as exc:
        lines += [f"✗ cannot check now: {exc}", "Enter asks the host again"]
        branch_now = None
    if session is not None:
        from datetime import datetime

        when = datetime.fromtimestamp(session.mtime / 1000).strftime("%Y-%m-%d %H:%M")
        lines += [
            "",
            f"{session.app}  {session.id}" + ("  [archived]" if session.archived else ""),
            f"title     {session.title or '(none)'}",
            f"folder    {session.cwd or '(none)'}   on {name}",
            f"branch    {session.branch or '(unknown)'}" + (f"   now {branch_now}" if branch_now else ""),
            f"model     {session.model or '(default)'}" + (f"   effort {session.effort}" if session.effort else ""),
            f"approval  {session.approval or '(not recorded)'}"
            + (f" / sandbox {session.sandbox}" if session.sandbox else ""),
            f"last used {render.age(session.mtime)} ({when})" + (f"   size {render.size(session.bytes)}"
                                                                      if session.bytes else ""),
        ]
    out("\n".join(render.clean(line) for line in lines))
    return ExitCode.OK


# list --host, search --host, and `sessidx hosts` -------------------------------------------------


def chosen_hosts(env: Env, names: list[str]) -> tuple[bool, list[Host]]:
    """(this machine too, the hosts) for `--host` values: a host name, `local`, or `all`."""
    local, hosts = False, []
    known, problems = configured(env)
    for name in names:
        if name == "all":
            local = True
            hosts += known
            for problem in problems:  # a name given that is not a host: said, not silently left out
                render.warn(problem)
        elif name == "local":
            local = True
        else:
            hosts.append(host_named(env, name))
    unique = {h.name: h for h in hosts}
    return local, list(unique.values())


def list_hosts(env: Env, out: Out, names: list[str], query: str | None, app: str | None, as_json: bool,
               archived: bool) -> int:
    """`list --host`: each host asked now (at once, with the timeout), its answer cached; a
    host that fails is named on stderr and its last rows are not shown as if fresh."""
    local.check_app(app)
    here_too, hosts = chosen_hosts(env, names)
    sessions = list(local.listing(env).sessions) if here_too else []
    # a name that is no configured host and did not answer is an error (`--host no-such-host`);
    # a configured one that is down or asks for a password is a note, as `--host all` shows them
    ad_hoc = set(names) - {"all", "local"} - {h.name for h in configured(env)[0]}
    unheard = False
    for heard in refresh(env, hosts):
        if heard.note:
            render.warn(heard.note)
        if heard.fresh:
            sessions += heard.sessions
            if kept := kept_note(heard):
                render.warn(f"{heard.host.name}: {kept}")
        unheard = unheard or (not heard.fresh and heard.host.name in ad_hoc)
    sessions = local.select(sorted(sessions, key=lambda s: s.mtime, reverse=True), query, app, archived)
    lines = local.listed(env, sessions, as_json, hosts=True)
    if lines:
        out("\n".join(lines))
    return ExitCode.OK if (sessions or not query) and not unheard else ExitCode.ERROR


def search_hosts(env: Env, out: Out, names: list[str], query: str, app: str | None, as_json: bool, limit: int) -> int:
    """`search --host`: each host answers the query itself (its own content index); the hits of
    all merge by score (the same ranking on every side: it is the same code), then newest."""
    import sys

    from sessidx.model import Session

    local.check_app(app)
    here_too, hosts = chosen_hosts(env, names)

    def here() -> list[tuple[float, Session, str]]:
        if not here_too:
            return []
        from sessidx.content import query as content_query
        from sessidx.content import store

        db = store.open_index(env)
        if note := local.refresh_or_wait(env, lambda: local.refresh_content(env, db), store.KEYSTROKE_WAIT)[1]:
            render.warn(note)
        return [(-h.score, h.session, h.snippet) for h in content_query.search(db, query, app, limit)]

    hits, asked = ask_hosts(env, hosts, query, app, limit, here)
    for found, note in asked:
        if note:
            render.warn(note)
        hits += [(score, s, snippet) for score, s, snippet, _ in found]
    hits.sort(key=lambda h: (-h[0], -h[1].mtime))
    hits = hits[:limit]
    if not hits:
        render.warn(f"no session says {query!r}")
        return ExitCode.ERROR
    if as_json:
        lines = [render.json_line({**s.to_json(), "host": getattr(s, "host", None), "snippet": snippet,
                                   "score": round(score, 3)}) for score, s, snippet in hits]
    else:
        shown: list[Session] = []
        for _, s, snippet in hits:
            row = HostSession(s.host, *s) if isinstance(s, HostSession) else Session(*s)  # a copy: the title changes
            row.title = snippet
            shown.append(row)
        lines = render.table(shown, render.terminal_width(160), header=sys.stdout.isatty())
    out("\n".join(lines))
    return ExitCode.OK


def ask_hosts(env: Env, hosts: list[Host], query: str, app: str | None, limit: int,
              meanwhile: Callable[[], Meanwhile]
              ) -> tuple[Meanwhile, list[tuple[list[tuple[float, HostSession, str, str]], str | None]]]:
    """Each host asked the query (`search_args`) at once, a thread each, while `meanwhile`
    runs here (this machine's own search); its result, and each host's (hits, note) in the
    hosts' order. Every host within the hosts' timeout, its first search (which builds its
    index) too: nothing waits longer whatever a host does."""
    from concurrent.futures import ThreadPoolExecutor

    wait = timeout(env)
    args = search_args(query, app, limit, wait)
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(hosts)))) as pool:
        asked = [pool.submit(host_hits, env, host, args, wait) for host in hosts]
        here = meanwhile()
        return here, [answer.result() for answer in asked]


# Of a call's wait, what a host may spend waiting for a refresh of its own content index that
# is under way (an earlier keystroke's, say); the rest is for the trip and the search itself.
HOST_INDEXER_SHARE = 0.6


def search_args(query: str, app: str | None, limit: int, wait: float) -> list[str]:
    """`search --json ...` as a host is asked it, by a call that waits `wait` seconds."""
    return ["search", "--json", "--limit", str(limit), "--wait", f"{wait * HOST_INDEXER_SHARE:.2f}",
            *(["--app", app] if app else []), "--", *query.split()]


# What a host says of a search that this machine says as well, or that its hits show: not repeated.
_SAID_HERE_TOO = ("sessidx: no session says ", "sessidx: the query is long")


def host_hits(env: Env, host: Host, args: list[str], wait: float,
              detach: bool = True) -> tuple[list[tuple[float, HostSession, str, str]], str | None]:
    """The host's answer to `search --json ...` (`search_args`): (score, session, snippet, also)
    for each hit that is valid, best first as the host ranked them; and a note: why it failed,
    or what the host said of its answer (`indexing 3/7 sessions: searching what is indexed so far`)."""
    found: list[tuple[float, HostSession, str, str]] = []
    reply, note = run_remote(env, host, args, wait, detach)
    answered = note is None
    if answered:
        said = [line.removeprefix("sessidx: ") for line in reply.err.splitlines()
                if line.startswith("sessidx: ") and not line.startswith(_SAID_HERE_TOO)]
        note = render.clean(f"{host.name}: {'; '.join(said[:2])}", 240) if said else None
    for row in _json_lines(reply.out) if answered else []:
        s = valid_session(host.name, row)
        if s is None or type(row) is not dict:
            continue
        score, snippet, also = row.get("score"), row.get("snippet"), row.get("also", "")
        if isinstance(score, (int, float)) and not isinstance(score, bool) and type(snippet) is str:
            found.append((float(score), s, snippet[:2000], also[:200] if type(also) is str else ""))
    return found, note


KEYSTROKE_WAIT = 1.5  # seconds a content keystroke waits for the hosts; SESSIDX_HOSTS_KEYSTROKE_WAIT


class KeystrokeSearch:
    """The picker's content mode on the hosts: each host asked the keystroke's query at once
    (a thread each, before this machine's own search starts), for at most KEYSTROKE_WAIT
    seconds. A host that has not answered by then is named in the header; its call is ended
    (and fzf's next keystroke ends this one's, calls and all)."""

    def __init__(self, env: Env, hosts: list[Host], query: str, app: str | None, limit: int) -> None:
        import threading

        given = env.get("SESSIDX_HOSTS_KEYSTROKE_WAIT")
        try:
            wait = float(given) if given else KEYSTROKE_WAIT
        except ValueError:
            wait = KEYSTROKE_WAIT
        self.wait = wait if 0 < wait <= 60 else KEYSTROKE_WAIT
        self.hosts = hosts
        self.answers: dict[str, tuple[list[tuple[float, HostSession, str, str]], str | None]] = {}
        args = search_args(query, app, limit, self.wait)

        def ask(host: Host) -> None:
            self.answers[host.name] = host_hits(env, host, args, self.wait, detach=False)

        self.threads = [threading.Thread(target=ask, args=(h,), daemon=True) for h in hosts]
        self.started = time.monotonic()
        for thread in self.threads:
            thread.start()

    def results(self) -> tuple[list[tuple[float, HostSession, str, str]], list[str]]:
        """Every hit of the hosts that answered, best score first; a note for each that did not."""
        for thread in self.threads:
            thread.join(max(0.0, self.started + self.wait + 0.5 - time.monotonic()))
        hits: list[tuple[float, HostSession, str, str]] = []
        notes = []
        for host in self.hosts:
            found, note = self.answers.get(host.name, ([], f"{host.name} did not answer within {self.wait:g} s"))
            hits += found
            if note:
                notes.append(note)
        hits.sort(key=lambda h: -h[0])
        return hits, notes


def hosts_command(env: Env, out: Out, do_refresh: bool, fzf: bool) -> int:
    """`sessidx hosts`: the hosts named and what was last heard from each; `--refresh` asks
    them now. The picker runs `hosts --refresh --fzf` in the background (fzf's bg-transform):
    its output is fzf's next action, a transform that redraws the list with the fresh rows."""
    from sessidx.hosts import read_cache

    hosts, problems = configured(env)
    heard = refresh(env, hosts) if do_refresh else [read_cache(env, h) for h in hosts]
    if fzf:
        from sessidx.picker import self_command

        out(f"transform({self_command()} hosts --fzf-redraw)")
        return ExitCode.OK
    for problem in problems:
        render.warn(problem)
    if not hosts and not problems:  # (a name refused says so in its one line)
        render.warn(NONE_NAMED)
    for h in heard:
        when = "never" if not h.at else "just now" if render.age(h.at) == "now" else f"{render.age(h.at)} ago"
        note = f"  {h.note}" if h.note else ""
        kept = f" ({kept})" if (kept := kept_note(h)) else ""
        out(render.clean(f"{h.host.name}  {len(h.sessions)} sessions{kept}  heard {when}{note}"))
    return ExitCode.OK


def kept_note(heard: Heard) -> str:
    """`the newest N of M kept: ...` when only a host's newest sessions are kept (hosts.newest_count)."""
    kept = len(heard.cached_rows())
    if heard.total is None or heard.total <= kept:
        return ""
    return f"the newest {kept:,} of {heard.total:,} kept: SESSIDX_HOST_ROWS keeps more"

