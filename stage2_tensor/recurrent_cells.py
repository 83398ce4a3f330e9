"""One time step of an LSTM or a GRU as one kernel each way: PyTorch's fused cells,
torch._thnn_fused_lstm_cell and torch._thnn_fused_gru_cell, which nn.LSTM and nn.GRU call
at every step (``fused_lstm_cell``, ``fused_gru_cell`` here).

A cell's matrix products, input_gates = x W_ih^T and hidden_gates = h W_hh^T, are matmul's.
What follows them is element-wise: written with operations, an LSTM step adds the products
and the biases, cuts the gates apart, applies three sigmoids and two tanhs and forms the new
state with three products and a sum, about a dozen operations forward and twice as many
backward, each reading and writing a (B, H) or (B, 4H) tensor. The device's ``lstm_cell``
and ``gru_cell`` kernels (kernels/recurrent.py) do it in one pass over the gates, and their
backward kernels in one pass back, with the activated gates they kept (the workspace).

A GradientFunction has one output (linalg/factored.py); an LSTM cell has two, hy and cy.
The kernel writes them into one buffer, state (2, B, H), and hy and cy are its halves, so a
gradient reaching either reaches this function. The gradients are computed by kernels that
autograd does not record: a second derivative through a cell stops with an error
(backward.py, create_graph).
"""
from . import backend as backends
from .gradient_function import GradientFunction
from .tensor import Tensor


