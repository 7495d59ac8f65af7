"""`sessidx mcp` (issue 31): the SDK's own client over stdio against the server, on homes the
real CLIs wrote (fixtures/realdata), and the SDK loaded by that command alone."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from homes import ClaudeSession
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from sessidx.agent_api import MESSAGE_CAP, SHOW_CAP
from sessidx.mcp_server import RESULT_CAP
from tests.apps.realhome_documents import home_of
from tests.startup_test import PROBE, loaded_by, press_key
from tests.stubs import recorded, write_stub

SECRET = "ghp_" + "Zq8XvN2kLmR4tY7wB1cD9eF3gH5jK6pQ0sUa"  # a GitHub token's shape
PLANTED = "the zebra quasar deploy key"  # said once, beside the secret
SDK = ("mcp", "mcp_types", "pydantic", "pydantic_core", "anyio", "starlette", "httpx", "httpx2", "jsonschema",
       "uvicorn", "sse_starlette", "opentelemetry")


def sdk_modules(loaded: set[str]) -> set[str]:
    return {m for m in loaded if m.split(".")[0] in SDK}


def real_home(realdata, tmp_path: Path, apps: tuple[str, ...] = ("claude", "codex", "gemini")) -> Path:
    """One home holding the real homes of `apps` (Codex's rollout paths pointed at it)."""
    home = tmp_path / "real"
    for app in apps:
        shutil.copytree(home_of(app, realdata, tmp_path), home, symlinks=True, dirs_exist_ok=True)
    if "codex" in apps:
        with sqlite3.connect(home / ".codex/state_5.sqlite") as conn:
            conn.execute("UPDATE threads SET rollout_path = replace(rollout_path, '/home/alex', ?)", (str(home),))
    return home


def plant_in_claude(home: Path, text: str) -> str:
    """`text` as a new user prompt at the end of a real Claude transcript; its session's key."""
    path = sorted((home / ".claude/projects").glob("*/*.jsonl"))[0]
    lines = path.read_text().splitlines()
    record = next(json.loads(line) for line in reversed(lines) if json.loads(line).get("type") == "user"
                  and isinstance(json.loads(line)["message"].get("content"), str))
    record = {**record, "uuid": str(uuid.uuid4()), "message": {"role": "user", "content": text}}
    with path.open("a") as f:
        f.write(json.dumps(record) + "\n")
    return f"claude:{record['sessionId']}"


def server_env(home: Path, tmp_path: Path, path: str | None = None) -> dict[str, str]:
    return {"SESSIDX_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"), "SESSIDX_SHELL": "bash",
            "PATH": path or os.environ["PATH"], "HOME": str(tmp_path)}


Body = Callable[[ClientSession], Awaitable[None]]


def with_server(env: dict[str, str], body: Body) -> None:
    """`body` with a client connected over stdio to `sessidx mcp` started with `env`."""
    async def run() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "sessidx", "mcp"], env=env)
        with (Path(env["XDG_CACHE_HOME"]).parent / "server.err").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                await body(session)

    anyio.run(run)


async def call(session: ClientSession, tool: str, args: dict[str, Any]) -> Any:
    """A call that must succeed: its JSON answer, checked against the bound."""
    result = await session.call_tool(tool, args)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, (tool, args, text)
    assert len(text) <= RESULT_CAP
    return json.loads(text)


async def refused(session: ClientSession, tool: str, args: dict[str, Any]) -> str:
    """A call that must fail: its error, one clear line."""
    result = await session.call_tool(tool, args)
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error, (tool, args, text)
    assert "\n" not in text and len(text) < 400, text
    return text


def test_the_tools_and_their_input_schemas(realdata, tmp_path):
    home = real_home(realdata, tmp_path, ("claude",))

    async def body(session: ClientSession) -> None:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {"search", "list", "show", "plan"}
        for tool in tools.values():
            assert tool.description and tool.annotations and tool.annotations.read_only_hint is True
            assert tool.input_schema["type"] == "object"
        search = tools["search"].input_schema
        assert search["required"] == ["query"]
        assert {"app", "folder", "since", "until", "host", "limit"} <= set(search["properties"])
        assert search["properties"]["limit"]["maximum"] == 50 and search["properties"]["query"]["maxLength"] == 1000
        assert tools["show"].input_schema["required"] == ["id"] and tools["plan"].input_schema["required"] == ["id"]
        assert "archived" in tools["list"].input_schema["properties"]

    with_server(server_env(home, tmp_path), body)


