"""One line for every advanced setting the Train page offers (issue 27, item 5): what the number does, in the
analyst's words, and which way to move it. ``HELP[param]`` holds the meaning shared by every model that takes
the setting; ``MODEL_HELP[(model, param)]`` a meaning of the setting's own for one model (``eps`` is a cap on
the multipliers for Agarwal et al. but a stopping rule for ZafarEqOpp). No Streamlit here: plain text, read by
:func:`fairdash.app.views.model_option_inputs` and by the tests (every setting of every model has a line)."""
from __future__ import annotations

HELP = {
    "C": "Inverse strength of the L2 penalty on the weights: smaller values give a simpler, more regularised "
         "model (scikit-learn's C).",
    "tol": "Stops the optimiser once its steps change the fit by less than this; smaller is more exact and slower.",
    "weight_decay": "Weight decay of the RAdam optimiser (used only with optimizer='radam'; the default L-BFGS "
                    "solver uses C instead).",
    "num_inducing": "Inducing points that summarise the training rows (capped at 2,000); more is more accurate "
                    "and slower.",
    "max_epochs": "Most passes over the training rows; training stops earlier once the fit stops improving.",
    "lr": "Adam's learning rate for the kernel's hyperparameters; too large makes training unstable.",
    "max_seconds": "Time limit of one fit in seconds; when it ends a fit, the result depends on the machine's speed.",
    "patience": "How many epochs in a row may improve less than the tolerance before training stops.",
    "ngd_lr": "Step size of the natural-gradient updates of the inducing points' distribution (0.1 is stable).",
    "cache_size": "Memory in MB that libsvm may use to cache kernel values; more is faster on large tables.",
    "max_iter": "Most iterations of the solver; -1 means no limit.",
    "difference_bound": "How far each group's rate may be from the overall rate on the training rows (the paper's "
                        "0.1; 0.01 for near-parity on the population).",
    "eps": "fairlearn's eps: caps the Lagrange multipliers at 1/eps; smaller enforces the constraint harder "
           "(and needs more iterations).",
    "tolerance": "How far each group's rate on the training rows may stay from its own target.",
    "grid_size": "How many candidate thresholds fairlearn tries per group; more is finer and slower.",
    "c": "Bound on the covariance between s and the decision value; 0 asks for the strictest fairness.",
    "gamma": "Allowed relative increase of the loss over the unconstrained model's (0.5: up to 50% more).",
    "tau0": "Starting weight of the penalty on the constraint's slack (convex-concave procedure).",
    "mu": "Factor by which the slack penalty grows each round.",
    "tau_max": "Largest weight the slack penalty may reach.",
    "max_rounds": "Most rounds of the convex-concave procedure.",
    "max_slack": "Largest slack of the constraint accepted when the procedure stops.",
}

MODEL_HELP = {
    ("agarwal", "max_iter"): "Most iterations of the exponentiated-gradient reduction (each fits one weighted LR).",
    ("target-reduction", "max_iter"): "Most iterations of the exponentiated-gradient reduction (each fits one "
                                      "weighted LR).",
    ("target-reduction", "eps"): "fairlearn's eps: caps the Lagrange multipliers at 1/eps; tight targets need "
                                 "small values (0.01).",
    ("zafar-fairness", "max_iter"): "Most iterations of the SLSQP solver.",
    ("zafar-accuracy", "max_iter"): "Most iterations of the SLSQP solver.",
    ("zafar-eqopp", "max_iter"): "Most SLSQP iterations in each round of the convex-concave procedure.",
    ("zafar-eqopp", "c"): "Bound on the covariance between s and the decision value among the positives (false "
                          "negatives); 0 is the strictest.",
    ("zafar-eqopp", "eps"): "Stops when a round changes the cost by at most this (and the slack is small).",
    ("svm", "tol"): "libsvm's stopping tolerance; smaller is more exact and slower.",
}


def setting_help(model: str, param: str) -> str | None:
    """The one line that explains ``param`` of ``model`` (``None`` for a setting nobody described yet)."""
    return MODEL_HELP.get((model, param), HELP.get(param))
