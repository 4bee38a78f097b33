"""The ``glong`` command. Each subcommand lives in ``glong_lib/commands/<name>.py`` and exposes
``register(subparsers)``; this file only discovers them and runs one. The project's own errors
(:class:`~glong_lib.errors.GLongError`: bad input, a missing file, an unreachable endpoint) become a
one-line message on stderr with exit status 2; anything else is a bug and shows its traceback."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import Optional, Sequence

from . import commands
from .errors import GLongError


class OneLineParser(argparse.ArgumentParser):
    """argparse with usage errors on one line (``glong build: error: ...``), exit status 2."""

    def error(self, message: str):
        if message.endswith("expected one argument"):  # argparse reads "-1e12" as an option
            message += " (a value that starts with '-' is written --option=VALUE)"
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="glong", description="G-Long: graph memory for long dialogues.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except GLongError as e:
        print(f"glong {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"glong {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
