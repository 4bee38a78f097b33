"""The dialogue-attention figure of notebook 02 (``plot_dialogue_attention``): it carries a colour
scale for its shading, and no token's shading box paints over the glyphs of the token before it
(the figure once clipped "Leo" to "Lec" and "Portland" to "Portlanc")."""
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from glong_lib.schema import Triple  # noqa: E402
from glong_lib.viz.salience import plot_dialogue_attention  # noqa: E402

TOKENS = ["Maya", ":", "ĠHi", "ĠLeo", "!", "ĠI", "Ġfinished", "Ġmy", "Ġshift", "Ċ", "Leo", ":", "ĠNo",
          "Ġworries", ",", "Ġthat", "Ġsounds", "Ġbrutal", "Ġin", "ĠPortland"]


def _figure():
    n = len(TOKENS)
    result = SimpleNamespace(attention=np.linspace(0.1, 1.0, n * 3).reshape(n, 3), positions=[[3], [6, 8], []],
                             input_tokens=TOKENS, summary="Maya finished her shift.",
                             triples=[Triple("Maya", "know", "Leo"), Triple("Maya", "finish", "shift"),
                                      Triple("Maya", "like", "tea")])
    return plot_dialogue_attention(result)


def test_the_shading_has_a_colour_scale():
    fig = _figure()
    bars = [a for a in fig.axes if a.get_label() == "<colorbar>"] or [a for a in fig.axes[0].child_axes]
    assert bars, "no colorbar"
    assert "attention" in bars[0].get_ylabel()
    plt.close(fig)


