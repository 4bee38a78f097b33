"""nbval re-runs the committed notebooks: in smoke mode (the cells it compares are marked
NBVAL_CHECK_OUTPUT and do not depend on the mode), with figures sent to a scratch folder so the
committed figures/ stay as the full run left them."""

import os
import tempfile

os.environ["GLONG_SMOKE"] = "1"
os.environ["GLONG_FIGURES_DIR"] = tempfile.mkdtemp(prefix="glong-nbval-figures-")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
