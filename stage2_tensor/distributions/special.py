"""The special functions the distributions' densities need, lgamma and digamma, as composites
of tensor ops for x > 0 (the only arguments a density gives them), so that autograd
differentiates them: they stand in for torch.lgamma and torch.digamma here.

Both shift x up by 6 with the recurrences lgamma(x) = lgamma(x + 6) - sum log(x + k) and
digamma(x) = digamma(x + 6) - sum 1 / (x + k), k = 0..5, and evaluate the asymptotic
(Stirling) series at z = x + 6 >= 6, where its first omitted term is below 1e-11: float64
results to about 1e-11 absolute, float32 to its rounding."""
import math

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_SHIFT = 6


def lgamma(x):
    """log |Gamma(x)| for x > 0."""
    shifted = x + _SHIFT
    logs = x.log()
    for k in range(1, _SHIFT):
        logs = logs + (x + k).log()
    r = 1.0 / shifted
    r2 = r * r
    series = r * (1 / 12 + r2 * (-1 / 360 + r2 * (1 / 1260 + r2 * (-1 / 1680 + r2 * (1 / 1188 - r2 * 691 / 360360)))))
    return (shifted - 0.5) * shifted.log() - shifted + _HALF_LOG_2PI + series - logs


def digamma(x):
    """d/dx lgamma(x) for x > 0."""
    shifted = x + _SHIFT
    sums = 1.0 / x
    for k in range(1, _SHIFT):
        sums = sums + 1.0 / (x + k)
    r = 1.0 / shifted
    r2 = r * r
    series = r2 * (1 / 12 - r2 * (1 / 120 - r2 * (1 / 252 - r2 * (1 / 240 - r2 / 132))))
    return shifted.log() - 0.5 * r - series - sums


def lbeta(a, b):
    """log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b)."""
    return lgamma(a) + lgamma(b) - lgamma(a + b)


def xlogy(x, y):
    """x * log(y), 0 where x is 0 (also where y is 0), as torch.xlogy."""
    from ..elementwise import where
    zero = x == 0
    return where(zero, x * 0, x * where(zero, y * 0 + 1, y).log())


def erfinv(y):
    """The inverse of erf on [-1, 1] (+-inf at +-1): Giles' polynomial approximation
    ("Approximating the erfinv function", 2010), then two Newton steps on erf, which bring
    it to float64's precision."""
    from ..elementwise import where
    w = -((1 - y) * (1 + y)).log()
    central = w - 2.5
    p = central * 0 + 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p = c + p * central
    tail = where(w < 5, w * 0 + 5, w).sqrt() - 3
    q = tail * 0 - 0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        q = c + q * tail
    inside = y.abs() < 1
    safe = where(inside, where(w < 5, p, q) * y, y * 0)
    for _ in range(2):
        safe = safe - (safe.erf() - where(inside, y, y * 0)) / (2 / math.sqrt(math.pi) * (-safe * safe).exp())
    return where(inside, safe, where(y.abs() == 1, y * math.inf, y * math.nan))
