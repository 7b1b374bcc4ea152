"""Shared test set-up: no network, a private fit cache, small real data."""
import os

import pytest

os.environ.setdefault("FAIRDASH_DEVICE", os.environ.get("FAIRDASH_TEST_DEVICE", "auto"))


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Every test writes its fit cache to a temporary directory, never the user's."""
    monkeypatch.setenv("FAIRDASH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "fit-cache"))
