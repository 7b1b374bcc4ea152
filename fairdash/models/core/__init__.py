"""The estimators' shared machinery: the validating base (``base``), parameter and input checks (``params``,
``inputs``), the paper's target-label likelihood (``likelihood``), the logistic solvers (``solver``,
``weighted_lr``), the randomised mixture of reductions (``mixture``), the model state (``state``) and small
numeric helpers (``common``). The estimators themselves are one level up, in ``fairdash.models``."""
