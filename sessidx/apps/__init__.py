"""The registry of agent apps: adding an app is one module and one line here.

`APPS` (every app, in this order) imports every app module on first use; `app_named`
imports only the one asked for (a keystroke in the picker's content mode needs one app to read
a snippet, a move in the picker one app to plan its resume, not twenty-five); `present` only the
apps whose homes exist (what indexing the machine needs). Each app's variables and folders are
written out here (`HOMES`, and `HOME_VARS`, which names the index's cache file) so that finding
the cache or the apps present loads no app: a test checks them against the apps' own.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from sessidx.apps.base import App
    from sessidx.config import Env

    APPS: dict[str, App]

# name: (module in sessidx/apps, the attribute holding the app)
_WHERE = {
    "claude": ("claude", "APP"),
    "codex": ("codex", "APP"),
    "gemini": ("gemini", "APP"),
    "opencode": ("opencode", "APP"),
    "kilo": ("opencode", "KILO"),
    "copilot": ("copilot", "APP"),
    "cline": ("cline", "APP"),
    "qwen": ("qwen", "APP"),
    "droid": ("droid", "APP"),
    "kimi": ("kimi", "APP"),
    "kimicode": ("kimicode", "APP"),
    "vibe": ("vibe", "APP"),
    "cn": ("cn", "APP"),
    "auggie": ("auggie", "APP"),
    "crush": ("crush", "APP"),
    "goose": ("goose", "APP"),
    "amp": ("amp", "APP"),
    "cursor": ("cursor", "APP"),
    "kiro": ("kiro", "KIRO"),
    "q": ("kiro", "AMAZON_Q"),
    "qoder": ("qoder", "APP"),
    "aider": ("aider", "APP"),
    "pi": ("pi", "APP"),
    "hermes": ("hermes", "APP"),
    "openhands": ("openhands", "APP"),
    "gptme": ("gptme", "APP"),
}

NAMES = tuple(_WHERE)  # every app's name, in the registry's order, without importing an app module

# name: (the variables that move its data, its default folders under the home), as each app's
# own `home_vars` and `home_dirs` say (a test checks): `present` decides from these which apps
# this machine has without importing one. An app with no folder of its own (Aider: a file in
# the folders the others' sessions are in) is present when any other app is.
_LOCAL_SHARE = os.path.join(".local", "share")
HOMES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "claude": (("CLAUDE_CONFIG_DIR",), (".claude",)),
    "codex": (("CODEX_HOME", "CODEX_SQLITE_HOME"), (".codex",)),
    "gemini": (("GEMINI_CLI_HOME", "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "GEMINI_CLI_SYSTEM_DEFAULTS_PATH"), (".gemini",)),
    "opencode": (("XDG_DATA_HOME",), (os.path.join(_LOCAL_SHARE, "opencode"),)),
    "kilo": (("XDG_DATA_HOME",), (os.path.join(_LOCAL_SHARE, "kilo"),)),
    "copilot": (("COPILOT_HOME",), (".copilot",)),
    "cline": (("CLINE_DIR", "CLINE_DATA_DIR"), (".cline",)),
    "qwen": (("QWEN_HOME",), (".qwen",)),
    "droid": ((), (".factory",)),
    "kimi": (("KIMI_SHARE_DIR",), (".kimi",)),
    "kimicode": (("KIMI_CODE_HOME",), (".kimi-code",)),
    "vibe": (("VIBE_HOME",), (".vibe",)),
    "cn": (("CONTINUE_GLOBAL_DIR",), (".continue",)),
    "auggie": ((), (".augment",)),
    "crush": (("CRUSH_GLOBAL_DATA", "XDG_DATA_HOME"), (os.path.join(_LOCAL_SHARE, "crush"),)),
    "goose": (("GOOSE_PATH_ROOT", "XDG_DATA_HOME"), (os.path.join(_LOCAL_SHARE, "goose"),)),
    "amp": (("AMP_HOME", "XDG_DATA_HOME"), (os.path.join(_LOCAL_SHARE, "amp"),)),
    "cursor": ((), (".cursor",)),
    "kiro": (("XDG_DATA_HOME",), (".kiro", os.path.join(_LOCAL_SHARE, "kiro-cli"))),
    "q": (("XDG_DATA_HOME",), (os.path.join(_LOCAL_SHARE, "amazon-q"),)),
    "qoder": (("QODER_CONFIG_DIR",), (".qoder",)),
    "aider": ((), ()),
    "pi": (("PI_CODING_AGENT_DIR",), (os.path.join(".pi", "agent"),)),
    "hermes": (("HERMES_HOME",), (".hermes",)),
    "openhands": (("OPENHANDS_CONVERSATIONS_DIR", "OPENHANDS_PERSISTENCE_DIR"),
                  (os.path.join(".openhands", "conversations"),)),
    "gptme": (("XDG_DATA_HOME",), (os.path.join(_LOCAL_SHARE, "gptme"),)),
}

# Every variable that moves an app's data: it names the index's cache file.
HOME_VARS = sorted({var for variables, _ in HOMES.values() for var in variables})


def _has_home(env: Env, name: str) -> bool:
    """Whether one of the app's default folders exists, or a variable of its is set to a path
    that exists (an XDG one: the app's folder in it). Erring towards yes costs a module load."""
    variables, folders = HOMES[name]
    for var in variables:
        value = env.get(var)
        if value is None:
            continue
        for place in {value, os.path.expanduser(value)}:  # some apps expand a `~` in it, some do not
            if var.startswith("XDG_"):
                if any(os.path.exists(os.path.join(place, os.path.relpath(d, _LOCAL_SHARE)))
                       for d in folders if d.startswith(_LOCAL_SHARE + os.sep)):
                    return True
            elif os.path.exists(place):
                return True
    return any(os.path.isdir(os.path.join(env.home, d)) for d in folders)


def present_names(env: Env) -> list[str]:
    """The apps this machine has (see HOMES), in the registry's order, without importing one."""
    found = [name for name in NAMES if HOMES[name] != ((), ()) and _has_home(env, name)]
    return [name for name in NAMES if name in found or (found and HOMES[name] == ((), ()))]


def present(env: Env) -> list[App]:
    """The apps this machine has: only their modules are loaded (`sessidx build` on a home of two
    apps need not import twenty-five, nor sqlite3)."""
    return [app for name in present_names(env) if (app := app_named(name)) is not None]


def app_named(name: str) -> App | None:
    where = _WHERE.get(name)
    if where is None:
        return None
    module = __import__(f"sessidx.apps.{where[0]}", fromlist=[where[1]])
    app: App = getattr(module, where[1])
    return app


def __getattr__(name: str) -> object:
    if name != "APPS":
        raise AttributeError(f"module 'sessidx.apps' has no attribute {name!r}")
    apps = {n: a for n in _WHERE if (a := app_named(n)) is not None}
    globals().update(APPS=apps)
    return apps
