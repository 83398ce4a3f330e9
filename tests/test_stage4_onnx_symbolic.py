"""The symbolic shape engine of the ONNX inference compiler (stage4_models/onnx/symbolic):
canonical forms, the seed's identities proven, non-identities refused with a counterexample,
the simplifier and the prover checked against plain integer arithmetic, and the U-net
shape chains whose skip Concats are (padded) or are not (unpadded) provably equal."""
import doctest
import random

import pytest
from hypothesis import given, strategies as st

import stage4_models.onnx.symbolic as symbolic
from stage4_models.onnx.symbolic import Context, Dim, Max, Min, evaluate, free_symbols, subs

X, Y, E, H, W = (Dim(n) for n in "XYEHW")
A, B, C = Dim("A"), Dim("B"), Dim("C")


def align16(e):
    """e rounded up to a multiple of 16, as the padded U-net's ONNX graph computes it."""
    return e + (16 - e % 16) % 16


def pool(e):
    """A 2x2 max-pool with stride 2, no padding: floor((e - 2) / 2) + 1."""
    return (e - 2) // 2 + 1


def same_conv(e):
    """A 3x3 convolution with padding 1 and stride 1: (e + 2 - 3) // 1 + 1."""
    return (e + 2 - 3) // 1 + 1


def test_docstring_example_runs():
    failures, tried = doctest.testmod(symbolic, verbose=False)
    assert tried > 5 and failures == 0


