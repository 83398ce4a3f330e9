"""Layers one and two of the symbolic shape engine: integer expressions in canonical form
(chapter 13_inference_compiler, "Symbolic shapes").

Every ``Expr`` is an *affine combination* ``c1*t1 + c2*t2 + ... + c0`` with nonzero integer
coefficients, kept sorted, so ``X + Y`` and ``Y + X`` are the same object structurally and
compare and hash equal (layer one). A term ``t`` is a *monomial*: a sorted product of
*atoms*, an atom being a symbol (``H``) or a non-affine operation whose operands are again
canonical expressions: ``A // B``, ``A % B``, ``min(A, B)``, ``max(A, B)`` (layer two).
``H * W`` is the monomial of the atoms ``H`` and ``W``; ``(X - 2) // 2`` is the atom
``X // 2`` minus one once canonical (the numerator's multiples of 2 leave the division).

The rules applied while an expression is built hold for *every* integer value of the
symbols (``//`` and ``%`` are Python's floor division and its remainder, which has the
divisor's sign, like ONNX's ``Mod`` with fmod=0), so the simplifier never needs to know
anything about the symbols. What does need facts (``X % 2 == 0``) lives in ``solver.py``.
Division by zero is undefined: ``(X * Y) // X`` becomes ``Y`` although X could be 0.

Equal canonical forms mean equal expressions; the converse holds only as far as the rules
reach: ``X - X // 2`` and ``(X + 1) // 2`` are both canonical and always equal, which takes
the solver's case analysis over X's parity to see.
"""
import enum
import math
from functools import total_ordering


class Op(enum.IntEnum):
    """What an atom is; the order atoms sort in (then by their operands): symbols first."""
    SYM = 0     # a named dimension
    DIV = 1     # floor division A // B
    MOD = 2     # remainder A % B, with B's sign
    MIN = 3
    MAX = 4


_OP_TEXT = {Op.DIV: "//", Op.MOD: "%"}


@total_ordering
class Atom:
    """A symbol (``kind == Op.SYM``, ``args == (name,)``) or a non-affine operation on two
    canonical expressions. Immutable; built only through ``Expr``'s operators."""

    __slots__ = ("kind", "args", "key", "_hash")

    def __init__(self, kind, args):
        self.kind, self.args = kind, args
        # The sort key: the kind, then the operands' keys (a symbol: its name).
        self.key = (kind, args) if kind == Op.SYM else (kind, tuple(a.key for a in args))
        self._hash = hash(self.key)

    def __eq__(self, other):
        return isinstance(other, Atom) and self.key == other.key

    def __lt__(self, other):
        return self.key < other.key

    def __hash__(self):
        return self._hash

    def __str__(self):
        if self.kind == Op.SYM:
            return self.args[0]
        if self.kind in (Op.MIN, Op.MAX):
            return f"{'min' if self.kind == Op.MIN else 'max'}({self.args[0]}, {self.args[1]})"
        num, den = self.args
        return f"{num.parenthesized()} {_OP_TEXT[self.kind]} {den.parenthesized()}"


