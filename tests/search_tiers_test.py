"""Search tiers and ranking (issue 19): exact words first, then prefixes and word forms, then
typos, each near answer marked; a title hit first; a refresh with nothing changed reads nothing."""

from __future__ import annotations

import json
import os
import time

from homes import ClaudeSession, CodexThread, write_codex_home

from sessidx import local
from sessidx.apps import APPS
from sessidx.config import current_env
from sessidx.content import reading, store
from sessidx.content.near import SCREEN, edits
from sessidx.content.query import search
from sessidx.index import build
from tests.conftest import run_cli


def sessions(home, *prompts: str, deep: tuple[str, ...] = ()) -> list[ClaudeSession]:
    """Claude sessions, the first `len(prompts)` saying their prompt first, then `deep` ones
    saying theirs after some talk; each newer than the one before."""
    out = []
    now = time.time()
    for i, (prompt, first) in enumerate([(p, True) for p in prompts] + [(p, False) for p in deep]):
        s = ClaudeSession(cwd=f"/w/p{i}", prompt=prompt if first else "Look at the repository layout",
                          mtime=now - 1000 + i)
        path = s.write(home)
        if not first:
            with path.open("a") as f:
                f.write(json.dumps({"type": "user", "sessionId": s.session_id, "message": {"role": "user",
                                                                                             "content": prompt}}) + "\n")
            os.utime(path, (now - 1000 + i, now - 1000 + i))
        out.append(s)
    return out


def indexed(home, monkeypatch):
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    env = current_env()
    db = store.connect(env)
    reading.refresh(db, build(env, APPS.values()).sessions)
    return db


def test_exact_words_come_first_then_other_forms_marked(home, monkeypatch):
    forms, exact = sessions(home, "the upload retry never stops", "the upload retries pile up")
    db = indexed(home, monkeypatch)
    hits = search(db, "upload retries")
    assert [h.session.id for h in hits] == [exact.session_id, forms.session_id]
    assert hits[0].also == "" and hits[1].also == "retries → retry"


def test_a_typo_finds_the_word_meant(home, monkeypatch):
    (meant,) = sessions(home, "reconnect the websocket after the laptop wakes")
    db = indexed(home, monkeypatch)
    (hit,) = search(db, "reconect websocket")
    assert hit.session.id == meant.session_id and hit.also == "reconect → reconnect"
    assert search(db, "serilaize websocket") == []  # a word with no near term: nothing, not anything


def test_every_word_as_a_prefix_and_russian_forms(home, monkeypatch):
    a, b = sessions(home, "authentication middleware rejects tokens", "интеграционный тест падает на CI")
    db = indexed(home, monkeypatch)
    assert [h.session.id for h in search(db, "authent middleware")] == [a.session_id]
    (hit,) = search(db, "тесты падают")
    assert hit.session.id == b.session_id and "тест" in hit.also


def test_a_screenful_of_exact_answers_leaves_near_ones_out(home, monkeypatch):
    sessions(home, *[f"retries of job {i}" for i in range(SCREEN)], "one retry only")
    db = indexed(home, monkeypatch)
    hits = search(db, "retries")
    assert len(hits) == SCREEN and all("retries" in h.snippet and not h.also for h in hits)


def test_a_title_hit_and_a_one_message_hit_rank_above_deep_and_spread_ones(home, monkeypatch):
    titled, spread = sessions(home, "kafka rebalance storms", "kafka consumers lag",
                              deep=("why does the kafka rebalance take so long",))[:2]
    deep = sessions(home, deep=("the rebalance of the kafka group never ends",))[0]
    with open(next(home.rglob(f"{spread.session_id}.jsonl")), "a") as f:  # the other word, in another message
        f.write(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "a rebalance"}}) + "\n")
    db = indexed(home, monkeypatch)
    found = [h.session.id for h in search(db, "kafka rebalance")]
    assert found[0] == titled.session_id and found.index(deep.session_id) < found.index(spread.session_id)


