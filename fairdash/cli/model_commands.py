"""The model commands of the command line: ``train``, ``predict``, ``sweep`` and ``report``."""
from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from .. import data
from ..analysis.proxies import leak_text, task_leaks
from ..data import split_arrays
from ..errors import FairDashError
from ..evaluation.blindness import (
    PRICE_COLUMNS,
    PRICE_HI,
    PRICE_LO,
    RULES,
    price_group_columns,
    price_sentence,
    price_table,
)
from ..evaluation.gaps import REFERENCE_MODEL, landing_verdict, moved_away_summary
from ..evaluation.metric_table import POP, column_of, metric_of
from ..evaluation.thin import thin_notes
from ..evaluation.who_pays.table import CURVE, LEANED, who_pays_group_columns
from ..evaluation.who_pays.words import who_pays_sentences
from ..files.audit import output_columns
from ..files.export import load_model, save_model
from ..files.results_file import from_file, row_to_file, to_file
from ..files.run_spec import RunSpec
from ..files.safe_csv import results_csv
from ..files.session_file import load_session
from ..jsonable import to_jsonable
from ..models.registry import PAPER_MODELS, model_info
from ..report import build_report_from_sweep, report_for_run
from ..targeting.criteria import Criterion
from ..targeting.decision import PAPER_RULE, WITH_S_RULE
from ..targeting.targets import PRESETS
from ..work.experiments import ExperimentPlan, priced, run_experiment
from ..work.fit_cache import FitCache
from ..work.session_runs import restored_run
from .options import (
    decisions_from_args,
    load_task_and_table,
    model_options,
    target_arguments,
    target_spec_from_args,
    task_arguments,
)
from .printed import print_sweep, print_sweep_notes, print_trained


def _rates_list(text: str | None):
    """A sweep's grid: comma-separated numbers or preset names (min/avg/max); ``None`` without one."""
    if not text:
        return None
    out = []
    for x in (x.strip() for x in text.split(",")):
        if not x:
            continue
        if x.lower() in PRESETS:
            out.append(x.lower())
            continue
        try:
            out.append(float(x))
        except ValueError:
            raise FairDashError(f"Could not read {text!r} as a comma-separated list of numbers or presets (min, avg, "
                                f"max): {x!r} is neither.") from None
    return out


def _model_names(text: str, criterion: Criterion) -> list[str]:
    if not text:
        raise FairDashError("Say which models to train with --models NAME,NAME (or --models all).")
    if text.strip() == "all":
        return list(PAPER_MODELS[criterion.name])
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        model_info(n)
    return names


def _cache(args):
    return None if args.no_cache else FitCache()


def _json_safe(obj):
    """JSON for other programs: non-finite numbers are ``null``."""
    return to_jsonable(obj, nonfinite="null", other=str)


def _check_out(path: str) -> Path:
    """``--out`` as a path that can be written, checked before any work is done: a folder, a missing
    folder or a place that cannot be written is refused in one line (a new file is created to find out,
    and removed again)."""
    out = Path(path)
    if out.exists() and out.is_dir():
        raise FairDashError(f"--out {path} is a folder; give a file name.")
    if not out.parent.exists():
        raise FairDashError(f"The folder for --out ({out.parent}) does not exist.")
    existed = out.exists()
    try:
        with open(out, "ab"):
            pass
        if not existed:
            out.unlink()
    except OSError as e:
        raise FairDashError(f"--out {path} cannot be written ({e.strerror or type(e).__name__}); choose a file in a "
                            "folder you can write to.") from None
    return out


# --------------------------------------------------------------------------------------------------
def _warn_leaks(task, table) -> None:
    """Before training: a warning for each leak of y, and of s unless the run sees s on purpose."""

    why = {"y": "the model will learn it instead of the task. Leave it out with --drop.",
           "s": "a model meant not to see s would use s through it. Leave it out with --drop (or let the "
                "model see s on purpose with --s-as-feature)."}
    leaks = [x for x in task_leaks(table, task) if x["of"] == "y" or not task.spec.s_as_feature]
    for text, role in dict.fromkeys((leak_text(x), x["of"]) for x in leaks):
        print(f"warning: {text}; {why[role]}", file=sys.stderr)


def _warn_thin(task, spec, seed: int) -> None:
    """Before training: a warning for each group whose threshold or whose measured rates rest on few rows
    (on the split of ``seed``, the first of a sweep's)."""

    for note in thin_notes(split_arrays(task, seed), task.group_names, criterion=spec.criterion_info,
                           rule=spec.decision_rule.name):
        print(f"warning: {note}", file=sys.stderr)


