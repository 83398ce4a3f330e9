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


def _scattered(a, s, where):
    out = a.copy()
    out[where] = s
    return out


def _diag_embed(x, offset=0):
    """Each row of x on the diagonal of its own matrix."""
    return np.stack([np.diag(row, offset) for row in x])


def _views(ns, a):
    return ns.cat([a.diagonal(1, 1, 2).reshape(-1), ns.diagonal(a, -1, 2, 0).reshape(-1),
                   a.unfold(2, 3, 2).reshape(-1), a.select(1, -1).reshape(-1), a[0].t().unfold(0, 2, 1).reshape(-1)])


def _np_views(a):
    windows = np.lib.stride_tricks.sliding_window_view
    return np.concatenate([np.diagonal(a, 1, 1, 2).ravel(), np.diagonal(a, -1, 2, 0).ravel(),
                           windows(a, 3, axis=2)[:, :, ::2].ravel(), a[:, -1].ravel(),
                           windows(a[0].T, 2, axis=0).ravel()])


def _writes(ns, a, s):
    return ns.cat([ns.diag_embed(s, 1).reshape(-1), ns.diagflat(s[0], -1).reshape(-1),
                   ns.diagonal_scatter(a, s[1, :2], 2).reshape(-1), ns.select_scatter(a, s[0, :4] * 2, 0, 1).reshape(-1),
                   ns.slice_scatter(a, s[:, :3].t(), 1, 0, None, 2).reshape(-1)])


def _np_writes(a, s):
    i = np.arange(2)
    return np.concatenate([_diag_embed(s, 1).ravel(), np.diagflat(s[0], -1).ravel(),
                           _scattered(a, s[1, :2], (i, i + 2)).ravel(), _scattered(a, s[0, :4] * 2, 1).ravel(),
                           _scattered(a, s[:, :3].T, (slice(None), slice(0, None, 2))).ravel()])


def _arrangements(ns, a, b):
    return ns.cat([a.movedim((0, 2), (2, 0)).reshape(-1), ns.rot90(a, 1, (1, 2)).reshape(-1),
                   ns.rot90(a, -1).reshape(-1), ns.fliplr(a).reshape(-1), a.tile(2, 1).reshape(-1),
                   ns.vstack([a[0], b]).reshape(-1), ns.dstack([b, b * 2]).reshape(-1),
                   ns.column_stack([b[0], b[1]]).reshape(-1), a.sum_to_size(2, 1, 4).reshape(-1),
                   ns.tensor_split(a, 2, 2)[1].reshape(-1), ns.vander(b[0], 3).reshape(-1),
                   ns.block_diag(b, a[1, 0]).reshape(-1), ns.cartesian_prod(b[0], b[1, :2]).reshape(-1),
                   ns.combinations(b[1], 2).reshape(-1)])


def _np_arrangements(a, b):
    pairs = [(b[1][i], b[1][j]) for i in range(4) for j in range(i + 1, 4)]
    block = np.zeros((3, 8))
    block[:2, :4], block[2, 4:] = b, a[1, 0]
    return np.concatenate([np.moveaxis(a, (0, 2), (2, 0)).ravel(), np.rot90(a, 1, (1, 2)).ravel(),
                           np.rot90(a, -1).ravel(), np.fliplr(a).ravel(), np.tile(a, (2, 1)).ravel(),
                           np.vstack([a[0], b]).ravel(), np.dstack([b, b * 2]).ravel(),
                           np.column_stack([b[0], b[1]]).ravel(), a.sum(1, keepdims=True).ravel(),
                           np.array_split(a, 2, 2)[1].ravel(), np.vander(b[0], 3).ravel(), block.ravel(),
                           np.array([(x, y) for x in b[0] for y in b[1, :2]]).ravel(), np.array(pairs).ravel()])


ROWS = [
    ("shape_views", _views, _np_views, (2, 3, 5)),
    ("shape_scatters", _writes, _np_writes, (3, 4), (2, 4)),
    ("shape_arrangements", _arrangements, _np_arrangements, (2, 3, 4), (2, 4)),
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
