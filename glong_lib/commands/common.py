"""Helpers shared by the subcommands: the ``--profile``/``--smoke`` options, option types that
refuse bad numbers, and table/JSON printing.

Subcommand modules import the heavy library modules (torch, transformers) inside their ``run``
functions on purpose: ``glong --help`` and ``glong inspect`` then start in well under a second.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import MISSING, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, Optional

from ..checkpoints import Checkpoint
from ..config import LOCK_WAIT_S, PROFILES, RETRIEVAL_PRESETS, Profile, RetrievalSettings, get_profile
from ..errors import DataError


def add_profile_option(parser, smoke: bool = False, salience: bool = False) -> None:
    """``--profile`` (and ``--smoke``; with ``salience``, the salience stage's options: ``--salience-layer``,
    the decoder source's attention layer ``profile.summarizer.decoder.layer``, and the rest of
    ``config.SummarizerSettings``, made by :func:`add_stage_options`)."""
    parser.add_argument("--profile", default="offline", choices=sorted(PROFILES),
                        help="model profile (default: offline, no network)")
    if smoke:
        parser.add_argument("--smoke", action="store_true", help="the profile at tiny sizes (tests): profile.smoke()")
    if salience:
        group = parser.add_argument_group("salience (Eq. 1-3; config.SummarizerSettings)")
        add_stage_options(group, "summarizer", prefix="salience-", skip=("training",))


def add_wait_option(parser) -> None:
    """``--wait SECONDS``: how long to wait for another glong process holding the memory's lock."""
    parser.add_argument("--wait", type=number(float, 0, 86400), default=LOCK_WAIT_S, metavar="SECONDS",
                        help="wait at most this long for another glong process using the memory "
                             f"(default {LOCK_WAIT_S:g}: config.LOCK_WAIT_S), then stop with its pid")


def profile_from(args) -> Profile:
    """The profile the options ask for: ``--profile``, made tiny by ``--smoke``, with every stage
    setting an option of :func:`add_stage_options` names (options left out keep the profile's value)."""
    p = get_profile(args.profile)
    p = p.smoke() if getattr(args, "smoke", False) else p
    for dest, value in sorted(vars(args).items()):
        if STAGE_DEST in dest and value is not None:
            p = _with_setting(p, dest.split(STAGE_DEST)[1:], value)
    return p


def _with_setting(obj, path: list[str], value):
    """``obj`` with the (nested) field ``path`` set to ``value``."""
    head = path[0]
    return replace(obj, **{head: value if len(path) == 1 else _with_setting(getattr(obj, head), path[1:], value)})


