"""The registry of agent apps: adding an app is one module and one line here.

`APPS` (every app, in this order) and `HOME_VARS` import every app module on first
use; `app_named` imports only the one asked for (a keystroke in the picker's content mode
needs one app to read a snippet, not sixteen).
"""

from __future__ import annotations

TYPE_CHECKING = False  # a key-press module: see the start-up boundary in cli.py
if TYPE_CHECKING:
    from sessidx.apps.base import App

    APPS: dict[str, App]
    HOME_VARS: list[str]  # every variable that moves an app's data

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


def app_named(name: str) -> App | None:
    where = _WHERE.get(name)
    if where is None:
        return None
    module = __import__(f"sessidx.apps.{where[0]}", fromlist=[where[1]])
    app: App = getattr(module, where[1])
    return app


def __getattr__(name: str) -> object:
    if name not in ("APPS", "HOME_VARS"):
        raise AttributeError(f"module 'sessidx.apps' has no attribute {name!r}")
    apps = {n: a for n in _WHERE if (a := app_named(n)) is not None}
    globals().update(APPS=apps, HOME_VARS=sorted({var for app in apps.values() for var in app.home_vars}))
    return globals()[name]
