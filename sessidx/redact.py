"""Secrets out of what sessidx indexes and shows: `mask(text)` replaces each secret's value with
a mark and keeps the words around it (`password=•••`: `password` stays searchable).

What is a secret:
- gitleaks' published rules (sessidx/gitleaks_rules.py, 221 rules: cloud, VCS, chat, payment
  and AI providers' key formats, JWTs, private keys, keys beside a provider's name), each with
  its secret group and entropy floor, as gitleaks applies them;
- a value after password|passwd|pwd|secret|token|api key|auth token|access key (and
  `NAME_PASSWORD`, `x-api-key`, ...): after `=` any value (`.env`, shell), after `:`, ` = `,
  `=>` or a space only one holding a digit or a symbol, or quoted (`token expired` is talk,
  `password = make()` is code); a quoted value up to its quote, with no space in it;
- `Bearer <token>`, `Basic <token>`; URL userinfo (`scheme://user:PASS@host`, and a token as
  the whole userinfo, as in a Sentry DSN); `curl -u user:PASS`, `sshpass -p PASS`,
  `mysql -pPASS` / `--password PASS`;
- what was typed at a password prompt a tool echoed (`Enter passphrase for key '…': VALUE`,
  `[sudo] password for alex: VALUE`, `Enter PEM pass phrase: VALUE`, `Password: VALUE` at a
  line's start): its first word, whatever it holds (a prompt is no talk);
- a URL's signature parameter (`sig=`, `signature=`, `X-Amz-Signature=`): its whole value up
  to the next `&`, percent escapes and all (an Azure SAS token's `%2F` once left 16 characters);
- stored password hashes: the salt and hash of a modular crypt string (`$apr1$`, `$1$`,
  `$2a$/$2b$/$2y$` bcrypt, `$5$`, `$6$`, `$y$`, `$argon2id$`, `$scrypt$`, `$pbkdf2…$`, as
  htpasswd and /etc/shadow keep them) and of an LDAP scheme (`{SHA}`, `{SSHA}`, `{MD5}`, …):
  crackable offline, so as secret as the password;
- random-looking runs: hex of 32 or more (but 40: a git commit id, which people search), one
  case with letters and digits of 20 or more, mixed case with digits of 24 or more (3 digits)
  or 32, base64 over detect-secrets' entropy floor (4.5), runs starting with a common key
  prefix (`sk-`, `ghp_`, `xoxb-`, `AKIA`, `eyJ`, `hf_`, ...), anything over 200 characters
  without a break, and PEM private-key blocks.

Cost (text is read in C, rules run only where something may be): `str.translate` finds the
runs of token characters (`=` and `:` end one, so `NAME=AKIA…` shows its prefix); only a run of
16 or more holding a digit (or 40 long, or with a key prefix) is judged, and of the gitleaks
rules whose keywords appear within 96 characters of it, those naming a provider before an
operator, or whose keyword is in the run. Key words are found with `str.find` and their
patterns tried at that spot only. `re` and the rules are loaded on the first candidate, each
pattern compiled on its first use, so a keystroke whose snippets hold none loads neither.
"""

from __future__ import annotations

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

MARK = "•••"  # what a reader sees in place of a secret
# a token's characters: `=` and `:` are not, so `NAME=VALUE` and `user:pass` are two runs
_TOKEN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/.~"
_RUN = 16  # shorter runs are judged only after a key word
_WINDOW = 96  # how far before a run a provider's name may stand (gitleaks: 50 + 20 + operators)
# token characters to "k", other ASCII to " ", the rest kept: runs are then found by str.find, in C
_MASK = {c: "k" if chr(c) in _TOKEN else " " for c in range(128)}
_ASCII_MASK = bytes(ord(_MASK[c]) if c < 128 else 32 for c in range(256))  # the same, for ASCII text as bytes
_RUN_OF_K = b"k" * _RUN
# ASCII letters to "a", digits to "d", the rest to ".": a run's letters and digits counted in C
_ASCII_KINDS = bytes(97 if chr(c).isalpha() and c < 128 else 100 if chr(c).isdigit() and c < 128 else 46
                     for c in range(256))
