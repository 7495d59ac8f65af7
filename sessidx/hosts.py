"""SSH hosts: which are named, how each is reached, and what was last heard from each.

Hosts are named by `SESSIDX_HOSTS` (words separated by spaces or commas; `-` for none), or,
when it is unset, by `$XDG_CONFIG_HOME/sessidx/hosts` (default `~/.config/sessidx/hosts`):
one host per line, `#` starts a comment. A host is what `ssh` takes (an alias of
`~/.ssh/config`, `user@host`), or `host:port`. Nothing is contacted unless a host is named.

The picker never waits for a host: what each host sent last is kept in
`$XDG_CACHE_HOME/sessidx/host-<hash>.marshal` (the cache rules of `cache`), shown at once,
and refreshed in the background. Background calls run with `BatchMode=yes` (a host that
would ask for a password is skipped with a note), a connect timeout and an overall one, and
share one connection per host (`ControlMaster=auto`, `ControlPersist`, a `ControlPath` in a
private folder) unless the user's ssh configuration has a ControlPath of its own. Host key
checking is never turned off: a host whose key is unknown is skipped with a note.

This module is on the key press's path (the cached rows): it imports nothing heavy at the top.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
from itertools import repeat, starmap
from operator import attrgetter

from sessidx import cache
from sessidx.errors import SessidxError
from sessidx.keys import host_key
from sessidx.model import Session
from sessidx.render import clean

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterable

    from sessidx.config import Env

HOSTS_FILE = "hosts"  # in $XDG_CONFIG_HOME/sessidx
DEFAULT_TIMEOUT = 10.0  # seconds for a whole call to a host; SESSIDX_HOSTS_TIMEOUT changes it
CONTROL_PERSIST = "300"  # seconds the shared connection stays open after the last use
HOST_ROWS = 1000  # the newest sessions of a host that are kept here; SESSIDX_HOST_ROWS changes it
HOST_TEXT = 512 << 10  # and no more characters of text than this: a host's size must not reach the key press
HOST_CACHE_VERSION = f"h5/py{sys.version_info[0]}.{sys.version_info[1]}/{','.join(Session.__slots__)}"
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_@:[]%+")


class Host:
    """One host as the user named it (`name`), and the ssh destination and port it means."""

    __slots__ = ("name", "target", "port")

    def __init__(self, name: str, target: str, port: str | None) -> None:
        self.name = name
        self.target = target
        self.port = port

    def destination(self) -> list[str]:
        """ssh's arguments naming the host, its options ended first: `[-p PORT] -- [user@]host`
        (OpenSSH reads options after the host too, unless `--` came before it). The command
        follows as its own word."""
        return (["-p", self.port] if self.port else []) + ["--", self.target]

    def __repr__(self) -> str:
        return f"Host({self.name!r})"


def parse_host(text: str) -> Host | None:
    """A host name, or None when it is not one (`host_problem` says why)."""
    parsed = _parsed_host(text)
    return parsed if isinstance(parsed, Host) else None


def host_problem(text: str) -> str | None:
    """Why `text` is not a host name, in a few words; None when it is one."""
    parsed = _parsed_host(text)
    return parsed if isinstance(parsed, str) else None


def _parsed_host(text: str) -> Host | str:
    """`[user@]host`, `[user@]host:port`, a bare IPv6 address, or one in brackets (`[addr]`,
    `[addr]:port`): brackets hold an address and nothing else. No part may start with `-`,
    which ssh would read as an option (its options are also ended before the host: `--`)."""
    if not text or len(text) > 255:
        return "empty or longer than 255 characters"
    if not set(text) <= _HOST_CHARS:
        return "a character ssh does not take in a host name"
    target, port = text, None
    if text.startswith("["):  # [v6]:port or [v6]
        inside, closed, rest = text[1:].partition("]")
        if not closed or "[" in inside or "]" in rest:
            return "brackets hold an IPv6 address and nothing else"
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return "only a port (`:22`) may follow `]`"
        if not _ipv6(inside):
            return "brackets hold an IPv6 address and nothing else"
        target, port = inside, rest[1:] or None
    elif "[" in text or "]" in text:
        return "brackets hold an IPv6 address and nothing else"
    elif text.count(":") == 1:  # host:port (more colons: a bare IPv6 address)
        target, _, port = text.partition(":")
        if not port.isdigit():
            return "the port is not a number"
    if port is not None and not 0 < int(port) < 65536:
        return "the port is not between 1 and 65535"
    user, at, name = target.rpartition("@")
    if at and (not user or "@" in user):
        return "more than one `@`, or nothing before it"
    if not name:
        return "no host after `@`"
    if name[0] == "-" or user[:1] == "-":
        return "it starts with `-` (ssh would read an option)"
    if (":" in name or "%" in name) and not _ipv6(name):
        return "`:` or `%` in a host name that is not an IPv6 address"
    return Host(text, target, port)


def _ipv6(text: str) -> bool:
    """An IPv6 address (a zone `%eth0` after it allowed), by the standard library's reading."""
    if not text or text[0] == "-":
        return False
    import ipaddress  # only for an address: a host named by name never loads it

    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def config_path(env: Env) -> str | None:
    base = env.get("XDG_CONFIG_HOME")
    if not base or not os.path.isabs(base):
        home = env.vars.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".config")
    return os.path.join(base, "sessidx", HOSTS_FILE) if os.path.isabs(base) else None


