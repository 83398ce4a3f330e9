"""``torch.distributions``: probability distributions to sample from and score, with
gradients through log_prob and, where a distribution is reparameterized (has_rsample),
through its draws. Draws come from the package's generator (``manual_seed`` repeats them),
made as tensors on the parameters' device.

    import stage2_tensor.distributions as D
    policy = D.Categorical(logits=scores)
    action = policy.sample()
    loss = -(policy.log_prob(action) * reward).mean()
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform, SigmoidTransform, TanhTransform, Transform
from .uniform import Uniform

__all__ = ["AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution",
           "ExpTransform", "Exponential", "Gamma", "Gumbel", "Independent", "Laplace", "LogNormal",
           "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson", "SigmoidTransform", "TanhTransform",
           "Transform", "TransformedDistribution", "Uniform", "constraints", "kl_divergence", "register_kl",
           "transforms"]
