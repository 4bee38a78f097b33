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

    python benchmarks/bench_extractor_steps.py --steps 400 --real-dev 150
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from glong_lib import extraction as ex
from glong_lib.evaluation import extraction as EX
from glong_lib.models import cache_dir


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--points", type=int, default=5, help="snapshots (evenly spaced, the last at --steps)")
    parser.add_argument("--real-dev", type=int, default=150, help="held-out PersonaExt utterances scored")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)

    pairs = ex.load_pairs()
    _, dev = ex.split_pairs(pairs, 0.1, args.seed)
    sets = {"shipped dev": dev}
    if ex.personaext_path():
        persona = ex.load_pairs(ex.personaext_path())
        sets["PersonaExt held out"] = ex.split_pairs(persona, 0.1, args.seed, max_dev=args.real_dev)[1]
    else:
        print("(PersonaExt skipped: set GLONG_REAL_DATA to the real data folder)")

    settings = ex.train_settings(pairs, "offline", max_steps=args.steps, seed=args.seed)
    snapshots = cache_dir("extractor-snapshots") / settings.key()
    steps = sorted({round(args.steps * (i + 1) / args.points) for i in range(args.points)})
    final = ex.train_extractor(pairs, "offline", max_steps=args.steps, seed=args.seed,
                               snapshot_steps=steps[:-1], snapshot_dir=snapshots)
    log = ex.read_training_log(final)
    seconds_per_step = log["train_seconds"] / log["steps"]
    print(f"trained {log['steps']} steps in {log['train_seconds']:.0f} s ({seconds_per_step:.2f} s/step), "
          f"{log['train_pairs']} training pairs")

    rows = []
    for step in steps:
        folder = final if step == steps[-1] else snapshots / f"step-{step}"
        model = ex.load_extractor("offline", adapter=folder)
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
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "sizes": {k: len(v) for k, v in sets.items()},
                                         "train_seconds": log["train_seconds"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
