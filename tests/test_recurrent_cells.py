"""The fused recurrent cells (recurrent_cells.py; kernels/recurrent.py, csrc/recurrent.c,
cuda/recurrent.cu): each against the same cell written with tensor operations on every
device that has the kernels, in float32 within the bound their numerics give and in float64
(values and every gradient) to float64's rounding; the workspace PyTorch returns; every bad
operand refused before a kernel runs; no second derivative; and, where torch is installed,
against PyTorch's cells. The op table (optable.py) checks them against numpy and central
differences on every engine."""
import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import kernels
from stage2_tensor.backend import View
from stage2_tensor.strides import make_strides

from .engines import device_params

CELLS = device_params(kernel="lstm_cell")
MANY_ROWS = device_params("cpu", "cuda-emu", "cuda", kernel="lstm_cell")    # "cpu:lazy" runs "cpu"'s kernels
EPS32 = float(np.finfo(np.float32).eps)


def lstm_composite(ig, hg, cx, ib=None, hb=None):
    """The LSTM cell written with operations, in the kernels' order of additions."""
    x, h = (ig if ib is None else ig + ib), (hg if hb is None else hg + hb)
    i, f, g, o = (x + h).chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


def gru_composite(ig, hg, hx, ib=None, hb=None):
    """The GRU cell written with operations."""
    x, h = (ig if ib is None else ig + ib), (hg if hb is None else hg + hb)
    (xr, xz, xn), (hr, hz, hn) = x.chunk(3, 1), h.chunk(3, 1)
    r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return n + z * (hx - n)


def operands(rng, batch, hidden, gates, bias=True, scale=3.0):
    """input_gates, hidden_gates, the state and (or None) both biases, as float64 arrays."""
    shapes = [(batch, gates * hidden), (batch, gates * hidden), (batch, hidden)] + [(gates * hidden,)] * 2
    arrays = [rng.uniform(-scale, scale, size=s) for s in shapes]
    return arrays if bias else arrays[:3] + [None, None]


def tensors(arrays, device, dtype=tg.float64, grad=False):
    """Leaves of the arrays' shapes (an empty one's too), None for None."""
    return [None if a is None else tg.from_numpy(a).to(device=device, dtype=dtype).requires_grad_(grad)
            for a in arrays]


def float32_bound(arrays, gates):
    """How far a float32 cell may be from its composite, element by element. Both compute
    each unit by the same formulas: in float32 on the C and CUDA devices, where they differ
    only where the compiler contracts a product and a sum into one FMA; in double rounded
    once on the python device, where the composite rounds after every operation. So every
    difference is a rounding: each of the three of a gate's sum within eps/2 of its terms
    T (|x| + |h| + both biases), each later one, FMA's included, within eps/2 of a value at
    most 1 + |state| (the gates are at most 1, cy at most |cx| + 1); the activations are
    within 3 ulps (vmath.h) and their derivatives at most 1; the state multiplies what f
    (LSTM) or z (GRU) carries. Summed along the cell: eps * (2 + |state|) * (2 T + 8), T
    the unit's largest."""
    ig, hg, state, ib, hb = arrays
    terms = np.abs(ig) + np.abs(hg) + (0 if ib is None else np.abs(ib) + np.abs(hb))
    unit = terms.reshape(len(state), gates, -1).max(axis=1)
    return EPS32 * (2 + np.abs(state)) * (2 * unit + 8)


@pytest.mark.parametrize("device", CELLS)
@pytest.mark.parametrize("bias", [True, False])
def test_the_cells_compute_their_composites_in_float32(device, bias):
    rng = np.random.default_rng(0)
    for gates, fused, composite in ((4, tg.fused_lstm_cell, lstm_composite), (3, tg.fused_gru_cell, gru_composite)):
        arrays = [None if a is None else a.astype(np.float32) for a in operands(rng, 3, 5, gates, bias)]
        xs = tensors(arrays, device, tg.float32)
        got, want = fused(*xs), composite(*xs)
        bound = float32_bound(arrays, gates)
        for g, w in zip(*((got, want) if gates == 4 else ((got,), (want,)))):
            assert g.dtype is tg.float32 and g.device == device and g.shape == (3, 5)
            err = np.abs(g.numpy().astype(np.float64) - w.numpy())
            assert np.all(err <= bound), f"off by {err.max()}, more than {np.min(bound)}"


