"""The thesis's `Operation` interface (chapter 3, "Scalar-level Autograd").

Each operation is a small class with two static methods:

* ``forward(*xs)`` computes the output from plain float inputs, and
* ``backward(out, *xs)`` returns the *local* gradients d out / d x_i, one per input.

The engine (``backward.py``) multiplies each local gradient by the upstream gradient
d L / d out: global gradient = upstream gradient * local gradient. Operations never touch
``Value`` objects, so every one can be read (and tested) as two formulas.

Bad input raises here, in ``forward``, with the op and its operands in the message.
"""
import math


class Operation:
    name = "op"      # label in graphs and error messages
    symbol = "?"     # what the graph drawing shows in the op node

    @staticmethod
    def forward(*xs):
        raise NotImplementedError

    @staticmethod
    def backward(out, *xs):
        raise NotImplementedError


class Add(Operation):
    name, symbol = "add", "+"

    @staticmethod
    def forward(a, b):
        return a + b

    @staticmethod
    def backward(out, a, b):
        return 1.0, 1.0            # "gradient router": upstream flows unchanged to both


class Sub(Operation):
    name, symbol = "sub", "-"

    @staticmethod
    def forward(a, b):
        return a - b

    @staticmethod
    def backward(out, a, b):
        return 1.0, -1.0


class Mul(Operation):
    name, symbol = "mul", "*"

    @staticmethod
    def forward(a, b):
        return a * b

    @staticmethod
    def backward(out, a, b):
        return b, a                # each input's local gradient is the other input


class Div(Operation):
    name, symbol = "div", "/"

    @staticmethod
    def forward(a, b):
        if b == 0:
            raise ZeroDivisionError(f"div: division by zero in {a!r} / {b!r}")
        return a / b

    @staticmethod
    def backward(out, a, b):
        return 1.0 / b, -a / (b * b)


class Pow(Operation):
    name, symbol = "pow", "**"

    @staticmethod
    def forward(a, b):
        if a < 0 and not float(b).is_integer():
            raise ValueError(f"pow: negative base {a!r} to the non-integer power {b!r} "
                             "has no real value")
        if a == 0 and b < 0:
            raise ZeroDivisionError(f"pow: zero base {a!r} to the negative power {b!r}")
        return a ** b

    @staticmethod
    def backward(out, a, b):
        # d/da a^b = b a^(b-1);  d/db a^b = a^b ln a.
        # ln a needs a > 0. At a == 0 (b >= 0) the limit of a^b ln a is 0; for a < 0
        # (integer b) the derivative in b does not exist over the reals: nan, as in PyTorch.
        if a > 0:
            d_exponent = out * math.log(a)
        elif a == 0:
            d_exponent = 0.0
        else:
            d_exponent = math.nan
        d_base = b * a ** (b - 1) if b != 0 else 0.0
        return d_base, d_exponent


class Neg(Operation):
    name, symbol = "neg", "-"

    @staticmethod
    def forward(a):
        return -a

    @staticmethod
    def backward(out, a):
        return (-1.0,)


class Exp(Operation):
    name, symbol = "exp", "exp"

    @staticmethod
    def forward(a):
        try:
            return math.exp(a)
        except OverflowError:
            raise OverflowError(f"exp: exp({a!r}) overflows a float (inputs above ~709.78 do)") from None

    @staticmethod
    def backward(out, a):
        return (out,)              # e^a is its own derivative: reuse the output


class Log(Operation):
    name, symbol = "log", "log"

    @staticmethod
    def forward(a):
        if a <= 0:
            raise ValueError(f"log: the natural logarithm needs a positive input, got {a!r}")
        return math.log(a)

    @staticmethod
    def backward(out, a):
        return (1.0 / a,)


class Tanh(Operation):
    name, symbol = "tanh", "tanh"

    @staticmethod
    def forward(a):
        return math.tanh(a)

    @staticmethod
    def backward(out, a):
        return (1.0 - out * out,)


class Sigmoid(Operation):
    name, symbol = "sigmoid", "σ"

    @staticmethod
    def forward(a):
        # Two branches so that exp never overflows for large |a|.
        if a >= 0:
            return 1.0 / (1.0 + math.exp(-a))
        e = math.exp(a)
        return e / (1.0 + e)

    @staticmethod
    def backward(out, a):
        return (out * (1.0 - out),)


class ReLU(Operation):
    name, symbol = "relu", "relu"

    @staticmethod
    def forward(a):
        return a if a > 0 else 0.0

    @staticmethod
    def backward(out, a):
        return (1.0 if a > 0 else 0.0,)


class Sum(Operation):
    """n-ary addition: one node for a whole sum (a neuron's dot product) instead of a chain."""
    name, symbol = "add", "Σ"

    @staticmethod
    def forward(*xs):
        return sum(xs)

    @staticmethod
    def backward(out, *xs):
        return (1.0,) * len(xs)


class Product(Operation):
    """n-ary multiplication. Local gradient i is the product of all other inputs, built from
    prefix and suffix products rather than out / x_i, so it stays right when an input is 0."""
    name, symbol = "mul", "Π"

    @staticmethod
    def forward(*xs):
        return math.prod(xs)

    @staticmethod
    def backward(out, *xs):
        n = len(xs)
        local = [1.0] * n
        prefix = 1.0               # product of xs[:i]
        for i in range(n):
            local[i] = prefix
            prefix *= xs[i]
        suffix = 1.0               # product of xs[i+1:]
        for i in reversed(range(n)):
            local[i] *= suffix
            suffix *= xs[i]
        return local