class LSTMCell(GradientFunction):
    """state (2, B, H), hy then cy, from the gates (B, 4H) i, f, g, o and cx (B, H):
    cy = f * cx + i * g, hy = o * tanh(cy). The gradient of both products' gates is one,
    and both biases' gradient the sum of its rows."""

    def forward(self, input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
        (batch, hidden), dtype, device = cx.shape, cx.dtype, cx.device
        self.biased = input_bias is not None
        state, workspace = backends.launch(
            device, "lstm_cell", input_gates.as_view(), hidden_gates.as_view(), cx.as_view(),
            *(None if b is None else b.as_view() for b in (input_bias, hidden_bias)), dtype, out_dtype=dtype)
        self.workspace = Tensor.from_buffer(workspace, (batch, 4 * hidden), dtype, device)
        self.save_for_backward(cx, self.workspace)
        return Tensor.from_buffer(state, (2, batch, hidden), dtype, device)

    def backward(self, grad):
        cx, workspace = self.saved_tensors
        bias = self.biased and any(self.needs_input_grad[3:])
        dgates, dcx, dbias = backends.launch(cx.device, "lstm_cell_backward", grad.as_view(), cx.as_view(),
                                             workspace.as_view(), bias, cx.dtype, out_dtype=cx.dtype)
        dgates = Tensor.from_buffer(dgates, workspace.shape, cx.dtype, cx.device)
        grads = (dgates, dgates, Tensor.from_buffer(dcx, cx.shape, cx.dtype, cx.device))
        if not self.biased:
            return grads
        dbias = Tensor.from_buffer(dbias, workspace.shape[1:], cx.dtype, cx.device) if bias else None
        return grads + (dbias, dbias)


class GRUCell(GradientFunction):
    """hy (B, H) from the gates (B, 3H) r, z, n and hx (B, H): n = tanh(i_n + r * h_n),
    hy = n + z * (hx - n). The two products' gates differ in their n part (h_n is
    multiplied by r), so each input, and each bias, has its own gradient."""

    def forward(self, input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
        (batch, hidden), dtype, device = hx.shape, hx.dtype, hx.device
        self.biased = input_bias is not None
        hy, workspace = backends.launch(
            device, "gru_cell", input_gates.as_view(), hidden_gates.as_view(), hx.as_view(),
            *(None if b is None else b.as_view() for b in (input_bias, hidden_bias)), dtype, out_dtype=dtype)
        self.workspace = Tensor.from_buffer(workspace, (batch, 5 * hidden), dtype, device)
        self.save_for_backward(self.workspace)
        return Tensor.from_buffer(hy, (batch, hidden), dtype, device)

    def backward(self, grad):
        (workspace,) = self.saved_tensors
        dtype, device = workspace.dtype, workspace.device
        bias = self.biased and any(self.needs_input_grad[3:])
        dinput, dhidden, dhx, dinput_bias, dhidden_bias = backends.launch(
            device, "gru_cell_backward", grad.as_view(), workspace.as_view(), bias, dtype, out_dtype=dtype)
        gates = (grad.shape[0], 3 * grad.shape[1])
        grads = tuple(Tensor.from_buffer(b, shape, dtype, device)
                      for b, shape in ((dinput, gates), (dhidden, gates), (dhx, grad.shape)))
        if not self.biased:
            return grads
        return grads + tuple(Tensor.from_buffer(b, gates[1:], dtype, device) if bias else None
                             for b in (dinput_bias, dhidden_bias))


def _check(fn, gates, input_gates, hidden_gates, state, state_name, input_bias, hidden_bias):
    """PyTorch's checks of a fused cell's operands (RuntimeError, as its): tensors of one
    floating-point dtype and one device; state (B, H), both products (B, gates * H), the
    biases gates * H values each, or both None."""
    named = [("input_gates", input_gates), ("hidden_gates", hidden_gates), (state_name, state),
             ("input_bias", input_bias), ("hidden_bias", hidden_bias)]
    for name, t in named:
        if not (isinstance(t, Tensor) or (t is None and "bias" in name)):
            raise TypeError(f"{fn}: {name} must be a tensor{' or None' if 'bias' in name else ''}, "
                            f"got {type(t).__name__}")
    if state.ndim != 2:
        raise RuntimeError(f"{fn}: {state_name} must be 2-d (B, H), got shape {state.shape}")
    batch, hidden = state.shape
    for name, t in named[:2]:
        if t.shape != (batch, gates * hidden):
            raise RuntimeError(f"{fn}: {name} has shape {t.shape}, expected ({batch}, {gates * hidden}): "
                               f"(B, {gates} * H) for {state_name} of shape {state.shape}")
    if (input_bias is None) != (hidden_bias is None):
        raise RuntimeError(f"{fn}: input_bias and hidden_bias go together: pass both or neither")
    for name, t in named[3:]:
        if t is not None and t.shape != (gates * hidden,):
            raise RuntimeError(f"{fn}: {name} has shape {t.shape}, expected ({gates * hidden},): {gates} * H "
                               f"values for {state_name} of shape {state.shape}")
    if not input_gates.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: expected floating-point tensors, got input_gates of dtype {input_gates.dtype}")
    for name, t in named[1:]:
        if t is not None and t.dtype is not input_gates.dtype:
            raise RuntimeError(f"{fn}: expected every tensor of input_gates' dtype {input_gates.dtype}, "
                               f"got {name} of dtype {t.dtype}")
        if t is not None and t.device != input_gates.device:
            raise RuntimeError(f"{fn}: expected every tensor on input_gates' device {input_gates.device!r}, "
                               f"got {name} on {t.device!r}")


def _run(cls, *args):
    """The cell's output, linked into the graph, and its workspace."""
    fn = cls()
    out = fn.link(fn.forward(*args), tuple(a for a in args if a is not None))
    return out, fn.workspace


def _lstm(fn, input_gates, hidden_gates, cx, input_bias, hidden_bias):
    _check(fn, 4, input_gates, hidden_gates, cx, "cx", input_bias, hidden_bias)
    state, workspace = _run(LSTMCell, input_gates, hidden_gates, cx, input_bias, hidden_bias)
    return state[0], state[1], workspace


def fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    """One LSTM step, (hy, cy): gates = input_gates + hidden_gates + input_bias +
    hidden_bias ((B, 4H) products x W_ih^T and h W_hh^T; (4H,) biases, both or neither),
    cut into i, f, g, o (PyTorch's order); i, f, o = sigmoid, g = tanh; cy = f * cx + i *
    g, hy = o * tanh(cy), for cx (B, H)."""
    hy, cy, _ = _lstm("fused_lstm_cell", input_gates, hidden_gates, cx, input_bias, hidden_bias)
    return hy, cy


def _thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    """torch._thnn_fused_lstm_cell: fused_lstm_cell's (hy, cy) and the workspace (B, 4H),
    the activated gates i, f, g, o."""
    return _lstm("_thnn_fused_lstm_cell", input_gates, hidden_gates, cx, input_bias, hidden_bias)


def _gru(fn, input_gates, hidden_gates, hx, input_bias, hidden_bias):
    _check(fn, 3, input_gates, hidden_gates, hx, "hx", input_bias, hidden_bias)
    return _run(GRUCell, input_gates, hidden_gates, hx, input_bias, hidden_bias)


def fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    """One GRU step, hy: with each product's gates (B, 3H) plus its bias (3H,; both or
    neither) cut into r, z, n (PyTorch's order), r = sigmoid(i_r + h_r), z = sigmoid(i_z +
    h_z), n = tanh(i_n + r * h_n), hy = (1 - z) * n + z * hx, for hx (B, H)."""
    return _gru("fused_gru_cell", input_gates, hidden_gates, hx, input_bias, hidden_bias)[0]


def _thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    """torch._thnn_fused_gru_cell: (hy, workspace), the workspace (B, 5H) r, z, n, hx and
    h_n (the hidden product's n part with its bias)."""
    return _gru("_thnn_fused_gru_cell", input_gates, hidden_gates, hx, input_bias, hidden_bias)
