"""What a training needs from the server: the shared fit cache, the device's description, and each model's
options and availability on this machine."""
from __future__ import annotations

import inspect

import streamlit as st

from ...device import device_description, device_hint
from ...models.registry import model_info
from ...work.fit_cache import FitCache
from ..server import state


@st.cache_resource(show_spinner=False)
def _samples_fit_cache():
    """The fit cache on disk (``FAIRDASH_CACHE_DIR``), shared by every session: bundled samples only."""

    return FitCache()


def fit_cache():
    """The fit cache for the current table, keyed by data content + configuration + code version. The
    bundled samples share one on disk; an upload is personal data, so its fitted models (an SVM's support
    vectors are rows of the table) stay in this session's memory only, and go with the session or with
    "Forget this session"."""
    ss = state.current()
    if str(ss.get(state.Session.table_id, "")).startswith("sample:"):
        return _samples_fit_cache()
    if ss.fit_cache is None:  # (kept with the session: a reload keeps it, Forget deletes it)

        ss.fit_cache = FitCache(directory=False, memory_items=32)
    return ss.fit_cache


@st.cache_resource(show_spinner=False)
def _device_text() -> str:
    try:
        return device_description()
    except Exception:  # noqa: BLE001
        return "CPU"


def device_text() -> str:
    """The training device in words; on a first page, without importing torch where that can be avoided."""

    return device_hint() or _device_text()


def model_options(name: str) -> dict:
    """Numeric constructor settings of a model class that a user may change (name -> default); the
    target, seed, device and progress are set by FairDash itself. Empty if the model is not available."""

    try:
        cls = model_info(name).load_class()
    except Exception:  # noqa: BLE001 - a model still being written is simply not offered
        return {}
    skip = {"self", "target_rate", "criterion", "tpr_target", "tnr_target", "delta", "seed", "device", "progress",
            "stratum_target_rates", "random_state", "verbose", "n_jobs"}
    out = {}
    for p in inspect.signature(cls.__init__).parameters.values():
        if p.name in skip or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        d = p.default
        if isinstance(d, bool) or not isinstance(d, (int, float)):
            continue
        out[p.name] = d
    return out


def model_available(name: str) -> tuple[bool, str]:
    try:
        model_info(name).load_class()
        return True, ""
    except Exception as e:  # noqa: BLE001
        return False, f"not installed yet ({type(e).__name__})"
