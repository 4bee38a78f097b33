"""``glong train-extractor`` (LoRA fine-tuning of the triple extractor) and ``glong extract``
(triples for every turn of a conversation file, one JSON object per line)."""

from __future__ import annotations

from pathlib import Path

from ..errors import DataError
from .common import (
    add_device_option,
    add_endpoint_options,
    add_profile_option,
    add_stage_options,
    endpoint_from_args,
    number,
    print_table,
    profile_from,
)


def register(sub) -> None:
    t = sub.add_parser("train-extractor", help="fine-tune the triple extractor with LoRA")
    t.add_argument("--data", type=Path, default=None,
                   help="training pairs: the shipped data/triple_pairs.jsonl (default) or a PersonaExt file")
    t.add_argument("--max-train", type=number(int, 1), default=None, help="use at most this many training utterances")
    t.add_argument("--out", type=Path, required=True, help="folder for the LoRA adapter")
    t.add_argument("--merge-out", type=Path, default=None,
                   help="also write the base model with the adapter merged in (peft merge_and_unload) and its "
                        "tokenizer to this folder: what a server such as vLLM loads as a plain model")
    t.add_argument("--seed", type=number(int, 0), default=42)
    add_profile_option(t)
    add_stage_options(t.add_argument_group("the extractor and its training (config.ExtractorSettings)"), "extractor",
                      skip=("max_new_tokens",))
    t.set_defaults(func=run_train)

    e = sub.add_parser("extract", help="extract triples from every turn of a conversation file")
    e.add_argument("input", type=Path, help="a conversation file in any supported format (or a folder of them)")
    e.add_argument("--out", type=Path, required=True, help="output JSONL (one object per turn)")
    e.add_argument("--adapter", type=Path, default=None,
                   help="LoRA adapter folder (default: the cached adapter, trained on first use)")
    e.add_argument("--sessions", type=number(int, 0), nargs="*", default=None, help="only these session numbers")
    e.add_argument("--batch-size", type=number(int, 1), default=8)
    e.add_argument("--zero-shot", action="store_true", help="the base model with no adapter")
    add_device_option(e)
    add_endpoint_options(e, what="extract through an OpenAI-compatible server (e.g. vLLM with the adapter)")
    add_profile_option(e)
    e.set_defaults(func=run_extract)


def run_train(args) -> int:
    from ..artifacts import check_artifact_target
    from ..extraction import load_pairs, read_training_log, train_extractor

    check_artifact_target(args.out)  # before minutes of training: a folder of the user's files is never replaced
    if args.merge_out:
        check_artifact_target(args.merge_out)
    profile = profile_from(args)  # the profile with every extractor option given
    pairs = load_pairs(args.data or required_pairs(profile))
    out = train_extractor(pairs, profile, out=args.out, seed=args.seed, max_train=args.max_train, force=True)
    if args.merge_out:
        from ..extraction import merge_adapter

        merge_adapter(profile, out, args.merge_out)
    log = read_training_log(out)
    losses = [r["loss"] for r in log.get("log_history", []) if "loss" in r]
    dev = [r["eval_loss"] for r in log.get("log_history", []) if "eval_loss" in r]
    print_table({"adapter": str(out), "train pairs": log.get("train_pairs"), "dev pairs": log.get("dev_pairs"),
                 "steps": log.get("steps"), "trainable parameters": log.get("trainable_parameters"),
                 "first / last train loss": f"{losses[0]:.3f} / {losses[-1]:.3f}" if losses else "-",
                 "last dev loss": f"{dev[-1]:.3f}" if dev else "-", "seconds": log.get("train_seconds"),
                 **({"merged model": str(args.merge_out)} if args.merge_out else {})})
    return 0


def required_pairs(profile):
    """The pairs a profile trains on when ``--data`` is not given (``training_pairs_path``: PersonaExt
    for the paper profile, refused in one line when absent; None, the shipped pairs, otherwise)."""
    from ..extraction.prompt import training_pairs_path

    return training_pairs_path(profile)


def extraction_rows(conversations, extractor, sessions=None, batch_size: int = 8) -> list[dict]:
    """One dict per turn: conversation id, session, turn id, speaker, text and its triples."""
    from ..extraction import extract_conversation

    rows = []
    for conv in conversations:
        by_turn: dict[str, list] = {}
        for tr in extract_conversation(conv, extractor, sessions, batch_size):
            by_turn.setdefault(tr.turn_id, []).append(
                {"subject": tr.subject, "relation": tr.relation, "object": tr.object})
        for s in conv.sessions:
            if sessions is not None and s.index not in sessions:
                continue
            for t in s.turns:
                rows.append({"conversation": conv.id, "session": s.index, "turn_id": t.id, "speaker": t.speaker,
                             "text": t.text, "triples": by_turn.get(t.id, [])})
    return rows


def run_extract(args) -> int:
    from ..extraction import load_extractor
    from ..io import check_not_input, check_output_file, save_jsonl
    from ..loaders import load_conversations

    check_not_input(args.out, args.input)
    check_output_file(args.out)
    conversations = load_conversations(args.input)  # bad input fails here, before any model loads
    if args.sessions:
        known = {s.index for c in conversations for s in c.sessions}
        if not set(args.sessions) & known:
            raise DataError(f"no session {args.sessions} in the file (it has {sorted(known)})", path=args.input)
    endpoint = endpoint_from_args(args)
    if endpoint.base_url and args.zero_shot:
        raise DataError("--zero-shot is for the local model; a server answers with the model it serves")
    extractor = load_extractor(args.profile, adapter=args.adapter, zero_shot=args.zero_shot, endpoint=endpoint,
                               device=args.device)
    if not endpoint.base_url:
        from .devices import note_device

        note_device(args.device, "extraction")
    rows = extraction_rows(conversations, extractor, args.sessions, args.batch_size)
    save_jsonl(args.out, rows)
    print(f"{len(rows)} turns, {sum(len(r['triples']) for r in rows)} triples -> {args.out}")
    return 0
