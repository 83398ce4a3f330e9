"""Layer three of the symbolic shape engine: facts, the modulo solver and proofs (chapter
13_inference_compiler, "Proving a skip connection").

A ``Context`` records facts ``e % m == r`` (``assume_divisible(X, 2)``: X is even) and
answers questions about expressions with a ``Proof``: proven, disproven (with a
counterexample) or unknown. It tries, in order:

1. the canonical forms: ``a - b`` is canonically 0 (layers one and two, always valid);
2. the facts as rewrites: a remainder ``A % m`` whose residue the facts decide becomes that
   constant, and ``c * (A // m)`` with m | c becomes ``(c/m) * (A - r)`` when A % m == r
   (the division is exact): ``2 * (X // 2) == X`` when X is even; a ``min`` or ``max``
   whose operands' order holds for every dimension (``dim_bounds``) is decided;
3. case analysis over residues: each symbol X inside a ``// n`` or ``% n`` is written
   ``L*q + r``, L a multiple of those n (``moduli``), for each residue r the facts allow,
   which makes each such division an affine expression of q; if every case simplifies to
   0, the identity holds for all integers. This is how the padded U-net's
   ``16 * ((H + (16 - H % 16) % 16) // 16)`` is found equal to the padded H: 16 cases.
   An atom no case reduces (min, max, a division by an expression) is tried as it is, then
   as an opaque symbol of its own (``A // 4 * 4 + A % 4 == A`` for any A);
4. counterexamples: small values of the symbols (from 1, as a dimension is at least 1)
   that satisfy the facts and give the two sides different values.

The symbols are dimensions: integers >= 1. Steps 1 and 3 hold for every integer; step 2's
min and max rule and ``prove_less_equal`` use the bound, step 4 searches 1, 2, 3, ...
"""
import itertools
import math

from .expr import Dim, Op, as_expr
from .walk import apply_atom, evaluate, free_symbols, moduli, rebuild, subs

PROVEN, DISPROVEN, UNKNOWN = "proven", "disproven", "unknown"
# Case analysis stops beyond this many cases (the product of the split symbols' moduli),
# counterexample search beyond this many assignments of values up to LARGEST_TRIED: the
# answer is then "unknown", never a wrong one.
MAX_CASES = 4096
MAX_TRIES = 1024
LARGEST_TRIED = 64


class Proof:
    """The answer to a question: ``status`` is "proven", "disproven" or "unknown"; true as a
    bool only when proven. ``why`` says how (the steps), ``counterexample`` is an assignment
    of the symbols that refutes the claim when one was found."""

    def __init__(self, claim, status, steps, counterexample=None):
        self.claim, self.status, self.steps = claim, status, list(steps)
        self.counterexample = counterexample

    def __bool__(self):
        return self.status == PROVEN

    @property
    def proven(self):
        return self.status == PROVEN

    @property
    def disproven(self):
        return self.status == DISPROVEN

    @property
    def why(self):
        return "; ".join(self.steps)

    def explain(self):
        """The proof as lines a chapter can print: the claim, each step, the verdict."""
        return "\n".join([f"claim: {self.claim}"] + [f"  {s}" for s in self.steps]
                         + [f"  => {self.status}"])

    def __repr__(self):
        return f"Proof({self.claim}: {self.status})"


class Fact:
    """``expr % modulus == residue``, with 0 <= residue < modulus."""

    def __init__(self, expr, modulus, residue):
        self.expr, self.modulus, self.residue = expr, modulus, residue
        self.symbols = free_symbols(expr)

    def __str__(self):
        return f"{self.expr.parenthesized()} % {self.modulus} == {self.residue}"


def _modulus(m, what):
    if not isinstance(m, int) or isinstance(m, bool):
        raise TypeError(f"{what} must be a positive int, got {type(m).__name__} {m!r}")
    if m < 1:
        raise ValueError(f"{what} must be a positive int, got {m!r}")
    return m


def _opaque(expr):
    """expr with each atom a case analysis cannot reduce (min, max, a division by an
    expression) replaced by a symbol named after it, "[min(X, Y)]": what holds for every
    value of that symbol holds for the atom's, so (A // 4) * 4 + A % 4 == A is proven for
    A = min(X, Y) as for a symbol."""
    def on_atom(atom, args):
        if atom.kind == Op.SYM or (atom.kind in (Op.DIV, Op.MOD) and atom.args[1].is_constant()):
            return apply_atom(atom, args)
        return Dim(f"[{atom}]")
    return rebuild(expr, on_atom)


