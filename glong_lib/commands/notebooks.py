"""``glong notebooks``: execute every notebook in order with papermill (the main job)."""

from __future__ import annotations

from pathlib import Path

from ..notebook_runner import run_notebooks
from .common import add_profile_option


def register(sub) -> None:
    p = sub.add_parser("notebooks", help="run every notebook top to bottom (papermill) and regenerate figures/")
    p.add_argument("--smoke", action="store_true", help="tiny sizes; outputs and figures go to --out")
    p.add_argument("--out", type=Path, default=None, help="folder for executed notebooks (default build/...)")
    p.add_argument("--inplace", action="store_true",
                   help="refresh the committed notebooks and figures/ (full run, offline unless --profile)")
    # nargs="+": a bare --only is a usage error, not "every notebook" (a 20-minute run)
    p.add_argument("--only", nargs="+", default=None, help="run only notebooks whose names start so (e.g. 00 03)")
    p.add_argument("--folder", type=Path, default=None,
                   help="the notebooks to run (default: the checkout's notebooks/; an installed glong ships none)")
    p.add_argument("--sync-colab", action="store_true",
                   help="only rewrite the Colab badges, README links and setup cells from pyproject's Repository URL")
    add_profile_option(p)
    # no --profile: $GLONG_PROFILE if set, else offline (run_notebooks decides; an explicit --profile wins)
    p.set_defaults(func=run, profile=None)


def run(args) -> int:
    if args.sync_colab:
        from ..colab import sync_colab

        changed = sync_colab()
        print("rewritten: " + (", ".join(changed) if changed else "nothing (all follow the Repository URL)"))
        return 0
    from ..notebook_runner import NOTEBOOKS_DIR

    run_notebooks(smoke=args.smoke, profile=args.profile, out=args.out, inplace=args.inplace, only=args.only,
                  folder=args.folder or NOTEBOOKS_DIR)
    return 0
