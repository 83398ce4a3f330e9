"""Device "python": buffers are ``array.array``, every kernel a loop a reader can follow.

All kernels rest on ``positions``: the buffer positions of a view's elements in row-major
order, built one dimension at a time (each position of the dimensions so far, plus every
step along the next one). Stretched (broadcast) dimensions have stride 0 and so repeat
positions; transposed views just list them in a different order.

The per-element formulas of the primitive ops are their declarations' (ops.py); this file
is how a device applies them, and the fused kernels (softmax, cross-entropy, LayerNorm, ...)
written as loops over those formulas.
"""
import array
import bisect
import functools
import heapq
import itertools
import math
import operator
import random

from . import ops
from .backend import Backend, View, bad_distribution, bad_index, bad_position, bad_target
from .kernels import check
from .ops import div as _div, exp as _exp, log as _log
from .sampling_grid import interpolation_source, pad_source
from .strides import make_strides, numel


def positions(view, along=None):
    """Buffer positions of ``view``'s elements, row-major. ``along=(dim, indices)`` visits
    only the given indices of that dimension, in that order (for index_select/index_add)."""
    pos = [view.offset]
    for d, (size, stride) in enumerate(zip(view.shape, view.strides)):
        steps = range(size) if along is None or along[0] != d else along[1]
        pos = [p + i * stride for p in pos for i in steps]
    return pos


# Each primitive's formula on Python numbers is its declaration's (ops.py)
UNARY = ops.formulas("unary")
BINARY = ops.formulas("binary", "comparison")
REDUCE = ops.formulas("reduce")


# Dropout's counter-based generator (csrc/dropout.c has the same in C): element i of a call
# with seed s is decided by output i of SplitMix64 seeded with s, computed directly from
# (s, i), so any element can be decided alone and both devices drop the same ones.
_MASK64 = (1 << 64) - 1


