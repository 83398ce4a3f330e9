"""Broadcasting as virtual extension (chapter 1, "Broadcasting"; chapter 4 for gradients).

Two shapes broadcast when, aligned at their last dimensions, each pair of sizes is equal
or one of them is 1 (a missing leading dimension counts as 1). The smaller operand is then
*virtually* repeated: its view gets the larger shape with stride 0 along every stretched
dimension, so the same buffer element is read again and again and nothing is copied.

The gradient flows the other way: an input that was read many times receives the sum of
the gradients of all the places it was read at. ``sum_dims`` names the dimensions to sum.
"""


def broadcast_shapes(*shapes):
    """The common shape of ``shapes``, or ValueError naming the shapes that do not fit."""
    if len(shapes) == 2:               # the usual case, answered without the general loop
        a, b = shapes
        if a == b or not b:
            return tuple(a)
        if not a:
            return tuple(b)
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for d in range(-ndim, 0):
        sizes = {s[d] for s in shapes if len(s) >= -d} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be "
                             f"broadcast: sizes {sorted(sizes)} meet in dimension {d}")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def broadcast_strides(shape, strides, target):
    """Strides that read a view of ``shape`` as if it had shape ``target``: 0 along every
    dimension that is added in front or stretched from size 1."""
    lead = len(target) - len(shape)
    out = [0] * lead
    for size, stride, want in zip(shape, strides, target[lead:]):
        out.append(stride if size == want else 0)
    return tuple(out)


def sum_dims(shape, target):
    """Dimensions of a ``target``-shaped gradient to sum so that it matches ``shape``:
    the leading ones ``shape`` lacks, and those where ``shape`` has size 1."""
    lead = len(target) - len(shape)
    return tuple(range(lead)) + tuple(lead + d for d, size in enumerate(shape)
                                      if size == 1 and target[lead + d] != 1)


def constrained_flat_index(out_index, shape, strides, offset=0):
    """The buffer position that element ``out_index`` of a broadcast result reads from an
    operand of ``shape`` and ``strides``, the thesis's "index constraining": the leading
    indices the operand lacks are dropped and each other one is taken modulo the operand's
    size, so a size-1 dimension always reads index 0. It equals ``flat_index`` with the
    operand's ``broadcast_strides``; the modulo is only right for shapes that broadcast
    (checked here), since an operand of size 2 under an index of size 4 would be tiled."""
    out_index, shape, strides = tuple(out_index), tuple(shape), tuple(strides)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in out_index + shape + strides + (offset,)):
        raise TypeError(f"constrained_flat_index: expected ints, got index {out_index}, shape "
                        f"{shape}, strides {strides}, offset {offset!r}")
    if len(strides) != len(shape) or len(out_index) < len(shape) or min(shape, default=1) < 1:
        raise ValueError(f"constrained_flat_index: an index of {len(out_index)} dimensions cannot "
                         f"read an operand of shape {shape} with strides {strides} (expected "
                         f"positive sizes, one stride per size and at most as many dimensions "
                         f"as the index)")
    lead = len(out_index) - len(shape)
    for d, (i, size) in enumerate(zip(out_index[lead:], shape)):
        if i < 0:
            raise ValueError(f"constrained_flat_index: negative index {out_index}")
        if size != 1 and i >= size:
            raise ValueError(f"constrained_flat_index: index {out_index} does not broadcast to "
                             f"shape {shape}: {i} is beyond size {size} in dimension {d}")
    return offset + sum((i % size) * stride
                        for i, size, stride in zip(out_index[lead:], shape, strides))