def test_an_agent_finds_a_session_reads_it_and_sees_its_plan(realdata, tmp_path):
    home = real_home(realdata, tmp_path)
    planted = plant_in_claude(home, f"rotate {PLANTED}: GITHUB_TOKEN={SECRET} was pasted in the CI log")
    long_key = plant_in_claude(home, "a very long paste: " + "lorem ipsum dolor " * 20_000)
    listed = [json.loads(line) for line in subprocess.run(
        [sys.executable, "-m", "sessidx", "list", "--json", "--app", "codex"], capture_output=True, text=True,
        env={**os.environ, **server_env(home, tmp_path)}, timeout=60, check=True).stdout.splitlines()]
    answers: list[str] = []

    async def body(session: ClientSession) -> None:
        async def good(tool: str, args: dict[str, Any]) -> Any:
            result = await call(session, tool, args)
            answers.append(json.dumps(result))
            return result

        # the example: which session added the checkout retry, found first
        found = await good("search", {"query": "exponential backoff checkout payment", "app": "codex"})
        assert found["results"][0]["id"] == "codex:01a2294c-8f8c-7983-bfbe-ea19a5074b91"
        assert "backoff" in found["results"][0]["snippet"].lower()
        found = await good("search", {"query": "apostrophe folder name"})
        assert found["results"][0]["id"] == "codex:01a2294c-971f-7913-be87-3b7fabb29ba1"
        # a near answer is marked as one
        near = await good("search", {"query": "quasars", "limit": 3})
        assert near["results"][0]["id"] == planted and "quasar" in near["results"][0].get("near", "")
        # a filtered list: codex in shop-api, newest first, as `sessidx list` has them
        shop = await good("list", {"app": "codex", "folder": "/home/alex/code/shop-api", "limit": 50})
        want = [f"codex:{r['id']}" for r in listed if r["cwd"] == "/home/alex/code/shop-api"]
        assert [r["id"] for r in shop["results"]] == want and len(want) >= 3
        by_name = await good("list", {"app": "codex", "folder": "shop-api", "limit": 50})
        assert by_name["results"] == shop["results"]
        # dates: since a day, and up to the day before, split the list between them
        every = await good("list", {"limit": 200})
        day = sorted(r["last_used"][:10] for r in every["results"])[-1]
        eve = (date.fromisoformat(day) - timedelta(days=1)).isoformat()
        since, before = await good("list", {"since": day, "limit": 200}), await good("list", {"until": eve, "limit": 200})
        assert since["results"] and all(r["last_used"][:10] >= day for r in since["results"])
        assert all(r["last_used"][:10] <= eve for r in before["results"])
        assert since["total"] + before["total"] == every["total"]
        # show: the known prompt, around the match, bounded
        shown = await good("show", {"id": "codex:01a2294c-8f8c", "query": "exponential backoff"})
        assert any("exponential backoff" in m["text"] and m.get("match") for m in shown["messages"])
        assert shown["session"]["branch"] == "fix/checkout-retry"
        last = await good("show", {"id": "codex:01a2294c-8f8c-7983-bfbe-ea19a5074b91", "exchanges": 1})
        assert last["messages"][0]["role"] == "user" and {m["exchange"] for m in last["messages"]} == {
            last["messages"][0]["exchange"]}
        tools = await good("show", {"id": "codex:01a2294c-9921", "exchanges": 20})
        assert any(m["role"] == "tool" and "git status" in m["text"] for m in tools["messages"])
        long = await good("show", {"id": long_key, "exchanges": 20})
        assert all(len(m["text"]) <= MESSAGE_CAP for m in long["messages"])
        assert sum(len(m["text"]) for m in long["messages"]) <= SHOW_CAP
        # the planted secret: found by its words, never shown
        hit = await good("search", {"query": "zebra quasar"})
        assert hit["results"][0]["id"] == planted and "•••" in hit["results"][0]["snippet"]
        around = await good("show", {"id": planted, "query": "zebra quasar"})
        assert any(PLANTED in m["text"] and "•••" in m["text"] for m in around["messages"])
        await good("list", {"limit": 200})
        await good("plan", {"id": planted})

    with_server(server_env(home, tmp_path), body)
    assert not any(SECRET in a or SECRET[:12] in a for a in answers)
    assert answers and all(len(a) <= RESULT_CAP for a in answers)