def number(kind=float, low: Optional[float] = None, high: Optional[float] = None):
    """An argparse type: a finite ``kind`` within [low, high]; anything else is a one-line usage error.

    >>> number(float, 0, 10)("2.5"), number(int, 1)("3")
    (2.5, 3)
    >>> number(float)("nan")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: 'nan' is not a finite number
    """
    def parse(text: str):
        try:
            value = kind(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"'{text}' is not {'an integer' if kind is int else 'a number'}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"'{text}' is not a finite number")
        if (low is not None and value < low) or (high is not None and value > high):
            span = f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
            raise argparse.ArgumentTypeError(f"{text} is outside {span}")
        return value
    parse.__name__ = kind.__name__
    return parse


def finite_json(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, infinity) replaced by None, so printed JSON is
    valid JSON.

    >>> finite_json({"a": float("nan"), "b": [1.0, float("inf")]})
    {'a': None, 'b': [1.0, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value


def shown(value: Any) -> str:
    r"""``value`` as table text: control and bidirectional-override characters escaped, so a name
    holding a newline cannot break the table and U+202E cannot reverse what follows it on screen.

    >>> print(shown("weird" + chr(10) + "id"), shown("a" + chr(0x202E) + "b"), shown("café 😀"))
    weird\nid a\u202eb café 😀
    """
    import unicodedata

    text = str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() and unicodedata.category(c) != "Cf" else ascii(c)[1:-1] for c in text)


def print_table(rows: dict[str, Any] | list[dict[str, Any]], as_json: bool = False) -> None:
    """Print a dict as two aligned columns, a list of dicts as a table, or either as JSON."""
    if as_json:
        print(json.dumps(finite_json(rows), indent=2, ensure_ascii=False, allow_nan=False))
        return
    if isinstance(rows, dict):
        width = max(len(shown(k)) for k in rows)
        for k, v in rows.items():
            print(f"{shown(k):<{width}}  {shown(v)}")
        return
    if not rows:
        print("(nothing)")
        return
    cols = list(rows[0])
    widths = {c: max(len(shown(c)), *(len(shown(r.get(c, ""))) for r in rows)) for c in cols}
    print("  ".join(f"{shown(c):<{widths[c]}}" for c in cols))
    print("  ".join("-" * widths[c] for c in cols))
    for r in rows:
        print("  ".join(f"{shown(r.get(c, '')):<{widths[c]}}" for c in cols))


#: How ``split_list`` names the values it expects, in its messages.
_KIND_NAMES = {int: "integers", float: "numbers", str: "values"}


def split_list(text: str, what: str, kind=str, positive: bool = False) -> list:
    """Comma-separated values of an option, refused when empty, malformed or (with ``positive``)
    below 1; blanks between commas are skipped.

    >>> split_list("1, 5,,10", "--k", int, positive=True)
    [1, 5, 10]
    """
    name = _KIND_NAMES.get(kind, f"{kind.__name__} values")
    try:
        values = [kind(x.strip()) for x in text.split(",") if x.strip()]
    except ValueError:
        raise DataError(f"{what} should be comma-separated {name}, got '{text}'") from None
    if positive and (not values or min(values) < 1):
        raise DataError(f"{what} should be positive {name}, got '{text}'")
    if not values:
        raise DataError(f"{what} is empty")
    return values


def checkpoint_from(args, ignore: tuple[str, ...] = (), value_kind: type = list):
    """The ``checkpoints.Checkpoint`` that ``--checkpoint FILE [--resume]`` asks for (None without it). Its
    settings are every option that changes the results and the content hash of every input file or
    folder an option names, so a resumed run cannot mix two runs (nor two versions of one file).
    ``value_kind`` is what each finished unit holds (a damaged line is refused, not used)."""
    if args.checkpoint is None:
        if args.resume:
            raise DataError("--resume needs --checkpoint FILE")
        return None
    skip = {"func", "command", "checkpoint", "resume", "json", *ignore}
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k not in skip}
    settings["input hashes"] = {k: input_hash(v) for k, v in sorted(settings.items())
                                if isinstance(v, str) and v and Path(v).exists()}
    return Checkpoint(args.checkpoint, settings, resume=args.resume, value_kind=value_kind)


def input_hash(path: str | Path) -> str:
    """A short content hash of a file, or of a folder's files (names and bytes, in name order)."""
    from ..io import content_key, sha256_file

    p = Path(path)
    if p.is_dir():
        return content_key(*[(f.name, sha256_file(f)) for f in sorted(p.iterdir()) if f.is_file()])
    return sha256_file(p)[:12] if p.is_file() else ""


# --------------------------------------------------------------------------- settings as options

def option_name(f) -> str:
    """The command-line flag of a settings field: its ``knob`` option name, else the field's name
    with dashes (``semantic_top_n`` -> ``--top-n``, ``edge_text`` -> ``--edge-text``)."""
    return "--" + (f.metadata.get("option") or f.name.replace("_", "-"))


def field_type(f):
    """The argparse type of a settings field, with the field's own range: the option refuses what
    the dataclass would refuse, as a usage error before any work."""
    meta, default = f.metadata, f.default
    if isinstance(default, frozenset):
        return lambda text: frozenset(x.strip() for x in text.split(",") if x.strip())
    if default is None or default is MISSING:  # no default: the annotation says the kind
        kind = int if "int" in str(f.type) else float if "float" in str(f.type) else str
        return number(kind, meta.get("low"), meta.get("high")) if kind is not str else str
    if isinstance(default, str):
        return str
    if isinstance(default, tuple):
        one = number(float, meta.get("low"), meta.get("high"))

        def floats(text: str):
            values = [one(x.strip()) for x in text.split(",")]
            if len(values) != len(default):
                raise argparse.ArgumentTypeError(f"'{text}' should be {len(default)} comma-separated numbers")
            return tuple(values)
        return floats
    return number(type(default), meta.get("low"), meta.get("high"))


def as_option_text(value) -> str:
    """A default as the command line writes it: ``(0.5, 0.3, 0.2)`` -> ``0.5,0.3,0.2``."""
    if isinstance(value, frozenset):
        return ",".join(sorted(value))
    return ",".join(map(str, value)) if isinstance(value, tuple) else str(value)


#: Joins a profile field and its settings' field in an option's ``dest`` (``summarizer__decoder__layer``),
#: which is how :func:`profile_from` finds the stage options a command has.
STAGE_DEST = "__"


def add_stage_options(parser, stage: str, prefix: str = "", skip: tuple[str, ...] = ()) -> None:
    """One option per field of a profile stage's settings (``stage``: ``extractor``, ``summarizer``,
    ``memory``, ...; nested settings such as ``summarizer.decoder`` get options too, ``skip`` leaves
    fields out), named ``--{prefix}{option}``, with the ``knob``'s help, range and choices. Defaults are
    None, meaning "the profile's value" (the help quotes the offline profile's): :func:`profile_from`
    applies what was given, so the profile is the one source of defaults."""
    _add_options(parser, stage.split("."), getattr(PROFILES["offline"], stage), prefix, skip)


def _add_options(parser, path: list[str], settings, prefix: str, skip) -> None:
    for f in fields(settings):
        value = getattr(settings, f.name)
        if f.name in skip or "help" not in f.metadata:
            if is_dataclass(value) and f.name not in skip and value.__class__.__name__ != "EndpointSettings":
                _add_options(parser, [*path, f.name], value, prefix, skip)
            continue
        meta = f.metadata
        flag = "--" + prefix + (meta.get("option") or f.name.replace("_", "-"))
        common = dict(dest=STAGE_DEST.join(["", *path, f.name]), default=None,
                      help=f"{meta['help']} (offline profile: {as_option_text(value)})")
        _add_knob_option(parser, flag, f, common)


def _add_knob_option(parser, flag: str, f, common: dict) -> None:
    """One option for the knob field ``f``: a yes/no pair, a choice, or a typed value."""
    if isinstance(f.default, bool):
        parser.add_argument(flag, action=argparse.BooleanOptionalAction, **common)
    elif f.metadata.get("choices") is not None:
        parser.add_argument(flag, choices=f.metadata["choices"], **common)
    else:
        parser.add_argument(flag, type=field_type(f), metavar=f.name.upper(), **common)


def add_settings_options(parser, cls=RetrievalSettings, skip: tuple[str, ...] = (), label: str = "paper") -> None:
    """One option per field of the settings dataclass ``cls`` (but ``skip``), its help, range and
    choices taken from the field (``config.knob``); the help names the dataclass default as
    ``label`` (RetrievalSettings' defaults are the paper's). Every option's default is None, meaning
    "the preset's value", so the dataclass is the one source of defaults; ``settings_from_args``
    applies them. A yes/no field becomes a ``--field/--no-field`` pair."""
    for f in fields(cls):
        if f.name in skip:
            continue
        meta, flag = f.metadata, option_name(f)
        common = dict(dest=f.name, default=None, help=f"{meta['help']} ({label}: {as_option_text(f.default)})")
        _add_knob_option(parser, flag, f, common)


def add_preset_option(parser, what: str = "") -> None:
    """``--preset NAME``: the retrieval settings to start from (``config.RETRIEVAL_PRESETS``)."""
    parser.add_argument("--preset", choices=list(RETRIEVAL_PRESETS), default=None,
                        help="retrieval settings to start from; single options below change one field"
                             + (f" (default: {what})" if what else ""))


def settings_from_args(args, base: RetrievalSettings, cls=RetrievalSettings,
                       skip: tuple[str, ...] = ()) -> RetrievalSettings:
    """``base`` with every field the command line set (options left at None keep the base's value;
    ``skip`` as in ``add_settings_options``).

    >>> ns = argparse.Namespace(hops=2, anchors=None)
    >>> s = settings_from_args(ns, RETRIEVAL_PRESETS["paper"])
    >>> s.hops, s.anchors
    (2, 5)
    """
    changes = {f.name: getattr(args, f.name) for f in fields(cls)
               if f.name not in skip and getattr(args, f.name, None) is not None}
    return replace(base, **changes)


# --------------------------------------------------------------------------- an endpoint as options

def add_endpoint_options(parser, prefix: str = "", skip: tuple[str, ...] = (), what: str = "") -> None:
    """One option per field of ``config.EndpointSettings`` (but ``skip``), named ``--{prefix}{field}``
    (``--base-url``, ``--extractor-concurrency``), help, range and choices from the field's ``knob``;
    ``what`` says which stage's endpoint it is. Defaults are None: the dataclass's apply
    (:func:`endpoint_from_args`)."""
    from ..config import EndpointSettings

    for f in fields(EndpointSettings):
        if f.name in skip:
            continue
        meta, flag = f.metadata, f"--{prefix}{f.name.replace('_', '-')}"
        text = f"{what}: " if what else ""
        common = dict(dest=f"{prefix.replace('-', '_')}{f.name}", default=None,
                      help=f"{text}{meta['help']} (default: {as_option_text(f.default)})")
        if isinstance(f.default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **common)
        elif f.default is None or isinstance(f.default, str):
            parser.add_argument(flag, metavar=f.name.upper(), **common)
        else:
            parser.add_argument(flag, type=field_type(f), metavar=f.name.upper(), **common)


def endpoint_from_args(args, prefix: str = "", base=None):
    """The ``config.EndpointSettings`` the options of :func:`add_endpoint_options` ask for (options
    left at None keep ``base``'s value, by default the dataclass's)."""
    from ..config import EndpointSettings

    base = base or EndpointSettings()
    changes = {f.name: getattr(args, f"{prefix.replace('-', '_')}{f.name}") for f in fields(EndpointSettings)
               if getattr(args, f"{prefix.replace('-', '_')}{f.name}", None) is not None}
    return replace(base, **changes)


def add_device_option(parser) -> None:
    """``--device``: where the local models of a command run (``commands.devices``)."""
    parser.add_argument("--device", default=None, choices=("cuda", "mps", "cpu"),
                        help="where local models run (default: the GPU when there is one)")
