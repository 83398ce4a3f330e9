"""The types of the stage4 command lines' arguments (argparse's ``type=``): each turns the
text typed into a value, or rejects it while the command line is parsed, with a message
saying what is allowed. So a step count of -5 or a learning rate of nan never reaches
training, and a device that cannot run here or an output folder that cannot be one is
reported before any work starts, not after it (cli.py reports what only running finds)."""
import argparse
import math
import os

from stage2_tensor import backend


def _number(convert, text, allowed, expected):
    try:
        value = convert(text)
    except ValueError:
        value = None
    if value is None or not allowed(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def positive_int(text):
    """A count of at least 1 (steps, batch size, layer width, top-k)."""
    return _number(int, text, lambda n: n >= 1, "an integer of at least 1")


def non_negative_int(text):
    """A count that may be 0 (warm-up steps, tokens to generate, names to sample)."""
    return _number(int, text, lambda n: n >= 0, "an integer of at least 0")


def positive_float(text):
    """A finite number above 0 (a learning rate, a temperature): nan and inf are not."""
    return _number(float, text, lambda x: math.isfinite(x) and x > 0, "a finite number above 0")


def non_negative_float(text):
    """A finite number of at least 0 (a final learning rate, add-k smoothing)."""
    return _number(float, text, lambda x: math.isfinite(x) and x >= 0, "a finite number of at least 0")


def probability(text):
    """A dropout probability: from 0 up to, not including, 1 (at 1 nothing is kept)."""
    return _number(float, text, lambda p: 0 <= p < 1, "a probability from 0 up to (not including) 1")


def device(name):
    """A device that runs here, loaded now (stage2's backend.get): an unknown name is
    rejected with the list of devices, one that cannot run here with the reason."""
    try:
        backend.get(name)
    except (ValueError, RuntimeError) as err:   # a loader's RuntimeError: it cannot run here
        raise argparse.ArgumentTypeError(str(err)) from None
    return name


def output_folder(text):
    """A folder to write into: an existing one, or a new one that can be made (its nearest
    existing ancestor is a folder we may write in). An existing file is rejected here,
    before training, instead of when the results are written after it."""
    path = os.path.abspath(text)
    if os.path.exists(path) and not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{text} is a file; expected a folder (new or existing)")
    ancestor = path
    while not os.path.exists(ancestor):
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        raise argparse.ArgumentTypeError(f"cannot make the folder {text}: {ancestor} is a file")
    if not os.access(ancestor, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write in {ancestor} (no permission), where {text} goes")
    return text


def output_file(text):
    """A file to write (replaced when it exists): not a folder, and in a folder that exists
    or can be made."""
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text} is a folder; expected a file name")
    output_folder(os.path.dirname(os.path.abspath(text)))
    return text
