"""The one full-batch L-BFGS solver of FairDash's logistic regressions (FairLR, LR and WeightedLR's inner
problem): the matrix placed on its device (``place_matrix``), the solver (``lbfgs_logistic``) and its
Cholesky preconditioner (``logistic_hessian_root``, ``preconditioner_of``). Torch is imported inside each
function (a heavy import ``import fairdash.models`` defers).

The objective (``lbfgs_logistic``): minimise ``sum_i a_i * (-log P(y_i | x_i)) + ||w||^2 / (2 C)`` over
``(w, b)`` (the intercept ``b`` is not penalised), with ``P(y | x) = exp(w0) (1 - q) + exp(w1) q``,
``q = sigmoid(w.x + b)``: ``w0``, ``w1`` are the per-row log-terms of the transition table
(``likelihood.select_log_d``; the identity table gives the ordinary logistic loss) and ``a = row_weight``
(``None``: all 1). ``labels`` (the 0/1 labels as a float64 tensor, with ``w0 = w1 = None``) is the identity
table's shortcut: ``log P(y | x) = y z - softplus(z)`` and its gradient ``y - q`` without the log-sum-exp,
the same numbers (``exp`` of the table's ``log 0`` is exactly 0) for half the elementwise work. The
objective is divided by ``sum(a)`` (``n`` without weights), so ``tol`` does not depend on the number of
rows; the minimiser is the same.

Preconditioning (``precondition=True``): solve in the coordinates ``u`` with ``(w, b) = P u``,
``P = L^-T`` from the Cholesky factor ``L`` of the logistic loss's Hessian at the start
(``logistic_hessian_root``, one pass of ``n p^2``), so the problem L-BFGS sees is well conditioned even
where one-hot columns are collinear with the intercept (there only the small penalty curves the objective,
and plain L-BFGS needs hundreds of iterations to settle), and its first step is Newton's. A tensor is used
as ``P`` as it is; ``False`` (or ``None`` from a failed factorisation) solves in ``(w, b)`` itself. ``tol``
then bounds the gradient in ``u``, a Newton-decrement-like measure (the distance to the optimum in the
Hessian's norm).

A sparse matrix (``transposed``: with ``Xt`` a sparse CSR tensor on the device, the CSR tensor of ``X^T``):
the two products are sparse matrix-vector products over the whole matrix (no row chunks); on one-hot data
(Adult: 12% non-zeros) a float64 evaluation costs less than a dense float32 one. ``precondition`` must then
be ``False`` or a tensor.

``settle``: ``False`` also stops once the objective changes by less than 1e-12 between iterations (a round
whose answer is refined by a later one); ``True`` stops only at ``tol``, on a step that changes nothing, or
at ``max_iter``, so that the end point does not depend on where rounding put the last iterations (a final
round: ``solve_logistic``)."""
from __future__ import annotations

import numpy as np

# Above this many matrix elements per chunk, the full-batch gradient is accumulated over row chunks.
CHUNK_ELEMENTS = 50_000_000
# ``solve_logistic``'s first round on the float32 matrix stops here (about what float32 sums resolve on
# Adult-sized data); the float64 round takes it from there to ``tol``
FLOAT32_ROUND_TOL = 1e-5


def place_matrix(X, dtype, dev):
    """``X`` as the torch tensor ``lbfgs_logistic`` reads: on ``dev``; on a GPU too small to hold it in
    half its free memory, in pinned host memory instead (the solver moves row chunks over)."""
    import torch

    Xt = torch.tensor(X, dtype=dtype)  # a copy: X may be read-only, which torch cannot share (and warns about)
    if dev.type == "cuda":
        free = torch.cuda.mem_get_info(dev)[0]
        if Xt.numel() * Xt.element_size() < 0.5 * free:
            Xt = Xt.to(dev)
        else:  # too large for the GPU at once: rows stay in (pinned) host memory, chunks move over
            Xt = Xt.pin_memory()
    return Xt


