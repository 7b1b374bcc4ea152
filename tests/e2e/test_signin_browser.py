"""Sign-in through an OpenID Connect provider (issue 35 item 4), in Chromium against a real provider.

The provider is ``oidc-provider-mock`` (a real OpenID Connect provider: discovery document, signed ID
tokens, authorization code flow, end-session endpoint), started here in a thread on a free port. The
dashboard is a live ``streamlit run app.py`` of its own, started like tests/e2e/conftest.py's server but
with Streamlit's ``[auth]`` secrets pointing at that provider, given through ``STREAMLIT_SECRETS_FILES``
(a file in a temporary folder: the repository's ``.streamlit/`` is never written). Nothing in the server
or the login is replaced: each user signs in through the provider's own login form.

- a visitor who is not signed in sees the sign-in prompt and nothing else, at the root, at a page's
  URL, at a session's address and at a snapshot link;
- Alice signs in and reaches the pages (Target); at Streamlit's upload endpoint, her sign-in cookie passes the
  guard and none, or one made up, is refused;
- Bob, signed in from another browser, opens Alice's session address (even carrying Alice's browser
  cookie, as if it were stolen) and is refused with the app's one-line note for a foreign address;
- Alice, in a second browser, opens the same address, is asked to sign in, is sent back to the address
  after it and gets her own session: the session belongs to the user, not to the cookie;
- Alice signs out: the page asks for sign-in again, and her address shows only the prompt;
- the event log names users only by a hash (never the email or the name).
"""
from __future__ import annotations

import json
import re
import secrets
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

oidc_provider_mock = pytest.importorskip("oidc_provider_mock", reason="requirements-dev.txt: oidc-provider-mock")

from fairdash.app.server.session import LINK_FOREIGN  # noqa: E402
from fairdash.app.server.signin import WHY  # noqa: E402

from endpoint import put_file  # noqa: E402
from live_server import free_port, live_streamlit  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
USERS = {"alice": {"email": "alice.wonder@example.org", "name": "Alice Wonder"},
         "bob": {"email": "bob.builder@example.org", "name": "Bob Builder"}}
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


@pytest.fixture(scope="module")
def provider():
    """A real OpenID Connect provider on a free port; yields its base URL."""
    users = [oidc_provider_mock.User(sub=sub, claims=claims) for sub, claims in USERS.items()]
    with oidc_provider_mock.run_server_in_thread(port=free_port(), user_claims=users) as server:
        yield f"http://127.0.0.1:{server.server_port}"


