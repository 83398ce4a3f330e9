"""One time step of a recurrent network: PyTorch's nn.RNNCell, nn.LSTMCell and nn.GRUCell,
and the step's math that nn.RNN, nn.LSTM and nn.GRU (recurrent.py) run at every step.

Each kind's math is one small function of gates already multiplied out,
x_gates = x W_ih^T + b_ih and h_gates = h W_hh^T + b_hh: a layer multiplies its whole input
sequence by W_ih at once, and only the hidden state's product has to wait for the step
before. On device "python" the LSTM's and GRU's math runs as written here, with
operations (the definition, which autograd can also differentiate twice); on the other
devices as one fused kernel each way (stage2_tensor/recurrent_cells.py: PyTorch's
_thnn_fused_lstm_cell and _thnn_fused_gru_cell), which computes the same.
"""
import math

from ..factories import empty, zeros
from ..recurrent_cells import fused_gru_cell, fused_lstm_cell
from ..tensor import Tensor
from . import functional as F
from . import init
from .modules import Module, Parameter


def rnn_cell(x_gates, h_gates, nonlinearity="tanh"):
    """Elman's step: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh), or relu."""
    pre = x_gates + h_gates
    return pre.relu() if nonlinearity == "relu" else pre.tanh()


def lstm_cell(x_gates, h_gates, c):
    """The LSTM's step (Hochreiter and Schmidhuber), its gates in PyTorch's order i, f, g, o:

        i, f, o = sigmoid(...)   how much to write, keep and show
        g = tanh(...)            what to write
        c' = f * c + i * g       the cell is added to, not multiplied by a weight matrix at
                                 every step, so its gradient can cross many steps
        h' = o * tanh(c')

    Returns (h', c')."""
    if x_gates.device != "python":
        return fused_lstm_cell(x_gates, h_gates, c)
    i, f, g, o = (x_gates + h_gates).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def gru_cell(x_gates, h_gates, h):
    """The GRU's step (Cho et al.), its gates in PyTorch's order r, z, n:

        r = sigmoid(x_r + h_r), z = sigmoid(x_z + h_z)
        n = tanh(x_n + r * h_n)    h_n holds b_hn, so the reset gate scales it too
        h' = (1 - z) * n + z * h   computed as n + z * (h - n)"""
    if x_gates.device != "python":
        return fused_gru_cell(x_gates, h_gates, h)
    x_r, x_z, x_n = x_gates.chunk(3, 1)
    h_r, h_z, h_n = h_gates.chunk(3, 1)
    r, z = (x_r + h_r).sigmoid(), (x_z + h_z).sigmoid()
    n = (x_n + r * h_n).tanh()
    return n + z * (h - n)


def step(mode, x_gates, state, w_hh, b_hh, w_hr=None):
    """One time step of a layer of kind ``mode`` ("RNN_TANH", "RNN_RELU", "LSTM", "GRU"):
    state (h,), or (h, c) for the LSTM, to the next. An LSTM with projections (w_hr, PyTorch's
    proj_size) carries h' W_hr^T as its hidden state."""
    h_gates = F.linear(state[0], w_hh, b_hh)
    if mode == "LSTM":
        h, c = lstm_cell(x_gates, h_gates, state[1])
        return (h if w_hr is None else F.linear(h, w_hr)), c
    if mode == "GRU":
        return (gru_cell(x_gates, h_gates, state[0]),)
    return (rnn_cell(x_gates, h_gates, "relu" if mode == "RNN_RELU" else "tanh"),)


# ---- the cells as modules -----------------------------------------------------------------
class RNNCellBase(Module):
    """The parameters of a cell, as PyTorch names and shapes them: weight_ih
    (gates * hidden_size, input_size), weight_hh (gates * hidden_size, hidden_size), and
    with ``bias`` bias_ih and bias_hh (gates * hidden_size,), all uniform on
    [-1/sqrt(hidden_size), 1/sqrt(hidden_size)]."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(empty((gates, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(empty((gates, hidden_size), dtype=dtype, device=device))
        self.bias_ih = Parameter(empty((gates,), dtype=dtype, device=device)) if bias else None
        self.bias_hh = Parameter(empty((gates,), dtype=dtype, device=device)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, name, input, hiddens, hidden_names):
        """PyTorch's checks of a cell's call; returns the input and the hidden states
        (zeros where None) as 2-D (batch, size) tensors, and whether the input was batched.
        ``hidden_names`` name the states in the messages ("hidden" or "hx[0]", "hx[1]")."""
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for hidden_name, h in zip(hidden_names, hiddens or ()):
            if not isinstance(h, Tensor):
                raise TypeError(f"{name}: {hidden_name} must be a Tensor, got {type(h).__name__}")
            if h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {hidden_name} to be 1D or 2D, got {h.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hiddens is None:
            hiddens = [zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)] * len(hidden_names)
        elif not batched:
            hiddens = [h.unsqueeze(0) for h in hiddens]
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        for label, h in enumerate(hiddens):
            if h.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{label} batch size "
                                   f"{h.shape[0]}")
            if h.dim() < 2 or h.shape[1] != self.hidden_size:
                got = h.shape[1] if h.dim() >= 2 else "none (a 1-D hidden state for a 2-D input)"
                raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {got}, expected "
                                   f"{self.hidden_size}")
            if h.dim() != 2:
                raise RuntimeError(f"hidden{label} must be 2-D (batch, hidden_size), got shape {h.shape}")
        for t in (input, *hiddens):
            if t.dtype != self.weight_ih.dtype:
                raise RuntimeError(f"{name}: input and hidden states of dtype {t.dtype} do not match the "
                                   f"weights' dtype {self.weight_ih.dtype}; convert them with "
                                   f".to({self.weight_ih.dtype}) or the module with .to({t.dtype})")
        return input, hiddens, batched

    def _gates(self, input, h):
        return F.linear(input, self.weight_ih, self.bias_ih), F.linear(h, self.weight_hh, self.bias_hh)


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (``nonlinearity="relu"``: relu) for
    input (batch, input_size) or unbatched (input_size,); h zeros when not given."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (hx,), batched = self._prepare("RNNCell", input, None if hx is None else (hx,), ("hidden",))
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        h = rnn_cell(*self._gates(input, hx), self.nonlinearity)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step (lstm_cell): (input, (h, c)) -> (h', c'), gates i, f, g, o; (h, c)
    zeros when not given."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTMCell: hx must be a tuple (h, c) of two Tensors, got {type(hx).__name__}")
        input, (h, c), batched = self._prepare("LSTMCell", input, hx, ("hx[0]", "hx[1]"))
        h, c = lstm_cell(*self._gates(input, h), c)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gru_cell): (input, h) -> h', gates r, z, n; h zeros when not given."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (hx,), batched = self._prepare("GRUCell", input, None if hx is None else (hx,), ("hidden",))
        h = gru_cell(*self._gates(input, hx), hx)
        return h if batched else h.squeeze(0)
