"""How FairDash's figures look, in one place: a colour-blind-safe palette (Okabe & Ito), one marker symbol
per model and a fill per run, labels written beside the points (so no figure needs hovering to be read),
and the shared Plotly layout. Used by :mod:`fairdash.figures.plots` and :mod:`fairdash.figures.plots_target`.

Colour is never the only cue: every model has its own marker symbol; when several runs are drawn each
run of a model gets its own fill (filled, open, dotted, open-dotted), and every point or line carries its
label as text.
"""
from __future__ import annotations

import re

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
_SPARE_SYMBOLS = ("cross", "triangle-left", "triangle-right", "hourglass", "bowtie", "star-triangle-up",
                  "star-square", "diamond-tall")
_RUN_FILLS = ("", "-open", "-dot", "-open-dot")  # run 1, 2, 3, 4 of one model (then the colour shifts)
# Where a label sits beside its point, one per line drawn: neighbours' labels go to different sides.
# (Two runs of one model are drawn two lines apart: they get different heights.)
TEXT_POSITIONS = ("top right", "top left", "bottom right", "bottom left", "middle right", "middle left")
_RUN = re.compile(r"^(?P<base>.*) · run (?P<run>\d+)$")

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


def label_styles(labels) -> dict[str, dict]:
    """Each label's look: ``{"colour", "symbol"}``. The model's colour and symbol come from its name (the
    label may carry suffixes such as " (decides with s)"); labels ending in " · run N" (several runs drawn
    together) get the run's fill on the model's symbol, so no two labels drawn together look alike."""
    labels = list(dict.fromkeys(str(x) for x in labels))
    runs = sorted({int(m["run"]) for x in labels if (m := _RUN.match(x))})
    out, spare = {}, 0
    for label in labels:
        m = _RUN.match(label)
        base = m["base"] if m else label
        key = max((k for k in MODEL_STYLES if base.startswith(k)), key=len, default=None)
        if key is not None:
            colour, symbol = MODEL_STYLES[key]
        else:
            colour, symbol = OKABE_ITO[spare % len(OKABE_ITO)], _SPARE_SYMBOLS[spare % len(_SPARE_SYMBOLS)]
            spare += 1
        fill = ""
        if m:
            i = runs.index(int(m["run"]))
            fill = _RUN_FILLS[i % len(_RUN_FILLS)]
            if i >= len(_RUN_FILLS):  # a fifth run of one model: next colour as well
                colour = OKABE_ITO[(OKABE_ITO.index(colour) + i // len(_RUN_FILLS)) % len(OKABE_ITO)]
        out[label] = {"colour": colour, "symbol": symbol + fill}
    return out


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
