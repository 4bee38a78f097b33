"""Subcommands of ``glong``: one module each, with a ``register(subparsers)`` function."""
