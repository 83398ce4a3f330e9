"""Symbolic shapes for the ONNX inference compiler (chapter 13_inference_compiler, "Symbolic
shapes"): every tensor's extent, and a plan's peak memory, as an integer expression of the
input's dimensions, and a solver that proves two extents equal for every input, which is
what a skip connection's Concat needs before a model is accepted.

Three layers, one idea each:

* ``expr.py``, layer one: an ``Expr`` is an affine combination ``c1*t1 + ... + c0`` kept
  in canonical (sorted, merged) form; a term is a product of atoms, an atom a symbol or a
  non-affine operation. Equal forms compare and hash equal.
* ``nonaffine.py``, layer two: the atoms ``A // B``, ``A % B``, ``min``, ``max``, whose
  operands are canonical too, built by rules valid for every integer
  (``(X + 2k) // 2 == X // 2 + k``, ``(E % 16) % 16 == E % 16``); ``walk.py`` substitutes
  and evaluates.
* ``solver.Context``, layer three: facts ``e % m == r`` and the modulo solver, which uses
  them as rewrites and, failing that, splits each symbol into its residues modulo the
  divisors around it (X = L*q + r: every ``// n`` and ``% n`` with n | L becomes affine in
  q). Answers are ``Proof`` objects: proven, disproven (with a counterexample) or unknown,
  with the steps (``proof.explain()``).

The API the importer uses::

    >>> from stage4_models.onnx.symbolic import Context, Dim, evaluate, free_symbols
    >>> X, E = Dim("X"), Dim("E")
    >>> up = ((X - 2) // 2 + 1) * 2        # a 2x2 max-pool's extent, then a 2x upsample
    >>> print(up)                           # canonical: the numerator's -2 left the division
    2*(X // 2)
    >>> ctx = Context()
    >>> ctx.prove_equal(up, X).status       # false for odd X
    'disproven'
    >>> ctx.prove_equal(up, X).counterexample
    {'X': 1}
    >>> bool(ctx.assume_divisible(X, 2).prove_equal(up, X))
    True
    >>> padded = E + (16 - E % 16) % 16    # E rounded up to a multiple of 16
    >>> [bool(ctx.prove_divisible(padded, m)) for m in (2, 4, 8, 16, 32)]
    [True, True, True, True, False]
    >>> evaluate(padded, {"E": 37}), sorted(free_symbols(padded))
    (48, ['E'])

Building: ``Dim(name)``, ints, ``+ - * // %``, ``Min``, ``Max``, ``ceildiv``; ``==`` compares
canonical forms. Asking (a ``Context``): ``prove_equal``, ``require_equal(a, b, node)`` (a
ValueError naming the node and both expressions: a Concat's check), ``prove_divisible``,
``prove_less_equal`` (memory footprints), ``residue``, ``simplify``; telling it:
``assume_divisible``, ``assume_residue``. Using: ``evaluate``, ``subs``, ``free_symbols``.

Semantics: ``//`` and ``%`` are Python's (floor division, remainder with the divisor's
sign), as ONNX's integer ``Div`` of nonnegative shapes and ``Mod`` with fmod=0; a division
by zero is undefined (the simplifier may cancel it). The canonical form is valid for every
integer value of the symbols; proofs hold for every value >= 1 (a dimension) satisfying the
facts; counterexamples are searched among 1, 2, 3, ...
"""
from .expr import Dim, Expr, as_expr  # noqa: F401
from .nonaffine import Max, Min, ceildiv  # noqa: F401
from .walk import evaluate, free_symbols, subs  # noqa: F401
from .solver import Context, Fact, Proof  # noqa: F401



def simplify(expr, context=None):
    """The canonical form of expr (an ``Expr`` is always built canonical, so this only
    converts ints), rewritten with ``context``'s facts when one is given."""
    return context.simplify(expr) if context is not None else as_expr(expr)
