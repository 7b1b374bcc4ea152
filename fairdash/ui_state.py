"""The dashboard session's memory: its state kept on the server under an unguessable token (with the
token and the target in the page's URL, so a reload or a shared link returns to it), the run history,
and widget values kept across page switches. A UI-helper module: it imports Streamlit."""
from __future__ import annotations

import streamlit as st

SAVED = ("fd_table", "fd_table_id", "fd_table_name", "fd_table_desc", "fd_spec", "fd_task", "fd_task_key", "fd_rates",
         "fd_split0", "fd_pr_t", "fd_criterion", "fd_delta", "fd_tpr_target", "fd_tnr_target", "fd_strata_mode",
         "fd_decision", "fd_runs", "fd_run", "_fd_kept", "fd_pending", "fd_guess",
         "fd_choices_kept", "fd_widgets_for")


@st.cache_resource(show_spinner=False)
def _sessions():
    from .session_store import SessionStore

    return SessionStore()


def restore_session(criteria) -> None:
    """A new browser session (first open, a reload, a shared link): take the state saved under the URL's
    ``session`` token if there is one, then the target the URL names."""
    ss = st.session_state
    qp = st.query_params
    token = qp.get("session")
    state = _sessions().load(token)
    if state is None:
        ss["fd_token"] = _sessions().new_token()
        return
    ss.update(state)
    ss["fd_token"] = token
    ss["fd_restored"] = True
    try:  # the URL's target wins over the saved one (a link edited or shared at another PR_t)
        pr_t = float(qp.get("pr_t", ""))
        if 0.0 < pr_t < 1.0:
            ss["fd_pr_t"] = round(pr_t, 3)
    except ValueError:
        pass
    if qp.get("criterion") in criteria:
        ss["fd_criterion"] = qp["criterion"]


def save_session() -> None:
    """Keep this session's state under its token and put the token and the target in the URL."""
    ss = st.session_state
    token = ss.get("fd_token")
    if not token:
        return
    _sessions().save(token, {k: ss[k] for k in SAVED if k in ss})
    want = {"session": token, "criterion": ss.get("fd_criterion", "dp")}
    if ss.get("fd_pr_t") is not None:
        want["pr_t"] = f"{float(ss['fd_pr_t']):.3f}"
    if any(st.query_params.get(k) != v for k, v in want.items()):
        st.query_params.update(want)


def remember(key: str, default) -> None:
    """Like :func:`restore`, but the widget comes back with the value the user last gave it in this
    session (Streamlit forgets a widget's state when its page is left); :func:`keep_widgets`, called
    at the end of every run, keeps those values."""
    ss = st.session_state
    kept = ss.setdefault("_fd_kept", {})
    if key not in ss:
        ss[key] = kept.get(key, default)
    kept.setdefault(key, ss[key])


def keep_widgets() -> None:
    """Keep the current values of the widgets registered with :func:`remember` (see there)."""
    ss = st.session_state
    kept = ss.get("_fd_kept") or {}
    for key in list(kept):
        if key in ss:
            kept[key] = ss[key]


def runs() -> list:
    """This session's run history (oldest first); each a :class:`fairdash.experiments.Run`."""
    return st.session_state.setdefault("fd_runs", [])


def add_run(run) -> None:
    history = runs()
    run.number = (history[-1].number + 1) if history else 1
    same = [r.number for r in history if r.summary_parts() == run.summary_parts()]
    run.same_as = same[-1] if same else 0
    history.append(run)
    st.session_state["fd_run"] = run
