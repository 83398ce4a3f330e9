"""The op table's rows of the surface sweep's area D (shapes and views, reductions by index):
numpy's answer and how to call each op, as tests/optable.py's rows; optable.py adds them to
TENSOR_OPS. Each row is (name, apply, reference, input shapes)."""
import numpy as np

INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")
NUMPY_REDUCE = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}


def reduce_at(a, groups, reduce, include_self):
    """a with each place of ``groups`` (place -> values sent there) reduced with them."""
    out = a.copy()
    for place, values in groups.items():
        values = ([a[place]] if include_self else []) + values
        out[place] = NUMPY_REDUCE[reduce](np.array(values))
    return out


def index_reduce(a, axis, index, src, reduce, include_self):
    """Tensor.index_reduce by its definition: slice i of src along axis into slice index[i]."""
    groups = {}
    for i, target in enumerate(index):
        for pos in np.ndindex(*np.delete(a.shape, axis)):
            place = pos[:axis] + (target % a.shape[axis],) + pos[axis:]
            groups.setdefault(place, []).append(src[pos[:axis] + (i,) + pos[axis:]])
    return reduce_at(a, groups, reduce, include_self)


def scatter_reduce(a, axis, index, src, reduce, include_self):
    """torch.scatter_reduce by its definition: src[pos] into a at pos with index[pos] at axis."""
    groups = {}
    for pos in np.ndindex(*index.shape):
        place = pos[:axis] + (index[pos],) + pos[axis + 1:]
        groups.setdefault(place, []).append(src[pos])
    return reduce_at(a, groups, reduce, include_self)


ROW_INDEX = [0, 2, 0, -1]
SCATTER_INDEX = [[0, 0, 3], [1, 1, 1]]


def _index_reductions(ns, a, s):
    idx = ns.tensor(ROW_INDEX, device=a.device)
    return ns.cat([a.index_reduce(0, idx, s, r, include_self=inc).reshape(-1)
                   for r in INDEX_REDUCTIONS for inc in (True, False)]
                  + [a.t().index_reduce(1, idx, s.t(), "amax").reshape(-1)])


def _scatter_reductions(ns, a, s):
    idx = ns.tensor(SCATTER_INDEX, device=a.device)
    return ns.cat([ns.scatter_reduce(a, 1, idx, s, r, include_self=inc).reshape(-1)
                   for r in ("sum",) + INDEX_REDUCTIONS for inc in (True, False)])


ROWS = [
    ("index_reduce", _index_reductions,
     lambda a, s: np.concatenate([index_reduce(a, 0, ROW_INDEX, s, r, inc).ravel()
                                  for r in INDEX_REDUCTIONS for inc in (True, False)]
                                 + [index_reduce(a.T, 1, ROW_INDEX, s.T, "amax", True).ravel()]),
     (3, 2), (4, 2)),
    ("scatter_reduce", _scatter_reductions,
     lambda a, s: np.concatenate([scatter_reduce(a, 1, np.array(SCATTER_INDEX), s, r, inc).ravel()
                                  for r in ("sum",) + INDEX_REDUCTIONS for inc in (True, False)]),
     (2, 4), (2, 3)),
]
