"""How FairDash's figures look, in one place: a colour-blind-safe palette (Okabe & Ito), one marker symbol
per model and a fill per run, labels written beside the points (so no figure needs hovering to be read),
and the shared Plotly layout. Used by :mod:`fairdash.figures.plots` and :mod:`fairdash.figures.plots_target`.

Colour is never the only cue: every model has its own marker symbol; when several runs are drawn each
run of a model gets its own fill (filled, open, dotted, open-dotted), and every point or line carries its
label as text.
"""
from __future__ import annotations

import math

import plotly.graph_objects as go

# Okabe & Ito (2008), "Color Universal Design": eight colours told apart under every common colour-vision
# deficiency. (Yellow and sky blue are light: their markers get a dark outline.)
OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")
_LIGHT = {"#E69F00", "#56B4E9", "#F0E442"}
TEXT = "#111111"  # label text: dark on white whatever the marker's colour

# model label -> (colour, marker symbol): stable across figures; fair models in the strongest colours.
MODEL_STYLES = {
    "FairLR": ("#D55E00", "circle"), "FairGP": ("#CC79A7", "diamond"), "LR": ("#0072B2", "square"),
    "GP": ("#56B4E9", "triangle-up"), "SVM": ("#000000", "x"), "Kamiran & Calders": ("#009E73", "triangle-down"),
    "Agarwal et al.": ("#E69F00", "pentagon"), "ZafarFairness": ("#000000", "star"),
    "ZafarAccuracy": ("#0072B2", "hexagram"), "ZafarEqOpp": ("#009E73", "star-diamond"),
}
MODEL_COLOURS = {k: c for k, (c, _) in MODEL_STYLES.items()}
# every symbol here has all four of the runs' fills in plotly (hourglass and bowtie have no "-dot": a fourth model
# without a style of its own drawn from three runs raised plotly's ValueError on Compare, issue 47)
_SPARE_SYMBOLS = ("cross", "triangle-left", "triangle-right", "diamond-wide", "hexagon", "star-triangle-up",
                  "star-square", "diamond-tall")
_RUN_FILLS = ("", "-open", "-dot", "-open-dot")  # run 1, 2, 3, 4 of one model (then the colour shifts)
# Where a label sits beside its point, one per line drawn: neighbours' labels go to different sides.
# (Two runs of one model are drawn two lines apart: they get different heights.)
TEXT_POSITIONS = ("top right", "top left", "bottom right", "bottom left", "middle right", "middle left")
RUN = "run"  # the results column that carries a row's run number where several runs are drawn together

# A light look close to plotly_white, spelled out: a named template costs ~40 ms per figure, too much
# for a figure redrawn on every slider move. (The dashboard applies Streamlit's theme on top.)
GRID = dict(gridcolor="#EBF0F8", zerolinecolor="#EBF0F8", linecolor="#BCCCDC", showline=False,
            ticks="", automargin=True)
LAYOUT = dict(paper_bgcolor="white", plot_bgcolor="white", font=dict(color="#2a3f5f"),
              margin=dict(l=60, r=20, t=60, b=55), height=430, hovermode="closest",
              legend=dict(orientation="v", yanchor="top", y=1.0, xanchor="left", x=1.02))


def scatter(**kwargs) -> dict:
    """A scatter trace as a plain dict (validated once, by plotly.js, instead of per property)."""
    return dict(type="scatter", **kwargs)


def figure(traces: list, layout: dict) -> go.Figure:
    """The figure from trace and layout dicts (plotly.py validates every property: tens of milliseconds
    per figure, the price of using only its public API)."""
    return go.Figure(data=traces, layout=layout)


def run_numbers(df) -> dict:
    """Each label's run number, from the results' ``run`` column (several runs drawn together); none without it."""
    if df is None or RUN not in getattr(df, "columns", ()):
        return {}
    return {str(lb): int(r) for lb, r in zip(df["label"], df[RUN]) if r == r}


