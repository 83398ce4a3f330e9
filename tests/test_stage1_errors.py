"""Every bad input of stage1 raises an error that names what was wrong."""
import pytest

from stage1_scalargrad import Value, nn, optim

pytestmark = pytest.mark.stage1


@pytest.mark.parametrize("bad, type_name", [("x", "str"), (None, "NoneType"), ([1.0], "list"), (1j, "complex")])
def test_value_of_a_non_number(bad, type_name):
    with pytest.raises(TypeError, match=f"Value needs a real number.*{type_name}"):
        Value(bad)


def test_operator_with_a_non_number():
    with pytest.raises(TypeError, match="str"):
        Value(1.0) + "x"


@pytest.mark.parametrize("x", [0.0, -1.0])
def test_log_of_non_positive(x):
    with pytest.raises(ValueError, match=rf"log: .*positive.*{x}"):
        Value(x).log()


def test_negative_base_to_non_integer_power():
    with pytest.raises(ValueError, match=r"pow: negative base -2.0 .* power 0.5"):
        Value(-2.0) ** 0.5


def test_negative_base_to_integer_power_is_fine():
    assert (Value(-2.0) ** 3).data == -8.0


def test_zero_to_a_negative_power():
    with pytest.raises(ZeroDivisionError, match=r"pow: zero base 0.0 .* -1.0"):
        Value(0.0) ** -1


@pytest.mark.parametrize("expr", [lambda: Value(1.0) / 0, lambda: 1 / Value(0.0), lambda: Value(1.0) / Value(0.0)])
def test_division_by_zero(expr):
    with pytest.raises(ZeroDivisionError, match=r"div: division by zero in 1.0 / 0.0"):
        expr()


def test_exp_overflow():
    with pytest.raises(OverflowError, match=r"exp: exp\(1000.0\) overflows"):
        Value(1000.0).exp()


def test_linear_with_wrong_input_size():
    with pytest.raises(ValueError, match=r"Linear\(3, 2\) expects 3 inputs per sample, got 2"):
        nn.Linear(3, 2, seed=0)([1.0, 2.0])


def test_mse_loss_with_mismatched_lengths():
    with pytest.raises(ValueError, match="2 predictions but 3 targets"):
        nn.mse_loss([[Value(1.0)], [Value(2.0)]], [[1.0], [2.0], [3.0]])
    with pytest.raises(ValueError, match="a prediction has 2 outputs but its target 1"):
        nn.mse_loss([[Value(1.0), Value(2.0)]], [[1.0]])


def test_optimizer_without_parameters_or_with_bad_lr():
    with pytest.raises(ValueError, match="SGD got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="Adam: learning rate must be positive, got -1"):
        optim.Adam([Value(1.0)], lr=-1)

