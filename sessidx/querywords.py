"""Filter words in the picker's query, in title and content mode: `app:NAME` (fast-resume's
`agent:`) and `since:WHEN` (`since:2d`, `since:1w`, `since:2026-11-30`, as `list --since`).

`app:` takes a name or the start of one (`app:cod` is Codex; `app:c` every app starting with
c); `since:` that cannot be read yet (`since:2`, still being typed) filters nothing. The rest
of the query is what fzf, or the content index, searches. (No `re`: this runs on keystrokes.)
"""

from __future__ import annotations

from sessidx.errors import SessidxError


class QueryWords:
    def __init__(self, rest: str, words: str, apps: frozenset[str] | None, since_ms: int | None) -> None:
        self.rest = rest  # the query without its filter words
        self.words = words  # the filter words, as the picker's change_script keeps them
        self.apps = apps  # None: every app
        self.since_ms = since_ms

    @property
    def filtering(self) -> bool:
        return self.apps is not None or self.since_ms is not None


def parse(query: str | None) -> QueryWords:
    from sessidx.apps import NAMES  # the registry's names, without importing an app module

    rest: list[str] = []
    words: list[str] = []
    apps: frozenset[str] | None = None
    since_ms: int | None = None
    for word in (query or "").split():
        key, colon, value = word.partition(":")
        plain = value.isascii() and value.replace("-", "").replace(".", "").replace("_", "").isalnum()
        if not (colon and plain and key in ("app", "since")):  # the picker keeps only such words out of
            rest.append(word)  # fzf's search (picker.change_script)
            continue
        words.append(word)
        if key == "app":
            named = frozenset(name for name in NAMES if name.startswith(value.lower()))
            apps = named if apps is None else apps & named
        elif key == "since":
            from sessidx.when import moment_ms

            try:  # noqa: SIM105 - contextlib loads functools on a keystroke
                since_ms = moment_ms(value)
            except SessidxError:
                pass
    return QueryWords(" ".join(rest), " ".join(words), apps, since_ms)
