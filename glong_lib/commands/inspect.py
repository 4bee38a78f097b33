"""``glong inspect PATH``: detect a data file's format, load it, print its statistics."""

from __future__ import annotations

from ..inspection import inspect_file
from .common import print_table


def register(sub) -> None:
    p = sub.add_parser("inspect", help="detect, load and summarise a data file")
    p.add_argument("path", help="a conversation, MSC, PersonaExt, SAMSum, DialogSum or LoCoMo file")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args) -> int:
    print_table(inspect_file(args.path), as_json=args.json)
    return 0
