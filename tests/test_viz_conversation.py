"""The session timeline of notebook 00 (``plot_session_timeline``): every gap label is centred between
its two sessions (a review once read the "3.0 d" under S1 as S1's), a gap between two close dots names
both sessions, no two labels overlap, and a session whose gap is assumed is drawn hollow."""
import copy

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from glong_lib.io import data_path  # noqa: E402
from glong_lib.loaders import load_conversations  # noqa: E402
from glong_lib.viz.conversation import DAY_S, format_gap, plot_session_timeline, session_gaps_s  # noqa: E402

CONVERSATIONS = {c.id: c for c in load_conversations(data_path() / "conversations")}


def _gap_labels(ax):
    return [t for t in ax.texts if "turns" not in t.get_text()]


@pytest.mark.parametrize("cid", sorted(CONVERSATIONS))
def test_each_gap_label_sits_between_its_two_sessions(cid):
    conv = CONVERSATIONS[cid]
    fig = plot_session_timeline([conv])
    ax = fig.axes[0]
    labels = _gap_labels(ax)
    days = [s.start_s / DAY_S for s in conv.sessions]
    assert len(labels) == len(conv.sessions) - 1
    for label, gap_s, d0, d1, (a, b) in zip(labels, session_gaps_s(conv), days, days[1:],
                                             zip(conv.sessions, conv.sessions[1:])):
        assert label.xy[0] == pytest.approx((d0 + d1) / 2)
        assert format_gap(gap_s) in label.get_text()
        if label.arrow_patch is not None:  # a close pair: the label names both sessions
            assert label.get_text().startswith(f"S{a.index}-S{b.index}:")
    assert min(ax.get_xticks()) >= 0, "the clock starts at 0: no negative day on the axis"
    fig.canvas.draw()
    boxes = [Text.get_window_extent(t) for t in ax.texts]  # the words only, not a label's leader line
    for i, p in enumerate(boxes):
        for q in boxes[i + 1:]:
            assert not p.overlaps(q), f"{cid}: two labels overlap"
    plt.close(fig)


def test_the_gap_is_the_one_the_clock_used_and_an_assumed_one_is_hollow():
    conv = copy.deepcopy(CONVERSATIONS["c03"])
    conv.assign_clock(default_gap_s=30 * DAY_S)
    assert session_gaps_s(conv)[-1] == pytest.approx(30 * DAY_S)
    fig = plot_session_timeline([conv], titles=["c03, 30 days assumed"])
    ax = fig.axes[0]
    assert ax.get_title() == "c03, 30 days assumed"
    assert "(assumed)" in _gap_labels(ax)[-1].get_text()
    faces = [tuple(c.get_facecolor()[0]) for c in ax.collections]
    assert faces[-1] == (1.0, 1.0, 1.0, 1.0) and faces[0] != faces[-1]
    plt.close(fig)


@pytest.mark.parametrize("cid", sorted(CONVERSATIONS))
def test_larger_session_labels_keep_clear_of_each_other(cid):
    """Notebook 00 draws its session labels larger (label_size=9 on a 9-inch figure) so they read at
    normal size; no two labels may touch."""
    fig = plot_session_timeline([CONVERSATIONS[cid]], label_size=9, width=9)
    ax = fig.axes[0]
    sessions = [t for t in ax.texts if "turns" in t.get_text()]
    assert sessions and all(t.get_fontsize() == 9 for t in sessions)
    fig.canvas.draw()
    boxes = [Text.get_window_extent(t) for t in ax.texts]
    for i, p in enumerate(boxes):
        for q in boxes[i + 1:]:
            assert not p.overlaps(q), f"{cid}: two labels overlap"
    plt.close(fig)
