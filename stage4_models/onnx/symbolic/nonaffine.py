"""Layer two of the symbolic shape engine: the non-affine atoms, floor division, remainder,
min and max, each built in canonical form (chapter 13_inference_compiler, "Symbolic
shapes"). A rule applies only where it holds for every integer value of the symbols.
"""
import math

from .expr import Atom, Expr, Op, as_expr, of_atom


def bounds(expr):
    """An interval (lo, hi) that holds the value for every integer value of the symbols
    (None: unbounded on that side). Only what ``%`` and constants bound is known."""
    lo = hi = expr.const
    for mono, coeff in expr.terms:
        tlo, thi = 1, 1
        for atom in mono:
            alo, ahi = _atom_bounds(atom)
            if alo is None or ahi is None or tlo is None:
                tlo = thi = None
                break
            corners = [alo * tlo, alo * thi, ahi * tlo, ahi * thi]
            tlo, thi = min(corners), max(corners)
        if tlo is None:
            return None, None
        tlo, thi = sorted((tlo * coeff, thi * coeff))
        lo, hi = lo + tlo, hi + thi
    return lo, hi


def _atom_bounds(atom):
    if atom.kind == Op.MOD and atom.args[1].is_constant():
        return 0, atom.args[1].const - 1
    if atom.kind == Op.DIV and atom.args[1].is_constant():
        lo, hi = bounds(atom.args[0])
        if lo is not None:
            return lo // atom.args[1].const, hi // atom.args[1].const
    return None, None


