"""Figures for attention-aware importance (Eq. 1-3): cross-attention heatmaps with the triples'
token spans marked, per-head attention before averaging, per-triple weights, scope comparison."""

from __future__ import annotations

import textwrap
from typing import Optional, Sequence

import matplotlib.pyplot as plt
import numpy as np

_SPAN_COLOURS = plt.cm.tab10.colors
_INSET = 0.12  # cells between a triple's box and the frame or the next box: no two boxes share a line


def _span_line(k: int) -> str:
    """The outline style of triple ``k`` in :func:`plot_dialogue_attention`: the first five colours
    of the cycle solid, the next five dashed, so that look-alike pairs (blue T1 and cyan T10, red T4
    and brown T6) also differ by their line."""
    return "-" if k % len(_SPAN_COLOURS) < len(_SPAN_COLOURS) // 2 else "--"


def _clean(token: str) -> str:
    """Word pieces as a reader expects them ("##ver" -> "-ver", "▁Maya" -> "Maya"); a bare punctuation
    mark other than a quote is quoted ("_" -> "'_'") so that a tick label such as an underscore does not
    read as empty."""
    word = token.replace("▁", "").replace("Ġ", "").replace("##", "-") or "␣"
    return f"'{word}'" if len(word) == 1 and not word.isalnum() and word not in "␣'\"" else word


def _mark_spans(ax, spans, labels, n_cols: int, vertical: bool = False) -> None:
    """A box of the triple's colour round each triple's rows, inset from the frame and from its
    neighbours' boxes so that every triple (the first included) shows all four sides in its own colour."""
    for k, ((a, b), label) in enumerate(zip(spans, labels)):
        if a == b:
            continue
        colour = _SPAN_COLOURS[k % len(_SPAN_COLOURS)]
        ax.add_patch(plt.Rectangle((-0.5 + _INSET, a - 0.5 + _INSET), n_cols - 2 * _INSET, b - a - 2 * _INSET,
                                   fill=False, edgecolor=colour, lw=1.6))
        ax.text(n_cols - 0.3, (a + b - 1) / 2, label, va="center", ha="left", fontsize=8, color=colour,
                fontweight="bold")


def plot_cross_attention(result, ax=None, title: Optional[str] = None, label_width: int = 44,
                         max_triples: Optional[int] = None, row_height: float = 0.22, fontsize: float = 8):
    """Heatmap of Eq. 1's A (input tokens down, summary tokens across), each triple boxed and
    labelled with its weight on the right. ``max_triples`` draws only the input rows up to the end of
    the first that many triples (a long input stays legible; the title says so); ``row_height`` is
    the figure's inches per input row; ``fontsize`` sizes the token labels (larger needs taller rows)."""
    shown = len(result.triples) if max_triples is None else max(0, min(int(max_triples), len(result.triples)))
    spans = list(result.spans[:shown])
    A = result.attention if max_triples is None else result.attention[:max((b for _, b in spans), default=0)]
    n, m = A.shape
    if ax is None:
        _, ax = plt.subplots(figsize=(min(4 + 0.32 * m, 16), min(2 + row_height * n, 24)))
    im = ax.imshow(A, aspect="auto", cmap="viridis", interpolation="nearest")
    ax.set_yticks(range(n), [_clean(t) for t in result.input_tokens[:n]], fontsize=fontsize)
    ax.set_xticks(range(m), [_clean(t) for t in result.summary_tokens], fontsize=fontsize, rotation=70, ha="right")
    ax.set_xlabel("summary token y_j (generated, then re-read teacher-forced)")
    ax.set_ylabel("input token x_i (linearised triples)")
    labels = [f"T{k + 1}  w={w:.2f}  " + textwrap.shorten(t.text(), label_width)
              for k, (t, w) in enumerate(zip(result.triples[:shown], result.weights[:shown]))]
    _mark_spans(ax, spans, labels, m)
    ax.set_xlim(-0.5, m - 0.5)
    cropped = "" if shown == len(result.triples) else \
        f"\ninput rows of the first {shown} of the {len(result.triples)} triples only"
    heading = title or ("Last decoder layer cross-attention, averaged over heads (Eq. 1)\nsummary: "
                        + textwrap.shorten(result.summary, 90) + cropped)
    ax.figure.colorbar(im, ax=ax, location="top", fraction=0.02, pad=0.01, shrink=0.5,
                       label=f"{heading}\n\ncolour: A[i, j]")
    return ax.figure


