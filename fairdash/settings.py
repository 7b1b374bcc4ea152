"""Numbers an administrator sets in the environment (``FAIRDASH_MAX_COLUMNS``, ``FAIRDASH_MAX_TRAININGS``, ...): one
rule for reading them, so that every such setting takes the same values and a wrong one gets the same one-line
:class:`~fairdash.errors.FairDashError`, naming the variable, what it takes and what it holds, instead of a traceback
or a silent default. Read when asked (never cached at import), so a change applies to the next read."""
from __future__ import annotations

import math
import os

from .errors import FairDashError


def env_number(name: str, default: float, *, minimum: float, whole: bool = False):
    """The number in the environment variable ``name``, or ``default`` where it is unset or blank; an ``int`` where
    ``whole``. A value that is not a finite number, has a fraction where ``whole``, or is below ``minimum`` is
    refused."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except (ValueError, OverflowError):
        value = math.nan
    if not (math.isfinite(value) and value >= minimum and (not whole or value.is_integer())):
        kind = "a whole number" if whole else "a number"
        raise FairDashError(f"{name} must be {kind}, at least {minimum:g} (such as {default:g}), not {raw[:40]!r}.")
    return int(value) if whole else value
