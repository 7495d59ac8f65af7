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


def unknown_apps(query: str | None) -> str | None:
    """What the list says of `app:` words that start no app's name (`app:zzz`), or None."""
    from sessidx.apps import NAMES

    unknown = [word[4:] for word in parse(query).words.split()
               if word.startswith("app:") and not any(name.startswith(word[4:].lower()) for name in NAMES)]
    return f"no app's name starts with {', '.join(unknown)}" if unknown else None


def fits(query: str | None, app: str, mtime_ms: int, row: str) -> bool:
    """Whether a row belongs in the list the whole query asks for: its app and age against the
    `app:`/`since:` words, its text (as fzf searches it: the row before its tab) against the
    rest, as fzf's extended search reads it. Enter's check asks this of the row it is given,
    since that row may come from a list made for an earlier query (docs/picker.md)."""
    words = parse(query)
    if words.apps is not None and app not in words.apps:
        return False
    if words.since_ms is not None and mtime_ms < words.since_ms:
        return False
    return fzf_matches(words.rest, row.split("\t", 1)[0])


def fzf_matches(query: str, text: str) -> bool:
    """fzf's extended search (its pattern.go, 0.67): terms apart by spaces (`\\ ` is one), each
    fuzzy, `'` exact, `'…'` at word bounds, `^` prefix, `$` suffix, `!` not; `|` joins terms
    into one of which any may match; smart case by term; Latin accents ignored where the term
    has none."""
    sets: list[list[tuple[str, bool, str, bool]]] = []
    current: list[tuple[str, bool, str, bool]] = []
    after_bar = False
    for token in query.replace("\\ ", "\t").split(" "):
        if not token:
            continue
        text_of = token.replace("\t", " ")
        lower = text_of.lower()
        sensitive = text_of != lower
        term = text_of if sensitive else lower
        if current and not after_bar and term == "|":
            after_bar = True
            continue
        joined, after_bar = after_bar, False
        kind, inverse = "fuzzy", False
        if term.startswith("!"):
            kind, inverse, term = "exact", True, term[1:]
        if term != "$" and term.endswith("$"):
            kind, term = "suffix", term[:-1]
        if len(term) > 2 and term.startswith("'") and term.endswith("'"):
            kind, term = "boundary", term[1:-1]
        elif term.startswith("'"):
            kind, term = ("exact" if not inverse else "fuzzy"), term[1:]
        elif term.startswith("^"):
            kind, term = ("equal" if kind == "suffix" else "prefix"), term[1:]
        if not term:
            continue
        if current and not joined:
            sets.append(current)
            current = []
        current.append((kind, inverse, term, sensitive))
    if current:
        sets.append(current)
    plain = _ansi_stripped(text)
    return all(any(_term_matches(kind, term, _as_searched(plain, sensitive, term)) != inverse
                   for kind, inverse, term, sensitive in terms) for terms in sets)


def _as_searched(text: str, sensitive: bool, term: str) -> str:
    text = text if sensitive else text.lower()
    if not text.isascii() and _unaccented(term) == term:
        text = _unaccented(text)
    return text


def _unaccented(text: str) -> str:
    if text.isascii():
        return text
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def _term_matches(kind: str, term: str, text: str) -> bool:
    if kind == "fuzzy":
        at = 0
        for char in term:
            at = text.find(char, at) + 1
            if at == 0:
                return False
        return True
    if kind == "exact":
        return term in text
    if kind == "prefix":
        return text.lstrip().startswith(term)
    if kind == "suffix":
        return text.rstrip().endswith(term)
    if kind == "equal":
        return text.strip() == term
    return whole_word(text, term)  # boundary: the term between word bounds


def whole_word(text: str, word: str) -> bool:
    """Whether `word` stands in `text` between word bounds (no letter or digit either side)."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        at = text.find(word, at + 1)
    return False


def _ansi_stripped(text: str) -> str:
    """The row as fzf's `--ansi` searches it: without its colour sequences (ESC [ … letter)."""
    if "\x1b" not in text:
        return text
    out: list[str] = []
    at = 0
    while (escape := text.find("\x1b[", at)) >= 0:
        out.append(text[at:escape])
        end = escape + 2
        while end < len(text) and not ("@" <= text[end] <= "~"):
            end += 1
        at = end + 1
    out.append(text[at:])
    return "".join(out)
