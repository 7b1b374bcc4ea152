"""The model commands of the command line: ``train``, ``predict``, ``sweep`` and ``report``."""
from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import numpy as np

from .errors import FairDashError

EO_PAPER_GRID = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
PRINTED_METRICS = ("accuracy", "pr_0", "pr_1", "tpr_0", "tpr_1", "tnr_0", "tnr_1", "pr_ratio", "tpr_ratio")


def _floats(text: str | None):
    if not text:
        return None
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise FairDashError(f"Could not read {text!r} as a comma-separated list of numbers.") from None


def _model_names(text: str, criterion: str) -> list[str]:
    from .models.registry import PAPER_DP_MODELS, PAPER_EO_MODELS, model_info

    if not text:
        raise FairDashError("Say which models to train with --models NAME,NAME (or --models all).")
    if text.strip() == "all":
        return list(PAPER_DP_MODELS if criterion == "dp" else PAPER_EO_MODELS)
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        model_info(n)
    return names


def _criterion(args, setup) -> str:
    if args.criterion:
        return args.criterion
    return setup.criterion if setup is not None else "dp"


def _cache(args):
    from .backend import FitCache

    return None if args.no_cache else FitCache()


def _json_safe(obj):
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        return None if not np.isfinite(obj) else float(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def _check_out(path: str, suffixes=None) -> Path:
    out = Path(path)
    if out.exists() and out.is_dir():
        raise FairDashError(f"--out {path} is a folder; give a file name.")
    if not out.parent.exists():
        raise FairDashError(f"The folder for --out ({out.parent}) does not exist.")
    return out


# --------------------------------------------------------------------------------------------------
def _cmd_train(args) -> int:
    from .cli import load_task
    from .experiments import fit_model

    task, setup = load_task(args)
    criterion = _criterion(args, setup)
    out = _check_out(args.out)
    trained = fit_model(task, args.model, target_rate=args.pr_t, criterion=criterion, seed=args.seed,
                        delta=args.delta, tpr_target=args.tpr_target, tnr_target=args.tnr_target,
                        device=args.device, cache=_cache(args),
                        progress=None if args.json else _stderr_progress())
    try:
        from .export import save_model
    except ImportError as e:  # pragma: no cover
        raise FairDashError(f"Saving models is not available: {e}") from None
    save_model(trained, out)
    m = trained.metrics
    result = {"model": trained.name, "target_rate": trained.target_rate, "criterion": criterion, "seed": args.seed,
              **{k: m[k] for k in m if not k.startswith("n_")}, "fit_seconds": trained.fit_seconds,
              "device": trained.device, "out": str(out)}
    if args.json:
        print(json.dumps(_json_safe(result), indent=2))
    else:
        print(f"{trained.label} trained on the training split (seed {args.seed}, PR_t {_fmt(trained.target_rate)})")
        print(f"Saved to {out}  ({trained.fit_seconds:.2f} s on {trained.device})")
        print(f"Evaluated on the {m['eval_set']} set ({m['n_eval']} rows):")
        for k in PRINTED_METRICS:
            print(f"  {k:<10} {_fmt(m.get(k))}")
        print(f"  Theorem 2 ceiling at the measured group rates: {_fmt(m.get('accuracy_bound'))}")
    return 0


def _fmt(v):
    return "n/a" if v is None or not np.isfinite(v) else f"{v:.4f}"


def _stderr_progress():
    last = {"msg": None}

    def report(fraction: float, message: str = "") -> None:
        if message and message != last["msg"] and sys.stderr.isatty():
            print(f"[{fraction * 100:5.1f}%] {message}", file=sys.stderr)
            last["msg"] = message

    return report


# --------------------------------------------------------------------------------------------------
def _cmd_predict(args) -> int:

    from . import data
    from .export import load_model

    model = load_model(args.model)
    df = data.read_table_or_sample(args.data)
    out = _check_out(args.out)
    cleaned, _ = data.clean_table(df)
    proba = model.predict_proba(cleaned)[:, 1]
    res = df.copy()
    res["probability"] = proba
    res["prediction"] = (proba > 0.5).astype(int)
    try:
        from .export import results_csv

        out.write_text(results_csv(res), encoding="utf-8")
    except ImportError:  # pragma: no cover
        res.to_csv(out, index=False)
    print(f"Scored {len(res)} rows; {int(res['prediction'].sum())} predicted positive. Written to {out}.")
    return 0


# --------------------------------------------------------------------------------------------------
def _cmd_sweep(args) -> int:
    from .cli import load_task
    from .experiments import run_experiment
    from .metrics import format_mean_std, summarize

    task, setup = load_task(args)
    criterion = _criterion(args, setup)
    models = _model_names(args.models or ("all" if setup else ""), criterion)
    grid = _floats(args.pr_t)
    if grid is None:
        grid = list(EO_PAPER_GRID) if (setup is not None and criterion == "eo") else [None]
    repeats = args.repeats if args.repeats is not None else (10 if setup else 1)
    if repeats < 1:
        raise FairDashError("--repeats must be at least 1.")
    out = _check_out(args.out)
    exp = run_experiment(task, models, grid, range(args.seed, args.seed + repeats), criterion=criterion,
                         delta=args.delta, tpr_target=args.tpr_target, tnr_target=args.tnr_target,
                         device=args.device, cache=_cache(args), n_jobs=args.n_jobs,
                         progress=_stderr_progress(), dask_address=args.dask)
    for name, reason in exp.skipped:
        print(f"note: skipped {name}: {reason}", file=sys.stderr)
    try:
        from .export import results_csv

        out.write_text(results_csv(exp.results), encoding="utf-8")
    except ImportError:  # pragma: no cover
        exp.results.to_csv(out, index=False)
    config = {"task": task.spec.to_dict(), "data": args.data or (setup.sample if setup else None),
              "paper": args.paper, "criterion": criterion, "models": models, "target_rates": grid,
              "seeds": list(range(args.seed, args.seed + repeats)), "group_names": list(task.group_names),
              "command": "python -m fairdash " + " ".join(shlex.quote(a) for a in sys.argv[1:])
              if sys.argv and sys.argv[0].endswith(("__main__.py", "fairdash")) else None}
    Path(str(out) + ".json").write_text(json.dumps(_json_safe(config), indent=2), encoding="utf-8")
    key = "pr_ratio" if criterion == "dp" else "tpr_ratio"
    summary = summarize(exp.results, metrics=["accuracy", key, "pr_0", "pr_1", "tpr_0", "tpr_1", "fit_seconds"])
    print(f"{'model':<20}{'PR_t':>8}{'accuracy':>18}{key:>18}{'fit s':>9}  ({repeats} repeat(s), "
          f"{'balanced test set' if criterion == 'dp' else 'test set'})")
    for _, r in summary.iterrows():
        t = "" if not np.isfinite(r["target_rate"]) else f"{r['target_rate']:.3f}"
        print(f"{r['model']:<20}{t:>8}{format_mean_std(r['accuracy_mean'], r['accuracy_std']):>18}"
              f"{format_mean_std(r[key + '_mean'], r[key + '_std']):>18}{r['fit_seconds_mean']:>9.2f}")
    print(f"Results: {out} (configuration: {out}.json)")
    return 0


# --------------------------------------------------------------------------------------------------
def _cmd_report(args) -> int:
    import pandas as pd

    from .report import build_report_from_sweep

    results = Path(args.results)
    if not results.exists():
        raise FairDashError(f"No such results file: {results}")
    cfg_path = Path(str(results) + ".json")
    if not cfg_path.exists():
        raise FairDashError(f"{results} has no configuration beside it ({cfg_path.name}); make it with 'sweep'.")
    try:
        df = pd.read_csv(results)
        config = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (ValueError, OSError) as e:
        raise FairDashError(f"Could not read the sweep results: {e}") from None
    out = _check_out(args.out)
    html = build_report_from_sweep(df, config)
    out.write_text(html, encoding="utf-8")
    print(f"Report written to {out}")
    return 0


def add_commands(sub, task_arguments) -> None:
    from .cli import target_arguments

    t = sub.add_parser("train", help="train one model on the training split and save it")
    task_arguments(t)
    t.add_argument("--model", required=True, help="fair-lr, fair-gp, lr, gp, svm, kamiran, agarwal, zafar-...")
    target_arguments(t, training=True)
    t.add_argument("--out", required=True, help="model file to write (.fairdash)")
    t.add_argument("--json", action="store_true", help="print the test metrics as one JSON object")
    t.set_defaults(func=_cmd_train)

    p = sub.add_parser("predict", help="score a table with a saved model")
    p.add_argument("--model", required=True, help="a .fairdash model file")
    p.add_argument("--data", required=True, help="the table to score (the training columns; s not needed)")
    p.add_argument("--out", required=True, help="CSV to write, with 'probability' and 'prediction' added")
    p.set_defaults(func=_cmd_predict)

    s = sub.add_parser("sweep", help="models x target rates x repeats on the paper's protocol")
    task_arguments(s)
    s.add_argument("--models", help="comma-separated model names, or 'all'")
    target_arguments(s, many=True, training=True)
    s.add_argument("--repeats", type=int, help="number of seeds (default 1; 10 with --paper)")
    s.add_argument("--n-jobs", type=int, default=1, help="parallel runs (joblib); -1 = every core")
    s.add_argument("--dask", help="address of a Dask scheduler to run on (or FAIRDASH_DASK_ADDRESS)")
    s.add_argument("--out", required=True, help="CSV of tidy results to write")
    s.set_defaults(func=_cmd_sweep)

    r = sub.add_parser("report", help="a self-contained HTML report from a sweep's results")
    r.add_argument("--results", required=True, help="the CSV written by 'sweep'")
    r.add_argument("--out", required=True, help="HTML file to write")
    r.set_defaults(func=_cmd_report)
