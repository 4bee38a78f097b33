"""``--device``: where the stages that stay in the ``glong`` process run (salience, a local extractor):
the GPU when there is one (``models.choose_device``), and one line on stderr when a step runs on the CPU."""

from __future__ import annotations

import sys

# The command line imports every module of ``commands`` for ``glong --help``: the model stack (torch) is
# imported when a command runs, not here.


def note_device(device, steps: str) -> str:
    """The device ``steps`` will run on; says so in one line when it is the CPU."""
    from ..models import choose_device

    chosen = choose_device(device)
    if chosen == "cpu":
        print(f"note: {steps} run{'s' if ' and ' not in steps else ''} on the CPU"
              f"{'' if device else ' (no GPU here)'}", file=sys.stderr)
    return chosen


def device_source(*args, device=None, **kwargs):
    """An :class:`agent.TripleSource` whose local models (extractor, salience scorer) load on ``device``,
    each saying so in one line when that is the CPU, as it loads."""
    from ..agent import TripleSource

    class DeviceSource(TripleSource):
        @property
        def extractor(self):
            if self._extractor is None:
                self._extractor = load_extractor(profile=self.profile, device=device)
                if getattr(self._extractor, "model", None) is not None:  # not a server's
                    note_device(device, "extraction")
            return self._extractor

        @property
        def scorer(self):
            if self._scorer is None:
                self._scorer = load_scorer(profile=self.profile, device=device)
                note_device(device, "salience")
            return self._scorer

    return DeviceSource(*args, **kwargs)


def load_extractor(**kwargs):
    from ..extraction import load_extractor

    return load_extractor(**kwargs)


def load_scorer(**kwargs):
    from ..salience import load_scorer

    return load_scorer(**kwargs)
