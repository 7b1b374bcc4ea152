"""Progress reports of long jobs and the time stamp of fits, files and reports.

A progress callback is any ``progress(fraction: float, message: str)``; ``no_progress`` does nothing,
``as_progress`` turns ``None`` into it and ``scaled_progress`` maps a step onto part of a longer job.
``utc_now`` stamps fits, files and reports.
"""
from __future__ import annotations

import datetime as _dt
from typing import Callable, Protocol


class Progress(Protocol):
    def __call__(self, fraction: float, message: str) -> None: ...


def no_progress(fraction: float, message: str) -> None:
    """The default progress callback: does nothing."""


def as_progress(progress: Callable | None) -> Callable[[float, str], None]:
    """``progress`` itself, or ``no_progress`` for ``None``. Fractions are clipped to [0, 1]."""
    if progress is None:
        return no_progress

    def report(fraction: float, message: str = "") -> None:
        progress(float(min(max(fraction, 0.0), 1.0)), str(message))

    return report


def scaled_progress(progress: Callable | None, start: float, stop: float) -> Callable[[float, str], None]:
    """A callback mapping [0, 1] onto [start, stop] of ``progress`` (for a step of a longer job)."""
    report = as_progress(progress)
    return lambda fraction, message="": report(start + (stop - start) * float(fraction), message)


def utc_now() -> str:
    """The current time in UTC, ISO 8601 to the second (fit times, file and report creation)."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
