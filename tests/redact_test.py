"""Secrets never reach the content index nor any output (issue 16): the shapes of tests/secret_corpus.py,
masked by sessidx.redact, planted in every app's real format, are neither found nor shown, while the
words around them (and the key word `password` itself) still are."""

from __future__ import annotations

import json
import re

import pytest
from homes import CodexThread, write_codex_home
from hypothesis import given, settings
from hypothesis import strategies as st

from sessidx.apps import APPS
from sessidx.config import current_env
from tests.conftest import run_cli
from tests.content_test import (
    REAL_HOMES,
    SYNTHETIC,
    a_plain_prompt,
    claude_home,
    home_for,
    plant,
    search_json,
    sessions_of,
    transcript,
)
from tests.secret_corpus import CORPUS, KEPT, TOOL_PRINTED, pieces

EVERY_APP = list(APPS)


def leaks(shown: str, value: str) -> list[str]:
    """What of `value` shows in `shown`: itself, or a part a search could ask for."""
    return [p for p in [value, *pieces(value)] if p in shown]


def test_the_corpus_is_big_enough_and_every_value_is_in_its_text():
    assert len(CORPUS) >= 50
    assert all(value in text for text, value in CORPUS)


@pytest.mark.parametrize(("text", "value"), CORPUS, ids=[t[:40] for t, _ in CORPUS])
def test_each_shape_is_masked_and_the_words_around_it_kept(text, value):
    from sessidx.redact import MARK, mask

    masked = mask(text)
    assert leaks(masked, value) == [], masked
    assert MARK in masked
    # the key word and the other plain words stay: only the value goes (and a user name with its
    # password, where gitleaks' curl rule takes `user:password` as the secret)
    words = [w for w in text.split() if value not in w and w.isalpha() and len(w) >= 4 and w != "alice"]
    if text.startswith("-----BEGIN"):  # a private-key block goes whole
        words = []
    assert all(w in masked for w in words), masked


def test_ascii_text_and_text_with_other_characters_are_judged_alike():
    """ASCII text takes a faster path (bytes): the same secrets are found in it as beside a word
    of another script, and the same things are kept."""
    from sessidx.redact import secret_spans

    for text in [t for t, _ in CORPUS] + KEPT:
        if text.isascii():
            assert secret_spans(text) == secret_spans(text + " привет"), text
            assert secret_spans(text) == [(a - 6, b - 6) for a, b in secret_spans("日本語です " + text)], text


