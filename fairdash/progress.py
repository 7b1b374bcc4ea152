"""Progress reports of long jobs and the time stamp of fits, files and reports.

A progress callback is any ``progress(fraction: float, message: str)``; ``no_progress`` does nothing,
``as_progress`` turns ``None`` into it and ``scaled_progress`` maps a step onto part of a longer job.
``counted_progress`` counts a job's fits from its fractions and adds the time left, estimated from the
durations of the fits done so far (``time_left``, said in words by ``time_left_words``).
``utc_now`` stamps fits, files and reports.
"""
from __future__ import annotations

import datetime as _dt
import math
import time
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


MIN_FITS_FOR_ESTIMATE = 2  # the time left is said once this many fits are done (the first one includes warm-up)


def time_left(done_at, elapsed: float, n_fits: int) -> float | None:
    """Seconds left of a job of ``n_fits`` fits whose finished fits ended ``done_at`` seconds after its start
    (non-decreasing), ``elapsed`` seconds after its start: the mean time per finished fit times the fits not
    finished, less the time already spent on the current one, but never less than the fits not yet started
    take at that mean. ``None`` while fewer than :data:`MIN_FITS_FOR_ESTIMATE` fits are done, or when all are."""
    done = len(done_at)
    if done < MIN_FITS_FOR_ESTIMATE or done >= n_fits:
        return None
    last = float(done_at[-1])
    per_fit = max(last, 0.0) / done
    left = n_fits - done
    current = max(float(elapsed) - last, 0.0)
    return max(per_fit * left - current, per_fit * (left - 1), 0.0)


def time_left_words(seconds: float) -> str:
    """``about 40 s left``, ``about 4 min left``, ``about 1 h 5 min left`` (seconds rounded up to tens)."""
    seconds = max(float(seconds), 0.0)
    if seconds < 60:
        return f"about {max(10, int(math.ceil(seconds / 10.0)) * 10)} s left" if seconds >= 5 else "a few seconds left"
    minutes = int(round(seconds / 60.0))
    if minutes < 60:
        return f"about {max(minutes, 1)} min left"
    return f"about {minutes // 60} h {minutes % 60} min left"


def counted_progress(progress: Callable | None, n_fits: int, clock: Callable[[], float] = time.monotonic):
    """A callback for a job of ``n_fits`` fits whose fractions count them (fit ``i`` ends at ``(i + 1) / n_fits``,
    as :func:`fairdash.work.experiments.run_experiment` reports): each message gets the fit's number in front and,
    once :data:`MIN_FITS_FOR_ESTIMATE` fits are done, the time left behind it, e.g. ``fit 3 of 10 · Training
    FairGP (seed 2) · about 4 min left``. ``clock``: seconds (the tests give their own)."""
    report = as_progress(progress)
    n = max(int(n_fits), 1)
    start = clock()
    done_at: list[float] = []

    def counted(fraction: float, message: str = "") -> None:
        fraction = float(min(max(fraction, 0.0), 1.0))
        now = clock() - start
        done = min(n, int(math.floor(fraction * n + 1e-9)))
        while len(done_at) < done:
            done_at.append(now)
        if done >= n:
            report(fraction, message)
            return
        left = time_left(done_at, now, n)
        parts = [f"fit {done + 1} of {n}", str(message)] + ([time_left_words(left)] if left is not None else [])
        report(fraction, " · ".join(p for p in parts if p))

    return counted

