import re
import shutil

import graphviz
import pytest

import stage2_tensor as tg
from stage2_tensor.viz import draw, format_dag, print_dag, save

pytestmark = pytest.mark.stage2
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


def thesis_graph():
    """The thesis's example: e = (a @ b) @ d, gradients for a and b only."""
    a = tg.tensor([[1, 2, 3, 4]], dtype=tg.float64, requires_grad=True)
    b = tg.tensor([[5, 6], [8, 9], [11, 13], [15, 17]], dtype=tg.float64, requires_grad=True)
    d = tg.tensor([[1], [3]], dtype=tg.float64)
    c = a @ b
    e = c @ d
    return {"a": a, "b": b, "c": c, "d": d, "e": e}


def to_dot(t, **kwargs):
    """The DOT text of draw's Digraph."""
    return draw(t, **kwargs).source


def edges(text):
    """(tail, head, attributes) of every edge line of DOT text."""
    return re.findall(r"^\s*(\w+) -> (\w+)(?: \[(.*)\])?$", text, flags=re.M)


def shared_graph():
    """x feeds two operations, one of them twice: y = sum(x * x + x * 2)."""
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    return x, (x * x + x * 2).sum()


def test_draw_has_a_node_per_tensor_and_per_function():
    g = thesis_graph()
    drawing = draw(g["e"], names=g)
    assert isinstance(drawing, graphviz.Digraph)
    text = drawing.source
    assert text.startswith("digraph") and text.rstrip().endswith("}")
    assert len(re.findall(r"shape=record", text)) == 5            # a, b, c, d, e
    assert len(re.findall(r"shape=ellipse", text)) == 2           # two MatMuls
    assert len(re.findall(r"label=MatMul ", text)) == 2          # an identifier needs no quotes
    assert 'label="a | (1, 4) float64, requires grad"' in text
    assert 'label="e | (1, 1) float64"' in text
    # a, b -> MatMul -> c; c, d -> MatMul -> e; d needs no gradient: no gradient flows on its edge
    assert edges(text) == [("t0", "f0", ""), ("t1", "f0", ""), ("f0", "t2", ""),
                           ("t2", "f1", ""), ("t3", "f1", "color=gray50 style=dashed"), ("f1", "t4", "")]


def test_draw_shows_grad_shapes_after_backward():
    g = thesis_graph()
    g["e"].backward()
    text = to_dot(g["e"], names={g["a"]: "a", g["b"]: "b"})
    assert 'label="a | (1, 4) float64, requires grad | grad (1, 4)"' in text
    assert 'label="b | (4, 2) float64, requires grad | grad (4, 2)"' in text


def test_draw_counts_a_shared_tensor_once():
    x, y = shared_graph()
    text = to_dot(y)
    # x, x*x, the constant 2, x*2, their sum, y: six tensors; Mul, Mul, Add, Sum.
    assert len(re.findall(r"shape=record", text)) == 6
    assert len(re.findall(r"shape=ellipse", text)) == 4
    assert [e[:2] for e in edges(text)].count(("t0", "f0")) == 2  # x * x reads x twice
    assert "value 2" in text


def test_draw_top_to_bottom_stacks_fields_with_braces():
    g = thesis_graph()
    assert 'label="{ e | (1, 1) float64 }"' in to_dot(g["e"], names=g, rankdir="TB")


def test_draw_is_stable():
    assert to_dot(thesis_graph()["e"]) == to_dot(thesis_graph()["e"])
    assert to_dot(shared_graph()[1]) == to_dot(shared_graph()[1])


def test_a_long_chain_needs_no_recursion():
    x = tg.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(1500):
        y = y * 1.0
    text = to_dot(y)
    # x, the 1500 outputs, and the constant 1.0: one tensor, made once (elementwise.constant)
    assert len(re.findall(r"shape=record", text)) == 1 + 1500 + 1
    assert format_dag(y).count("<- Mul") == 1500


def test_print_dag(capsys):
    x, y = shared_graph()
    print_dag(y, names={x: "x", y: "y"})
    assert capsys.readouterr().out == (
        "[0] y: () float32  <- Sum\n"
        "    [1] (2,) float32  <- Add\n"
        "        [2] (2,) float32  <- Mul\n"
        "            [3] x: (2,) float32  (leaf, requires grad)\n"
        "            [3] x (shown above)\n"
        "        [4] (2,) float32  <- Mul\n"
        "            [3] x (shown above)\n"
        "            [5] () float32  (constant 2)\n")


def test_print_dag_shows_grads_after_backward(capsys):
    g = thesis_graph()
    g["e"].backward()
    print_dag(g["e"], names=g)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "[0] e: (1, 1) float64  <- MatMul"
    assert out[2] == "        [2] a: (1, 4) float64  (leaf, requires grad)  grad (1, 4)"
    assert out[4] == "    [4] d: (2, 1) float64  (constant)"


def test_a_leaf_alone():
    x = tg.ones(2, 3, requires_grad=True)
    assert format_dag(x) == "[0] (2, 3) float32  (leaf, requires grad)"
    assert len(re.findall(r"shape=record", to_dot(x))) == 1


@needs_dot
@pytest.mark.parametrize("suffix, magic", [(".svg", b"<svg"), (".png", b"\x89PNG")])
def test_save_writes_the_image(tmp_path, suffix, magic):
    g = thesis_graph()
    path = save(draw(g["e"], names=g), tmp_path / f"g{suffix}")
    assert path == tmp_path / f"g{suffix}" and magic in path.read_bytes()[:400]