def test_a_title_holding_the_words_ranks_above_a_better_scored_message(home, monkeypatch):
    """The title ranking reads is the index's own column (not each found session's metadata)."""
    titled = sessions(home, "kafka rebalance " + "and a great deal of other talk " * 20)[0]
    scored = sessions(home, deep=("kafka rebalance kafka rebalance",))[0]
    db = indexed(home, monkeypatch)
    assert [h.session.id for h in search(db, "kafka rebalance")] == [titled.session_id, scored.session_id]


def test_a_session_whose_metadata_cannot_be_read_gives_its_place_to_the_next(home, monkeypatch):
    found = sessions(home, *[f"tune the importer, take {i}" for i in range(4)])
    db = indexed(home, monkeypatch)
    newest = found[-1].session_id
    db.execute("UPDATE source SET session = x'00' WHERE key LIKE ?", (f"%{newest}%",))  # another Python's marshal
    hits = search(db, "importer", limit=3)
    assert [h.session.id for h in hits] == [s.session_id for s in found[2::-1]]


def test_a_search_with_nothing_changed_reads_no_source(home, monkeypatch):
    (a,) = sessions(home, "Fix the flaky login test")
    monkeypatch.setenv("SESSIDX_HOME", str(home))
    env = current_env()
    db = store.connect(env)
    first = local.refresh_content(env, db)
    assert first is not None and first["sources"] == 1
    assert local.refresh_content(env, db) == {"sources": 0, "unchanged": 1}
    path = next(home.rglob(f"{a.session_id}.jsonl"))
    with path.open("a") as f:
        f.write(json.dumps({"type": "user", "message": {"role": "user", "content": "now the signup test"}}) + "\n")
    again = local.refresh_content(env, db)
    assert again is not None and again["appended"] == 1
    assert [h.session.id for h in search(db, "signup")] == [a.session_id]
    store.drop(env)  # a dropped index starts over: nothing of it says "unchanged"
    fresh = store.connect(env)
    assert (local.refresh_content(env, fresh) or {})["sources"] == 1


def test_edits_counts_a_swap_as_one():
    assert edits("serilaize", "serialize", 2) == 1
    assert edits("reconect", "reconnect", 1) == 1
    assert edits("postgress", "postgres", 1) == 1
    assert edits("kitten", "sitting", 1) > 1
    assert edits("abc", "abc", 0) == 0


def test_a_moved_codex_home_is_searched_while_its_resume_is_refused(home, monkeypatch):
    thread = CodexThread(cwd="/w/codex", title="Tune the importer")
    write_codex_home(home, [thread], recorded_home="/home/before-the-move")
    rollout = next(home.rglob(f"*{thread.thread_id}.jsonl"))
    with rollout.open("a") as f:
        f.write(json.dumps({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "the zeppelin importer drops rows"}]}}) + "\n")
    db = indexed(home, monkeypatch)
    (hit,) = search(db, "zeppelin importer")
    assert hit.session.id == thread.thread_id and "zeppelin" in hit.snippet
    assert hit.session.path.startswith("/home/before-the-move")  # the recorded path stays the session's
    done = run_cli("resume", f"codex:{thread.thread_id}", env={"SESSIDX_HOME": str(home)})
    assert done.returncode != 0 and "recorded rollout" in done.stderr


def test_since_and_until_on_search_and_list(home):
    from sessidx.when import moment_ms

    now = time.time()
    for days, prompt in ((0.1, "fresh kafka work"), (3, "older kafka work"), (20, "ancient kafka work")):
        s = ClaudeSession(cwd="/w", prompt=prompt, mtime=now - days * 86400)
        s.write(home)
    env = {"SESSIDX_HOME": str(home)}

    def titles(*argv: str) -> list[str]:
        done = run_cli(*argv, "--json", env=env)
        return sorted(json.loads(line)["title"] for line in done.stdout.splitlines())

    assert titles("search", "kafka", "--since", "2d") == ["fresh kafka work"]
    assert titles("search", "kafka", "--since", "1w", "--until", "1d") == ["older kafka work"]
    assert titles("list", "--until", "2w") == ["ancient kafka work"]
    if time.localtime(now - 0.1 * 86400).tm_mday == time.localtime(now).tm_mday:  # the fresh one is from today
        assert titles("list", "--since", "today") == ["fresh kafka work"]
    bad = run_cli("search", "kafka", "--since", "last tuesday", env=env)
    assert bad.returncode != 0 and "not a time" in bad.stderr and "Traceback" not in bad.stderr
    span = moment_ms("2026-11-20", until=True) - moment_ms("2026-11-20")
    assert span // 3_600_000 in (23, 24, 25)  # --until a date keeps that whole day


