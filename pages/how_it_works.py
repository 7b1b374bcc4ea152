"""How it works: the method in plain language, with the equations for readers who want them
(docs/METHOD.md is the full version)."""
from __future__ import annotations

import streamlit as st

from fairdash import ui

ui.ensure_router()
st.title("How it works")
st.markdown("""
**The idea in one paragraph.** Most fairness methods ask you for an abstract threshold (say, a bound on a
covariance). FairDash, following *Tuning Fairness by Balancing Target Labels*, asks a question you can
answer: **what share of each group should the model label positive?** That share is the *target
positive rate* `PR_t`. The model is then trained as if it had seen *target labels* `ȳ` with exactly that
positive rate in every group, changing as few of the observed labels `y` as possible. Because it never
needs the sensitive attribute `s` to make a prediction, `s` is used only while training.
""")

st.subheader("1. Base rates and the target")
st.markdown("Each group `s` has a base rate: the share of its rows with a positive label, measured on the "
            "training data. The presets are the lower base rate (min), the higher one (max) and their mean "
            "(avg, the paper's default).")
st.latex(r"PR_b^s = P(y = 1 \mid s), \qquad PR_t = P(\bar y = 1 \mid s) \text{ for every } s")

st.subheader("2. Which labels change")
st.markdown("A group whose base rate is below the target needs more positives: some of its negatives "
            "become positive target labels. A group above the target needs fewer. With the keep-rate "
            "`δ = 1` (the paper's choice) no label is changed that does not have to be:")
st.latex(r"""\text{if } PR_t > PR_b^s:\quad P(\bar y{=}1 \mid y{=}1, s) = \delta,\qquad
P(\bar y{=}1 \mid y{=}0, s) = \frac{PR_t - \delta\, PR_b^s}{1 - PR_b^s}""")
st.latex(r"""\text{else:}\quad P(\bar y{=}1 \mid y{=}0, s) = 1 - \delta,\qquad
P(\bar y{=}1 \mid y{=}1, s) = \frac{PR_t - (1-\delta)(1 - PR_b^s)}{PR_b^s}""")

st.subheader("3. Training on labels nobody observed")
st.markdown("The model predicts the target label, `q(x) = P(ȳ = 1 | x)`, from the features alone. The "
            "observed label is linked to it by Bayes' rule, so the model is trained on the likelihood of "
            "the labels we do have:")
st.latex(r"d_{s,\bar y} = P(y{=}1 \mid \bar y, s) = \frac{P(\bar y \mid y{=}1, s)\, PR_b^s}{P(\bar y \mid s)}")
st.latex(r"P(y{=}1 \mid x, s) = d_{s,0}\,\bigl(1 - q(x)\bigr) + d_{s,1}\, q(x)")
st.markdown("FairLR uses a logistic `q`, FairGP a Gaussian process. With `d = (0, 1)` for every group this "
            "is the ordinary model. A prediction is `q(x) > 1/2`, and needs no `s`.")

st.subheader("4. How far the target reaches (Theorem 1, the t_s readout)")
st.markdown("For `δ = 1` the target flips the labels of rows whose true probability of a positive label "
            "lies within `t_s` of one half. A larger `t_s` means labels further from the decision boundary "
            "are changed for that group.")
st.latex(r"""t_s = \begin{cases} \dfrac{PR_t - PR_b^s}{2\,(1 - PR_t)} & PR_t > PR_b^s \\[2ex]
\dfrac{PR_b^s - PR_t}{2\, PR_t} & \text{otherwise} \end{cases}""")

st.subheader("5. The price of fairness (Theorem 2, the accuracy ceiling)")
st.markdown("No classifier whose positive rate in group `s` is `r̂_s` can be more accurate than the bound "
            "below, where `p_s` is the group's share of the rows. Under demographic parity every `r̂_s` is "
            "`PR_t`, so the Target page can show the ceiling before anything is trained.")
st.latex(r"\text{accuracy} \;\le\; 1 - \sum_s p_s \,\bigl|\hat r_s - PR_b^s\bigr|")

st.subheader("6. Equality of opportunity and conditional parity")
st.markdown("""
- **Equality of opportunity, one target rate:** train exactly as above and judge the model by the groups'
  true positive rates. When `PR_t` is at least both base rates, every positive keeps its label, so the
  true positive rates move together.
- **Equality of opportunity, explicit targets:** set `TPR_t = P(ȳ=1 | y=1, s)` and
  `TNR_t = P(ȳ=0 | y=0, s)` directly; then `P(ȳ=1 | s) = TPR_t·PR_b^s + (1 − TNR_t)(1 − PR_b^s)`.
- **Conditional parity:** with a *legitimate factor* `l` (for example the education level), the same
  construction runs inside every value of `l`, so that positive rates are equal between groups *with the
  same* `l`.
""")

st.subheader("7. How the models are measured")
st.markdown("Each repeat splits the data 80/20, stratified by group and label. Demographic parity is judged "
            "on a *balanced* test set (each label equally common in both groups); equality of opportunity on "
            "the ordinary test set. Fairness ratios are the smaller group rate over the larger (1 is fair). "
            "Figures show the mean and standard deviation over repeats.")
st.caption("The full method, with the corrections to the paper's typos, is in docs/METHOD.md.")
