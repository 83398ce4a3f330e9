"""Recurrent cells in one pass each, PyTorch's _thnn_fused_lstm_cell and _thnn_fused_gru_cell
(recurrent_cells.py's Functions; the python device's loops are the definition). A cell's
matrix products, input_gates = x W_ih^T and hidden_gates = h W_hh^T, (B, k * H) each with k
gates per hidden unit, are matmul's; the kernel adds them and the biases (k * H values each,
both or neither), applies the gates' activations (ops.py's sigmoid and tanh) and forms the
new state, one hidden unit at a time. The gates of unit j sit at columns j, H + j, ...,
(k - 1) * H + j, in PyTorch's order: LSTM i, f, g, o; GRU r, z, n."""
from ..contracts import differ
from . import kernel


def _cell(kernel_name, gates, input_gates, hidden_gates, state, input_bias, hidden_bias):
    """A cell's operands: state (B, H), input_gates and hidden_gates (B, gates * H), the
    biases gates * H values each, or both None."""
    if len(state.shape) != 2:
        raise ValueError(f"{kernel_name}: the state must be (B, H), got shape {tuple(state.shape)}")
    batch, hidden = state.shape
    differ(kernel_name, "input_gates", input_gates.shape, (batch, gates * hidden))
    differ(kernel_name, "hidden_gates", hidden_gates.shape, (batch, gates * hidden))
    if (input_bias is None) != (hidden_bias is None):
        raise ValueError(f"{kernel_name}: input_bias and hidden_bias go together: both or neither")
    if input_bias is not None:
        differ(kernel_name, "input_bias", input_bias.shape, (gates * hidden,))
        differ(kernel_name, "hidden_bias", hidden_bias.shape, (gates * hidden,))
    return batch, hidden


def _bias(kernel_name, bias):
    if type(bias) is not bool:
        raise ValueError(f"{kernel_name}: bias must be a bool (whether to sum the bias gradients), got {bias!r}")


@kernel("state, workspace", float_only=True,
        sizes=lambda input_gates, hidden_gates, cx, *_: {"batch": cx.shape[0], "hidden": cx.shape[1]},
        native="i64 batch, i64 hidden, const T *input_gates, const T *hidden_gates, const T *cx, "
               "const T *input_bias, const T *hidden_bias, T *state, T *workspace")
def lstm_cell(input_gates: "dense", hidden_gates: "dense", cx: "dense", input_bias: "dense?",
              hidden_bias: "dense?", dtype: "dtype"):
    """An LSTM cell: gates = (input_gates + input_bias) + (hidden_gates + hidden_bias) (B,
    4H), i, f, o their sigmoids and g the tanh of theirs; cy = f * cx + i * g, hy = o * tanh(cy).
    state (2, B, H) holds hy, then cy (one buffer, so that one autograd node owns both);
    workspace (B, 4H) the activated gates i, f, g, o, as PyTorch's."""
    batch, hidden = _cell("lstm_cell", 4, input_gates, hidden_gates, cx, input_bias, hidden_bias)
    return [((2, batch, hidden), dtype), ((batch, 4 * hidden), dtype)]


@kernel("dgates, dcx, dbias?", float_only=True,
        sizes=lambda grad, cx, *_: {"batch": cx.shape[0], "hidden": cx.shape[1]},
        native="i64 batch, i64 hidden, const T *grad, const T *cx, const T *workspace, T *dgates, T *dcx, T *dbias")
def lstm_cell_backward(grad: "dense", cx: "dense", workspace: "dense", bias: "bool", dtype: "dtype"):
    """lstm_cell's gradients from grad (2, B, H), hy's then cy's, with cy and tanh(cy)
    computed again from cx and the workspace: dc = grad_hy * o * (1 - tanh(cy)^2) + grad_cy;
    dgates (B, 4H) the gradient of the gates before their activations, di = dc * g * i (1 -
    i), df = dc * cx * f (1 - f), dg = dc * i * (1 - g^2), do = grad_hy * tanh(cy) * o (1 -
    o) (both inputs' and both biases' gradient); dcx = dc * f; dbias (4H,) the sum of
    dgates' rows, or None unless bias."""
    if len(cx.shape) != 2:
        raise ValueError(f"lstm_cell_backward: cx must be (B, H), got shape {tuple(cx.shape)}")
    batch, hidden = cx.shape
    differ("lstm_cell_backward", "grad", grad.shape, (2, batch, hidden))
    differ("lstm_cell_backward", "workspace", workspace.shape, (batch, 4 * hidden))
    _bias("lstm_cell_backward", bias)
    gates = ((batch, 4 * hidden), dtype)
    return [gates, ((batch, hidden), dtype), ((4 * hidden,), dtype) if bias else None]


@kernel("hy, workspace", float_only=True,
        sizes=lambda input_gates, hidden_gates, hx, *_: {"batch": hx.shape[0], "hidden": hx.shape[1]},
        native="i64 batch, i64 hidden, const T *input_gates, const T *hidden_gates, const T *hx, "
               "const T *input_bias, const T *hidden_bias, T *hy, T *workspace")
def gru_cell(input_gates: "dense", hidden_gates: "dense", hx: "dense", input_bias: "dense?", hidden_bias: "dense?",
             dtype: "dtype"):
    """A GRU cell on gates (B, 3H) r, z, n, each input's with its bias: r = sigmoid(i_r +
    h_r), z = sigmoid(i_z + h_z), n = tanh(i_n + r * h_n), hy = n + z * (hx - n) (that is
    (1 - z) * n + z * hx, as PyTorch computes it). workspace (B, 5H): r, z, n, hx and h_n,
    as PyTorch's."""
    batch, hidden = _cell("gru_cell", 3, input_gates, hidden_gates, hx, input_bias, hidden_bias)
    return [((batch, hidden), dtype), ((batch, 5 * hidden), dtype)]


@kernel("dinput_gates, dhidden_gates, dhx, dinput_bias?, dhidden_bias?", float_only=True,
        sizes=lambda grad, *_: {"batch": grad.shape[0], "hidden": grad.shape[1]},
        native="i64 batch, i64 hidden, const T *grad, const T *workspace, T *dinput_gates, T *dhidden_gates, "
               "T *dhx, T *dinput_bias, T *dhidden_bias")
def gru_cell_backward(grad: "dense", workspace: "dense", bias: "bool", dtype: "dtype"):
    """gru_cell's gradients from grad (B, H) and the workspace: dn = grad * (1 - z) * (1 -
    n^2), dz = grad * (hx - n) * z (1 - z), dr = dn * h_n * r (1 - r); dinput_gates (B, 3H)
    is (dr, dz, dn), dhidden_gates (dr, dz, dn * r); dhx = grad * z; dinput_bias and
    dhidden_bias (3H,) the sums of their rows, or None unless bias."""
    if len(grad.shape) != 2:
        raise ValueError(f"gru_cell_backward: grad must be (B, H), got shape {tuple(grad.shape)}")
    batch, hidden = grad.shape
    differ("gru_cell_backward", "workspace", workspace.shape, (batch, 5 * hidden))
    _bias("gru_cell_backward", bias)
    gates = ((batch, 3 * hidden), dtype)
    biases = [((3 * hidden,), dtype)] * 2 if bias else [None, None]
    return [gates, gates, ((batch, hidden), dtype)] + biases
