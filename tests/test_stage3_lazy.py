"""Device "cpu:lazy" (stage3_native/lazy, chapter 11): operations are recorded and run on
device "cpu"'s kernels when a value is read. The shared suite (tests/engines.py) checks its
values op by op; these tests check the laziness itself: when kernels run, how many, what a
write does to recorded reads, deep graphs, memory, and the graph printer."""
import gc
import weakref

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
from stage2_tensor import nn, optim
from stage3_native import lazy

pytestmark = pytest.mark.stage3


@pytest.fixture(autouse=True)
def fresh_count():
    lazy.realize_all()       # nothing left over from another test
    lazy.reset_kernel_count()


def mlp(device):
    tg.seed(3)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)
    x = tg.randn(4, 5).to(device)
    target = tg.tensor([0, 2, 1, 2]).to(device)
    return model, x, target


@lazy.fusion(enabled=False)         # one kernel per node: fusion is test_stage3_fusion.py's
def test_nothing_runs_before_a_read_then_each_node_once():
    model, x, target = mlp("cpu:lazy")
    loss = F.cross_entropy(model(x), target)
    nodes = lazy.pending(loss)
    assert lazy.kernel_count() == 0 and len(nodes) > 3 and lazy.pending_count() >= len(nodes)
    assert not loss.storage.buffer.realized
    value = loss.item()
    assert lazy.kernel_count() == len(nodes)
    assert np.isfinite(value) and loss.storage.buffer.realized and lazy.pending_count() == 0
    loss.item()                                    # read again: nothing more runs
    assert lazy.kernel_count() == len(nodes)


def test_a_kernel_with_several_outputs_is_one_node():
    x = tg.randn(3, 4).to("cpu:lazy")
    out = F.layer_norm(x, (4,))
    probs = F.cross_entropy(out, tg.tensor([0, 1, 3]).to("cpu:lazy"))
    ops = [n.op for n in lazy.pending(probs)]
    assert ops == ["layer_norm", "cross_entropy"]
    probs.item()
    assert lazy.launched == {"layer_norm": 1, "cross_entropy": 1}


@lazy.fusion(enabled=False)
def test_ignored_targets_are_skipped_without_a_read():
    """-100 targets (cross_entropy's default ignore_index) computed on the device: the loss
    and its backward are recorded, one cross_entropy node each way, and nothing runs until
    a value is read (the kernels skip the rows and count the others themselves)."""
    model, x, target = mlp("cpu:lazy")
    target = target.masked_fill(target == 2, -100)     # on the device: no value known yet
    loss = F.cross_entropy(model(x), target)
    loss.backward()
    ops = [n.op for n in lazy.pending(model[0].weight.grad)]
    assert lazy.kernel_count() == 0 and ops.count("cross_entropy") == ops.count("cross_entropy_backward") == 1
    eager_model, eager_x, _ = mlp("cpu")
    eager = F.cross_entropy(eager_model(eager_x), tg.tensor([0, -100, 1, -100]))
    eager.backward()
    assert loss.item() == eager.item()
    np.testing.assert_array_equal(model[0].weight.grad.numpy(), eager_model[0].weight.grad.numpy())


@pytest.mark.parametrize("make_optimizer", [
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), lambda ps: optim.Adam(ps, lr=0.01)],
    ids=["sgd", "adam"])
def test_training_steps_are_bit_identical_to_eager_cpu(make_optimizer):
    results = {}
    for device in ("cpu", "cpu:lazy"):
        model, x, target = mlp(device)
        opt = make_optimizer(model.parameters())
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        results[device] = (losses, [p.detach().numpy().copy() for p in model.parameters()],
                           [p.grad.numpy().copy() for p in model.parameters()])
    eager, lazy_ = results["cpu"], results["cpu:lazy"]
    assert eager[0] == lazy_[0]
    for a, b in zip(eager[1] + eager[2], lazy_[1] + lazy_[2]):
        np.testing.assert_array_equal(a, b)
    assert lazy.kernel_count("matmul") > 0 and lazy.kernel_count("cross_entropy") == 3


