"""stage4_models/mnist/conv_ladder.py (chapter 12, section 7): every rung computes the
convolution, the timer counts what it is asked to, and the table, reading and chart come out
of a ladder measured on small shapes.

The reference is the definition in float64 numpy (einsum over every window); the rungs
compute in float32 or float64 as given, so the tolerance is float64's (1e-12) for the
float64 inputs used here.
"""
import numpy as np
import pytest

from stage4_models.mnist import conv_ladder

pytestmark = pytest.mark.stage4


def _reference(x, w):
    """(N, C, H, W) x (O, C, 3, 3) -> (N, O, H - 2, W - 2), by the definition."""
    kh, kw = w.shape[2:]
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))   # N, C, oh, ow, kh, kw
    return np.einsum("ncijab,ocab->noij", windows, w)


@pytest.mark.parametrize("shape", [(1, 1, 5, 5, 1), (2, 3, 6, 4, 2), (1, 2, 3, 3, 4)])
def test_the_python_and_numpy_rungs_compute_the_convolution(shape):
    n, c, h, wd, o = shape
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(n, c, h, wd)), rng.normal(size=(o, c, 3, 3))
    want = _reference(x, w)
    np.testing.assert_allclose(conv_ladder.conv2d_positions(x, w), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.array(conv_ladder.conv2d_loops(x[0].tolist(), w.tolist())), want[0],
                               rtol=1e-12, atol=1e-12)


def test_median_seconds_calls_the_function_reps_times_plus_the_warm_up():
    calls = []
    assert conv_ladder.median_seconds(lambda: calls.append(1), 3) >= 0
    assert len(calls) == 4
    conv_ladder.median_seconds(lambda: calls.append(1), 2, warm_up=False)
    assert len(calls) == 6
    for bad in (0, -1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="reps must be a positive int"):
            conv_ladder.median_seconds(lambda: None, bad)


def test_a_small_ladder_measures_every_rung_and_reads_out(tmp_path):
    shapes = {"tiny": (2, 6, 3)}
    ladder = conv_ladder.measure(shapes, batch=2, reps=1, pure_reps=1, rng=np.random.default_rng(1))
    assert list(ladder["tiny"]) == [conv_ladder.PURE, conv_ladder.POSITIONS, conv_ladder.DIRECT, conv_ladder.IM2COL]
    assert all(seconds > 0 for seconds in ladder["tiny"].values())
    assert conv_ladder.flops(2, (2, 6, 3)) == 2 * 2 * 3 * 4 * 4 * 2 * 9
    assert len(conv_ladder.table(ladder, shapes, 2)) == 4
    lines = conv_ladder.reading(ladder)
    assert lines[0].startswith("tiny: fastest first: ") and len(lines) == 3
    path = conv_ladder.chart(ladder, 2, tmp_path / "ladder.png", "tiny")
    assert path.stat().st_size > 0