class Expr:
    """An integer expression in canonical form: ``terms`` maps monomials (sorted tuples of
    atoms) to nonzero coefficients, ``const`` is the constant part. Build with ``Dim``,
    ints and the operators ``+ - * // %``, ``Min`` and ``Max``; ``==`` is *structural*
    equality of the canonical forms (a bool, so expressions can be dict keys); whether two
    different forms always have the same value is the solver's question (``prove_equal``)."""

    __slots__ = ("terms", "const", "key", "_hash")

    def __init__(self, terms=(), const=0):
        # ``terms``: (monomial, coefficient) pairs; equal monomials merge, zeros drop.
        merged = {}
        for mono, coeff in terms:
            if mono:
                merged[mono] = merged.get(mono, 0) + coeff
            else:
                const += coeff
        self.terms = tuple(sorted((m, c) for m, c in merged.items() if c != 0))
        self.const = const
        self.key = (tuple((tuple(a.key for a in m), c) for m, c in self.terms), const)
        # A constant hashes like the int it equals (``Expr(5) == 5`` is True).
        self._hash = hash(const) if not self.terms else hash(self.key)

    # ---- inspection -------------------------------------------------------------------
    def is_constant(self):
        return not self.terms

    def atoms(self):
        """The atoms of this expression's monomials (not those inside them)."""
        return {a for mono, _ in self.terms for a in mono}

    def single_atom(self):
        """The atom when this expression is exactly one atom (coefficient 1, no constant)."""
        if self.const == 0 and len(self.terms) == 1:
            (mono, coeff), = self.terms
            if coeff == 1 and len(mono) == 1:
                return mono[0]
        return None

    def __eq__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            other = Expr(const=other)
        return isinstance(other, Expr) and self.key == other.key

    def __hash__(self):
        return self._hash

    def __bool__(self):
        raise TypeError("the truth value of a symbolic expression is unknown: ask "
                        "Context.prove_equal or compare canonical forms with ==")

    def __int__(self):
        if self.terms:
            raise TypeError(f"{self} is not a constant (its symbols: "
                            f"{sorted(free_symbols(self))})")
        return self.const

    __index__ = __int__

    # ---- arithmetic ---------------------------------------------------------------------
    def __add__(self, other):
        other = as_expr(other)
        return Expr(self.terms + other.terms, self.const + other.const)

    __radd__ = __add__

    def __neg__(self):
        return Expr(((m, -c) for m, c in self.terms), -self.const)

    def __sub__(self, other):
        return self + (-as_expr(other))

    def __rsub__(self, other):
        return as_expr(other) - self

    def __mul__(self, other):
        other = as_expr(other)
        # Distribute; a product of monomials is the sorted union of their atoms, which makes
        # multiplication associative and commutative on canonical forms: (AB)C == A(BC).
        left = self.terms + (((), self.const),)
        right = other.terms + (((), other.const),)
        terms, const = [], 0
        for m1, c1 in left:
            for m2, c2 in right:
                if not m1 and not m2:
                    const += c1 * c2
                else:
                    terms.append((tuple(sorted(m1 + m2)), c1 * c2))
        return Expr(terms, const)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return floordiv(self, as_expr(other))

    def __rfloordiv__(self, other):
        return floordiv(as_expr(other), self)

    def __mod__(self, other):
        return mod(self, as_expr(other))

    def __rmod__(self, other):
        return mod(as_expr(other), self)

    # ---- printing -----------------------------------------------------------------------
    def __str__(self):
        parts = []
        for mono, coeff in self.terms:
            text = " * ".join(_factor_text(a, len(mono) > 1 or abs(coeff) != 1)
                              for a in mono)
            if abs(coeff) != 1:
                text = f"{abs(coeff)}*{text}"
            parts.append(("-" if coeff < 0 else "+", text))
        if self.const or not parts:
            parts.append(("-" if self.const < 0 else "+", str(abs(self.const))))
        sign, text = parts[0]
        out = ("-" if sign == "-" else "") + text
        for sign, text in parts[1:]:
            out += f" {sign} {text}"
        return out

    def __repr__(self):
        return f"Expr({self})"

    def parenthesized(self):
        """The text with parentheses unless it is one symbol or a nonnegative constant."""
        if (not self.terms and self.const >= 0) or (
                self.single_atom() is not None and self.single_atom().kind == Op.SYM):
            return str(self)
        return f"({self})"


def _factor_text(atom, in_product):
    # ``2*(X // 2)`` and ``(X // 2) * Y``: a division printed inside a product needs
    # parentheses, Python's precedence would read ``2*X // 2`` as ``(2*X) // 2``.
    text = str(atom)
    return f"({text})" if in_product and atom.kind in (Op.DIV, Op.MOD) else text


def Dim(name):
    """The expression of one named dimension (a symbol): ``Dim("H")``."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"a dimension's name must be a nonempty str, got {name!r}")
    return Expr((((Atom(Op.SYM, (name,)),), 1),))


def as_expr(value):
    """An ``Expr`` for an ``Expr`` or an int (a constant); anything else is a TypeError."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Expr(const=value)
    raise TypeError(f"a symbolic expression mixes only with ints and expressions, "
                    f"got {type(value).__name__} {value!r}")