def test_a_write_after_a_recorded_read_does_not_change_it():
    x = tg.tensor([1.0, 2.0, 3.0], device="cpu:lazy")
    y = x * 2
    z = x[1:] + 1                                  # a view of x read by a pending node
    x[0] = 5.0
    x[1:] = tg.tensor([7.0, 8.0], device="cpu:lazy")
    assert x.tolist() == [5.0, 7.0, 8.0]
    assert y.tolist() == [2.0, 4.0, 6.0]
    assert z.tolist() == [3.0, 4.0]
    assert (x * 2).tolist() == [10.0, 14.0, 16.0]  # recorded after the write: new values


def test_an_optimizer_step_does_not_change_recorded_reads_of_the_parameters():
    w = nn.Parameter(tg.tensor([1.0, -1.0], device="cpu:lazy"))
    w.grad = tg.tensor([1.0, 1.0], device="cpu:lazy")
    before = w.detach() * 1
    optim.SGD([w], lr=0.5).step()
    assert w.tolist() == [0.5, -1.5]
    assert before.tolist() == [1.0, -1.0]


def test_unreachable_nodes_never_run():
    x = tg.tensor([1.0, 2.0], device="cpu:lazy")
    x.exp()                                        # recorded, its result dropped
    kept = x.log()
    gc.collect()
    x[0] = 3.0                                     # runs every pending node that can be reached
    assert lazy.launched == {"unary": 1, "write": 1}
    assert kept.tolist() == pytest.approx([0.0, np.log(2.0)])


@pytest.mark.parametrize("fused", [False, True])
def test_a_deep_chain_realizes_without_recursion(fused):
    """Unfused, one kernel per add; fused, groups of at most fusion.MAX_NODES adds."""
    from stage3_native.lazy.fusion import MAX_NODES
    with lazy.fusion(enabled=fused, min_elements=0):
        x = tg.tensor([0.0], device="cpu:lazy")
        y = x
        for _ in range(10_000):
            y = y + 1
        assert lazy.kernel_count() == 0
        assert y.item() == 10_000.0
    if fused:
        assert lazy.kernel_count() == lazy.launched["loop"] == -(-10_000 // MAX_NODES)
    else:
        assert lazy.kernel_count("binary") == 10_000


def test_a_realized_node_lets_go_of_its_inputs():
    x = tg.tensor([1.0, 2.0], device="cpu:lazy")
    h = x.exp()
    y = h * 2
    intermediate = weakref.ref(h.storage.buffer)
    del h
    gc.collect()
    assert intermediate() is not None              # the pending node y needs it
    y.tolist()
    gc.collect()
    assert intermediate() is None
    assert y.storage.buffer.node.args is None


def test_backward_is_recorded_too():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], device="cpu:lazy", requires_grad=True)
    (x.exp() * x).sum().backward()
    assert lazy.kernel_count() == 0 and not x.grad.storage.buffer.realized
    a = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(a) * (1 + a), rtol=1e-6)


def test_the_graph_printer():
    x = tg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device="cpu:lazy")
    b = tg.tensor([1.0, 1.0, 1.0], device="cpu:lazy")
    y = (x + b).exp().sum(1)
    assert lazy.graph(y).splitlines() == [
        "%1 = buffer (2, 3) float32",
        "%2 = buffer (3,) float32",
        "%3 = binary add(%1, %2<(2, 3):(0, 1)>) (2, 3) float32",
        "%4 = unary exp(%3) (2, 3) float32",
        "%5 = reduce sum(%4, (1,)) (2,) float32",
    ]
    z = x.T.contiguous()
    assert lazy.graph(z) == "%1 = buffer (6,) float32\n%2 = contiguous(%1<(3, 2):(1, 3)>) (3, 2) float32"
    y.tolist()
    assert lazy.graph(y) == ""                     # nothing pending any more


def test_printing_and_moving_realize():
    x = tg.tensor([1.0, 2.0], device="cpu:lazy")
    y = x * 3
    assert repr(y) == "tensor([3.0, 6.0], device='cpu:lazy')"
    assert (x + 1).to("cpu").tolist() == [2.0, 3.0]
    assert tg.tensor([4.0]).to("cpu:lazy").neg().to("python").tolist() == [-4.0]


