"""``kl_divergence(p, q)``: KL(p || q) in closed form, looked up by the pair of types in a
registry that ``register_kl`` fills (the most specific registered pair wins)."""
import math

from ..broadcast import broadcast_shapes
from ..elementwise import where
from ..nn.functional import softplus
from .bernoulli import Bernoulli
from .categorical import Categorical
from .independent import Independent, sum_rightmost
from .multivariate_normal import MultivariateNormal, _diagonal
from ..linalg import solve_triangular
from .normal import Normal
from .uniform import Uniform
from .utils import either

_KL_REGISTRY = {}


def register_kl(type_p, type_q):
    """Decorator: fn(p, q) computes KL(p || q) for p of type_p and q of type_q."""
    from .distribution import Distribution
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn

    return decorator


def _dispatch(type_p, type_q):
    """The registered pair nearest to (type_p, type_q) along both method resolution orders."""
    best, best_rank = None, None
    for (super_p, super_q), fn in _KL_REGISTRY.items():
        if issubclass(type_p, super_p) and issubclass(type_q, super_q):
            rank = (type_p.__mro__.index(super_p), type_q.__mro__.index(super_q))
            if best_rank is None or rank < best_rank:
                best, best_rank = fn, rank
    return best


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], of shape batch_shape."""
    fn = _dispatch(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                                  f"{type(q).__name__}")
    return fn(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = where(q.probs == 0, t * 0 + math.inf, t)
    t = where(p.probs == 0, t * 0, t)
    return t.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = where(p.probs == 0, t1 * 0, where(q.probs == 0, t1 * 0 + math.inf, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = where(p.probs == 1, t2 * 0, where(q.probs == 1, t2 * 0 + math.inf, t2))
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return where(either(q.low > p.low, q.high < p.high), result * 0 + math.inf, result)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    p_tril, q_tril = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = _diagonal(q_tril).log().sum(-1) - _diagonal(p_tril).log().sum(-1)
    n = p.event_shape[0]
    batch = tuple(broadcast_shapes(tuple(q_tril.shape[:-2]), tuple(p_tril.shape[:-2])))
    solved = solve_triangular(q_tril.expand(*batch, n, n), p_tril.expand(*batch, n, n), upper=False)
    term2 = (solved ** 2).sum((-2, -1))
    diff = q.loc - p.loc
    term3 = (solve_triangular(q_tril, diff.unsqueeze(-1), upper=False).squeeze(-1) ** 2).sum(-1)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)