def said(home, s: ClaudeSession, *messages: str, when: float) -> None:
    """Messages added to a session's transcript, each a record of its own."""
    path = next(home.rglob(f"{s.session_id}.jsonl"))
    with path.open("a") as f:
        for text in messages:
            f.write(json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n")
    os.utime(path, (when, when))


def test_the_order_is_over_every_match_and_a_limit_only_cuts_it(home, monkeypatch):
    """One session says the three words in one message, 70 newer ones say them in three messages
    of one stretch, each more often (bm25 ranks their rows higher): the one-message session is
    first at every limit, and search, search --json and the picker's rows list the same order."""
    now = time.time()
    (target,) = sessions(home, deep=("the staging deploy hit a timeout and we did a rollback of the release",))
    said(home, target, *(f"unrelated talk about the build matrix number {i} " * 6 for i in range(8)), when=now - 5000)
    spread = sessions(home, *["Look at the repository layout"] * 70)
    for i, s in enumerate(spread):
        said(home, s, "staging staging", "timeout timeout", "rollback rollback", when=now - 1000 + i)
    db = indexed(home, monkeypatch)
    whole = [h.session.id for h in search(db, "staging timeout rollback", limit=100)]
    assert whole[0] == target.session_id and len(whole) == 71
    for limit in (1, 5, 10, 20, 30, 40, 45, 71):
        assert [h.session.id for h in search(db, "staging timeout rollback", limit=limit)] == whole[:limit], limit
    env = {"SESSIDX_HOME": str(home)}
    listed = run_cli("search", "staging timeout rollback", "--json", "--limit", "30", env=env).stdout
    assert [json.loads(line)["id"] for line in listed.splitlines()] == whole[:30]
    picker = run_cli("lines", "--content", "staging timeout rollback", env=env).stdout.splitlines()[1:]
    assert [row.rsplit("\t", 1)[1].split(":", 1)[1] for row in picker] == whole[:30]


def test_a_word_too_common_to_rank_lists_the_newest_and_a_limit_only_cuts_it(home, monkeypatch):
    """Words in more rows than RANKED_ROWS: the newest sessions holding them, ties (sessions
    last used in the same second) by the first indexed, whichever way the index is walked:
    `fig ` (no prefix) is in the newest sessions, found one by one; `kumquat ` only in the
    older half, so the newest few hold too few and every session is asked; `kumquat` (a
    prefix, the word being typed, spelt out as the one term it stands for; `fig`, as three) and
    any of them with a date (no limit for SQL) ask every one."""
    from sessidx.content import query

    now = time.time()
    every = sessions(home, *[f"the fig question {'and the kumquat ' if i < 30 else ''}number {i}"
                             f"{' with a figure' if i % 2 == 0 else ''}" for i in range(60)])
    for i, s in enumerate(every):
        os.utime(next(home.rglob(f"{s.session_id}.jsonl")), (now - 1000 + i // 3, now - 1000 + i // 3))
    db = indexed(home, monkeypatch)
    monkeypatch.setattr(query, "RANKED_ROWS", 0)  # every word too common to rank by
    for words, holding in (("fig ", 60), ("kumquat ", 30), ("kumquat", 30), ('"kumquat"', 30), ("fig", 60),
                           ("figu", 30)):
        whole = search(db, words, limit=100)
        assert len(whole) == holding, words
        with monkeypatch.context() as m:  # a prefix asked as such, not as the few terms it stands for
            m.setattr(query, "SPELT_OUT", 0)
            assert [h.session.id for h in search(db, words, limit=100)] == [h.session.id for h in whole], words
        times = [h.session.mtime for h in whole]
        assert times == sorted(times, reverse=True) and len(set(times)) < holding, words  # ties among them
        for limit in (1, 2, 4, 5, 7, 10, 29, 30):
            assert [h.session.id for h in search(db, words, limit=limit)] == [h.session.id for h in whole[:limit]], \
                (words, limit)
            dated = search(db, words, limit=limit, since=0)
            assert [h.session.id for h in dated] == [h.session.id for h in whole[:limit]], (words, limit)


def test_an_identifiers_inner_parts_find_it_and_the_whole_word_still_does(home, monkeypatch):
    flush, refresher, snake = sessions(home, "why does flushPendingAcks block the consumer",
                                       "the SessionTokenRefresher races on logout",
                                       "rename retry_backoff_max in the kafka-consumer-config")
    db = indexed(home, monkeypatch)
    for query, meant in (("PendingAcks", flush), ("pendingacks", flush), ("flushPendingAcks", flush),
                         ("pending acks", flush), ("TokenRefresher", refresher), ("Refresher", refresher),
                         ("SessionTokenRefresher", refresher), ("backoff_max", snake), ("consumer-config", snake),
                         ("retry_backoff_max", snake)):
        hits = search(db, query)
        assert [h.session.id for h in hits][:1] == [meant.session_id] and not hits[0].also, query
    assert search(db, "TokenFlusher") == []


def test_a_word_said_whole_ranks_above_the_same_word_inside_an_identifier(home, monkeypatch):
    whole, part = sessions(home, deep=("memoize the selector of the order list", "memoize it by its SelectorKey"))
    db = indexed(home, monkeypatch)
    assert [h.session.id for h in search(db, "memoize selector")] == [whole.session_id, part.session_id]


def test_one_word_said_whole_ranks_above_it_as_the_start_of_a_longer_one(home, monkeypatch):
    whole, longer, part = sessions(home, deep=("memoize the selector of the order list", "the selectorkey is stale",
                                               "memoize it by its SelectorKey"))
    db = indexed(home, monkeypatch)
    assert [h.session.id for h in search(db, "selector")][:1] == [whole.session_id]


def test_a_typo_anywhere_in_a_word_and_a_typo_with_another_form(home, monkeypatch):
    drain, broker, tail = sessions(home, "the node keeps draining connections forever",
                                   "the client was reconnecting to the broker all night",
                                   "the schedulre misses its deadline")
    db = indexed(home, monkeypatch)
    for query, meant, mark in (("drianing connections", drain, "drianing → draining"),  # a swap, early
                               ("xraining connections", drain, "xraining → draining"),  # the first letter
                               ("reconect brokers", broker, "reconect → reconnecting"),  # a typo and a form
                               ("scheduler deadline", tail, "scheduler → schedulre")):  # a swap at its end
        hits = search(db, query)
        assert [h.session.id for h in hits][:1] == [meant.session_id], query
        assert mark in hits[0].also, (query, hits[0].also)
        assert all(h.also and h.pairs for h in hits), query  # every near row marked
    assert search(db, "qzxwvut connections") == []


def test_a_word_the_index_holds_gets_no_typos(home, monkeypatch):
    said_it, other = sessions(home, "the staging cluster is slow", "the state machine of the rollback")
    db = indexed(home, monkeypatch)
    assert [h.session.id for h in search(db, "staging rollback")] == []  # not `state`: staging is a word it holds
    assert [h.session.id for h in search(db, "stagin cluster")] == [said_it.session_id]


def test_a_messages_tokens_are_counted_as_fts5_counts_them():
    """Where each message starts among its row's tokens is counted at index time: it must be
    what FTS5's unicode61 makes of the text, or a word would be put in the wrong message."""
    import sqlite3

    from sessidx.content.tokens import counted

    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(b, content='', tokenize='unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    texts = ["call flushPendingAcks, and (x) y_z 12ab", " leading space", "a", "", "--", "Ünïcode wörds and café",
             "x.y/z:12 HTTPServer\n\tTraceback (most recent call last):", "Привет, мир! тест-кейс", "naïve résumé"]
    for i, text in enumerate(texts, 1):
        db.execute("INSERT INTO t(rowid, b) VALUES (?, ?)", (i, text))
        assert counted(text)[0] == db.execute("SELECT count(*) FROM v WHERE doc = ?", (i,)).fetchone()[0], text
