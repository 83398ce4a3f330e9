"""PyTorch's F.bilinear: y_o = x1^T W_o x2 + b_o for each output feature o, with weight W
of shape (out, in1, in2). One matrix product (x1 against W laid out as (in1, out * in2))
and a product summed over in2: the out * in1 * in2 multiply-adds per sample of PyTorch's.
"""
from .tensor import Tensor


def bilinear(input1, input2, weight, bias=None):
    for name, t in (("input1", input1), ("input2", input2), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"bilinear(): {name} must be a Tensor, got {type(t).__name__}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D (out_features, in1_features, in2_features), got "
                           f"shape {weight.shape}")
    o, i, j = weight.shape
    if input1.ndim == 0 or input1.shape[-1] != i:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1] if input1.ndim else 0} but expected {i}")
    if input2.ndim == 0 or input2.shape[-1] != j:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1] if input2.ndim else 0} but expected {j}")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {input1.shape[:-1]} and "
                           f"{input2.shape[:-1]}")
    if bias is not None and (not isinstance(bias, Tensor) or bias.shape != (o,)):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{getattr(bias, 'shape', type(bias).__name__)} but expected ({o},)")
    lead = input1.shape[:-1]
    left = input1.reshape(-1, i) @ weight.permute(1, 0, 2).reshape(i, o * j)       # (B, out * in2)
    y = (left.reshape(-1, o, j) * input2.reshape(-1, 1, j)).sum(-1)
    y = y if bias is None else y + bias
    return y.reshape(*lead, o)