def test_a_plan_says_what_would_run_and_runs_nothing(tmp_path):
    home, repo, stubs = tmp_path / "home", tmp_path / "shop-api", tmp_path / "bin"
    subprocess.run(["git", "init", "-q", "-b", "fix/checkout-retry", str(repo)], check=True)
    stubs.mkdir()
    write_stub(stubs, "claude")
    here = ClaudeSession(cwd=str(repo), branch="fix/checkout-retry", mode="bypassPermissions")
    here.write(home)
    gone = ClaudeSession(cwd=str(tmp_path / "deleted"), prompt="Explain the gone folder")
    gone.write(home)
    moved = ClaudeSession(cwd=str(repo), branch="main", prompt="On another branch")
    moved.write(home)

    async def body(session: ClientSession) -> None:
        p = await call(session, "plan", {"id": f"claude:{here.session_id}"})
        assert p["verdict"] == "would resume" and p["refusal"] is None and p["folder"] == str(repo)
        assert p["argv"][:2] == ["claude", f"--resume={here.session_id}"]
        assert p["line"].startswith("\\builtin cd -- ") and f"--resume={here.session_id}" in p["line"]
        assert p["held_back"] and p["held_back"][0]["flag"].startswith("--permission-mode")  # a loose mode
        assert p["warnings"] == []  # the stub was found on PATH and its help read
        loose = await call(session, "plan", {"id": f"claude:{here.session_id}", "allow_permissive": True})
        assert "bypassPermissions" in loose["argv"] and not loose["held_back"]
        refused_plan = await call(session, "plan", {"id": f"claude:{gone.session_id}"})
        assert refused_plan["verdict"].startswith("refused: folder no longer exists")
        asks = await call(session, "plan", {"id": f"claude:{moved.session_id}"})
        assert asks["verdict"].startswith("asks first") and asks["branch"] == {
            "recorded": "main", "current": "fix/checkout-retry", "differs": True}

    with_server(server_env(home, tmp_path, f"{stubs}:{os.environ['PATH']}"), body)
    assert recorded(stubs, "claude") is None  # the CLI was asked for its --help only: nothing ran


def test_bad_input_is_one_line_and_the_server_answers_the_next_call(realdata, tmp_path):
    home = real_home(realdata, tmp_path, ("claude",))
    bad: list[tuple[str, dict[str, Any], str]] = [
        ("show", {"id": "claude:00000000-0000-0000-0000-000000000000"}, "no session matches"),
        ("plan", {"id": "no"}, "too short"),
        ("plan", {"id": "@nohost/claude:7d928a45-904e-47b1-bcf0-c5c3d26f85ec"}, "no session"),
        ("show", {"id": "@no host/claude:7d92"}, "not a host name"),
        ("search", {"query": ""}, "empty"),
        ("search", {"query": "   "}, "empty"),
        ("search", {"query": "x" * 100_000}, "at most 1000 characters"),
        ("show", {"id": "claude:7d92", "query": "y" * 100_000}, "at most 1000 characters"),
        ("search", {"query": 5}, "query: Input should be a valid string"),
        ("search", {"query": ["a"]}, "valid string"),
        ("search", {}, "query: Field required"),
        ("search", {"query": "retry", "limit": "many"}, "limit"),
        ("search", {"query": "retry", "limit": 10_000}, "limit"),
        ("list", {"limit": 0}, "limit"),
        ("list", {"app": "nosuchapp"}, "unknown app 'nosuchapp'"),
        ("list", {"since": "soon"}, "not a time: 'soon'"),
        ("show", {"id": 12}, "id"),
        ("show", {"id": "claude:7d92", "exchanges": -1}, "exchanges"),
        ("plan", {"id": "claude:7d92", "allow_permissive": "perhaps"}, "allow_permissive"),
        ("delete", {}, "Unknown tool"),
    ]

    async def body(session: ClientSession) -> None:
        for tool, args, said in bad:
            error = await refused(session, tool, args)
            assert said in error, (tool, args, error)
            assert "x" * 100 not in error  # the 100 KB value is not echoed back
            assert (await call(session, "list", {"limit": 1}))["results"]

    with_server(server_env(home, tmp_path), body)


def test_without_the_extra_mcp_says_how_to_install_it(tmp_path):
    blocked = "import sys; sys.modules['mcp'] = None; from sessidx.cli import main; sys.exit(main(['mcp']))"
    done = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SESSIDX_HOME": str(tmp_path)})
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "pip install 'sessidx[mcp]'" in done.stderr, done.stderr


def test_no_other_command_loads_the_sdk(home, tmp_path):
    """The SDK (pydantic, anyio, ...) is `sessidx mcp`'s alone: not the key press, a move, Enter,
    the list, a search, an export."""
    session = ClaudeSession(cwd="/w", prompt="Fix the flaky login test")
    session.write(home)
    key = f"claude:{session.session_id}"
    assert loaded_by("build")
    for args in (["list"], ["list", "--json"], ["lines"], ["preview", "--shell", "bash", key], ["check", key],
                 ["search", "flaky"], ["lines", "--content", "flaky"], ["export", key], ["export", "--json", key],
                 ["resume", "--json", key]):
        loaded = loaded_by(*args)
        assert "sessidx.cli" in loaded and sdk_modules(loaded) == set(), (args, sorted(sdk_modules(loaded)))
    fzf = tmp_path / "fzf"
    fzf.write_text("#!/bin/sh\ncat > /dev/null\nexit 130\n")
    fzf.chmod(0o755)
    pressed = press_key({**os.environ, "SESSIDX_SHELL": "bash", "SESSIDX_FZF": str(fzf)})
    assert "sessidx.picker" in pressed and sdk_modules(pressed) == set()


