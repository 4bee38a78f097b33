"""The real data sets: their named splits (:mod:`.splits`) and ``glong data prepare``, which turns the
public releases, as downloaded, into the layout the benchmarks read (:mod:`.prepare`, :mod:`.msc`,
:mod:`.releases`). See ``docs/data.md``."""

from .prepare import MANIFEST, prepare
from .splits import (
                     LOCOMO_SPLITS,
                     REAL_DATA_ENV,
                     SPLITS,
                     Split,
                     describe,
                     locomo_samples,
                     real_data_folder,
                     split_file,
                     split_names,
                     split_path,
)

__all__ = ["LOCOMO_SPLITS", "MANIFEST", "REAL_DATA_ENV", "SPLITS", "Split", "describe", "locomo_samples", "prepare",
           "real_data_folder", "split_file", "split_names", "split_path"]
