"""Helpers the baselines share (Kamiran & Calders, Agarwal et al., Zafar et al.): numpy's BLAS on one
thread around an iterative solver, and the two columns of ``predict_proba`` from P(y=1)."""
from __future__ import annotations

import numpy as np


def one_blas_thread():
    """A context that runs numpy's BLAS on one thread.

    The iterative solvers here (SLSQP, lbfgs) make many small matrix products; with several BLAS
    threads on a busy 2-core machine they ran up to 10x slower, and their last digits depended on the
    thread count. One thread makes fits faster and reproducible; parallelism comes from running several
    fits at once (joblib), not from BLAS.
    """
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def proba_from_p1(p1: np.ndarray) -> np.ndarray:
    return np.column_stack([1.0 - p1, p1])
