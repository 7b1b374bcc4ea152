"""(placeholder until the event log lands)"""
from __future__ import annotations


def log_event(event: str, *, session: str | None = None, **fields) -> dict:
    return {"event": event, **fields}