def spans_both_ways(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """secret_spans with the key words and long runs found in C (redact.scan_in_c, as indexing
    does) and in Python."""
    from sessidx import redact

    saved = redact._found, redact._long_runs  # noqa: SLF001 - the module's own switches
    try:
        redact.scan_in_c()
        assert None not in (redact._found, redact._long_runs)  # noqa: SLF001 - built (CI has a compiler)
        in_c = redact.secret_spans(text)
        redact._found = redact._long_runs = None  # noqa: SLF001
        return in_c, redact.secret_spans(text)
    finally:
        redact._found, redact._long_runs = saved  # noqa: SLF001


def test_key_words_and_runs_found_in_c_mask_what_python_masks():
    runs = ["userPassword: {SSHA}abcdefghijABCDEFGHIJklmn", "$apr1$abcdefghijklmnopqrstu", "xoxb-abcdefghijklmnop",
            "a " + "xKqWbTzRmNvLpYhGdFsJcQeUiOaZwXyVbNmLkJhG" * 6, "/usr/local/lib/python3.11/site-packages/x"]
    for text in [t for t, _ in CORPUS] + KEPT + [t for t, _ in TOOL_PRINTED] + runs:
        for variant in (text, text.upper(), text.title(), "İ " + text, text.replace("k", "\u212a")):
            in_c, in_python = spans_both_ways(variant)
            assert in_c == in_python, variant


# key words (in any case, one with the Kelvin sign that lowers to `k`), near misses, and values
_KEY_PIECES = st.sampled_from(["pass", "PASSWORD", "pwd", "Secret", "TOKEN", "to\u212aen", "api_", "access_", "key",
                               "\u212aEY", "x-api-key", "curl -u bob:", "mysql -p", "sshpass -p ", "sig=", "Signature=",
                               "past", "passport", "tokenize", "keyboard", "secretary", "signal=", "sig", "=", ": ",
                               " = ", "'", '"', "s3cr3t-Valu3", "hunter2", "AKIAQ3EGRT5KZ7XW2YLM", "\n", " ", "İ", "é",
                               "[sudo] password for al: ", "&", "%2F", "/usr/local/lib/python3", "abcdefghij",
                               "ABCDEFGHIJ", "0123456789", "$2b$12$", "}", "{SSHA}", "ghp_", "sk-", "AIza", "eyJ", "-", "_",
                               "xKqWbTzRmNvLpYhGdFsJcQeUiOaZwXyVbNmLkJhG"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_KEY_PIECES, max_size=25).map("".join))
def test_generated_text_is_masked_alike_with_key_words_and_runs_found_in_c(text):
    in_c, in_python = spans_both_ways(text)
    assert in_c == in_python


@pytest.mark.parametrize("text", KEPT)
def test_what_only_looks_like_a_secret_is_kept(text):
    from sessidx.redact import mask

    assert mask(text) == text


def test_the_value_goes_and_the_key_word_stays():
    from sessidx.redact import mask

    assert mask("password=hunter2 and DB_PASSWORD=s3cr3tpass", "#") == "password=# and DB_PASSWORD=#"
    assert mask("export AWS_ACCESS_KEY_ID=AKIAQ3EGRT5KZ7XW2YLM", "#") == "export AWS_ACCESS_KEY_ID=#"
    assert mask("postgres://admin:pa55w0rdZ@db:5432/app", "#") == "postgres://admin:#@db:5432/app"


def test_token_runs_are_the_runs_a_regex_finds():
    """token_runs finds runs with str.translate and str.find (no `re` on a keystroke); it must
    agree with the plain definition, for ASCII and for any other text."""
    from sessidx.redact import token_runs

    definition = re.compile(r"[A-Za-z0-9_\-+/.~]{16,}")
    rng = __import__("random").Random(7)
    alphabet = "aB3_-+/=:.~ x\n\t(éü日本"
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) if rng.random() < .3 else rng.choice("abXY09")
                       for _ in range(rng.randint(0, 200)))
        assert list(token_runs(text)) == [m.span() for m in definition.finditer(text)], text


def test_every_vendored_gitleaks_rule_compiles():
    from sessidx.gitleaks_rules import COMMIT, RULES

    assert len(RULES) >= 200 and re.fullmatch(r"[0-9a-f]{40}", COMMIT)
    for rule_id, keywords, regex, group, _ in RULES:
        assert re.compile(regex).groups >= group, rule_id
        assert keywords and all(k == k.lower() for k in keywords), rule_id


def said(text: str) -> str:
    """As planted into JSON and SQLite alike: no character that JSON would escape."""
    return text.replace('"', "'").replace("\n", " ")


def test_every_registered_app_is_in_the_secret_corpus_test():
    """The test below runs for each app in the registry: a new app whose home `home_for` cannot
    make, or whose format `plant` does not know, fails there."""
    assert {*REAL_HOMES, *SYNTHETIC, "kilo"} == set(EVERY_APP)


@pytest.mark.parametrize("app", EVERY_APP)
def test_secrets_in_every_apps_real_format_are_neither_found_nor_shown(app, realdata, tmp_path, monkeypatch):
    from sessidx.content import store
    from sessidx.content.query import search

    home = home_for(app, realdata, tmp_path)
    session, prompt = a_plain_prompt(sessions_of(home, monkeypatch, app))
    control = f"zqxcontrol{app}"
    message = f"the {control} sentence is here. " + " ".join(
        f"zqm{i:02d}x {said(text)} ;" for i, (text, _) in enumerate(CORPUS))
    plant(app, session, prompt, message)
    hits = search_json(home, control)  # the index is built by the command, as a user runs it
    assert [(h["app"], h["id"]) for h in hits] == [(app, session.id)]
    assert "password" in message and search_json(home, "password")  # the key word is still found

    monkeypatch.setenv("SESSIDX_HOME", str(home))
    db = store.connect(current_env())
    for i, (_, value) in enumerate(CORPUS):
        for query in [value, *pieces(value)]:
            assert search(db, query) == [], (app, query)
        (hit,) = search(db, f"zqm{i:02d}x", snippet_width=300)
        assert f"zqm{i:02d}x" in hit.snippet and leaks(hit.snippet, value) == [], (app, hit.snippet)

    found = [json.loads(line) for line in run_cli("search", "password", "--json", env={"SESSIDX_HOME": str(home)}).stdout.splitlines()]
    assert session.id in {hit["id"] for hit in found}  # (a title holding `password` may rank first)
    # where the plant made it the first prompt (Amazon Q keeps a conversation a row), the title holds it
    printed = "\n".join(str(v) for hit in found for v in hit.values())  # the title (a first prompt) too
    preview = run_cli("preview", "--shell", "bash", f"{app}:{session.id}",
                      env={"SESSIDX_HOME": str(home), "FZF_PREVIEW_COLUMNS": "4000", "FZF_PROMPT": "content> ",
                           "FZF_QUERY": control}).stdout
    assert "best match" in preview and control in preview and "zqm54x" in preview  # the whole message is shown
    for _, value in CORPUS:
        assert leaks(printed, value) == [], (app, value, printed)
        assert leaks(preview, value) == [], (app, value, preview)


