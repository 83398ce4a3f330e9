"""Neural-network building blocks on scalar Values (thesis chapter 2, "Neural Networks",
in its scalar form from chapter 3).

A module maps one sample (a list of Values or numbers) to a list of Values; called on a
batch (a list of samples) it maps each sample. Parameters are found by walking the
module's attributes, so a new module only has to store its Values and sub-modules.
"""
import math
import random

from .value import Value, add


class Module:
    def forward(self, x):
        raise NotImplementedError

    def __call__(self, x):
        if x and isinstance(x[0], (list, tuple)):       # a batch: one sample at a time
            return [self.forward(sample) for sample in x]
        return self.forward(x)

    def parameters(self):
        """Every Value reachable through this module's attributes, each once, in order."""
        params, seen = [], set()
        stack = [vars(self)]
        while stack:
            item = stack.pop()
            if isinstance(item, Value):
                if id(item) not in seen:
                    seen.add(id(item))
                    params.append(item)
            elif isinstance(item, Module):
                stack.append(vars(item))
            elif isinstance(item, dict):
                stack.extend(reversed(list(item.values())))
            elif isinstance(item, (list, tuple)):
                stack.extend(reversed(item))
        return params

    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0.0


class Linear(Module):
    """y_j = sum_i W[j][i] * x_i + b_j, initialised U(-1/sqrt(n_in), 1/sqrt(n_in)) as in the
    thesis (and PyTorch). Each output is one n-ary sum node rather than a chain of adds."""

    def __init__(self, n_in, n_out, bias=True, seed=None):
        rng = random.Random(seed)
        k = 1.0 / math.sqrt(n_in)
        self.n_in, self.n_out = n_in, n_out
        self.weight = [[Value(rng.uniform(-k, k)) for _ in range(n_in)] for _ in range(n_out)]
        self.bias = [Value(rng.uniform(-k, k)) for _ in range(n_out)] if bias else None

    def forward(self, x):
        if len(x) != self.n_in:
            raise ValueError(f"Linear({self.n_in}, {self.n_out}) expects {self.n_in} inputs "
                             f"per sample, got {len(x)}")
        x = [xi if isinstance(xi, Value) else Value(xi) for xi in x]
        if self.bias is None:
            return [add(*[w * xi for w, xi in zip(row, x)]) for row in self.weight]
        return [add(*[w * xi for w, xi in zip(row, x)], b) for row, b in zip(self.weight, self.bias)]

    def __repr__(self):
        return f"Linear({self.n_in}, {self.n_out}, bias={self.bias is not None})"


class Activation(Module):
    """Applies one Value method to every element: ReLU, Tanh, Sigmoid."""
    method = None

    def forward(self, x):
        return [getattr(xi if isinstance(xi, Value) else Value(xi), self.method)() for xi in x]

    def __repr__(self):
        return f"{type(self).__name__}()"


class ReLU(Activation):
    method = "relu"


class Tanh(Activation):
    method = "tanh"


class Sigmoid(Activation):
    method = "sigmoid"


class Sequential(Module):
    def __init__(self, *layers):
        self.layers = list(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def __repr__(self):
        return "Sequential(" + ", ".join(map(repr, self.layers)) + ")"


def MLP(n_in, sizes, activation=ReLU, seed=None):
    """Linear layers of the given output sizes with `activation` between them (not after the
    last): MLP(2, [16, 16, 1]) is 2 -> 16 -> 16 -> 1."""
    rng = random.Random(seed)
    layers, fan_in = [], n_in
    for i, n_out in enumerate(sizes):
        layers.append(Linear(fan_in, n_out, seed=rng.random()))
        if i < len(sizes) - 1:
            layers.append(activation())
        fan_in = n_out
    return Sequential(*layers)


def mse_loss(predictions, targets):
    """Mean over the batch of the squared error summed over outputs. Accepts one sample
    (lists of Values/numbers) or a batch (lists of such lists)."""
    if predictions and not isinstance(predictions[0], (list, tuple)):
        predictions, targets = [predictions], [targets]
    if len(predictions) != len(targets):
        raise ValueError(f"mse_loss: {len(predictions)} predictions but {len(targets)} targets")
    terms = []
    for p, t in zip(predictions, targets):
        if len(p) != len(t):
            raise ValueError(f"mse_loss: a prediction has {len(p)} outputs but its target {len(t)}")
        terms.extend((pi - ti) ** 2 for pi, ti in zip(p, t))
    return add(*terms) / len(predictions)