def _of_atom(atom):
    return Expr((((atom,), 1),))


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
        g = _gcd(residual, m)
        if g > 1:
            residual, m = _divide_exactly(residual, g), m // g
        lo, hi = bounds(residual)
        if lo is not None and 0 <= lo and hi < m:
            return quotient
        return quotient + _of_atom(Atom(Op.DIV, (residual, Expr(const=m))))
    quotient, residual = _split_by_monomial(num, den)
    if residual == 0:
        return quotient
    return quotient + _of_atom(Atom(Op.DIV, (residual, den)))


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
        return _of_atom(Atom(Op.MOD, (residual, Expr(const=m))))
    _, residual = _split_by_monomial(num, den)
    if residual == 0:
        return Expr()
    return _of_atom(Atom(Op.MOD, (residual, den)))


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
    return _of_atom(Atom(kind, (a, b)))


# ---- walking expressions -------------------------------------------------------------------
def free_symbols(expr):
    """The names of the symbols an expression depends on (inside atoms too)."""
    expr = as_expr(expr)
    names = set()
    for atom in expr.atoms():
        if atom.kind == Op.SYM:
            names.add(atom.args[0])
        else:
            for arg in atom.args:
                names |= free_symbols(arg)
    return frozenset(names)


def moduli(expr):
    """For each symbol inside a constant ``// n`` or ``% n``, the modulus a case analysis over
    its residues needs so that all of them become affine: the lcm of those n, each times the
    divisors of the divisions in its operand ((X // 2) % 4 needs X mod 8: X = 8q + r makes
    X // 2 = 4q + r // 2, and 4q + r // 2 leaves % 4 whole). A dict name -> modulus."""
    out = {}
    for atom in as_expr(expr).atoms():
        if atom.kind == Op.SYM:
            continue
        if atom.kind in (Op.DIV, Op.MOD) and atom.args[1].is_constant():
            need = atom.args[1].const * _scale(atom.args[0])
            for name in free_symbols(atom.args[0]):
                out[name] = math.lcm(out.get(name, 1), need)
        for arg in atom.args:
            for name, m in moduli(arg).items():
                out[name] = math.lcm(out.get(name, 1), m)
    return out


def _scale(expr):
    # The lcm of the divisors of the (nested) constant divisions at the top of expr.
    scale = 1
    for atom in expr.atoms():
        if atom.kind == Op.DIV and atom.args[1].is_constant():
            scale = math.lcm(scale, atom.args[1].const * _scale(atom.args[0]))
    return scale


def rebuild(expr, on_atom):
    """The expression with every atom replaced by ``on_atom(atom, args)``, where ``args``
    are the atom's operands rebuilt first (bottom up), each result re-canonicalized."""
    out = Expr(const=expr.const)
    for mono, coeff in expr.terms:
        term = Expr(const=coeff)
        for atom in mono:
            args = atom.args if atom.kind == Op.SYM else tuple(
                rebuild(arg, on_atom) for arg in atom.args)
            term = term * on_atom(atom, args)
        out = out + term
    return out


def apply_atom(atom, args):
    """The atom's operation applied to (possibly new) operands, canonicalized."""
    if atom.kind == Op.SYM:
        return _of_atom(atom)
    return {Op.DIV: floordiv, Op.MOD: mod, Op.MIN: Min, Op.MAX: Max}[atom.kind](*args)


def subs(expr, values):
    """The expression with symbols replaced: ``values`` maps names to expressions or ints."""
    values = {name: as_expr(v) for name, v in values.items()}

    def on_atom(atom, args):
        if atom.kind == Op.SYM:
            return values.get(atom.args[0], _of_atom(atom))
        return apply_atom(atom, args)
    return rebuild(as_expr(expr), on_atom)


def evaluate(expr, values):
    """The int an expression has when its symbols take ``values`` (a mapping of names to
    ints): ``evaluate(Dim("X") // 2, {"X": 37}) == 18``."""
    expr = as_expr(expr)
    missing = free_symbols(expr) - set(values)
    if missing:
        raise ValueError(f"evaluating {expr} needs a value for {sorted(missing)}")
    for name, v in values.items():
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"the value of {name} must be an int, got {v!r}")
    return _value(expr, values)


def _value(expr, values):
    total = expr.const
    for mono, coeff in expr.terms:
        term = coeff
        for atom in mono:
            term *= _atom_value(atom, values)
        total += term
    return total


def _atom_value(atom, values):
    if atom.kind == Op.SYM:
        return values[atom.args[0]]
    a, b = (_value(arg, values) for arg in atom.args)
    if atom.kind == Op.DIV:
        return a // b
    if atom.kind == Op.MOD:
        return a % b
    return min(a, b) if atom.kind == Op.MIN else max(a, b)