NONE_NAMED = "no SSH hosts named (SESSIDX_HOSTS, or ~/.config/sessidx/hosts: one a line)"


def configured(env: Env) -> tuple[list[Host], list[str]]:
    """The hosts named, in order, each once, and a note for every name that is not a host."""
    given = env.vars.get("SESSIDX_HOSTS")
    words: list[str] = []
    if given is not None:
        words = [] if given.strip() == "-" else given.replace(",", " ").split()
    elif (path := config_path(env)) is not None:
        data, problem = cache.read(path, cap=1 << 20)
        if problem:
            return [], [problem.replace("cache ", "hosts file ", 1)]
        for line in (data or b"").decode("utf-8", "replace").splitlines():
            words += line.partition("#")[0].split()
    hosts: list[Host] = []
    problems: list[str] = []
    for word in dict.fromkeys(words):
        parsed = _parsed_host(word)
        if isinstance(parsed, str):
            problems.append(f"not a host name, ignored: {word!r}: {parsed}")
        else:
            hosts.append(parsed)
    return hosts, problems


def host_named(env: Env, name: str) -> Host:
    """`name` as a host: `all` is not one; any valid name is (it need not be configured)."""
    parsed = _parsed_host(name)
    if isinstance(parsed, str):
        raise SessidxError(f"not a host name: {name!r}: {parsed}")
    return parsed


def rows_kept(env: Env) -> int:
    """How many of a host's newest sessions are kept: HOST_ROWS, or SESSIDX_HOST_ROWS (1 to 100,000)."""
    given = env.get("SESSIDX_HOST_ROWS") or ""
    return int(given) if given.isdigit() and 0 < int(given) <= 100_000 else HOST_ROWS


def newest_count(rows: Iterable[Iterable[object]], most: int) -> int:
    """How many of `rows` (Session fields in slot order, newest first) are kept: at most `most`,
    and within HOST_TEXT characters of text. The host cuts its answer so (hostside), and this
    side cuts what a host sent beyond it (another code's, a hostile one's)."""
    text = kept = 0
    for row in rows:
        text += sum(len(v) for v in row if type(v) is str)
        if kept == most or text > HOST_TEXT:
            break
        kept += 1
    return kept


def timeout(env: Env) -> float:
    given = env.get("SESSIDX_HOSTS_TIMEOUT")
    try:
        value = float(given) if given else DEFAULT_TIMEOUT
    except ValueError:
        value = DEFAULT_TIMEOUT
    return value if 0 < value <= 600 else DEFAULT_TIMEOUT


class HostSession(Session):
    """A session that lives on a host. Its fields are the host's, checked (see remote.valid_session)."""

    __slots__ = ("host",)

    def __init__(self, host: str, app: str, id: str, cwd: str | None = None, branch: str | None = None,
                 title: str | None = None, mtime: int = 0, bytes: int | None = None, model: str | None = None,
                 effort: str | None = None, approval: str | None = None, sandbox: str | None = None,
                 path: str | None = None, archived: bool = False, origin: str | None = None) -> None:
        super().__init__(app, id, cwd, branch, title, mtime, bytes, model, effort, approval, sandbox, path, archived,
                         origin)
        self.host = host

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (getattr(self, name) for name in Session.__slots__)

    def to_json(self) -> dict[str, object]:
        return {**{name: getattr(self, name) for name in Session.__slots__}, "host": self.host}

    @property
    def key(self) -> str:
        """`@host/app:id` (keys.py holds the form)."""
        return host_key(self.host, self.app, self.id)


# The local cache of each host -----------------------------------------------------------------


