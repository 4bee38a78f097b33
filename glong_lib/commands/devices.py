"""``--device``: where the stages that stay in the ``glong`` process run (salience, a local extractor):
the GPU when there is one (``models.choose_device``), and one line on stderr when a step runs on the CPU."""

from __future__ import annotations

import sys

from ..agent import TripleSource
from ..extraction import load_extractor
from ..models import choose_device
from ..salience import load_scorer


def note_device(device, steps: str) -> str:
    """The device ``steps`` will run on; says so in one line when it is the CPU."""
    chosen = choose_device(device)
    if chosen == "cpu":
        print(f"note: {steps} run{'s' if ' and ' not in steps else ''} on the CPU"
              f"{'' if device else ' (no GPU here)'}", file=sys.stderr)
    return chosen


class DeviceSource(TripleSource):
    """A :class:`agent.TripleSource` whose local models load on ``device``."""

    def __init__(self, *args, device=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.device = device

    @property
    def extractor(self):
        if self._extractor is None:
            self._extractor = load_extractor(profile=self.profile, device=self.device)
        return self._extractor

    @property
    def scorer(self):
        if self._scorer is None:
            self._scorer = load_scorer(profile=self.profile, device=self.device)
        return self._scorer
