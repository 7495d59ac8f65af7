"""Every environment variable sessidx reads is read here.

Where each app keeps its data: the app's own override wins (`CLAUDE_CONFIG_DIR`,
`CODEX_HOME`, ...), then `SESSIDX_HOME` (a folder holding `.claude`, `.codex`, ...,
for fixtures and tests), then the real home. When no app has any data and
`SESSIDX_HOME` is unset, the bundled demo home (`fixtures/home`) is shown instead,
with a note on stderr, so a fresh machine still has something to look at.
"""

from __future__ import annotations

import os

from sessidx.model import Fields

DEMO_HOME = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "home")


class Env(Fields):
    """A snapshot of the environment: adapters read paths from it, never from os.environ."""

    __slots__ = ("home", "vars", "demo")

    def __init__(self, home: str, vars: dict[str, str], demo: bool = False) -> None:
        self.home = home
        self.vars = vars
        self.demo = demo

    def get(self, name: str) -> str | None:
        value = self.vars.get(name)
        return value if value else None

    def path(self, override: str | None, *default: str) -> str:
        """The app's own override variable if set, else `home/<default...>`."""
        if override and (value := self.get(override)):
            return os.path.expanduser(value)
        return os.path.join(self.home, *default)


    def data_home(self) -> str:
        """XDG data folder: `SESSIDX_HOME/.local/share` when set (it points every app at one
        home), else `$XDG_DATA_HOME`, else `~/.local/share`."""
        if self.get("SESSIDX_HOME") or not self.get("XDG_DATA_HOME"):
            return os.path.join(self.home, ".local", "share")
        return os.path.expanduser(self.vars["XDG_DATA_HOME"])


def current_env(environ: dict[str, str] | None = None) -> Env:
    environ = dict(os.environ if environ is None else environ)
    home = environ.get("SESSIDX_HOME") or environ.get("HOME") or os.path.expanduser("~")
    return Env(home=os.path.expanduser(home), vars=environ)


def demo_env(env: Env) -> Env:
    """The same environment pointed at the bundled demo home, app overrides dropped."""
    kept = {k: v for k, v in env.vars.items() if k in ("HOME", "PATH", "XDG_CACHE_HOME", "TERM")}
    return Env(home=DEMO_HOME, vars=kept, demo=True)