def splitmix64(seed, i):
    """Output i (from 0) of the SplitMix64 generator seeded with ``seed``: the state after
    i + 1 steps of the golden-ratio increment, through SplitMix64's mixing function."""
    z = (seed + (i + 1) * 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def dropout_uniform(seed, i):
    """Element i's uniform number in [0, 1): the top 53 bits of splitmix64(seed, i), exact
    in a double. Dropout keeps element i iff it is >= p."""
    return (splitmix64(seed, i) >> 11) * 2.0 ** -53


def _generator_in(state, spare):
    """A random.Random in the state ``state`` (getstate()[1]) with gauss's ``spare``."""
    rng = random.Random()
    rng.setstate((3, tuple(state), spare))        # 3: the version of getstate's tuple
    return rng


class PythonBackend(Backend):
    name = "python"

    # A half dtype's buffer holds its bits (dtypes.py): encode and decode convert; for the
    # other dtypes both are ``cast``.
    def from_flat(self, values, dtype):
        return array.array(dtype.typecode, [dtype.encode(v) for v in values])

    def full(self, n, value, dtype):
        return array.array(dtype.typecode, [dtype.encode(value)]) * n

    def to_bytes(self, view):
        return self.contiguous(view, view.dtype).tobytes()

    def from_bytes(self, data, dtype):
        out = array.array(dtype.typecode)
        out.frombytes(data)
        return out

    def to_flat(self, view):
        buf, cast = view.buffer, view.dtype.decode
        return [cast(buf[p]) for p in positions(view)]

    def contiguous(self, view, dtype):
        buf, cast = view.buffer, _converter(view.dtype, dtype)
        return array.array(dtype.typecode, [cast(buf[p]) for p in positions(view)])

    def cat(self, views, dim, dtype):
        """For each position of the dimensions before dim (outer), each view's elements from
        there on, one view after the other."""
        check("cat", views, dim, dtype)
        outer = numel(views[0].shape[:dim])
        pieces = [(self.contiguous(v, dtype), numel(v.shape[dim:])) for v in views]
        out = array.array(dtype.typecode)
        for o in range(outer):
            for piece, width in pieces:
                out.extend(piece[o * width:(o + 1) * width])
        return out

    def unary(self, op, view, dtype):
        f, buf, cast = UNARY[op], view.buffer, dtype.cast
        return array.array(dtype.typecode, [cast(f(buf[p])) for p in positions(view)])

    def binary(self, op, a, b, dtype):
        f, abuf, bbuf, cast = BINARY[op], a.buffer, b.buffer, dtype.cast
        return array.array(dtype.typecode, [cast(f(abuf[i], bbuf[j]))
                                            for i, j in zip(positions(a), positions(b))])

    def where(self, cond, a, b, dtype):
        cbuf, abuf, bbuf, cast = cond.buffer, a.buffer, b.buffer, dtype.cast
        return array.array(dtype.typecode, [cast(abuf[i] if cbuf[c] else bbuf[j]) for c, i, j in
                                            zip(positions(cond), positions(a), positions(b))])

    def clamp(self, view, low, high, dtype):
        """Each element raised to low, then lowered to high (a NaN compares false: it stays)."""
        buf = view.buffer
        return array.array(dtype.typecode, [high if v > high else v for v in
                                            (low if buf[p] < low else buf[p] for p in positions(view))])

    def reduce(self, op, view, dims, dtype):
        """Split the view into the kept dimensions (one output each) and the reduced ones
        (positions relative to each output's first element)."""
        kept = [d for d in range(len(view.shape)) if d not in dims]
        outer = _subview(view, kept)
        inner = positions(_subview(view, dims)._replace(offset=0))
        if not inner and op != "sum":
            raise RuntimeError(f"{op}: cannot reduce over an empty dimension (shape {view.shape})")
        f, buf, cast = REDUCE[op], view.buffer, dtype.cast
        return array.array(dtype.typecode,
                           [cast(f([buf[base + r] for r in inner])) for base in positions(outer)])

    def cumsum(self, view, dim, dtype):
        """Each row along `dim` summed from its first element on, in Python numbers (a double
        for floats), each sum rounded to dtype as it is stored."""
        return _row_by_row(view, dim, dtype, itertools.accumulate)

    def cumprod(self, view, dim, dtype):
        """Each row along `dim` multiplied from its first element on, as cumsum sums."""
        return _row_by_row(view, dim, dtype, lambda row: itertools.accumulate(row, operator.mul))

    def cummax(self, view, dim, smallest, dtype):
        """Each row along `dim` walked once, keeping the extreme so far and its position: an
        element takes its place when it is a nan, or when the extreme is not a nan and the
        element is at least as large (as small): the last of equal values, the last nan."""
        check("cummax", view, dim, smallest, dtype)
        values = array.array(dtype.typecode, [dtype.cast(0)]) * numel(view.shape)
        indices = array.array("q", [0]) * numel(view.shape)
        out = View(values, view.shape, make_strides(view.shape), 0, dtype)
        others = [d for d in range(len(view.shape)) if d != dim]
        size, stride, out_stride, buf = view.shape[dim], view.strides[dim], out.strides[dim], view.buffer
        takes = operator.le if smallest else operator.ge
        for base, out_base in zip(positions(_subview(view, others)), positions(_subview(out, others))):
            best, at = None, 0
            for i in range(size):
                x = buf[base + i * stride]
                if best is None or x != x or (best == best and takes(x, best)):
                    best, at = x, i
                values[out_base + i * out_stride], indices[out_base + i * out_stride] = best, at
        return values, indices

    def logcumsumexp(self, view, dim, dtype):
        """Each row along `dim`: the largest element so far m and the sum s of e^(x - m),
        rescaled when m grows (an element equal to m, infinite ones too, adds 1; a nan
        makes s nan); element j is m + log(s)."""
        return _row_by_row(view, dim, dtype, _log_sum_exps)

    def flip(self, view, dims, dtype):
        """The view's elements read backwards along each of dims: the positions of a view that
        starts at the last element of those dims and steps back through them."""
        start = view.offset + sum((view.shape[d] - 1) * view.strides[d] for d in dims if view.shape[d])
        steps = tuple(-s if d in dims else s for d, s in enumerate(view.strides))
        buf = view.buffer
        return array.array(dtype.typecode, [buf[p] for p in positions(View(buf, view.shape, steps, start, dtype))])

    def triangle(self, view, diagonal, upper, dtype):
        """Each element of the view's row-major copy, or zero off the kept triangle: element
        (i, j) of a matrix lies on diagonal j - i."""
        cols, rows = view.shape[-1], view.shape[-2]
        keep = (lambda i, j: j - i >= diagonal) if upper else (lambda i, j: j - i <= diagonal)
        zero = dtype.cast(0)
        return array.array(dtype.typecode, [view.buffer[p] if keep(e // cols % rows, e % cols) else zero
                                            for e, p in enumerate(positions(view))])

    def nonzero(self, view, count, dtype):
        """Each nonzero element's coordinates, in row-major order, the first count of them."""
        found = [coords for coords, p in zip(itertools.product(*map(range, view.shape)), positions(view))
                 if view.buffer[p]][:count]
        flat = [c for coords in found for c in coords]
        return array.array("q", flat + [0] * (count * len(view.shape) - len(flat)))

    def roll(self, view, shifts, dtype):
        """Element (i_0, ..., i_n) read at ((i_d - shifts[d]) mod size_d): the positions of the
        view's rows, each dimension's indices rotated."""
        pos = [view.offset]
        for n, stride, s in zip(view.shape, view.strides, shifts):
            pos = [p + ((i - s) % n) * stride for p in pos for i in range(n)]
        buf = view.buffer
        return array.array(dtype.typecode, [buf[p] for p in pos])

    def topk(self, view, k, dim, descending, dtype):
        """Each row along dim ordered by (value, position), NaN last ascending and first
        descending, and its first k kept: heapq.nsmallest's k smallest keys, O(n log k)."""
        check("topk", view, k, dim, descending, dtype)
        shape = view.shape[:dim] + (k,) + view.shape[dim + 1:]
        values = array.array(dtype.typecode, [dtype.cast(0)]) * numel(shape)
        indices = array.array("q", [0]) * numel(shape)
        out = View(values, shape, make_strides(shape), 0, dtype)
        others = [d for d in range(len(view.shape)) if d != dim]
        size, stride, out_stride, buf = view.shape[dim], view.strides[dim], out.strides[dim], view.buffer
        for base, out_base in zip(positions(_subview(view, others)), positions(_subview(out, others))):
            row = [buf[base + i * stride] for i in range(size)]
            for j, i in enumerate(heapq.nsmallest(k, range(size), key=_order_key(row, descending))):
                values[out_base + j * out_stride], indices[out_base + j * out_stride] = row[i], i
        return values, indices

    def kthvalue(self, view, k, dim, dtype):
        """Each row along dim ordered by (value, position), NaN last, and its element k kept."""
        check("kthvalue", view, k, dim, dtype)
        others = [d for d in range(len(view.shape)) if d != dim]
        size, stride, buf = view.shape[dim], view.strides[dim], view.buffer
        values, indices = array.array(dtype.typecode), array.array("q")
        for base in positions(_subview(view, others)):
            row = [buf[base + i * stride] for i in range(size)]
            i = sorted(range(size), key=_order_key(row, False))[k]
            values.append(row[i])
            indices.append(i)
        return values, indices

    def searchsorted(self, boundaries, values, right, dtype):
        """For each value (row-major), a binary search of its row of boundaries: the first
        position whose boundary is not below it (> it when `right`), in PyTorch's test
        (``not boundary >= value``: a NaN on either side goes right)."""
        check("searchsorted", boundaries, values, right, dtype)
        n = boundaries.shape[-1]
        rows = positions(_subview(boundaries, range(len(boundaries.shape) - 1)))
        per_row = 1 if len(boundaries.shape) == 1 else max(values.shape[-1], 1)
        step, bbuf, vbuf = boundaries.strides[-1], boundaries.buffer, values.buffer
        out = []
        for i, p in enumerate(positions(values)):
            value, base, lo, hi = vbuf[p], rows[0 if len(rows) == 1 else i // per_row], 0, n
            while lo < hi:
                mid = (lo + hi) // 2
                boundary = bbuf[base + mid * step]
                if not (boundary > value if right else boundary >= value):
                    lo = mid + 1
                else:
                    hi = mid
            out.append(lo)
        return array.array("q", out)

    def matmul(self, a, b, dtype, bias=None):
        """out[..., i, j] = sum_p a[..., i, p] * b[..., p, j] (+ bias[j]), for every batch index."""
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        add = [bias.buffer[bias.offset + j * bias.strides[0]] for j in range(n)] if bias else [0] * n
        sa_i, sa_p = a.strides[-2:]
        sb_p, sb_j = b.strides[-2:]
        batch = range(len(a.shape) - 2)
        abuf, bbuf, cast = a.buffer, b.buffer, dtype.cast
        out = []
        for a0, b0 in zip(positions(_subview(a, batch)), positions(_subview(b, batch))):
            for i in range(m):
                row = [abuf[a0 + i * sa_i + p * sa_p] for p in range(k)]
                for j in range(n):
                    col = b0 + j * sb_j
                    out.append(cast(sum((x * bbuf[col + p * sb_p] for p, x in enumerate(row)), add[j])))
        return array.array(dtype.typecode, out)

    def index_select(self, view, dim, index):
        rows = _index_values(index, dim, view.shape[dim])
        buf = view.buffer
        return array.array(view.dtype.typecode, [buf[p] for p in positions(view, along=(dim, rows))])

    def index_add(self, shape, dim, index, src, base=None):
        check("index_add", shape, dim, index, src, base)
        rows = _index_values(index, dim, shape[dim])
        dtype = src.dtype
        out = array.array(dtype.typecode, [dtype.cast(0)]) * numel(shape) if base is None else \
            self.contiguous(base, dtype)
        target = View(out, shape, make_strides(shape), 0, dtype)
        sbuf = src.buffer
        for t, s in zip(positions(target, along=(dim, rows)), positions(src)):
            out[t] += sbuf[s]               # a repeated index adds up
        return out

    def index_reduce(self, base, dim, index, src, reduce, include_self):
        """src's elements in order, each combined into the element of base's copy its index
        names; without include_self an element's first one replaces it. A mean sums, counts,
        then divides."""
        check("index_reduce", base, dim, index, src, reduce, include_self)
        rows = _index_values(index, dim, base.shape[dim])
        dtype = base.dtype
        out = self.contiguous(base, dtype)
        target = View(out, base.shape, make_strides(base.shape), 0, dtype)
        combine = {"prod": operator.mul, "mean": operator.add, "amax": BINARY["maximum"],
                   "amin": BINARY["minimum"]}[reduce]
        counts = {}                         # target position -> its src elements
        sbuf = src.buffer
        for t, s in zip(positions(target, along=(dim, rows)), positions(src)):
            first = not include_self and t not in counts
            out[t] = sbuf[s] if first else dtype.cast(combine(out[t], sbuf[s]))
            counts[t] = counts.get(t, 0) + 1
        if reduce == "mean":
            for t, n in counts.items():
                n += include_self
                out[t] = out[t] / n if dtype.is_floating_point else out[t] // n      # an integer's rounds down
        return out

    def index(self, view, indices):
        """Each index position's sub-tensor: where it starts (its leading indices, checked),
        then the positions of the trailing dimensions from there."""
        starts = _indexed_starts(view, indices)
        trailing = positions(_trailing(view, indices.shape[0]))
        buf = view.buffer
        return array.array(view.dtype.typecode, [buf[s + t] for s in starts for t in trailing])

    def index_put(self, dst, indices, values, accumulate):
        """index's positions, in the same order, each given (or added) the next of values'
        elements read row-major; every index checked before the first write."""
        check("index_put", dst, indices, values, accumulate)
        starts = _indexed_starts(dst, indices)
        trailing = positions(_trailing(dst, indices.shape[0]))
        buf, vbuf, cast = dst.buffer, values.buffer, dst.dtype.cast
        for p, v in zip((s + t for s in starts for t in trailing), positions(values)):
            buf[p] = cast(buf[p] + vbuf[v]) if accumulate else vbuf[v]     # a bool: true + true is true

    def bincount(self, index, weights, bins, dtype):
        """One pass over the index, adding 1 (or the element's weight) into its bin; an
        element outside 0..bins-1 counts nowhere."""
        check("bincount", index, weights, bins, dtype)
        out = array.array(dtype.typecode, [dtype.cast(0)]) * bins
        ibuf = index.buffer
        adds = itertools.repeat(1) if weights is None else (weights.buffer[p] for p in positions(weights))
        for p, add in zip(positions(index), adds):
            if 0 <= ibuf[p] < bins:
                out[ibuf[p]] += add
        return out

    def histc(self, view, bins, low, high, dtype):
        """Each element's bin by PyTorch's formula, every step rounded to dtype (a float32's
        through a one-element array), high in the last bin, NaN and elements outside
        left out."""
        check("histc", view, bins, low, high, dtype)
        holder = array.array(dtype.typecode, [0.0])

        def rounded(v):
            holder[0] = v
            return holder[0]
        lo, hi = rounded(low), rounded(high)
        width, out, buf = rounded(hi - lo), array.array(dtype.typecode, [0.0]) * bins, view.buffer
        for p in positions(view):
            x = buf[p]
            if lo <= x <= hi:
                out[min(int(rounded(rounded(rounded(x - lo) * bins) / width)), bins - 1)] += 1
        return out

    def runs(self, view, count, dtype):
        """One pass: a run starts at the first element and wherever an element is not equal
        to the one before (a NaN never is); the first `count` runs kept."""
        check("runs", view, count, dtype)
        values, counts, before = array.array(dtype.typecode), array.array("q"), None
        for p in positions(view):
            x = view.buffer[p]
            if not counts or not x == before:
                if len(counts) == count:
                    break
                values.append(x)
                counts.append(0)
            counts[-1] += 1
            before = x
        return values, counts

    def write(self, dst, src):
        if src.shape != dst.shape:
            check("write", dst, src)
        dbuf, sbuf, cast = dst.buffer, src.buffer, _converter(src.dtype, dst.dtype)
        for d, s in zip(positions(dst), positions(src)):
            dbuf[d] = cast(sbuf[s])

    # ---- fused kernels ------------------------------------------------------------------
    def softmax(self, view, dim, log, dtype):
        """Each row along `dim` on its own."""
        return _row_by_row(view, dim, dtype, lambda row: _softmax_row(row, log))

    def softmax_backward(self, grad, out, dim, log, dtype):
        """Each row along `dim`: s = sum(g * y) (softmax) or sum(g) (log-softmax), then
        dx = y * (g - s) or g - e^y * s."""
        others = [d for d in range(len(out.shape)) if d != dim]
        size = out.shape[dim]
        dx = array.array(dtype.typecode, [dtype.cast(0)]) * numel(out.shape)
        dx_view = View(dx, out.shape, make_strides(out.shape), 0, dtype)
        cast = dtype.cast
        for g0, y0, d0 in zip(positions(_subview(grad, others)), positions(_subview(out, others)),
                              positions(_subview(dx_view, others))):
            g = [grad.buffer[g0 + i * grad.strides[dim]] for i in range(size)]
            y = [out.buffer[y0 + i * out.strides[dim]] for i in range(size)]
            if log:
                s = sum(g)
                row = [gi - _exp(yi) * s for gi, yi in zip(g, y)]
            else:
                s = sum(gi * yi for gi, yi in zip(g, y))
                row = [yi * (gi - s) for gi, yi in zip(g, y)]
            for i, value in enumerate(row):
                dx[d0 + i * dx_view.strides[dim]] = cast(value)
        return dx

    def cross_entropy(self, logits, targets, reduction, ignore_index, dtype):
        """loss_i = log(sum_j e^(x_ij - m_i)) - (x_i,target_i - m_i), with the row's
        softmax kept for the gradient; 0 for a row whose target is ignore_index; then the
        reduction ("none", "sum", "mean": over the rows kept, whose count it returns too)."""
        n, c = logits.shape
        buf, (s_row, s_col), cast = logits.buffer, logits.strides, dtype.cast
        targets = [targets.buffer[p] for p in positions(targets)]
        for i, target in enumerate(targets):
            if not 0 <= target < c and target != ignore_index:
                raise bad_target(i, target, c)
        losses, probs = [], []
        for i, target in enumerate(targets):
            row = [buf[logits.offset + i * s_row + j * s_col] for j in range(c)]
            logp = _softmax_row(row, log=True)
            losses.append(0.0 if target == ignore_index else cast(-logp[target]))
            probs.extend(cast(_exp(lp)) for lp in logp)
        kept = None
        if reduction == "mean":
            count = sum(target != ignore_index for target in targets)
            losses = [cast(_div(sum(losses), count))]                       # none kept: nan
            kept = array.array(dtype.typecode, [count])
        elif reduction == "sum":
            losses = [cast(sum(losses))]
        return array.array(dtype.typecode, losses), array.array(dtype.typecode, probs), kept

    def cross_entropy_backward(self, probs, targets, scale, kept, ignore_index, dtype):
        """(probs - onehot(targets)) * scale[i] / kept for each row i (no division when
        kept is None); 0 for a row whose target is ignore_index."""
        n, c = probs.shape
        pbuf, sbuf, cast = probs.buffer, scale.buffer, dtype.cast
        factor = 1.0 if kept is None else _div(1.0, kept.buffer[kept.offset])
        out = []
        for i, (tp, sp) in enumerate(zip(positions(targets), positions(scale))):
            target, s = targets.buffer[tp], sbuf[sp] * factor
            if target == ignore_index:
                out.extend([0.0] * c)
                continue
            out.extend(cast((pbuf[probs.offset + i * probs.strides[0] + j * probs.strides[1]]
                             - (j == target)) * s) for j in range(c))
        return array.array(dtype.typecode, out)

    def mse_loss(self, a, b, reduction, dtype):
        """diff = a - b; the losses diff^2 per element, or their sum or mean."""
        cast = dtype.cast
        diff = [cast(a.buffer[i] - b.buffer[j]) for i, j in zip(positions(a), positions(b))]
        if reduction == "none":
            losses = [cast(d * d) for d in diff]
        else:
            total = sum(d * d for d in diff)
            losses = [cast(_div(total, len(diff)) if reduction == "mean" else total)]  # empty: nan
        return array.array(dtype.typecode, losses), array.array(dtype.typecode, diff)

    def mse_loss_backward(self, diff, grad, factor, dtype):
        """2 * diff * grad * factor, element by element."""
        cast = dtype.cast
        return array.array(dtype.typecode, [cast(2 * diff.buffer[i] * grad.buffer[j] * factor)
                                            for i, j in zip(positions(diff), positions(grad))])

    def dropout(self, view, seed, p, dtype):
        """x_i * scale where element i (row-major) is kept, else x_i * 0: kept iff
        dropout_uniform(seed, i) >= p, scale = 1 / (1 - p); the product in double, then
        stored as dtype. The same call on the upstream gradient is dropout's backward."""
        buf, cast, scale = view.buffer, dtype.cast, 1.0 / (1.0 - p)
        return array.array(dtype.typecode, [cast(buf[pos] * (scale if dropout_uniform(seed, i) >= p else 0.0))
                                            for i, pos in enumerate(positions(view))])

    def multinomial(self, weights, uniforms, replacement, dtype):
        """Row by row: a row that is no distribution (backend.bad_distribution) noted, the
        first one as bad, and skipped; else one draw per uniform number (``_draw``), a drawn
        weight set to 0 without replacement."""
        check("multinomial", weights, uniforms, replacement, dtype)
        (rows, n), samples = weights.shape, uniforms.shape[1]
        (w_row, w_col), (u_row, u_col) = weights.strides, uniforms.strides
        wbuf, ubuf = weights.buffer, uniforms.buffer
        out, bad = [0] * (rows * samples), []
        for r in range(rows):
            row = [wbuf[weights.offset + r * w_row + i * w_col] for i in range(n)]
            if bad_distribution(r, row, samples, replacement) is not None:
                bad.append(r)
                continue
            for s in range(samples):
                at = out[r * samples + s] = _draw(row, ubuf[uniforms.offset + r * u_row + s * u_col])
                if not replacement:
                    row[at] = 0.0
        return array.array("q", out), array.array("q", bad[:1] or [-1])

    def mt19937_floats(self, state, spare, n, distribution, a, b, dtype):
        """Python's own generator, put in the state given, draws them: a + b * random(), or
        gauss(a, b) (a + z * b), n times; then its state is read back."""
        check("mt19937_floats", state, spare, n, distribution, a, b, dtype)
        rng = _generator_in(state, spare)
        if distribution == "uniform":
            values = [a + b * rng.random() for _ in range(n)]
        else:
            values = [rng.gauss(a, b) for _ in range(n)]
        _, state, spare = rng.getstate()
        return self.from_flat(values, dtype), state, spare

    def mt19937_integers(self, state, n, low, width, dtype):
        """Python's own generator, put in the state given, draws randrange(low, low + width)
        n times; then its state is read back."""
        check("mt19937_integers", state, n, low, width, dtype)
        rng = _generator_in(state, None)
        values = [rng.randrange(low, low + width) for _ in range(n)]
        return self.from_flat(values, dtype), rng.getstate()[1]

    def layer_norm(self, x, weight, bias, eps, dtype):
        """Each row of the last dimension (n values): mean m, biased variance, rstd s =
        1 / sqrt(var + eps), out = (x - m) * s * weight + bias. Returns (out, mean, rstd)."""
        n, rows = x.shape[-1], numel(x.shape[:-1])
        values = [x.buffer[p] for p in positions(x)]
        w = [weight.buffer[p] for p in positions(weight)] if weight is not None else None
        b = [bias.buffer[p] for p in positions(bias)] if bias is not None else None
        out, means, rstds, cast = [], [], [], dtype.cast
        for r in range(rows):
            row = values[r * n:(r + 1) * n]
            m = _div(sum(row), n)
            s = _div(1.0, math.sqrt(_div(sum((v - m) * (v - m) for v in row), n) + eps))
            means.append(cast(m))
            rstds.append(cast(s))
            for j, v in enumerate(row):
                y = (v - m) * s
                y = y * w[j] if w is not None else y
                out.append(cast(y + b[j] if b is not None else y))
        return tuple(array.array(dtype.typecode, a) for a in (out, means, rstds))

    def layer_norm_backward(self, grad, x, mean, rstd, weight, dtype):
        """Per row, with xhat = (x - mean) * rstd and gw = grad * weight (grad without
        weight): dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)); dweight and dbias
        sum grad * xhat and grad over the rows (None without weight)."""
        n, rows = x.shape[-1], numel(x.shape[:-1])
        g, xs = ([v.buffer[p] for p in positions(v)] for v in (grad, x))
        means, rstds = ([v.buffer[p] for p in positions(v)] for v in (mean, rstd))
        w = [weight.buffer[p] for p in positions(weight)] if weight is not None else None
        dx, dw, db, cast = [], [0.0] * n, [0.0] * n, dtype.cast
        for r in range(rows):
            m, s = means[r], rstds[r]
            gr = g[r * n:(r + 1) * n]
            xhat = [(v - m) * s for v in xs[r * n:(r + 1) * n]]
            gw = [gj * wj for gj, wj in zip(gr, w)] if w is not None else gr
            a = _div(sum(gw), n)
            b = _div(sum(p * q for p, q in zip(gw, xhat)), n)
            dx.extend(cast(s * (gwj - a - xj * b)) for gwj, xj in zip(gw, xhat))
            for j in range(n):
                dw[j] += gr[j] * xhat[j]
                db[j] += gr[j]
        dx = array.array(dtype.typecode, dx)
        if w is None:
            return dx, None, None
        return dx, array.array(dtype.typecode, map(cast, dw)), array.array(dtype.typecode, map(cast, db))

    def batch_norm(self, x, weight, bias, eps, dtype):
        """Per channel c of x (N, C, ...): mean m and biased variance v of its N * S
        elements (S the spatial size), out = (x - m) / sqrt(v + eps) * weight[c] + bias[c].
        Returns (out, mean, var)."""
        check("batch_norm", x, weight, bias, eps, dtype)
        (batch, c), size = x.shape[:2], numel(x.shape[2:])
        xs = [x.buffer[p] for p in positions(x)]
        w = [weight.buffer[p] for p in positions(weight)] if weight is not None else [1.0] * c
        b = [bias.buffer[p] for p in positions(bias)] if bias is not None else [0.0] * c
        out, means, variances, cast = [0.0] * len(xs), [], [], dtype.cast
        for ch in range(c):
            at = [(n * c + ch) * size + i for n in range(batch) for i in range(size)]
            m = _div(sum(xs[p] for p in at), len(at))
            v = _div(sum((xs[p] - m) * (xs[p] - m) for p in at), len(at))
            s = _div(1.0, math.sqrt(v + eps))
            for p in at:
                out[p] = cast((xs[p] - m) * s * w[ch] + b[ch])
            means.append(cast(m))
            variances.append(cast(v))
        return tuple(array.array(dtype.typecode, a) for a in (out, means, variances))

    def batch_norm_backward(self, grad, x, mean, var, weight, eps, dtype):
        """Per channel, with rstd = 1 / sqrt(var + eps) and xhat = (x - mean) * rstd:
        dbias = sum grad, dweight = sum grad * xhat, dx = weight * rstd * (grad -
        mean(grad) - xhat * mean(grad * xhat)). Returns (dx, dweight, dbias)."""
        check("batch_norm_backward", grad, x, mean, var, weight, eps, dtype)
        (batch, c), size = x.shape[:2], numel(x.shape[2:])
        g, xs = ([v.buffer[p] for p in positions(v)] for v in (grad, x))
        means, variances = ([v.buffer[p] for p in positions(v)] for v in (mean, var))
        w = [weight.buffer[p] for p in positions(weight)] if weight is not None else [1.0] * c
        dx, dw, db, cast = [0.0] * len(xs), [], [], dtype.cast
        for ch in range(c):
            at = [(n * c + ch) * size + i for n in range(batch) for i in range(size)]
            s = _div(1.0, math.sqrt(variances[ch] + eps))
            xhat = {p: (xs[p] - means[ch]) * s for p in at}
            sum_g = sum(g[p] for p in at)
            sum_gx = sum(g[p] * xhat[p] for p in at)
            for p in at:
                dx[p] = cast(w[ch] * s * (g[p] - _div(sum_g, len(at)) - xhat[p] * _div(sum_gx, len(at))))
            dw.append(cast(sum_gx))
            db.append(cast(sum_g))
        return tuple(array.array(dtype.typecode, a) for a in (dx, dw, db))

    # ---- recurrent cells: unit j of row b has its gates at columns j, H + j, 2H + j, ... ----
    def lstm_cell(self, input_gates, hidden_gates, cx, input_bias, hidden_bias, dtype):
        """Per hidden unit: its four gates ((input + input_bias) + (hidden + hidden_bias)),
        i, f, o = sigmoid, g = tanh; cy = f * cx + i * g, hy = o * tanh(cy). Returns
        (state: every hy, then every cy; workspace: i, f, g, o per row)."""
        check("lstm_cell", input_gates, hidden_gates, cx, input_bias, hidden_bias, dtype)
        batch, hidden = cx.shape
        sums, c = _gate_sums(input_gates, hidden_gates, input_bias, hidden_bias), _values(cx)
        sigmoid, tanh, cast = UNARY["sigmoid"], UNARY["tanh"], dtype.cast
        hy, cy, workspace = [], [], []
        for b in range(batch):
            row = sums[b * 4 * hidden:(b + 1) * 4 * hidden]
            i, f, g, o = ([act(v) for v in row[k * hidden:(k + 1) * hidden]]
                          for k, act in enumerate((sigmoid, sigmoid, tanh, sigmoid)))
            for j in range(hidden):
                new_c = f[j] * c[b * hidden + j] + i[j] * g[j]
                cy.append(cast(new_c))
                hy.append(cast(o[j] * tanh(new_c)))
            workspace.extend(cast(v) for v in i + f + g + o)
        return array.array(dtype.typecode, hy + cy), array.array(dtype.typecode, workspace)

    def lstm_cell_backward(self, grad, cx, workspace, bias, dtype):
        """Per hidden unit, with cy = f * cx + i * g and t = tanh(cy) again: dc = grad_hy *
        o * (1 - t^2) + grad_cy, then each gate's gradient before its activation (di = dc *
        g * i (1 - i), df = dc * cx * f (1 - f), dg = dc * i * (1 - g^2), do = grad_hy * t *
        o (1 - o)) and dcx = dc * f; dbias sums dgates' rows (None unless bias)."""
        check("lstm_cell_backward", grad, cx, workspace, bias, dtype)
        batch, hidden = cx.shape
        g_all, c, ws = _values(grad), _values(cx), _values(workspace)
        tanh, cast, n = UNARY["tanh"], dtype.cast, batch * hidden
        dgates, dcx = [], []
        for b in range(batch):
            row = ws[b * 4 * hidden:(b + 1) * 4 * hidden]
            di, df, dg, do = [], [], [], []
            for j in range(hidden):
                i, f, g, o = row[j], row[hidden + j], row[2 * hidden + j], row[3 * hidden + j]
                old_c, grad_hy, grad_cy = c[b * hidden + j], g_all[b * hidden + j], g_all[n + b * hidden + j]
                t = tanh(f * old_c + i * g)
                dc = grad_hy * o * (1 - t * t) + grad_cy
                di.append(dc * g * (i * (1 - i)))
                df.append(dc * old_c * (f * (1 - f)))
                dg.append(dc * i * (1 - g * g))
                do.append(grad_hy * t * (o * (1 - o)))
                dcx.append(cast(dc * f))
            dgates.extend(cast(v) for v in di + df + dg + do)
        dbias = _column_sums(dgates, 4 * hidden, dtype) if bias else None
        return array.array(dtype.typecode, dgates), array.array(dtype.typecode, dcx), dbias

    def gru_cell(self, input_gates, hidden_gates, hx, input_bias, hidden_bias, dtype):
        """Per hidden unit, each input's gates with its bias: r = sigmoid(i_r + h_r), z =
        sigmoid(i_z + h_z), n = tanh(i_n + r * h_n), hy = n + z * (hx - n). Returns (hy,
        workspace: r, z, n, hx and h_n per row)."""
        check("gru_cell", input_gates, hidden_gates, hx, input_bias, hidden_bias, dtype)
        batch, hidden = hx.shape
        width = 3 * hidden
        ig, hg, h = _values(input_gates), _values(hidden_gates), _values(hx)
        ib, hb = (_values(v) if v is not None else None for v in (input_bias, hidden_bias))
        sigmoid, tanh, cast = UNARY["sigmoid"], UNARY["tanh"], dtype.cast
        hy, workspace = [], []
        for b in range(batch):
            xs = ig[b * width:(b + 1) * width]
            hs = hg[b * width:(b + 1) * width]
            if ib is not None:
                xs, hs = [x + v for x, v in zip(xs, ib)], [x + v for x, v in zip(hs, hb)]
            r, z, n = [], [], []
            for j in range(hidden):
                r.append(sigmoid(xs[j] + hs[j]))
                z.append(sigmoid(xs[hidden + j] + hs[hidden + j]))
                n.append(tanh(xs[2 * hidden + j] + r[j] * hs[2 * hidden + j]))
                hy.append(cast(n[j] + z[j] * (h[b * hidden + j] - n[j])))
            workspace.extend(cast(v) for v in r + z + n + h[b * hidden:(b + 1) * hidden] + hs[2 * hidden:])
        return array.array(dtype.typecode, hy), array.array(dtype.typecode, workspace)

    def gru_cell_backward(self, grad, workspace, bias, dtype):
        """Per hidden unit, from r, z, n, hx and h_n in the workspace: dn = grad * (1 - z)
        * (1 - n^2), dz = grad * (hx - n) * z (1 - z), dr = dn * h_n * r (1 - r);
        dinput_gates (dr, dz, dn), dhidden_gates (dr, dz, dn * r), dhx = grad * z; the bias
        gradients sum the rows of each (None unless bias)."""
        check("gru_cell_backward", grad, workspace, bias, dtype)
        batch, hidden = grad.shape
        gs, ws, cast = _values(grad), _values(workspace), dtype.cast
        dinput, dhidden, dhx = [], [], []
        for b in range(batch):
            row = ws[b * 5 * hidden:(b + 1) * 5 * hidden]
            dr, dz, dn, dhn = [], [], [], []
            for j in range(hidden):
                r, z, n, h, hn = (row[k * hidden + j] for k in range(5))
                g = gs[b * hidden + j]
                dn.append(g * (1 - z) * (1 - n * n))
                dz.append(g * (h - n) * (z * (1 - z)))
                dr.append(dn[j] * hn * (r * (1 - r)))
                dhn.append(dn[j] * r)
                dhx.append(cast(g * z))
            dinput.extend(cast(v) for v in dr + dz + dn)
            dhidden.extend(cast(v) for v in dr + dz + dhn)
        biases = [_column_sums(d, 3 * hidden, dtype) for d in (dinput, dhidden)] if bias else [None, None]
        return (array.array(dtype.typecode, dinput), array.array(dtype.typecode, dhidden),
                array.array(dtype.typecode, dhx), *biases)

    def sgd_update(self, params, grads, velocities, lr, momentum, dampening, weight_decay,
                   first_steps, nesterov):
        """For each parameter (lists of views, one per parameter): g += weight_decay * p;
        v = momentum * v + (1 - dampening) * g (v = g on the first step); g = v (g +
        momentum * v with nesterov); p -= lr * g. In place."""
        check("sgd_update", params, grads, velocities, lr, momentum, dampening, weight_decay,
                             first_steps, nesterov)
        for param, grad, velocity, first_step in zip(params, grads, velocities, first_steps):
            pbuf, gbuf, cast = param.buffer, grad.buffer, param.dtype.cast
            vpos = positions(velocity) if velocity is not None else [None] * numel(param.shape)
            for p, gp, vp in zip(positions(param), positions(grad), vpos):
                g = gbuf[gp] + weight_decay * pbuf[p] if weight_decay else gbuf[gp]
                if momentum:
                    vbuf = velocity.buffer
                    v = cast(g if first_step else momentum * vbuf[vp] + (1 - dampening) * g)
                    vbuf[vp] = v
                    g = g + momentum * v if nesterov else v
                pbuf[p] = cast(pbuf[p] - lr * g)

    def adam_update(self, params, grads, ms, vs, lr, beta1, beta2, eps, weight_decay, decoupled, steps):
        """For each parameter: AdamW first shrinks p by 1 - lr * weight_decay (Adam adds
        weight_decay * p to g); m, v = running means of g and g^2; p -= lr / (1 - beta1^t)
        * m / (sqrt(v) / sqrt(1 - beta2^t) + eps). In place on the parameters, m and v."""
        check("adam_update", params, grads, ms, vs, lr, beta1, beta2, eps, weight_decay, decoupled, steps)
        for param, grad, m, v, step in zip(params, grads, ms, vs, steps):
            pbuf, gbuf, mbuf, vbuf, cast = param.buffer, grad.buffer, m.buffer, v.buffer, param.dtype.cast
            step_size = lr / (1 - beta1 ** step)
            root_correction = math.sqrt(1 - beta2 ** step)
            for p, gp, mp, vp in zip(positions(param), positions(grad), positions(m), positions(v)):
                g = gbuf[gp]
                if weight_decay and decoupled:
                    pbuf[p] = cast(pbuf[p] * (1 - lr * weight_decay))
                elif weight_decay:
                    g = g + weight_decay * pbuf[p]
                mbuf[mp] = cast(beta1 * mbuf[mp] + (1 - beta1) * g)
                vbuf[vp] = cast(beta2 * vbuf[vp] + (1 - beta2) * g * g)
                denom = math.sqrt(vbuf[vp]) / root_correction + eps
                pbuf[p] = cast(pbuf[p] - step_size * (mbuf[mp] / denom))

    # ---- resampling: padding and interpolation (the definitions resample.c is tested against) --
    def pad(self, view, before, after, mode, value, dtype):
        """The view's last n = len(before) dimensions padded by before and after: output
        position o reads the input at sampling_grid.pad_source(o - before, ...) in each
        dimension, ``value`` where one of them is None (constant padding)."""
        check("pad", view, before, after, mode, value, dtype)
        if not numel(view.shape[:len(view.shape) - len(before)]):
            return array.array(dtype.typecode)         # no planes: no tables to build either
        n, values = len(before), self.to_flat(view)
        spatial = tuple(view.shape[len(view.shape) - n:])
        reads = [[pad_source(i, size, mode) for i in range(-b, size + a)]
                 for size, b, a in zip(spatial, before, after)]
        out, size, cast = [], numel(spatial), dtype.cast
        for start in range(0, numel(view.shape[:len(view.shape) - n]) * size, size) if size else ():
            for o in itertools.product(*reads):
                flat = 0
                for d, p in enumerate(o):
                    flat = None if flat is None or p is None else flat * spatial[d] + p
                out.append(cast(value if flat is None else values[start + flat]))
        if not size:                   # an empty input: constant padding fills everything
            out = [cast(value)] * (numel(view.shape[:len(view.shape) - n]) *
                                    numel([len(r) for r in reads]))
        return array.array(dtype.typecode, out)

    def pad_backward(self, grad, spatial, before, after, mode, dtype):
        """pad's adjoint: zeros (..., *spatial), each gradient element added at the input
        position its output position read (none for constant padding's fill)."""
        check("pad_backward", grad, spatial, before, after, mode, dtype)
        if not numel(grad.shape[:len(grad.shape) - len(before)]):
            return array.array(dtype.typecode)
        n, g = len(before), self.to_flat(grad)
        reads = [[pad_source(i, size, mode) for i in range(-b, size + a)]
                 for size, b, a in zip(spatial, before, after)]
        size, padded = numel(spatial), numel([len(r) for r in reads])
        planes = numel(grad.shape[:len(grad.shape) - n])
        dx = [0.0] * (planes * size)
        for plane in range(planes):
            for i, o in enumerate(itertools.product(*reads)):
                if None not in o:
                    flat = 0
                    for d, p in enumerate(o):
                        flat = flat * spatial[d] + p
                    dx[plane * size + flat] += g[plane * padded + i]
        return array.array(dtype.typecode, map(dtype.cast, dx))

    def interpolate(self, view, out, steps, mode, align_corners, dtype):
        """Each plane of view (N, C, H, W) resampled to (H_out, W_out): output (i, j) mixes
        the input's rows y0, y1 and columns x0, x1 (sampling_grid.interpolation_source) as
        (1 - wy) ((1 - wx) x[y0, x0] + wx x[y0, x1]) + wy ((1 - wx) x[y1, x0] + wx x[y1, x1])
        (nearest: x[y0, x0] alone)."""
        check("interpolate", view, out, steps, mode, align_corners, dtype)
        if not numel(view.shape[:2]):
            return array.array(dtype.typecode)
        (h, w), values, cast = view.shape[2:], self.to_flat(view), dtype.cast
        rows = [interpolation_source(i, h, steps[0], mode, align_corners) for i in range(out[0])]
        cols = [interpolation_source(j, w, steps[1], mode, align_corners) for j in range(out[1])]
        y = []
        for start in range(0, len(values), h * w):
            p = values[start:start + h * w]
            for y0, y1, wy in rows:
                for x0, x1, wx in cols:
                    if mode == "nearest":          # one read: no 0 * inf = nan from a second
                        y.append(cast(p[y0 * w + x0]))
                        continue
                    top = (1 - wx) * p[y0 * w + x0] + wx * p[y0 * w + x1]
                    bottom = (1 - wx) * p[y1 * w + x0] + wx * p[y1 * w + x1]
                    y.append(cast((1 - wy) * top + wy * bottom))
        return array.array(dtype.typecode, y)

    def interpolate_backward(self, grad, spatial, steps, mode, align_corners, dtype):
        """interpolate's adjoint: zeros (N, C, H, W), each output's gradient added at the
        four input positions it mixed, times their weights."""
        check("interpolate_backward", grad, spatial, steps, mode, align_corners, dtype)
        if not numel(grad.shape[:2]):
            return array.array(dtype.typecode)
        (h, w), (oh, ow), g = spatial, grad.shape[2:], self.to_flat(grad)
        rows = [interpolation_source(i, h, steps[0], mode, align_corners) for i in range(oh)]
        cols = [interpolation_source(j, w, steps[1], mode, align_corners) for j in range(ow)]
        dx = [0.0] * (numel(grad.shape[:2]) * h * w)
        for plane in range(numel(grad.shape[:2])):
            d, at = plane * h * w, plane * oh * ow
            for y0, y1, wy in rows:
                for x0, x1, wx in cols:
                    v = g[at]
                    at += 1
                    if mode == "nearest":
                        dx[d + y0 * w + x0] += v
                        continue
                    dx[d + y0 * w + x0] += (1 - wy) * (1 - wx) * v
                    dx[d + y0 * w + x1] += (1 - wy) * wx * v
                    dx[d + y1 * w + x0] += wy * (1 - wx) * v
                    dx[d + y1 * w + x1] += wy * wx * v
        return array.array(dtype.typecode, map(dtype.cast, dx))

    # ---- windows: convolution and pooling (the definitions the C kernels are tested against) --
    def im2col(self, view, kernel_size, stride, before, dilation, out, fill, dtype):
        """Each plane (N * C of them) as its columns: for each kernel position k and output
        position l, what window l reads at k (``fill`` in the padding). (N, C, K, L)."""
        check("im2col", view, kernel_size, stride, before, dilation, out, fill, dtype)
        table = window_reads(tuple(view.shape[2:]), *map(tuple, (kernel_size, stride, before, dilation, out)))
        values, size, cast = self.to_flat(view), numel(view.shape[2:]), dtype.cast
        cols = []
        for start in range(0, len(values), size):
            plane = values[start:start + size]
            cols.extend(cast(fill if p is None else plane[p]) for reads in table for p in reads)
        return array.array(dtype.typecode, cols)

    def col2im(self, cols, spatial, kernel_size, stride, before, dilation, out, dtype):
        """im2col's adjoint: zeros (N, C, *spatial), each column element added at the
        position it was read from; those read in the padding are dropped."""
        check("col2im", cols, spatial, kernel_size, stride, before, dilation, out, dtype)
        table = window_reads(*map(tuple, (spatial, kernel_size, stride, before, dilation, out)))
        values, size, width = self.to_flat(cols), numel(spatial), numel(kernel_size) * numel(out)
        x = []
        for i in range(numel(cols.shape[:2])):                  # a plane of zeros where no window fits
            plane, column = [0.0] * size, iter(values[i * width:(i + 1) * width])
            for reads in table:
                for p in reads:
                    value = next(column)
                    if p is not None:
                        plane[p] += value
            x.extend(plane)
        return array.array(dtype.typecode, map(dtype.cast, x))

    def conv_direct(self, x, weight, bias, stride, before, dilation, groups, out, dtype):
        """y[b, co, l] = bias[co] + sum over the input channels ci of co's group and the
        kernel positions k of weight[co, ci, k] * x[b, ci, what window l reads at k]."""
        check("conv_direct", x, weight, bias, stride, before, dilation, groups, out, dtype)
        (batch, c_in), c_out, kernel = x.shape[:2], weight.shape[0], weight.shape[2:]
        table = window_reads(tuple(x.shape[2:]), *map(tuple, (kernel, stride, before, dilation, out)))
        xs, ws = self.to_flat(x), self.to_flat(weight)
        bs = self.to_flat(bias) if bias is not None else [0.0] * c_out
        P, K, L, cg = numel(x.shape[2:]), numel(kernel), numel(out), c_in // groups
        y = []
        for b in range(batch):
            for co in range(c_out):
                g = co // (c_out // groups)
                for l in range(L):
                    acc = bs[co]
                    for ci in range(cg):
                        plane = (b * c_in + g * cg + ci) * P
                        for k in range(K):
                            p = table[k][l]
                            if p is not None:
                                acc += ws[(co * cg + ci) * K + k] * xs[plane + p]
                    y.append(dtype.cast(acc))
        return array.array(dtype.typecode, y)

    def max_pool(self, view, kernel_size, stride, before, dilation, out, dtype):
        """Each window's largest value and its flat position in the plane (the first of
        equal ones; a NaN wins; the padding is never picked): (values, positions)."""
        check("max_pool", view, kernel_size, stride, before, dilation, out, dtype)
        table = window_reads(tuple(view.shape[2:]), *map(tuple, (kernel_size, stride, before, dilation, out)))
        values, size = self.to_flat(view), numel(view.shape[2:])
        best, where = [], []
        for start in range(0, len(values), size):
            plane = values[start:start + size]
            for l in range(numel(out)):
                value, at = -math.inf, -1
                for reads in table:
                    p = reads[l]
                    if p is None:
                        continue
                    v = plane[p]
                    if at < 0 or v > value or (math.isnan(v) and not math.isnan(value)):
                        value, at = v, p
                best.append(dtype.cast(value))
                where.append(at)
        return array.array(dtype.typecode, best), array.array("q", where)

    def max_pool_backward(self, grad, where, spatial, dtype):
        """Zeros (N, C, *spatial) with each output's gradient added at its maximum's
        position (-1: none)."""
        check("max_pool_backward", grad, where, spatial, dtype)
        g, at, size = self.to_flat(grad), self.to_flat(where), numel(spatial)
        L = numel(grad.shape[2:])
        for i, p in enumerate(at):
            if not -1 <= p < size:
                raise bad_position("max_pool_backward", i, p, size)
        dx = [0.0] * (numel(grad.shape[:2]) * size)
        for i, p in enumerate(at):
            if p >= 0:
                dx[i // L * size + p] += g[i]
        return array.array(dtype.typecode, map(dtype.cast, dx))


def _converter(source, target):
    """What turns an element stored as ``source`` into one stored as ``target``: the same
    bits within one dtype, through the number where a half dtype is involved, else cast."""
    if source is target and source.is_half:
        return int
    if source.is_half or target.is_half:
        decode, encode = source.decode, target.encode
        return lambda v: encode(decode(v))
    return target.cast


def _row_by_row(view, dim, dtype, row_fn):
    """A new contiguous array of view's shape: each row of `view` along `dim` (every position
    of the other dimensions) read out as Python numbers, mapped by ``row_fn`` to as many, each
    rounded to dtype as it is stored."""
    others = [d for d in range(len(view.shape)) if d != dim]
    size, stride = view.shape[dim], view.strides[dim]
    out = array.array(dtype.typecode, [dtype.cast(0)]) * numel(view.shape)
    out_view = View(out, view.shape, make_strides(view.shape), 0, dtype)
    out_stride, buf, cast = out_view.strides[dim], view.buffer, dtype.cast
    for base, out_base in zip(positions(_subview(view, others)), positions(_subview(out_view, others))):
        for i, value in enumerate(row_fn([buf[base + i * stride] for i in range(size)])):
            out[out_base + i * out_stride] = cast(value)
    return out


def _log_sum_exps(row):
    """The running log(sum(exp)) of a list of numbers (logcumsumexp's row)."""
    top, total = -math.inf, 0.0
    for x in row:
        if x > top:
            total, top = total * _exp(top - x) + 1.0, x
        else:
            total += 1.0 if x == top else _exp(x - top)
        yield top + _log(total)


def _order_key(row, descending):
    """The key of position i that orders a row: NaN (unequal to itself) last ascending and
    first descending, then the value (negated descending), then the position."""
    if descending:
        return lambda i: (row[i] == row[i], 0 if row[i] != row[i] else -row[i], i)
    return lambda i: (row[i] != row[i], 0 if row[i] != row[i] else row[i], i)


def _softmax_row(row, log):
    """softmax (or log-softmax) of a list of numbers: subtract the max, so every exponent
    is <= 0 and nothing overflows."""
    if not row:
        return []
    top = max(row)
    shifted = [x - top for x in row]
    exps = [_exp(x) for x in shifted]
    total = sum(exps)
    if log:
        log_total = _log(total)
        return [x - log_total for x in shifted]
    return [_div(e, total) for e in exps]


def _draw(weights, u):
    """The index drawn by the uniform number u in [0, 1) with probability weights[i] /
    sum(weights): the cumulative sums (in double, from the left) bisected at u times their
    total; rounding past the top end gives the last non-zero weight (a u outside [0, 1) still
    gives an index in range)."""
    cumulative = list(itertools.accumulate(weights))
    at = min(bisect.bisect_right(cumulative, u * cumulative[-1]), len(weights) - 1)
    while at > 0 and weights[at] == 0:
        at -= 1
    return at


def _index_values(index, dim, size):
    """The 1-D int64 view `index` as a list of row numbers along a dimension of `size`:
    each checked to be in -size..size-1, a negative one counted from the end."""
    values = [index.buffer[p] for p in positions(index)]
    for v in values:
        if not -size <= v < size:
            raise bad_index(v, dim, size)
    return [v % size for v in values]


def _indexed_starts(view, indices):
    """Where each index position j of indices (k, *S) starts in the view's buffer: its offset
    plus, per leading dimension d < k, index d of j (checked, a negative one counted from
    the end) times d's stride."""
    k, n = indices.shape[0], numel(indices.shape[1:])
    values = [indices.buffer[p] for p in positions(indices)]
    starts = [view.offset] * n
    for d in range(k):
        size, stride = view.shape[d], view.strides[d]
        for j, i in enumerate(values[d * n:(d + 1) * n]):
            if not -size <= i < size:
                raise bad_index(i, d, size)
            starts[j] += (i % size) * stride
    return starts


def _trailing(view, k):
    """The view's dimensions after the first k, from buffer position 0."""
    return view._replace(shape=tuple(view.shape[k:]), strides=tuple(view.strides[k:]), offset=0)


def _subview(view, dims):
    """The view restricted to some of its dimensions (the others held at index 0)."""
    return view._replace(shape=tuple(view.shape[d] for d in dims),
                         strides=tuple(view.strides[d] for d in dims))


@functools.lru_cache(maxsize=64)
def window_reads(spatial, kernel, stride, before, dilation, out):
    """For each kernel position k and each output position l (both row-major), the flat
    position in an input plane of ``spatial`` extents that window l reads at k: o * stride
    - before + k * dilation in each dimension, or None where that lies in the padding.
    (Cached: a training step asks for the same few; the lists are only read.)"""
    table = []
    for k in itertools.product(*map(range, kernel)):
        reads = []
        for o in itertools.product(*map(range, out)):
            flat = 0
            for d, size in enumerate(spatial):
                p = o[d] * stride[d] - before[d] + k[d] * dilation[d]
                if not 0 <= p < size:
                    flat = None
                    break
                flat = flat * size + p
            reads.append(flat)
        table.append(reads)
    return table


def _values(view):
    """The view's elements, row-major, as a list."""
    return [view.buffer[p] for p in positions(view)]


def _gate_sums(input_gates, hidden_gates, input_bias, hidden_bias):
    """A cell's gates before their activations, row-major: (input + input_bias) + (hidden +
    hidden_bias), each bias (one value per column) added to every row of its product, in
    the C kernels' order."""
    x, h = _values(input_gates), _values(hidden_gates)
    if input_bias is None:
        return [a + b for a, b in zip(x, h)]
    ib, hb = _values(input_bias), _values(hidden_bias)
    width = len(ib)
    return [(a + ib[k % width]) + (b + hb[k % width]) for k, (a, b) in enumerate(zip(x, h))]


def _column_sums(values, width, dtype):
    """The sums of the columns of ``values`` (rows of ``width``, row-major) over the rows: a
    bias's gradient."""
    sums = [0.0] * width
    for k, v in enumerate(values):
        sums[k % width] += v
    return array.array(dtype.typecode, map(dtype.cast, sums))
