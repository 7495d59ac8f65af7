"""Quote words for the shell that will run them: bash/zsh share POSIX rules, fish has its own.

Folder names may hold anything a file system allows: quotes, `$(...)`, backticks, `;`, `*`,
tabs, newlines, a leading `-`, bytes that are not UTF-8 (kept as surrogate escapes by Python).
"""

from __future__ import annotations

# Words left bare: every character from `_SAFE_REST`, the first one from `_SAFE_FIRST`. No
# leading `=` (zsh expands `=cmd` to a path) or `%` (fish 2.x's process expansion). Sets, not a
# regex: the preview, on every arrow key, quotes a command line and need not load `re`.
_SAFE_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@+:,./-")
_SAFE_REST = _SAFE_FIRST | {"%", "="}
SHELLS = ("bash", "zsh", "fish")


def _bare(word: str) -> bool:
    return bool(word) and word[0] in _SAFE_FIRST and _SAFE_REST.issuperset(word)


def _is_plain(ch: str) -> bool:
    o = ord(ch)
    return o >= 0x20 and o != 0x7F and not (0x80 <= o < 0xA0) and not (0xDC80 <= o <= 0xDCFF)


def _escape_code(ch: str) -> str:
    """Byte escapes of the character's UTF-8 form (or of the raw byte it stands for):
    the same in bash, zsh and fish, and independent of the locale."""
    return "".join(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogateescape"))


def quote_posix(word: str) -> str:
    """bash/zsh: bare when safe, '...' normally, $'...' when control bytes must survive."""
    if _bare(word):
        return word
    if all(_is_plain(ch) for ch in word):
        return "'" + word.replace("'", "'\\''") + "'"
    out = []
    for ch in word:
        if ch in "\\'":
            out.append("\\" + ch)
        elif _is_plain(ch):
            out.append(ch)
        else:
            out.append(_escape_code(ch))
    return "$'" + "".join(out) + "'"


def quote_fish(word: str) -> str:
    """fish: '...' escapes only \\ and '; control bytes go outside the quotes as \\xHH."""
    if _bare(word):
        return word
    out, run = [], []
    for ch in word:
        if _is_plain(ch):
            run.append("\\" + ch if ch in "\\'" else ch)
            continue
        if run:
            out.append("'" + "".join(run) + "'")
            run = []
        out.append(_escape_code(ch))
    if run or not out:
        out.append("'" + "".join(run) + "'")
    return "".join(out)


def quote(word: str, shell: str) -> str:
    return quote_fish(word) if shell == "fish" else quote_posix(word)


def command_line(argv: list[str], shell: str) -> str:
    return " ".join(quote(w, shell) for w in argv)


def cd_and_run(cwd: str, argv: list[str], shell: str) -> str:
    """`builtin cd -- DIR && CMD ...`: the line the widget places on the prompt and runs.

    In bash and zsh the line is typed input, so a user alias of `builtin` or `cd` would
    apply: `\\builtin` cannot be alias-expanded. fish has no aliases and reserves `builtin`.
    """
    cd = "builtin" if shell == "fish" else "\\builtin"
    return f"{cd} cd -- {quote(cwd, shell)} && {command_line(argv, shell)}"


def sh_quote(word: str) -> str:
    """For sh, which runs fzf's child commands: one pair of single quotes, always."""
    return "'" + word.replace("'", "'\\''") + "'"


def quote_portable(word: str) -> str:
    """One word read alike by POSIX sh (dash too: no `$'...'`) and fish: what a remote login
    shell, whichever of them it is, gets from ssh. Runs without `'` or `\\` go in single quotes
    (which hold newlines and control bytes as they are in both), and each `'` or `\\` stands
    outside them escaped with a backslash, which both shells read the same way."""
    if _bare(word):
        return word
    out: list[str] = []
    run: list[str] = []
    for ch in word:
        if ch in "'\\":
            if run:
                out.append("'" + "".join(run) + "'")
                run = []
            out.append("\\" + ch)
        else:
            run.append(ch)
    if run or not out:
        out.append("'" + "".join(run) + "'")
    return "".join(out)