@pytest.mark.parametrize("dpi", [72, 100, 120, 144])
def test_no_token_box_covers_the_previous_tokens_glyphs(dpi):
    fig = _figure()
    fig.set_dpi(dpi)
    ax = fig.axes[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [t for t in ax.texts]
    assert min(t.get_zorder() for t in texts) > max(p.get_zorder() for p in ax.patches)
    by_line = {}
    for t in texts:
        by_line.setdefault(t.get_position()[1], []).append(t)
    for line in by_line.values():
        line.sort(key=lambda t: t.get_position()[0])
        for left, right in zip(line, line[1:]):
            a, b = left.get_window_extent(renderer), right.get_window_extent(renderer)
            assert a.x1 <= b.x0 + 1.0, (left.get_text(), right.get_text(), a.x1, b.x0)
    plt.close(fig)


def test_auc_bars_take_their_colours_and_key():
    """Notebook A1 colours the shipped default apart from the chosen reading and says so in a legend."""
    from matplotlib.colors import to_hex

    from glong_lib.viz.salience import plot_auc

    rows = [{"method": "chosen", "AUC": 0.76, "95% interval": "0.68-0.82"}, {"method": "shipped", "AUC": 0.79},
            {"method": "random", "AUC": 0.52, "95% interval": "0.43-0.61"}]
    fig = plot_auc(rows, colours=["#3b75af", "#e08a2c", "#9a9a9a"], key=[("#e08a2c", "shipped default")])
    ax = fig.axes[0]
    assert [to_hex(p.get_facecolor()) for p in ax.patches] == ["#3b75af", "#e08a2c", "#9a9a9a"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["shipped default"]
    with pytest.raises(ValueError):
        plot_auc(rows, colours=["#3b75af"])
    plt.close("all")


def test_auc_bars_set_their_label_size():
    """Notebook A1 draws a wide AUC figure and needs value labels and legend larger than the default."""
    from glong_lib.viz.salience import plot_auc

    rows = [{"method": "chosen", "AUC": 0.762, "95% interval": "0.68-0.82"}, {"method": "random", "AUC": 0.521}]
    ax = plot_auc(rows, key=[("#3b75af", "chosen")], fontsize=11).axes[0]
    assert [t.get_fontsize() for t in ax.texts] == [11, 11]
    assert [t.get_text() for t in ax.texts] == ["0.762", "0.521"]
    assert ax.get_legend().get_texts()[0].get_fontsize() == 11
    plt.close("all")


def test_cross_attention_boxes_are_disjoint_and_inside_the_frame():
    """Each triple's box shows in its own colour: no box shares a line with the frame or a neighbour."""
    from glong_lib.viz.salience import plot_cross_attention

    spans = [(0, 2), (2, 5), (5, 6)]
    result = SimpleNamespace(attention=np.full((6, 3), 0.1), spans=spans, input_tokens=list("abcdef"),
                             summary_tokens=["x", "y", "z"], summary="x y z", weights=[0.5, 1.0, 0.2],
                             triples=[Triple("a", "r", "b"), Triple("c", "r", "d"), Triple("e", "r", "f")])
    fig = plot_cross_attention(result)
    boxes = sorted((p for p in fig.axes[0].patches if isinstance(p, matplotlib.patches.Rectangle)),
                   key=lambda p: p.get_y())
    assert len(boxes) == len(spans)
    for box, (a, b) in zip(boxes, spans):
        top, bottom = box.get_y(), box.get_y() + box.get_height()
        assert a - 0.5 < top < bottom < b - 0.5                 # strictly inside its own rows
        assert -0.5 < box.get_x() and box.get_x() + box.get_width() < 2.5
    assert len({tuple(p.get_edgecolor()) for p in boxes}) == len(spans)
    plt.close(fig)


def test_layer_curve_takes_its_colours():
    """Notebook A1 draws the chosen mean in the blue its AUC figure gives it; unnamed curves keep the cycle."""
    from matplotlib.colors import to_hex

    from glong_lib.viz.salience import plot_layer_curve

    fig = plot_layer_curve({"mean": [0.6, 0.7], "sum": [0.7, 0.8]}, chosen=1, colours={"mean": "#3b75af"})
    lines = fig.axes[0].get_lines()
    assert to_hex(lines[0].get_color()) == "#3b75af" and to_hex(lines[1].get_color()) != "#3b75af"
    plt.close("all")


def test_cross_attention_quotes_bare_punctuation_labels():
    """A relation's underscore or a full stop as a tick label is quoted, so it does not read as an empty label."""
    from glong_lib.viz.salience import plot_cross_attention

    result = SimpleNamespace(attention=np.full((4, 3), 0.1), spans=[(0, 4)], input_tokens=["▁Leo", "_", "▁like", "."],
                             summary_tokens=["▁he", "'", "."], summary="he'.", weights=[1.0],
                             triples=[Triple("Leo", "like_food", "pasta")])
    fig = plot_cross_attention(result)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["Leo", "'_'", "like", "'.'"]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["he", "'", "'.'"]
    plt.close(fig)


def test_cross_attention_takes_a_label_size():
    """Notebook 02 draws its token labels larger than the default so they read at notebook width."""
    from glong_lib.viz.salience import plot_cross_attention

    result = SimpleNamespace(attention=np.full((2, 2), 0.1), spans=[(0, 2)], input_tokens=["▁Leo", "▁pasta"],
                             summary_tokens=["▁he", "."], summary="he.", weights=[1.0],
                             triples=[Triple("Leo", "like_food", "pasta")])
    ax = plot_cross_attention(result, fontsize=10).axes[0]
    assert {t.get_fontsize() for t in ax.get_yticklabels() + ax.get_xticklabels()} == {10}
    plt.close("all")


def test_layer_curve_chosen_mark_takes_the_colour_given():
    """Notebook A1 marks the chosen layer in the blue its AUC figure gives the choice."""
    from matplotlib.colors import to_hex

    from glong_lib.viz.salience import plot_layer_curve

    fig = plot_layer_curve({"mean": [0.6, 0.7]}, chosen=1, chosen_colour="#3b75af")
    marks = [ln for ln in fig.axes[0].get_lines() if ln.get_label() == "chosen: layer 1"]
    assert len(marks) == 1 and to_hex(marks[0].get_color()) == "#3b75af"
    plt.close("all")


def test_added_value_labels_take_the_font_size_given():
    from glong_lib.viz.salience import plot_added_value
    added = {"added": {"value": -0.001, "low": -0.039, "high": 0.036}, "covariates": 0.774,
             "covariates + weight": 0.773}
    for size in (8, 12):
        ax = plot_added_value(added, fontsize=size).axes[0]
        label = next(t for t in ax.texts if "[" in t.get_text())
        assert label.get_fontsize() == size
        assert ax.get_yticklabels()[0].get_fontsize() == size
        plt.close("all")