def _cmd_train(args) -> int:
    task, setup, table = load_task_and_table(args)
    _warn_leaks(task, table)
    spec = target_spec_from_args(args, setup)
    out = _check_out(args.out)
    _warn_thin(task, spec, args.seed)
    model_info(args.model)
    # a fair model is trained beside plain LR on the same split, to say which way it moved each group
    models = [args.model] + ([REFERENCE_MODEL] if model_info(args.model).criteria else [])
    exp = run_experiment(ExperimentPlan(task, models, [None], [args.seed], target=spec, device=args.device,
                                        options=model_options(args, models), keep_models=True, only_serving=False,
                                        price=spec.decision_rule.needs_s or args.model == "target-reduction"),
                         cache=_cache(args), progress=None if args.json else _stderr_progress())
    row = exp.results.iloc[0]
    trained = next(m for (name, _, _), m in exp.models.items() if name == args.model)
    moved = moved_away_summary(exp.results,
                               task.group_names)
    price = _price_beside(args, task, spec, exp)
    save_model(trained, out)
    m = trained.metrics
    landing = landing_verdict(exp.results.iloc[:1], task.group_names)
    result = {"model": trained.name, "label": row["label"], "target_rate": trained.target_rate,
              "criterion": spec.criterion, "target": spec.to_dict(), "decision": trained.decision.to_dict(),
              "decides_with_s": bool(row["decides_with_s"]), "seed": args.seed,
              **row_to_file({k: m[k] for k in m if not k.startswith("n_")}),  # named as the results file names them
              **{k: row[k] for k in row.index if _is_move(k)}, "moved_away": row["moved_away"],
              **{k: row[k] for k in ("rule_reached", "rule_note", "below_majority", column_of("majority_accuracy", POP))
                 if k in row.index}, "lands": landing[0], "landing": landing[1], **price,
              "fit_seconds": trained.fit_seconds, "device": trained.device, "out": str(out)}
    if args.json:
        print(json.dumps(_json_safe(result), indent=2))
    else:
        print_trained(args, task, spec, exp, trained, out, moved, landing, price)
    return 0


def _price_beside(args, task, spec, exp) -> dict:
    """The price of deciding without s for ``train``: a model that lands with s (``group-rates``) is
    trained beside the target reduction (without s), the target reduction beside LR under ``group-rates``,
    on the same split; any other run has no price (empty)."""
    import pandas as pd

    if spec.decision_rule.needs_s:
        name, other = "target-reduction", spec.edited(decision=PAPER_RULE)
    elif args.model == "target-reduction":
        name, other = "lr", spec.edited(decision=WITH_S_RULE)
    else:
        return {}
    more = run_experiment(ExperimentPlan(task, [name], [None], [args.seed], target=other, device=args.device,
                                         only_serving=False, price=True), cache=_cache(args))
    both = priced(task, pd.concat([exp.results, more.results], ignore_index=True), exp.sides + more.sides,
                  spec.criterion_info, device=args.device, cache=_cache(args))
    first = both.iloc[0]
    table = price_table(both)
    out = {c: float(first[c]) for c in PRICE_COLUMNS + (PRICE_LO, PRICE_HI)}
    # per group: the rates both rules were matched on, and each side's positive rate on the population
    out.update({c: float(first[c]) for c in price_group_columns(len(task.group_names)) if c in both})
    out.update({c: str(first[c]) for c in RULES})
    out["price_sentence"] = price_sentence(table.iloc[0], task.spec.s_column, task.group_names) if len(table) else ""
    # who pays: per group the people decided differently and the within-group gap (each with its interval), the
    # features leaned on and the figure's bands (JSON), and the paragraph
    out.update({c: float(first[c]) for c in who_pays_group_columns(len(task.group_names)) if c in both})
    out.update({c: str(first[c]) for c in (LEANED, CURVE) if c in both})
    out["who_pays_sentence"] = next(iter(who_pays_sentences(both, task.spec.s_column, task.group_names, task.spec)), "")
    return out


def _is_move(column: str) -> bool:
    """Whether a results column is a group's move on the population (``moved_<g>``, gaps.mark_moves)."""
    hit = metric_of(column)
    return hit is not None and hit[0].name == "moved" and hit[1] == POP and hit[2] is not None


def _stderr_progress():
    last = {"msg": None}

    def report(fraction: float, message: str = "") -> None:
        if message and message != last["msg"] and sys.stderr.isatty():
            print(f"[{fraction * 100:5.1f}%] {message}", file=sys.stderr)
            last["msg"] = message

    return report


# --------------------------------------------------------------------------------------------------
def _cmd_predict(args) -> int:


    model = load_model(args.model)
    df = data.read_table_or_sample(args.data)
    out = _check_out(args.out)
    cleaned, repairs = data.clean_table(df)
    # compared with the training table first: refused in one line, or scored with warnings
    scores = model.score(cleaned)
    for note in [*df.attrs.get("read_notes", ()), *repairs, *scores.notes]:
        print(f"warning: {note}", file=sys.stderr)
    prob_col, pred_col = output_columns(df.columns)
    if prob_col != "probability":
        print(f"warning: the table already has a 'probability' or 'prediction' column; the scores are written to "
              f"{prob_col!r} and {pred_col!r} instead, and the table's own columns are kept as they are.",
              file=sys.stderr)
    res = df.copy()
    res[prob_col] = scores.probability
    res[pred_col] = scores.decision  # by the model's decision rule (the file records it)
    out.write_text(results_csv(res), encoding="utf-8")
    print(f"Scored {len(res)} rows; {int(res[pred_col].sum())} predicted positive. Written to {out}.")
    return 0