_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdef")
_PREFIXES = ("sk-", "pk-", "rk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xoxa-", "xoxb-", "xoxe-",
             "xoxo-", "xoxp-", "xoxr-", "xoxs-", "AKIA", "ASIA", "AIza", "eyJ", "glpat-", "npm_", "hf_", "pypi-",
             "shpat_", "shpss_", "dop_v1_", "doo_v1_", "sntrys_", "sntryu_", "AGE-SECRET-KEY-")
# key words, found with str.find in the lower-case text; each is then matched where it stands
_TRIGGERS = ("pass", "pwd", "secret", "token", "key", "curl", "mysql", "sig=", "signature=")
# `key` alone names too many things: only an api, access, private or secret key is one
_KEY_OWNERS = ("api", "api_", "api-", "access", "access_", "access-", "private", "private_", "secret_")
_SCHEMES = ("bearer ", "basic ", "token ")  # `Authorization: Bearer <token>`
_KEY_NAMES = ("pass", "pwd", "password", "passwd", "secret", "token", "key", "_password", "_token", "_secret", "_key")
_NOT_VALUES = frozenset({"none", "null", "nil", "true", "false", "str", "string", "int", "bool", "bytes", "required",
                         "optional", "undefined", "self", "lambda", "is", "was", "the", "a", "an", "of", "to", "and",
                         "if", "else", "elif", "def", "return", "raise", "not", "in", "for", "while", "with", "import",
                         "class", "open", "pass", "yield", "print", "or", "async", "await", "new", "const", "let",
                         "var", "function", "dict", "list", "any", "object", "float"})


def mask(text: str, mark: str = MARK) -> str:
    """`text` with the value of each secret in it replaced by `mark`."""
    spans = secret_spans(text)
    if not spans:
        return text
    kept, at = [], 0
    for start, end in spans:
        kept += [text[at:start], mark]
        at = end
    return "".join(kept) + text[at:]


def secret_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each secret value in `text`, in order, not overlapping."""
    spans: list[tuple[int, int]] = []
    _private_keys(text, spans)
    low = text.lower()
    if len(low) != len(text):  # a character whose lower case is longer: places would shift
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    if text.isascii():
        _ascii_runs(text, low, spans)
    else:
        for at, end in token_runs(text):
            run = text[at:end]
            if _DIGITS.isdisjoint(run):  # most runs: words, names and paths
                if len(run) >= 40 or (not run.islower() and run.startswith(_PREFIXES)):
                    _judge_run(text, low, at, end, run, spans)
                elif at and text[at - 1] in "$}" and (hashed := _password_hash(text, low, at, end)):
                    spans.append(hashed)
            elif sum(c.isalpha() for c in run) >= 2:
                _judge_run(text, low, at, end, run, spans)
    for word, at in _key_words(text, low):
        if word != "key" or low.endswith(_KEY_OWNERS, max(0, at - 7), at):
            _after_key_word(text, low, at, word, spans)
    if "://" in low and "@" in low:
        at = low.find("://")
        while at >= 0:
            _userinfo(text, at + 3, spans)
            at = low.find("://", at + 3)
    return _merged(spans)


# sessidx/_words.c's `found` and `long_runs`, where the package was built with them and indexing
# asked for them (scan_in_c): a key press, a search and a preview mask a few short texts and
# load no C module
_found: Any = None
_long_runs: Any = None


def scan_in_c() -> None:
    """The key words and the long runs found in one pass in C from now on (in this process, and
    those it forks): indexing masks every message, and looked for each key word in turn (9
    passes of str.find) and at every run of 16 token characters in Python (most are words and
    paths, left alone)."""
    global _found, _long_runs  # noqa: PLW0603 - switched on once
    from sessidx.compiled import compiled

    _found, _long_runs = compiled("_words", "found"), compiled("_words", "long_runs")


def _key_words(text: str, low: str) -> Iterator[tuple[str, int]]:
    """(key word, place) of each of _TRIGGERS in `low` (text in lower case), every place: no key
    word overlaps itself, so each place of one is found by a str.find from the end of the last."""
    if _found is not None:
        for i, at in _found(text, _TRIGGERS):  # the same places, in the text's order
            yield _TRIGGERS[i], at
        return
    for word in _TRIGGERS:
        at = low.find(word)
        while at >= 0:
            yield word, at
            at = low.find(word, at + len(word))


def _ascii_runs(text: str, low: str, spans: list[tuple[int, int]]) -> None:
    """The runs of ASCII text judged as secret_spans judges any: by byte counts of a second
    translation (letters, digits), in C, no run copied out unless judged (most of an index's
    masking time was spent looking at runs that are words and paths)."""
    if _long_runs is not None:  # in C: only the runs the rest may act on
        places = _long_runs(text, _ASCII_MASK, _RUN, _PREFIXES)
        if not places:
            return
        kinds = text.encode("ascii").translate(_ASCII_KINDS)
    else:
        raw = text.encode("ascii")
        places, kinds = _every_long_run(raw.translate(_ASCII_MASK)), raw.translate(_ASCII_KINDS)
    for at, end in places:
        if kinds.find(b"d", at, end) < 0:  # most runs: words, names and paths
            if end - at >= 40 or (text.startswith(_PREFIXES, at, end) and not text[at:end].islower()):
                _judge_run(text, low, at, end, text[at:end], spans)
            elif at and text[at - 1] in "$}" and (hashed := _password_hash(text, low, at, end)):
                spans.append(hashed)
        elif kinds.count(b"a", at, end) >= 2:
            _judge_run(text, low, at, end, text[at:end], spans)


def _every_long_run(runs: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of each run of at least _RUN token characters in `runs` (_ASCII_MASK's)."""
    at = runs.find(_RUN_OF_K)
    while at >= 0:
        end = runs.find(b" ", at)
        if end < 0:
            end = len(runs)
        yield at, end
        at = runs.find(_RUN_OF_K, end)