@pytest.mark.parametrize("device", CELLS)
@pytest.mark.parametrize("bias", [True, False])
def test_every_gradient_is_the_composites_in_float64(device, bias):
    rng = np.random.default_rng(1)
    for gates, fused, composite in ((4, tg.fused_lstm_cell, lstm_composite), (3, tg.fused_gru_cell, gru_composite)):
        arrays = operands(rng, 2, 3, gates, bias)
        results = []
        for fn in (fused, composite):
            xs = tensors(arrays, device, grad=True)
            outs = fn(*xs)
            outs = outs if isinstance(outs, tuple) else (outs,)
            up = np.random.default_rng(2)
            loss = sum((o * tg.tensor(up.normal(size=o.shape).tolist(), dtype=tg.float64, device=device)).sum()
                       for o in outs)
            loss.backward()
            results.append([o.detach().numpy() for o in outs] + [x.grad.numpy() for x in xs if x is not None])
        for got, want in zip(*results):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", CELLS)
def test_the_workspaces_are_pytorchs(device):
    """LSTM: the activated gates i, f, g, o; GRU: r, z, n, hx and h_n (with its bias)."""
    rng = np.random.default_rng(3)
    ig, hg, cx, ib, hb = arrays = operands(rng, 2, 3, 4)
    hy, cy, workspace = tg._thnn_fused_lstm_cell(*tensors(arrays, device))
    i, f, g, o = np.split((ig + ib) + (hg + hb), 4, axis=1)
    sigmoid = lambda x: 1 / (1 + np.exp(-x))              # noqa: E731
    np.testing.assert_allclose(workspace.numpy(), np.hstack([sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)]),
                               rtol=1e-12, atol=1e-12)
    assert not workspace.requires_grad and hy.is_contiguous() and cy.is_contiguous()
    ig, hg, hx, ib, hb = arrays = operands(rng, 2, 3, 3)
    hy, workspace = tg._thnn_fused_gru_cell(*tensors(arrays, device))
    (xr, xz, xn), (hr, hz, hn) = np.split(ig + ib, 3, axis=1), np.split(hg + hb, 3, axis=1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    np.testing.assert_allclose(workspace.numpy(), np.hstack([r, z, np.tanh(xn + r * hn), hx, hn]),
                               rtol=1e-12, atol=1e-12)


def many_rows_agree(device):
    """64 rows of 256 units: 65536 gates, enough for the C kernels' threads, and more units
    than the CUDA emulator's grid has threads; float64, so the fused cell and the composite
    agree to its rounding, values and gradients."""
    rng = np.random.default_rng(4)
    for gates, fused, composite in ((4, tg.fused_lstm_cell, lstm_composite), (3, tg.fused_gru_cell, gru_composite)):
        xs = tensors(operands(rng, 64, 256, gates), device, grad=True)
        results = []
        for fn in (fused, composite):
            out = tg.stack(fn(*xs)) if gates == 4 else fn(*xs)
            results.append([out.detach(), *tg.autograd.grad(out.square().sum(), xs)])
        for got, want in zip(*results):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-11)


@pytest.mark.parametrize("device", MANY_ROWS)
def test_many_rows(device):
    many_rows_agree(device)


@pytest.mark.parametrize("device", device_params("cpu"))
def test_many_rows_on_every_simd_level_and_thread_count(device, threads, simd_level):
    many_rows_agree(device)


