"""The registry of agent apps: adding an app is one module and one line here.

`APPS` (every app, in this order) imports every app module on first use; `app_named`
imports only the one asked for (a keystroke in the picker's content mode needs one app to read
a snippet, a move in the picker one app to plan its resume, not twenty-five). `HOME_VARS`, which
names the index's cache file, is written out here so that finding the cache loads no app: a
test checks it against the apps' own `home_vars`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from sessidx.apps.base import App

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

# Every variable that moves an app's data: the union of the apps' `home_vars`, sorted.
HOME_VARS = [
    "AMP_HOME", "CLAUDE_CONFIG_DIR", "CLINE_DATA_DIR", "CLINE_DIR", "CODEX_HOME", "CODEX_SQLITE_HOME",
    "CONTINUE_GLOBAL_DIR", "COPILOT_HOME", "CRUSH_GLOBAL_DATA", "GEMINI_CLI_HOME", "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
    "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "GOOSE_PATH_ROOT", "HERMES_HOME", "KIMI_CODE_HOME", "KIMI_SHARE_DIR",
    "OPENHANDS_CONVERSATIONS_DIR", "OPENHANDS_PERSISTENCE_DIR", "PI_CODING_AGENT_DIR", "QODER_CONFIG_DIR",
    "QWEN_HOME", "VIBE_HOME", "XDG_DATA_HOME",
]


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