def test_the_previews_last_exchanges_show_no_secret(home):
    (a,) = claude_home(home, "deploy it: " + " ; ".join(text for text, _ in CORPUS))
    shown = run_cli("preview", "--shell", "bash", f"claude:{a.session_id}",
                    env={"SESSIDX_HOME": str(home), "FZF_PREVIEW_COLUMNS": "4000"}).stdout
    assert "said lately" in shown and "deploy it" in shown and "password" in shown
    for _, value in CORPUS:
        assert leaks(shown, value) == [], value


def test_secrets_printed_by_tools_in_claude_and_codex_are_neither_found_nor_shown(home, monkeypatch):
    """Round four: an htpasswd `$apr1$` hash, a passphrase echoed at a prompt and the first 16
    characters of an Azure SAS `sig=` (cut at its `%2F`) were found by a search and shown in
    snippets and the preview, when a tool printed them (`cat .htpasswd`, `ssh-add`, `az storage`)."""
    from sessidx.content import store
    from sessidx.content.query import search

    output = "\n".join(["the zqtoolcontrol output", *(f"zqt{i:02d}x {text}" for i, (text, _) in enumerate(TOOL_PRINTED))])
    (a,) = claude_home(home, "Check the server credentials")
    with transcript(home, a).open("a") as f:
        f.write(json.dumps({"type": "assistant", "sessionId": a.session_id, "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cat .htpasswd"}}]}}) + "\n")
        f.write(json.dumps({"type": "user", "sessionId": a.session_id, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": output}]},
            "toolUseResult": {"stdout": output, "stderr": ""}}) + "\n")
    thread = CodexThread(cwd="/w/codex", title="Rotate the storage keys")
    write_codex_home(home, [thread])
    rollout = next(home.rglob(f"*{thread.thread_id}.jsonl"))
    with rollout.open("a") as f:
        f.write(json.dumps({"type": "response_item", "payload": {
            "type": "function_call", "call_id": "c1", "name": "shell", "arguments": '{"command": ["cat", ".htpasswd"]}'}})
                + "\n")
        f.write(json.dumps({"type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "c1",
            "output": f"Chunk ID: ab12\nProcess exited with code 0\nOutput:\n{output}"}}) + "\n")
    ids = {a.session_id, thread.thread_id}
    assert {h["id"] for h in search_json(home, "zqtoolcontrol")} == ids  # the index is built as a user builds it

    monkeypatch.setenv("SESSIDX_HOME", str(home))
    db = store.connect(current_env())
    found, shown = [], []
    for i, (_, value) in enumerate(TOOL_PRINTED):
        found += [(value, query) for query in [value, *pieces(value)] if search(db, query)]
        hits = search(db, f"zqt{i:02d}x", snippet_width=300)
        assert {h.session.id for h in hits} == ids, value
        shown += [(value, h.snippet) for h in hits if leaks(h.snippet, value)]
    for session in (f"claude:{a.session_id}", f"codex:{thread.thread_id}"):
        preview = run_cli("preview", "--shell", "bash", session,
                          env={"SESSIDX_HOME": str(home), "FZF_PREVIEW_COLUMNS": "4000", "FZF_PROMPT": "content> ",
                               "FZF_QUERY": "zqtoolcontrol"}).stdout
        assert "best match" in preview and "zqtoolcontrol" in preview and f"zqt{len(TOOL_PRINTED) - 1:02d}x" in preview
        shown += [(value, session) for _, value in TOOL_PRINTED if leaks(preview, value)]
    assert found == [] and shown == [], f"{len(found)} found, {len(shown)} shown of {len(TOOL_PRINTED)} shapes"
