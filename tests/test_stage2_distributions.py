"""torch.distributions (stage2_tensor/distributions/): densities, entropies and moments
against their formulas in math/numpy, sample moments within 6 standard errors of a fixed
seed's draws, gradients of log_prob and of rsample's draws against central differences in
float64, PyTorch's validation errors, and kl_divergence against closed forms and sums."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.distributions as D
from stage2_tensor import digamma, erfinv, lgamma

from .engines import device_params

DEVICES = device_params("python", "cpu")
F64 = tg.float64


def t(values, device="python"):
    return tg.tensor(np.asarray(values, dtype=np.float64), dtype=F64, device=device)


def close(a, b, tol=1e-9):
    np.testing.assert_allclose(np.asarray(a.numpy() if hasattr(a, "numpy") else a, dtype=np.float64),
                               np.asarray(b, dtype=np.float64), rtol=tol, atol=tol)


def central(f, x, h=1e-6):
    """d f / d x for each entry of the numpy array x, f: array -> float."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        g[i] = (f(up) - f(down)) / (2 * h)
    return g


def grad_of(f, x, device="python"):
    """Autograd's gradient of f(leaf).sum() at x."""
    leaf = t(x, device).requires_grad_(True)
    f(leaf).sum().backward()
    return leaf.grad.numpy()


# -- the special functions the densities are built of ----------------------------------------

