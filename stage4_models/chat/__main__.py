"""The chatbot program (thesis, "Chatbots with domain-specific knowledge"):

    python -m stage4_models.chat train [--base runs/chat-base/checkpoint.tg] [--steps N]
                                       [--base-steps N] [--eval-limit N] [--device cpu]
                                       [--out runs/chat]
    python -m stage4_models.chat --checkpoint runs/chat/checkpoint.tg               # a conversation
    python -m stage4_models.chat --checkpoint runs/chat/checkpoint.tg --ask "QUESTION"
    python -m stage4_models.chat --checkpoint runs/chat/checkpoint.tg --evaluate

``train`` fine-tunes the pretrained character model (``--base``; without one it first
pretrains it on tiny-shakespeare, the ``chat-base`` config) on data/train.txt, then scores
the held-out questions. Without a command the program talks: each line you type is a
question, the bot's answer follows, earlier turns stay in its context; an empty line or
Ctrl-D ends, ``/reset`` forgets the conversation. ``--ask`` prints one answer;
``--evaluate`` asks every held-out question and prints the table and the accuracy.
"""
import sys
from pathlib import Path

from ..arguments import device, non_negative_int, output_folder, positive_int
from ..cli import Parser, dispatch, reading
from ..gpt.training import config_named, load_checkpoint, train
from . import dataset, finetune
from .bot import ChatBot


def parser():
    p = Parser(prog="python -m stage4_models.chat", description=__doc__.split("\n")[0])
    p.add_argument("--checkpoint", help="a fine-tuned chat model (python -m stage4_models.chat train)")
    p.add_argument("--ask", help="print the answer to this one question")
    p.add_argument("--evaluate", action="store_true", help="score the held-out questions")
    p.add_argument("--sample", action="store_true", help="sample answers (temperature 0.8) instead of greedy")
    p.add_argument("--device", type=device, default="cpu")
    return p


def train_parser():
    p = Parser(prog="python -m stage4_models.chat train",
                                description="fine-tune the chatbot, then score it on the held-out questions")
    p.add_argument("--base", help="pretrained checkpoint (default: pretrain one, the chat-base config)")
    p.add_argument("--base-steps", type=positive_int, help="pretraining steps when there is no --base")
    p.add_argument("--steps", type=positive_int, help="fine-tuning steps")
    p.add_argument("--device", type=device, default="cpu")
    p.add_argument("--seed", type=non_negative_int)
    p.add_argument("--eval-limit", type=positive_int,
                   help="score only the first N held-out questions (default: all)")
    p.add_argument("--out", type=output_folder, default="runs/chat")
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["train"]:
        args = train_parser().parse_args(argv[1:])
        args.command = "train"
    else:
        args = parser().parse_args(argv)
        if not args.checkpoint:
            parser().error("--checkpoint is required (or the command `train`)")
        args.command = "evaluate" if args.evaluate else "ask" if args.ask else "talk"
    return dispatch(args, COMMANDS)


def run_train(args):
    out = Path(args.out)
    base = args.base
    if base is not None:                      # a damaged base is reported before training starts
        with reading(base):
            load_checkpoint(base, args.device)
    else:
        config = config_named("chat-base", steps=args.base_steps, device=args.device, seed=args.seed)
        train(config, out=out.parent / (out.name + "-base"))
        base = str(out.parent / (out.name + "-base") / "checkpoint.tg")
    config = finetune.config(steps=args.steps, device=args.device, seed=args.seed, init_from=base)
    run = train(config, out=out)
    accuracy, rows = held_out_accuracy(ChatBot(run.model, run.tokenizer), limit=args.eval_limit)
    print(f"held-out questions answered with the right fact: {accuracy:.1%} ({sum(r['correct'] for r in rows)}"
          f" of {len(rows)})")
    print(f"wrote {out}/checkpoint.tg; talk to it: python -m stage4_models.chat --checkpoint {out}/checkpoint.tg")
    return 0


def held_out_accuracy(bot, heldout=None, limit=None):
    """(accuracy, rows) of the greedy answers to the held-out questions (``heldout``, or the
    shipped ones; the first ``limit`` of them), each asked afresh."""
    heldout = dataset.read_heldout(dataset.DATA / "heldout.jsonl") if heldout is None else heldout
    return dataset.evaluate(lambda q: bot.ask(q, remember=False), heldout[:limit])


def load_bot(args):
    with reading(args.checkpoint):
        model, _, tokenizer = load_checkpoint(args.checkpoint, args.device)
    return ChatBot(model, tokenizer)


def run_evaluate(args):
    accuracy, rows = held_out_accuracy(load_bot(args))
    for r in rows:
        print(f"{'ok ' if r['correct'] else 'NO '} {r['question']}  ->  {r['answer']}  [{r['key']}]")
    print(f"held-out accuracy: {accuracy:.1%} ({sum(r['correct'] for r in rows)} of {len(rows)})")
    return 0


def run_ask(args):
    print(load_bot(args).ask(args.ask, greedy=not args.sample))
    return 0


def run_talk(args):
    bot = load_bot(args)
    print("Ask about Northbridge Technical College (an empty line ends, /reset forgets).")
    while True:
        try:
            question = input("User: ").strip()
        except EOFError:
            print()
            break
        if not question:
            break
        if question == "/reset":
            bot.reset()
            continue
        print("Bot:", bot.ask(question, greedy=not args.sample))
    return 0


COMMANDS = {"train": run_train, "evaluate": run_evaluate, "ask": run_ask, "talk": run_talk}

if __name__ == "__main__":
    sys.exit(main())
