"""``Generator``: a source of random numbers of its own, PyTorch's ``torch.Generator``.

The random factories (rand, randn, uniform, normal, dropout's seeds, nn.init) draw from
the package's one generator, which ``manual_seed(n)`` seeds. A Generator is for the draws
that should not disturb that stream, or should repeat on their own: a DataLoader's
shuffling order, ``randperm(n, generator=g)``. PyTorch's idiom works as written:

    g = stage2_tensor.Generator().manual_seed(0)
"""
import random

# PyTorch's default seed for a new generator (its c10::default_rng_seed_val).
DEFAULT_SEED = 67280421310721


class Generator:
    """Its own Mersenne Twister (Python's random.Random), seeded with ``DEFAULT_SEED``
    until ``manual_seed`` says otherwise. ``device`` is accepted for PyTorch's signature;
    the numbers are this generator's on every device (a native one draws them in C from
    its state: factories.py, "Random tensors")."""

    def __init__(self, device="cpu"):
        self.device = device
        self._rng = random.Random(DEFAULT_SEED)
        self._seed = DEFAULT_SEED

    def manual_seed(self, seed):
        """Seed it and return it, so ``Generator().manual_seed(0)`` is one expression."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"Generator.manual_seed: seed must be an int, got "
                            f"{type(seed).__name__}")
        self._rng.seed(seed)
        self._seed = seed
        return self

    def initial_seed(self):
        """The seed it was last seeded with."""
        return self._seed

    def __repr__(self):
        return f"Generator(initial_seed={self._seed})"
