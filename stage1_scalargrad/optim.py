"""Optimizers over a list of Values (thesis chapter on optimizers; PyTorch's update rules).

Each `step()` reads ``p.grad`` and changes ``p.data`` in place; `zero_grad()` clears the
gradients for the next backward pass.
"""
import math


class Optimizer:
    def __init__(self, params, lr):
        self.params = list(params)
        if not self.params:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        if lr <= 0:
            raise ValueError(f"{type(self).__name__}: learning rate must be positive, got {lr}")
        self.lr = lr

    def zero_grad(self):
        for p in self.params:
            p.grad = 0.0

    def step(self):
        raise NotImplementedError


class SGD(Optimizer):
    """p -= lr * v with v = momentum * v + (1 - dampening) * g (v = g on the first step)."""

    def __init__(self, params, lr, momentum=0.0, dampening=0.0):
        super().__init__(params, lr)
        self.momentum, self.dampening = momentum, dampening
        self.velocity = None

    def step(self):
        if self.momentum == 0:
            for p in self.params:
                p.data -= self.lr * p.grad
            return
        if self.velocity is None:
            self.velocity = [p.grad for p in self.params]
        else:
            self.velocity = [self.momentum * v + (1 - self.dampening) * p.grad
                             for v, p in zip(self.velocity, self.params)]
        for p, v in zip(self.params, self.velocity):
            p.data -= self.lr * v


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015): running means of g and g^2, bias-corrected."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, lr)
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.t = 0
        self.m = [0.0] * len(self.params)
        self.v = [0.0] * len(self.params)

    def step(self):
        self.t += 1
        b1, b2 = self.beta1, self.beta2
        c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        for i, p in enumerate(self.params):
            g = p.grad
            self.m[i] = b1 * self.m[i] + (1 - b1) * g
            self.v[i] = b2 * self.v[i] + (1 - b2) * g * g
            p.data -= self.lr * (self.m[i] / c1) / (math.sqrt(self.v[i] / c2) + self.eps)
