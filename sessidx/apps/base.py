"""The contract between the core and one agent app, and the helpers adapters share."""

from __future__ import annotations

import os

from sessidx.model import Fields
from sessidx.readers import files, is_wrapper, json_value, read_small_json, stamp
from sessidx.tool_output import gist

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, Protocol

    from sessidx.config import Env
    from sessidx.model import Session

    class CliHelp(Protocol):
        """What the installed CLI accepts, learnt from its `--help`, and its version."""

        found: bool  # on PATH
        known: bool  # its help could be read
        pending: bool  # its help is still being read (the preview does not wait)
        version: str | None

        def said(self) -> str: ...

        def has(self, flag: str) -> bool: ...

        def accepts(self, flag: str, value: str) -> bool: ...

        def version_at_least(self, *wanted: int) -> bool | None: ...


    class App(Protocol):
        # the name shown in lists and taken by --app
        name: str
        # the CLI's program name, looked up on PATH for its --help
        program: str
        # the arguments that make it print the help of its resume command
        help_args: tuple[str, ...]
        # the environment variables that move its data (its own overrides, XDG_*), and its
        # default folders under the home: the cache key, the README and the tests' guard of
        # the real homes derive from these
        home_vars: tuple[str, ...]
        home_dirs: tuple[str, ...]
        # a regex the whole session id must match (re.fullmatch), as the app writes its ids: a
        # session whose id does not fit is skipped by the core (an id could otherwise reach the
        # resume command as an option); UUID below is the usual one
        id_pattern: str

        # every cacheable unit of this app's data, cheap to enumerate (stat, not read)
        def sources(self, env: Env) -> Iterable[Source]: ...

        # Optional: an app that keeps no list of its own sessions' folders (Aider writes a history
        # file into the project; Cursor names a folder only by its md5) sets
        # `reads_known_folders = True`; the index then calls `sources(env, folders)` after every
        # other app, with every folder any session is listed in.

        # the resume command for one session, run in its folder; `allow_permissive` is the
        # person's opt-in for this one launch to a mode looser than the CLI's default
        def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan: ...

        # Optional: `refusal_fields`, the Session fields whose values alone decide whether
        # `plan` refuses, and why, with a CLI that was not probed (what every listing marks:
        # refusals.refusals). A listing then makes one plan per distinct value of them, not one
        # per session (55,000 plans were half a warm `list`). Unset: one plan per session.
        # tests/refusals_test.py varies every other field and checks the refusal stays the same.
        # refusal_fields: tuple[str, ...]  (() for a plan whose refusal rests on the CLI alone)

        # What was said, for the content index and the conversation preview; one of the two:
        # - apps whose `session.path` is a JSONL transcript: the messages in one record, as
        #   (role, text), role "user" or "assistant"; `said_markers` are byte strings one of
        #   which a line must hold to be parsed at all (the rest is skipped unread);
        # - other apps: the whole conversation of one session.
        # said(self, record: dict[str, Any]) -> list[tuple[str, str]]
        # said_markers: tuple[bytes, ...]  (json_markers makes them)
        # said_skip: tuple[bytes, ...]  (optional: a long line showing one is a tool's output, skipped unparsed)
        # conversation(self, session: Session) -> list[tuple[str, str]]

        # Optional, for `sessidx doctor` (what the installed CLI and its data look like now):
        # proven_on: str  - the CLI version the plans were proven on (`make conformance`'s pin)
        # unknown_records(self, session: Session) -> dict[str, int]
        #     the record types (or format versions) in one session's data this adapter does not
        #     know, counted; cheap (a bounded read: `unknown_record_types` below). Without it the
        #     app's data is "not checked".

Stamp = tuple[int | str | None, ...]

# The id form most CLIs use (crypto.randomUUID, uuid4/uuid7), any case, any version bits.
UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


class Source(Fields):
    """One unit the cache keys on: a transcript file, or a whole store such as a database."""

    __slots__ = ("key", "stamp", "load", "args")

    def __init__(self, key: str, stamp: Stamp, load: Callable[..., list[Session]], *args: Any) -> None:
        self.key = key  # unique across apps: a file's path (the row's `path` too, stored once), or app:store
        self.stamp = stamp  # changes whenever what `load` would return may change (sizes, mtimes)
        self.load = load  # `load(*args)` reads it; raises SourceError when it cannot
        self.args = args  # (not functools.partial: importing functools costs a key press time)

    def read(self) -> list[Session]:
        return self.load(*self.args)


