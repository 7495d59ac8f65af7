"""Dates a person types for --since and --until: `2d`, `1w`, a date. (No datetime: the picker
calls this on a key press.)"""

from __future__ import annotations

import time

from sessidx.errors import SessidxError

_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "mo": 30 * 86400, "y": 365 * 86400}
HELP = "how long ago (30m, 12h, 2d, 1w, 3mo, 1y), a date (2026-11-20), today or yesterday"


def moment_ms(text: str, until: bool = False, now: float | None = None) -> int:
    """The moment `text` names, in ms since the epoch. How long ago counts whole units as the age
    column does (render.age: `1d` is 24 to 48 hours ago): since `1d` is from 48 hours ago, until
    `1d` to 24 hours ago. A day (a date, today, yesterday) starts at local midnight; as an --until
    it ends at the next one, so `--until 2026-11-20` keeps that day."""
    now = time.time() if now is None else now
    word = text.strip().lower()
    number = word.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = word[len(number):]
    if number.isdigit() and unit in _UNITS:
        # What the age column says: `1d` is a row whose age reads 1d (24 to 48 hours), so a
        # --since of 1d keeps every row reading 1d or less; an --until of 1d, those reading 1d or more
        units = int(number) if until else int(number) + 1
        return int((now - units * _UNITS[unit]) * 1000) + (0 if until else 1)
    if word in ("today", "yesterday"):
        day = time.localtime(now - (86400 if word == "yesterday" else 0))
        start = time.mktime((day.tm_year, day.tm_mon, day.tm_mday, 0, 0, 0, 0, 0, -1))
    else:
        parts = word.split("-")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise SessidxError(f"not a time: {text!r} (expected {HELP})")
        year, month, day_of_month = map(int, parts)
        if not (1 <= month <= 12 and 1 <= day_of_month <= 31):
            raise SessidxError(f"not a date: {text!r}")
        start = time.mktime((year, month, day_of_month, 0, 0, 0, 0, 0, -1))
    if until:  # the day's end: the next midnight (mktime carries day 32 into the next month)
        t = time.localtime(start)
        start = time.mktime((t.tm_year, t.tm_mon, t.tm_mday + 1, 0, 0, 0, 0, 0, -1))
    return int(start * 1000)


def within(mtime_ms: int, since: int | None, until: int | None) -> bool:
    return (since is None or mtime_ms >= since) and (until is None or mtime_ms < until)


def bounds(since: str | None, until: str | None) -> tuple[int | None, int | None]:
    """(since, until) in ms, for the commands' --since and --until."""
    return (moment_ms(since) if since else None), (moment_ms(until, until=True) if until else None)


def describe(since: str | None, until: str | None) -> str:
    """The filter in words, for an empty answer: `used in the last 1d`, `used since 2026-11-30`."""
    def ago(text: str) -> bool:
        word = text.strip().lower()
        return word[:1].isdigit() and word.rstrip("abcdefghijklmnopqrstuvwxyz").isdigit()

    parts = [f"in the last {since}" if ago(since) else f"since {since}"] if since else []
    if until:
        parts.append(f"not in the last {until}" if ago(until) else f"until {until}")
    return "used " + " and ".join(parts)
