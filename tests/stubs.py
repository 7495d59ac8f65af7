"""Stub agent CLIs: they print a --help naming the flags the real one takes, and record a run."""

from __future__ import annotations

from pathlib import Path

HELP = {
    "claude": "Usage: claude [options]\n  -r, --resume [value]\n  --model <model>\n  --effort <level>\n"
              "  --permission-mode <mode>  (choices: acceptEdits, auto, bypassPermissions, default, dontAsk, plan)\n",
    "claude-1.0": "Usage: claude [options]\n  -r, --resume [value]\n  --model <model>\n  --permission-mode <mode>\n",
    "codex": "Usage: codex resume [OPTIONS] [SESSION_ID]\n  -m, --model <MODEL>\n  -c, --config <key=value>\n"
             "  -a, --ask-for-approval <APPROVAL_POLICY>\n      Possible values:\n      - on-request\n      - never\n"
             "  -s, --sandbox <SANDBOX_MODE>\n      [possible values: read-only, workspace-write, danger-full-access]\n"
             "  -C, --cd <DIR>\n",
}


def write_stub(folder: Path, program: str, help_key: str | None = None) -> Path:
    """`folder/program`: `--help` prints HELP; any other call writes program.argv and program.cwd."""
    help_text = HELP.get(help_key or program, "")
    record = folder / program
    script = folder / program
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --help) cat <<\'HELP\'\n'
        f"{help_text}HELP\n"
        "exit 0;; esac; done\n"
        f"pwd > '{record}.cwd'\n"
        f": > '{record}.argv'\n"
        f'for a in "$@"; do printf \'%s\\0\' "$a" >> \'{record}.argv\'; done\n'
        f"echo 'stub {program} ran'\n"
    )
    script.chmod(0o755)
    return script


def recorded(folder: Path, program: str) -> tuple[list[str], str] | None:
    argv_file, cwd_file = folder / f"{program}.argv", folder / f"{program}.cwd"
    if not argv_file.exists():
        return None
    argv = argv_file.read_bytes().split(b"\0")[:-1]
    return [a.decode("utf-8", "surrogateescape") for a in argv], cwd_file.read_bytes().decode(
        "utf-8", "surrogateescape").rstrip("\n")
