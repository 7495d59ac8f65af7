"""What the age column says, the date filters say (issue 29, point 2): a row whose age reads `1d`
is in `list --since 1d`, the picker's `since:1d` and `search --since 1d`, at the day's bounds."""

from __future__ import annotations

import json
import time

from homes import ClaudeSession

from tests.conftest import run_cli

HOURS = (23, 25, 47, 49)


def test_a_row_is_in_the_since_of_its_own_age(home):
    from sessidx.querywords import parse
    from sessidx.render import age

    now = time.time()
    for hours in HOURS:
        ClaudeSession(cwd="/w", prompt=f"kafka work {hours} hours ago", mtime=now - hours * 3600 - 30).write(home)
    env = {"SESSIDX_HOME": str(home)}

    def hours_in(*argv: str) -> list[int]:
        done = run_cli(*argv, "--json", env=env)
        return sorted(int(json.loads(line)["title"].split()[2]) for line in done.stdout.splitlines())

    every = {json.loads(line)["title"]: json.loads(line) for line in run_cli("list", "--json", env=env).stdout.splitlines()}
    ages = {int(title.split()[2]): age(row["mtime"]) for title, row in every.items()}
    assert ages == {23: "23h", 25: "1d", 47: "1d", 49: "2d"}
    expected = {"23h": [23], "1d": [23, 25, 47], "2d": [23, 25, 47, 49], "24h": [23], "0d": [23]}
    for since, wanted in expected.items():
        assert hours_in("list", "--since", since) == wanted, since
        assert hours_in("search", "kafka", "--since", since) == wanted, since
        picker_since = parse(f"since:{since}").since_ms
        assert picker_since is not None
        assert sorted(h for h, row in ((int(t.split()[2]), r) for t, r in every.items())
                      if row["mtime"] >= picker_since) == wanted, since
    assert hours_in("list", "--until", "1d") == [25, 47, 49]  # reading 1d or more
    assert hours_in("list", "--since", "1d", "--until", "1d") == [25, 47]  # reading exactly 1d


def test_an_empty_answer_names_the_filter(home):
    ClaudeSession(cwd="/w", prompt="kafka work", mtime=time.time() - 5 * 86400).write(home)
    env = {"SESSIDX_HOME": str(home)}
    done = run_cli("list", "--since", "1d", env=env)
    assert done.returncode != 0 and done.stderr.strip() == "sessidx: no session used in the last 1d"
    # two days that hold no session, whatever today is: the session is five days old
    since, until = (time.strftime("%Y-%m-%d", time.localtime(time.time() - days * 86400)) for days in (3, 2))
    done = run_cli("list", "--app", "claude", "--since", since, "--until", until, env=env)
    assert f"no claude session used since {since} and until {until}" in done.stderr