def cache_file(env: Env, host: Host) -> str | None:
    folder = cache.cache_dir(env)
    if folder is None:
        return None
    h = 0x811C9DC5  # FNV-1a, as index.cache_path: a host name may hold characters a file name should not
    for byte in host.name.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return os.path.join(folder, f"host-{h:08x}.marshal")


_N = type(None)
_ROW_TYPES: tuple[set[type], ...] = (  # the host's name, then the Session fields in slot order
    {str}, {str}, {str}, {str, _N}, {str, _N}, {str, _N}, {int}, {int, _N}, {str, _N}, {str, _N}, {str, _N},
    {str, _N}, {str, _N}, {bool}, {str, _N},
)


class Heard:
    """What was last heard from one host: its sessions, when (ms), and what went wrong since.
    The sessions are made from the cached rows (`rows`, or still marshalled in `rows_data`)
    only when asked for: a refresh that hears `same` never makes them."""

    def __init__(self, host: Host, sessions: list[HostSession] | None = None, at: int = 0,
                 note: str | None = None, rows: list[list[object]] | None = None,
                 rows_data: bytes | None = None) -> None:
        self.host = host
        self._sessions = sessions
        self.rows = rows  # [host name, *Session fields] each, checked
        self.rows_data = rows_data  # the cache file's marshal of `rows`, not yet loaded
        self.at = at
        self.note = note
        self.fresh = False  # heard just now (not the cached rows of a host that failed)
        self.digest: str | None = None  # the host's digest of these rows: it answers `same` to it
        self.total: int | None = None  # the host's sessions before its newest were kept (newest_count)

    @property
    def sessions(self) -> list[HostSession]:
        if self._sessions is None:
            self._sessions = list(starmap(HostSession, self.cached_rows()))
        return self._sessions

    @sessions.setter
    def sessions(self, value: list[HostSession]) -> None:
        self._sessions, self.rows, self.rows_data = value, None, None

    def cached_rows(self) -> list[list[object]]:
        """The rows, loaded from `rows_data` and type-checked if need be (none if they are bad)."""
        if self.rows is None:
            if self._sessions is not None:
                fields = attrgetter(*Session.__slots__)
                self.rows = [[self.host.name, *fields(s)] for s in self._sessions]
            else:
                self.rows = _checked_rows(self.host, self.rows_data)
        return self.rows


_HEAD_LENGTH = 8  # the cache file: the head's length (hex), the head's marshal, the rows' marshal


def _checked_rows(host: Host, data: bytes | None) -> list[list[object]]:
    try:
        rows = marshal.loads(data) if data else []
    except (ValueError, EOFError, TypeError):
        return []
    # checked in bulk, as index._checked does: each distinct signature of field types once
    if (type(rows) is not list
            or not (set(map(type, rows)) <= {list}
                    and all(map(_signature_ok, set(map(tuple, map(map, repeat(type), rows)))))
                    and {r[0] for r in rows} <= {host.name})):
        return []
    return rows


def read_cache(env: Env, host: Host) -> Heard:
    """The host's cached rows, type-checked row by row when they are used (they were checked
    field by field when they arrived); anything wrong with the file means no rows, never an
    error. The head (when, the note, the digest) is read apart: a refresh needs only it."""
    data, _ = cache.read(cache_file(env, host))
    head: object = None
    rows_data = b""
    if data and len(data) > _HEAD_LENGTH and data[:_HEAD_LENGTH].isalnum():
        try:
            end = _HEAD_LENGTH + int(data[:_HEAD_LENGTH], 16)
            head = marshal.loads(data[_HEAD_LENGTH:end])
            rows_data = data[end:]
        except (ValueError, EOFError, TypeError):
            head = None
    if type(head) is not dict or head.get("version") != HOST_CACHE_VERSION or head.get("host") != host.name:
        return Heard(host, [])
    note = head.get("note")
    at = head.get("at")
    heard = Heard(host, None, at if type(at) is int else 0, note if type(note) is str else None, rows_data=rows_data)
    digest = head.get("digest")
    heard.digest = digest if type(digest) is str and digest.isalnum() else None
    total = head.get("total")
    heard.total = total if type(total) is int else None
    return heard


def _signature_ok(signature: tuple[type, ...]) -> bool:
    return len(signature) == len(_ROW_TYPES) and all(t in ok for t, ok in zip(signature, _ROW_TYPES, strict=True))


