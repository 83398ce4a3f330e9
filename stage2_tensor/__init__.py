"""stage2_tensor: a strided tensor with tensor-level autograd, in plain Python (thesis
chapters 1, 2 and 4). PyTorch's names, so a PyTorch user feels at home:

    import stage2_tensor as tg
    x = tg.randn(4, 3, requires_grad=True)
    loss = (x @ tg.ones(3, 2)).relu().sum()
    loss.backward()           # x.grad

Where things are: ``strides.py`` (shape, strides, flat index, views), ``broadcast.py``,
``dtypes.py`` (promotion), ``tensor.py`` (the Tensor: layout and autograd state),
``gradient_function.py`` (GradientFunction), ``backward.py`` (the backward pass),
``elementwise.py``, ``reduce.py``, ``matmul.py``, ``views.py``, ``softmax.py``, ``concat.py``
(the differentiable operations), ``statistics.py``, ``clamp.py``, ``masks.py`` (composites of
them: var, std, norm, clamp, masked_fill, tril, triu, diag), ``gathering.py`` (gather, scatter),
``sorting.py`` (sort, argsort, topk, kthvalue, median, msort), ``counting.py`` (unique,
bincount, histc), ``searching.py`` (searchsorted, bucketize), ``repeating.py``
(repeat_interleave), ``reorder.py`` (flip, roll), ``rounding.py`` (//, %), ``advanced_index.py`` (x[mask], x[idx], x[idx] = v, index_put), ``index_kernels.py`` (its kernels, differentiable), ``index_updates.py`` (index_copy, index_fill, index_add), ``data_checks.py`` (an index's range, a probability, checked by a kernel, with no read into Python), ``cumulative.py`` (cumsum, cumprod, cummax, cummin, logcumsumexp), ``einsum.py``, ``logical.py`` (all, any, isclose,
allclose, equal), ``factories.py`` (and ``generators.py``, ``Generator``), ``utils/data/``
(Dataset, DataLoader), ``methods.py``, which binds the operations onto Tensor as its methods
(``x + y``, ``x.sum()``), and ``torch_compat.py``, PyTorch's surface that is not a concept of
its own: the methods as functions (``tg.exp(x)``, ``tg.sum(x, 1)``), ``tg.cuda``,
``tg.backends``, ``tg.device``, ``tg.accelerator``, ``tg.compile``; ``legacy_types.py``
(``tg.FloatTensor``, ``tg.Tensor(2, 3)``, ``t.type()``), ``inplace.py`` (the activations'
``inplace=True``), ``serialization.py`` and ``safe_globals.py`` (save, load),
``multiprocessing.py`` and ``shared_memory.py`` (torch.multiprocessing, share_memory_). The
imports run one way: tensor.py imports no operation, the operations import it, methods.py
imports both.

The functions behind ``nn``'s layers are named for what they hold, beside the layers of
the same subject in ``nn/``: ``loss_functions.py`` (F.l1_loss, F.binary_cross_entropy, ...;
``nn/loss.py`` the loss Modules), ``normalization_functions.py`` (F.batch_norm, group_norm,
instance_norm, rms_norm; ``nn/normalization.py`` the layers), ``fused_attention.py`` (the
device's fused attention, F.scaled_dot_product_attention's fast path; ``nn/attention.py``
MultiheadAttention), ``recurrent_cells.py`` (the fused LSTM and GRU cell steps the recurrent
layers take, PyTorch's ``_thnn_fused_lstm_cell`` and ``_thnn_fused_gru_cell``), with ``convolution.py``, ``resampling.py`` and the other operations
that ``nn/functional.py`` re-exports.

The backend boundary (``backend.py``): a device is an object with these kernels, each
reading Views (buffer, shape, strides, offset, dtype) and returning a new buffer:

    from_flat(values, dtype)   full(n, value, dtype)    to_flat(view)   contiguous(view, dtype)
    unary(op, x, dtype)        binary(op, a, b, dtype)  where(cond, a, b, dtype)
    reduce(op, x, dims, dtype) matmul(a, b, dtype)      index_select(x, dim, index)
    index_add(shape, dim, index, src, base)  cat(views, dim, dtype)   write(dst, src) (in place)
    index(x, indices)          index_put(dst, indices, values, accumulate)   (in place)
    multinomial(weights, uniforms, replacement, dtype) -> (out, bad)    (draws from given uniforms)

and, optionally, fused kernels (one pass instead of several tensor operations):

    softmax(x, dim, log, dtype)
    cross_entropy(logits, targets, reduction, ignore_index, dtype) -> (losses, probs, kept)
    linear_cross_entropy(x, weight, bias, targets, reduction, ignore_index, dtype)
                                               -> (losses, lse, kept)   (and its backward)
    layer_norm(x, weight, bias, eps, dtype) -> (out, mean, rstd)
    layer_norm_backward(grad, x, mean, rstd, weight, dtype) -> (dx, dweight, dbias)
    dropout(x, seed, p, dtype)         (the mask a hash of (seed, element index); also its backward)
    sgd_update(params, grads, velocities, lr, momentum, dampening, weight_decay,
               first_steps, nesterov)                   (in place, a whole parameter group)
    adam_update(params, grads, ms, vs, lr, beta1, beta2, eps, weight_decay, decoupled, steps)
    im2col, col2im, conv_direct, max_pool, max_pool_backward   (convolution's windows)

Broadcasting, views, dtype promotion and autograd stay here, written once. This package
ships device "python" (``python_backend.py``, ``array.array`` buffers); plugins register
the native devices with ``backend.register`` (``backend.load_plugins``). A kernel a backend lacks runs on the python
backend instead, with a one-time log line. from_flat, to_flat and write are required.
"""
from . import backend as _backend
from . import methods  # noqa: F401  (imported for its effect: binds Tensor's operation methods)
from .dtypes import bool_ as bool  # noqa: A001  (tracegrad.bool, like torch.bool)
from .dtypes import bfloat16, finfo, float16, float32, float64, int8, int16, int32, int64, uint8
from .concat import cat, split, stack
from .cumulative import cummax, cummin, cumprod, cumsum, logcumsumexp
from .einsum import einsum
from .gathering import gather, scatter, scatter_add
from .sorting import argsort, kthvalue, median, msort, nanmedian, sort, topk
from .counting import bincount, histc, unique, unique_consecutive
from .repeating import repeat_interleave
from .searching import bucketize, searchsorted
from .factories import (arange, as_tensor, empty, eye, full, full_like, linspace, normal, ones, ones_like,
                        multinomial, rand, rand_like, randint, randn, randn_like, randperm, seed, tensor,
                        uniform, zeros, zeros_like)