def plot_head_attention(result, max_heads: int = 8):
    """The last layer's heads side by side, before Eq. 1 averages them, then their mean."""
    heads = result.head_attention[:max_heads]
    panels = list(heads) + [result.attention]
    names = [f"head {h + 1}" for h in range(len(heads))] + ["mean over heads (Eq. 1)"]
    n, m = result.attention.shape
    fig, axes = plt.subplots(1, len(panels), figsize=(2.2 * len(panels) + 1.5, min(2 + 0.16 * n, 16)), sharey=True)
    vmax = float(max(p.max() for p in panels))
    for ax, panel, name in zip(np.atleast_1d(axes), panels, names):
        ax.imshow(panel, aspect="auto", cmap="viridis", vmin=0, vmax=vmax, interpolation="nearest")
        ax.set_title(name, fontsize=9)
        ax.set_xticks([])
        for k, (a, b) in enumerate(result.spans):
            if a < b:
                ax.axhspan(a - 0.5, b - 0.5, xmin=0, xmax=0.04, color=_SPAN_COLOURS[k % len(_SPAN_COLOURS)])
        ax.set_xlabel("summary tokens")
    first = np.atleast_1d(axes)[0]
    first.set_yticks(range(n), [_clean(t) for t in result.input_tokens], fontsize=6)
    fig.suptitle("Per-head cross-attention of the last decoder layer (shared colour scale)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig


def plot_triple_weights(triples, weights: Sequence[float], ax=None, title: str = "Triple weights (Eq. 3)",
                        reference: Optional[Sequence[float]] = None, label_width: int = 48,
                        ylabel: str = "triple (subject relation object)"):
    """Horizontal bars, one per triple, top triple first; ``reference`` draws a second set
    (e.g. the dialogue-scope weights) beside them."""
    order = np.argsort(-np.asarray(weights), kind="stable")
    labels = [textwrap.shorten(triples[i].text(), label_width) for i in order]
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.9 + 0.38 * len(order)))
    y = np.arange(len(order))
    h = 0.4 if reference is not None else 0.7
    ax.barh(y - (h / 2 if reference is not None else 0), np.asarray(weights)[order], height=h, color="#3b75af",
            label="session max (paper)" if reference is not None else None)
    if reference is not None:
        ax.barh(y + h / 2, np.asarray(reference)[order], height=h, color="#e1812c",
                label="dialogue max (authors' code)")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.05)
    ax.set_xlabel("weight w_k")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    return ax.figure