@pytest.fixture(scope="module")
def signin_server(provider):
    """``streamlit run app.py`` with ``[auth]`` set up for ``provider``; yields ``(url, work_dir)``."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    work = Path(tempfile.mkdtemp(prefix="fairdash-signin-"))
    secrets_file = work / "secrets.toml"
    secrets_file.write_text(
        "[auth]\n"
        f'redirect_uri = "{url}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_urlsafe(32)}"\n'
        'client_id = "fairdash-e2e"\n'
        f'client_secret = "{secrets.token_urlsafe(16)}"\n'
        f'server_metadata_url = "{provider}/.well-known/openid-configuration"\n')
    with live_streamlit(work, port, STREAMLIT_SECRETS_FILES=str(secrets_file)) as (url, _):
        yield url, work


def _log(work: Path) -> str:
    return (work / "streamlit.log").read_text(errors="replace")[-4000:]


def _events(work: Path) -> list:
    path = work / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _prompt_only(page, work: Path) -> None:
    """The sign-in prompt and nothing else: its title, the one line, the button; no page, no sidebar."""
    page.get_by_role("button", name="Sign in").wait_for(timeout=60_000)
    page.wait_for_selector(IDLE, timeout=60_000)
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert WHY in main, main
    assert main.replace("login", "").split() == f"Sign in {WHY} Sign in".split(), main  # ("login": the icon)
    assert page.locator('[data-testid="stSidebar"] [data-testid="stSidebarNav"]').count() == 0
    assert page.locator('[data-testid="stSidebarUserContent"]').count() == 0 or \
        not page.locator('[data-testid="stSidebarUserContent"]').inner_text().strip()
    assert page.locator('[data-testid="stException"]').count() == 0, _log(work)


def _sign_in(page, url: str, sub: str, work: Path, start: str | None = None) -> None:
    """Open the app (at ``start``), press "Sign in", sign in on the provider's own form as ``sub``, come
    back signed in."""
    page.goto(start or url)
    _prompt_only(page, work)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/oauth2/authorize.*"), timeout=60_000)
    page.locator('input[name="sub"]').fill(sub)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(lambda u: u.startswith(url) and "oauth2callback" not in u, timeout=60_000)
    if start is not None:  # sent back to the address that asked for sign-in
        page.wait_for_url(lambda u: _session_token(u) == _session_token(start), timeout=60_000)
    page.locator('[data-testid="stSidebarNav"]').wait_for(timeout=90_000)
    page.wait_for_selector(IDLE, timeout=90_000)
    page.get_by_text(f"Signed in as {USERS[sub]['name']}").wait_for(timeout=60_000)


def _session_token(address) -> str:
    """The ``session`` of an address (a page's, or a URL)."""
    address = address if isinstance(address, str) else address.url
    return urllib.parse.parse_qs(urllib.parse.urlparse(address).query).get("session", [""])[0]


def test_sign_in_owner_refusal_sign_out(browser, signin_server, st_ui):
    url, work = signin_server

    # Not signed in: the prompt and nothing else, wherever the address points.
    anon = st_ui.new_context(browser)
    page = anon.new_page()
    for where in ("/", "/target", "/?session=abcdefghijklmnopqrstuvwx", "/?snapshot=abcdefghijklmnopqrstuvwx"):
        page.goto(url + where)
        _prompt_only(page, work)

    # Alice signs in and reaches the pages.
    a_ctx = st_ui.new_context(browser)
    alice = a_ctx.new_page()
    _sign_in(alice, url, "alice", work)
    st_ui.goto_page(alice, "Target")
    assert "Target positive rate" in st_ui.main_text(alice) or "PR" in st_ui.main_text(alice)
    alice.wait_for_url(re.compile(r".*session=.*"), timeout=60_000)
    a_url, a_token = alice.url, _session_token(alice)
    assert a_token, alice.url
    a_cookies = [c for c in a_ctx.cookies() if c["name"] == "fairdash_browser"]

    # Streamlit's upload endpoint: a visitor who has not signed in is refused there too (401), and so is one who
    # made a sign-in cookie up; Alice's cookie passes the guard (Streamlit itself then refuses an unknown session).
    jar = {c["name"]: c["value"] for c in a_ctx.cookies()}
    xsrf = jar.get("_streamlit_xsrf", "")
    mine = "; ".join(f"{k}={v}" for k, v in jar.items())
    anonymous = "; ".join(f"{k}={v}" for k, v in jar.items() if not k.startswith("_streamlit_user"))
    assert put_file(url, "no-session", anonymous, xsrf, 1000) == 401
    assert put_file(url, "no-session", anonymous + "; _streamlit_user=made-up", xsrf, 1000) == 401
    assert put_file(url, "no-session", mine, xsrf, 1000) == 400

    # Bob, signed in elsewhere, opens Alice's address, carrying her browser cookie too: refused.
    b_ctx = st_ui.new_context(browser)
    bob = b_ctx.new_page()
    _sign_in(bob, url, "bob", work)
    b_ctx.add_cookies([{k: c[k] for k in ("name", "value", "domain", "path")} for c in a_cookies])
    bob.goto(a_url)
    try:
        bob.get_by_text(LINK_FOREIGN).wait_for(timeout=60_000)
    except Exception:  # noqa: BLE001 - said plainly below
        pytest.fail("Bob, signed in, opened Alice's session with her browser cookie: the session must belong to "
                    "the signed-in user (fairdash/app/server/session.py: browser_id() returns signin.owner_id() when "
                    "it is not None)\n" + _log(work))
    st_ui.wait_idle(bob)
    assert _session_token(bob) != a_token, bob.url
    assert bob.locator('[data-testid="stException"]').count() == 0, _log(work)

    # Alice, in a second browser (another cookie), opens her address: asked to sign in first, then sent
    # back to it, she gets her own session.
    a2_ctx = st_ui.new_context(browser)
    alice2 = a2_ctx.new_page()
    _sign_in(alice2, url, "alice", work, start=a_url)
    alice2.locator("h1", has_text="Target").first.wait_for(timeout=60_000)
    st_ui.wait_idle(alice2)
    st_ui.wait_idle(alice2, settle=0.5)
    assert LINK_FOREIGN not in alice2.content()
    assert _session_token(alice2) == a_token, alice2.url

    # Alice signs out: asked to sign in again, and her address shows only the prompt.
    alice.locator('[data-testid="stSidebar"]').get_by_role("button", name="Sign out").click()
    end = alice.get_by_role("button", name="End session")  # the provider's own end-session form
    try:
        end.wait_for(timeout=30_000)
        end.click()
    except Exception:  # noqa: BLE001 - a provider without an end-session page sends the user straight back
        pass
    alice.wait_for_url(lambda u: u.startswith(url), timeout=60_000)
    _prompt_only(alice, work)
    alice.goto(a_url)
    _prompt_only(alice, work)

    # The event log: who signed in and out, as hashes only.
    events = _events(work)
    signs = [e for e in events if e["event"] in ("sign_in", "sign_out")]
    assert [e["event"] for e in signs].count("sign_in") >= 3, signs
    assert [e["event"] for e in signs].count("sign_out") == 1, signs
    users = {e["user"] for e in signs}
    assert len(users) == 2 and all(re.fullmatch(r"[0-9a-f]{12}", u) for u in users), users
    text = (work / "events.jsonl").read_text()
    for sub, claims in USERS.items():
        for value in (sub, *claims.values(), *claims["name"].split()):
            assert value.lower() not in text.lower(), value
    for ctx in (anon, a_ctx, b_ctx, a2_ctx):
        ctx.close()