def token_runs(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each run of at least _RUN token characters, found with str.translate
    and str.find (in C: a regex takes 4 times as long); ASCII text by bytes.translate, a table
    lookup per byte (twice as fast as str.translate's)."""
    if text.isascii():
        yield from _every_long_run(text.encode("ascii").translate(_ASCII_MASK))
        return
    masked = text.translate(_MASK)
    plain = masked.isascii()
    at = masked.find("k" * _RUN)
    while at >= 0:  # the first _RUN k's after a run's end start the next long run
        end = masked.find(" ", at) if plain else at + _RUN
        if end < 0:
            end = len(masked)
        while not plain and end < len(masked) and masked[end] == "k":  # a character not ASCII ends it too
            end += 1
        yield at, end
        at = masked.find("k" * _RUN, end)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _private_keys(text: str, spans: list[tuple[int, int]]) -> None:
    """A PEM private-key block, from its BEGIN line to its END line (or the text's end); an END
    line alone ends a block that began before the text (a snippet's region cut into it)."""
    key = text.find("PRIVATE KEY-----")
    while key >= 0:
        if text.startswith("-----END ", text.rfind("-----", 0, key)):
            spans.append((0, key + 16))  # not to the text's end: what follows the block is kept
            key = text.find("PRIVATE KEY-----", key + 16)
            continue
        begin = text.rfind("-----BEGIN ", 0, key)
        end_line = text.find("-----END ", key)
        closing = text.find("-----", end_line + 9) if end_line >= 0 else -1
        end = closing + 5 if closing >= 0 else len(text)
        spans.append((begin if begin >= 0 else key, end))
        key = text.find("PRIVATE KEY-----", end)


def _judge_run(text: str, low: str, start: int, end: int, run: str, spans: list[tuple[int, int]]) -> None:
    if start and text[start - 1] in "$}" and (hashed := _password_hash(text, low, start, end)):
        spans.append(hashed)
        return
    if _looks_random(run) or low.endswith(_SCHEMES, max(0, start - 8), start):
        core = run.strip("-_./+~")
        first = start + run.find(core)
        spans.append((first, first + len(core)))
        return
    _gitleaks(text, low, start, end, spans)


def _looks_random(run: str) -> bool:
    if run.startswith(_PREFIXES) or len(run) >= 200:  # a known key format, or a payload
        return True
    for part in run.replace("_", "-").replace(".", "-").replace("/", "-").split("-"):  # `key-<hex>`, base64
        if len(part) < 20 or not part.isalnum():
            continue
        letters = sum(c.isalpha() for c in part)
        digits = len(part) - letters
        if part.islower() or part.isupper():  # one case: hex, or letters and digits
            if len(part) >= 32 and _HEX.issuperset(part.lower()) and letters and digits:
                if len(part) != 40:  # a git commit id is searched for, not secret
                    return True
            elif letters >= 4 and digits >= 4:
                return True
        elif digits >= 3 and len(part) >= 24 or digits and len(part) >= 32:  # mixed case and digits
            return True
    # base64 with its slashes: random, unless a path (detect-secrets' floor for base64 strings: 4.5)
    return len(run) >= 32 and ("/" in run or "+" in run) and run.lower() != run and _entropy(run) > 4.5


# --- gitleaks' rules, compiled on first use, each only where one of its keywords is ---------

_SEMI_GENERIC = r"(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)"
_rules: Any = None  # keyword -> [(compiled regex, secret group, entropy)]
_all_keywords: tuple[str, ...] = ()


def _load() -> Any:
    global _rules, _all_keywords
    if _rules is None:
        from sessidx.gitleaks_rules import RULES

        by_keyword: dict[str, list[tuple[str, int, float, bool]]] = {}
        for _id, keywords, regex, group, entropy in RULES:
            named = _SEMI_GENERIC in regex  # gitleaks' `<provider name> <operator> <value>` rules
            for keyword in keywords:
                by_keyword.setdefault(keyword, []).append((regex, group, entropy, named))
        _rules = by_keyword
        _all_keywords = tuple(by_keyword)
    return _rules


_compiled: dict[str, Any] = {}


def _compile(regex: str) -> Any:
    pattern = _compiled.get(regex)
    if pattern is None:
        import re

        pattern = _compiled[regex] = re.compile(regex)
    return pattern


_windows = 0  # windows looked at so far: past _TRIE_AFTER, the keywords are found by one pattern
_TRIE_AFTER = 200  # compiling that pattern costs more than a keystroke's few windows (measured: 30 ms)


def _gitleaks(text: str, low: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    """The rules that may match at the run text[start:end]: a provider's name before it (up to
    _WINDOW) when an operator (`=`, `:`, `>`, `,`, `|`) stands just before the run, else a
    keyword inside the run itself, as a key format's prefix is."""
    global _windows
    rules = _load()
    _windows += 1
    lo, hi = max(0, start - _WINDOW), min(len(text), end + 8)
    if _windows > _TRIE_AFTER:
        keywords: Any = {m.group() for m in _keyword_finder().finditer(low, lo, hi)}
    else:
        window = low[lo:hi]
        keywords = [k for k in _all_keywords if k in window]
    assigned = any(c in text[max(0, start - 10):start] for c in "=:>,|")
    tried = set()
    for keyword in keywords:
        inside = keyword in low[max(0, start - 2):end]
        for regex, group, entropy, named in rules[keyword]:
            if regex in tried or not (inside or named and assigned):
                continue
            tried.add(regex)
            for m in _compile(regex).finditer(text, lo, hi):
                _add_secret(m, group, entropy, spans)


_finder: Any = None


def _keyword_finder() -> Any:
    """One pattern finding every rule keyword (lower case), as a trie: Python's `re` tries the
    branches of an alternation one by one, so shared beginnings are taken once."""
    global _finder
    if _finder is None:
        import re

        trie: dict[str, Any] = {}
        for keyword in _load():
            node = trie
            for c in keyword:
                node = node.setdefault(c, {})
            node[""] = {}

        def pattern(node: dict[str, Any]) -> str:
            branches = [re.escape(c) + pattern(sub) for c, sub in sorted(node.items()) if c]
            if not branches:
                return ""
            body = branches[0] if len(branches) == 1 and "" not in node else "(?:" + "|".join(branches) + ")"
            return body + ("?" if "" in node else "")

        _finder = re.compile(pattern(trie))
    return _finder


def _add_secret(m: Any, group: int, entropy: float, spans: list[tuple[int, int]]) -> None:
    """gitleaks' choice of the secret: the rule's group, else its first non-empty group, else the match."""
    if group:
        span = m.span(group)
    else:
        span = next((m.span(i) for i in range(1, (m.re.groups or 0) + 1) if m.group(i)), m.span())
    if span[0] < 0:
        return
    secret = m.string[span[0]:span[1]]
    if entropy and _entropy(secret) <= entropy:
        return
    spans.append(span)


def _entropy(s: str) -> float:
    import math

    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in (s.count(ch) for ch in set(s))) if n else 0.0


# --- key words and command-line idioms, matched where the word stands -----------------------

# a quoted value holds no space: `'Password: ' and then '` is two strings, not one
_VALUE = (r"""(?:"(?P<dq>[^"\s]{1,200})"|'(?P<sq>[^'\s]{1,200})'|`(?P<bq>[^`\s]{1,200})`"""
          r"""|(?P<v>[^\s"'`,;()<>\[\]{}]{1,200}))""")
_LITERAL = r"""["'`]|[^\s"'`]*[0-9!@#$%^&*~+=]"""  # quoted, or holding a digit or a symbol
_PATTERNS = {
    # the key word, the rest of its name (DB_PASSWORD_FILE, api_key_id), an operator, the value;
    # with spaces around the operator (code: `password = make()`) only a literal-looking value
    "assign": (r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|key)s?[\w.-]{0,24}?[\"']?"
               r"(?:=(?![=\s])|[ \t]{0,3}(?:=>|:=|=(?!=)|:(?!:))[ \t]{0,3}(?=" + _LITERAL + r"))"
               r"(?:(?:basic|bearer|token)[ \t]+)?" + _VALUE),
    "spaced": (r"(?:password|passwd|passphrase|pwd|secret|token)s?[ \t]+(?:is[ \t]+)?"
               r"(?=" + _LITERAL + r")(?!0x)(?P<v>[^\s\"'`,;()<>\[\]{}]{8,200})"),
    "sshpass": r"pass[ \t]+-p[ \t]*" + _VALUE,
    "option": r"(?:^|[ \t])(?:-p|--password[= ]|-u|--user[= ])[ \t]*" + _VALUE,
    "userinfo": r"(?P<user>[^\s:/@?#\"'<>]{0,200})(?::(?P<v>[^\s/@?#\"'<>]{1,200}))?@[\w.-]",
    # a prompt: the key word, `for <whom>` (quoted parts may hold a colon) or `(<a hint>)`, the
    # colon, and what was typed (its first word)
    "prompt": (r"(?:password|passphrase|pass[ \t]+phrase)"
               r"(?P<clause>[ \t]+(?:for|of|again)\b(?:'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|[^:\n'\"]){0,120}?"
               r"|[ \t]*\([^)\n]{0,80}\))?[ \t]*:[ \t]*(?P<v>[^\s\"'`]{1,200})"),
    # what stands before the key word of a prompt: a verb of asking, or sudo's mark
    "asked": (r"(?:^|\W)(?:enter|re-?enter|retype|repeat|confirm|verify|new|old|current|vault|host|\[sudo\])"
              r"(?:[ \t]+[\w-]+){0,2}[ \t]+$"),
    "signature": r"(?:sig|signature)=(?P<v>[^&\s\"'`<>#;,()\[\]{}]{16,})",
    # `$id$`, then any `param$` and `salt$` parts, up to the run: a modular crypt string
    "crypt": (r"(?:^|[\s:'\"=,;])\$(?:1|apr1|2[abxy]|5|6|7|y|gy|md5|sha1|argon2(?:id|i|d)|scrypt"
              r"|pbkdf2(?:-sha(?:1|256|512))?)\$(?:[^\s$'\"]{0,120}\$){0,4}$"),
    "scheme": r"\{(?:s?sha(?:256|384|512)?|s?md5|crypt|pbkdf2[\w-]{0,20}|argon2|bcrypt)\}$",
}
_CASELESS = ("assign", "spaced", "sshpass", "prompt", "asked", "signature", "scheme")
_patterns: dict[str, Any] = {}


def _pattern(name: str) -> Any:
    """Compiled on first use, each alone: a keystroke pays only for what its snippets need."""
    if name not in _patterns:
        import re

        _patterns[name] = re.compile(_PATTERNS[name], re.I if name in _CASELESS else 0)
    return _patterns[name]


def warm() -> None:
    """The patterns masking an index's worth of text comes to, compiled now: before a first
    index forks its readers, which then share them rather than each compiling its own."""
    for name in _PATTERNS:
        _pattern(name)
    _keyword_finder()


def _value_span(m: Any) -> tuple[int, int] | None:
    for name in ("dq", "sq", "bq", "v"):
        if name in m.re.groupindex and m.group(name):
            value = m.group(name)
            if value.lower() in _NOT_VALUES or value[0] in "$%{<#" or set(value) <= {"*", "x", "X", "•", "."}:
                return None
            if name == "v" and m.string[m.end():m.end() + 1] in ("(", "["):  # a call or a lookup, not a value
                return None
            start, end = m.span(name)
            return start, end
    return None


def _after_key_word(text: str, low: str, at: int, word: str, spans: list[tuple[int, int]]) -> None:
    if word in ("curl", "mysql"):  # `-u user:PASS`, `-pPASS`: options on the same line
        line_end = text.find("\n", at)
        line_end = len(text) if line_end < 0 else line_end
        option = _pattern("option")
        for m in option.finditer(text, at, line_end):
            span = _value_span(m)
            if span:
                value = text[span[0]:span[1]]
                if "-u" in m.group() or "--user" in m.group():  # user:password: only the password
                    colon = value.find(":")
                    if colon < 0:
                        continue
                    span = (span[0] + colon + 1, span[1])
                spans.append(span)
        return
    if word == "pass" and low.startswith("sshpass", at - 3) and (m := _pattern("sshpass").match(text, at)):
        if span := _value_span(m):
            spans.append(span)
        return
    if word in ("sig=", "signature="):  # a base64 value may begin with `%2F`: no _value_span
        m = _pattern("signature").match(text, at)
        value = m.group("v") if m else ""
        called = text[m.end():m.end() + 1] in ("(", "[") if m else True  # `signature=inspect.signature(f)`
        if m and value[0] not in "${<" and not _DIGITS.isdisjoint(value) and not called:
            spans.append(m.span("v"))  # (a base64 signature holds a digit)
        return
    if word == "pass" and text.find(":", at, at + 240) >= 0 and (span := _prompted(text, low, at)):
        spans.append(span)
        return
    window = text[at:at + 40]  # both need what follows the key word within reach: not worth a match without
    for name in ("assign", "spaced"):
        if (name == "assign" and "=" not in window and ":" not in window
                or name == "spaced" and " " not in window[:12] and "\t" not in window[:12]):
            continue
        m = _pattern(name).match(text, at)
        if m and (span := _value_span(m)):
            value = text[span[0]:span[1]]
            named = value.lower().rsplit(".", 1)[-1]  # `password=password`, `token=self.token`: a name
            if word == "pwd" and value[:1] in "/~." or named in _KEY_NAMES or named.endswith(_KEY_NAMES[7:]):
                return  # $PWD is the current folder
            spans.append(span)
            return


def _prompted(text: str, low: str, at: int) -> tuple[int, int] | None:
    """What was typed at a password prompt whose key word is at `at`: a prompt is one asking
    (`Enter`, `Retype`, `[sudo]` before it), saying for what (`for key '…'`, `(empty for no
    passphrase)`), or `Password:` as a line begins (a line joined into one, as a snippet is,
    keeps its capital). Then any value is one; else the key-word rules judge it."""
    m = _pattern("prompt").match(text, at)
    if not m:
        return None
    asking = m.group("clause") or _pattern("asked").search(low, max(0, at - 40), at)
    if not asking and not (text[at] == "P" and (at == 0 or text[at - 1] in " \t\r\n")):
        return None
    return _value_span(m)


def _password_hash(text: str, low: str, start: int, end: int) -> tuple[int, int] | None:
    """The run text[start:end] as the hash of a stored password, with its salt: after a modular
    crypt `$id$` (and its params), masked from after the id; after an LDAP `{SCHEME}`, itself."""
    if text[start - 1] == "}":
        brace = text.rfind("{", max(0, start - 16), start)
        return (start, end) if brace >= 0 and _pattern("scheme").match(text, brace, start) else None
    m = _pattern("crypt").search(text, max(0, start - 160), start)
    if not m:
        return None
    after_id = text.index("$", m.start() + 2) + 1  # past `$id$`
    return after_id, end


def _userinfo(text: str, at: int, spans: list[tuple[int, int]]) -> None:
    """`scheme://user:PASS@host`: the password; a token as the whole userinfo (a Sentry DSN): it."""
    m = _pattern("userinfo").match(text, at)
    if not m:
        return
    if m.group("v"):
        spans.append(m.span("v"))
    elif len(m.group("user")) >= _RUN and not _DIGITS.isdisjoint(m.group("user")):
        spans.append(m.span("user"))