def test_errors_of_a_kernel_come_when_its_value_is_read():
    x = tg.tensor([[1.0, 2.0]], device="cpu:lazy")
    y = x[tg.tensor([3], device="cpu:lazy")]       # out of range: found when the kernel runs
    with pytest.raises(IndexError, match="out of bounds"):
        y.tolist()
    x[0, 0] = 7.0                                  # a write elsewhere does not raise it again
    assert x.tolist() == [[7.0, 2.0]]
    with pytest.raises(IndexError, match="out of bounds"):
        y.tolist()                                 # reading it again does


def test_the_graph_printer_with_several_outputs():
    x = tg.tensor([[1.0, 2.0], [3.0, 5.0]], device="cpu:lazy", requires_grad=True)
    out = F.layer_norm(x, (2,))
    loss = (out * out).sum()
    assert lazy.graph(loss).splitlines()[1] == \
        "%2 = layer_norm(%1, None, None, 1e-05) -> (2, 2) float32, (2,) float32, (2,) float32"
    loss.item()                                    # the statistics are realized, read by backward:
    loss.backward()
    lines = lazy.graph(x.grad).splitlines()
    assert lines[-1].startswith("%") and "layer_norm_backward(" in lines[-1]
    assert any(line.endswith("= buffer (2,) float32") for line in lines)     # mean and rstd


# ---- writes into buffers nobody reads are recorded, not run (backend.py) ---------------------

def test_a_write_into_a_buffer_nobody_reads_is_recorded():
    y = tg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device="cpu:lazy")
    x = tg.zeros(4, 3, device="cpu:lazy")
    x[1:3] = y * 2
    x[0, 1] = -1.0                                 # a second write, into the first one's result
    assert lazy.kernel_count() == 0 and x.storage.buffer.node.op == "write"
    want = np.zeros((4, 3), np.float32)
    want[1:3] = [[2, 4, 6], [8, 10, 12]]
    want[0, 1] = -1
    assert x.tolist() == want.tolist()
    assert lazy.launched == {"binary": 1, "write": 2}


def test_a_slice_backward_keeps_the_graph_whole():
    """Slice.backward writes the gradient into zeros: recorded, so nothing runs before the
    gradient is read, and the values are device "cpu"'s."""
    a = np.arange(24, dtype=np.float32).reshape(6, 4) / 10
    grads = {}
    for device in ("cpu", "cpu:lazy"):
        t = tg.from_numpy(a.copy(), device=device).requires_grad_()
        (t[:, :2].exp().sum() + (t[1:4, 2:] * t[1:4, 2:]).sum()).backward()
        if device == "cpu:lazy":
            assert lazy.kernel_count() == 0
        grads[device] = t.grad.numpy()
    np.testing.assert_array_equal(grads["cpu:lazy"], grads["cpu"])
    want = np.zeros_like(a, dtype=np.float64)
    want[:, :2] = np.exp(a[:, :2])
    want[1:4, 2:] = 2 * a[1:4, 2:]
    np.testing.assert_allclose(grads["cpu:lazy"], want, rtol=1e-6)


def test_a_write_runs_at_once_where_it_must():
    # a pending node reads the buffer: it must see the old values
    x = tg.zeros(3, device="cpu:lazy")
    x[0] = 1.0                                     # recorded
    y = x * 2
    x[1] = 5.0                                     # y reads x: runs y first, then writes
    assert y.tolist() == [2.0, 0.0, 0.0] and x.tolist() == [1.0, 5.0, 0.0]
    # the source overlaps the destination: one buffer, read and written
    x = tg.tensor([1.0, 2.0, 3.0, 4.0], device="cpu:lazy")
    x[1:] = x[:-1]
    assert x.tolist() == [1.0, 1.0, 2.0, 3.0]
    # numpy shares the memory: the write must reach it at once, as on device "cpu"
    t = tg.zeros(3, device="cpu:lazy")
    seen = t.numpy()
    t[2] = 7.0
    assert seen.tolist() == [0.0, 0.0, 7.0]
    array = np.zeros(3, dtype=np.float32)
    shared = tg.from_numpy(array, device="cpu:lazy")
    shared[0] = 4.0
    assert array.tolist() == [4.0, 0.0, 0.0]


