"""The connectionist temporal classification loss (Graves et al. 2006), PyTorch's
F.ctc_loss: the negative log of the total probability of every alignment of a target
sequence to the T frames of log-probabilities, an alignment being a per-frame labelling
that gives the target once repeats are merged and blanks dropped.

The sum over alignments is the forward algorithm, a dynamic program over time: with the
target extended to l' = (blank, l1, blank, l2, ..., blank) of length 2S + 1,
alpha_t(s) = logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2)) + log p_t(l'_s),
the s - 2 term only where l'_s is a label (odd s) different from l'_{s-2} (a blank between
two equal labels cannot be skipped). Each time step is a few tensor operations over every
sample and position at once (samples shorter than the longest keep their alpha once their
frames end); the loss is -logsumexp(alpha_{T-1}(2S), alpha_{T-1}(2S - 1)). Autograd
differentiates the steps, which is the backward algorithm.

The gradient is the true derivative with respect to log_probs (PyTorch's own kernel returns
one that is right only once passed back through the log_softmax that made them; through it
the two agree).

The lengths and labels are checked by a kernel (data_checks.py), with no read into Python,
so a compiled step keeps the checks; concatenated (1-D) targets are cut into rows as long as
the longest target, a length read into Python.

Log-space zeros are a large negative number rather than -inf, so that no logsumexp of
three zeros sends 0 / 0 into the gradient; an impossible target (too long for its frames)
comes out as inf (or 0 with ``zero_infinity``), as PyTorch.
"""
from . import dtypes
from .concat import cat, stack
from .data_checks import outside, raise_if_any
from .elementwise import where
from .factories import arange, full, tensor
from .tensor import Tensor

NEG = -1e30                                    # log(0) for the dynamic program


def _lengths(value, name, n, device):
    if isinstance(value, Tensor):
        if value.dtype not in (dtypes.int64, dtypes.int32):
            raise TypeError(f"ctc_loss: {name} must be integers, got {value.dtype.name}")
        value = value.reshape(-1).to(device=device, dtype=dtypes.int64)
    else:
        value = tensor(list(value) if hasattr(value, "__iter__") else [value], dtype=dtypes.int64, device=device)
    if value.shape != (n,):
        raise RuntimeError(f"ctc_loss: {name} must have {n} entries (one per sample), got {value.shape[0]}")
    return value


def _logsumexp(*terms):
    m = terms[0]
    for t in terms[1:]:
        m = m.maximum(t)
    m = m.detach()
    total = (terms[0] - m).exp()
    for t in terms[1:]:
        total = total + (t - m).exp()
    return m + total.log()


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """log_probs (T, N, C) (log_softmax's output) or (T, C); targets (N, S) padded, or 1-D
    holding every target one after another; input_lengths and target_lengths one per
    sample. "mean" divides each sample's loss by its target length, then averages."""
    if not isinstance(log_probs, Tensor) or not log_probs.dtype.is_floating_point:
        raise TypeError("ctc_loss: log_probs must be a floating-point Tensor")
    if not isinstance(targets, Tensor) or targets.dtype not in (dtypes.int64, dtypes.int32):
        raise TypeError("ctc_loss: targets must be an integer Tensor")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.reshape(1, -1)
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got shape {log_probs.shape}")
    T, N, C = log_probs.shape
    if isinstance(blank, bool) or not isinstance(blank, int) or not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    device = log_probs.device
    in_len = _lengths(input_lengths, "input_lengths", N, device)
    tg_len = _lengths(target_lengths, "target_lengths", N, device)
    if N:
        raise_if_any(outside(in_len, T + 1), lambda: RuntimeError(
            f"Expected input_lengths to have value at most {T}, but got value {in_len.max().item()}"))
    targets = targets.to(device=device, dtype=dtypes.int64)
    if targets.ndim == 1:                                   # concatenated: cut into padded rows
        ends = tg_len.cumsum(0)
        if N and ends[-1].item() > targets.shape[0]:
            raise RuntimeError(f"ctc_loss: target_lengths add up to {ends[-1].item()}, but targets holds "
                               f"{targets.shape[0]}")
        S = tg_len.max().item() if N else 0
        pos = (ends - tg_len).unsqueeze(1) + arange(S, device=device)
        inside = arange(S, device=device) < tg_len.unsqueeze(1)
        targets = targets[pos.minimum(max(targets.shape[0] - 1, 0)) * inside.long()] if targets.shape[0] else \
            full((N, S), blank, dtype=dtypes.int64, device=device)
    elif targets.ndim != 2 or targets.shape[0] != N:
        raise RuntimeError(f"ctc_loss: targets must be (N, S) or 1-D, got shape {targets.shape}")
    S = targets.shape[1]
    if N:
        raise_if_any(outside(tg_len, S + 1), lambda: RuntimeError(
            f"Expected tensor to have size at least {tg_len.max().item()} at dimension 1, but got "
            f"size {S} for argument #2 'targets'"))
    inside = arange(S, device=device) < tg_len.unsqueeze(1)
    labels = where(inside, targets, targets * 0 + blank)
    if labels.numel():
        raise_if_any(outside(labels, C), lambda: IndexError(f"ctc_loss: target labels must be classes 0 to {C - 1}"))
    L = 2 * S + 1
    ext = stack([full((N, S), blank, dtype=dtypes.int64, device=device), labels], 2).reshape(N, 2 * S)
    ext = cat([ext, full((N, 1), blank, dtype=dtypes.int64, device=device)], 1)            # (N, L)
    emit = log_probs.gather(2, ext.unsqueeze(0).expand(T, N, L))                             # (T, N, L)
    # position s may come from s - 2: a label (odd s >= 3) unlike the label before it
    odd = (arange(L, device=device) % 2 == 1).unsqueeze(0)
    skip_ok = cat([ext[:, :2] != ext[:, :2], (ext[:, 2:] != ext[:, :-2]) * odd[:, 2:]], 1)
    skip = where(skip_ok, emit[0] * 0.0, emit[0] * 0.0 + NEG)                               # (N, L): 0 or NEG
    neg = full((N, 1), NEG, dtype=log_probs.dtype, device=device)
    start = arange(L, device=device) < 2
    alpha = where(start.unsqueeze(0), emit[0], emit[0] * 0.0 + NEG)
    for t in range(1, T):
        prev1 = cat([neg, alpha[:, :-1]], 1)
        prev2 = cat([neg, neg, alpha[:, :-2]], 1)[:, :L] + skip
        step = _logsumexp(alpha, prev1, prev2) + emit[t]
        alpha = where((t < in_len).unsqueeze(1), step, alpha)
    last = (2 * tg_len).unsqueeze(1)
    end = alpha.gather(1, last).squeeze(1)
    before = alpha.gather(1, (last - 1).maximum(0)).squeeze(1)
    before = where(tg_len > 0, before, before * 0.0 + NEG)
    total = _logsumexp(end, before)
    impossible = where(in_len == 0, in_len == in_len, total < NEG / 2)
    losses = where(impossible, total * 0.0 + (0.0 if zero_infinity else float("inf")), -total)
    if reduction == "none":
        return losses[0] if unbatched else losses
    if reduction == "sum":
        return losses.sum()
    return (losses / tg_len.to(dtype=losses.dtype).maximum(1.0)).mean()
