"""The floor for benchmarks/bench_slider_latency.py: the smallest Streamlit app with the same widget
and readout as FairDash's Target page (one slider, one st.metric of a trivial function). Whatever
latency this app has is Streamlit's own (websocket round trip, script run, React render).

Run by the benchmark as ``streamlit run benchmarks/minimal_slider_app.py``.
"""
import streamlit as st


def ceiling(pr_t: float) -> float:
    """A trivial stand-in for Theorem 2's ceiling (same shape: 1 - sum_s P(s) |PR_t - PR_b^s|)."""
    return 1.0 - 0.33 * abs(pr_t - 0.114) - 0.67 * abs(pr_t - 0.312)


st.title("Minimal slider")
st.session_state.setdefault("pr_t_slider", 0.213)
pr_t = st.slider("Target positive rate PR_t", 0.0, 1.0, step=0.001, format="%.3f", key="pr_t_slider")
st.number_input("PR_t (exact value)", 0.0, 1.0, step=0.001, format="%.3f", key="pr_t_input",
                on_change=lambda: st.session_state.update(pr_t_slider=st.session_state["pr_t_input"]))
with st.container(key="ceiling_readout"):
    st.metric("Accuracy ceiling (Theorem 2, training split)", f"{ceiling(pr_t):.4f}")