class SourceError(Exception):
    """This source cannot be read; the message says why. Other sources go on."""


class SourceBusy(SourceError):
    """This source cannot be read consistently right now (a writer at work): the index lists
    the rows of its last good read, and reads it again next time. `fallback`: what to list
    when there was no earlier read (the app's own files, read without the store)."""

    def __init__(self, message: str, fallback: list[Session] | None = None) -> None:
        super().__init__(message)
        self.fallback = fallback or []


_REPORTED: list[str] = []


def report(problem: str) -> None:
    """A source was read, but not as well as it should have been (a stale copy, a fallback):
    the index keeps this with the source's entry, and `build -v` shows it."""
    _REPORTED.append(problem)


def read_table(db: str, table: str, columns: list[str], strict: bool = False) -> list[dict[str, object]]:
    """Rows of one table of an app's SQLite store, read from a consistent private copy (see
    sqlite_snapshot); missing columns are None. Raises SourceError when it cannot be read.
    strict: any damage is an error (for apps whose plain files can be read instead)."""
    return read_tables(db, {table: columns}, strict)[table]


def read_tables(db: str, tables: dict[str, list[str]], strict: bool = False) -> dict[str, list[dict[str, object]]]:
    """`read_table` for several tables of one store, from one snapshot."""
    from sessidx.sqlite_snapshot import StoreBusy, StoreError, select_present, snapshot

    notes: list[str] = []
    try:
        with snapshot(db, notes, strict=strict) as conn:
            return {table: list(select_present(conn, table, columns)) for table, columns in tables.items()}
    except StoreBusy as exc:
        raise SourceBusy(str(exc)) from None
    except StoreError as exc:
        raise SourceError(str(exc)) from None
    except Exception as exc:  # whatever else a damaged store raises: this store is unreadable, the rest go on
        raise SourceError(f"{db}: damaged ({type(exc).__name__}: {exc})") from None
    finally:
        for note in notes:
            report(note)


def take_reports() -> list[str]:
    taken = _REPORTED[:]
    _REPORTED.clear()
    return taken


def unknown_record_types(path: str | None, known: frozenset[str], field: str = "type",
                         cap: int = 8 << 20) -> dict[str, int]:
    """For `unknown_records`: the values of `field` in a JSONL file's records that are not in
    `known`, counted (a record without it as `(none)`), over its first `cap` bytes. A line that
    is not a JSON object is not counted: reading skips those already."""
    import json

    found: dict[str, int] = {}
    if not path:
        return found
    try:
        with open(path, "rb") as f:
            data = f.read(cap)
    except OSError:
        return found
    for line in data.splitlines()[:-1] if len(data) == cap else data.splitlines():  # (a cut last line: unread)
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and (kind := record.get(field)) not in known:
            name = kind if isinstance(kind, str) else "(none)"
            found[name] = found.get(name, 0) + 1
    return found


class HeldBack(Fields):
    __slots__ = ("flag", "reason")

    def __init__(self, flag: str, reason: str) -> None:
        self.flag = flag  # what was not carried, as the CLI would take it (`--permission-mode acceptEdits`)
        self.reason = reason


