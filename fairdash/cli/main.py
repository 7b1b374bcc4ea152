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

from ..analysis.proxies import leak_text, task_leaks_and_proxies
from ..analysis.rates import common_tpr_words, describe_t, rates_readout, s_predictability_text
from ..errors import FairDashError
from . import model_commands
from .options import _Parser, label_line, load_task_and_table, target_arguments, target_spec_from_args, task_arguments

EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 1


# --------------------------------------------------------------------------------------------------
# rates
# --------------------------------------------------------------------------------------------------
def _cmd_rates(args) -> int:
    task, setup, table = load_task_and_table(args)
    out = rates_readout(task, target_spec_from_args(args, setup), seed=args.seed)
    # features that give s or y away (alone or together), and how well each feature alone predicts s
    out["leaks"], out["proxies"] = task_leaks_and_proxies(table, task)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    g = out["groups"]
    pr_t = "-" if out["target_rate"] is None else f"{out['target_rate']:.4f}"
    lines = [f"Training rows {out['n_train']}, test rows {out['n_test']}, balanced test rows {out['n_test_balanced']}",
             f"Target: {out['target_text']}", label_line(task),
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
    ceiling = ("Accuracy of every classifier that meets these TPR/TNR targets"
               if out["target"].get("tpr_target") is not None else "Theorem 2 accuracy ceiling at this target")
    lines += ["", f"{ceiling} (training split): {out['ceiling_at_target']:.4f}", ""]
    if common_tpr_words(out, list(g.values())):
        lines += [common_tpr_words(out, list(g.values())), ""]
    lines += [describe_t(out["t"][k], f"s={k} ({name})", out["flips"][k], out["labels_moved"][k])
              for k, name in g.items()]
    if "strata" in out:
        lines += ["", f"Conditional parity on `{task.spec.strata_column}`: ceiling "
                      f"{out['strata_ceiling_at_target']:.4f} (Theorem 2 per stratum, weighted by the stratum's share "
                      "of the training rows)",
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
    if out["s_predictability"] is not None:
        lines.append(s_predictability_text(out["s_predictability"], task.spec.s_column, task.n_groups))
    for text in dict.fromkeys(map(leak_text, out["leaks"])):  # a joint leak's columns share one line
        lines.append(f"warning: {text}; leave it out with --drop unless that is intended")
    print("\n".join(lines))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="fairdash", description="FairDash: tune a classifier's fairness by choosing the target positive "
                                             "rate.")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    r = sub.add_parser("rates", help="what a target positive rate implies: base rates, t_s, transitions, ceiling")
    task_arguments(r)
    target_arguments(r)
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=_cmd_rates)

    model_commands.add_commands(sub)
    return p


def _drop_stdout() -> None:
    """Point standard output at /dev/null, so that the interpreter's last flush at exit does not fail
    again on the closed pipe (Python's advice for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (a test's captured output)
        pass


def main(argv=None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USER_ERROR
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handlers, not at the interpreter's exit
        return code
    except FairDashError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``rates --json | head``): stop quietly
        _drop_stdout()
        return 141
    except OSError as e:  # a file that cannot be read or written: one line naming it
        where = f" {e.filename}" if e.filename else ""
        print(f"error: could not read or write{where} ({e.strerror or type(e).__name__}).", file=sys.stderr)
        return EXIT_USER_ERROR
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
