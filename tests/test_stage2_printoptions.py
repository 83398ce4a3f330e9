"""torch.set_printoptions (stage2_tensor/printing.py): precision, scientific notation,
summarizing past threshold with edgeitems, the profiles, and tracegrad's exact default
restored. Every test restores the options it changed (the fixture), so none leaks."""
import math

import pytest

import stage2_tensor as tg
from stage2_tensor import printing

pytestmark = pytest.mark.stage2


@pytest.fixture(autouse=True)
def restore_options():
    before = printing.get_printoptions()
    try:
        yield
    finally:
        vars(printing.PRINT_OPTS).update(before)


def test_the_default_prints_every_value_exactly():
    assert repr(tg.tensor([0.5, 2.0])) == "tensor([0.5, 2.0])"
    assert repr(tg.arange(2000))[-12:] == "1998, 1999])"          # nothing left out


def test_precision_as_pytorchs_formatter():
    tg.set_printoptions(precision=2)
    assert repr(tg.tensor([1.2345, 2.0])) == "tensor([1.23, 2.00])"
    assert repr(tg.tensor([1.0, 2.0])) == "tensor([1., 2.])"                  # whole numbers
    assert repr(tg.tensor([1e-5, 1.0])) == "tensor([1.00e-05, 1.00e+00])"     # a wide span: scientific
    assert repr(tg.tensor([math.inf, 1.0])) == "tensor([inf, 1.])"
    assert repr(tg.tensor(1.5)) == "tensor(1.50)"
    assert repr(tg.tensor([1, 2])) == "tensor([1, 2])"                        # integers as they are
    assert repr(tg.tensor([1.5], dtype=tg.float64)) == "tensor([1.50], dtype=tracegrad.float64)"
    tg.set_printoptions(precision=3, sci_mode=True)
    assert repr(tg.tensor([1.5, 2.0])) == "tensor([1.500e+00, 2.000e+00])"
    tg.set_printoptions(sci_mode=False)
    assert repr(tg.tensor([1e-5, 1.0])) == "tensor([0.000, 1.000])"


def test_threshold_and_edgeitems_summarize():
    tg.set_printoptions(threshold=5, edgeitems=2)
    assert repr(tg.arange(10)) == "tensor([0, 1, ..., 8, 9])"
    assert repr(tg.arange(5)) == "tensor([0, 1, 2, 3, 4])"                     # within the threshold
    assert repr(tg.arange(30).reshape(6, 5)) == \
        "tensor([[0, 1, ..., 3, 4], [5, 6, ..., 8, 9], ..., [20, 21, ..., 23, 24], [25, 26, ..., 28, 29]])"
    tg.set_printoptions(precision=1)
    assert repr(tg.arange(10.0) / 4) == "tensor([0.0, 0.2, ..., 2.0, 2.2])"


def test_profiles_and_restoring():
    tg.set_printoptions(profile="short")
    assert printing.get_printoptions()["precision"] == 2 and printing.get_printoptions()["edgeitems"] == 2
    assert repr(tg.arange(1001.0))[:24] == "tensor([0., 1., ..., 999"
    tg.set_printoptions(profile="full")
    assert "..." not in repr(tg.arange(1001))
    tg.set_printoptions(profile="default")
    assert repr(tg.tensor([0.5, 2.0])) == "tensor([0.5, 2.0])"
    with printing.printoptions(precision=1):
        assert repr(tg.tensor([0.25])) == "tensor([0.2])"
    assert repr(tg.tensor([0.25])) == "tensor([0.25])"


def test_bad_options():
    for kwargs, error in ((dict(precision="x"), TypeError), (dict(precision=-1), TypeError),
                          (dict(threshold=1.5), TypeError), (dict(edgeitems=True), TypeError),
                          (dict(sci_mode=1), TypeError), (dict(profile="long"), ValueError)):
        with pytest.raises(error):
            tg.set_printoptions(**kwargs)
