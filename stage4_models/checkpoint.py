"""The checkpoints stage4's programs write and read back: ``tg.save`` of a dict whose "kind"
names the program, with the run's config (a dict of a dataclass's fields), the model's
state dict and whatever else the program keeps (``CheckpointKind.save``; written atomically,
so an interrupted run leaves the previous checkpoint whole).

A checkpoint is untrusted input like any file. ``tg.load`` checks the file's format; a
program's ``CheckpointKind`` checks the rest: ``read``, that the file holds a checkpoint of
that kind with every entry the program reads; ``config``, that the saved config's fields
have their declared types; ``check_shapes``, that the weights the model's size depends on
fit the config, before a model of that size is built; ``load_weights`` copies the weights
in. Whatever is wrong is a ValueError naming the file, which a command line prints as one
line (``cli.dispatch``).
"""
import dataclasses

import stage2_tensor as tg


class CheckpointKind:
    """One program's checkpoints: the "kind" it saves, a name for messages ("an MNIST"),
    and the command that writes them."""

    def __init__(self, kind, what, command):
        self.kind, self.what, self.command = kind, what, command

    def error(self, path, why):
        return ValueError(f"{path} is not {self.what} checkpoint as `python -m {self.command}` "
                          f"writes it: {why}")

    def save(self, path, config, model, **entries):
        """Write a checkpoint of this kind: ``config`` (a dataclass), ``model``'s state dict
        and ``entries`` (what else the program reads back, under their names)."""
        tg.save({"kind": self.kind, "config": dataclasses.asdict(config), "model": model.state_dict(),
                 **entries}, path)

    def read(self, path, device, entries=None):
        """The dict saved at ``path``, its tensors on ``device``, with this kind, a "config"
        dict, a "model" state dict (names to tensors) and each of ``entries`` ({key: type
        or tuple of types})."""
        try:
            saved = tg.load(path, map_location=device)
        except RuntimeError as err:          # a damaged or crafted file; the message names it
            raise ValueError(str(err)) from None
        if not isinstance(saved, dict) or saved.get("kind") != self.kind:
            raise ValueError(f"{path} is not {self.what} checkpoint (written by `python -m "
                             f"{self.command}`)")
        expected = {"config": dict, "model": dict, **(entries or {})}
        problems = [f"{key!r} is missing" if key not in saved else
                    f"{key!r} is {_described(saved[key])}, expected {_names(types)}"
                    for key, types in expected.items() if not isinstance(saved.get(key), types)]
        if not problems and not all(isinstance(name, str) and isinstance(value, tg.Tensor)
                                    for name, value in saved["model"].items()):
            problems.append("'model' is not a state dict (parameter names to tensors)")
        if problems:
            raise self.error(path, "; ".join(problems))
        return saved

    def config(self, saved, cls, path):
        """The run's config, dataclass ``cls``, from the checkpoint's "config" dict. Each
        field must have its declared type (an int field takes no bool, a float field takes
        an int, None only where the default is None); keys ``cls`` does not know (another
        version's) are left out, missing ones take their defaults; ``cls``'s own checks
        apply."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        values = {name: value for name, value in saved["config"].items() if name in fields}
        wrong = [f"{name} is {_described(value)}, expected {_names(fields[name].type)}"
                 for name, value in values.items() if not _fits(value, fields[name])]
        if wrong:
            raise self.error(path, "its config's " + "; ".join(wrong))
        try:
            return cls(**values)
        except ValueError as err:            # the dataclass's own checks (sizes >= 1, ...)
            raise self.error(path, f"its config: {err}") from None

    def check_shapes(self, saved, shapes, path):
        """Each of ``shapes`` ({parameter name: shape}) in the state dict, with that shape:
        what the model's size depends on, compared before a model of the config's size is
        built (a config that lied would otherwise allocate whatever it says)."""
        state = saved["model"]
        wrong = [f"{name} is missing" if name not in state else
                 f"{name} has shape {tuple(state[name].shape)}, expected {shape}"
                 for name, shape in shapes.items()
                 if name not in state or tuple(state[name].shape) != shape]
        if wrong:
            raise self.error(path, "its weights do not fit its config: " + "; ".join(wrong))

    def load_weights(self, model, saved, path):
        """Copy the state dict into ``model``; a missing, unexpected or misshapen parameter
        is a ValueError naming the file."""
        try:
            model.load_state_dict(saved["model"])
        except (RuntimeError, ValueError) as err:
            raise self.error(path, str(err)) from None


def _fits(value, field):
    """Whether a saved config value has the dataclass field's declared type."""
    if value is None:
        return field.default is None
    if field.type is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if field.type is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if field.type is tuple:                  # a tuple, or a list from an older file
        return isinstance(value, (tuple, list))
    return isinstance(value, field.type)


def _names(types):
    return " or ".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))


def _described(value):
    name, text = type(value).__name__, repr(value)
    article = "an" if name[0] in "aeiou" else "a"
    return f"{article} {name} ({text if len(text) <= 40 else text[:37] + '...'})"
