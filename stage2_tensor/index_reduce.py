"""Reductions by index, PyTorch's ``Tensor.index_reduce`` and ``Tensor.scatter_reduce``: the
elements an index sends to one place combined by product, mean, maximum or minimum (and, for
scatter_reduce, sum), with the place's own value or without it (``include_self``). For
dim=0:

    index_reduce:    out[index[i]] = reduce(out[index[i]], source[i])     (each i in order)
    scatter_reduce:  out[index[i][j]][j] = reduce(..., src[i][j])

One kernel, ``index_reduce`` (kernels/indexing.py), does both: scatter_reduce first turns
its index into flat positions (gathering.py), as scatter_add does, and reduces along them;
"sum" is scatter_add. Cost: one pass over the index and one over the output.

Gradients are PyTorch's: a mean's divides by the count each place got; a maximum's or
minimum's is shared equally among the elements equal to the result (those that took part:
without include_self a place's own value does not, even when equal); a product's is the
product of the others, computed without dividing by a zero: an element that is the only
zero of its place gets the product of the rest, and where a place has several zeros every
gradient is zero.
"""
from . import dtypes, factories, gathering, index_updates
from .elementwise import where
from .gradient_function import GradientFunction
from .kernels.indexing import REDUCTIONS
from .tensor import Tensor
from .views import IndexAdd, IndexSelect

SCATTER_REDUCTIONS = ("sum",) + REDUCTIONS


class IndexReduce(GradientFunction):
    """base with src's rows reduced into its rows ``index`` along ``dim`` (the kernel's
    arguments); differentiable in base and src."""

    def forward(self, base, src, dim, index, reduce, include_self):
        self.dim, self.reduce, self.include_self = dim, reduce, include_self
        out = base.launch("index_reduce", base.as_view(), dim, index.as_view(), src.as_view(), reduce, include_self,
                          shape=base.shape, dtype=base.dtype)
        self.save_for_backward(base, src, index, out)
        return out

    def backward(self, grad):
        base, src, index, out = self.saved_tensors
        dim, reduce, include_self = self.dim, self.reduce, self.include_self

        def gather(t):                       # each src row's place
            return IndexSelect.apply(t, dim, index)

        def add_at(t, rows):                 # rows added into t at their places
            return IndexAdd.apply(rows, t.shape, dim, index, t)

        if reduce == "mean":
            counts = add_at(factories.full(base.shape, float(include_self), dtype=grad.dtype, device=grad.device),
                            factories.ones(*src.shape, dtype=grad.dtype, device=grad.device))
            shared = grad / counts.masked_fill(counts == 0, 1)
            g_base, g_src = shared, gather(shared)
        elif reduce == "prod":
            g_base, g_src = self._product_grads(grad, base, src, index, out, gather, add_at)
        else:
            took_part = (base == out).to(grad.dtype)
            if not include_self:
                took_part = index_updates.index_fill(took_part, dim, index, 0)
            src_is = (src == gather(out)).to(grad.dtype)
            shared = grad / add_at(took_part, src_is)
            g_base, g_src = took_part * shared, src_is * gather(shared)
        if not include_self:
            g_base = index_updates.index_fill(g_base, dim, index, 0)
        return g_base, g_src

    def _product_grads(self, grad, base, src, index, out, gather, add_at):
        """PyTorch's: the product without base's zero for base; for src, the product with
        the one zero of its place set to 1, else the result over src (zero where a place
        has more zeros)."""
        dim, include_self = self.dim, self.include_self
        ones_base = base.masked_fill(base == 0, 1)
        g_base = grad * IndexReduce.apply(ones_base, src, dim, index, "prod", include_self) / ones_base
        src_zero = src == 0
        zeros_at = gather(add_at(factories.zeros(*base.shape, dtype=grad.dtype, device=grad.device),
                                 src_zero.to(grad.dtype)))
        single_zero = zeros_at.masked_fill(src != 0, 0) == 1       # the one zero of its place
        without_zero = IndexReduce.apply(base, src.masked_fill(single_zero, 1), dim, index, "prod", include_self)
        g_src = where(single_zero, gather(grad * without_zero),
                                gather(grad * out) / src.masked_fill(src_zero, 1))
        return g_base, g_src


def _reduce_arg(reduce, allowed, message):
    if reduce not in allowed:
        raise RuntimeError(message.format(reduce=reduce))


def index_reduce(x, dim, index, source, reduce, include_self=True):
    """x with source's slices along dim reduced into its slices at ``index`` (PyTorch's
    Tensor.index_reduce: reduce one of "prod", "mean", "amax", "amin")."""
    _, advanced = index_updates._along("index_reduce_", x, dim, index)
    _reduce_arg(reduce, REDUCTIONS, "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    source = index_updates._source("index_reduce_", x, dim, index, source)
    if x.dtype is dtypes.bool_:
        raise NotImplementedError("index_reduce(): not implemented for 'Bool'")
    d, rows = advanced[0]
    flat = x.reshape(1) if x.ndim == 0 else x
    return IndexReduce.apply(flat, source, d, rows, reduce, bool(include_self)).reshape(*x.shape)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):  # noqa: A002  (PyTorch's names)
    """A copy of input with src's elements reduced into it at ``index`` along dim (PyTorch's
    torch.scatter_reduce: reduce one of "sum", "prod", "mean", "amax", "amin"); src's
    elements beyond index's shape are ignored."""
    _reduce_arg(reduce, SCATTER_REDUCTIONS, "reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' must be a Tensor, not {type(src).__name__}")
    if isinstance(input, Tensor) and src.dtype is not input.dtype:
        raise RuntimeError(f"scatter_reduce(): Expected self.dtype to be equal to src.dtype, got {input.dtype} "
                           f"and {src.dtype}")
    positions, values = gathering._sources("scatter_reduce", input, dim, index, src)
    if reduce == "mean" and input.dtype is dtypes.bool_:
        raise NotImplementedError("scatter_reduce(): mean is not implemented for 'Bool'")
    if not positions.numel():
        return input.clone()
    flat = input.reshape(-1)
    if reduce == "sum":
        base = flat if include_self else index_updates.index_fill(flat, 0, positions, 0)
        out = IndexAdd.apply(values, (flat.numel(),), 0, positions, base)
    else:
        out = IndexReduce.apply(flat, values, 0, positions, reduce, bool(include_self))
    return out.reshape(*input.shape)