def test_more_nodes_than_the_recent_ones_still_find_their_readers():
    """graph.RECENT holds the last nodes made; a buffer older than all of them is asked of
    every pending node (readers) or written at once (unread says: not known)."""
    from stage3_native.lazy.graph import RECENT
    x = tg.tensor([1.0, 2.0, 3.0], device="cpu:lazy")
    y = x * 2                                      # reads x
    z = tg.tensor([0.0], device="cpu:lazy")
    for _ in range(RECENT.maxlen + 10):            # unrelated nodes push x's out of RECENT
        z = z + 1
    shared = x.numpy()                             # y must run before numpy shares x's memory
    assert y.storage.buffer.realized
    shared[0] = 100.0
    assert y.tolist() == [2.0, 4.0, 6.0]
    w = tg.zeros(3, device="cpu:lazy")
    for _ in range(RECENT.maxlen + 10):
        z = z + 1
    w[1] = 5.0                                     # w's node is out of RECENT: written at once
    assert w.storage.buffer.node.op != "write" and w.tolist() == [0.0, 5.0, 0.0]
    assert z.item() == 2 * (RECENT.maxlen + 10)


def test_recent_readers_serves_unread_and_readers():
    """graph.recent_readers: the nodes that read a buffer, oldest first, found in RECENT; None
    once RECENT no longer reaches back to the buffer's node. unread and readers both ask it."""
    from stage3_native.lazy.graph import PENDING, RECENT, readers, recent_readers, unread
    x = tg.tensor([1.0, 2.0, 3.0], device="cpu:lazy")
    buffer = x.storage.buffer
    assert recent_readers(buffer) == [] and unread(buffer) and readers(buffer) == []
    y, z = x * 2, x.exp()
    expected = [y.storage.buffer.node, z.storage.buffer.node]
    assert recent_readers(buffer) == expected and not unread(buffer) and readers(buffer) == expected
    w = tg.tensor([0.0], device="cpu:lazy")
    for _ in range(RECENT.maxlen + 1):             # x's node leaves RECENT
        w = w + 1
    assert recent_readers(buffer) is None and not unread(buffer)       # not known: not unread
    assert readers(buffer) == expected             # from all of PENDING instead
    y.numpy()                                      # y ran: only z still reads x
    assert y.storage.buffer.node not in PENDING and readers(buffer) == expected[1:]
    assert z.tolist() == pytest.approx(np.exp([1.0, 2.0, 3.0]).tolist()) and w.item() == RECENT.maxlen + 1


def test_the_fused_attention_and_lm_head_loss_are_recorded_as_nodes():
    """Device "cpu"'s optional fused kernels (attention, linear_cross_entropy and their
    backwards) are nodes here like layer_norm, and values and gradients are eager's bit for
    bit (the same kernels run), on a first read and on a replayed plan."""
    from stage2_tensor import fused_attention
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((2, 3, 17, 8)).astype(np.float32) for _ in range(3)]
    x, w = rng.standard_normal((20, 8)).astype(np.float32), rng.standard_normal((30, 8)).astype(np.float32)
    targets = np.arange(20) % 30
    targets[3] = -100                                          # an ignored row

    def run(device):
        q, k, v = [tg.from_numpy(a, device=device).requires_grad_() for a in arrays]
        assert fused_attention.fused(q, k, v)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        if device == "cpu:lazy":                               # one node, not yet run
            assert y.storage.buffer.node.op == "attention" and not y.storage.buffer.realized
        xs, ws = (tg.from_numpy(a, device=device).requires_grad_() for a in (x, w))
        loss = F.linear_cross_entropy(xs, ws, tg.from_numpy(targets, device=device)) + (y * y).sum()
        loss.backward()
        return [t.detach().numpy() for t in (loss, y, q.grad, k.grad, v.grad, xs.grad, ws.grad)]

    eager = run("cpu")
    for _ in range(2):                                         # planned, then replayed
        for a, b in zip(eager, run("cpu:lazy")):
            assert np.array_equal(a, b)