class AppPlan:
    """What an adapter decides: the command line and what it left out."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.held_back: list[HeldBack] = []
        self.warnings: list[str] = []
        self.refusal: str | None = None  # set when this session must not be resumed as it is
        self.refusal_kind: str | None = None  # which kind of refusal: a key of refusals.MARKS


class ArgvBuilder:
    """Builds a resume argv, passing only the flags the installed CLI accepts."""

    def __init__(self, cli: CliHelp, *fixed: str) -> None:
        self.cli = cli
        self.plan = AppPlan(argv=list(fixed))
        # The resume flag itself must be in the help: a CLI that lost it (kimi-cli 1.52.0 is a
        # stub printing "no longer maintained" for every command) would resume nothing.
        missing = [flag for word in fixed[1:] if (flag := word.split("=")[0]).startswith("-")
                   and cli.found and cli.known and not cli.has(flag)]
        if missing:
            self.refuse(f"the installed {fixed[0]} cannot resume: its help has no {missing[0]}. It says: {cli.said()}",
                        "cannot_resume")

    def option(self, flag: str, value: str | None) -> None:
        """Add `flag value` if there is a value and the CLI knows the flag."""
        if value is None:
            return
        if not self.cli.has(flag):
            self.plan.warnings.append(f"{self._not_known(flag)}: {value} not carried")
            return
        self.plan.argv += [flag, value]

    def switch(self, flag: str) -> None:
        """Add a bare flag if the CLI knows it."""
        if self.cli.has(flag):
            self.plan.argv.append(flag)
        else:
            self.plan.warnings.append(f"{self._not_known(flag)}: not passed")

    def safety(self, *words: str) -> None:
        """Add what keeps the session safe, known to the CLI's help or not: a CLI that rejects
        it runs nothing, which is safe; leaving it out could run in a loose mode."""
        self.plan.argv += words

    def _not_known(self, flag: str) -> str:
        program = self.plan.argv[0]
        if self.cli.pending:
            return f"the installed {program}'s --help is still being read (Enter waits for it), so {flag} is left out"
        if not self.cli.known:
            return f"the installed {program}'s flags are unknown (its --help failed), so {flag} is left out"
        return f"the installed {program} has no {flag}"

    def hold_back(self, flag: str, value: str, reason: str) -> None:
        self.plan.held_back.append(HeldBack(f"{flag} {value}".strip(), reason))

    def refuse(self, reason: str, kind: str) -> None:
        """`kind`: a key of refusals.MARKS (`loose_mode`), whose mark every listing shows."""
        if self.plan.refusal is None:
            self.plan.refusal, self.plan.refusal_kind = reason, kind


def loose_reason(program: str, default: str, version: str | None) -> str:
    """Why a recorded mode is held back: the installed CLI's own default, named with its version."""
    installed = f"{program} {version}" if version else f"the installed {program}"
    return (f"looser than {installed}'s default ({default}); pass --allow-permissive (Alt-Enter) "
            "to carry it for this launch")


def carry_or_override(b: ArgvBuilder, recorded: str | None, strict: set[str], allow_permissive: bool,
                      flag: str, override: str, default: str) -> None:
    """The one rule for a mode the CLI restores by itself on resume: carry it when it is at
    least as strict as the CLI's default (or the person opted in for this launch); otherwise
    hold it back by passing `override` explicitly, so the restored loose mode is never in force."""
    if recorded is not None and (recorded in strict or allow_permissive):
        if recorded in strict:
            b.option(flag, recorded)
        else:
            b.safety(flag, recorded)
        return
    if recorded is not None:
        b.hold_back(flag, recorded, loose_reason(b.plan.argv[0], default, b.cli.version))
    b.safety(flag, override)


def json_markers(key: str, *values: str) -> tuple[bytes, ...]:
    """`said_markers` for records whose `key` is one of `values`, as the CLIs write them: with
    and without a space after the colon."""
    return tuple(f'"{key}":{space}"{value}"'.encode() for value in values for space in ("", " "))


DOCUMENT_CAP = 64 * 1024 * 1024  # a session document read whole for its conversation
TOOL_TEXT_CAP = 4096  # a tool call's argument longer than this is not what people search for
_TOOL_WORDS = ("command", "cmd", "file_path", "path", "pattern", "query", "url", "description")


