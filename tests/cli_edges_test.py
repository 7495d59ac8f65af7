"""The command line's edges (issue 29, point 10): each command's own usage on its own errors,
a host that does not answer is an error, the top-level help names the key binding."""

from __future__ import annotations

from tests.conftest import run_cli


def test_an_option_a_command_does_not_take_shows_that_commands_usage():
    for command in ("list", "search", "resume", "init"):
        done = run_cli(command, "--bogus")
        assert done.returncode == 2
        assert f"usage: sessidx {command} " in done.stderr and f"sessidx {command}: error: " in done.stderr, done.stderr
        assert "COMMAND ..." not in done.stderr  # not the top level's usage


def test_the_top_level_help_names_init_and_the_key():
    done = run_cli("--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert 'eval "$(sessidx init bash)"' in text and "sessidx init fish | source" in text and "Ctrl-O" in text


def test_a_host_that_does_not_answer_is_an_error(home, tmp_path):
    ssh = tmp_path / "ssh"
    ssh.write_text("#!/bin/sh\necho 'ssh: Could not resolve hostname no-such-host: Name or service not known' >&2\n"
                   "exit 255\n")
    ssh.chmod(0o755)
    done = run_cli("list", "--host", "no-such-host", env={"SESSIDX_SSH": str(ssh)})
    assert done.returncode == 1, done
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "no-such-host" in lines[0] and "Traceback" not in done.stderr


def test_an_app_word_that_starts_no_app_says_so_in_both_modes(home):
    from homes import ClaudeSession

    ClaudeSession(cwd="/w", prompt="kettle work").write(home)
    for args, prompt in ((["lines"], "session> "), (["lines", "--content", "app:zzz kettle"], "content> ")):
        done = run_cli(*args, env={"FZF_QUERY": "app:zzz kettle", "FZF_PROMPT": prompt})
        head = done.stdout.splitlines()[0]
        assert "(no app's name starts with zzz)" in head and len(done.stdout.splitlines()) == 1, done.stdout