def test_the_sdk_guard_can_fail():
    """The server's own module loads the SDK: the probe above would see it."""
    done = subprocess.run([sys.executable, "-c", PROBE.replace("main(sys.argv[1:])", "import sessidx.mcp_server")],
                          capture_output=True, text=True, timeout=60)
    assert {"mcp", "pydantic", "anyio"} <= sdk_modules(set(done.stdout.split()))


@pytest.mark.parametrize("stdin", [b"", b"not json at all\n"])
def test_the_server_ends_with_its_input(home, stdin):
    """A client that goes away (stdin closed), or that sends garbage then goes: the server ends."""
    done = subprocess.run([sys.executable, "-m", "sessidx", "mcp"], input=stdin, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_sessions_on_an_ssh_host_are_found_read_and_planned_there(tmp_path, home):
    """A real sshd on the loopback as the host: its sessions are listed, searched, shown and
    planned through the picker's host code; the host's stub CLI never runs."""
    from tests.ssh_test import host_env, make_host
    from tests.sshd import Client

    client = Client(tmp_path / "ssh")
    try:
        alpha = make_host(client, tmp_path, "alpha")
        folder = tmp_path / "there"
        folder.mkdir()
        there = ClaudeSession(cwd=str(folder), prompt=f"the zebra stampede in payments, {PLANTED}: TOKEN={SECRET}",
                              branch="HEAD")
        there.write(alpha.home)
        ClaudeSession(cwd="/l", prompt="a local zebra sighting").write(home)
        key = f"@alpha/claude:{there.session_id}"
        env = {**server_env(home, tmp_path), **host_env(client, "alpha"), "SESSIDX_HOSTS_TIMEOUT": "30"}
        answers: list[str] = []

        async def body(session: ClientSession) -> None:
            async def good(tool: str, args: dict[str, Any]) -> Any:
                result = await call(session, tool, args)
                answers.append(json.dumps(result))
                return result

            listed = await good("list", {"host": "alpha"})  # asked now
            assert [r["id"] for r in listed["results"]] == [key] and listed["results"][0]["host"] == "alpha"
            both = await good("list", {})  # this machine, and what alpha sent last
            assert {r["host"] for r in both["results"]} == {None, "alpha"}
            found = await good("search", {"query": "zebra stampede"})
            assert found["results"][0]["id"] == key and "•••" in found["results"][0]["snippet"]
            assert (await good("search", {"query": "zebra", "host": "local"}))["results"][0]["host"] is None
            shown = await good("show", {"id": key, "query": "stampede"})  # the host's own export
            assert any("zebra stampede" in m["text"] and m.get("match") for m in shown["messages"])
            p = await good("plan", {"id": key})
            assert p["host"] == "alpha" and p["folder"] == str(folder) and p["verdict"] == "would resume"
            assert p["line"].startswith("ssh ") and f"--resume={there.session_id}" in p["line"]
            error = await refused(session, "show", {"id": "@alpha/claude:00000000-0000-0000-0000-000000000000"})
            assert "no session" in error

        with_server(env, body)
        assert answers and not any(SECRET in a for a in answers)
        assert recorded(alpha.folder / "bin", "claude") is None
    finally:
        client.close()


def test_every_answer_stays_under_its_bounds(home, tmp_path):
    """40 long exchanges, 200 sessions in long folders: the show keeps its newest messages under
    SHOW_CAP and says how many it left out; the list is shortened to RESULT_CAP and says so."""
    talk = ClaudeSession(cwd="/w/talk", prompt="a long question " + "about retries " * 150, turns=40)
    talk.write(home)
    for i in range(200):
        ClaudeSession(cwd=f"/w/{i:03d}/" + "deep/" * 150, prompt=f"session {i} " + "words " * 60).write(home)

    async def body(session: ClientSession) -> None:
        shown = await call(session, "show", {"id": f"claude:{talk.session_id}", "exchanges": 20})
        assert sum(len(m["text"]) for m in shown["messages"]) <= SHOW_CAP and "left_out" in shown
        assert shown["messages"][-1]["exchange"] == 40 and shown["messages"][0]["exchange"] > 21
        listed = await call(session, "list", {"limit": 200})
        assert listed["total"] == 201 and "cut" in listed and 0 < len(listed["results"]) < 200

    with_server(server_env(home, tmp_path), body)
