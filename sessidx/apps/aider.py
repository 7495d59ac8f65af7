"""Aider (`aider`): no session ids and no store of its own sessions. Each run appends to
`<git root>/.aider.chat.history.md` (`--chat-history-file`; the cwd outside git) a block
`# aider chat started at <YYYY-MM-DD HH:MM:SS>`, then its announcements as `> ` lines
(`> Main model: M with …`), prompts as `#### ` lines, replies as plain text (aider 0.86.2's
`io.py` and `base_coder.py`, read in the PyPI package).

So Aider has no list to read: one row per history file found in a folder that another app's
session was listed in, or in one of its parents (see `reads_known_folders`). What that can
find: the projects you also used another agent in, with the default file name. What it cannot:
a project used with Aider alone, or a history file moved with `--chat-history-file`.

The row's id is made from the file's folder (Aider has none); its title is the first prompt of
the newest block, its model that block's announcement. Resume: `cd <folder> && aider
--restore-chat-history [--model M]`, which loads the whole file's history, not one chat.
`--yes-always` is a flag of one launch (it shows only in the block's logged command line, a
`> ` line); nothing loose comes back, and 0.86.2 answers it "no" to a shell command anyway.

Checked live against aider-chat 0.86.2 (`make conformance`); fixtures/realdata/
aider-chat-history.md was written by it (`> ` and `#### ` lines end in two spaces).
"""

from __future__ import annotations

import os

from sessidx.apps.base import AppPlan, ArgvBuilder, Source
from sessidx.model import Session
from sessidx.readers import open_regular, stamp

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env

HISTORY = ".aider.chat.history.md"
STARTED = "# aider chat started at "
TAIL = 512 * 1024  # the newest block's title and model, for the list
READ_CAP = 16 * 1024 * 1024  # the conversation: the newest 16 MiB of a history file


def history_id(folder: str) -> str:
    import hashlib

    return hashlib.sha1(folder.encode("utf-8", "surrogateescape"), usedforsecurity=False).hexdigest()[:16]


def _tail(path: str, size: int) -> str:
    f = open_regular(path)
    if f is None:
        return ""
    with f:
        end = os.fstat(f.fileno()).st_size
        f.seek(max(0, end - size))
        data = f.read(size)
    if end > size:  # the first line is cut
        data = data.partition(b"\n")[2]
    return data.decode("utf-8", "replace")


def parse_history(text: str) -> list[tuple[str, str]]:
    """(role, text) of each prompt and reply in a history file's text, in order."""
    said: list[tuple[str, str]] = []
    role = ""  # the message being read, and its lines
    lines: list[str] = []

    def flush() -> None:
        body = "\n".join(lines).strip()
        if role and body:
            said.append((role, body))

    for line in text.splitlines():
        kind = "user" if line.startswith("#### ") else "status" if line.startswith(("> ", STARTED)) or line == ">" \
            else "assistant" if line.strip() else ""
        if kind == "":
            if role == "assistant":
                lines.append("")
            continue
        if kind != role:
            flush()
            role, lines = kind, []
        lines.append(line[5:].rstrip() if kind == "user" else line)
    flush()
    return [(r, t) for r, t in said if r != "status"]


def _model(block: str) -> str | None:
    for line in block.splitlines():
        for prefix in ("> Main model: ", "> Model: "):
            if line.startswith(prefix):
                return line[len(prefix):].split(" with ", 1)[0].strip() or None
    return None


def load_history(path: str) -> list[Session]:
    st = os.stat(path)
    block = _tail(path, TAIL)
    block = block[block.rfind(STARTED):] if STARTED in block else block
    first = next((" ".join(t.split()) for role, t in parse_history(block) if role == "user"), None)
    folder = os.path.dirname(path)
    return [Session(app="aider", id=history_id(folder), cwd=folder, title=first, mtime=st.st_mtime_ns // 1_000_000,
                    bytes=st.st_size, model=_model(block), path=path)]


def _with_parents(folders: frozenset[str], home: str) -> set[str]:
    out: set[str] = set()
    for folder in folders:
        here = folder
        while here not in out and os.path.isabs(here):
            out.add(here)
            parent = os.path.dirname(here)
            if parent == here or here == home:
                break
            here = parent
    return out


class Aider:
    name = "aider"
    program = "aider"
    proven_on = "0.86.2"  # the CLI version the plans were proven on (make conformance)
    help_args: tuple[str, ...] = ("--help",)
    home_vars: tuple[str, ...] = ()
    home_dirs: tuple[str, ...] = ()
    id_pattern = r"[0-9a-f]{16}"
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)
    reads_known_folders = True

    def sources(self, env: Env, known_folders: frozenset[str] = frozenset()) -> Iterator[Source]:
        for folder in sorted(_with_parents(known_folders, env.home)):
            path = os.path.join(folder, HISTORY)
            st = stamp(path)
            if st is not None:
                yield Source(path, st, load_history, path)

    def conversation(self, session: Session) -> list[tuple[str, str]]:
        return parse_history(_tail(session.path or "", READ_CAP))

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, "--restore-chat-history")
        b.option("--model", session.model)
        b.plan.warnings.append("aider restores the whole history file of this folder, not one chat of it")
        return b.plan


APP = Aider()
