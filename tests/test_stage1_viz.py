import re
import shutil

import pytest

from stage1_scalargrad import Value
from stage1_scalargrad.viz import draw, escape, to_dot

pytestmark = pytest.mark.stage1
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


def chain():
    a, b = Value(2), Value(4)
    e = (a * b) ** Value(2)
    e.backward()
    return a, b, e


def test_to_dot_has_a_node_per_value_and_per_operation():
    a, b, e = chain()
    text = to_dot(e, names={a: "a", b: "b"})
    assert text.startswith("digraph") and text.rstrip().endswith("}")
    assert len(re.findall(r"shape=record", text)) == 5          # a, b, a*b, 2, e
    assert len(re.findall(r"shape=ellipse", text)) == 2         # *, **
    assert "{ a | data 2 | grad 64 }" in text
    assert "grad 133.1" in text


def test_to_dot_is_stable():
    assert to_dot(chain()[2]) == to_dot(chain()[2])


def test_escape():
    assert escape('a|b{c}"') == 'a\\|b\\{c\\}\\"'


@needs_dot
@pytest.mark.parametrize("suffix, magic", [(".svg", b"<svg"), (".png", b"\x89PNG")])
def test_draw_writes_the_image(tmp_path, suffix, magic):
    path = draw(chain()[2], tmp_path / f"g{suffix}")
    assert magic in path.read_bytes()[:400]
