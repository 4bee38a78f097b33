"""End-to-end MSC benchmark: ``glong eval-msc`` with a preset, the run behind the README's MSC tables.

Every method of ``agent.ALL_METHODS`` (the baselines, the summary-memory baseline whose memory the
generator writes, G-Long and its ablations: importance, recency, the rerank (Table 14), L = 2 hops)
plus the two prompt variants (``--variants``: the reference code's ranked memory lines; the context
never reset between sessions), the paper's Table 1 and Table 6 layouts, and ``--compare``: G-Long
against long context (prompt-token reduction; BLEU-2 and ROUGE-L differences on the paper's nlg-eval
scale and the smoothed one, with paired 95% intervals over conversations and the number of replies
the paper's difference would need), the pairs of ``commands.evaluate.PAIRS``, and reply health.
The runner is the command's (``glong_lib/commands/evaluate.py``); this script only chooses its
options (:data:`PRESET`, then the real MSC when ``GLONG_REAL_DATA`` is set) and passes every other
option through to it, so ``--help`` of ``glong eval-msc`` lists them.

On the real MSC (``msc4_valid.jsonl``, sessions 1-4) session 1 fills memory and sessions 2-4 are
scored; G-Long's triples come from the fine-tuned extractor there (the samples carry gold ones).
Aim (issue 7): G-Long at least 60% fewer prompt tokens than long context (the paper: 63.0%).

Run time on 2 shared cores: ``--quick`` (2 sample conversations, 1 turn a session, the model-free
echo generator, gold triples, no salience model) about 10 s; the full run (20 real conversations,
2 user turns a session, SmolLM2 replies) about 2 hours.

    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_msc --json msc.json   # 20 real MSC conversations
    python -m benchmarks.bench_msc --conversations 3                                # a CPU-sized run on the samples
    python -m benchmarks.bench_msc --generator tokens --turns-per-session 0         # prompt tokens of every turn
    python -m benchmarks.bench_msc --reply-probe 9 --methods glong                  # why replies stop at line 1
    python -m benchmarks.bench_msc --quick --json msc.json
"""

from __future__ import annotations

import sys

from benchmarks._common import bench_parser, real_data_dir
from glong_lib.agent import ALL_METHODS
from glong_lib.cli import main as glong

#: The options this benchmark gives ``glong eval-msc`` (any option given on the command line wins):
#: every method and both prompt variants, the paired comparisons, the first 2 user turns of each
#: session (about 2 s per reply on 2 cores), 24-token replies cut at their first line (with the
#: first-line stop, replies end on their own before 24 tokens).
PRESET = ["--methods", *ALL_METHODS, "--variants", "--compare", "--turns-per-session", "2", "--max-new-tokens", "24"]

#: ``--quick``: two sample conversations, one turn a session, no model anywhere but the encoder.
QUICK = ["--conversations", "2", "--turns-per-session", "1", "--max-sessions", "2", "--generator", "echo",
         "--methods", "no-history", "long-context", "glong",
         "--triples", "gold", "--no-salience"]


def eval_msc_args(argv=None) -> list[str]:
    """The ``glong eval-msc`` arguments this benchmark runs: the preset, the real MSC (20
    conversations) when ``GLONG_REAL_DATA`` holds it, ``--quick``'s sizes, then the caller's own
    options; ``--json PATH`` becomes ``--out PATH`` (every reply and score, and the comparison)."""
    ours, rest = bench_parser(__doc__).parse_known_args(argv)
    args = ["eval-msc", *PRESET]
    msc = real_data_dir("msc", "msc4_valid.jsonl")
    if ours.quick:
        args += QUICK
    elif msc is not None:
        args += ["--msc", str(msc), "--conversations", "20"]
    if ours.json is not None:
        args += ["--out", str(ours.json)]
    return args + rest


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if {"-h", "--help"} & set(argv):
        print(__doc__)
        print("Options: --json PATH, --quick, and every option of `glong eval-msc --help`.")
        return 0
    return glong(eval_msc_args(argv))


if __name__ == "__main__":
    sys.exit(main())
