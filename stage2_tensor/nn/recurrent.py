"""Recurrent networks, PyTorch's nn.RNN, nn.LSTM and nn.GRU: a model for sequential data
that reads one step at a time and carries what it has read in a hidden state,
h_t = cell(x_t, h_{t-1}), with the same weights at every step.

Training one is backpropagation through time: the loop over the steps below is recorded like
any other computation, and the backward pass walks it back from the last step to the first.
The gradient that reaches step 1 from step T has been multiplied by the recurrent weights'
Jacobian T - 1 times, so it tends to vanish (or explode) over long sequences; the LSTM's and
GRU's gates (recurrent_cells.py) add to their state instead of multiplying it, which lets
gradients cross more steps. The transformer (transformer.py) replaced them mostly for another
reason: each step here waits for the one before, while attention treats every position of a
sequence at once.

Layout as PyTorch: input (T, B, input_size), or (B, T, input_size) with ``batch_first``, or
unbatched (T, input_size), or a PackedSequence (nn.utils.rnn) of sequences of several
lengths; the states (num_layers * num_directions, B, hidden_size), layer by layer, the
reverse direction after the forward one. Each layer multiplies its whole input by W_ih at
once; per step only h W_hh^T and the cell's math (recurrent_cells.step) remain.
"""
import math
import numbers
import warnings

