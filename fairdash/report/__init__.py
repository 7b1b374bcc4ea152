"""The self-contained HTML report (one file that opens offline and prints to A4): its content as plain
data (``content``), its figures (``figures``) and the page (``build``, a Jinja2 template in
``templates/``)."""
from .build import (
           build_report,
           build_report_from_sweep,
           eval_rates_for,
           readout_target,
           report_for_run,
           report_for_runs,
)
from .content import describe_task, plain_summary
from .figures import esc, figure_html, make_figures

__all__ = ["build_report", "build_report_from_sweep", "describe_task", "esc", "eval_rates_for", "figure_html",
           "make_figures", "plain_summary", "readout_target", "report_for_run",
           "report_for_runs"]