def plot_auc(rows: Sequence[dict], ax=None, title: str = "Does the weight track the reference summary?",
             chance_label: str = "chance", xmin: float = 0.0, decimals: int = 3,
             colours: Optional[Sequence[str]] = None, key: Sequence[tuple[str, str]] = (),
             fontsize: float = 8):
    """Bars of AUC per method (rows with 'method' and 'AUC'), the chance line at 0.5 (named
    ``chance_label`` under its tick on the x axis; "" for none). Each value label sits right of its
    interval's upper end; one that would run past the right frame goes inside its bar, left of the
    interval's lower end, so no label crosses a whisker. The x axis runs from ``xmin`` to 1; value
    labels are rounded to ``decimals`` digits, trailing zeros dropped (as the stored values print).
    ``colours`` gives each bar its colour (default: the first blue, the rest grey), so a reader can
    tell groups of rows apart; ``key``, (colour, meaning) pairs, says what they mean in a legend
    right of the axes. ``fontsize`` sets the value labels and the legend, so a wide figure can
    carry readable ones."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 0.6 + 0.45 * len(rows)))
    names = [r["method"] for r in rows]
    values = [r["AUC"] for r in rows]
    colours = list(colours) if colours is not None else ["#3b75af" if i == 0 else "#9a9a9a" for i in range(len(rows))]
    if len(colours) != len(rows):
        raise ValueError(f"{len(colours)} colours for {len(rows)} rows")
    ax.barh(names, values, color=colours)
    for i, (row, v) in enumerate(zip(rows, values)):
        lo, hi = v, v
        if "95% interval" in row:  # "lo-hi" from the bootstrap: draw it as an error bar
            lo, hi = (float(x) for x in row["95% interval"].split("-"))
            ax.plot([lo, hi], [i, i], color="k", lw=1.2)
        right = max(v, hi)
        if right + 0.1 > 1:  # no room before the frame: inside the bar, a clear gap left of the interval
            ax.text(min(v, lo) - 0.02, i, f"{round(v, decimals):g}", va="center", ha="right", fontsize=fontsize,
                    color="black" if colours[i] == "#9a9a9a" else "white")
        else:
            ax.text(right + 0.015, i, f"{round(v, decimals):g}", va="center", fontsize=fontsize)
    ax.axvline(0.5, color="k", lw=0.8, ls="--")
    ax.set_xlim(xmin, 1)
    if chance_label:
        ticks = [xmin] + [t for t in (0.25, 0.5, 0.75, 1) if t > xmin + 0.1]
        ax.set_xticks(ticks, [f"{t:g}\n({chance_label})" if t == 0.5 else f"{t:g}" for t in ticks])
    ax.invert_yaxis()
    ax.set_xlabel("AUC with 95% interval (label: subject or object appears in the reference summary)")
    ax.set_title(title, fontsize=10)
    if key:
        from matplotlib.patches import Patch

        ax.legend(handles=[Patch(color=c, label=t) for c, t in key], loc="upper left", bbox_to_anchor=(1.01, 1),
                  fontsize=fontsize)
    return ax.figure


def plot_dialogue_attention(result, ax=None, title: Optional[str] = None, width: int = 100, key: bool = True,
                            label_width: int = 44):
    """The decoder-only source's reading of a session: the transcript in a fixed-width font, each
    token shaded by the attention mass the summary rows put on it (Eq. 1 summed over rows, the
    chosen layer); tokens that carry a triple are outlined in that triple's colour (a token that
    several triples share takes the first one's), solid for the first five colours of the cycle and
    dashed for the next five (:func:`_span_line`). With ``key`` a legend under the transcript maps
    each colour to its triple, numbered T1, T2, ... as in :func:`plot_cross_attention`."""
    mass = result.attention.sum(axis=1)
    owner = {}
    for k, pos in enumerate(result.positions or []):
        for i in pos:
            owner.setdefault(i, k)
    lines, line, col = [], [], 0
    for i, tok in enumerate(result.input_tokens):
        text = tok.replace("Ġ", " ").replace("Ċ", "\n").replace("▁", " ")
        for part_no, part in enumerate(text.split("\n")):
            if part_no:  # a newline token ends the line
                lines.append(line)
                line, col = [], 0
            if col + len(part) > width and line:
                lines.append(line)
                line, col = [], 0
            if part:
                line.append((col, part, i))
                col += len(part)
    lines.append(line)
    if ax is None:
        # one character of a 9-pt monospace font is 0.6 x 9 pt wide, up to 0.64 after hinting (at 100 dpi): one data
        # unit is 0.65 x 9 pt, and each token is centred in its box
        fig, ax = plt.subplots(figsize=((width + 2) * 0.65 * 9 / 72 / 0.86, 0.8 + 0.24 * len(lines)))
        fig.subplots_adjust(left=0.01, right=0.87)
    cmap, top = plt.cm.Blues, float(mass.max()) or 1.0
    # shading and outlines first (patches, in data units: one unit per character), then every glyph
    # on top of all of them, so no box ever paints over the end of the token before it
    for y, items in enumerate(lines):
        for x, part, i in items:
            ax.add_patch(plt.Rectangle((x - 0.5, y - 0.42), len(part), 0.84, facecolor=cmap(0.85 * mass[i] / top),
                                       lw=0, zorder=1))
            if i in owner:  # the outline skips the token's leading space
                lead = len(part) - len(part.lstrip())
                ax.add_patch(plt.Rectangle((x - 0.5 + lead, y - 0.42), len(part) - lead, 0.84, fill=False, lw=1.2,
                                           edgecolor=_SPAN_COLOURS[owner[i] % len(_SPAN_COLOURS)], zorder=2,
                                           linestyle=_span_line(owner[i])))
    for y, items in enumerate(lines):
        for x, part, i in items:
            ax.text(x - 0.5 + len(part) / 2, y, part, family="monospace", fontsize=9, va="center", ha="center",
                    zorder=3, color="white" if 0.85 * mass[i] / top > 0.6 else "black")
    scale = plt.cm.ScalarMappable(norm=plt.Normalize(0, top / 0.85), cmap=cmap)
    bar = ax.figure.colorbar(scale, cax=ax.inset_axes([1.01, 0.1, 0.012, 0.8]))  # beside, not taken from the axes
    bar.set_label("attention mass on the token\n(Eq. 1, summed over the summary rows)", fontsize=8)
    bar.ax.tick_params(labelsize=7)
    ax.set_xlim(-1, width + 1)
    ax.set_ylim(len(lines) - 0.5, -0.5)
    ax.axis("off")
    if key and result.positions is not None and len(result.triples):
        handles = [plt.Rectangle((0, 0), 1, 1, facecolor="none", lw=1.2, linestyle=_span_line(k),
                                 edgecolor=_SPAN_COLOURS[k % len(_SPAN_COLOURS)],
                                 label=f"T{k + 1}  " + textwrap.shorten(t.text(), label_width)
                                 + ("" if result.positions[k] else "  (words never said: no outline)"))
                   for k, t in enumerate(result.triples)]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0, 0), ncol=2, fontsize=8.5, frameon=False,
                  title="outline colour and line = triple (a word shared by several triples: the first one's)",
                  title_fontsize=8.5, alignment="left")
    ax.set_title(title or ("Attention from the summary rows onto the dialogue (darker = more); outlined: triple words\n"
                           "summary: " + textwrap.shorten(result.summary, 110)), fontsize=9, loc="left")
    return ax.figure


def plot_layer_curve(curves: dict, chosen: Optional[int] = None, ax=None,
                     title: str = "Which layer's attention tracks the summary? (selection split)",
                     chance_label: str = "chance (0.5)", colours: Optional[dict] = None,
                     chosen_colour: str = "#c44e52"):
    """Mean within-dialogue AUC per layer, one line per aggregate; the chosen layer marked; the
    dashed chance line named ``chance_label`` in the legend ("" for no entry). ``colours`` maps a
    curve's name to its colour, so a setting keeps the colour another figure gave it;
    ``chosen_colour`` lets the chosen-layer mark match the colour other figures give the choice."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.2))
    for name, values in curves.items():
        ax.plot(range(len(values)), values, marker="o", ms=3, label=name, color=(colours or {}).get(name))
    if chosen is not None:
        ax.axvline(chosen, color=chosen_colour, lw=1, ls=":", label=f"chosen: layer {chosen}")
    ax.axhline(0.5, color="k", lw=0.8, ls="--", label=chance_label or None)
    ax.set_xlabel("decoder layer (0 = first)")
    ax.set_ylabel("mean within-dialogue AUC")
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    return ax.figure


