"""torch.linalg (stage2_tensor/linalg/) and the products (products.py, cdist.py,
covariance.py) beyond the op table's rows: batches against numpy.linalg, larger and odd
sizes, float32, singular and rank-deficient matrices, the named results, PyTorch's errors
and the older top-level names. Gradients are the op table's (tests/optable.py)."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.linalg as linalg

from .engines import engine_params, engines_on

ENGINES = engine_params(engines_on("python", "cpu"))


def t(x, engine, dtype=tg.float64):
    x = np.asarray(x, dtype=float)
    return tg.tensor(x.ravel().tolist(), dtype=dtype, device=engine.device).reshape(*x.shape)


def close(a, b, tol=1e-12):
    np.testing.assert_allclose(np.asarray(a.detach().numpy() if hasattr(a, "numpy") else a, dtype=float), b,
                               rtol=tol, atol=tol)


def well_conditioned(rng, *shape):
    return rng.standard_normal(shape) + shape[-1] * np.eye(shape[-1])


@pytest.mark.parametrize("engine", ENGINES)
def test_lu_family_on_batches(engine):
    rng = np.random.default_rng(0)
    A, B = well_conditioned(rng, 2, 1, 5, 5), rng.standard_normal((3, 5, 2))
    a, b = t(A, engine), t(B, engine)
    close(linalg.det(a), np.linalg.det(A))
    sign, logabsdet = linalg.slogdet(-a)
    close(sign, np.linalg.slogdet(-A)[0])
    close(logabsdet, np.linalg.slogdet(-A)[1])
    close(linalg.inv(a), np.linalg.inv(A))
    close(linalg.solve(a, b), np.linalg.solve(A, B))                       # batches broadcast: (2, 3, 5, 2)
    close(linalg.solve(a[0, 0], b[0, :, 0]), np.linalg.solve(A[0, 0], B[0, :, 0]))
    close(linalg.solve(a, b.mT[:1, :1], left=False), np.linalg.solve(A.swapaxes(-1, -2), B.swapaxes(-1, -2)[:1, :1]
                                                                      .swapaxes(-1, -2)).swapaxes(-1, -2))
    close(tg.logdet(a), np.log(np.linalg.det(A)))
    assert math.isnan(tg.logdet(t(-np.eye(3), engine)).item())


@pytest.mark.parametrize("engine", ENGINES)
def test_singular_matrices(engine):
    S = np.diag([1.0, 1.0, 0.0])
    assert linalg.det(t(S, engine)).item() == 0
    sign, logabsdet = linalg.slogdet(t(S, engine))
    assert sign.item() == 0 and logabsdet.item() == -math.inf
    with pytest.raises(linalg.LinAlgError, match=r"linalg.inv: \(Batch element 1\): The diagonal element 3 is zero, "
                                                 "the inversion could not be completed because the input matrix is "
                                                 "singular."):
        linalg.inv(t(np.stack([np.eye(3), S]), engine))
    with pytest.raises(RuntimeError, match="The solver failed because the input matrix is singular"):
        linalg.solve(t(S, engine), t(np.ones(3), engine))
    with pytest.raises(linalg.LinAlgError, match=r"the leading minor of order 2 is not positive-definite"):
        linalg.cholesky(t(np.diag([1.0, -1.0, 1.0]), engine))


@pytest.mark.parametrize("engine", ENGINES)
def test_cholesky_and_triangular_solves(engine):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((2, 4, 4))
    A = X @ X.swapaxes(-1, -2) + np.eye(4)
    L = np.linalg.cholesky(A)
    close(linalg.cholesky(t(A, engine)), L)
    close(linalg.cholesky(t(A, engine), upper=True), L.swapaxes(-1, -2))
    close(tg.cholesky(t(A, engine)), L)
    B = rng.standard_normal((2, 4, 3))
    close(linalg.solve_triangular(t(L, engine), t(B, engine), upper=False), np.linalg.solve(L, B))
    close(linalg.solve_triangular(t(L, engine), t(B, engine).mT, upper=False, left=False),
          np.linalg.solve(L.swapaxes(-1, -2), B).swapaxes(-1, -2))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5), (4, 4)])
def test_qr_as_numpy(engine, shape):
    A = np.random.default_rng(2).standard_normal(shape)
    for mode in ("reduced", "complete", "r"):
        Q, R = linalg.qr(t(A, engine), mode)
        expected = np.linalg.qr(A, mode)
        close(R, expected if mode == "r" else expected[1])
        if mode != "r":
            close(Q, expected[0])                   # LAPACK's signs: R's diagonal -sign(the pivot)
    assert tg.qr(t(A, engine), some=False).Q.shape == (*shape[:-2], shape[-2], shape[-2])


def _orthonormal(Q):
    q = Q.numpy()
    close(q.swapaxes(-1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), 1e-12)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("n", [1, 2, 5, 6])
def test_eigh(engine, n):
    X = np.random.default_rng(n).standard_normal((2, n, n))
    A = X + X.swapaxes(-1, -2)
    L, V = linalg.eigh(t(A, engine))
    close(L, np.linalg.eigvalsh(A), 1e-12)
    _orthonormal(V)
    close((V.numpy() * L.numpy()[..., None, :]) @ V.numpy().swapaxes(-1, -2), A, 1e-12)
    close(linalg.eigvalsh(t(np.triu(A[0]), engine), UPLO="U"), np.linalg.eigvalsh(A[0]))
    close(linalg.eigh(t(np.tril(A[0]) + 5 * np.triu(A[0], 1), engine)).eigenvalues, np.linalg.eigvalsh(A[0]))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("shape", [(2, 6, 4), (4, 7), (5, 5), (1, 3)])
def test_svd(engine, shape):
    A = np.random.default_rng(3).standard_normal(shape)
    for full in (True, False):
        U, S, Vh = linalg.svd(t(A, engine), full_matrices=full)
        u, s, vh = np.linalg.svd(A, full_matrices=full)
        assert U.shape == u.shape and Vh.shape == vh.shape
        close(S, s, 1e-12)
        _orthonormal(U)
        _orthonormal(Vh.mT)
        k = min(shape[-2:])
        close((U.numpy()[..., :k] * S.numpy()[..., None, :]) @ Vh.numpy()[..., :k, :], A, 1e-12)
    close(linalg.svdvals(t(A, engine)), np.linalg.svd(A, compute_uv=False), 1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_rank_deficient(engine):
    A = np.outer([1.0, 2.0, 3.0, 4.0], [1.0, -1.0, 2.0])            # rank 1: two zero singular values
    U, S, Vh = linalg.svd(t(A, engine), full_matrices=False)
    close(S, np.linalg.svd(A, compute_uv=False), 1e-12)
    _orthonormal(U)                                                    # completed where A says nothing
    close(linalg.pinv(t(A, engine)), np.linalg.pinv(A))
    assert linalg.matrix_rank(t(A, engine)).item() == 1
    H = A.T @ A
    assert linalg.matrix_rank(t(H, engine), hermitian=True).item() == 1
    close(linalg.pinv(t(H, engine), hermitian=True), np.linalg.pinv(H), 1e-12)
    assert linalg.matrix_rank(t(np.stack([np.eye(3), A[:3]]), engine)).tolist() == [3, 1]


@pytest.mark.parametrize("engine", ENGINES)
def test_float32(engine):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((5, 5))
    A = X + X.T
    close(linalg.eigvalsh(t(A, engine, tg.float32)), np.linalg.eigvalsh(A), 2e-5)
    close(linalg.svdvals(t(X, engine, tg.float32)), np.linalg.svd(X, compute_uv=False), 2e-5)
    close(linalg.inv(t(A + 8 * np.eye(5), engine, tg.float32)), np.linalg.inv(A + 8 * np.eye(5)), 2e-5)
    assert linalg.det(t(A, engine, tg.float32)).dtype is tg.float32


@pytest.mark.parametrize("engine", ENGINES)
def test_norms(engine):
    A = np.random.default_rng(5).standard_normal((2, 3, 4))
    a = t(A, engine)
    for ord in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf):
        close(linalg.matrix_norm(a, ord), np.linalg.norm(A, ord, axis=(-2, -1)), 1e-12)
        assert linalg.matrix_norm(a, ord, keepdim=True).shape == (2, 1, 1)
    close(linalg.matrix_norm(a, 1, dim=(0, 2)), np.linalg.norm(A, 1, axis=(0, 2)))
    for ord in (2, 1, 3, 0, -1, 0.5, math.inf, -math.inf):
        close(linalg.vector_norm(a, ord, dim=(0, -1)), np.linalg.norm(A.transpose(1, 0, 2).reshape(3, -1), ord,
                                                                     axis=-1))
    close(linalg.norm(a), np.linalg.norm(A.ravel()))
    close(linalg.norm(a[0], "nuc"), np.linalg.norm(A[0], "nuc"))
    close(linalg.norm(a, 3, dim=1), np.linalg.norm(A, 3, axis=1))
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Order 3 not supported."):
        linalg.matrix_norm(a, 3)
    with pytest.raises(RuntimeError, match="the input must be 1D or 2D"):
        linalg.norm(a, 2)
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        linalg.vector_norm(tg.ones(3, dtype=tg.int64, device=engine.device))


@pytest.mark.parametrize("engine", ENGINES)
def test_lstsq_pinv_matrix_exp_multi_dot(engine):
    rng = np.random.default_rng(6)
    A, B = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    out = linalg.lstsq(t(A, engine), t(B, engine))
    close(out.solution, np.stack([np.linalg.lstsq(A[i], B[i], rcond=None)[0] for i in range(2)]))
    assert out.residuals.shape == (0,) and out.singular_values.shape == (0,) and out.rank.tolist() == [3, 3]
    gelsd = linalg.lstsq(t(A, engine), t(B, engine), driver="gelsd")
    close(gelsd.residuals, ((A @ gelsd.solution.numpy() - B) ** 2).sum(-2))
    close(gelsd.singular_values, np.linalg.svd(A, compute_uv=False))
    wide = linalg.lstsq(t(A, engine).mT, t(B[:, :3], engine)).solution          # the least-norm solution
    close(wide, np.stack([np.linalg.lstsq(A[i].T, B[i, :3], rcond=None)[0] for i in range(2)]))
    close(linalg.lstsq(t(A[0], engine), t(B[0, :, 0], engine)).solution, np.linalg.lstsq(A[0], B[0, :, 0],
                                                                                         rcond=None)[0])
    X = rng.standard_normal((4, 4))
    S = X + X.T
    values, vectors = np.linalg.eigh(S)
    close(linalg.matrix_exp(t(S, engine)), (vectors * np.exp(values)) @ vectors.T, 1e-11)
    close(linalg.matrix_exp(t(X, engine)) @ linalg.matrix_exp(-t(X, engine)), np.eye(4), 1e-12)
    close(linalg.matrix_exp(t(np.zeros((2, 3, 3)), engine)), np.broadcast_to(np.eye(3), (2, 3, 3)))
    M = [rng.standard_normal(s) for s in [(4,), (4, 6), (6, 2), (2, 5), (5,)]]
    close(linalg.multi_dot([t(m, engine) for m in M]), np.linalg.multi_dot(M))
    with pytest.raises(RuntimeError, match=r"multi_dot\(\): expected at least 2 tensors but got 1"):
        linalg.multi_dot([t(M[1], engine)])


@pytest.mark.parametrize("engine", ENGINES)
def test_linalg_errors(engine):
    wide = t(np.ones((2, 3)), engine)
    for fn, name in ((linalg.inv, "inv"), (linalg.det, "det"), (linalg.slogdet, "slogdet"),
                     (linalg.cholesky, "cholesky"), (linalg.eigh, "eigh"), (linalg.matrix_exp, "matrix_exp")):
        with pytest.raises(RuntimeError, match=f"linalg.{name}: A must be batches of square matrices, but they are "
                                               "2 by 3 matrices"):
            fn(wide)
    with pytest.raises(RuntimeError, match="linalg.svd: The input tensor A must have at least 2 dimensions."):
        linalg.svd(t(np.ones(3), engine))
    with pytest.raises(RuntimeError, match="linalg.inv: Expected a floating point or complex tensor as input. Got Long"):
        linalg.inv(tg.ones(2, 2, dtype=tg.int64, device=engine.device))
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x1\)"):
        linalg.solve(t(np.eye(3), engine), t(np.ones(4), engine))
    with pytest.raises(RuntimeError, match="qr received unrecognized mode 'x'"):
        linalg.qr(wide, mode="x")
    with pytest.raises(RuntimeError, match="should match other.size"):
        linalg.lstsq(t(np.ones((3, 2)), engine), t(np.ones((4, 1)), engine))


@pytest.mark.parametrize("engine", ENGINES)
def test_qr_backward_modes_without_a_derivative(engine):
    a = t(np.random.default_rng(7).standard_normal((4, 3)), engine).requires_grad_()
    with pytest.raises(RuntimeError, match="mode='r'"):
        linalg.qr(a, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        linalg.qr(a, mode="complete").Q.sum().backward()


@pytest.mark.parametrize("engine", ENGINES)
def test_products(engine):
    rng = np.random.default_rng(8)
    M, v, C = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal((2, 2))
    m, vt = t(M, engine), t(v, engine)
    nan_input = t(np.full((2, 2), np.nan), engine)
    close(tg.addmm(nan_input, m, m.mT, beta=0), M @ M.T)                 # beta = 0: a NaN input ignored
    c = t(C, engine)
    c.addmm_(m, m.mT, alpha=2)
    close(c, C + 2 * M @ M.T)
    close(tg.inner(m, vt), M @ v)
    close(tg.inner(t(2.0, engine), m), 2 * M)
    close(tg.tensordot(m, m, dims=([1, 0], [1, 0])), np.tensordot(M, M, ([1, 0], [1, 0])))
    close(tg.tensordot(m, t(np.ones((3, 4)), engine), 1), M @ np.ones((3, 4)))
    close(tg.kron(m, vt), np.kron(M, v))
    assert tg.kron(m, vt).shape == (2, 9)
    assert tg.trace(tg.ones(2, 3, dtype=tg.int32, device=engine.device)).dtype is tg.int64
    close(tg.cross(t(np.ones((3, 2)), engine), t(np.arange(6.0).reshape(3, 2), engine)),
          np.cross(np.ones((3, 2)), np.arange(6.0).reshape(3, 2), axis=0))              # dim None: the first of size 3
    close(tg.matrix_power(t(C, engine), 0), np.eye(2))
    close(tg.matrix_power(t(C, engine), -2), np.linalg.matrix_power(C, -2))
    close(t(C, engine).matrix_power(5), np.linalg.matrix_power(C, 5))
    close(tg.chain_matmul(m), M)
    a, b = rng.standard_normal((2, 30, 4)), rng.standard_normal((1, 3, 4))
    by_matmul = tg.cdist(t(a, engine), t(b, engine))                                 # 30 rows: the matmul form
    direct = tg.cdist(t(a, engine), t(b, engine), compute_mode="donot_use_mm_for_euclid_dist")
    close(direct, np.linalg.norm(a[:, :, None] - b[:, None], axis=-1))
    close(by_matmul, direct.numpy(), 1e-10)
    close(tg.cdist(t(a, engine), t(b, engine), p=0), (a[:, :, None] != b[:, None]).sum(-1))
    X, fw, aw = rng.standard_normal((3, 6)), np.array([1, 2, 1, 3, 1, 1]), rng.uniform(0.5, 1.5, 6)
    close(tg.cov(t(X, engine)), np.cov(X))
    close(t(X, engine).cov(correction=0, fweights=tg.tensor(fw.tolist(), device=engine.device),
                           aweights=t(aw, engine)), np.cov(X, ddof=0, fweights=fw, aweights=aw))
    close(tg.corrcoef(t(X, engine)), np.corrcoef(X))
    assert tg.cov(t(X[0], engine)).shape == ()


@pytest.mark.parametrize("engine", ENGINES)
def test_product_errors(engine):
    m, v = t(np.ones((2, 3)), engine), t(np.ones(3), engine)
    cases = [(lambda: tg.dot(m, m), "1D tensors expected, but got 2D and 2D tensors"),
             (lambda: tg.dot(v, t(np.ones(4), engine)), "inconsistent tensor size"),
             (lambda: tg.mv(m, t(np.ones(4), engine)), r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)"),
             (lambda: tg.addmm(t(np.ones((2, 2)), engine), m, m), r"mat1 and mat2 shapes cannot be multiplied \(2x3 "
                                                                   r"and 2x3\)"),
             (lambda: tg.ger(m, v), "outer: Expected 1-D argument self, but got 2-D"),
             (lambda: tg.inner(m, t(np.ones((4, 2)), engine)), "the last dimension must match"),
             (lambda: tg.trace(t(np.ones((2, 2, 2)), engine)), "trace: expected a matrix, but got tensor with dim 3"),
             (lambda: tg.tensordot(m, t(np.ones((4, 2)), engine), 1), "contracted dimensions need to match"),
             (lambda: tg.tensordot(m, m, -1), "tensordot expects dims >= 0"),
             (lambda: tg.cdist(m, t(np.ones((4, 2)), engine)), "X1 and X2 must have the same number of columns"),
             (lambda: tg.cdist(m, m, p=-1), "cdist only supports non-negative p values"),
             (lambda: linalg.cross(t(np.ones(4), engine), t(np.ones(4), engine)), "must have length 3"),
             (lambda: tg.cov(t(np.ones((2, 2, 2)), engine)), "expected input to have two or fewer dimensions"),
             (lambda: tg.baddbmm(t(np.ones((2, 2, 2)), engine), t(np.ones((2, 2, 3)), engine),
                                 t(np.ones((3, 3, 2)), engine)), "must have same number of batches")]
    for fn, message in cases:
        with pytest.raises(RuntimeError, match=message):
            fn()
    with pytest.raises(TypeError, match="must be int, not float"):
        tg.matrix_power(t(np.eye(2), engine), 1.5)


@pytest.mark.parametrize("engine", ENGINES)
def test_older_names_and_methods(engine):
    A = well_conditioned(np.random.default_rng(9), 4, 4)
    a = t(A, engine)
    U, S, V = tg.svd(a)
    close((U.numpy() * S.numpy()) @ V.numpy().T, A)                         # torch.svd: V, not Vh
    assert tg.svd(a, compute_uv=False).U.abs().sum().item() == 0
    close(tg.inverse(a), np.linalg.inv(A))
    close(a.inverse(), np.linalg.inv(A))
    close(a.det(), np.linalg.det(A))
    close(tg.det(a), np.linalg.det(A))
    close(a.slogdet().logabsdet, np.linalg.slogdet(A)[1])
    close(tg.pinverse(a), np.linalg.pinv(A), 1e-12)
    close(a.matrix_exp(), linalg.matrix_exp(a).numpy())
    assert a.qr().R.shape == (4, 4) and a.svd(some=False).V.shape == (4, 4)
    close(tg.cholesky(a @ a.mT, upper=True), np.linalg.cholesky(A @ A.T).T)
    close((a @ a.mT).cholesky(), np.linalg.cholesky(A @ A.T))
    assert isinstance(linalg.LinAlgError("x"), RuntimeError)
    assert tg.linalg is linalg


@pytest.mark.parametrize("engine", ENGINES)
def test_block_diag(engine):
    a = t(np.arange(6.0).reshape(2, 3), engine).requires_grad_()
    out = tg.block_diag(a, t(5.0, engine), t([1.0, 2.0], engine), t(np.ones((0, 2)), engine))
    expected = np.zeros((4, 8))
    expected[:2, :3] = np.arange(6.0).reshape(2, 3)
    expected[2, 3], expected[3, 4:6] = 5.0, [1.0, 2.0]
    close(out, expected)
    (out * t(np.arange(32.0).reshape(4, 8), engine)).sum().backward()
    close(a.grad, np.arange(32.0).reshape(4, 8)[:2, :3])
    assert tg.block_diag(tg.ones(1, dtype=tg.int64, device=engine.device), t([2.0], engine)).dtype is tg.float64
    with pytest.raises(RuntimeError, match="Input tensors must have 2 or fewer dimensions. Input 0 has 3"):
        tg.block_diag(t(np.ones((1, 1, 1)), engine))
