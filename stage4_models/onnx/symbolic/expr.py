"""Layer one of the symbolic shape engine: integer expressions in canonical form (chapter
13_inference_compiler, "Symbolic shapes"); the non-affine atoms' rules are in
``nonaffine.py``, substituting and evaluating in ``walk.py``.

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
        from .walk import free_symbols
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

    def __pos__(self):
        return self

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

    # Division and remainder are layer two's (imported on use: it builds on this module).
    def __floordiv__(self, other):
        from .nonaffine import floordiv
        return floordiv(self, as_expr(other))

    def __rfloordiv__(self, other):
        from .nonaffine import floordiv
        return floordiv(as_expr(other), self)

    def __mod__(self, other):
        from .nonaffine import mod
        return mod(self, as_expr(other))

    def __rmod__(self, other):
        from .nonaffine import mod
        return mod(as_expr(other), self)

    # ---- printing -----------------------------------------------------------------------
    def __str__(self):
        parts = []
        for mono, coeff in self.terms:
            # A leading minus binds tighter than // and %: -(X % 4), not -X % 4.
            bound = len(mono) > 1 or abs(coeff) != 1 or (coeff < 0 and not parts)
            text = " * ".join(_factor_text(a, bound) for a in mono)
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


def _factor_text(atom, bound):
    # ``2*(X // 2)`` and ``(X // 2) * Y``: a division printed inside a product (or after a
    # leading minus) needs parentheses, Python would read ``2*X // 2`` as ``(2*X) // 2``.
    text = str(atom)
    return f"({text})" if bound and atom.kind in (Op.DIV, Op.MOD) else text


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


def of_atom(atom):
    """The expression that is exactly one atom."""
    return Expr((((atom,), 1),))
