"""The dashboard server's security settings are pinned in ``.streamlit/config.toml``, not left to Streamlit's
defaults (which could change): uploads are personal data."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _server() -> dict:
    with open(ROOT / ".streamlit" / "config.toml", "rb") as f:
        return tomllib.load(f)["server"]


def test_xsrf_and_cors_protection_are_pinned_on():
    server = _server()
    assert server.get("enableXsrfProtection") is True
    # enableCORS=false with XSRF on makes Streamlit warn that any origin may connect: both stay on together
    assert server.get("enableCORS") is True


def test_the_pinned_options_are_streamlit_options():
    config = pytest.importorskip("streamlit.config")
    options = config.get_config_options()
    assert "server.enableXsrfProtection" in options and "server.enableCORS" in options