from .torch_compat import (abs, addcdiv, addcmul, amax, amin, argmax, argmin, ceil, chunk, clamp, cos,  # noqa: A004
                           diag, erf, exp, expm1, flatten, flip, floor, lerp, log, log1p, logsumexp, sin, trunc,
                           masked_fill, max, maximum, mean, min, minimum, narrow, neg, pow, relu, roll, rsqrt, sigmoid,
                           sign, sqrt, square, squeeze, std, sum, tanh, tril, triu, unbind, unsqueeze, var,
                           argwhere, count_nonzero, index_add, index_copy, index_fill, index_put, masked_scatter,
                           masked_select, nonzero, take, take_along_dim, where)
from .generators import Generator
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .interop import from_numpy
from .legacy_types import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor,
                           IntTensor, LongTensor, ShortTensor)
from .logical import allclose, equal, isclose
from .matmul import bmm, matmul, mm, outer
from .matmul import mm as spmm  # torch.spmm: mm with a sparse first operand
from . import sparse
from .sparse import sparse_coo_tensor
from .python_backend import PythonBackend
from .softmax import log_softmax, softmax
from .strides import Size
from .tensor import Tensor
from .rounding import floor_divide, remainder
from . import nn, optim, utils, viz  # viz: draw, save, print_dag; utils.data
from . import amp  # torch.amp.GradScaler
from . import multiprocessing  # torch.multiprocessing: Python's, tensors crossing processes
from .torch_compat import accelerator, backends, cuda, device, get_default_device, set_default_device  # noqa: E501  torch.backends' switches, torch.cuda.is_available
from .factories import seed as manual_seed  # PyTorch's name
from .nn.functional import one_hot
from .serialization import load, save
from . import distributions  # torch.distributions: Normal, Categorical, kl_divergence...
# shapes and views, reductions by index (index_reduce.py, view_layouts.py, shaping.py, put.py, membership.py,
# sequences.py)
from .index_reduce import scatter_reduce
from .view_layouts import (as_strided, diag_embed, diagflat, diagonal, diagonal_scatter, select, select_scatter,
                           slice_scatter)
from .shaping import (atleast_1d, atleast_2d, atleast_3d, cartesian_prod, column_stack, combinations, dsplit, dstack,
                      fliplr, flipud, hsplit, hstack, meshgrid, moveaxis, movedim, rot90, row_stack, split_with_sizes,
                      swapaxes, swapdims, tensor_split, tile, tril_indices, triu_indices, unflatten, unravel_index,
                      vsplit, vstack)
from .put import put
from .membership import isin
from .sequences import (bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window, logspace,
                        vander)