def label_styles(labels, runs: dict | None = None) -> dict[str, dict]:
    """Each label's look: ``{"colour", "symbol"}``. The model's colour and symbol come from its name (the
    label may carry suffixes such as " (decides with s)"); the labels of several runs drawn together
    (``runs``: each label's run number, :func:`run_numbers`) get their run's fill on the model's symbol, so
    no two labels drawn together look alike."""
    labels = list(dict.fromkeys(str(x) for x in labels))
    runs = {str(k): int(v) for k, v in (runs or {}).items()}
    numbers = sorted({runs[x] for x in labels if x in runs})
    out, spares = {}, {}
    for label in labels:
        key = max((k for k in MODEL_STYLES if label.startswith(k)), key=len, default=None)
        if key is not None:
            colour, symbol = MODEL_STYLES[key]
        else:
            # one look per model whatever its run or rule (issue 47, item 6): keyed by the label's model words;
            # past the spare symbols, the colours start one further on, so no two unnamed models look alike
            spare = spares.setdefault(model_words(label), len(spares))
            turn = spare // len(_SPARE_SYMBOLS)
            colour = OKABE_ITO[(spare + turn) % len(OKABE_ITO)]
            symbol = _SPARE_SYMBOLS[spare % len(_SPARE_SYMBOLS)]
        fill = ""
        if label in runs:  # runs by the symbol's fill; a model keeps its colour in every run (the label says which)
            fill = _RUN_FILLS[numbers.index(runs[label]) % len(_RUN_FILLS)]
        out[label] = {"colour": colour, "symbol": symbol + fill}
    return out


def model_words(label: str) -> str:
    """A label's model, without its rule, flags and run: ``Target reduction`` for ``Target reduction (decides without
    s, randomised) [group-rates] · run 3``."""
    cut = min((i for i in (label.find(" ("), label.find(" ["), label.find(" · ")) if i > 0), default=len(label))
    return label[:cut]


def marker(style: dict, size: int = 11) -> dict:
    """A marker in a label's style: filled symbols with an outline that keeps overlapping points apart
    (dark for the light colours, white otherwise), open ones drawn with a heavier stroke."""
    colour, symbol = style["colour"], style["symbol"]
    if "open" in symbol:
        line = dict(color=colour, width=2)
    else:
        line = dict(color=TEXT if colour in _LIGHT else "white", width=1)
    return dict(symbol=symbol, size=size, color=colour, line=line, opacity=0.9)


def text_position(i: int, where: float | None = None) -> str:
    """Where the ``i``-th line drawn puts its labels; ``where``, the labelled point's place across the
    x axis (0 = left edge, 1 = right edge), turns a label near an edge inwards so it stays in view."""
    pos = TEXT_POSITIONS[i % len(TEXT_POSITIONS)]
    if where is not None and where > 0.7:
        return pos.replace("right", "left")
    if where is not None and where < 0.3:
        return pos.replace("left", "right")
    return pos


def text_font(size: int = 11) -> dict:
    return dict(color=TEXT, size=size)


# --------------------------------------------------------------------------------------------------
# Legible at 1280 px (issue 27, item 5): the legend below the plot, labels placed where they fit
# --------------------------------------------------------------------------------------------------
# The widths a figure gets in a 1280 px window (the sidebar open): half of the page's column, and all of it.
HALF_WIDTH, FULL_WIDTH = 390, 800
PLOT_HEIGHT = 300  # the plot area's height: the legend below it adds to the figure's height, never takes from it
MARGIN = dict(l=60, r=20, t=60, b=50)  # the plot area's margins, the legend's rows not counted
LEGEND_FONT, LEGEND_ROW = 12, 24  # the legend's font size and the height of one of its rows (px)
LEGEND_GAP = 5  # Plotly's gap between two legend entries in a row (px)
# a legend character's width in units of its font size: above Chromium's 0.44, so a legend is never counted fewer rows
# than it takes (they would come out of the plot area, where the labels were placed)
LEGEND_CHAR_WIDTH = 0.5
CHAR_WIDTH = 0.55  # a character's width in units of the font size: Latin text measures 0.44 in Chromium, so generous
# Where a label may sit beside its point, in the order tried: the first that fits is taken.
CANDIDATES = ("top right", "top left", "bottom right", "bottom left", "middle right", "middle left",
              "top center", "bottom center")


def text_width(text: str, size: float) -> float:
    """A label's width in pixels at font ``size`` (a generous estimate: wider than Plotly draws it)."""
    return len(str(text)) * CHAR_WIDTH * size + 2


