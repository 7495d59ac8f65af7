"""The registry of agent apps: adding an app is one module and one line here."""

from __future__ import annotations

from sessidx.apps import (
    amp,
    auggie,
    claude,
    cline,
    cn,
    codex,
    copilot,
    crush,
    droid,
    gemini,
    goose,
    kimi,
    opencode,
    qwen,
    vibe,
)

TYPE_CHECKING = False  # see model.Fields
if TYPE_CHECKING:
    from sessidx.apps.base import App

APPS: dict[str, App] = {
    "claude": claude.APP,
    "codex": codex.APP,
    "gemini": gemini.APP,
    "opencode": opencode.APP,
    "kilo": opencode.KILO,
    "copilot": copilot.APP,
    "cline": cline.APP,
    "qwen": qwen.APP,
    "droid": droid.APP,
    "kimi": kimi.APP,
    "vibe": vibe.APP,
    "cn": cn.APP,
    "auggie": auggie.APP,
    "crush": crush.APP,
    "goose": goose.APP,
    "amp": amp.APP,
}

APP_NAMES = list(APPS)
HOME_VARS = sorted({var for app in APPS.values() for var in app.home_vars})  # every variable that moves data
