"""How long to train the offline extractor: quality against training steps, in one run.

Trains the offline profile's recipe (LoRA on SmolLM2-135M, the shipped pairs of
``data/triple_pairs.jsonl``) for ``--steps`` steps, saving the adapter at five evenly spaced steps
(one cosine schedule, so the curve is that run's, not five separately scheduled runs), then scores
every snapshot greedily on

* the shipped pairs' own dev split (10%, by utterance, never trained on), and
* held-out PersonaExt utterances (only with ``GLONG_REAL_DATA``; the adapter never sees PersonaExt,
  so all of it is held out; the same seeded dev sample as ``bench_extraction.py``),

and prints exact and normalised F1 with the training minutes each snapshot cost. The final
adapter is the one the profile uses when ``max_steps`` equals ``--steps`` (same cache key).

An investigation (it chose the profile's 400 steps), kept to re-run when the recipe changes.

Run time on 2 shared cores: ``--quick`` (the smoke profile, 4 steps with a snapshot at 2, one
dev-loss evaluation, 4 dev utterances scored, no PersonaExt) about 1 minute; the full run about 20
minutes of training plus the scoring (an hour or more with PersonaExt).

    python -m benchmarks.bench_extractor_steps --steps 400 --real-dev 150 --json steps.json
    python -m benchmarks.bench_extractor_steps --quick --json steps.json
"""

from __future__ import annotations

import json
import sys

from benchmarks._common import bench_parser, write_results
from glong_lib import extraction as ex
from glong_lib.config import get_profile
from glong_lib.evaluation import extraction as EX
from glong_lib.io import data_path
from glong_lib.models import cache_dir

#: ``--quick``: train the smoke profile this many steps, two snapshots, score this many dev utterances.
QUICK_STEPS, QUICK_DEV = 4, 4


def parse_args(argv=None):
    parser = bench_parser(__doc__)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--points", type=int, default=5, help="snapshots (evenly spaced, the last at --steps)")
    parser.add_argument("--real-dev", type=int, default=150, help="held-out PersonaExt utterances scored")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    if args.quick:
        args.steps, args.points = QUICK_STEPS, 2
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    profile = get_profile("offline").smoke() if args.quick else get_profile("offline")
    pairs = ex.load_pairs()
    _, dev = ex.split_pairs(pairs, 0.1, args.seed, max_dev=QUICK_DEV if args.quick else None)
    sets = {"shipped dev": dev}
    if ex.personaext_path() and not args.quick:
        persona = ex.load_pairs(ex.personaext_path())
        sets["PersonaExt held out"] = ex.split_pairs(persona, 0.1, args.seed, max_dev=args.real_dev)[1]
    else:
        print("(PersonaExt skipped: set GLONG_REAL_DATA to the real data folder)")

    settings = ex.train_settings(pairs, profile, max_steps=args.steps, seed=args.seed)
    snapshots = cache_dir("extractor-snapshots") / settings.key()
    steps = sorted({round(args.steps * (i + 1) / args.points) for i in range(args.points)})
    final = ex.train_extractor(pairs, profile, max_steps=args.steps, seed=args.seed, snapshot_steps=steps[:-1],
                               snapshot_dir=snapshots, eval_points=1 if args.quick else 4)
    log = ex.read_training_log(final)
    seconds_per_step = log["train_seconds"] / log["steps"]
    print(f"trained {log['steps']} steps in {log['train_seconds']:.0f} s ({seconds_per_step:.2f} s/step), "
          f"{log['train_pairs']} training pairs")

    rows = []
    for step in steps:
        folder = final if step == steps[-1] else snapshots / f"step-{step}"
        model = ex.load_extractor(profile, adapter=folder)
        row = {"step": step, "train minutes": round(step * seconds_per_step / 60, 1)}
        for name, items in sets.items():
            report, _ = EX.evaluate_on_pairs(model, items, batch_size=16, progress=False)
            row[name] = {k: report[k] for k in ("f1 exact", "f1 norm", "f1 partial", "fact detection f1",
                                                "unparseable rate")}
        rows.append(row)
        print(json.dumps(row), flush=True)

    print(f"\n{'step':>6}{'minutes':>9}" + "".join(f"{name + ' ' + k:>34}" for name in sets
                                                     for k in ("f1 norm", "f1 partial")))
    for row in rows:
        print(f"{row['step']:>6}{row['train minutes']:>9}"
              + "".join(f"{row[name][k]:>34}" for name in sets for k in ("f1 norm", "f1 partial")))
    print("(scored on: " + ", ".join(f"{name} {len(items)} utterances" for name, items in sets.items()) + ")")
    write_results(args, {"rows": rows, "sizes": {k: len(v) for k, v in sets.items()},
                         "train_seconds": log["train_seconds"]}, "bench_extractor_steps",
                  inputs=[data_path("triple_pairs.jsonl"), *([ex.personaext_path()] if len(sets) > 1 else [])])
    return 0


if __name__ == "__main__":
    sys.exit(main())
