"""Stub agent CLIs: they print a --help naming the flags the real one takes, and record a run."""

from __future__ import annotations

from pathlib import Path

HELP = {
    "claude": "Usage: claude [options]\n  -r, --resume [value]\n  --model <model>\n  --effort <level>\n"
              "  --permission-mode <mode>  (choices: acceptEdits, auto, bypassPermissions, default, dontAsk, manual, plan)\n",
    "claude-1.0": "Usage: claude [options]\n  -r, --resume [value]\n  --model <model>\n  --permission-mode <mode>\n",
    "codex": "Usage: codex resume [OPTIONS] [SESSION_ID]\n  -m, --model <MODEL>\n  -c, --config <key=value>\n"
             "  -a, --ask-for-approval <APPROVAL_POLICY>\n      Possible values:\n      - on-request\n      - never\n"
             "  -s, --sandbox <SANDBOX_MODE>\n      [possible values: read-only, workspace-write, danger-full-access]\n"
             "  -C, --cd <DIR>\n",
    "qwen": "Usage: qwen [options]\n  -r, --resume <id>\n  -m, --model <model>\n  --approval-mode <mode>\n",
    "gemini": "Usage: gemini [options]\n  -r, --resume <id>\n  -m, --model <model>\n",
    "opencode": "Usage: opencode [project]\n  -s, --session <id>\n  -m, --model <provider/model>\n",
    "copilot": "Usage: copilot [options]\n  --resume [sessionId]\n  --model <model>\n  --mode <mode>\n"
               "  --allow-all\n  --autopilot\n  --yolo\n",
    "cline": "Usage: cline [options] [prompt]\n  --id <id>\n  -p, --plan\n  -m, --model <model>\n",
    "droid": "Usage: droid [options]\n  -r, --resume [id]\n  --auto <level>\n",
}


VERSIONS = {"claude": "2.1.332 (Claude Code)", "claude-1.0": "1.0.128 (Claude Code)", "codex": "codex-cli 0.171.0"}


def write_stub(folder: Path, program: str, help_key: str | None = None, version: str | None = None) -> Path:
    """`folder/program`: `--help` prints HELP (and, like `codex resume --help`, writes a file into
    $CODEX_HOME or ~/.codex), `--version` prints a version; any other call writes program.argv
    and program.cwd."""
    help_text = HELP.get(help_key or program, "")
    version = version or VERSIONS.get(help_key or program, "1.0.0")
    record = folder / program
    script = folder / program
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --help) mkdir -p "${CODEX_HOME:-$HOME/.codex}/tmp/arg0"; cat <<\'HELP\'\n'
        f"{help_text}HELP\n"
        "exit 0;;\n"
        f"  --version) echo '{version}'; exit 0;; esac; done\n"
        f"pwd > '{record}.cwd'\n"
        # whole or not at all: a test reads the argv as soon as the file is there
        f": > '{record}.argv.part'\n"
        f'for a in "$@"; do printf \'%s\\0\' "$a" >> \'{record}.argv.part\'; done\n'
        f"mv -f '{record}.argv.part' '{record}.argv'\n"
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