from .torch_compat import _functional as _method_as_function
# element-wise math, bits, more reductions (math_api.py), torch.special
from .math_api import (acos, acosh, aminmax, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, asin,  # noqa: A004, F401
                       asinh, atan, atan2, atanh, bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or,
                       bitwise_right_shift, bitwise_xor, copysign, cosh, deg2rad, diff, digamma, erfc, erfinv, exp2,
                       float_power, fmax, fmin, fmod, frac, frexp, gcd, heaviside, hypot, i0, isfinite, isinf, isnan,
                       isneginf, isposinf, isreal, lcm, ldexp, lgamma, log2, log10, logaddexp, logaddexp2,
                       logical_and, logical_not, logical_or, logical_xor, logit, mode, mvlgamma, nan_to_num,
                       nanmean, nanquantile, nansum, polygamma, prod, quantile, rad2deg, reciprocal, sgn, signbit,
                       sinc, sinh, std_mean, tan, var_mean, xlogy)
from .math_api import NAMES as _MATH_NAMES  # noqa: E402
from . import special  # noqa: E402
index_reduce = _method_as_function("index_reduce", "a copy with source's slices reduced into it at index along dim")

_backend.register("python", PythonBackend())

__all__ = ["Tensor", "tensor", "as_tensor", "zeros", "ones", "full", "arange", "rand", "randn",
           "uniform", "normal", "zeros_like", "ones_like", "full_like", "rand_like",
           "randn_like", "randperm", "Generator", "seed", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "is_grad_enabled", "where", "matmul", "from_numpy",
           "float16", "bfloat16", "half", "finfo", "float32", "float64", "uint8", "int8", "int16", "int32", "int64",
           "short", "int", "bool", "cat", "split", "softmax",
           "log_softmax", "one_hot", "viz", "nn", "optim", "utils", "save", "load", "manual_seed",
           "long", "double", "Generator",
           # the rest of PyTorch's surface a learner reaches for (torch_compat.py: methods as functions)
           "empty", "linspace", "randint", "randperm", "stack", "chunk", "tril", "triu", "outer", "bmm",
           "allclose", "isclose", "equal", "clamp", "var", "std", "exp", "log", "sqrt", "tanh",
           "sigmoid", "abs", "argmax", "argmin", "max", "min", "sum", "mean", "flatten", "squeeze",
           "unsqueeze", "maximum", "minimum", "masked_fill",
           # order, gathers along a dimension, running sums, sampling, Einstein sums
           "sort", "argsort", "topk", "gather", "scatter", "scatter_add", "cumsum", "multinomial", "einsum",
           "cumprod", "cummax", "cummin", "logcumsumexp",
           # counting, searching sorted rows, repeating, selecting (counting.py, searching.py, repeating.py, sorting.py)
           "unique", "unique_consecutive", "bincount", "histc", "searchsorted", "bucketize", "repeat_interleave",
           "kthvalue", "median", "nanmedian", "msort",
           # what a training script asks of torch itself: the GPU, loss scaling, compiling
           "amp", "backends", "cuda", "compile", "device", "accelerator", "multiprocessing", "get_default_device",
           "set_default_device", "sin", "cos",
           "pow", "neg", "relu", "erf", "square", "rsqrt", "mm", "spmm", "sparse", "sparse_coo_tensor",
           "amax", "amin", "logsumexp", "unbind", "flip", "roll", "eye",
           "floor", "ceil", "trunc", "floor_divide", "remainder", "round", "log1p", "expm1", "sign", "diag", "lerp", "addcmul", "addcdiv",
           # older programs' spellings: torch.Size, the legacy tensor types (legacy_types.py), narrow
           "Size", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
           "BoolTensor", "ByteTensor", "CharTensor", "ShortTensor", "narrow",
           # advanced indexing's gathers and writes
           "index_put", "index_add", "index_copy", "index_fill", "take", "take_along_dim", "masked_select",
           "masked_scatter", "nonzero", "argwhere", "count_nonzero",
           # probability distributions (distributions/)
           "distributions",
           # shapes and views, reductions by index
           "scatter_reduce", "index_reduce", "as_strided", "diag_embed", "diagflat", "diagonal", "diagonal_scatter",
           "select", "select_scatter", "slice_scatter", "atleast_1d", "atleast_2d", "atleast_3d", "cartesian_prod",
           "column_stack", "combinations", "dsplit", "dstack", "fliplr", "flipud", "hsplit", "hstack", "meshgrid",
           "moveaxis", "movedim", "rot90", "row_stack", "split_with_sizes", "swapaxes", "swapdims", "tensor_split",
           "tile", "tril_indices", "triu_indices", "unflatten", "unravel_index", "vsplit", "vstack",
           "put", "isin", "bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window",
           "logspace", "vander"]

