"""legend_below's weight_label lets a notebook name the blue width lines in its own words; the default keeps
the old labels, so the other notebooks' figures do not change."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from glong_lib.viz.legends import legend_below  # noqa: E402


def labels(**kw) -> list[str]:
    _, ax = plt.subplots()
    ax.plot([0, 1], label="anchor")
    ax.legend()
    out = [t.get_text() for t in legend_below(ax, weights=(0, 1), **kw).get_texts()]
    plt.close("all")
    return out


def test_default_labels_unchanged():
    assert labels() == ["anchor", "expanded fact of weight 0 (width)", "expanded fact of weight 1 (width)"]


def test_weight_label_formats_each_weight():
    assert labels(weight_label="width: w = {w}") == ["anchor", "width: w = 0", "width: w = 1"]