def plot_added_value(added: dict, ax=None,
                     title: str = "Added AUC from the weight (report split)", fontsize: float = 8):
    """The paired difference (covariates + weight minus covariates alone) as a point with its 95%
    interval, on an axis centred on 0 (no difference); the two AUCs are named in the row label.
    ``fontsize`` sets the value label and the row label, so a larger figure can carry a readable one."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 1.8))
    d = added["added"]
    ax.errorbar([d["value"]], [0], xerr=[[d["value"] - d["low"]], [d["high"] - d["value"]]], fmt="o",
                color="#3b75af", ecolor="k", capsize=4)
    ax.text(d["value"], 0.25, f"{d['value']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]", ha="center",
            va="bottom", fontsize=fontsize, bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
    ax.axvline(0, color="k", lw=0.8, ls="--", zorder=0)
    reach = max(abs(d["low"]), abs(d["high"]), 0.01) * 1.6
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-0.6, 0.8)
    ax.set_yticks([0], [f"with weight {added['covariates + weight']:.3f}\n"
                        f"minus covariates {added['covariates']:.3f}"], fontsize=fontsize)
    ax.set_xlabel("added AUC, 95% dialogue-bootstrap interval (dashed: adds nothing)")
    ax.set_title(title, fontsize=10)
    return ax.figure


__all__ = ["plot_cross_attention", "plot_head_attention", "plot_triple_weights", "plot_auc", "plot_dialogue_attention",
           "plot_layer_curve", "plot_added_value"]