# products and linear algebra (products.py, cdist.py, covariance.py, linalg/): torch.dot, ...,
# the factorizations' older top-level names (torch.det, torch.inverse, torch.svd), and torch.linalg
from . import linalg  # noqa: E402
from .block_diag import block_diag  # noqa: E402
from .covariance import corrcoef, cov  # noqa: E402
from .cdist import cdist  # noqa: E402
from .products import (addbmm, addmm, addmv, addr, baddbmm, cross, dot, ger, inner, kron, mv,  # noqa: E402
                       tensordot, trace, vdot)
from .linalg import det, matrix_exp, matrix_power, slogdet  # noqa: E402
from .linalg.multi_dot import chain_matmul  # noqa: E402
from .linalg import inv as inverse  # noqa: E402
from .linalg.deprecated import cholesky, pinverse, qr, svd  # noqa: E402
from .linalg.lu import logdet  # noqa: E402
__all__ += ["linalg", "dot", "vdot", "inner", "mv", "ger", "addmm", "addmv", "addbmm", "baddbmm", "addr",
            "chain_matmul", "kron", "trace", "tensordot", "cdist", "cross", "cov", "corrcoef", "matrix_power",
            "det", "logdet", "slogdet", "inverse", "cholesky", "qr", "svd", "pinverse", "matrix_exp", "block_diag"]
__all__ += _MATH_NAMES + ["special"]   # element-wise math, bits, more reductions, torch.special

# PyTorch's dtype aliases. Last in the file: inside it they shadow the builtins.
long = int64
int = int32  # noqa: A001
short = int16
double = float64
half = float16
float = float32  # noqa: A001
from .torch_compat import round  # noqa: E402, A004  (torch.round; shadows the builtin here too)
from .torch_compat import compile  # noqa: E402, A004  (torch.compile; shadows the builtin here too)
# PyTorch's other names of tracegrad's operations, their in-place forms (aliases.py, inplace_methods.py), and
# PyTorch's settings, queries and factories of other names (configuration.py, factory_aliases.py), and torch's
# submodules: autograd, random, testing, jit (cuda, backends and utils.checkpoint are imported above)
from . import aliases as _aliases, inplace_methods  # noqa: E402, F401  (bind Tensor's methods)
from . import autograd, jit, random, testing  # noqa: E402
from .configuration import (are_deterministic_algorithms_enabled, can_cast, get_default_dtype,  # noqa: E402
                            get_float32_matmul_precision, get_num_interop_threads, get_num_threads, iinfo,
                            is_complex, is_deterministic_algorithms_warn_only_enabled, is_tensor, promote_types,
                            result_type, set_default_dtype, set_float32_matmul_precision, set_num_interop_threads,
                            set_num_threads, typename, use_deterministic_algorithms)
from .factory_aliases import (asarray, broadcast_shapes, broadcast_tensors, empty_like, empty_strided,  # noqa: E402
                              scalar_tensor)
from .random import get_rng_state, initial_seed, set_rng_state  # noqa: E402
globals().update(_aliases.functions())  # torch.add, torch.transpose, torch.clip, ... (the methods as functions)
__all__ += sorted(_aliases.functions()) + [
    "autograd", "jit", "random", "testing", "are_deterministic_algorithms_enabled", "can_cast", "get_default_dtype",
    "get_float32_matmul_precision", "get_num_interop_threads", "get_num_threads", "iinfo", "is_complex",
    "is_deterministic_algorithms_warn_only_enabled", "is_tensor", "promote_types", "result_type",
    "set_default_dtype", "set_float32_matmul_precision", "set_num_interop_threads", "set_num_threads", "typename",
    "use_deterministic_algorithms", "asarray", "broadcast_shapes", "broadcast_tensors", "empty_like",
    "empty_strided", "scalar_tensor", "get_rng_state", "initial_seed", "set_rng_state"]
# PyTorch's other random draws (random_fills.py; the in-place fills are Tensor's methods)
from .random_fills import bernoulli, poisson, randint_like  # noqa: E402
__all__ += ["bernoulli", "poisson", "randint_like"]
from .printing import set_printoptions  # noqa: E402  (how a tensor's repr prints its values)
__all__ += ["set_printoptions"]
# the fused recurrent cells nn.LSTM and nn.GRU step with, and PyTorch's names of them (recurrent_cells.py)
from .recurrent_cells import (_thnn_fused_gru_cell, _thnn_fused_lstm_cell, fused_gru_cell,  # noqa: E402, F401
                              fused_lstm_cell)
__all__ += ["fused_lstm_cell", "fused_gru_cell"]
