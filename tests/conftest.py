"""Shared test set-up: no network, a private fit cache, small real data."""
import os

import pytest

os.environ.setdefault("FAIRDASH_DEVICE", os.environ.get("FAIRDASH_TEST_DEVICE", "auto"))


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Every test writes its fit cache to a temporary directory, never the user's."""
    monkeypatch.setenv("FAIRDASH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "fit-cache"))


@pytest.fixture(autouse=True)
def _training_waits_in_apptest(monkeypatch):
    """AppTest has no browser to poll the sidebar while a training runs in the background: the Train
    button's script run waits for its job and adds the run at once (tests/test_background_training.py
    turns this off to test the background itself)."""
    try:
        from fairdash.app import jobs
    except ImportError:  # a machine without Streamlit (the GPU checks run the library's tests only)
        return
    monkeypatch.setattr(jobs, "WAIT_IN_SCRIPT", True)
