"""Sign-in through the team's identity provider: optional, off by default. A UI-helper module: it imports
Streamlit.

Sign-in is on when Streamlit's own ``[auth]`` secrets are set up (``.streamlit/secrets.toml``, or a file
named by ``--secrets.files`` / ``STREAMLIT_SECRETS_FILES``; the README's "Sign-in" section shows the keys
for a generic OpenID Connect provider). Streamlit then does the OpenID Connect flow itself
(``st.login`` / ``st.logout``; it needs ``Authlib``) and keeps the identity in its own signed cookie;
this module only decides what a run may do with it:

- :func:`require_sign_in` (app.py, before any page, snapshot link or session address is looked at):
  a visitor who is not signed in sees one line saying why and a "Sign in" button, nothing else;
- :func:`owner_id`: the signed-in user as a stable, one-way id (sha256 of the provider's issuer and the
  user's ``sub``), which owns the user's sessions in place of the browser's cookie, so another signed-in
  user with the owner's address is refused like a foreign browser, and the owner's other browsers are not;
- :func:`sign_out_button` (sidebar): ends the identity cookie, and with it access.

The event log names the user only by a hash of :func:`owner_id` (``sign_in`` / ``sign_out``, field
``user``: :mod:`fairdash.events`), never by email or name. Without ``[auth]`` nothing here draws anything
and :func:`owner_id` is ``None``: the dashboard is as it was."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

import streamlit as st

from ...events import log_event
from . import state

WHY = ("This FairDash server is open to its team only: sign in with your organisation's account to see "
       "the dashboard, your sessions and shared snapshots.")
LOGGED = state.SIGNIN_LOGGED  # the owner id already logged as signed in for this browser session
PROVIDER_KEYS = ("client_id", "server_metadata_url")


def _auth() -> Mapping | None:
    """The ``[auth]`` secrets section, or ``None`` (no secrets file, a file without ``[auth]``, an
    unreadable one: sign-in off)."""
    try:
        if not st.secrets.load_if_toml_exists():  # never raises, draws nothing: the probe Streamlit offers
            return None
        auth = st.secrets.get("auth")
    except Exception:  # noqa: BLE001 - a secrets file that cannot be read is no [auth]
        return None
    return auth if isinstance(auth, Mapping) and len(auth) else None


def configured() -> bool:
    """Whether sign-in is on: an ``[auth]`` section is set up in Streamlit's secrets. A half-written
    section counts (sign-in stays required and Streamlit names what is missing when "Sign in" is pressed):
    a mistake in the configuration never opens the server."""
    return _auth() is not None


def cookie_secret() -> str:
    """The secret Streamlit signs its sign-in cookie with: ``cookie_secret`` of the ``[auth]`` secrets, else the
    server's ``server.cookieSecret`` (which Streamlit makes up at start where none is set)."""
    auth = _auth() or {}
    return str(auth.get("cookie_secret") or st.get_option("server.cookieSecret") or "")


def providers(auth: Mapping | None = None) -> list:
    """The providers a user may sign in with: ``None`` for ``[auth]`` itself (one provider configured in
    the section), then the name of each ``[auth.NAME]`` table that names a provider."""
    auth = _auth() if auth is None else auth
    if not auth:
        return []
    named = [k for k, v in auth.items() if isinstance(v, Mapping) and any(p in v for p in PROVIDER_KEYS)]
    own = any(p in auth for p in PROVIDER_KEYS) or not named
    return ([None] if own else []) + sorted(named)


def signed_in() -> bool:
    """Whether this browser session belongs to a signed-in user (``False`` outside a script run)."""
    try:
        return bool(st.user.is_logged_in)
    except Exception:  # noqa: BLE001 - no script run context (a bare import): nobody is signed in
        return False


def owner_id() -> str | None:
    """The signed-in user as a stable, one-way id that owns their sessions: ``"oidc-"`` and the sha256 of
    the provider's issuer and the user's subject (``sub``; the email where a provider sends no ``sub``).
    ``None`` when sign-in is off or nobody is signed in (then the browser's cookie owns a session)."""
    if not configured() or not signed_in():
        return None
    user = st.user
    subject = user.get("sub") or user.get("email")
    if not subject:
        return None
    issuer = user.get("iss") or ""
    return "oidc-" + hashlib.sha256(f"{issuer}\n{subject}".encode("utf-8", "surrogatepass")).hexdigest()


def require_sign_in(navigation=None) -> None:
    """Called by app.py on every run before anything else is drawn. Sign-in off: nothing. On, and nobody
    signed in: one line saying why and a "Sign in" button per provider, then ``st.stop()`` (no page, no
    sidebar, no session is opened: a session address or a snapshot link waits behind it). Signed in: the
    user is logged once per browser session, as a hash.

    ``navigation`` (app.py's ``navigation.navigation``) is declared hidden before the prompt: the pages' URLs stay
    known (no "page not found") and Streamlit draws no menu of the ``pages/`` folder beside the prompt."""
    if not configured():
        return
    if signed_in():
        owner = owner_id()
        if owner and state.current().signin_logged != owner:
            state.current().signin_logged = owner
            log_event("sign_in", user=owner)
            _return_after_sign_in()
        return
    if navigation is not None:
        navigation(position="hidden")  # declared, never run
    st.title("Sign in")
    st.write(WHY)
    _keep_address()
    for name in providers():
        label = "Sign in" if name is None else f"Sign in with {name}"
        if st.button(label, key=f"fd_sign_in_{name or 'default'}", type="primary", icon=":material/login:"):
            if name is None:
                st.login()
            else:
                st.login(name)
    st.stop()


# The provider sends a user back to the dashboard's root, so the address that asked for sign-in (a session's,
# a snapshot link) is kept in the tab (sessionStorage, this origin's path only) and opened again afterwards.
RETURN_KEY = "fairdash_after_sign_in"
_KEEP = ("<script>(() => {{ const k = {key}; const here = location.pathname + location.search;"
         " if (location.search) sessionStorage.setItem(k, here); else sessionStorage.removeItem(k); }})();</script>")
_BACK = ("<script>(() => {{ const k = {key}; const t = sessionStorage.getItem(k); sessionStorage.removeItem(k);"
         " if (t && t.startsWith('/') && !t.startsWith('//') && t !== location.pathname + location.search)"
         " location.replace(t); }})();</script>")


def _script(template: str) -> None:
    """A script of this module's own (no user text in it), in an invisible one-pixel container."""
    with st.container(height=1, border=False):
        st.html(template.format(key=json.dumps(RETURN_KEY)), unsafe_allow_javascript=True)


def _keep_address() -> None:
    """On the prompt: remember this tab's address when it names something (a session, a snapshot)."""
    _script(_KEEP)


def _return_after_sign_in() -> None:
    """First run after sign-in: back to the address that asked for it, if any (in the sidebar)."""
    with st.sidebar:
        _script(_BACK)


def sign_out_button() -> None:
    """The sidebar's "Sign out" (only while signed in): ends the identity cookie; the next run asks for
    sign-in again."""
    if not configured() or not signed_in():
        return
    who = st.user.get("name") or st.user.get("email")
    if who:
        st.caption(f"Signed in as {who}")
    if st.button("Sign out", key="fd_sign_out", icon=":material/logout:"):
        owner = owner_id()
        del state.current().signin_logged
        log_event("sign_out", user=owner)
        st.logout()
