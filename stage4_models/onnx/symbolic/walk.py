"""Walking symbolic expressions: their symbols, the moduli a case analysis needs, rebuilding
with atoms replaced (substitution), evaluation (chapter 13_inference_compiler, "Symbolic
shapes").
"""
import math

from .expr import Expr, Op, as_expr, of_atom
from .nonaffine import Max, Min, floordiv, mod


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
        return of_atom(atom)
    return {Op.DIV: floordiv, Op.MOD: mod, Op.MIN: Min, Op.MAX: Max}[atom.kind](*args)


def subs(expr, values):
    """The expression with symbols replaced: ``values`` maps names to expressions or ints."""
    values = {name: as_expr(v) for name, v in values.items()}

    def on_atom(atom, args):
        if atom.kind == Op.SYM:
            return values.get(atom.args[0], of_atom(atom))
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