def test_the_engine_uses_only_the_standard_library():
    import ast
    import pathlib
    import sys
    for path in pathlib.Path(symbolic.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in sys.stdlib_module_names, (path.name, name)


# ---- the seed's identities -------------------------------------------------------------------
def test_pool_then_upsample_is_the_identity_on_even_extents():
    ctx = Context().assume_divisible(X, 2)
    assert repr(ctx) == "Context(X % 2 == 0)"
    proof = ctx.prove_equal(((X - 2) // 2 + 1) * 2, X)
    assert proof and proof.status == "proven"
    assert "X % 2 == 0" in proof.why
    assert proof.explain().splitlines()[-1].strip() == "=> proven"


def test_pool_then_upsample_without_the_parity_fact_is_refused():
    proof = Context().prove_equal(((X - 2) // 2 + 1) * 2, X)
    assert not proof and proof.disproven
    odd = proof.counterexample["X"]
    assert odd % 2 == 1
    assert evaluate(((X - 2) // 2 + 1) * 2, proof.counterexample) != odd
    assert evaluate(((X - 2) // 2 + 1) * 2, {"X": 3}) == 2      # X = 3: an odd extent
    assert "counterexample" in proof.why


@pytest.mark.parametrize("m", [1, 2, 4, 8, 16])
def test_aligned_up_is_divisible(m):
    assert Context().prove_divisible(align16(E), m)


def test_aligned_up_is_not_divisible_by_32():
    proof = Context().prove_divisible(align16(E), 32)
    assert proof.disproven
    assert evaluate(align16(E), proof.counterexample) % 32 != 0


def test_divisibility_needs_the_case_analysis():
    # 2 * (E // 2) + E % 2 is E, but no canonical rewrite says so; the residues of E mod 2 do.
    proof = Context().prove_equal(2 * (E // 2) + E % 2, E)
    assert proof and "case analysis" in proof.why
    # divisible by 6 exactly when divisible by 2 and by 3
    ctx = Context().assume_divisible(X, 2).assume_divisible(X, 3)
    assert ctx.prove_divisible(X, 6) and ctx.prove_divisible(X + 12, 6)
    assert ctx.prove_divisible(X + 2, 6).disproven
    assert ctx.residue(X + 2, 6) == 2 and Context().residue(X, 2) is None


def test_atoms_no_case_reduces_are_opaque_symbols():
    for a in (Min(X, Y), X // Y, Max(X, 2 * Y) % (Y + 1)):
        proof = Context().prove_equal((a // 4) * 4 + a % 4, a)
        assert proof and "[" in proof.why        # the atom's own symbol, e.g. [min(X, Y)]
    assert Context().residue(4 * (X // Y) + 2, 4) == 2


def test_the_seeds_undefined_behaviour_is_not_assumed():
    # the seed proves 1 // (X - 1) == 0 by assuming X - 1 > 1; X = 2 gives 1
    proof = Context().prove_equal(1 // (X - 1), 0)
    assert proof.disproven and proof.counterexample == {"X": 2}


def test_facts_decide_remainders_and_exact_divisions():
    ctx = Context().assume_divisible(H, 16)
    assert ctx.simplify(align16(H)) == H
    assert ctx.simplify(H % 4) == 0 and ctx.simplify(4 * (H // 4)) == H
    assert ctx.simplify(3 * (H // 4)) == 3 * (H // 4)       # not exact: left alone
    odd = Context().assume_residue(X, 2, 1)
    assert odd.prove_equal(2 * (X // 2), X - 1)
    assert odd.prove_equal(X % 2, 1) and not odd.prove_equal(X % 4, 1)


# ---- canonical forms ----------------------------------------------------------------------------
@pytest.mark.parametrize("left, right", [
    (X + Y, Y + X),
    ((X + Y) * 2, 2 * X + Y + Y),
    (X - X, 0),
    ((A * B) * C, A * (B * C)),
    (A * B, B * A),
    ((A * B) // A, B),
    ((A * B + 2 * A + 4 * C * A) // A, B + 4 * C + 2),
    ((B * X + C) // B, X + C // B),
    ((X + 4) // 2, X // 2 + 2),
    ((X - 2) // 2 + 1, X // 2),
    ((2 * X) // 2, X),
    ((2 * X + 2) // 4, (X + 1) // 2),
    ((X // 2) // 2, X // 4),
    ((X // 2 + 3) // 5, (X + 6) // 10),
    ((2 * (Y // 3)) // 4, Y // 6),
    ((2 * (Y % 3) + 4 * X) % 8, 2 * ((Y % 3 + 2 * X) % 4)),
    ((X + 32) % 16, X % 16),
    ((E % 16) % 16, E % 16),
    ((16 - E % 16) % 16, (-E) % 16),
    ((2 * X) % 4, 2 * (X % 2)),
    ((X % 4) // 4, 0),
    ((X % 4) % 8, X % 4),
    (X // 1, X),
    (X // -2, (-X) // 2),
    (Min(X, X + 1), X),
    (Max(X + 2, X - 1), X + 2),
    (Min(X, Y), Min(Y, X)),
    (17 // X, 17 // X),
])
def test_equal_expressions_written_differently_have_one_canonical_form(left, right):
    left, right = symbolic.as_expr(left), symbolic.as_expr(right)
    assert left == right and hash(left) == hash(right)
    assert str(left) == str(right)
    assert len({left: 1, right: 2}) == 1


def test_ceildiv_is_a_floor_division():
    assert symbolic.ceildiv(2 * X, 2) == X and symbolic.ceildiv(X + 4, 2) == symbolic.ceildiv(X, 2) + 2
    # X - X // 2 and (X + 1) // 2: equal, in two canonical forms; the case analysis proves it
    assert symbolic.ceildiv(X, 2) != (X + 1) // 2
    assert Context().prove_equal(symbolic.ceildiv(X, 2), (X + 1) // 2)
    assert [evaluate(symbolic.ceildiv(X - 3, 4), {"X": v}) for v in (1, 3, 4, 7, 8)] == [0, 0, 1, 1, 2]


def test_different_expressions_stay_different():
    assert X != Y and X + 1 != X and X // 2 != X // 3 and X % 2 != X // 2 and X * Y != X + Y


@pytest.mark.parametrize("expr, text", [
    (X - 2, "X - 2"),
    ((X + 1) // 2, "(X + 1) // 2"),
    (((X - 3) // 2 + 1) * 2, "2*((X + 1) // 2) - 2"),
    (H * W * 3, "3*H * W"),
    (-X + 5, "-X + 5"),
    ((-E) % 16 + E, "E + (-E) % 16"),
    ((X // 2) * Y, "Y * (X // 2)"),        # symbols sort first
    (Max(X, 3), "max(3, X)"),
    (symbolic.as_expr(0), "0"),
])
def test_printing(expr, text):
    assert str(expr) == text


def test_evaluate_and_free_symbols():
    e = align16(H) * align16(W) * 4 + H % 3
    assert evaluate(e, {"H": 37, "W": 50}) == 48 * 64 * 4 + 1
    assert free_symbols(e) == {"H", "W"} and free_symbols(symbolic.as_expr(7)) == set()
    assert subs(e, {"H": 32, "W": W}) == 32 * 4 * align16(W) + 2
    assert int(subs(e, {"H": 1, "W": 1})) == 16 * 16 * 4 + 1


def test_untrusted_inputs_are_refused_by_name():
    with pytest.raises(TypeError, match="name"):
        Dim(3)
    with pytest.raises(TypeError, match="float"):
        X + 1.5
    with pytest.raises(ZeroDivisionError):
        X // 0
    with pytest.raises(ZeroDivisionError):
        X % (Y - Y)
    with pytest.raises(TypeError, match="truth value"):
        bool(X)
    with pytest.raises(TypeError, match="not a constant"):
        int(X + 1)
    with pytest.raises(ValueError, match=r"\['Y'\]"):
        evaluate(X + Y, {"X": 1})
    with pytest.raises(TypeError, match="int"):
        evaluate(X, {"X": 1.0})
    with pytest.raises(ValueError, match="positive int"):
        Context().assume_divisible(X, 0)
    with pytest.raises(ValueError, match="residue"):
        Context().assume_residue(X, 2, 2)
    with pytest.raises(ValueError, match="contradicts"):
        Context().assume_divisible(2 * X + 1, 2)
    with pytest.raises(ValueError, match="positive int"):
        Context().prove_divisible(X, -4)
    with pytest.raises(TypeError, match="positive int, got float"):
        Context().prove_divisible(X, 2.0)
    with pytest.raises(TypeError, match="residue"):
        Context().assume_residue(X, 2, "1")


# ---- the simplifier and the prover against plain integers ------------------------------------------
NAMES = ("X", "Y", "Z")
leaves = st.one_of(st.sampled_from(NAMES).map(lambda n: ("sym", n)),
                   st.integers(-20, 20).map(lambda k: ("const", k)))


def _extend(children):
    small = st.sampled_from([-4, -3, -2, 2, 3, 4, 8, 16])
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*", "min", "max"]), children, children),
        st.tuples(st.sampled_from(["//", "%"]), children, small.map(lambda k: ("const", k))),
        st.tuples(st.sampled_from(["//", "%"]), children, children))


trees = st.recursive(leaves, _extend, max_leaves=8)
OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
       "//": lambda a, b: a // b, "%": lambda a, b: a % b, "min": Min, "max": Max}
INT_OPS = dict(OPS, min=min, max=max)


def build(tree, values=None):
    """The tree as an Expr (values None) or as the int plain Python computes."""
    if tree[0] == "sym":
        return Dim(tree[1]) if values is None else values[tree[1]]
    if tree[0] == "const":
        return tree[1]
    ops = OPS if values is None else INT_OPS
    return ops[tree[0]](build(tree[1], values), build(tree[2], values))


assignments = st.fixed_dictionaries({n: st.integers(-40, 40) for n in NAMES})


@given(trees, st.lists(assignments, min_size=1, max_size=6))
def test_the_simplifier_never_changes_a_value(tree, points):
    try:
        expr = symbolic.as_expr(build(tree))
    except ZeroDivisionError:       # a constant divisor of 0, as Python's own
        return
    assert subs(expr, {}) == expr   # canonical forms are fixed points of building again
    for values in points:
        try:
            expected = build(tree, values)
        except ZeroDivisionError:   # outside the expression's domain
            continue
        assert evaluate(expr, values) == expected, (tree, str(expr), values)
        # the printed form is Python that computes the same value (precedence, signs)
        assert eval(str(expr), {"min": min, "max": max}, dict(values)) == expected, str(expr)


def _random_points(ctx, names, rng, count):
    """Assignments of dimensions (>= 1) satisfying ctx's facts, small and large values."""
    points = []
    while len(points) < count:
        values = {n: rng.choice([rng.randint(1, 20), rng.randint(1, 1000)]) for n in names}
        if ctx.satisfies(values):
            points.append(values)
    return points


@given(trees, trees, st.sampled_from([None, ("X", 2, 0), ("X", 4, 1), ("Y", 3, 0)]),
       st.sampled_from(["random", "mod-split", "shift"]))
def test_proven_means_equal_everywhere(left, right, fact, how):
    try:
        a = symbolic.as_expr(build(left))
        b = symbolic.as_expr(build(right))
    except ZeroDivisionError:
        return
    if how == "mod-split":          # a // m * m + a % m is always a: often proven
        b = (a // 4) * 4 + a % 4
    elif how == "shift":            # equal only where the fact holds
        b = 2 * ((a + 2) // 2) - 2
    ctx = Context()
    if fact is not None:
        ctx.assume_residue(Dim(fact[0]), fact[1], fact[2])
    proof = ctx.prove_equal(a, b)
    names = sorted(free_symbols(a) | free_symbols(b) | set(NAMES))
    if proof:
        rng = random.Random(str(left) + str(right))
        for values in _random_points(ctx, names, rng, 40):
            try:
                assert evaluate(a, values) == evaluate(b, values), (str(a), str(b), values)
            except ZeroDivisionError:
                continue
    elif proof.disproven:
        values = proof.counterexample
        assert ctx.satisfies(values)
        assert evaluate(a, values) != evaluate(b, values)


@given(trees, trees, st.sampled_from([None, ("X", 2, 0), ("Y", 3, 1)]))
def test_proven_order_holds_everywhere(left, right, fact):
    try:
        a, b = symbolic.as_expr(build(left)), symbolic.as_expr(build(right))
    except ZeroDivisionError:
        return
    ctx = Context()
    if fact is not None:
        ctx.assume_residue(Dim(fact[0]), fact[1], fact[2])
    for lesser, greater in ((a, b), (Min(a, b) - 1, Max(a, b))):
        proof = ctx.prove_less_equal(lesser, greater)
        if proof:
            for values in _random_points(ctx, NAMES, random.Random(str(left)), 20):
                try:
                    assert evaluate(lesser, values) <= evaluate(greater, values)
                except ZeroDivisionError:
                    continue
        elif proof.disproven:
            assert evaluate(lesser, proof.counterexample) > evaluate(greater, proof.counterexample)


@pytest.mark.parametrize("expr", [X, 3 * X + 5, X * Y + 7, X // 2 + Y % 4, align16(X) - 1])
def test_division_identity_is_proven(expr):
    for m in (2, 4, 16):
        assert Context().prove_equal((expr // m) * m + expr % m, expr)


# ---- the U-net shape chains -----------------------------------------------------------------------
def unet_skips(extent, levels=4):
    """The (skip, upsampled) extent pairs a U-net's Concats see, and the output extent:
    each level a 'same' conv, then a 2x2 pool; back up, a 2x nearest upsample each."""
    skips = []
    for _ in range(levels):
        extent = same_conv(extent)
        skips.append(extent)
        extent = pool(extent)
    pairs = []
    for skip in reversed(skips):
        extent = extent * 2
        pairs.append((skip, extent))
        extent = same_conv(extent)
    return pairs, extent


@pytest.mark.parametrize("dim", [H, W])
def test_padded_unet_skips_are_proven_equal(dim):
    ctx = Context()
    padded = align16(dim)
    pairs, out = unet_skips(padded)
    for skip, up in pairs:
        proof = ctx.require_equal(skip, up, "Concat")
        assert proof
    assert ctx.prove_equal(out, padded)
    cropped = Min(out, dim)         # Slice [:H] of the padded output
    assert ctx.prove_equal(cropped, dim)
    # each expression is the integer chain the layers compute
    for v in (1, 15, 16, 17, 37, 100):
        p = v + (16 - v % 16) % 16
        assert evaluate(pairs[0][0], {str(dim): v}) == p // 8
        assert evaluate(out, {str(dim): v}) == p


def test_padded_unet_peak_memory_is_an_expression_of_the_input():
    # the largest live set: the four skips plus the bottleneck, 16, 32, 64, 128, 256 channels
    ph, pw = align16(H), align16(W)
    skips_h, skips_w = [ph], [pw]
    for _ in range(4):
        skips_h.append(pool(skips_h[-1]))
        skips_w.append(pool(skips_w[-1]))
    peak = sum(16 * 2 ** i * skips_h[i] * skips_w[i] for i in range(5)) * 4
    assert free_symbols(peak) == {"H", "W"}
    h, w = 37, 50
    ph_, pw_ = 48, 64
    assert evaluate(peak, {"H": h, "W": w}) == 4 * sum(
        16 * 2 ** i * (ph_ >> i) * (pw_ >> i) for i in range(5))


def test_memory_footprints_are_ordered_for_every_input():
    big, small = 64 * align16(H) * align16(W), 32 * align16(H) * align16(W)
    ctx = Context()
    assert ctx.prove_less_equal(small, big) and ctx.prove_less_equal(H, align16(H))
    assert ctx.simplify(Max(big, small)) == big and ctx.simplify(Min(big, small + 7)) == small + 7
    assert Max(big, small) != big           # the canonical form alone knows no signs
    assert ctx.prove_equal(Max(big, small), big) and ctx.prove_equal(Min(big, small), small)
    assert Min(H, align16(H)) == H          # ... except from remainders' bounds
    refused = ctx.prove_less_equal(H * W, 3 * H)
    assert refused.disproven and evaluate(H * W - 3 * H, refused.counterexample) > 0
    assert ctx.prove_less_equal(align16(H), H).disproven


def test_unpadded_unet_skip_is_not_provable():
    (skip, up), = unet_skips(H, levels=1)[0]     # the seed's one-level U-net
    assert skip == H and up == (H // 2) * 2
    proof = Context().prove_equal(skip, up)
    assert not proof and proof.disproven
    assert proof.counterexample["H"] % 2 == 1
    assert (evaluate(skip, {"H": 37}), evaluate(up, {"H": 37})) == (37, 36)  # the seed's error
    with pytest.raises(ValueError, match=r"Concat_7: .*H.*2\*\(H // 2\)"):
        Context().require_equal(skip, up, "Concat_7")
    # four levels: the outermost Concat sees H and 16*(H // 16), the inner ones need H
    # divisible by 8, 4, 2: all refused, and all proven given H % 16 == 0
    pairs, _ = unet_skips(H)
    assert pairs[-1] == (H, 16 * (H // 16))
    assert not any(Context().prove_equal(s, u) for s, u in pairs)
    ctx = Context().assume_divisible(H, 16)
    assert all(ctx.prove_equal(s, u) for s, u in pairs)
