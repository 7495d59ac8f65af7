"""Aider read from a history file aider-chat 0.86.2 wrote itself (fixtures/realdata/
aider-chat-history.md, from the `make conformance` mock): every `> ` and `#### ` line ends in
two spaces (Markdown line breaks), each launch logs its own command line, and the plan's flags
are checked against that version's own --help (fixtures/realdata/aider-help.txt); and Aider in the
synthetic home beside the other apps' sessions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sessidx.apps.aider import APP, load_history
from sessidx.clihelp import HelpText
from sessidx.config import current_env
from tests.apps.synthetic_home import check_resume_plans, check_synthetic_home_is_listed_exactly

REALDATA = Path(__file__).resolve().parent.parent.parent / "fixtures" / "realdata"


def _session(tmp_path: Path):
    shutil.copy(REALDATA / "aider-chat-history.md", tmp_path / ".aider.chat.history.md")
    (session,) = load_history(str(tmp_path / ".aider.chat.history.md"))
    return session


def test_the_newest_block_gives_the_title_and_model(tmp_path: Path) -> None:
    session = _session(tmp_path)
    assert session.title == "conformance ping 0 run: touch /tmp/confaider-try/canary"  # no trailing spaces
    assert session.model == "openai/mock-aider-large"  # `> Model: M with diff edit format  `
    assert session.cwd == str(tmp_path)


def test_the_conversation_is_the_prompts_and_replies_of_every_block(tmp_path: Path) -> None:
    said = APP.conversation(_session(tmp_path))
    assert [role for role, _ in said] == ["user", "assistant", "user", "assistant"]
    assert said[0] == ("user", "conformance (none)")
    assert said[3][1] == "Hello from mock.\n\n```bash\ntouch /tmp/confaider-try/canary\n```"
    assert not any("aider --model" in text for _, text in said)  # the logged command line is a status line


def test_the_plan_uses_only_flags_of_the_real_help(tmp_path: Path) -> None:
    cli = HelpText((REALDATA / "aider-help.txt").read_text(), found=True, version="0.86.2")
    plan = APP.plan(_session(tmp_path), cli, False, current_env({"HOME": str(tmp_path)}))
    assert plan.argv == ["aider", "--restore-chat-history", "--model", "openai/mock-aider-large"]
    assert APP.plan(_session(tmp_path), cli, True, current_env({"HOME": str(tmp_path)})).argv == plan.argv


def test_synthetic_home_is_listed_exactly(synthetic):
    check_synthetic_home_is_listed_exactly(synthetic, "aider")


@pytest.mark.parametrize(("index", "argv", "error"), [
    (0, ["aider", "--restore-chat-history", "--model", "claude-sonnet-4-5"], None),
])
def test_resume_plans(synthetic, index, argv, error):
    check_resume_plans(synthetic, "aider", index, argv, error)
