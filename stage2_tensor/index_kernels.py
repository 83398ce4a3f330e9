"""Advanced indexing's two kernels as differentiable operations (chapter 1, "Strides";
kernels/indexing.py's ``index`` and ``index_put``). Both take a view whose k leading
dimensions are indexed and the indices as one int64 tensor (k, *S), row d the indices of
dimension d; position j of S names the sub-tensor at (indices[0][j], ..., indices[k-1][j]).

    Index     out[j] = view[indices[:, j]]         gradient: zeros with the gradient added
                                                   back there (index_put, accumulate)
    IndexPut  a copy of x, values written there    gradient: for values, the gradient read
              (added, when accumulating)           there (Index); for x, the gradient with
                                                   those places zeroed (itself, accumulating)

IndexPut indexes ``arrange(x, basic, order)``: x's basic index (ints, slices, None) then a
permutation bringing the indexed dimensions first, advanced_index.py's plan; the same
arrangement of its output and of the gradient is where it writes and reads.
"""
from . import views
from .backend import launch
from .factories import zeros
from .gradient_function import GradientFunction


def arrange(t, basic, order):
    """The view of t the kernels index: the basic index (None: none), then the permutation
    (None: none). A view of t's storage, with no autograd link."""
    if basic is not None:
        shape, strides, offset = views.basic_index(t, basic)
        t = t.view_of(shape, strides, offset)
    if order is not None:
        t = t.view_of(tuple(t.shape[d] for d in order), tuple(t.strides[d] for d in order), t.offset)
    return t


def put(target, indices, values, accumulate):
    """values (S..., trailing...) written into target's indexed sub-tensors, in place (added,
    when accumulating); target a view of a tensor's storage, values of its dtype."""
    launch(target.device, "index_put", target.as_view(), indices.as_view(), values.as_view(), accumulate)


class Index(GradientFunction):
    def forward(self, x, indices):
        self.shape = x.shape
        self.save_for_backward(indices)
        shape = indices.shape[1:] + x.shape[indices.shape[0]:]
        return x.launch("index", x.as_view(), indices.as_view(), shape=shape, dtype=x.dtype)

    def backward(self, grad):
        (indices,) = self.saved_tensors
        out = zeros(*self.shape, dtype=grad.dtype, device=grad.device)
        put(out, indices, grad, True)                 # a sub-tensor read twice gets both
        return out, None


class IndexPut(GradientFunction):
    def forward(self, x, values, indices, basic, order, accumulate):
        self.basic, self.order, self.accumulate = basic, order, accumulate
        self.save_for_backward(indices)
        out = views.copy(x)
        put(arrange(out, basic, order), indices, values, accumulate)
        return out

    def backward(self, grad):
        (indices,) = self.saved_tensors
        wants_x, wants_values = self.needs_input_grad[:2]
        read = Index.apply(arrange(grad, self.basic, self.order), indices) if wants_values else None
        if self.accumulate or not wants_x:
            return grad, read, None
        kept = views.copy(grad)                       # what was overwritten gets no gradient
        at = arrange(kept, self.basic, self.order)
        put(at, indices, zeros((), dtype=grad.dtype, device=grad.device).expand(
            *indices.shape[1:], *at.shape[indices.shape[0]:]), False)
        return kept, read, None