def _in_case(expr, mapping):
    # expr in one case of a case analysis, or None where it divides by zero in every
    # value of the case (e.g. X // (X % 4) when X = 4q): no claim is made outside a domain.
    try:
        return subs(expr, mapping)
    except ZeroDivisionError:
        return None


class Context:
    """The facts known about the symbols, and the questions asked under them."""

    def __init__(self):
        self.facts = []

    def __repr__(self):
        return f"Context({', '.join(map(str, self.facts)) or 'no facts'})"

    # ---- facts --------------------------------------------------------------------------
    def assume_divisible(self, expr, m):
        """Record that m divides expr (``assume_divisible(Dim("X"), 2)``: X is even)."""
        return self.assume_residue(expr, m, 0)

    def assume_residue(self, expr, m, r):
        """Record that ``expr % m == r``. A fact the canonical form already contradicts is a
        ValueError; one it already implies is not stored."""
        expr, m = as_expr(expr), _modulus(m, "the modulus of a fact")
        if not isinstance(r, int) or isinstance(r, bool):
            raise TypeError(f"the residue of a fact must be an int, got {type(r).__name__} {r!r}")
        if not 0 <= r < m:
            raise ValueError(f"the residue of a fact mod {m} must be an int in [0, {m}), "
                             f"got {r!r}")
        known = expr % m
        if known.is_constant():
            if known.const != r:
                raise ValueError(f"the fact {expr.parenthesized()} % {m} == {r} contradicts "
                                 f"{expr.parenthesized()} % {m} == {known.const}, always true")
            return self
        self.facts.append(Fact(expr, m, r))
        return self

    def satisfies(self, values):
        """Whether an assignment of every symbol the facts name satisfies them all."""
        return all(evaluate(f.expr, values) % f.modulus == f.residue for f in self.facts
                   if f.symbols <= set(values))

    # ---- layer three: residues by case analysis ------------------------------------------
    def _cases(self, expr):
        """The cases of a case analysis over residues: ({name: L}, [substitution, ...]), or
        None when there would be more than MAX_CASES. Each symbol X inside a constant
        division or remainder is written ``L*X__q + r``, one case per residue r that the
        facts allow; symbols outside them stay as they are (splitting them decides nothing)."""
        split = moduli(expr)
        facts = [f for f in self.facts if f.symbols and f.symbols <= set(split)]
        for f in facts:         # each case must decide the facts on its symbols
            for name in f.symbols:
                split[name] = math.lcm(split[name], f.modulus, moduli(f.expr).get(name, 1))
        names = sorted(split)
        if math.prod(split.values()) > MAX_CASES:
            return None
        cases = []
        for residues in itertools.product(*(range(split[x]) for x in names)):
            mapping = {x: split[x] * Dim(f"{x}__q") + r for x, r in zip(names, residues)}
            if all(self._allowed(f, mapping) for f in facts):
                cases.append(mapping)
        return split, cases

    @staticmethod
    def _allowed(fact, mapping):
        # A case the facts rule out has a constant residue other than the fact's; one
        # whose residue stays symbolic is kept (more cases than needed is still sound).
        left = _in_case(fact.expr, mapping)
        if left is None:
            return False
        left = left % fact.modulus
        return not left.is_constant() or left.const == fact.residue

    def residue(self, expr, m):
        """The int ``expr % m`` equals under the facts for every value of the symbols, or
        None when the case analysis cannot decide it."""
        expr, m = as_expr(expr), _modulus(m, "a modulus")
        known = expr % m
        if known.is_constant():
            return known.const
        for form in dict.fromkeys([known, _opaque(known)]):    # as is, then atoms opaque
            r = self._constant_in_every_case(form)
            if r is not None:
                return r
        return None

    def _constant_in_every_case(self, expr):
        # The one constant expr is in every case of a case analysis, or None.
        found = self._cases(expr)
        if found is None:
            return None
        values = set()
        for mapping in found[1]:
            r = _in_case(expr, mapping)
            if r is None:
                continue
            if not r.is_constant():
                return None
            values.add(r.const)
        return values.pop() if len(values) == 1 else None

    # ---- layer three: the facts as rewrites ---------------------------------------------
    def simplify(self, expr):
        """The canonical form rewritten with the facts: remainders the facts decide become
        constants, exact divisions leave (2 * (X // 2) == X when X is even), and a min or
        max whose operands' order holds for all dimensions (``dim_bounds``) is decided."""
        expr = as_expr(expr)

        def on_atom(atom, args):
            if atom.kind in (Op.DIV, Op.MOD):
                args = tuple(self._exact(a) for a in args)
            if atom.kind in (Op.MIN, Op.MAX):
                lo, hi = dim_bounds(args[0] - args[1])
                if lo is not None and lo >= 0:      # args[0] >= args[1] for all dimensions
                    return args[0] if atom.kind == Op.MAX else args[1]
                if hi is not None and hi <= 0:
                    return args[1] if atom.kind == Op.MAX else args[0]
            try:
                return apply_atom(atom, args)
            except ZeroDivisionError:   # a divisor the facts make 0: undefined, left as is
                return apply_atom(atom, atom.args)
        return self._exact(rebuild(expr, on_atom))

    def _exact(self, expr):
        out = expr
        if not self.facts:      # the canonical form already decides what no fact does
            return out
        for mono, coeff in expr.terms:
            atom = mono[0] if len(mono) == 1 else None
            if atom is None or not atom.args[1:] or not atom.args[1].is_constant():
                continue
            a, m = atom.args[0], atom.args[1].const
            if atom.kind == Op.MOD:      # A % m, decided by the facts: the residue
                r = self.residue(a, m)
                if r is not None:
                    out = out - coeff * (a % m) + r * coeff
            elif atom.kind == Op.DIV and coeff % m == 0:     # c * (A // m) = (c/m) * (A - r)
                r = self.residue(a, m)
                if r is not None:
                    out = out - coeff * (a // m) + (coeff // m) * (a - r)
        return out

    # ---- questions --------------------------------------------------------------------------
    def prove_equal(self, a, b):
        """Whether a == b for every value of the symbols that satisfies the facts."""
        a, b = as_expr(a), as_expr(b)
        return self._prove_zero(a - b, f"{a} == {b}", free_symbols(a) | free_symbols(b), lambda v: (
            f"{a} = {evaluate(a, v)} but {b} = {evaluate(b, v)}"))

    def require_equal(self, a, b, where):
        """The proof that a == b, or a ValueError naming ``where`` (the node asking, e.g. a
        Concat), both expressions and why the proof failed (a counterexample if found)."""
        proof = self.prove_equal(a, b)
        if not proof:
            raise ValueError(f"{where}: cannot prove the extents {as_expr(a)} and "
                             f"{as_expr(b)} equal for every input ({proof.status}: "
                             f"{proof.steps[-1]})")
        return proof

    def prove_less_equal(self, a, b):
        """Whether a <= b for every value of the symbols satisfying the facts, dimensions
        being at least 1 (``dim_bounds``): how a plan compares two memory footprints."""
        a, b = as_expr(a), as_expr(b)
        claim, d = f"{a} <= {b}", self.simplify(b - a)
        steps = [f"difference: {d}"]
        lo, _ = dim_bounds(d)
        if lo is not None and lo >= 0:
            return Proof(claim, PROVEN, steps + [f"at least {lo} for dimensions >= 1"])
        names = free_symbols(a) | free_symbols(b)
        values = self._search(lambda v: evaluate(d, v) < 0, names)
        if values is not None:
            return Proof(claim, DISPROVEN, steps + [
                f"counterexample {values}: {a} = {evaluate(a, values)} but "
                f"{b} = {evaluate(b, values)}"], values)
        return Proof(claim, UNKNOWN, steps + ["neither proven nor refuted by small values"])

    def prove_divisible(self, expr, m):
        """Whether m divides expr for every value of the symbols that satisfies the facts."""
        expr, m = as_expr(expr), _modulus(m, "a divisor")
        claim = f"{m} divides {expr}"
        return self._prove_zero(expr % m, claim, free_symbols(expr), lambda v: (
            f"{expr} = {evaluate(expr, v)}, remainder {evaluate(expr, v) % m}"))

    def _prove_zero(self, d, claim, names, describe):
        steps = [f"canonical difference: {d}"] if "==" in claim else [f"remainder: {d}"]
        if d == 0:
            return Proof(claim, PROVEN, steps + ["the canonical forms agree"])
        s = self.simplify(d)
        if s != d:
            given = ", ".join(map(str, self.facts)) or "no facts"
            steps.append(f"rewritten with {given}, for dimensions >= 1: {s}")
            if s == 0:
                return Proof(claim, PROVEN, steps)
        for form in dict.fromkeys([d, _opaque(d)]):     # as is, then atoms made opaque
            found = self._cases(form)
            if found is not None and found[1]:
                split, cases = found
                if all(_in_case(form, mapping) in (0, None) for mapping in cases):
                    over = ", ".join(f"{x} = {m}*{x}__q + r" for x, m in sorted(split.items()))
                    return Proof(claim, PROVEN, steps + [
                        f"case analysis over {over}: all {len(cases)} cases allowed by the "
                        f"facts give 0"])
        values = self.counterexample(d, names)
        if values is not None:
            return Proof(claim, DISPROVEN, steps + [
                f"counterexample {values}: {describe(values)}"], values)
        return Proof(claim, UNKNOWN, steps + ["neither proven nor refuted by small values"])

    def counterexample(self, d, also=()):
        """Small dimension values (1, 2, ...) of d's symbols and those in ``also``, satisfying
        the facts, where d is nonzero (a dict), or None."""
        d = as_expr(d)
        return self._search(lambda v: evaluate(d, v) != 0, free_symbols(d) | set(also))

    def _search(self, refutes, names):
        # Facts on other symbols than these are assumed satisfiable; symbols tied to these
        # by a fact take part in the search too.
        names = set(names)
        for f in self.facts:
            if f.symbols & names:
                names |= f.symbols
        names = sorted(names)
        top = max(2, min(LARGEST_TRIED, int(MAX_TRIES ** (1 / max(1, len(names))))))
        for values in itertools.product(range(1, top + 1), repeat=len(names)):
            values = dict(zip(names, values))
            try:
                if self.satisfies(values) and refutes(values):
                    return values
            except ZeroDivisionError:   # outside the expression's domain: not a witness
                continue
        return None


def dim_bounds(expr):
    """An interval (lo, hi) holding expr's value when every symbol is a dimension (>= 1);
    None: unbounded on that side. Nonnegative products multiply their bounds, so
    64*H*W - 32*H*W is known to be at least 32."""
    lo = hi = expr.const
    for mono, coeff in expr.terms:
        tlo, thi = 1, 1
        for atom in mono:
            alo, ahi = _dim_atom_bounds(atom)
            if alo is None or alo < 0 or tlo is None:
                tlo = thi = None        # only products of nonnegative factors are bounded
                break
            tlo *= alo
            thi = None if thi is None or ahi is None else thi * ahi
        if tlo is None:
            tlo = thi = None
        elif coeff < 0:
            tlo, thi = (None if thi is None else coeff * thi), coeff * tlo
        else:
            tlo, thi = coeff * tlo, (None if thi is None else coeff * thi)
        lo = None if lo is None or tlo is None else lo + tlo
        hi = None if hi is None or thi is None else hi + thi
    return lo, hi


def _dim_atom_bounds(atom):
    if atom.kind == Op.SYM:
        return 1, None
    a, b = atom.args
    if atom.kind in (Op.DIV, Op.MOD) and b.is_constant():
        if atom.kind == Op.MOD:
            return 0, b.const - 1
        lo, hi = dim_bounds(a)
        return (None if lo is None else lo // b.const), (None if hi is None else hi // b.const)
    if atom.kind in (Op.MIN, Op.MAX):
        (alo, ahi), (blo, bhi) = dim_bounds(a), dim_bounds(b)
        if atom.kind == Op.MIN:
            his = [h for h in (ahi, bhi) if h is not None]
            return (None if alo is None or blo is None else min(alo, blo)), (min(his) if his else None)
        los = [x for x in (alo, blo) if x is not None]
        return (max(los) if los else None), (None if ahi is None or bhi is None else max(ahi, bhi))
    return None, None