def write_cache(env: Env, heard: Heard) -> str | None:
    """The host's rows and what was heard; rows that are still the file's marshal (a `same`)
    are written back as they are."""
    rows_data = heard.rows_data if heard.rows is None and heard._sessions is None else None
    if rows_data is None:
        rows_data = marshal.dumps(heard.cached_rows())
    head = marshal.dumps({"version": HOST_CACHE_VERSION, "host": heard.host.name, "note": heard.note,
                          "at": heard.at, "digest": heard.digest, "total": heard.total})
    return cache.write(cache_file(env, heard.host), b"%08x" % len(head) + head + rows_data)


REFRESH_WAIT = 2.0  # seconds a warm picker's reload waits for its hosts (keys may go unheard meanwhile)


def refresh_wait(env: Env) -> float:
    """REFRESH_WAIT, or `SESSIDX_HOSTS_RELOAD_WAIT` seconds: a slower host's new rows show on the
    next press instead (a user with slow hosts may trade the wait for keys that go unheard)."""
    given = env.get("SESSIDX_HOSTS_RELOAD_WAIT") or ""
    try:
        return min(60.0, max(0.0, float(given))) if given else REFRESH_WAIT
    except ValueError:
        return REFRESH_WAIT


def wait_for_refresh(env: Env, since_ms: int, most: float | None = None) -> None:
    """Until every configured host's cache was written at or after `since_ms` (the picker's
    background refresh is done), for at most `most` seconds (default: the hosts' timeout
    and a little more)."""
    import time

    deadline = time.monotonic() + (timeout(env) + 3 if most is None else most)
    for host in configured(env)[0]:
        path = cache_file(env, host)
        while path is not None and time.monotonic() < deadline:
            try:
                if os.stat(path).st_mtime_ns // 1_000_000 >= since_ms:
                    break
            except OSError:
                pass
            time.sleep(0.1)


def cached_sessions(env: Env, app: str | None = None) -> list[HostSession]:
    """Every configured host's cached sessions (archived ones left out), of one app or all."""
    out: list[HostSession] = []
    for host in configured(env)[0]:
        out += [s for s in read_cache(env, host).sessions if not s.archived and (app is None or s.app == app)]
    return out


def newest_first(sessions: list[Session]) -> list[Session]:
    return sorted(sessions, key=attrgetter("mtime"), reverse=True)


# Reaching a host -------------------------------------------------------------------------------


def ssh_command(env: Env) -> list[str]:
    """`SESSIDX_SSH` (shell words, e.g. `ssh -F ~/.ssh/work_config`), else `ssh`."""
    given = env.get("SESSIDX_SSH")
    if not given:
        return ["ssh"]
    if not set(given) & set("'\"\\#"):  # plain words: no shlex (and its `re`) needed
        return given.split() or ["ssh"]
    import shlex

    try:
        words = shlex.split(given)
    except ValueError as exc:
        raise SessidxError(f"SESSIDX_SSH is not a list of shell words ({exc}): {given}") from None
    return words or ["ssh"]


_SOCKET_ROOM = 100 - 1 - 16 - 17  # sun_path, `/`, the socket's name (16 hex), and ssh's own temporary suffix


def control_dir(env: Env) -> str | None:
    """A folder of ours (mode 0700, owned by us, not a link) for the shared connections'
    sockets, short enough for a socket path: `$XDG_RUNTIME_DIR/sessidx`, else the cache
    folder's `ssh/`, else `/tmp/sessidx-<uid>`. None when no such folder can be had."""
    runtime = env.get("XDG_RUNTIME_DIR")
    choices = [os.path.join(runtime, "sessidx")] if runtime and os.path.isabs(runtime) else []
    if (folder := cache.cache_dir(env)) is not None:
        choices.append(os.path.join(folder, "ssh"))
    choices.append(f"/tmp/sessidx-{os.getuid()}")
    for path in choices:
        if len(path) > _SOCKET_ROOM:
            continue
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077:
            return path
    return None


