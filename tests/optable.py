"""The op table: every differentiable op once, with its arity, the inputs it is defined
on, how to call it on an engine, and numpy's answer. The shared tests read nothing else."""
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np


@dataclass(frozen=True)
class Domain:
    """Inputs are drawn from [low, high], avoiding |x| < away (a kink or pole at 0)."""
    low: float = -3.0
    high: float = 3.0
    away: float = 0.0

    def sample(self, rng, shape=()):
        x = rng.uniform(self.low, self.high, size=shape)
        if self.away:
            x = np.where(np.abs(x) < self.away, np.copysign(self.away, x) * 2, x)
        return np.asarray(x, dtype=np.float64)


ANY = Domain()
POSITIVE = Domain(0.1, 4.0)
NONZERO = Domain(-3.0, 3.0, away=0.2)
KINK = Domain(-3.0, 3.0, away=1e-3)         # relu: differentiable everywhere but at 0


@dataclass(frozen=True)
class Op:
    name: str
    arity: int                       # -1: n-ary
    apply: Callable                  # (namespace, *engine objects) -> engine object
    reference: Callable              # (*float64 arrays) -> float64 array
    domains: tuple                   # one Domain per input (n-ary: the one for all)
    stages: Optional[tuple] = None   # only these stages have the op (None: every stage)

    def __repr__(self):
        return self.name


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


OPS = [
    Op("add", 2, lambda ns, a, b: a + b, np.add, (ANY, ANY)),
    Op("sub", 2, lambda ns, a, b: a - b, np.subtract, (ANY, ANY)),
    Op("mul", 2, lambda ns, a, b: a * b, np.multiply, (ANY, ANY)),
    Op("div", 2, lambda ns, a, b: a / b, np.divide, (ANY, NONZERO)),
    Op("pow", 2, lambda ns, a, b: a ** b, np.power, (POSITIVE, ANY)),
    Op("neg", 1, lambda ns, a: -a, np.negative, (ANY,)),
    Op("exp", 1, lambda ns, a: a.exp(), np.exp, (ANY,)),
    Op("log", 1, lambda ns, a: a.log(), np.log, (POSITIVE,)),
    Op("tanh", 1, lambda ns, a: a.tanh(), np.tanh, (ANY,)),
    Op("sigmoid", 1, lambda ns, a: a.sigmoid(), _sigmoid, (ANY,)),
    Op("relu", 1, lambda ns, a: a.relu(), lambda a: np.maximum(a, 0.0), (KINK,)),
    Op("add_n", -1, lambda ns, *xs: ns.add(*xs), lambda *xs: np.sum(xs, axis=0), (ANY,),
       stages=("stage1",)),
    Op("mul_n", -1, lambda ns, *xs: ns.mul(*xs), lambda *xs: np.prod(xs, axis=0), (ANY,),
       stages=("stage1",)),
]


def ops_for(engine):
    return [op for op in OPS if op.stages is None or engine.stage in op.stages]
