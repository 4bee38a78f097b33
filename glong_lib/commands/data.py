"""``glong data prepare`` (the public releases, as downloaded, to the layout the benchmarks read) and
``glong data splits`` (the named splits and where each is found under ``$GLONG_REAL_DATA``)."""

from __future__ import annotations

from pathlib import Path

from .common import print_table


def register(sub) -> None:
    d = sub.add_parser("data", help="prepare the real data sets from their public releases; list the splits")
    dsub = d.add_subparsers(dest="data_command", metavar="SUBCOMMAND")
    dsub.required = True
    p = dsub.add_parser("prepare", help="turn downloaded releases into the layout $GLONG_REAL_DATA names "
                                        "(see docs/data.md)")
    p.add_argument("--msc", type=Path, default=None,
                   help="ParlAI's msc release, unpacked (the folder holding msc_personasummary/ and msc_dialogue/)")
    p.add_argument("--locomo", type=Path, default=None, help="LoCoMo's locomo10.json")
    p.add_argument("--personaext", type=Path, default=None,
                   help="PAED's data (a folder holding u2t_map_all.json, or the zero-shot split files; "
                        "schema.json beside them is copied)")
    p.add_argument("--samsum", type=Path, default=None, help="SAMSum's test.json")
    p.add_argument("--dialogsum", type=Path, default=None,
                   help="DialogSum's data folder (dialogsum.dev.jsonl and dialogsum.test.jsonl)")
    p.add_argument("--out", type=Path, required=True,
                   help="output folder: new, empty, or one an earlier prepare wrote (added to)")
    p.add_argument("--json", action="store_true", help="print the manifest as JSON")
    p.set_defaults(func=run_prepare)
    s = dsub.add_parser("splits", help="the named splits, their files, and whether $GLONG_REAL_DATA holds them")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=run_splits)


def run_prepare(args) -> int:
    from ..datasets import REAL_DATA_ENV, prepare

    manifest = prepare(args.out, msc=args.msc, locomo=args.locomo, personaext=args.personaext,
                       samsum=args.samsum, dialogsum=args.dialogsum)
    if args.json:
        print_table(manifest, as_json=True)
        return 0
    rows = []
    for name, entry in manifest["datasets"].items():
        for file, info in entry["outputs"].items():
            counts = ", ".join(f"{k} {v}" for k, v in info.items() if isinstance(v, int))
            rows.append({"data set": name, "file": file, "splits": ", ".join(info["splits"]) or "-",
                         "counts": counts or "-"})
        if entry.get("note"):
            rows.append({"data set": name, "file": "-", "splits": "-", "counts": entry["note"]})
    print_table(rows)
    print(f"\nwritten to {args.out} (manifest.json: sources' SHA-256, counts, splits); "
          f"run the benchmarks with {REAL_DATA_ENV}={args.out}")
    return 0


def run_splits(args) -> int:
    from ..datasets import SPLITS, real_data_folder, split_file

    folder = real_data_folder()
    rows = [{"split": s.name, "file": s.file, "samples": ", ".join(s.samples) or "all",
             "here": "yes" if split_file(s.name) else "no", "purpose": s.purpose} for s in SPLITS.values()]
    print_table(rows, as_json=args.json)
    if not args.json:
        print(f"\nreal-data folder: {folder if folder else 'not set (GLONG_REAL_DATA)'}")
    return 0