from ..concat import cat, stack
from ..factories import empty, zeros
from ..tensor import Tensor
from . import functional as F
from . import init
from .modules import Module, Parameter
from .recurrent_cells import step
from .utils.rnn import PackedSequence, batch_sizes_of

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the settings, PyTorch's parameters (named
    weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, weight_hr_l{k} for an LSTM
    with proj_size, "_reverse" appended for the second direction, registered in that
    order), the checks of a call, and the stack of layers."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        _check_settings(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero "
                          "dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        directions = 2 if bidirectional else 1
        gates, out_size = _GATES[mode] * hidden_size, proj_size or hidden_size
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else out_size * directions
            for direction in range(directions):
                shapes = {"weight_ih": (gates, layer_input), "weight_hh": (gates, out_size)}
                if bias:
                    shapes.update(bias_ih=(gates,), bias_hh=(gates,))
                if proj_size:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = [f"{kind}_l{layer}{'_reverse' if direction else ''}" for kind in shapes]
                for name, shape in zip(names, shapes.values()):
                    setattr(self, name, Parameter(empty(shape, dtype=dtype, device=device)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        """Every parameter uniform on [-1/sqrt(hidden_size), 1/sqrt(hidden_size)], as PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters, a list per layer and direction, as PyTorch's all_weights."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """PyTorch packs the weights into one cuDNN buffer here; nothing to do without cuDNN."""

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- a call -----------------------------------------------------------------------------
    def forward(self, input, hx=None):
        """(output, h_n), or for the LSTM (output, (h_n, c_n)): output holds the last layer's
        hidden state at every step, (T, B, D * out_size) in the input's layout (a
        PackedSequence for a packed input), h_n (and c_n) every layer's at the last step,
        (num_layers * D, B, size); for a packed input each sequence's own last step."""
        lstm = self.mode == "LSTM"
        if isinstance(input, PackedSequence):
            data, batch_sizes_tensor, sorted_indices, unsorted_indices = input
            batch_sizes, batched = batch_sizes_of(input), True
        else:
            if not isinstance(input, Tensor):
                raise TypeError(f"{self._name}: input must be a Tensor or a PackedSequence, got "
                                f"{type(input).__name__}")
            if input.dim() not in (2, 3):
                raise ValueError(f"{self._name}: Expected input to be 2D or 3D, got {input.dim()}D"
                                 f"{' tensor' if self._name == 'RNN' else ''} instead")
            batched = input.dim() == 3
            data = input if batched else input.unsqueeze(0 if self.batch_first else 1)
            if self.batch_first:
                data = data.transpose(0, 1)
            batch_sizes = [data.shape[1]] * data.shape[0]
            sorted_indices = unsorted_indices = None
        packed = isinstance(input, PackedSequence)
        states = self._initial_states(data, hx, batched, packed, batch_sizes)
        self._check_call(data, states, packed, batch_sizes)
        if sorted_indices is not None:
            states = [s.index_select(1, sorted_indices) for s in states]
        output, finals = self._layers(data, states, batch_sizes, packed)
        if unsorted_indices is not None:
            finals = [s.index_select(1, unsorted_indices) for s in finals]
        if packed:
            output = PackedSequence(output, batch_sizes_tensor, sorted_indices, unsorted_indices)
        else:
            output = output.transpose(0, 1) if self.batch_first else output
            if not batched:
                output = output.squeeze(0 if self.batch_first else 1)
                finals = [s.squeeze(1) for s in finals]
        return output, (tuple(finals) if lstm else finals[0])

    @property
    def _name(self):
        return "RNN" if self.mode.startswith("RNN") else self.mode

    def _state_sizes(self):
        """The sizes of the states' last dimension: (h,), or (h, c) for the LSTM."""
        if self.mode == "LSTM":
            return (self.proj_size or self.hidden_size, self.hidden_size)
        return (self.hidden_size,)

    def _initial_states(self, data, hx, batched, packed, batch_sizes):
        """The initial states as a list of 3-D tensors: hx's (checked for its number of
        dimensions, unbatched ones given their batch dimension) or zeros."""
        sizes = self._state_sizes()
        if hx is None:
            layers = self.num_layers * (2 if self.bidirectional else 1)
            batch = batch_sizes[0] if batch_sizes else data.shape[1]
            return [zeros(layers, batch, size, dtype=data.dtype, device=data.device) for size in sizes]
        lstm = self.mode == "LSTM"
        if lstm and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTM: hx must be a tuple (h_0, c_0) of two Tensors, got {type(hx).__name__}")
        states = list(hx) if lstm else [hx]
        for s in states:
            if not isinstance(s, Tensor):
                raise TypeError(f"{self._name}: the initial hidden state must be a Tensor, got {type(s).__name__}")
        if packed:
            return states
        want = 3 if batched else 2
        if any(s.dim() != want for s in states):
            kind = "batched 3-D" if batched else "unbatched 2-D"
            if lstm:
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({states[0].dim()}-D, {states[1].dim()}-D) tensors")
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {states[0].dim()}-D tensor")
        return states if batched else [s.unsqueeze(1) for s in states]

    def _check_call(self, data, states, packed, batch_sizes):
        """PyTorch's check_forward_args: the input's dtype, dimensions and size, then each
        state's shape."""
        weight = self.weight_ih_l0
        if data.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({data.dtype}) does not match weight dtype ({weight.dtype}). "
                             f"Convert input: input.to({weight.dtype}), or convert model: model.to({data.dtype})")
        want = 2 if packed else 3
        if data.dim() != want:
            raise RuntimeError(f"input must have {want} dimensions, got {data.dim()}")
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {data.shape[-1]}")
        if not batch_sizes:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        layers = self.num_layers * (2 if self.bidirectional else 1)
        for i, (s, size) in enumerate(zip(states, self._state_sizes())):
            expected = (layers, batch_sizes[0], size)
            if tuple(s.shape) != expected:
                which = f"hidden[{i}] size" if self.mode == "LSTM" else "hidden size"
                raise RuntimeError(f"Expected {which} {expected}, got {list(s.shape)}")
            if s.dtype != data.dtype:
                raise RuntimeError(f"{self._name}: the initial state's dtype {s.dtype} does not match the "
                                   f"input's {data.dtype}")

    # ---- the layers ---------------------------------------------------------------------
    def _layers(self, data, states, batch_sizes, packed):
        """Run the stack on data (T, B, F), or packed rows (N, F) whose step t holds
        batch_sizes[t] rows; dropout between layers while training. Returns the last layer's
        output, in data's layout, and the final states, each (layers * D, B, size)."""
        directions = 2 if self.bidirectional else 1
        finals, x = [], data
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                w_ih, w_hh, *rest = self.all_weights[index]
                b_ih, b_hh = rest[:2] if self.bias else (None, None)
                w_hr = rest[-1] if self.proj_size else None
                x_gates = F.linear(x, w_ih, b_ih)
                steps = list(x_gates.split(batch_sizes, 0) if packed else x_gates.unbind(0))
                initial = tuple(s[index] for s in states)
                run = _backward_in_time if direction else _forward_in_time
                out, final = run(self.mode, steps, batch_sizes, initial, w_hh, b_hh, w_hr)
                outputs.append(cat(out, 0) if packed else stack(out, 0))
                finals.append(final)
            x = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, [stack([f[k] for f in finals], 0) for k in range(len(states))]