def legend_rows(names, width: float, font: int = LEGEND_FONT) -> int:
    """How many rows a horizontal legend of ``names`` takes in a figure ``width`` pixels wide, as Plotly lays it
    out: each entry is its symbol (40 px) and its text; where they all fit in the plot area's width they share
    one row, each as wide as it is; else every entry takes the widest one's width (a grid of equal columns) and
    a row holds as many as fit."""
    room = width - MARGIN["l"] - MARGIN["r"]
    widths = [40 + len(str(name)) * LEGEND_CHAR_WIDTH * font for name in names]
    if not widths or sum(widths) + LEGEND_GAP * (len(widths) - 1) < room:
        return 1
    per_row = max(int((room + LEGEND_GAP) // (max(widths) + LEGEND_GAP)), 1)
    return -(-len(widths) // per_row)


def legend_below(names, width: float = HALF_WIDTH, plot_height: int = PLOT_HEIGHT) -> dict:
    """Layout settings that put a horizontal legend of ``names`` below the plot, in a bottom margin grown by
    its rows, so the plot area keeps ``plot_height`` pixels and the whole figure's width whatever the legend
    holds (a legend beside a half-width plot takes half of it)."""
    bottom = MARGIN["b"] + LEGEND_ROW * legend_rows(list(names), width) + 10
    return dict(height=MARGIN["t"] + plot_height + bottom, margin=dict(MARGIN, b=bottom), showlegend=True,
                legend=dict(orientation="h", xref="container", yref="container", x=0.01, xanchor="left", y=0.005,
                            yanchor="bottom", font=dict(size=LEGEND_FONT), tracegroupgap=0))


def _box(px: float, py: float, w: float, h: float, position: str, gap: float) -> tuple:
    """(left, top, right, bottom) of a label ``w`` x ``h`` at ``position`` beside the point (``px``, ``py``)."""
    vertical, horizontal = position.split()
    left = {"left": px - gap - w, "center": px - w / 2, "right": px + gap}[horizontal]
    top = {"top": py - gap - h, "middle": py - h / 2, "bottom": py + gap}[vertical]
    return left, top, left + w, top + h


def _area(a: tuple, b: tuple) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def place_labels(points, *, xrange, yrange, width: float, height: float, size: float = 11,
                 marker_size: float = 11, obstacles=()) -> tuple[list, bool]:
    """Where to write each label so that none covers another or the plot area's edge, and if it can be, no
    marker either.

    ``points``: ``(x, y, text, marked)`` in data units (``marked``: a marker is drawn there; empty text: no
    label); ``xrange``/``yrange``: the axes' ranges; ``width``/``height``: the plot area in pixels. Each label
    takes the first of :data:`CANDIDATES` that fits (in the order given: put the labels that matter first);
    one that fits nowhere takes the place where it covers least. Returns the positions (``None`` where there
    is no label) and whether every label fits (covers no other label and stays within the plot area).
    ``obstacles``: other markers, ``(x, y, size)``, that labels had better not cover (the selected target's
    rings)."""
    (x0, x1), (y0, y1) = xrange, yrange
    sx = width / (x1 - x0) if x1 != x0 else 1.0
    sy = height / (y1 - y0) if y1 != y0 else 1.0
    pix = [((x - x0) * sx, (y1 - y) * sy) if _finite(x, y) else None for x, y, *_ in points]
    half = marker_size / 2 + 1
    markers = [(p[0] - half, p[1] - half, p[0] + half, p[1] + half) for p, (*_, marked) in zip(pix, points)
               if p is not None and marked]
    for x, y, big in obstacles:
        if _finite(x, y):
            px, py, r = (x - x0) * sx, (y1 - y) * sy, big / 2 + 1
            markers.append((px - r, py - r, px + r, py + r))
    h = size * 1.3
    out, fits, labels = [None] * len(points), True, []
    for i, ((_, _, text, _), p) in enumerate(zip(points, pix)):
        if not text or p is None:
            continue
        w = text_width(text, size)
        best, cost = None, (math.inf, math.inf)
        for pos in CANDIDATES:
            box = _box(p[0], p[1], w, h, pos, half)
            outside = ((max(0.0, -box[0]) + max(0.0, box[2] - width)) * h
                       + (max(0.0, -box[1]) + max(0.0, box[3] - height)) * w)
            # a label over another label or past the plot's edge is unreadable; one over a marker only worse
            c = (sum(_area(box, t) for t in labels) + outside, sum(_area(box, t) for t in markers))
            if c < cost:
                best, cost = (pos, box), c
            if c[0] <= 0.5 and c[1] <= 0.5:
                break
        fits = fits and cost[0] <= 0.5
        out[i] = best[0]
        labels.append(best[1])
    return out, fits


def _finite(*values) -> bool:
    try:
        return all(math.isfinite(float(v)) for v in values)
    except (TypeError, ValueError):
        return False