@pytest.mark.parametrize("device", CELLS)
def test_no_rows_and_half_precision(device):
    """A batch of none gives empty states and zero bias gradients; float16 operands run on
    float32 copies and give float16 results (backend.py, "Half precision")."""
    ig, hg, cx, ib, hb = xs = tensors(operands(np.random.default_rng(5), 0, 2, 4), device, grad=True)
    hy, cy = tg.fused_lstm_cell(*xs)
    assert hy.shape == cy.shape == (0, 2)
    (hy.sum() + cy.sum()).backward()
    assert ib.grad.tolist() == hb.grad.tolist() == [0.0] * 8 and cx.grad.shape == (0, 2)
    arrays = operands(np.random.default_rng(6), 2, 3, 3)
    half = tg.fused_gru_cell(*tensors(arrays, device, tg.float16))
    single = tg.fused_gru_cell(*[t.to(tg.float16).to(tg.float32) for t in tensors(arrays, device, tg.float32)])
    assert half.dtype is tg.float16
    np.testing.assert_array_equal(half.numpy(), single.to(tg.float16).numpy())


@pytest.mark.parametrize("device", CELLS)
def test_a_second_derivative_is_refused(device):
    xs = tensors(operands(np.random.default_rng(7), 2, 2, 4), device, grad=True)
    hy, cy = tg.fused_lstm_cell(*xs)
    with pytest.raises(NotImplementedError, match="LSTMCell is computed by a kernel"):
        tg.autograd.grad((hy * cy).sum(), xs[0], create_graph=True)


def _lstm_args(**changes):
    rng = np.random.default_rng(8)
    args = dict(zip(("input_gates", "hidden_gates", "cx", "input_bias", "hidden_bias"),
                    tensors(operands(rng, 2, 3, 4), "python")))
    args.update(changes)
    return args


@pytest.mark.parametrize("changes, error, message", [
    (dict(cx=tg.zeros(2, 3, 1)), RuntimeError, r"cx must be 2-d \(B, H\), got shape \(2, 3, 1\)"),
    (dict(input_gates=tg.zeros(2, 11, dtype=tg.float64)), RuntimeError,
     r"input_gates has shape \(2, 11\), expected \(2, 12\): \(B, 4 \* H\) for cx of shape \(2, 3\)"),
    (dict(hidden_gates=tg.zeros(3, 12, dtype=tg.float64)), RuntimeError, r"hidden_gates has shape \(3, 12\)"),
    (dict(hidden_bias=None), RuntimeError, "input_bias and hidden_bias go together"),
    (dict(input_bias=tg.zeros(3, dtype=tg.float64)), RuntimeError, r"input_bias has shape \(3,\), expected \(12,\)"),
    (dict(cx=tg.zeros(2, 3)), RuntimeError, "got cx of dtype tracegrad.float32"),
    (dict(input_gates=tg.zeros(2, 12, dtype=tg.int64)), RuntimeError,
     "expected floating-point tensors, got input_gates of dtype tracegrad.int64"),
    (dict(hidden_gates=[[0.0] * 12] * 2), TypeError, "hidden_gates must be a tensor, got list"),
    (dict(input_bias=0.0), TypeError, "input_bias must be a tensor or None, got float"),
])
def test_bad_operands_are_refused_as_pytorch_refuses_them(changes, error, message):
    with pytest.raises(error, match=message):
        tg.fused_lstm_cell(**_lstm_args(**changes))


def test_a_gru_names_its_state_hx_and_three_gates():
    rng = np.random.default_rng(9)
    ig, hg, hx, ib, hb = tensors(operands(rng, 2, 3, 4), "python")     # LSTM's widths: 4 * H
    with pytest.raises(RuntimeError, match=r"_thnn_fused_gru_cell: input_gates has shape \(2, 12\), expected "
                                           r"\(2, 9\): \(B, 3 \* H\) for hx of shape \(2, 3\)"):
        tg._thnn_fused_gru_cell(ig, hg, hx, ib, hb)


@pytest.mark.parametrize("device", device_params("cpu", "cuda-emu", "cuda", kernel="lstm_cell"))
def test_two_devices_are_refused(device):
    import stage3_native  # noqa: F401
    args = _lstm_args()
    args["cx"] = args["cx"].to(device)
    with pytest.raises(RuntimeError, match="expected every tensor on input_gates' device 'python', got cx on"):
        tg.fused_lstm_cell(**args)


def _view(shape):
    return View(None, shape, make_strides(shape), 0, tg.float32)


