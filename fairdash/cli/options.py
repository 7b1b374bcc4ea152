"""What every command of the command line shares: its argument declarations (data and task, target),
and what they build, the task (with the table it came from) and the target specification. Used by
``main`` (``rates``, the parser, ``main``) and ``model_commands`` (``train``, ``predict``, ``sweep``,
``report``), which import it and not each other."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import data
from ..data.meaning import label_favourable, label_words, parse_positive_is
from ..errors import FairDashError
from ..models.registry import check_agarwal_bound
from ..targeting.criteria import CRITERIA, DEFAULT
from ..targeting.decision import PAPER_RULE, RULES, WITH_S_RULE, check_rule, choosable
from ..targeting.target_spec import DEFAULT_TNR_TARGET, DEFAULT_TPR_TARGET, make_target_spec
from ..targeting.targets import disadvantaged_group


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every other user mistake
        raise FairDashError(f"{message} (see '{self.prog} --help')")


def task_arguments(p: argparse.ArgumentParser) -> None:
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
    g.add_argument("--s-as-feature", action="store_true",
                   help="let the model see s as a feature: it then uses the protected attribute at prediction "
                        "time (direct use; lawful only in some settings)")
    g.add_argument("--y", dest="y_column", help="the label column")
    g.add_argument("--y1", action="append", default=[], help="a value of --y that counts as positive (repeatable)")
    g.add_argument("--y-threshold", type=float, help="positive = values of --y above this (numeric --y)")
    g.add_argument("--positive-is", metavar="favourable|unfavourable",
                   help="is a positive label favourable for the person (a loan granted) or unfavourable (rearrest, "
                        "default)? It names the disadvantaged group: the lowest base rate, or the highest. Default: "
                        "read from --positive-meaning, else favourable (a --paper set-up says its own)")
    g.add_argument("--positive-meaning", default="", help="what a positive label means, in plain words (shown in "
                                                          "the report)")
    g.add_argument("--features", help="comma-separated feature columns (default: every other column)")
    g.add_argument("--drop", default="", help="comma-separated columns to leave out of the features")
    g.add_argument("--missing", choices=["drop", "impute"], default="drop", help="rows with a missing feature")
    g.add_argument("--strata", help="legitimate-factor column for conditional demographic parity")
    g.add_argument("--seed", type=int, default=0, help="split seed (default 0)")


def _split_list(text):
    return tuple(x.strip() for x in text.split(",") if x.strip()) if text else ()


def load_task(args):
    """The Task named by the common arguments (a --paper set-up, or --data with --s/--y choices)."""
    task, setup, _ = load_task_and_table(args)
    return task, setup


def load_task_and_table(args):
    """:func:`load_task` and the table it was built from (for the proxy and leak checks), the table read
    once."""


    favourable = parse_positive_is(getattr(args, "positive_is", None), "--positive-is")
    if args.paper:
        setup = data.paper_setup(args.paper)
        if favourable is not None and favourable != setup.spec.positive_favourable:
            raise FairDashError(f"--paper {args.paper} fixes the task: its positive label is "
                                f"{'favourable' if setup.spec.positive_favourable else 'unfavourable'} for the person.")
        if args.data and args.data != setup.sample:
            raise FairDashError("--paper chooses the data set; leave out --data or make it match.")
        if args.strata:
            raise FairDashError("--paper fixes the task; a legitimate factor (--strata) needs --data with --s/--y.")
        table = data.load_sample(setup.sample)
        return data.build_paper_task(args.paper, table), setup, table
    if not args.data:
        raise FairDashError("Say which data to use: --data FILE_OR_SAMPLE (or --paper SETUP).")
    if not args.s_column or not args.y_column:
        raise FairDashError("Choose the sensitive attribute with --s and the label with --y.")
    if not args.s1 and args.s_threshold is None and not args.s_multi and not args.s_with:
        raise FairDashError("Say which values of --s form group 1 with --s1 VALUE (or use --s-threshold / --s-multi).")
    if not args.y1 and args.y_threshold is None:
        raise FairDashError("Say which values of --y are positive with --y1 VALUE (or use --y-threshold).")
    df = data.read_table_or_sample(args.data)
    sample = data.SAMPLES.get(args.data) if not Path(args.data).exists() else None
    meaning = getattr(args, "positive_meaning", "") or ""
    if (favourable is None and not meaning and sample is not None and args.y_column == sample.y_column
            and set(args.y1) == set(sample.y1_values) and args.y_threshold is None):
        favourable, meaning = sample.positive_favourable, sample.positive_meaning  # the bundled sample's own label
    spec = data.TaskSpec(
        s_column=args.s_column, y_column=args.y_column, s1_values=tuple(args.s1), y1_values=tuple(args.y1),
        y_threshold=args.y_threshold, s_threshold=args.s_threshold, s_multi=args.s_multi,
        features=_split_list(args.features) or None, drop=_split_list(args.drop), missing=args.missing,
        strata_column=args.strata, s_with=args.s_with, group_labels=_split_list(args.group_names),
        s_as_feature=args.s_as_feature, positive_meaning=meaning,
        positive_favourable=favourable,
    )
    task = data.build_task(df, spec)
    _print_warnings(task)
    return task, None, df


def label_line(task) -> str:
    """The positive label in one line: what it is, whether it is favourable for the person (said, read from
    its meaning, or assumed) and so which group is the disadvantaged one (base rates on the whole table)."""

    favourable, how = label_favourable(task.spec)
    j = disadvantaged_group(task.group_table()["base rate"].to_numpy(), favourable)
    return (f"Positive label (y = 1): {task.spec.y_column} = {task.label_names[1]}, {label_words(task.spec)}"
            + (", --positive-is to say otherwise" if how != "said" else "") + f"; the disadvantaged group is "
            f"{task.group_names[j]} ({'lowest' if favourable else 'highest'} base rate).")


def _print_warnings(task) -> None:
    """The data layer's repairs and notes (thousands separators, dropped rows, other sheets...), one
    ``warning: ...`` line each on standard error, so that a usable but repaired file is never silent."""
    for w in task.warnings:
        print(f"warning: {w}", file=sys.stderr)


# --------------------------------------------------------------------------------------------------
# rates
# --------------------------------------------------------------------------------------------------
def target_spec_from_args(args, setup=None, rate="given"):
    """The :class:`~fairdash.targeting.target_spec.TargetSpec` the target options ask for (built by the one
    function that validates targets). ``rate`` replaces ``--pr-t`` (a sweep passes ``None``: its grid
    is applied point by point)."""

    criterion = args.criterion or (setup.criterion if setup is not None else DEFAULT)
    pr_t = args.pr_t if rate == "given" else rate
    strata = setup.spec.strata_column if setup is not None else args.strata
    try:
        return make_target_spec(criterion, pr_t, args.delta, args.tpr_target, args.tnr_target, strata_column=strata,
                                decision=decisions_from_args(args)[0])
    except FairDashError as e:  # the library's words name no flag: the command line adds its own
        raise FairDashError(f"{e} {TARGET_FLAGS}") from None


TARGET_FLAGS = "(The target's options: --criterion, --pr-t, --delta, --tpr-target, --tnr-target, --strata.)"


def decisions_from_args(args) -> list[str]:
    """The decision rules ``--decision`` names (a sweep takes a comma list: models x rules in one sweep)."""

    text = getattr(args, "decision", None) or PAPER_RULE
    rules = [check_rule(r) for r in str(text).split(",") if r.strip()]
    return list(dict.fromkeys(rules)) or [PAPER_RULE]


def model_options(args, models) -> dict:
    """Per-model settings from the command line: ``--agarwal-bound`` (Agarwal et al.'s allowed
    difference; the paper's 0.1 when left out)."""

    out = {}
    tolerance = getattr(args, "target_tolerance", None)
    if tolerance is not None:
        if "target-reduction" not in models:
            raise FairDashError("--target-tolerance applies to the target-reduction model only; add it to the models "
                                "or leave the tolerance out.")
        if not 0.0 < tolerance < 1.0:
            raise FairDashError(f"--target-tolerance must lie between 0 and 1; got {tolerance:g}.")
        out["target-reduction"] = {"tolerance": tolerance}
    bound = getattr(args, "agarwal_bound", None)
    if bound is None:
        return out
    bound = check_agarwal_bound(bound)
    if "agarwal" not in models:
        raise FairDashError("--agarwal-bound applies to the agarwal model only; add it to the models or leave the "
                            "bound out.")
    return {**out, "agarwal": {"difference_bound": bound}}


def target_arguments(p: argparse.ArgumentParser, many: bool = False, training: bool = False) -> None:
    """The target options every command shares; ``many`` takes a list of rates (sweeps), ``training``
    adds the device and cache options."""

    g = p.add_argument_group("target" + (" and training" if training else ""))
    if many:
        g.add_argument("--pr-t", help="comma-separated target rates, or min/avg/max (default: the avg preset)")
    else:
        g.add_argument("--pr-t", help="target positive rate PR_t in (0, 1), or min/avg/max (default: avg); with "
                                      "--strata a number applies in every stratum, a preset is each stratum's own")
    g.add_argument("--criterion", choices=list(CRITERIA),
                   help="dp: demographic parity (default); eo: equality of opportunity (default with a COMPAS --paper "
                        "set-up)")
    g.add_argument("--delta", type=float, default=1.0, help="keep-rate delta in (0, 1] (default 1)")
    g.add_argument("--tpr-target", type=float, help="explicit TPR target (with --criterion eo; default "
                                                    f"{DEFAULT_TPR_TARGET:g} when --tnr-target is given)")
    g.add_argument("--tnr-target", type=float, help="explicit TNR target (with --criterion eo; default "
                                                    f"{DEFAULT_TNR_TARGET:g} when --tpr-target is given)")
    if training:
        words = "how scores become decisions: " + "; ".join(f"{r}: {RULES[r].explanation}" for r in choosable())
        if many:
            g.add_argument("--decision", default=PAPER_RULE,
                           help=words + f" (default {PAPER_RULE}). A comma list runs every model under every rule in "
                                        f"one sweep, e.g. {PAPER_RULE},{WITH_S_RULE}")
        else:
            g.add_argument("--decision", choices=choosable(), default=PAPER_RULE,
                           help=words + f" (default {PAPER_RULE})")
        g.add_argument("--agarwal-bound", type=float,
                       help="Agarwal et al.'s allowed difference between a group's rate and the overall rate (default "
                            "0.1, the paper's); a tight bound such as 0.01 comes closer to population parity without "
                            "s, at a rate of its own (Adult sex: PR ratio 0.888, against 0.410 at 0.1)")
        g.add_argument("--target-tolerance", type=float,
                       help="the target reduction's tolerance: how far each group's training rate may stay from its "
                            "target (default 0.01)")
        g.add_argument("--device", default="auto", help="auto (GPU if present), cpu or cuda")
        g.add_argument("--no-cache", action="store_true", help="do not use the fit cache")
