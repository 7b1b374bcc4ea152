"""The dashboard server's security settings are pinned in ``.streamlit/config.toml``, not left to Streamlit's
defaults (which could change): uploads are personal data."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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


# ----- a protection switched off, however it was set (issue 35, item 3) ------------------------------------------
def _options(**changed):
    base = {"server.enableXsrfProtection": True, "server.enableCORS": True, "server.maxUploadSize": 200}
    base.update({k.replace("__", "."): v for k, v in changed.items()})
    return base.get


def test_the_secure_settings_find_nothing_to_say():
    from fairdash.app.server.limits import insecure_settings

    assert insecure_settings(_options(), 200) == []


def test_each_protection_switched_off_is_named():
    from fairdash.app.server.limits import insecure_settings

    found = insecure_settings(_options(server__enableXsrfProtection=False, server__enableCORS=False,
                                       server__maxUploadSize=4000), 200)
    assert [code for code, _ in found] == ["xsrf_off", "cors_off", "upload_cap"]
    assert found[0][1] == "server.enableXsrfProtection is False, not True"
    assert found[2][1] == "server.maxUploadSize is 4000 MB, above FairDash's 200 MB"


@pytest.fixture
def xsrf_off():
    """The option as ``--server.enableXsrfProtection=false`` on the command line sets it, put back afterwards."""
    from streamlit import config

    config.set_option("server.enableXsrfProtection", False)
    yield
    config.set_option("server.enableXsrfProtection", True)


def _first_run(monkeypatch, events):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("FAIRDASH_DEVICE", "cpu")
    monkeypatch.setenv("FAIRDASH_EVENT_LOG", str(events))
    from fairdash.app import views

    monkeypatch.setattr(views, "_INSECURE_LOGGED", set())
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    return at.run()


def test_a_server_with_xsrf_off_refuses_to_serve_and_logs_why(xsrf_off, monkeypatch, tmp_path):
    monkeypatch.delenv("FAIRDASH_ALLOW_INSECURE", raising=False)
    at = _first_run(monkeypatch, tmp_path / "events.jsonl")
    assert not at.exception
    assert [e.value for e in at.error] == [
        "This server refuses to serve: server.enableXsrfProtection is False, not True. Start it with the settings of "
        ".streamlit/config.toml, or set FAIRDASH_ALLOW_INSECURE=1 to run without these protections on purpose."]
    assert not at.title and not at.slider  # no page was drawn
    events = [json.loads(ln) for ln in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert {"event": "insecure_settings", "reason": "xsrf_off", "outcome": "refused"}.items() <= events[0].items()


def test_allowing_it_on_purpose_serves_and_logs_it(xsrf_off, monkeypatch, tmp_path):
    monkeypatch.setenv("FAIRDASH_ALLOW_INSECURE", "1")
    at = _first_run(monkeypatch, tmp_path / "events.jsonl")
    assert not at.exception and not any("refuses to serve" in e.value for e in at.error)
    events = [json.loads(ln) for ln in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert {"event": "insecure_settings", "reason": "xsrf_off", "outcome": "served"}.items() <= events[0].items()
