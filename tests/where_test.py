"""The seam for where a session lives (where.py): this machine answers the five questions every
front end asks, and the key form decides the place. (A host's answers: tests/ssh_test.py.)"""

from __future__ import annotations

import io

from homes import ClaudeSession

from sessidx.config import current_env
from sessidx.keys import host_key, on_host, split_host_key
from sessidx.local import ThisMachine
from sessidx.resume import make_plan
from sessidx.where import place_of


def test_the_key_form_round_trips_and_names_the_place():
    key = host_key("alpha", "claude", "0b4ad1b6-9f27-4cb1-8a6e-7d7a0f3c1e55")
    assert key == "@alpha/claude:0b4ad1b6-9f27-4cb1-8a6e-7d7a0f3c1e55" and on_host(key)
    assert split_host_key(key) == ("alpha", "claude", "0b4ad1b6-9f27-4cb1-8a6e-7d7a0f3c1e55")
    assert split_host_key("claude:0b4a") is None and split_host_key("@alpha") is None and not on_host("claude:x")
    assert isinstance(place_of(current_env(), "claude:0b4a"), ThisMachine)


def test_this_machine_answers_the_five_questions(home, tmp_path):
    (tmp_path / "proj").mkdir()
    s = ClaudeSession(cwd=str(tmp_path / "proj"), prompt="Fix the zebra migration")
    s.write(home)
    gone = ClaudeSession(cwd=str(tmp_path / "gone"), prompt="A folder since deleted")
    gone.write(home)
    env = current_env()
    key = f"claude:{s.session_id}"
    place = place_of(env, key)
    assert {x.key for x in place.sessions()} == {key, f"claude:{gone.session_id}"}
    assert place.session(key).cwd == str(tmp_path / "proj")
    assert place.session(s.session_id[:8]).key == key  # a short id, as `resume` takes it
    plan = place.plan(key)
    assert plan.ok and plan.host is None and plan.to_json() == make_plan(place.session(key), env).to_json()
    refused = place.plan(f"claude:{gone.session_id}")
    assert refused.refusal is not None and refused.refusal.kind == "folder_gone" and refused.error
    [(score, found, snippet)] = place.search("zebra")
    assert found.key == key and "zebra" in snippet.lower() and score > 0
    shown = io.StringIO()
    assert place.preview(lambda line: shown.write(line + "\n"), key, "bash") == 0
    assert "✓ Enter runs:" in shown.getvalue() and plan.shell_line("bash") in shown.getvalue()