def _split(num, m):
    """num = m * quotient + residual with the residual's coefficients and constant in
    [0, m): the part of a numerator that leaves a division by m."""
    qterms = [(mono, c // m) for mono, c in num.terms]
    rterms = [(mono, c % m) for mono, c in num.terms]
    return Expr(qterms, num.const // m), Expr(rterms, num.const % m)


def _gcd(expr, m):
    return math.gcd(m, expr.const, *(c for _, c in expr.terms))


def floordiv(num, den):
    """``num // den``, canonical. By a constant m > 0 the numerator's multiples of m leave
    the division ((X + 2k) // 2 == X // 2 + k, (2X) // 2 == X), a common factor cancels
    ((2X + 2) // 4 == (X + 1) // 2) and divisions nest ((A // n + k) // m == (A + kn) // nm)."""
    if den.is_constant():
        m = den.const
        if m == 0:
            raise ZeroDivisionError(f"({num}) // 0")
        if m < 0:
            return floordiv(-num, Expr(const=-m))
        if num.is_constant():
            return Expr(const=num.const // m)
        if m == 1:
            return num
        inner = _nested_division(num)
        if inner is not None:
            a, n, k = inner
            return floordiv(a + k * n, Expr(const=n * m))
        quotient, residual = _split(num, m)
        if residual != num:     # built again: the residual may nest, (-(X // 2)) // 2
            return quotient + floordiv(residual, Expr(const=m))
        g = _gcd(residual, m)
        if g > 1:   # built again: (2*(Y // 3)) // 4 is (Y // 3) // 2, which nests to Y // 6
            return quotient + floordiv(_divide_exactly(residual, g), Expr(const=m // g))
        lo, hi = bounds(residual)
        if lo is not None and 0 <= lo and hi < m:
            return quotient
        return quotient + of_atom(Atom(Op.DIV, (residual, Expr(const=m))))
    quotient, residual = _split_by_monomial(num, den)
    if residual == 0:
        return quotient
    return quotient + of_atom(Atom(Op.DIV, (residual, den)))


def ceildiv(num, den):
    """``ceil(num / den)`` as a floor division: ``-((-num) // den)`` (a pool's ceil_mode)."""
    return -floordiv(-as_expr(num), as_expr(den))


def mod(num, den):
    """``num % den``, canonical. By a constant m > 0: coefficients reduce mod m (to
    (-m/2, m/2], so (16 - E % 16) % 16 prints as (-E) % 16), an inner ``A % n`` with m | n
    is congruent to A, a common factor leaves ((2X) % 4 == 2 * (X % 2)), and an expression
    already in [0, m) is its own remainder."""
    if den.is_constant():
        m = den.const
        if m == 0:
            raise ZeroDivisionError(f"({num}) % 0")
        if m < 0:
            return -mod(-num, Expr(const=-m))
        residual = _reduce_mod(num, m)
        if residual.is_constant():
            return residual
        g = _gcd(residual, m)
        if g > 1:
            return g * mod(_divide_exactly(residual, g), Expr(const=m // g))
        lo, hi = bounds(residual)
        if lo is not None and 0 <= lo and hi < m:
            return residual
        return of_atom(Atom(Op.MOD, (residual, Expr(const=m))))
    _, residual = _split_by_monomial(num, den)
    if residual == 0:
        return Expr()
    return of_atom(Atom(Op.MOD, (residual, den)))


def _reduce_mod(num, m):
    # Replace inner remainders by what they are congruent to mod m, until none is left.
    while True:
        terms, changed = [], False
        for mono, c in num.terms:
            atom = mono[0] if len(mono) == 1 else None
            if (atom is not None and atom.kind == Op.MOD and atom.args[1].is_constant()
                    and atom.args[1].const % m == 0):
                terms.extend((mo, c * cc) for mo, cc in atom.args[0].terms)
                terms.append(((), c * atom.args[0].const))
                changed = True
            else:
                terms.append((mono, c))
        const = num.const + sum(c for mono, c in terms if not mono)
        num = Expr([(mo, c) for mo, c in terms if mo], const)
        if not changed:
            break
    sym = [(mono, (c % m) - m if c % m > m // 2 else c % m) for mono, c in num.terms]
    return Expr(sym, num.const % m)


def _nested_division(num):
    # num == A // n + k (one floor division by a constant n > 0, coefficient 1)?
    if len(num.terms) == 1:
        (mono, coeff), = num.terms
        if coeff == 1 and len(mono) == 1:
            atom = mono[0]
            if atom.kind == Op.DIV and atom.args[1].is_constant():
                return atom.args[0], atom.args[1].const, num.const
    return None


def _divide_exactly(expr, g):
    return Expr(((m, c // g) for m, c in expr.terms), expr.const // g)


def _split_by_monomial(num, den):
    """num = den * quotient + residual, where den is c * monomial: the numerator's terms
    that contain the monomial with a coefficient divisible by c go to the quotient
    ((AB + 2A + 4CA) // A == B + 4C + 2). Another den leaves num whole in the residual,
    unless num is a constant multiple of it."""
    if den.const == 0 and len(den.terms) == 1:
        (dmono, dc), = den.terms
        qterms, rterms = [], []
        for mono, c in num.terms:
            rest = _remove_factors(mono, dmono)
            if rest is not None and c % dc == 0:
                qterms.append((rest, c // dc))
            else:
                rterms.append((mono, c))
        quotient = Expr([(m, c) for m, c in qterms if m],
                        sum(c for m, c in qterms if not m))
        return quotient, Expr(rterms, num.const)
    # A constant multiple: k = the ratio of the first coefficients, checked on the whole.
    if num.terms and num.terms[0][0] == den.terms[0][0] and num.terms[0][1] % den.terms[0][1] == 0:
        k = num.terms[0][1] // den.terms[0][1]
        if num - k * den == 0:
            return Expr(const=k), Expr()
    return Expr(), num


def _remove_factors(mono, factors):
    # The monomial with the atoms of ``factors`` removed (a multiset), or None.
    rest = list(mono)
    for atom in factors:
        if atom not in rest:
            return None
        rest.remove(atom)
    return tuple(rest)


def Min(a, b):
    """``min(a, b)``; folded when the difference is a constant."""
    return _extremum(Op.MIN, as_expr(a), as_expr(b))


def Max(a, b):
    """``max(a, b)``; folded when the difference is a constant."""
    return _extremum(Op.MAX, as_expr(a), as_expr(b))


def _extremum(kind, a, b):
    # The sign of a - b, when bounds decide it for every integer: min(H, H + (-H) % 16) == H.
    lo, hi = bounds(a - b)
    if lo is not None and lo >= 0:
        return a if kind == Op.MAX else b
    if hi is not None and hi <= 0:
        return b if kind == Op.MAX else a
    a, b = sorted((a, b), key=lambda e: e.key)
    return of_atom(Atom(kind, (a, b)))