def _own_control(env: Env, host: Host, deadline: float) -> bool:
    """Whether the user's ssh configuration shares connections to this host itself (`ssh -G`,
    which reads the configuration only; bounded all the same, by the call's deadline)."""
    import subprocess
    import time

    try:
        proc = subprocess.Popen([*ssh_command(env), "-G", *host.destination()], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return False
    try:
        said, _ = proc.communicate(timeout=max(0.0, min(5.0, deadline - time.monotonic())))
    except subprocess.TimeoutExpired:
        end_group(proc.pid, True)
        proc.wait()
        return False
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
    for line in said.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        if key == "controlpath" and value.strip() not in ("", "none"):
            return True
        if key == "controlmaster" and value.strip() not in ("false", "no"):
            return True
    return False


def control_socket(folder: str, ssh_words: list[str], name: str) -> str:
    """Our shared connection's socket for a host, in `folder`: named by the ssh command and the
    host's name (not ssh's %C, which only `ssh -G` could tell us)."""
    h = 0xCBF29CE484222325  # FNV-1a, 64 bits
    for byte in "\0".join([*ssh_words, name]).encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return os.path.join(folder, f"{h:016x}")


def background_argv(env: Env, host: Host, remote_command: str, wait: float, deadline: float | None = None) -> list[str]:
    """The ssh command of a call in the background: no terminal, no password prompt, no agent
    or X11 forwarding, a connect timeout, and one shared connection per host. While our socket
    for the host is there, an earlier call found no ControlPath of the user's: `ssh -G` (a
    process per call) is not asked again until the connection has gone (ControlPersist);
    that question too is over by `deadline` (monotonic; default `wait` from now)."""
    import time

    deadline = time.monotonic() + wait if deadline is None else deadline
    options = ["-T", "-a", "-x", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={max(1, int(wait))}",
               "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=2"]
    ssh = ssh_command(env)
    if (folder := control_dir(env)) is not None:
        socket = control_socket(folder, ssh, host.name)
        if os.path.exists(socket) or not _own_control(env, host, deadline):
            options += ["-o", "ControlMaster=auto", "-o", f"ControlPath={socket.replace('%', '%%')}",
                        "-o", f"ControlPersist={CONTROL_PERSIST}"]
    return [*ssh, *options, *host.destination(), remote_command]


class Reply:
    """What a call to a host gave: its exit code (None: it did not answer in time), its output
    and the last lines of its messages."""

    def __init__(self, code: int | None, out: bytes, err: str) -> None:
        self.code = code
        self.out = out
        self.err = err


OUTPUT_CAP = 64 * 1024 * 1024  # a host that sends more than this is not listed


def end_group(pid: int, group: bool) -> None:
    """SIGKILL to the process `pid` and, when it leads a session of its own (`group`), to
    every process in its group: a child of ssh's (a ProxyCommand, a stand-in's `sleep`) that
    holds on goes too. ssh's shared connection daemonizes into a session of its own: it stays."""
    from _signal import SIGKILL  # type: ignore[import-not-found]

    try:
        if group:
            os.killpg(pid, SIGKILL)
        else:
            os.kill(pid, SIGKILL)
    except OSError:  # (gone already; not reaped, so the id is still ours)
        pass


def _exit_code(pid: int, deadline: float) -> int | None:
    """The exit code of our child `pid` once it has exited, or None if it has not by `deadline`
    (monotonic): a host end that closed its output need not have exited. Waited on by its
    pidfd where the kernel has them, else by short naps."""
    import time

    pidfd = -1
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = -1
        poller = None
        if pidfd >= 0:
            import select

            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if poller is not None:
                poller.poll(left * 1000)
            else:
                time.sleep(min(0.02, left))
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
    finally:
        if pidfd >= 0:
            os.close(pidfd)


class Call:
    """`remote_command` on the host, started: `stdin` fed to it, for at most `wait` seconds from
    now, however the other end behaves (at the bound ssh is killed, with its process group when
    it has one of its own, even when it closed its output and lives on; the `ssh -G` question
    before it counts too); `reply()` waits for it. Detached from the terminal (a session of its own) unless
    `detach` is False: a content keystroke's calls stay in its process group, so that fzf,
    killing the keystroke's feed when the next key comes, kills them too (BatchMode already
    keeps ssh from asking anything). ssh is started by `os.posix_spawnp`, not `subprocess`
    (which loads signal, selectors, locale and with them re and enum: on a refresh's path to
    the host, before a word is sent); its pipes are read with `select.poll`."""

    def __init__(self, env: Env, host: Host, remote_command: str, stdin: bytes, wait: float,
                 detach: bool = True) -> None:
        import time

        self.wait = wait
        self.deadline = time.monotonic() + wait
        self.detach = detach
        self.stdin = stdin
        self.failed: Reply | None = None
        self.pid = 0
        self.fds: list[int] = []
        argv = background_argv(env, host, remote_command, wait, self.deadline)
        pipes = [os.pipe() for _ in range(3)]  # not inherited (PEP 446): only the dup2'd ends reach ssh
        child = [pipes[0][0], pipes[1][1], pipes[2][1]]
        try:
            from _signal import SIGPIPE, SIGXFSZ  # defaults in ssh, as subprocess

            self.pid = os.posix_spawnp(argv[0], argv, os.environ, setsid=detach, setsigdef=(SIGPIPE, SIGXFSZ),
                                       file_actions=[(os.POSIX_SPAWN_DUP2, fd, i) for i, fd in enumerate(child)])
        except (OSError, NotImplementedError) as exc:  # (no setsid in this libc's posix_spawn)
            self.failed = Reply(255, b"", f"cannot run {argv[0]}: {getattr(exc, 'strerror', None) or exc}")
        finally:
            for fd in child:
                os.close(fd)
        self.fds = [pipes[0][1], pipes[1][0], pipes[2][0]]
        if self.failed is not None:
            self._close()
            return
        if len(stdin) <= 16384:  # within a pipe's buffer: written now, never blocks
            self._write_stdin()

    def _write_stdin(self) -> None:
        fd = self.fds[0]
        try:
            while self.stdin:
                self.stdin = self.stdin[os.write(fd, self.stdin):]
        except OSError:  # ssh gone already: its exit code says why
            self.stdin = b""
        if not self.stdin:
            os.close(fd)
            self.fds[0] = -1

    def _close(self) -> None:
        for fd in self.fds:
            if fd >= 0:
                os.close(fd)
        self.fds = [-1, -1, -1]

    def _timed_out(self) -> Reply:
        end_group(self.pid, self.detach)
        os.waitpid(self.pid, 0)
        return Reply(None, b"", "")

    def reply(self) -> Reply:
        import select
        import time

        if self.failed is not None:
            return self.failed
        stdin_fd, out_fd, err_fd = self.fds
        if stdin_fd >= 0:
            os.set_blocking(stdin_fd, False)
        chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
        sizes = {out_fd: 0, err_fd: 0}
        poller = select.poll()
        for fd in (out_fd, err_fd):
            poller.register(fd, select.POLLIN)
        if stdin_fd >= 0:
            poller.register(stdin_fd, select.POLLOUT)
        open_fds = {out_fd, err_fd}
        try:
            while open_fds:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    return self._timed_out()
                for fd, _ in poller.poll(left * 1000):
                    if fd == self.fds[0]:
                        try:
                            self.stdin = self.stdin[os.write(fd, self.stdin[:65536]):]
                        except BlockingIOError:
                            continue
                        except OSError:
                            self.stdin = b""
                        if not self.stdin:
                            poller.unregister(fd)
                            os.close(fd)
                            self.fds[0] = -1
                        continue
                    data = os.read(fd, 1 << 20)
                    if not data:
                        poller.unregister(fd)
                        open_fds.discard(fd)
                    elif sizes[fd] <= OUTPUT_CAP:  # past the cap: read on (ssh must not block), kept no more
                        chunks[fd].append(data)
                        sizes[fd] += len(data)
            code = _exit_code(self.pid, self.deadline)
            if code is None:  # its output closed, ssh (or what stands in for it) lives on
                return self._timed_out()
        finally:
            self._close()
        if sizes[out_fd] > OUTPUT_CAP:
            return Reply(255, b"", f"sent more than {OUTPUT_CAP >> 20} MiB")
        err = b"".join(chunks[err_fd])
        return Reply(code, b"".join(chunks[out_fd]), err[-4096:].decode("utf-8", "replace"))


def call(env: Env, host: Host, remote_command: str, stdin: bytes, wait: float, detach: bool = True) -> Reply:
    """Run `remote_command` on the host, `stdin` fed to it, for at most `wait` seconds (see Call)."""
    return Call(env, host, remote_command, stdin, wait, detach).reply()


def failure(host: Host, reply: Reply, wait: float) -> str | None:
    """Why a call failed, as a note naming the host; None when ssh itself did its part."""
    if reply.code is None:
        return f"{host.name} did not answer within {wait:g} s"
    if reply.code != 255:
        return None
    err = reply.err
    if "Permission denied" in err or "Too many authentication failures" in err:
        return f"{host.name} skipped: it asks for a password or a key ssh does not have, and BatchMode is on"
    if "Host key verification failed" in err or "IDENTIFICATION HAS CHANGED" in err:
        return (f"{host.name} skipped: its host key is not known or has changed: connect with ssh yourself "
                "to check it")
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("Warning: Permanently")]
    return f"{host.name} did not answer: {clean(lines[-1] if lines else 'ssh failed', 160)}"
