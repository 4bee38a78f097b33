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
    p.add_argument("--only", nargs="*", default=None, help="run only notebooks whose names start so (e.g. 00 03)")
    add_profile_option(p)
    p.set_defaults(func=run)


def run(args) -> int:
    run_notebooks(smoke=args.smoke, profile=args.profile, out=args.out, inplace=args.inplace, only=args.only)
    return 0
