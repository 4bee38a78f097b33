"""Helpers shared by the subcommands: the ``--profile`` option and table/JSON printing."""

from __future__ import annotations

import json
from typing import Any

from ..models import PROFILES


def add_profile_option(parser) -> None:
    parser.add_argument("--profile", default="offline", choices=sorted(PROFILES),
                        help="model profile (default: offline, no network)")


def print_table(rows: dict[str, Any] | list[dict[str, Any]], as_json: bool = False) -> None:
    """Print a dict as two aligned columns, a list of dicts as a table, or either as JSON."""
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if isinstance(rows, dict):
        width = max(len(str(k)) for k in rows)
        for k, v in rows.items():
            print(f"{str(k):<{width}}  {v}")
        return
    if not rows:
        print("(nothing)")
        return
    cols = list(rows[0])
    widths = {c: max(len(str(c)), *(len(str(r.get(c, ""))) for r in rows)) for c in cols}
    print("  ".join(f"{c:<{widths[c]}}" for c in cols))
    print("  ".join("-" * widths[c] for c in cols))
    for r in rows:
        print("  ".join(f"{str(r.get(c, '')):<{widths[c]}}" for c in cols))
