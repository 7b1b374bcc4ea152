"""Sign-in (issue 35 item 4) without a browser: off by default, so the dashboard is unchanged without
``[auth]`` secrets; with them, a visitor who is not signed in sees only the prompt; a signed-in user
gets a stable one-way owner id; the event log names a user only by a hash. The flow through a real
OpenID Connect provider is tests/e2e/test_signin_browser.py."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairdash import events
from fairdash.app.server import signin

import app_state

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 120
AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32,
        "client_id": "fairdash", "client_secret": "s3cret",
        "server_metadata_url": "https://idp.example.org/.well-known/openid-configuration"}


@pytest.fixture(autouse=True)
def _cpu(monkeypatch):
    monkeypatch.setenv("FAIRDASH_DEVICE", "cpu")


def test_off_without_secrets():
    """No secrets file (the repository ships none): sign-in is off and nobody owns a session by sign-in."""
    assert not (ROOT / ".streamlit" / "secrets.toml").exists()
    assert signin.configured() is False
    assert signin.owner_id() is None
    assert signin.providers() == []


def test_dashboard_unchanged_without_auth():
    """Without ``[auth]`` the app draws its pages as before: no prompt, no sign-out button."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    labels = [b.label for b in at.button]
    assert "Sign in" not in labels and "Sign out" not in labels, labels
    assert [t.value for t in at.title] and "Sign in" not in [t.value for t in at.title]
    assert signin.WHY not in [m.value for m in at.markdown]


def test_prompt_only_until_signed_in():
    """``[auth]`` set up, nobody signed in: the title, one line why, a "Sign in" button, and nothing else
    (no page, no sidebar, no session opened even for a session address)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["auth"] = dict(AUTH)
    at.user = {"is_logged_in": False}
    at.query_params["session"] = "abcdefghijklmnopqrstuvwxyz"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Sign in"]
    assert [m.value for m in at.markdown] == [signin.WHY]
    assert [b.label for b in at.button] == ["Sign in"]
    assert not at.sidebar.children, at.sidebar.children
    assert not at.metric and not at.slider and not at.dataframe
    assert not app_state.has(at, "token")  # no session opened


def test_signed_in_user_owns_by_hash(tmp_path, monkeypatch):
    """Signed in: the pages are drawn, the sidebar offers "Sign out", and the log's ``sign_in`` names the
    user by a 12-digit hash only."""
    log = tmp_path / "events.jsonl"
    monkeypatch.setenv(events.EVENT_LOG_ENV, str(log))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["auth"] = dict(AUTH)
    at.user = {"is_logged_in": True, "iss": "https://idp.example.org", "sub": "u-1234",
               "email": "ada.lovelace@example.org", "name": "Ada Lovelace"}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Sign out" in [b.label for b in at.sidebar.button]
    assert "Sign in" not in [t.value for t in at.title]
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    sign = [e for e in lines if e["event"] == "sign_in"]
    owner = "oidc-" + hashlib.sha256(b"https://idp.example.org\nu-1234").hexdigest()
    assert sign == [dict(sign[0], user=events.session_id(owner))], sign
    text = log.read_text().lower()
    for word in ("ada", "lovelace", "example.org", "u-1234"):
        assert word not in text, word


def test_providers_from_the_auth_section():
    assert signin.providers(AUTH) == [None]
    named = {"redirect_uri": "r", "cookie_secret": "c", "okta": {"client_id": "a", "server_metadata_url": "m"},
             "google": {"client_id": "b", "server_metadata_url": "n"}}
    assert signin.providers(named) == ["google", "okta"]
    # half-written: still asks, Streamlit names what is missing
    assert signin.providers({"redirect_uri": "r"}) == [None]


def test_log_hashes_any_user_value():
    """Whatever a caller passes as ``user`` (by mistake an email), the line holds a hash."""
    record = events.log_event("sign_in", user="someone@example.org")
    assert record["user"] == events.session_id("someone@example.org")
    assert "someone" not in json.dumps(record)
