"""The ``glong`` command. Each subcommand lives in ``glong_lib/commands/<name>.py`` and exposes
``register(subparsers)``; this file only discovers them and runs one. The project's own errors
(:class:`~glong_lib.errors.GLongError`: bad input, a missing file, an unreachable endpoint) become a
one-line message on stderr with exit status 2; anything else is a bug and shows its traceback."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import signal
import sys
import threading
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


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that the same cleanup runs (temporary files and folders go,
    outputs stay absent or whole) and the same one line is printed."""


def _terminate(signum, frame):
    raise Terminated()


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    in_main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, _terminate) if in_main else None
    try:
        return int(args.func(args) or 0)
    except GLongError as e:
        print(f"glong {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        what = "terminated" if isinstance(e, Terminated) else "interrupted"
        print(f"glong {args.command}: {what}{resume_hint(args)}", file=sys.stderr)
        return 143 if isinstance(e, Terminated) else 130
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, before)


def resume_hint(args) -> str:
    """What an interrupted run left and how to go on, for its one line: a checkpoint keeps the
    finished units (the same command with --resume continues); outputs are written whole at the
    end, so ``--out`` is as it was before the run.

    >>> resume_hint(argparse.Namespace(checkpoint="ck.jsonl", out="r.json"))
    '; the finished part is kept in ck.jsonl: run the same command with --resume to go on'
    >>> resume_hint(argparse.Namespace(out="m"))
    '; m is as it was before (outputs are written whole, at the end): run the command again'
    """
    if getattr(args, "command", None) == "notebooks":
        return "; the notebook that was running was not kept (finished ones were): go on with --only NN"
    if getattr(args, "checkpoint", None):
        return f"; the finished part is kept in {args.checkpoint}: run the same command with --resume to go on"
    if getattr(args, "out", None) is not None:
        return f"; {args.out} is as it was before (outputs are written whole, at the end): run the command again"
    return ""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