def test_lgamma_digamma_erfinv_against_math():
    x = np.array([1e-3, 0.2, 0.5, 1.0, 2.5, 7.0, 30.0, 1e4])
    close(lgamma(t(x)), [math.lgamma(v) for v in x], 1e-10)
    numeric = [(math.lgamma(v * (1 + 1e-7)) - math.lgamma(v * (1 - 1e-7))) / (2e-7 * v) for v in x]
    close(digamma(t(x)), numeric, 1e-6)
    close(digamma(t([1.0])), [-0.5772156649015329], 1e-11)
    y = np.array([-0.999999, -0.5, 0.0, 0.3, 0.9, 0.99999999])
    close(erfinv(t(y)).erf(), y, 1e-13)
    assert erfinv(t([1.0, -1.0, 2.0])).numpy().tolist()[:2] == [math.inf, -math.inf]
    assert math.isnan(erfinv(t([2.0])).item())
    close(grad_of(lgamma, np.array([0.7, 3.0])), digamma(t([0.7, 3.0])).numpy(), 1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_cholesky_ex_finds_each_matrix_that_is_not_positive_definite(device):
    # MultivariateNormal's positive_definite constraint reads linalg.cholesky_ex's info
    rng = np.random.default_rng(0)
    m = rng.normal(size=(3, 4, 4))
    a = m @ m.transpose(0, 2, 1) + 4 * np.eye(4)
    a[1, 2, 2] = -50.0                                  # the leading minor of order 3 fails
    a[2, 0, 0] = 0.0                                    # of order 1
    factor, info = tg.linalg.cholesky_ex(t(a, device))
    assert info.dtype is tg.int32 and info.tolist() == [0, 3, 1]
    close(factor[0], np.linalg.cholesky(a[0]), 1e-12)
    assert D.constraints.positive_definite.check(t(a, device)).tolist() == [True, False, False]
    with pytest.raises(RuntimeError, match=r"Batch element 1\): .*leading minor of order 3 is not positive-definite"):
        tg.linalg.cholesky_ex(t(a, device), check_errors=True)


# -- densities, entropies and moments against their formulas ---------------------------------

def _normal_pdf(x, mu, s):
    return -((x - mu) ** 2) / (2 * s * s) - np.log(s) - 0.5 * math.log(2 * math.pi)


@pytest.mark.parametrize("device", DEVICES)
def test_continuous_formulas(device):
    x = np.array([0.3, 1.7])
    mu, s = np.array([0.5, -1.0]), np.array([2.0, 0.5])
    n = D.Normal(t(mu, device), t(s, device))
    close(n.log_prob(t(x, device)), _normal_pdf(x, mu, s))
    close(n.entropy(), 0.5 + 0.5 * math.log(2 * math.pi) + np.log(s))
    close(n.cdf(t(x, device)), [0.5 * (1 + math.erf((a - m) / (c * math.sqrt(2)))) for a, m, c in zip(x, mu, s)])
    close(n.icdf(n.cdf(t(x, device))), x, 1e-10)
    close(n.variance, s ** 2)
    u = D.Uniform(t([0.0, -1.0], device), t([2.0, 3.0], device))
    close(u.log_prob(t([1.0, 0.5], device)), [-math.log(2), -math.log(4)])
    unchecked = D.Uniform(t([0.0, -1.0], device), t([2.0, 3.0], device), validate_args=False)
    assert unchecked.log_prob(t([2.5, 0.5], device)).numpy()[0] == -math.inf
    close(u.mean, [1.0, 1.0])
    close(u.variance, [4 / 12, 16 / 12])
    e = D.Exponential(t([0.5, 2.0], device))
    close(e.log_prob(t(x, device)), np.log([0.5, 2.0]) - np.array([0.5, 2.0]) * x)
    close(e.entropy(), 1 - np.log([0.5, 2.0]))
    close(e.icdf(e.cdf(t(x, device))), x, 1e-12)
    la = D.Laplace(t(mu, device), t(s, device))
    close(la.log_prob(t(x, device)), -np.log(2 * s) - np.abs(x - mu) / s)
    close(la.icdf(la.cdf(t(x, device))), x, 1e-12)
    close(la.entropy(), 1 + np.log(2 * s))
    g = D.Gumbel(t(mu, device), t(s, device))
    z = (x - mu) / s
    close(g.log_prob(t(x, device)), -z - np.exp(-z) - np.log(s))
    close(g.cdf(t(x, device)), np.exp(-np.exp(-z)))
    close(g.mean, mu + s * 0.5772156649015329)
    ln = D.LogNormal(t(mu, device), t(s, device))
    close(ln.log_prob(t(x, device)), _normal_pdf(np.log(x), mu, s) - np.log(x))
    close(ln.mean, np.exp(mu + s * s / 2))
    close(ln.variance, np.expm1(s * s) * np.exp(2 * mu + s * s))


@pytest.mark.parametrize("device", DEVICES)
def test_gamma_family_formulas(device):
    a, b, x = np.array([0.5, 3.0]), np.array([2.0, 0.7]), np.array([0.4, 2.5])
    g = D.Gamma(t(a, device), t(b, device))
    expected = [ai * math.log(bi) + (ai - 1) * math.log(xi) - bi * xi - math.lgamma(ai) for ai, bi, xi in zip(a, b, x)]
    close(g.log_prob(t(x, device)), expected, 1e-9)
    close(g.mean, a / b)
    close(g.variance, a / b ** 2)
    be = D.Beta(t(a, device), t(b, device))
    y = np.array([0.2, 0.9])
    lbeta = [math.lgamma(p) + math.lgamma(q) - math.lgamma(p + q) for p, q in zip(a, b)]
    close(be.log_prob(t(y, device)), (a - 1) * np.log(y) + (b - 1) * np.log1p(-y) - lbeta, 1e-9)
    close(be.mean, a / (a + b))
    c = np.array([1.0, 2.0, 3.0])
    di = D.Dirichlet(t(c, device))
    p = np.array([0.2, 0.3, 0.5])
    close(di.log_prob(t(p, device)), ((c - 1) * np.log(p)).sum() + math.lgamma(6.0) - sum(map(math.lgamma, c)), 1e-9)
    close(di.mean, c / 6)
    close(di.variance, c * (6 - c) / (36 * 7))
    # entropies against -integral p log p by the trapezoid rule in numpy
    xs = np.linspace(1e-9, 40, 200001)
    lp = 2.5 * math.log(1.5) + 1.5 * np.log(xs) - 1.5 * xs - math.lgamma(2.5)
    close(D.Gamma(t([2.5], device), t([1.5], device)).entropy(), [-np.trapezoid(np.exp(lp) * lp, xs)], 1e-6)
    xs = np.linspace(1e-9, 1 - 1e-9, 200001)
    lp = np.log(xs) + 2 * np.log1p(-xs) - (math.lgamma(2.0) + math.lgamma(3.0) - math.lgamma(5.0))
    close(D.Beta(t([2.0], device), t([3.0], device)).entropy(), [-np.trapezoid(np.exp(lp) * lp, xs)], 1e-6)
    # Dirichlet(1, 1, 1) is uniform on the simplex, whose area is 1/2: entropy log(1/2)
    close(D.Dirichlet(t([1.0, 1.0, 1.0], device)).entropy(), math.log(0.5), 1e-9)


@pytest.mark.parametrize("device", DEVICES)
def test_discrete_formulas(device):
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    c = D.Categorical(t(probs * 3, device))           # weights, normalized
    close(c.probs, probs)
    close(c.log_prob(tg.tensor([2, 0], device=device)), np.log([0.7, 0.5]))
    close(c.log_prob(tg.tensor([[2], [1]], device=device)), np.log([[0.7, 0.25], [0.2, 0.25]]))
    close(c.entropy(), -(probs * np.log(probs)).sum(-1))
    close(D.Categorical(logits=t(np.log(probs), device)).probs, probs)
    assert c.mode.tolist() == [2, 0]
    oh = D.OneHotCategorical(t(probs, device))
    close(oh.log_prob(t([[0, 0, 1], [0, 1, 0]], device)), np.log([0.7, 0.25]))
    close(oh.variance, probs * (1 - probs))
    be = D.Bernoulli(logits=t([0.0, 2.0], device))
    p = 1 / (1 + np.exp(-np.array([0.0, 2.0])))
    close(be.probs, p)
    close(be.log_prob(t([1.0, 0.0], device)), np.log([p[0], 1 - p[1]]))
    close(be.entropy(), -(p * np.log(p) + (1 - p) * np.log(1 - p)))
    bi = D.Binomial(t([5.0, 10.0], device), t([0.3, 0.6], device))
    k = np.array([2.0, 7.0])
    expected = [math.log(math.comb(int(n), int(j))) + j * math.log(q) + (n - j) * math.log(1 - q)
                for n, j, q in zip([5, 10], k, [0.3, 0.6])]
    close(bi.log_prob(t(k, device)), expected, 1e-9)
    close(bi.variance, [5 * 0.3 * 0.7, 10 * 0.6 * 0.4])
    homogeneous = D.Binomial(6, t([0.3, 0.5], device))
    pmf = np.array([[math.comb(6, j) * q ** j * (1 - q) ** (6 - j) for j in range(7)] for q in (0.3, 0.5)])
    close(homogeneous.entropy(), -(pmf * np.log(pmf)).sum(-1), 1e-9)
    po = D.Poisson(t([0.5, 4.0], device))
    close(po.log_prob(t([0.0, 3.0], device)), [-0.5, 3 * math.log(4) - 4 - math.log(6)], 1e-10)
    close(D.Poisson(t([0.0], device)).log_prob(t([0.0], device)), [0.0])


@pytest.mark.parametrize("device", DEVICES)
def test_multivariate_normal_formulas(device):
    rng = np.random.default_rng(1)
    m = rng.normal(size=(3, 3))
    cov = m @ m.T + np.eye(3)
    mu, x = rng.normal(size=3), rng.normal(size=(2, 3))
    diff = x - mu
    expected = -0.5 * (3 * math.log(2 * math.pi) + np.einsum("ni,ij,nj->n", diff, np.linalg.inv(cov), diff)
                       + math.log(np.linalg.det(cov)))
    for kw in ({"covariance_matrix": t(cov, device)}, {"precision_matrix": t(np.linalg.inv(cov), device)},
               {"scale_tril": t(np.linalg.cholesky(cov), device)}):
        mvn = D.MultivariateNormal(t(mu, device), **kw)
        close(mvn.log_prob(t(x, device)), expected, 1e-9)
        close(mvn.covariance_matrix, cov, 1e-9)
        close(mvn.entropy(), 0.5 * (3 * (1 + math.log(2 * math.pi)) + math.log(np.linalg.det(cov))), 1e-9)
        close(mvn.variance, np.diag(cov), 1e-9)
    batched = D.MultivariateNormal(t(np.zeros((2, 3)), device), covariance_matrix=t(cov, device))
    assert batched.batch_shape == (2,) and batched.event_shape == (3,)
    assert batched.log_prob(t(x, device)).shape == (2,)


# -- sampling: moments within 6 standard errors, shapes, repeatability ------------------------

def _moments(samples, mean, var, n):
    """Sample mean within 6 standard errors of mean, and sample variance within 6 of its own
    (sd of a variance estimate about var * sqrt(2 / n) for tails no heavier than a Gamma's; 8
    allows for kurtosis)."""
    s = samples.numpy().reshape(n, -1)
    mean, var = np.broadcast_to(mean, s.shape[1:]), np.broadcast_to(var, s.shape[1:])
    assert np.all(np.abs(s.mean(0) - mean) <= 6 * np.sqrt(var / n)), (s.mean(0), mean)
    assert np.all(np.abs(s.var(0) - var) <= 8 * var * np.sqrt(2 / n) + 1e-12), (s.var(0), var)


SAMPLED = [
    ("Normal", lambda d: D.Normal(t([0.5, -1.0], d), t([2.0, 0.5], d))),
    ("Uniform", lambda d: D.Uniform(t([0.0, -1.0], d), t([2.0, 3.0], d))),
    ("Exponential", lambda d: D.Exponential(t([0.5, 2.0], d))),
    ("Laplace", lambda d: D.Laplace(t([0.5], d), t([1.5], d))),
    ("Gumbel", lambda d: D.Gumbel(t([0.5], d), t([1.5], d))),
    ("LogNormal", lambda d: D.LogNormal(t([0.0], d), t([0.25], d))),
    ("Bernoulli", lambda d: D.Bernoulli(t([0.2, 0.5], d))),
    ("Binomial", lambda d: D.Binomial(t([4.0, 9.0], d), t([0.3, 0.6], d))),
    ("Poisson", lambda d: D.Poisson(t([0.0, 0.7, 6.0, 25.0], d))),
    ("Gamma", lambda d: D.Gamma(t([0.3, 1.0, 4.0], d), t([1.0, 2.0, 0.5], d))),
    ("Beta", lambda d: D.Beta(t([0.5, 2.0], d), t([0.5, 5.0], d))),
    ("Categorical", lambda d: D.Categorical(t([0.1, 0.2, 0.7], d))),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,make", SAMPLED, ids=[s[0] for s in SAMPLED])
def test_sample_moments(device, name, make):
    n = 2000 if device != "python" else 400          # python's loops are slower; the bounds follow n
    tg.manual_seed(3)
    dist = make(device)
    samples = dist.sample((n,))
    assert samples.shape == (n,) + tuple(dist.batch_shape)
    assert samples.device == dist.sample().device
    if name == "Categorical":        # its mean and variance are NaN: those of the index's distribution
        p = np.array([0.1, 0.2, 0.7])
        k = np.arange(3)
        _moments(samples.to(dtype=F64), (p * k).sum(), (p * k * k).sum() - (p * k).sum() ** 2, n)
        return
    _moments(samples, dist.mean.numpy(), dist.variance.numpy(), n)
    assert dist.support.check(samples).all().item()


@pytest.mark.parametrize("device", DEVICES)
def test_vector_samples(device):
    tg.manual_seed(4)
    n = 2000 if device != "python" else 500
    c = np.array([0.5, 2.0, 3.0])
    dirichlet = D.Dirichlet(t(c, device))
    samples = dirichlet.sample((n,))
    close(samples.sum(-1), np.ones(n), 1e-12)
    _moments(samples, dirichlet.mean.numpy(), dirichlet.variance.numpy(), n)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    mvn = D.MultivariateNormal(t([1.0, -1.0], device), covariance_matrix=t(cov, device))
    x = mvn.rsample((n,)).numpy()
    assert np.all(np.abs(x.mean(0) - [1.0, -1.0]) <= 6 * np.sqrt(np.diag(cov) / n))
    assert np.all(np.abs(np.cov(x.T) - cov) <= 6 * np.sqrt((cov ** 2 + np.outer(np.diag(cov), np.diag(cov))) / n))
    oh = D.OneHotCategorical(t([[0.3, 0.7], [0.9, 0.1]], device)).sample((n,))
    assert oh.shape == (n, 2, 2) and np.all(oh.numpy().sum(-1) == 1)
    _moments(oh[..., 1], np.array([0.7, 0.1]), np.array([0.21, 0.09]), n)


@pytest.mark.parametrize("device", DEVICES)
def test_manual_seed_repeats_draws(device):
    dists = [D.Normal(t([0.0], device), t([1.0], device)), D.Gamma(t([0.5, 3.0], device), t([1.0], device)),
             D.Categorical(t([0.5, 0.5], device)), D.Poisson(t([2.0, 30.0], device))]
    first = []
    for seed_round in range(2):
        tg.manual_seed(11)
        draws = [d.sample((5,)).numpy() for d in dists]
        if seed_round:
            for a, b in zip(first, draws):
                np.testing.assert_array_equal(a, b)
        first = draws
    assert not np.array_equal(dists[0].sample((5,)).numpy(), first[0])


def test_shapes_and_expand():
    n = D.Normal(t([[0.0], [1.0]]), t([1.0, 2.0, 3.0]))
    assert n.batch_shape == (2, 3) and n.event_shape == ()
    assert n.sample((4, 5)).shape == (4, 5, 2, 3)
    wide = n.expand((7, 2, 3))
    assert wide.batch_shape == (7, 2, 3) and wide.sample().shape == (7, 2, 3)
    close(wide.log_prob(t(0.0)), np.broadcast_to(n.log_prob(t(0.0)).numpy(), (7, 2, 3)))
    ind = D.Independent(D.Normal(t(np.zeros((2, 3))), 1.0), 1)
    assert ind.batch_shape == (2,) and ind.event_shape == (3,)
    close(ind.log_prob(t(np.zeros((2, 3)))), [3 * -0.5 * math.log(2 * math.pi)] * 2)
    assert ind.expand((4, 2)).sample().shape == (4, 2, 3)
    c = D.Categorical(logits=t(np.zeros((2, 4))))
    assert c.expand((3, 2)).sample((5,)).shape == (5, 3, 2)
    assert c.enumerate_support().shape == (4, 2)
    assert D.Bernoulli(0.3).sample().shape == ()
    assert D.Normal(0.0, 1.0).sample().dtype == tg.float32      # numbers give float32 as PyTorch
    assert D.LogNormal(t([0.0]), t([1.0])).expand((3,)).sample().shape == (3,)
    assert not D.Gamma(1.0, 1.0).has_rsample and D.Normal(0.0, 1.0).has_rsample


# -- gradients: log_prob, and draws through rsample, against central differences --------------

def _draw_at(make, params, shape=(3,)):
    """rsample's draws for params (numpy arrays), the generator reseeded: a function of params."""
    tg.manual_seed(5)
    return make(*params).rsample(shape)


RSAMPLED = [
    ("Normal", lambda loc, scale: D.Normal(loc, scale), [[0.3, -1.0], [1.5, 0.4]]),
    ("Uniform", lambda lo, hi: D.Uniform(lo, hi), [[0.0, -1.0], [1.0, 2.0]]),
    ("Exponential", lambda rate: D.Exponential(rate), [[0.5, 2.0]]),
    ("Laplace", lambda loc, scale: D.Laplace(loc, scale), [[0.3, -1.0], [1.5, 0.4]]),
    ("Gumbel", lambda loc, scale: D.Gumbel(loc, scale), [[0.3, -1.0], [1.5, 0.4]]),
    ("LogNormal", lambda loc, scale: D.LogNormal(loc, scale), [[0.3, -1.0], [0.5, 0.4]]),
    ("MultivariateNormal", lambda loc, tril: D.MultivariateNormal(loc, scale_tril=tril, validate_args=False),
     [[0.3, -1.0], [[1.5, 0.0], [0.4, 0.8]]]),
    ("MVN-covariance", lambda loc, cov: D.MultivariateNormal(loc, covariance_matrix=cov),
     [[0.3, -1.0], [[1.5, 0.4], [0.4, 0.8]]]),
]


def _paired(g):
    """A matrix parameter's gradient as g + g^T: linalg.cholesky reads the lower triangle of a
    covariance (central differences give the upper one nothing) and returns the symmetric
    gradient, as PyTorch's; both agree on each symmetric pair's sum."""
    g = np.asarray(g)
    return g + g.swapaxes(-1, -2) if g.ndim >= 2 else g


@pytest.mark.parametrize("name,make,params", RSAMPLED, ids=[r[0] for r in RSAMPLED])
def test_rsample_gradients(name, make, params):
    params = [np.array(p, dtype=np.float64) for p in params]
    leaves = [t(p).requires_grad_(True) for p in params]
    _draw_at(make, leaves).sum().backward()
    for i, p in enumerate(params):
        def f(v, i=i):
            args = [t(v) if j == i else t(q) for j, q in enumerate(params)]
            return _draw_at(make, args).sum().item()
        close(_paired(leaves[i].grad.numpy()), _paired(central(f, p)), 1e-6)


LOG_PROBS = [
    ("Normal", lambda loc, scale: D.Normal(loc, scale), [[0.3, -1.0], [1.5, 0.4]], [0.7, -0.2]),
    ("Gamma", lambda a, b: D.Gamma(a, b), [[0.5, 3.0], [2.0, 0.7]], [0.4, 2.5]),
    ("Beta", lambda a, b: D.Beta(a, b), [[0.5, 3.0], [2.0, 0.7]], [0.4, 0.8]),
    ("Dirichlet", lambda c: D.Dirichlet(c), [[0.5, 2.0, 3.0]], [0.2, 0.3, 0.5]),
    ("Categorical", lambda logits: D.Categorical(logits=logits), [[0.1, -0.4, 2.0]], [2.0]),
    ("Bernoulli", lambda logits: D.Bernoulli(logits=logits), [[0.1, -0.4]], [1.0, 0.0]),
    ("Binomial", lambda probs: D.Binomial(5, probs), [[0.3, 0.6]], [2.0, 5.0]),
    ("Poisson", lambda rate: D.Poisson(rate), [[0.3, 6.0]], [2.0, 5.0]),
    ("MVN", lambda loc, cov: D.MultivariateNormal(loc, covariance_matrix=cov),
     [[0.3, -1.0], [[1.5, 0.4], [0.4, 0.8]]], [0.2, 0.1]),
]


@pytest.mark.parametrize("name,make,params,value", LOG_PROBS, ids=[r[0] for r in LOG_PROBS])
def test_log_prob_and_entropy_gradients(name, make, params, value):
    params = [np.array(p, dtype=np.float64) for p in params]
    for score in (lambda d: d.log_prob(t(value)), lambda d: d.entropy()):
        try:
            score(make(*[t(p) for p in params]))
        except NotImplementedError:
            continue
        leaves = [t(p).requires_grad_(True) for p in params]
        score(make(*leaves)).sum().backward()
        for i, p in enumerate(params):
            def f(v, i=i):
                return score(make(*[t(v) if j == i else t(q) for j, q in enumerate(params)])).sum().item()
            grad = np.zeros_like(p) if leaves[i].grad is None else leaves[i].grad.numpy()  # (entropy without loc)
            close(_paired(grad), _paired(central(f, p)), 1e-6)


# -- validation: PyTorch's errors --------------------------------------------------------------

def test_validation_errors():
    with pytest.raises(ValueError, match=r"Expected parameter scale \(Tensor of shape \(2,\)\) of distribution "
                                         r"Normal\(loc: torch.Size\(\[2\]\), scale: torch.Size\(\[2\]\)\) to satisfy "
                                         r"the constraint GreaterThan\(lower_bound=0.0\), but found invalid values"):
        D.Normal(t([0.0, 1.0]), t([1.0, -1.0]))
    D.Normal(t([0.0]), t([-1.0]), validate_args=False)          # not checked when told not to
    with pytest.raises(ValueError, match=r"Expected parameter probs .* constraint Interval\(lower_bound=0.0, "
                                         r"upper_bound=1.0\)"):
        D.Bernoulli(t([1.5]))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        D.Categorical()
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        D.Bernoulli(t([0.5]), t([0.0]))
    with pytest.raises(ValueError, match="Expected parameter probs .* Simplex"):
        D.Categorical(t([-0.5, 1.5]))
    with pytest.raises(ValueError, match="Uniform is not defined when low>= high"):
        D.Uniform(t([1.0]), t([0.0]))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.MultivariateNormal(t([0.0, 0.0]))
    with pytest.raises(ValueError, match="PositiveDefinite"):
        D.MultivariateNormal(t([0.0, 0.0]), covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="loc must be at least one-dimensional."):
        D.MultivariateNormal(t(0.0), covariance_matrix=t([[1.0]]))
    n = D.Normal(t([0.0, 1.0]), t([1.0, 1.0]))
    with pytest.raises(ValueError, match=r"Value is not broadcastable with batch_shape\+event_shape: "
                                         r"torch.Size\(\[3\]\) vs torch.Size\(\[2\]\)."):
        n.log_prob(t([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        n.log_prob(1.0)
    with pytest.raises(ValueError, match=r"Expected value argument \(Tensor of shape \(1,\)\) to be within the "
                                         r"support \(IntegerInterval\(lower_bound=0, upper_bound=1\)\)"):
        D.Categorical(t([0.5, 0.5])).log_prob(tg.tensor([2]))
    with pytest.raises(ValueError, match=r"to be within the support \(GreaterThanEq\(lower_bound=0.0\)\)"):
        D.Exponential(t([1.0])).log_prob(t([-1.0]))
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        D.Dirichlet(t([1.0, 1.0, 1.0])).log_prob(t([0.5, 0.5]))
    with pytest.raises(ValueError, match="Expected parameter total_count"):
        D.Binomial(t([2.5]), t([0.5]))
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Gamma(1.0, 1.0))


# -- kl_divergence -----------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_kl_divergence(device):
    p, q = D.Normal(t([0.0, 1.0], device), t([1.0, 0.5], device)), D.Normal(t([0.5, 0.0], device), t([2.0, 1.0], device))
    close(D.kl_divergence(p, q), np.log([2.0, 2.0]) + ([1.0, 0.25] + np.array([0.25, 1.0])) / (2 * np.array([4.0, 1.0])) - 0.5)
    pa, qa = np.array([[0.2, 0.3, 0.5]]), np.array([[0.4, 0.4, 0.2]])
    close(D.kl_divergence(D.Categorical(t(pa, device)), D.Categorical(t(qa, device))), (pa * np.log(pa / qa)).sum(-1))
    zero = D.kl_divergence(D.Categorical(t([0.5, 0.5, 0.0], device)), D.Categorical(t([0.25, 0.25, 0.5], device)))
    close(zero, [math.log(2)])
    assert D.kl_divergence(D.Categorical(t([0.5, 0.5], device)), D.Categorical(t([1.0, 0.0], device))).item() == math.inf
    b1, b2 = np.array([0.3, 0.0]), np.array([0.6, 0.5])
    kl = D.kl_divergence(D.Bernoulli(t(b1, device)), D.Bernoulli(t(b2, device)))
    close(kl, [0.3 * math.log(0.3 / 0.6) + 0.7 * math.log(0.7 / 0.4), math.log(1 / 0.5)], 1e-6)
    close(D.kl_divergence(D.Uniform(t([0.0], device), t([1.0], device)), D.Uniform(t([-1.0], device), t([3.0], device))),
          [math.log(4)])
    assert D.kl_divergence(D.Uniform(t([0.0], device), t([2.0], device)),
                           D.Uniform(t([0.5], device), t([3.0], device))).item() == math.inf
    ip = D.Independent(D.Normal(t(np.zeros((2, 3)), device), 1.0), 1)
    iq = D.Independent(D.Normal(t(np.ones((2, 3)), device), 2.0), 1)
    close(D.kl_divergence(ip, iq), [3 * (math.log(2) + 2 / 8 - 0.5)] * 2)
    # MVN against the closed form in numpy, and against a Monte Carlo mean of log p - log q
    c1, c2 = np.array([[2.0, 0.6], [0.6, 1.0]]), np.array([[1.0, -0.3], [-0.3, 0.5]])
    m1, m2 = np.array([0.2, -0.1]), np.array([-0.5, 0.4])
    inv2 = np.linalg.inv(c2)
    closed = 0.5 * (np.trace(inv2 @ c1) + (m2 - m1) @ inv2 @ (m2 - m1) - 2 + math.log(np.linalg.det(c2) / np.linalg.det(c1)))
    mp = D.MultivariateNormal(t(m1, device), covariance_matrix=t(c1, device))
    mq = D.MultivariateNormal(t(m2, device), covariance_matrix=t(c2, device))
    close(D.kl_divergence(mp, mq), closed, 1e-10)
    tg.manual_seed(2)
    x = mp.sample((4000,))
    ratio = (mp.log_prob(x) - mq.log_prob(x)).numpy()
    assert abs(ratio.mean() - closed) <= 6 * ratio.std() / math.sqrt(len(ratio))


def test_transformed_distribution_change_of_variables():
    base = D.Normal(t([0.3]), t([0.8]))
    x = np.array([0.25])
    tanh = D.TransformedDistribution(base, [D.TanhTransform()])
    close(tanh.log_prob(t(x)), _normal_pdf(np.arctanh(x), 0.3, 0.8) - np.log(1 - x ** 2), 1e-10)
    sig = D.TransformedDistribution(base, [D.SigmoidTransform(), D.AffineTransform(1.0, 2.0)])
    y = 1.0 + 2.0 * x
    logit = math.log(x[0] / (1 - x[0]))
    close(sig.log_prob(t(y)), _normal_pdf(logit, 0.3, 0.8) - math.log(x[0] * (1 - x[0])) - math.log(2.0), 1e-10)
    close(sig.cdf(t(y)), base.cdf(t([logit])).numpy(), 1e-10)
    flipped = D.TransformedDistribution(base, [D.AffineTransform(0.0, -1.0)])
    close(flipped.cdf(t([-0.3])), [0.5])
    close(flipped.icdf(t([0.2])), -base.icdf(t([0.8])).numpy(), 1e-10)
    assert D.ExpTransform().inv(t([1.0])).item() == 0.0
    close(D.ExpTransform().inv.log_abs_det_jacobian(t([2.0]), t([math.log(2.0)])), [-math.log(2.0)])


def test_exports_and_torch_names():
    assert tg.distributions is D
    from stage2_tensor.distributions import Categorical, constraints
    assert Categorical is D.Categorical and constraints.positive.check(t([1.0, -1.0])).tolist() == [True, False]
    assert repr(constraints.real) == "Real()" and repr(constraints.simplex) == "Simplex()"
    assert repr(constraints.independent(constraints.real, 1)) == "IndependentConstraint(Real(), 1)"
    assert D.constraints.is_dependent(D.Uniform.support)