# --------------------------------------------------------------------------------------------------
def _cmd_sweep(args) -> int:
    task, setup, table = load_task_and_table(args)
    _warn_leaks(task, table)
    spec = target_spec_from_args(args, setup, rate=None)
    models = _model_names(args.models or ("all" if setup else ""), spec.criterion_info)
    grid = _sweep_grid(args.pr_t, setup, spec)
    repeats = args.repeats if args.repeats is not None else (10 if setup else 1)
    if repeats < 1:
        raise FairDashError("--repeats must be at least 1.")
    out = _check_out(args.out)
    seeds = list(range(args.seed, args.seed + repeats))
    _warn_thin(task, spec, args.seed)
    options = model_options(args, models)
    decisions = decisions_from_args(args)
    exp = run_experiment(ExperimentPlan(task, models, grid, seeds, target=spec, device=args.device, options=options,
                                        decisions=decisions if len(decisions) > 1 else None), cache=_cache(args),
                         n_jobs=args.n_jobs, progress=_stderr_progress(), dask_address=args.dask)
    for name, reason in exp.skipped:
        print(f"note: skipped {name}: {reason}", file=sys.stderr)
    out.write_text(results_csv(to_file(exp.results)), encoding="utf-8")
    run = RunSpec(data=args.data or (setup.sample if setup else None), task=task.spec, target=spec,
                  models=tuple(models), target_rates=tuple(grid), seeds=tuple(seeds), group_names=task.group_names,
                  paper=args.paper, command=_command_line(), options=options,
                  decisions=tuple(decisions) if len(decisions) > 1 else ())
    Path(str(out) + ".json").write_text(json.dumps(_json_safe(run.record()), indent=2), encoding="utf-8")
    print_sweep(exp, spec, models, decisions, repeats)
    print_sweep_notes(exp, task)
    print(f"Results: {out} (configuration: {out}.json)")
    return 0


def _sweep_grid(pr_t: str | None, setup, spec) -> list:
    """The sweep's target rates: ``--pr-t``'s, else the paper's grid for a paper set-up (not with explicit
    targets), else the target as it is (``[None]``)."""
    grid = _rates_list(pr_t)
    if grid is None:
        paper_grid = spec.criterion_info.paper_grid
        grid = list(paper_grid) if (setup is not None and paper_grid and not spec.explicit) else [None]
    return grid


def _command_line() -> str | None:
    """The command that ran this sweep, for its configuration (``None`` where it was not the command line)."""
    return ("python -m fairdash " + " ".join(shlex.quote(a) for a in sys.argv[1:])
            if sys.argv and sys.argv[0].endswith(("__main__.py", "fairdash")) else None)


# --------------------------------------------------------------------------------------------------
def _cmd_report(args) -> int:
    import pandas as pd

    if (args.session is None) == (args.results is None):
        raise FairDashError("report reads a session file (fairdash report session.fairdash-session) or a sweep's "
                            "results (--results results.csv --out report.html): give one of them.")
    if args.session is not None:
        return _report_from_session(args)
    if args.out is None:
        raise FairDashError("report --results needs --out (the HTML file to write).")
    results = Path(args.results)
    if not results.exists():
        raise FairDashError(f"No such results file: {results}")
    cfg_path = Path(str(results) + ".json")
    if not cfg_path.exists():
        raise FairDashError(f"{results} has no configuration beside it ({cfg_path.name}); make it with 'sweep'.")
    try:
        df = from_file(pd.read_csv(results))
        config = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (ValueError, OSError) as e:
        raise FairDashError(f"Could not read the sweep results: {e}") from None
    out = _check_out(args.out)
    html = build_report_from_sweep(df, config)
    out.write_text(html, encoding="utf-8")
    print(f"Report written to {out}")
    return 0


def _report_from_session(args) -> int:
    """The report of one run of a session file (the dashboard's "Save this session"): the latest, or ``--run``."""
    saved = load_session(args.session)
    runs = {r.number: r for r in saved.runs}
    if not runs:
        raise FairDashError(f"{Path(args.session).name} holds no runs (the session had trained nothing): nothing "
                            "to report.")
    number = max(runs) if args.run is None else args.run
    if number not in runs:
        raise FairDashError(f"{Path(args.session).name} has no run {number}; its runs: "
                            f"{', '.join(map(str, runs))}.")
    out = _check_out(args.out or str(Path(args.session).with_suffix(".html").name))
    run = restored_run(runs[number])
    out.write_text(report_for_run(run), encoding="utf-8")
    print(f"Report of {run.title} written to {out}")
    return 0


def add_commands(sub) -> None:
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

    r = sub.add_parser("report", help="a self-contained HTML report from a session file or a sweep's results")
    r.add_argument("session", nargs="?", help="a session file saved by the dashboard (.fairdash-session)")
    r.add_argument("--run", type=int, help="with a session file: the run to report (default: its latest)")
    r.add_argument("--results", help="the CSV written by 'sweep'")
    r.add_argument("--out", help="HTML file to write (with a session file, default: its name with .html)")
    r.set_defaults(func=_cmd_report)
