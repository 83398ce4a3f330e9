"""einsum: Einstein summation, as PyTorch's ``torch.einsum(equation, *operands)``, for the
equations that are permutes, broadcast multiplies, sums and matrix products:

    "ij,jk->ik" (matmul)   "bij,bjk->bik" (bmm)   "ij->ji" (transpose)   "i,i->" (dot)
    "bhqd,bhkd->bhqk" (attention scores)   "i,j->ij" (outer)   "ij->" / "ij->j" (sums)

Each operand first sums away the letters no one else needs; two operands then meet in one
batched matmul: the letters both have and the output keeps are the batch, the letters both
have and the output drops are contracted, the rest are the matrix rows and columns. More
than two operands are contracted left to right. Differentiable, as the ops it is made of.

A letter twice in one operand takes a diagonal ("ii->i", "ii" the trace): the operand times
an identity mask, summed over the second copy, so its gradient lands on the diagonal only.
An ellipsis ("...ij,...jk->...ik") stands for the leading dimensions no letter names; each
is given a letter of its own, aligned from the right as broadcasting aligns them, and
without "->" the output begins with them (PyTorch's rules). Not supported (a ValueError
says so): a letter whose sizes differ between operands (1 broadcasts, as PyTorch).
Without "->" the output is the letters that appear once, in alphabetical order.
"""
import string

from .factories import arange
from .tensor import Tensor


def _expand_ellipsis(eq, operands):
    """The equation with each '...' replaced by letters the equation does not use, one per
    dimension it covers, right-aligned across operands (broadcasting's alignment)."""
    lhs, arrow, out = eq.partition("->")
    inputs = lhs.split(",")
    if any(t.count("...") > 1 or t.replace("...", "").count(".") for t in inputs + [out]):
        raise ValueError(f"einsum(): an ellipsis is written '...', at most once per operand, in {eq!r}")
    if len(inputs) != len(operands):
        return eq                                    # _parse names the count mismatch
    spans = []
    for n, (term, x) in enumerate(zip(inputs, operands)):
        if "..." not in term:
            spans.append(0)
            continue
        named = len(term) - 3
        if not isinstance(x, Tensor) or x.ndim < named:
            raise ValueError(f"einsum(): operand {n}'s subscript {term!r} names {named} dimensions "
                             f"besides the ellipsis, but it has shape {getattr(x, 'shape', None)}")
        spans.append(x.ndim - named)
    free = [c for c in string.ascii_letters if c not in eq]
    letters = "".join(free[:max(spans)])
    inputs = [t.replace("...", letters[len(letters) - k:]) for t, k in zip(inputs, spans)]
    if arrow:
        out = out.replace("...", letters)
    else:                                            # implicit output: the ellipsis first
        counts = {c: "".join(inputs).count(c) for c in "".join(inputs) if c not in letters}
        out = letters + "".join(sorted(c for c, k in counts.items() if k == 1))
    return ",".join(inputs) + "->" + out


