"""Qoder CLI (`qodercli`): `~/.qoder/projects/<escaped cwd>/<session id>.jsonl` (`QODER_CONFIG_DIR`
moves `~/.qoder`), with `<session id>/state.json` beside it.

SYNTHETIC data only: `@qoder-ai/qodercli` 1.1.52 installs from npm, but needs a Qoder account;
`make conformance` drives it offline against a local stand-in (`fixtures/mock_qoder.py`). Its
bundle (read 2026-12-01) is Claude Code's design: the same folder escaping with a base-36 hash
past 200 characters (`aQ()`), the same `custom-title` and `ai-title` records, and
`--permission-mode` with Claude Code's values. Seen on the real 1.1.52 (2026-12-01):
`--permission-mode` takes `default`, `plan`, `auto`, `accept_edits`, `bypass_permissions`,
`dont_ask` and the camelCase names too; the user records hold `permissionMode` `default`,
`acceptEdits`, `dontAsk`, `auto`, and `yolo` for bypass (a `-p` turn started in `plan` records
`default`). So the transcripts are read by Claude Code's reader, and the plan follows Claude
Code's rule: a mode looser than `default` is overridden with `--permission-mode default`, a
strict one is carried. A plain `qodercli --resume ID` of a yolo session opened in Default (by
hand, not a row of the run), so the override changes nothing today; it stays, because a later
Qoder that restores the recorded mode must not bring a loose one back unasked.
"""

from __future__ import annotations

import os

from sessidx.apps.base import AppPlan, ArgvBuilder, Source, carry_or_override, stamp_or_none
from sessidx.apps.claude import STRICT_MODES, Claude, parse_transcript
from sessidx.model import Session
from sessidx.readers import stamped_files, subdirs

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator

    from sessidx.apps.base import CliHelp
    from sessidx.config import Env


def load_transcript(path: str, folder: str) -> list[Session]:
    session = parse_transcript(path, folder, "")
    if session is None:
        return []
    fields = session.to_json()
    fields["app"] = "qoder"
    return [Session(**fields)]


class Qoder(Claude):
    name = "qoder"
    program = "qodercli"
    proven_on = "1.1.52"  # the CLI version the plans were proven on (make conformance)
    home_vars: tuple[str, ...] = ("QODER_CONFIG_DIR",)
    home_dirs: tuple[str, ...] = (".qoder",)
    id_pattern = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    refusal_fields = ()  # its plan refuses on the CLI alone (base.App)

    def projects_dir(self, env: Env) -> str:
        return os.path.join(env.path("QODER_CONFIG_DIR", ".qoder"), "projects")

    def sources(self, env: Env) -> Iterator[Source]:
        for project in subdirs(self.projects_dir(env)):
            transcripts, _ = stamped_files(project.path, ".jsonl", skip_prefix="agent-")
            for name, st in transcripts:
                path = os.path.join(project.path, name)
                state = os.path.join(project.path, name[: -len(".jsonl")], "state.json")
                yield Source(path, st + stamp_or_none(state), load_transcript, path, project.name)

    def plan(self, session: Session, cli: CliHelp, allow_permissive: bool, env: Env) -> AppPlan:
        b = ArgvBuilder(cli, self.program, "--resume", session.id)
        b.option("--model", session.model)
        carry_or_override(b, session.approval, STRICT_MODES, allow_permissive, "--permission-mode", "default",
                          "default")
        return b.plan


APP = Qoder()
