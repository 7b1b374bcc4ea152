"""Command line: ``python -m fairdash rates|train|predict|sweep|report``.

Every command walks the same path as the dashboard (data -> task -> split -> target -> model). A user
mistake prints one line ``error: ...`` on standard error and exits with status 2; nothing prints a
traceback unless FAIRDASH_DEBUG=1.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from .errors import FairDashError

EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 1


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every other user mistake
        raise FairDashError(f"{message} (see '{self.prog} --help')")


def _task_arguments(p: argparse.ArgumentParser, required: bool = True) -> None:
    g = p.add_argument_group("data and task")
    g.add_argument("--data", help="a table file (CSV/TSV/gz, Parquet, Excel) or a bundled sample: adult, compas")
    g.add_argument("--paper", help="the paper's set-up: adult-sex, adult-race, compas-sex, compas-race")
    g.add_argument("--s", dest="s_column", help="the sensitive attribute column")
    g.add_argument("--s1", action="append", default=[], help="a value of --s that forms group 1 (repeatable)")
    g.add_argument("--s-threshold", type=float, help="group 1 = values of --s above this (numeric --s)")
    g.add_argument("--s-multi", action="store_true", help="every value of --s is its own group")
    g.add_argument("--s-with", help="a second column crossed with --s: every combination is its own group "
                                    "(intersectional, e.g. --s race --s-with sex)")
    g.add_argument("--group-names", help="comma-separated names for the groups, in group order (e.g. female,male)")
    g.add_argument("--y", dest="y_column", help="the label column")
    g.add_argument("--y1", action="append", default=[], help="a value of --y that counts as positive (repeatable)")
    g.add_argument("--y-threshold", type=float, help="positive = values of --y above this (numeric --y)")
    g.add_argument("--features", help="comma-separated feature columns (default: every other column)")
    g.add_argument("--drop", default="", help="comma-separated columns to leave out of the features")
    g.add_argument("--missing", choices=["drop", "impute"], default="drop", help="rows with a missing feature")
    g.add_argument("--strata", help="legitimate-factor column for conditional demographic parity")
    g.add_argument("--seed", type=int, default=0, help="split seed (default 0)")


def _split_list(text):
    return tuple(x.strip() for x in text.split(",") if x.strip()) if text else ()


def load_task(args):
    """The Task named by the common arguments (a --paper set-up, or --data with --s/--y choices)."""
    from . import data

    if args.paper:
        setup = data.paper_setup(args.paper)
        if args.data and args.data != setup.sample:
            raise FairDashError("--paper chooses the data set; leave out --data or make it match.")
        if args.strata:
            raise FairDashError("--paper fixes the task; a legitimate factor (--strata) needs --data with --s/--y.")
        return data.build_task(data.load_sample(setup.sample), setup.spec), setup
    if not args.data:
        raise FairDashError("Say which data to use: --data FILE_OR_SAMPLE (or --paper SETUP).")
    if not args.s_column or not args.y_column:
        raise FairDashError("Choose the sensitive attribute with --s and the label with --y.")
    if not args.s1 and args.s_threshold is None and not args.s_multi and not args.s_with:
        raise FairDashError("Say which values of --s form group 1 with --s1 VALUE (or use --s-threshold / --s-multi).")
    if not args.y1 and args.y_threshold is None:
        raise FairDashError("Say which values of --y are positive with --y1 VALUE (or use --y-threshold).")
    df = data.read_table_or_sample(args.data)
    spec = data.TaskSpec(
        s_column=args.s_column, y_column=args.y_column, s1_values=tuple(args.s1), y1_values=tuple(args.y1),
        y_threshold=args.y_threshold, s_threshold=args.s_threshold, s_multi=args.s_multi,
        features=_split_list(args.features) or None, drop=_split_list(args.drop), missing=args.missing,
        strata_column=args.strata, s_with=args.s_with, group_labels=_split_list(args.group_names),
    )
    task = data.build_task(df, spec)
    _print_warnings(task)
    return task, None


def load_task_and_table(args):
    """:func:`load_task` and the table it was built from (for the proxy and leak checks)."""
    from . import data

    task, setup = load_task(args)
    table = data.load_sample(setup.sample) if setup is not None else data.read_table_or_sample(args.data)
    return task, setup, table


def _print_warnings(task) -> None:
    """The data layer's repairs and notes (thousands separators, dropped rows, other sheets...), one
    ``warning: ...`` line each on standard error, so that a usable but repaired file is never silent."""
    for w in task.warnings:
        print(f"warning: {w}", file=sys.stderr)


# --------------------------------------------------------------------------------------------------
# rates
# --------------------------------------------------------------------------------------------------
def target_spec_from_args(args, setup=None, rate="given"):
    """The :class:`~fairdash.target_spec.TargetSpec` the target options ask for (built by the one
    function that validates targets). ``rate`` replaces ``--pr-t`` (a sweep passes ``None``: its grid
    is applied point by point)."""
    from .target_spec import make_target_spec

    criterion = args.criterion or (setup.criterion if setup is not None else "dp")
    pr_t = args.pr_t if rate == "given" else rate
    strata = setup.spec.strata_column if setup is not None else args.strata
    return make_target_spec(criterion, pr_t, args.delta, args.tpr_target, args.tnr_target, strata_column=strata)


def _cmd_rates(args) -> int:
    from .rates import describe_t, rates_readout

    from .proxies import task_leaks, task_proxies

    task, setup, table = load_task_and_table(args)
    out = rates_readout(task, target_spec_from_args(args, setup), seed=args.seed)
    out["proxies"] = task_proxies(task)  # how well each feature alone predicts s (strongest first)
    out["leaks"] = task_leaks(table, task)  # features that give s or y away almost exactly
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    g = out["groups"]
    pr_t = "-" if out["target_rate"] is None else f"{out['target_rate']:.4f}"
    lines = [f"Training rows {out['n_train']}, test rows {out['n_test']}, balanced test rows {out['n_test_balanced']}",
             f"Target: {out['target_text']}",
             f"Target positive rate PR_t = {pr_t}   (presets: min {out['presets']['min']:.4f}, "
             f"avg {out['presets']['avg']:.4f}, max {out['presets']['max']:.4f})",
             "",
             f"{'group':<34}{'share':>8}{'base rate':>11}{'t_s':>8}{'P(ybar=1|y=1)':>15}{'P(ybar=1|y=0)':>15}"
             f"{'P(y=1|ybar=0)':>15}{'P(y=1|ybar=1)':>15}"]
    for k, name in g.items():
        tr = out["transition"][k]
        t = out["t"][k]
        lines.append(f"{('s=' + k + ': ' + name)[:33]:<34}{out['group_share'][k]:>8.4f}{out['base_rates'][k]:>11.4f}"
                     f"{(t if t is not None else float('inf')):>8.4f}{tr['p_ybar1_given_y1']:>15.4f}"
                     f"{tr['p_ybar1_given_y0']:>15.4f}{tr['p_y1_given_ybar0']:>15.4f}{tr['p_y1_given_ybar1']:>15.4f}")
    lines += ["", f"Theorem 2 accuracy ceiling at this target (training split): {out['accuracy_bound']:.4f}", ""]
    lines += [describe_t(out["t"][k], f"s={k} ({name})", out["flips"][k]) for k, name in g.items()]
    if "strata" in out:
        lines += ["", f"Conditional parity on `{task.spec.strata_column}`: ceiling {out['strata_accuracy_bound']:.4f} "
                      "(Theorem 2 per stratum, weighted by the stratum's share of the training rows)",
                  f"{'stratum':<24}{'group':<28}{'rows':>8}{'base rate':>11}{'target':>9}{'t_s':>8}"]
        for stratum, st in out["strata"].items():
            for k, name in g.items():
                t = st["t"][k]
                lines.append(f"{stratum[:23]:<24}{('s=' + k + ': ' + name)[:27]:<28}{st['rows'][k]:>8}"
                             f"{st['base_rates'][k]:>11.4f}{st['target_rates'][k]:>9.4f}"
                             f"{(t if t is not None else float('inf')):>8.4f}")
        lines += [f"warning: {w}" for w in out["strata_warnings"]]
    lines += ["", "Proxies of s (how well each feature alone predicts s; AUC, 0.5 = not at all): "
              + (", ".join(f"{p['column']} {p['score']:.3f}" for p in out["proxies"][:5]) or "none")]
    for leak in out["leaks"]:
        lines.append(f"warning: {leak['column']!r} gives {leak['of']} away almost exactly (score {leak['score']:.3f}); "
                     "leave it out with --drop unless that is intended")
    print("\n".join(lines))
    return 0


def target_arguments(p: argparse.ArgumentParser, many: bool = False, training: bool = False) -> None:
    """The target options every command shares; ``many`` takes a list of rates (sweeps), ``training``
    adds the device and cache options."""
    g = p.add_argument_group("target" + (" and training" if training else ""))
    if many:
        g.add_argument("--pr-t", help="comma-separated target rates, or min/avg/max (default: the avg preset)")
    else:
        g.add_argument("--pr-t", help="target positive rate PR_t in (0, 1), or min/avg/max (default: avg); with "
                                      "--strata a number applies in every stratum, a preset is each stratum's own")
    g.add_argument("--criterion", choices=["dp", "eo"],
                   help="dp: demographic parity (default); eo: equality of opportunity (default with a COMPAS --paper set-up)")
    g.add_argument("--delta", type=float, default=1.0, help="keep-rate delta in (0, 1] (default 1)")
    g.add_argument("--tpr-target", type=float, help="explicit TPR target (with --criterion eo; a missing one of "
                                                    "--tpr-target/--tnr-target is 1)")
    g.add_argument("--tnr-target", type=float, help="explicit TNR target (with --criterion eo)")
    if training:
        g.add_argument("--device", default="auto", help="auto (GPU if present), cpu or cuda")
        g.add_argument("--no-cache", action="store_true", help="do not use the fit cache")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="fairdash", description="FairDash: tune a classifier's fairness by choosing the target positive rate.")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    r = sub.add_parser("rates", help="what a target positive rate implies: base rates, t_s, transitions, ceiling")
    _task_arguments(r)
    target_arguments(r)
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=_cmd_rates)

    try:
        from . import cli_models
    except ImportError:  # pragma: no cover - the model commands need torch
        cli_models = None
    if cli_models is not None:
        cli_models.add_commands(sub, _task_arguments)
    return p


def main(argv=None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USER_ERROR
        return int(args.func(args) or 0)
    except FairDashError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print("error: out of memory; try a smaller table or fewer rows", file=sys.stderr)
        return EXIT_INTERNAL_ERROR
    except Exception as e:  # never a traceback for the user; FAIRDASH_DEBUG=1 shows it
        if os.environ.get("FAIRDASH_DEBUG"):
            raise
        msg = (str(e).strip().splitlines() or [""])[0][:300]
        print(f"error: unexpected failure ({type(e).__name__}: {msg}); rerun with FAIRDASH_DEBUG=1 for details",
              file=sys.stderr)
        return EXIT_INTERNAL_ERROR