def _forward_in_time(mode, steps, batch_sizes, state, w_hh, b_hh, w_hr):
    """Steps 0, 1, ..., T-1. A packed batch shrinks as sequences end (sorted longest
    first): the rows of the ones that ended are set aside as their final state. Returns
    (each step's h, the final state with the batch's rows in order)."""
    outputs, ended = [], []
    for t, x_gates in enumerate(steps):
        rows = batch_sizes[t]
        if rows < state[0].shape[0]:
            ended.append(tuple(s[rows:] for s in state))
            state = tuple(s[:rows] for s in state)
        state = step(mode, x_gates, state, w_hh, b_hh, w_hr)
        outputs.append(state[0])
    if ended:
        state = tuple(cat([s, *(e[k] for e in reversed(ended))], 0) for k, s in enumerate(state))
    return outputs, state


def _backward_in_time(mode, steps, batch_sizes, initial, w_hh, b_hh, w_hr):
    """Steps T-1, ..., 0, the reverse direction. A packed batch grows as it goes back:
    a sequence joins at its own last step, with its initial state. Returns (each step's h in
    time order, the final state)."""
    state = tuple(s[:batch_sizes[-1]] for s in initial)
    outputs = [None] * len(steps)
    for t in reversed(range(len(steps))):
        rows, have = batch_sizes[t], state[0].shape[0]
        if rows > have:
            state = tuple(cat([s, s0[have:rows]], 0) for s, s0 in zip(state, initial))
        state = step(mode, steps[t], state, w_hh, b_hh, w_hr)
        outputs[t] = state[0]
    return outputs, state


def _check_settings(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size):
    """PyTorch's checks of RNNBase's arguments, with its messages."""
    if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                         "element being zeroed")
    if not isinstance(bias, bool):
        raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
    if not isinstance(batch_first, bool):
        raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
    for name, value in (("input_size", input_size), ("hidden_size", hidden_size), ("num_layers", num_layers),
                        ("proj_size", proj_size)):
        if not isinstance(value, int):
            raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    if mode not in _GATES:
        raise ValueError("Unrecognized RNN mode: " + str(mode))


def _refuse_proj_size(kwargs):
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"unexpected keyword argument {next(iter(kwargs))!r}")


class RNN(RNNBase):
    """Elman's network: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), or relu
    (``nonlinearity``), layer upon layer."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _refuse_proj_size(kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size,
                         num_layers, bias, batch_first, dropout, bidirectional, device=device, dtype=dtype)


class LSTM(RNNBase):
    """Long short-term memory (recurrent_cells.lstm_cell) layer upon layer; hx and the
    returned state are pairs (h, c). With ``proj_size`` > 0 the hidden state h is projected
    to proj_size features by weight_hr at every step (the output too); c keeps hidden_size."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)


class GRU(RNNBase):
    """Gated recurrent units (recurrent_cells.gru_cell) layer upon layer."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, **kwargs):
        _refuse_proj_size(kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