def message_texts(content: Any) -> list[str]:
    """The searchable text of one message's content, in the shapes the CLIs share: a string, or
    parts with `text`; of a tool call the short words a person remembers (its command, file
    path, pattern); of a tool's result its gist (tool_output: errors, first and last lines).
    Never images or other payloads."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return []
    out: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if isinstance(part.get("text"), str) and kind not in ("thinking", "reasoning"):
            out.append(gist(part["text"]) if kind == "tool_result" else part["text"])
        elif kind == "tool_result" and isinstance(part.get("run"), dict):  # Amp: {run: {status, result}}
            out += [t for key in ("result", "error") for _, t in output_said(part["run"].get(key))]
        elif kind == "tool_result":
            out += [gist(t) for t in message_texts(part.get("content"))]
        elif kind == "toolResponse" and isinstance(part.get("toolResult"), dict):  # Goose: {status, value}
            out += [t for key in ("value", "error") for _, t in output_said(part["toolResult"].get(key))]
        elif isinstance(part.get("input"), dict):
            out += tool_words(part["input"])
    return out


_ROLES = {"user": "user", "assistant": "assistant", "model": "assistant", "gemini": "assistant", "tool": "tool",
          "toolResult": "tool"}


def said_in(role: Any, content: Any) -> list[tuple[str, str]]:
    """(role, text) for one message, role "user" or "assistant" (a model's own name for itself
    mapped); a user message made only of tool results is "tool". What a CLI wrapped around or
    put in place of a prompt (`<environment_context>`, `<command-name>`) is left out."""
    mapped = _ROLES.get(role) if isinstance(role, str) else None
    if mapped is None:
        return []
    if mapped == "tool":  # a tool's output as a message of its own (the OpenAI shape)
        return output_said(content)
    if mapped == "user" and isinstance(content, list) and content and all(
            isinstance(p, dict) and p.get("type") in ("tool_result", "toolResponse") for p in content):
        mapped = "tool"
    return [(mapped, t) for t in message_texts(content) if t.strip() and not (mapped == "user" and is_wrapper(t))]


def tool_words(arguments: Any) -> list[str]:
    """A tool call's command, path, pattern or URL (each short): what it did, in searchable words."""
    if isinstance(arguments, str):
        arguments = json_value(arguments)
    if not isinstance(arguments, dict):
        return []
    words = []
    for key in _TOOL_WORDS:
        value = arguments.get(key)
        if isinstance(value, list) and all(isinstance(x, str) for x in value):
            value = " ".join(value)  # an argv
        if isinstance(value, str) and 0 < len(value) <= TOOL_TEXT_CAP:
            words.append(value)
    return words


def output_said(output: Any) -> list[tuple[str, str]]:
    """("tool", gist) of a tool's output as the CLIs keep it: a string, parts with text, or an
    object holding those under `output`, `content`, `stdout`, `stderr`, `result` or `error`."""
    if isinstance(output, dict):
        output = [output.get(k) for k in ("output", "content", "stdout", "stderr", "result", "error")]
    if isinstance(output, str):
        output = [output]
    if not isinstance(output, list):
        return []
    texts: list[str] = []
    for part in output:
        texts += [part] if isinstance(part, str) else message_texts(part)
    return [("tool", gist(t)) for t in texts if t.strip()]


def document_messages(path: str | None, key: str) -> list[Any]:
    """The list under `key` of a session's JSON document (capped), or [] when it cannot be read."""
    doc = read_small_json(path, DOCUMENT_CAP) if path else None
    found = doc.get(key) if isinstance(doc, dict) else None
    return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []


_TABLES: dict[tuple[str, str], tuple[Any, dict[Any, list[dict[str, Any]]]]] = {}


def rows_by_session(db: str, table: str, columns: list[str], session_column: str = "session_id",
                    ) -> dict[Any, list[dict[str, Any]]]:
    """One table of a store, grouped by session, read once per process while the store is
    unchanged: the content index asks for every session of one store in turn."""
    key = (db, table)
    st = (stamp(db), stamp(db + "-wal"))
    if key not in _TABLES or _TABLES[key][0] != st:
        grouped: dict[Any, list[dict[str, Any]]] = {}
        for row in read_table(db, table, [session_column, *columns]):
            grouped.setdefault(row[session_column], []).append(row)
        _TABLES[key] = (st, grouped)
    return _TABLES[key][1]


def stamp_or_none(path: str | os.PathLike[str]) -> Stamp:
    """The stamp of an optional companion file (readers.stamp), all None when it is absent."""
    st = stamp(path)
    return st if st is not None else (None, None, None, None)


def source_for_file(path: str, extra: Stamp, load: Callable[..., list[Session]],
                    *args: Any) -> Source | None:
    """A Source for one regular file, or None if it is gone or not a regular file."""
    st = stamp(path)
    if st is None:
        return None
    return Source(path, st + extra, load, *args)


def one(session: Session | None) -> list[Session]:
    return [] if session is None else [session]


def _one_of(parse: Callable[[str], Session | None], path: str) -> list[Session]:
    return one(parse(path))


def file_sources(folder: str, suffix: str, parse: Callable[[str], Session | None],
                 keep: Callable[[str], bool] | None = None) -> Iterable[Source]:
    """A Source for each regular file `folder/*suffix` (whose name `keep` accepts) holding one
    session, read by `parse(path)`: the shape of apps that keep a document per session."""
    for entry in files(folder, suffix):
        if (keep is None or keep(entry.name)) and (source := source_for_file(entry.path, (), _one_of, parse,
                                                                              entry.path)):
            yield source
