"""What every stage4 command line (``python -m stage4_models.mnist``, ``.names``,
``.tokenizer``) does after parsing: run the chosen subcommand, and turn a bad input (a
ValueError or a missing file, each with a message naming what was wrong) into one line on
stderr and exit status 2, instead of a traceback."""
import sys


def dispatch(args, commands):
    """Run ``commands[args.command](args)``; its exit status, or 2 after a bad input."""
    try:
        return commands[args.command](args)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