@pytest.mark.parametrize("call, message", [
    (("lstm_cell", _view((2, 8)), _view((2, 8)), _view((2, 3)), None, None, tg.float32), r"input_gates has shape"),
    (("lstm_cell", _view((2, 8)), _view((2, 8)), _view((2, 2)), _view((8,)), None, tg.float32), "both or neither"),
    (("lstm_cell_backward", _view((2, 2)), _view((2, 2)), _view((2, 8)), False, tg.float32), r"grad has shape"),
    (("lstm_cell_backward", _view((2, 2, 2)), _view((2, 2)), _view((2, 8)), 1, tg.float32), "bias must be a bool"),
    (("gru_cell", _view((2, 6)), _view((2, 6)), _view((2,)), None, None, tg.float32), "state must be"),
    (("gru_cell_backward", _view((2, 2)), _view((2, 6)), True, tg.float32), r"workspace has shape \(2, 6\)"),
])
def test_the_declarations_refuse_what_would_reach_past_a_buffer(call, message):
    name, *args = call
    with pytest.raises(ValueError, match=message) as err:
        kernels.check(name, *args)
    assert str(err.value).startswith(name)


def test_against_pytorchs_cells():
    """torch.lstm_cell and torch.gru_cell (PyTorch's CPU cells; its fused kernels are CUDA's,
    where they run too) on the same weights: values and every gradient, in float64. The
    LSTM's outputs' and workspace's shapes are those of PyTorch's _thnn_fused_lstm_cell (its
    meta function, on any build)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    batch, inputs, hidden = 3, 4, 5
    for gates, ours, theirs, fused in ((4, tg.fused_lstm_cell, torch.lstm_cell, "_thnn_fused_lstm_cell"),
                                       (3, tg.fused_gru_cell, torch.gru_cell, "_thnn_fused_gru_cell")):
        arrays = [rng.normal(size=s) for s in ((batch, inputs), (batch, hidden), (batch, hidden),
                                               (gates * hidden, inputs), (gates * hidden, hidden),
                                               (gates * hidden,), (gates * hidden,))]
        x, h, c, w_ih, w_hh, b_ih, b_hh = mine = tensors(arrays, "python", grad=True)
        t = [torch.tensor(a, requires_grad=True) for a in arrays]
        if gates == 4:
            got, want = ours(x @ w_ih.T, h @ w_hh.T, c, b_ih, b_hh), theirs(t[0], (t[1], t[2]), *t[3:])
            leaves, theirs_leaves = mine, t
        else:
            got, want = (ours(x @ w_ih.T, h @ w_hh.T, h, b_ih, b_hh),), (theirs(t[0], t[1], *t[3:]),)
            leaves, theirs_leaves = [x, h, w_ih, w_hh, b_ih, b_hh], [t[0], t[1], *t[3:]]
        up = [rng.normal(size=(batch, hidden)) for _ in got]
        sum((g * tg.tensor(u.tolist(), dtype=tg.float64, device="python")).sum() for g, u in zip(got, up)).backward()
        sum((w * torch.tensor(u)).sum() for w, u in zip(want, up)).backward()
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-12, atol=1e-12)
        for mine_leaf, their_leaf in zip(leaves, theirs_leaves):
            np.testing.assert_allclose(mine_leaf.grad.numpy(), their_leaf.grad.numpy(), rtol=1e-11, atol=1e-11)
        ig, hg, state, ib, hb = tensors(operands(rng, batch, hidden, gates), "python")
        if gates == 4:              # PyTorch registers no meta function for the GRU's (B, 5H)
            meta = [torch.empty(v.shape, device="meta") for v in (ig, hg, state, ib, hb)]
            assert ([tuple(o.shape) for o in tg._thnn_fused_lstm_cell(ig, hg, state, ib, hb)]
                    == [tuple(o.shape) for o in torch.ops.aten._thnn_fused_lstm_cell(*meta)])
        if torch.cuda.is_available():
            direct = getattr(torch.ops.aten, fused)(*[torch.tensor(v.numpy(), device="cuda")
                                                      for v in (ig, hg, state, ib, hb)])
            for g, w in zip(getattr(tg, fused)(ig, hg, state, ib, hb), direct):
                np.testing.assert_allclose(g.numpy(), w.cpu().numpy(), rtol=1e-12, atol=1e-12)
