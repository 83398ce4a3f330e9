"""DepthToSpace and SpaceToDepth (chapter 13, "13_inference_compiler"): channels to blocks
of pixels and back, as a reshape, a permutation and a reshape."""
from . import register
from .common import count_inputs
from ..shapes import shape_of


def _blocksize(node, x):
    b = node.attr("blocksize")
    if not isinstance(b, int) or b < 1 or x.ndim != 4:
        raise ValueError(f"{node.describe()}: needs a positive blocksize and an (N, C, H, W) input, got "
                         f"{b!r}, {shape_of(x)}")
    return b


@register("DepthToSpace")
def depth_to_space(ctx, node, inputs):
    """Channels to b x b blocks: mode DCR (depth, column, row; the default) or CRD."""
    count_inputs(node, inputs, 1)
    x = ctx.tensor(inputs[0], node)
    b = _blocksize(node, x)
    n, c, h, w = shape_of(x)
    if c % (b * b):
        raise ValueError(f"{node.describe()}: {c} channels do not divide by blocksize^2 = {b * b}")
    if node.attr("mode", "DCR") == "CRD":
        y = x.reshape(n, c // (b * b), b, b, h, w).permute(0, 1, 4, 2, 5, 3)
    else:
        y = x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    return [y.reshape(n, c // (b * b), h * b, w * b)]


@register("SpaceToDepth")
def space_to_depth(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    x = ctx.tensor(inputs[0], node)
    b = _blocksize(node, x)
    n, c, h, w = shape_of(x)
    if h % b or w % b:
        raise ValueError(f"{node.describe()}: H, W = {h}, {w} do not divide by blocksize {b}")
    y = x.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
    return [y.reshape(n, c * b * b, h // b, w // b)]
