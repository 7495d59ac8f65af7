"""Secret masking: API keys, tokens and private keys are never indexed nor shown."""

from __future__ import annotations

# API keys, tokens and private keys are never indexed nor shown. Every such secret is a long
# run of key characters, so only those runs are looked at, each judged in Python.
_KEY = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=.~"
_RUN = 16  # shorter runs are words, not keys
# key characters to "k", other ASCII to " ", the rest kept: runs are then found by str.find,
# in C (a regex takes 4 times as long, and loading `re` costs a keystroke 3 ms)
_MASK = {c: "k" if chr(c) in _KEY else " " for c in range(128)}
_SECRET_PREFIXES = ("sk-", "pk-", "rk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xoxa-", "xoxb-",
                    "xoxo-", "xoxp-", "xoxr-", "xoxs-", "AKIA", "AIza", "eyJ", "glpat-", "npm_", "hf_")
_SECRET_CONTEXT = ("bearer", "token", "key", "secret", "password", "passwd", "authorization")
_DIGITS = frozenset("0123456789")


def _is_secret(run: str, before: str) -> bool:
    if run.startswith(_SECRET_PREFIXES) or len(run) >= 200:  # a known key format, or a payload
        return True
    mixed = run.lower() != run and run.upper() != run and not _DIGITS.isdisjoint(run)
    if mixed and len(run) >= 32:  # random-looking (a hex digest, all lower case, is kept: people search those)
        return True
    return mixed and any(word in before.lower() for word in _SECRET_CONTEXT)


def key_runs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each run of at least _RUN key characters."""
    mask = text.translate(_MASK)
    plain = mask.isascii()
    runs = []
    at = mask.find("k" * _RUN)
    while at >= 0:  # the first _RUN k's after a run's end start the next long run
        end = mask.find(" ", at) if plain else at + _RUN
        if end < 0:
            end = len(mask)
        while not plain and end < len(mask) and mask[end] == "k":  # a character not ASCII ends it too
            end += 1
        runs.append((at, end))
        at = mask.find("k" * _RUN, end)
    return runs


def without_secrets(text: str, mark: str = " ") -> str:
    """`text` with each secret-looking run of characters, and each private-key block, replaced by `mark`."""
    while (key := text.find("PRIVATE KEY-----")) >= 0:  # a PEM block: from its BEGIN line to its END line
        begin = text.rfind("-----BEGIN ", 0, key)
        end_line = text.find("-----END ", key)
        closing = text.find("-----", end_line + 9) if end_line >= 0 else -1
        text = text[:begin if begin >= 0 else key] + mark + (text[closing + 5:] if closing >= 0 else "")
    secrets = [(start, end) for start, end in key_runs(text)
               if _is_secret(text[start:end], text[max(0, start - 24):start])]
    if not secrets:
        return text
    kept, at = [], 0
    for start, end in secrets:
        kept += [text[at:start], mark]
        at = end
    return "".join(kept) + text[at:]