def _diagonal(x, term):
    """x with every letter repeated in term reduced to its diagonal: (term without the
    repeats, x). A pair of dimensions p < q of one letter: x times the identity on them
    (broadcast over the rest), summed over q."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        p = term.index(c)
        q = term.index(c, p + 1)
        n = x.shape[p]                               # == x.shape[q], as _parse checked
        i = arange(n, device=x.device)
        eye = (i.reshape(n, 1) == i).to(dtype=x.dtype).reshape(
            *[n if d in (p, q) else 1 for d in range(x.ndim)])
        x = (x * eye).sum(dim=q)
        term = term[:q] + term[q + 1:]
    return term, x


def _parse(equation, operands):
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): equation must be a str, got {type(equation).__name__}")
    eq = equation.replace(" ", "")
    if "." in eq:
        eq = _expand_ellipsis(eq, operands)
    lhs, arrow, out = eq.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise ValueError(f"einsum(): the equation {equation!r} names {len(inputs)} operand(s), "
                         f"but {len(operands)} were given")
    for term in inputs + [out]:
        for c in term:
            if not c.isalpha() or not c.isascii():
                raise ValueError(f"einsum(): subscripts are letters a-z or A-Z, got {c!r} in {equation!r}")
    if not arrow:
        counts = {c: lhs.count(c) for c in set(lhs) if c.isalpha()}
        out = "".join(sorted(c for c, n in counts.items() if n == 1))
    if len(set(out)) != len(out):
        raise ValueError(f"einsum(): output subscript {out!r} names a letter twice, in {equation!r}")
    for c in out:
        if c not in lhs:
            raise ValueError(f"einsum(): output letter {c!r} appears in no operand, in {equation!r}")
    sizes = {}
    for n, (term, x) in enumerate(zip(inputs, operands)):
        if not isinstance(x, Tensor):
            raise TypeError(f"einsum(): operand {n} must be a Tensor, not {type(x).__name__}")
        if len(term) != x.ndim:
            raise ValueError(f"einsum(): operand {n} has {x.ndim} dimensions (shape {x.shape}) "
                             f"but its subscript {term!r} names {len(term)}")
        for c, size in zip(term, x.shape):
            if term.count(c) > 1 and x.shape[term.index(c)] != size:
                raise ValueError(f"einsum(): subscript {c!r} is repeated for operand {term!r} but the "
                                 f"sizes don't match, {x.shape[term.index(c)]} != {size}")
            if sizes.get(c, 1) not in (1, size) and size != 1:
                raise ValueError(f"einsum(): letter {c!r} has size {sizes[c]} in one operand and "
                                 f"{size} in operand {n} (shape {x.shape}); sizes must match or be 1")
            sizes[c] = size if sizes.get(c, 1) == 1 else sizes[c]
    return inputs, out, sizes


def _reduce(x, term, keep):
    """x summed over the letters of term not in keep, then (term, x)."""
    dims = [d for d, c in enumerate(term) if c not in keep]
    if dims:
        x = x.sum(dim=tuple(dims))
        term = "".join(c for c in term if c in keep)
    return term, x


def _arrange(x, term, order, sizes):
    """x's dimensions in the order of the letters `order` (all in term), stretched to sizes."""
    x = x.permute(*[term.index(c) for c in order]) if term != order else x
    return x.expand(*[sizes[c] for c in order])


def _numel(letters, sizes):
    n = 1
    for c in letters:
        n *= sizes[c]
    return n


def _pair(a, ta, b, tb, keep, sizes):
    """The contraction of a (letters ta) with b (letters tb), keeping the letters in keep."""
    batch = [c for c in ta if c in tb and c in keep]
    inner = [c for c in ta if c in tb and c not in keep]
    rows = [c for c in ta if c not in tb]
    cols = [c for c in tb if c not in ta]
    a = _arrange(a, ta, "".join(batch + rows + inner), sizes)
    b = _arrange(b, tb, "".join(batch + inner + cols), sizes)
    bshape = [sizes[c] for c in batch]
    a = a.reshape(*bshape, _numel(rows, sizes), _numel(inner, sizes))
    b = b.reshape(*bshape, _numel(inner, sizes), _numel(cols, sizes))
    out = a @ b
    term = "".join(batch + rows + cols)
    return term, out.reshape(*[sizes[c] for c in term])


def einsum(equation, *operands):
    """Sum of products of the operands' elements over the letters the output leaves out
    (PyTorch's torch.einsum; operands may also come as one list)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): at least one operand is needed")
    inputs, out, sizes = _parse(equation, operands)
    terms, xs = [], []
    for term, x in zip(inputs, operands):         # repeated letters: their diagonals first
        term, x = _diagonal(x, term)
        terms.append(term)
        xs.append(x)
    for n in range(len(xs)):                       # letters only this operand has, and the output drops
        others = out + "".join(t for m, t in enumerate(terms) if m != n)
        terms[n], xs[n] = _reduce(xs[n], terms[n], others)
    term, x = terms[0], xs[0]
    for n in range(1, len(xs)):
        keep = out + "".join(terms[n + 1:])
        term, x = _pair(x, term, xs[n], terms[n], keep, sizes)
    term, x = _reduce(x, term, out)
    return _arrange(x, term, out, sizes) if term != out else x
