"""A session key's form, in one place: `app:id` is this machine's, `@host/app:id` a host's
(what the picker's rows carry after their tab, and what its keys and `resume` are given)."""

from __future__ import annotations

HOST_MARK = "@"  # no local key starts with it, and no host name holds a `/`


def on_host(key: str) -> bool:
    """Whether `key` names a host's session (`@host/app:id`)."""
    return key.startswith(HOST_MARK)


def host_key(host: str, app: str, sid: str) -> str:
    return f"{HOST_MARK}{host}/{app}:{sid}"


def split_host_key(key: str) -> tuple[str, str, str] | None:
    """(host, app, id) of a key made by `host_key`, or None."""
    if not on_host(key):
        return None
    host, _, rest = key[1:].partition("/")
    app, _, sid = rest.partition(":")
    return (host, app, sid) if host and app and sid else None
