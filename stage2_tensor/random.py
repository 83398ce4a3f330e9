"""PyTorch's ``torch.random``: the package's generator (factories.py) seeded, asked for its
seed, and its state saved and restored.

The state is a uint8 tensor, as PyTorch's: the 625 32-bit words of Python's Mersenne
Twister (little-endian), then a flag byte and 8 bytes for the normal draw it keeps for
later. ``set_rng_state`` reads exactly that layout back, checked, so a state from a file
cannot be anything but a generator's state.
"""
import struct

from . import dtypes, factories
from .factories import seed as manual_seed
from .tensor import Tensor

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"]

_WORDS = 625
STATE_BYTES = _WORDS * 4 + 1 + 8


def seed():
    """Seed the generator from the system's randomness; the seed, which initial_seed() then gives."""
    return factories.seed()


def initial_seed():
    """The seed last set (manual_seed or seed); 0, the package's, before any."""
    return factories._seeds[0]


def get_rng_state():
    """The generator's state, a uint8 tensor of STATE_BYTES (the module docstring)."""
    version, words, gauss = factories.generator().getstate()
    data = struct.pack(f"<{_WORDS}I", *words) + struct.pack("<?d", gauss is not None, gauss or 0.0)
    return factories.tensor(list(data), dtype=dtypes.uint8, device="python")


def set_rng_state(new_state):
    """Restore a state get_rng_state gave: the random numbers drawn next repeat those drawn after it."""
    if not isinstance(new_state, Tensor) or new_state.dtype is not dtypes.uint8:
        raise TypeError("set_rng_state: expected a torch.ByteTensor (uint8) from get_rng_state, got "
                        f"{getattr(new_state, 'dtype', type(new_state).__name__)}")
    if new_state.shape != (STATE_BYTES,):
        raise RuntimeError(f"set_rng_state: expected a state of {STATE_BYTES} bytes, got shape {tuple(new_state.shape)}")
    data = bytes(new_state.tolist())
    words = struct.unpack(f"<{_WORDS}I", data[:_WORDS * 4])
    has_gauss, gauss = struct.unpack("<?d", data[_WORDS * 4:])
    if words[-1] > _WORDS:                  # the last word is the position in the others
        raise RuntimeError("set_rng_state: this is not a generator's state (its position is out of range)")
    factories.generator().setstate((3, words, gauss if has_gauss else None))
