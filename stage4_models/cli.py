"""What every stage4 command line (``python -m stage4_models.mnist``, ``.names``, ``.gpt``,
``.chat``, ``.tokenizer``) does after parsing: run the chosen subcommand, and turn a bad
input into one line on stderr, ``error: ...``, and exit status 2, instead of a traceback.

Parsing already rejected bad numbers, devices and output folders (arguments.py). What is
left are the errors that only running finds, each with a message naming what was wrong:
a ValueError (a bad value, a file of the wrong kind), the OSErrors of a path that cannot
be read or written (missing, a folder, no permission), and, inside ``reading(path)``, the
RuntimeError of a damaged checkpoint. Any other exception is a bug, and keeps its traceback.
"""
import argparse
import sys
from contextlib import contextmanager

USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError, IsADirectoryError,
               NotADirectoryError, PermissionError)


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose parse errors are one line too: ``error: PROG: message``
    (argparse prints the whole usage first; ``--help`` still shows it). Subcommands'
    parsers are of the same class (``add_subparsers`` makes them so)."""

    def error(self, message):
        self.exit(2, f"error: {self.prog}: {message} (see --help)\n")


def dispatch(args, commands):
    """Run ``commands[args.command](args)``; its exit status, or 2 after a bad input."""
    try:
        return commands[args.command](args)
    except USER_ERRORS as err:
        # one line, also for a message of several (load_state_dict lists its problems a line each)
        print("error: " + " ".join(line.strip() for line in str(err).splitlines() if line.strip()),
              file=sys.stderr)
        return 2


@contextmanager
def reading(path):
    """Read the checkpoint ``path`` inside this block: a RuntimeError raised in it (stage2's
    load of a file that is not a valid tracegrad file, weights that do not fit the model)
    is about that file, and becomes a ValueError naming it, which ``dispatch`` reports. A
    RuntimeError anywhere else is left alone: there it would be a bug."""
    try:
        yield
    except RuntimeError as err:
        message = str(err)
        raise ValueError(message if str(path) in message else f"{path}: {message}") from err