def lbfgs_logistic(Xt, w0, w1, *, C, tol, max_iter, chunk_rows=None, report=None, row_weight=None,
                   precondition=False, start=None, labels=None, transposed=None, settle=False):
    """The one full-batch L-BFGS solver of FairDash's logistic regressions (FairLR, LR, WeightedLR): the
    objective of the module's notes (:class:`_LogisticObjective`) minimised over ``(w, b)``.

    ``Xt``: the ``(n, p)`` matrix as a torch tensor (float32 for mixed precision, float64 otherwise; on
    the device or in pinned host memory, moved over in chunks of ``chunk_rows`` rows; a sparse CSR
    tensor with ``transposed``, the CSR tensor of ``X^T``); ``w0``, ``w1``: the transition table's
    per-row log-terms, or ``labels`` (the identity table's shortcut); ``row_weight``: ``a`` (``None``:
    all 1), all float64 tensors on the device. ``tol``: the largest entry of the gradient that L-BFGS
    stops at. ``start``: the starting ``(w, b)`` as one array of ``p + 1`` numbers (``None``: zeros).
    ``precondition``: ``True`` (the Hessian at the start), a tensor ``P``, or ``False``/``None`` (none);
    ``settle``: stop only at ``tol``, on a step that changes nothing, or at ``max_iter`` (module notes).

    Returns ``(coef (p,), intercept, n_iter, converged)`` as numpy / Python numbers.
    """
    import torch

    report = report or (lambda fraction, message="": None)
    n, p = Xt.shape
    dev = (w0 if labels is None else labels).device
    max_iter = int(max_iter)
    chunk = chunk_rows or max(1024, CHUNK_ELEMENTS // max(p, 1))
    objective = _LogisticObjective(Xt, w0, w1, labels=labels, row_weight=row_weight, C=C, transposed=transposed,
                                   chunks=[(i, min(i + chunk, n)) for i in range(0, n, chunk)]
                                   if transposed is None else [(0, n)], dev=dev)
    theta, P = _start_and_preconditioner(Xt, row_weight, C, chunk_rows, start, precondition, dev)
    opt = torch.optim.LBFGS(
        [theta], lr=1.0, max_iter=max_iter, max_eval=int(max_iter * 1.25) + 25,
        tolerance_grad=float(tol), tolerance_change=0.0 if settle else 1e-12, history_size=10,
        line_search_fn="strong_wolfe",
    )
    evals = [0]
    last = {}  # the last point evaluated and its gradient: the end point, unless the line search backed off

    def closure():
        with torch.no_grad():
            loss, grad = objective(theta if P is None else P @ theta)  # at (w, b)
            theta.grad = grad if P is None else P.T @ grad
            last["at"], last["grad"] = theta.detach().clone(), theta.grad
            evals[0] += 1
            if evals[0] % 10 == 0:
                report(min(evals[0] / max_iter, 0.99), f"L-BFGS evaluation {evals[0]}")
            return loss

    opt.step(closure)
    state = opt.state[theta]
    n_iter = int(state.get("n_iter", 0))
    with torch.no_grad():
        if not torch.equal(last["at"], theta.detach()):
            closure()
        converged = bool(last["grad"].abs().max().item() <= float(tol) * 1.0001) or n_iter < max_iter
        th = theta if P is None else P @ theta
    th = th.detach().cpu().numpy().astype(np.float64)
    return th[:p], float(th[p]), n_iter, converged


def _start_and_preconditioner(Xt, row_weight, C, chunk_rows, start, precondition, dev):
    """``(theta, P)``: ``lbfgs_logistic``'s preconditioner ``P`` (the Hessian's root at the start for
    ``precondition=True``; ``None``: none) and the variables L-BFGS starts from, ``u`` with ``P u`` = the
    starting ``(w, b)`` (zeros without ``start``), or ``(w, b)`` itself without ``P``."""
    import torch

    coef0 = torch.zeros(Xt.shape[1] + 1, dtype=torch.float64, device=dev)
    if start is not None:
        coef0 = torch.as_tensor(np.asarray(start, dtype=np.float64), dtype=torch.float64, device=dev)
    if precondition is True:
        P = logistic_hessian_root(Xt, row_weight, coef0, C, chunk_rows)
    else:
        P = precondition if precondition is not False else None
    if P is None:
        return coef0.clone().requires_grad_(True), P
    # u with P u = coef0
    return torch.linalg.solve_triangular(P, coef0.reshape(-1, 1), upper=True).reshape(-1).requires_grad_(True), P


class _LogisticObjective:
    """``lbfgs_logistic``'s objective per unit of weight and its gradient at ``(w, b)`` (module notes),
    summed over the row ``chunks`` of ``Xt`` (one chunk, the whole sparse matrix, with ``transposed``) in
    float64 (``Xt``'s products in its own precision)."""

    def __init__(self, Xt, w0, w1, *, labels, row_weight, C, chunks, transposed, dev):
        self.Xt, self.w0, self.w1, self.labels, self.aw = Xt, w0, w1, labels, row_weight
        self.chunks, self.transposed, self.dev = chunks, transposed, dev
        n, self.p = Xt.shape
        self.inv_c = 1.0 / float(C)
        # per-row (per unit of weight) objective: tolerances do not depend on n
        self.scale = 1.0 / n if row_weight is None else 1.0 / float(row_weight.sum().item())
        # log-odds of ybar=1 given y and s; r = P(ybar=1|y,x,s) = sigmoid(k + z)
        self.k = None if labels is not None else w1 - w0

    def __call__(self, coef):
        """``(objective, gradient)`` at ``coef`` = ``(w, b)``, both per unit of weight."""
        import torch

        dtype, xdt, p = torch.float64, self.Xt.dtype, self.p
        w, b = coef[:p], coef[p]
        loss = 0.5 * self.inv_c * torch.dot(w, w)
        gw = self.inv_c * w
        gb = torch.zeros((), dtype=dtype, device=self.dev)
        wx = w.to(xdt)
        for lo, hi in self.chunks:
            Xc = self.Xt[lo:hi].to(self.dev, non_blocking=True) if self.transposed is None else self.Xt
            z = torch.mv(Xc, wx).to(dtype) + b
            ll, g = self._row_terms(z, lo, hi)
            loss = loss - ll.sum()
            gw = gw - torch.mv(Xc.T if self.transposed is None else self.transposed, g.to(xdt)).to(dtype)
            gb = gb - g.sum()
        grad = torch.cat([gw, gb.reshape(1)]) * self.scale
        return loss * self.scale, grad

    def _row_terms(self, z, lo, hi):
        """The rows' (weighted) ``log P(y | x)`` and its derivative in the logit ``z``."""
        import torch

        sp = torch.nn.functional.softplus(z)  # -log(1 - q)
        if self.labels is None:
            # log P(y|x,s) = logaddexp(w0 + log(1-q), w1 + log q), log q = z - softplus(z)
            ll = torch.logaddexp(self.w0[lo:hi] - sp, self.w1[lo:hi] - sp + z)
            # dlogL/dz = r - q
            g = torch.sigmoid(self.k[lo:hi] + z).sub_(torch.sigmoid(z))
        else:  # the identity table: r = y
            ll = z * self.labels[lo:hi] - sp
            g = self.labels[lo:hi] - torch.sigmoid(z)
        if self.aw is not None:
            ll = ll * self.aw[lo:hi]
            g = g.mul_(self.aw[lo:hi])
        return ll, g


def solve_logistic(X, w0, w1, *, C, tol, max_iter, mixed, dev, chunk_rows=None, report=None):
    """FairLR's and LR's fit: ``lbfgs_logistic``'s problem (no row weights) solved to where the answer no
    longer depends on the order of the sums (another CPU's vector width, the rows shuffled), in two
    preconditioned rounds:

    1. from zero, preconditioned by the logistic Hessian at zero, on the float32 matrix to
       ``FLOAT32_ROUND_TOL`` (``mixed``: its products are 2-3x faster) or on the float64 one to ``tol``;
    2. on the float64 matrix, preconditioned by the objective's own Hessian where round 1 ended
       (``logistic_hessian_root`` with the fair likelihood's ``shift``; the logistic Hessian there if
       that is not positive definite), to ``tol``, stopping on nothing else (``settle``).

    In round 2's coordinates the gradient is the Newton step measured in the Hessian's norm, so ``tol``
    bounds the distance to the optimum itself, not merely the slope: at ``tol=1e-9`` (FairLR's default)
    fits of Adult and COMPAS on rows in shuffled orders, and with other vector widths' kernels, give
    probabilities within 1e-7 of each other (``_version.SAME_NUMBERS_BOUND`` is 1e-6; benchmarks/results/
    2026-11-28-convergence.md). ``X``: the checked float64 numpy
    matrix; ``w0``, ``w1``: float64 tensors on ``dev``. Returns ``lbfgs_logistic``'s
    ``(coef, intercept, n_iter, converged)``, ``n_iter`` over both rounds, ``converged`` round 2's."""
    import torch

    report = report or (lambda fraction, message="": None)

    def within(lo):  # each round reports on its half of the fit, so the fraction only grows
        return lambda fraction, message="": report(lo + 0.5 * fraction, message)

    X64 = place_matrix(X, torch.float64, dev)
    X1 = place_matrix(X, torch.float32, dev) if mixed else X64
    zero = torch.zeros(X.shape[1] + 1, dtype=torch.float64, device=dev)
    P = logistic_hessian_root(X1, None, zero, C, chunk_rows)
    coef, b, n1, _ = lbfgs_logistic(X1, w0, w1, C=C, tol=max(tol, FLOAT32_ROUND_TOL) if mixed else tol,
                                    max_iter=max_iter, chunk_rows=chunk_rows, report=within(0.0),
                                    precondition=False if P is None else P)
    report(0.5, f"L-BFGS: {n1} iterations; refining in float64 on the objective's own curvature")
    at = np.append(coef, b)
    start = torch.as_tensor(at, dtype=torch.float64, device=dev)
    P = logistic_hessian_root(X64, None, start, C, chunk_rows, shift=w1 - w0)
    if P is None:
        P = logistic_hessian_root(X64, None, start, C, chunk_rows)
    coef, b, n2, converged = lbfgs_logistic(X64, w0, w1, C=C, tol=tol, max_iter=max(max_iter - n1, 1),
                                            chunk_rows=chunk_rows, report=within(0.5), start=at, settle=True,
                                            precondition=False if P is None else P)
    return coef, b, n1 + n2, converged


def logistic_hessian_root(Xt, row_weight, coef, C, chunk_rows=None, shift=None):
    """``L^-T`` (upper triangular) for the Cholesky factor ``L`` of the logistic objective's Hessian at
    ``coef`` = ``(w, b)`` (a float64 tensor of ``p + 1`` numbers), per unit of weight:
    ``([X 1]^T diag(a h) [X 1] + diag(1/C, ..., 1/C, 0)) / sum(a)`` with ``h = q (1 - q)``;
    ``lbfgs_logistic``'s preconditioner. The sums are taken in ``Xt``'s precision (float32 is plenty
    for a preconditioner), the factor in float64. ``None`` if the matrix is not numerically positive
    definite (then ``lbfgs_logistic`` runs without preconditioning).

    ``shift``: the per-row log-odds ``k = w1 - w0`` of the fair likelihood (a float64 tensor on the
    device; ``lbfgs_logistic``'s ``w0``, ``w1``): then the Hessian is the fair objective's own,
    ``h = q (1 - q) - r (1 - r)`` with ``r = sigmoid(k + z)`` (the second derivative of
    ``-log P(y | x)`` in the logit ``z``; the identity table has ``r = y`` and so the logistic ``h``).
    Near the optimum it is positive definite, and L-BFGS on it takes Newton's steps."""
    import torch

    n, p = Xt.shape
    dtype, dev = coef.dtype, coef.device
    xdt = Xt.dtype
    aw = row_weight
    chunk = chunk_rows or max(1024, CHUNK_ELEMENTS // max(p, 1))
    H = torch.zeros(p + 1, p + 1, dtype=dtype, device=dev)
    wx, b = coef[:p].to(xdt), coef[p]
    for lo in range(0, n, chunk):
        Xc = Xt[lo:lo + chunk].to(dev, non_blocking=True)
        z = torch.mv(Xc, wx).to(dtype) + b
        q = torch.sigmoid(z)
        h = q * (1.0 - q)
        if shift is not None:
            r = torch.sigmoid(shift[lo:lo + chunk] + z)
            h = h - r * (1.0 - r)
        if aw is not None:
            h = h * aw[lo:lo + chunk]
        H[:p, :p] += (Xc.T @ (Xc * h.to(xdt)[:, None])).to(dtype)
        H[:p, p] += torch.mv(Xc.T, h.to(xdt)).to(dtype)
        H[p, p] += h.sum()
    H[p, :p] = H[:p, p]
    H[:p, :p] += torch.eye(p, dtype=dtype, device=dev) / float(C)
    H /= float(n) if aw is None else float(aw.sum().item())
    return preconditioner_of(H)


def preconditioner_of(H):
    """``L^-T`` of the Cholesky factor ``H = L L^T`` of a Hessian (L-BFGS's preconditioner), or ``None``
    where ``H`` is not positive definite."""
    import torch

    L, info = torch.linalg.cholesky_ex(H)
    if int(info.item()) != 0:
        return None
    eye = torch.eye(H.shape[0], dtype=H.dtype, device=H.device)
    return torch.linalg.solve_triangular(L.T, eye, upper=True)
