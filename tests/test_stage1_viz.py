import re
import shutil
import subprocess
import sys

import graphviz
import pytest

from stage1_scalargrad import Value
from stage1_scalargrad.viz import draw, escape, save

pytestmark = pytest.mark.stage1
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


def chain():
    a, b = Value(2), Value(4)
    e = (a * b) ** Value(2)
    e.backward()
    return a, b, e


def test_draw_returns_a_digraph_with_a_node_per_value_and_per_operation():
    a, b, e = chain()
    g = draw(e, names={a: "a", b: "b"})
    assert isinstance(g, graphviz.Digraph)
    text = g.source
    assert text.startswith("digraph") and text.rstrip().endswith("}")
    assert "rankdir=LR" in text
    assert len(re.findall(r"shape=record", text)) == 5          # a, b, a*b, 2, e
    assert len(re.findall(r"shape=ellipse", text)) == 2         # *, **
    assert "grad 133.1" in text                                  # the exponent: d e / d 2 = 64 ln 8
    # nodes by label; each operation has its inputs as tails and its result as head
    node = {label: name for name, label in re.findall(r'^\s*(\w+) \[label="([^"]*)"', text, flags=re.M)}
    a_, b_, two = node["{ a | data 2 | grad 64 }"], node["{ b | data 4 | grad 32 }"], node["{ data 2 | grad 133.1 }"]
    ab, e_ = node["{ data 8 | grad 16 }"], node["{ data 64 | grad 1 }"]
    mul, pow_ = node["*"], node["**"]
    edges = re.findall(r"^\s*(\w+) -> (\w+)$", text, flags=re.M)
    assert sorted(edges) == sorted([(a_, mul), (b_, mul), (mul, ab), (ab, pow_), (two, pow_), (pow_, e_)])


def test_draw_is_stable():
    assert draw(chain()[2]).source == draw(chain()[2]).source


def test_draw_checks_rankdir():
    with pytest.raises(ValueError, match="rankdir must be one of .*got 'XY'"):
        draw(chain()[2], rankdir="XY")


def test_escape():
    assert escape('a|b{c}"') == 'a\\|b\\{c\\}\\"'


def test_a_name_with_record_characters_stays_one_field():
    a, b, e = chain()
    text = draw(e, names={a: "x|<y>"}).source
    assert "{ x\\|\\<y\\> | data 2 | grad 64 }" in text


@needs_dot
@pytest.mark.parametrize("suffix, magic", [(".svg", b"<svg"), (".png", b"\x89PNG")])
def test_save_writes_the_image_and_nothing_else(tmp_path, suffix, magic):
    path = save(draw(chain()[2]), tmp_path / "sub" / f"g{suffix}")
    assert path == tmp_path / "sub" / f"g{suffix}"
    assert magic in path.read_bytes()[:400]
    assert [p.name for p in path.parent.iterdir()] == [path.name]     # no DOT file left beside it


@needs_dot
def test_save_takes_hand_written_dot_text_as_a_source(tmp_path):
    path = save(graphviz.Source("digraph { a -> b }"), tmp_path / "g.svg")
    assert b"<svg" in path.read_bytes()[:400]


@needs_dot
def test_save_reports_dot_errors(tmp_path):
    with pytest.raises(RuntimeError, match="save: dot failed: .*syntax error"):
        save(graphviz.Source("digraph { a -> }"), tmp_path / "g.svg")


def test_save_needs_svg_or_png(tmp_path):
    with pytest.raises(ValueError, match=r"\.svg or \.png, got 'g.pdf'"):
        save(draw(chain()[2]), tmp_path / "g.pdf")


def test_save_needs_a_graph(tmp_path):
    with pytest.raises(TypeError, match="expected a graphviz.Digraph or graphviz.Source, got str"):
        save("digraph {}", tmp_path / "g.svg")


def test_save_without_dot_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))          # no `dot` anywhere on PATH
    with pytest.raises(RuntimeError, match="Graphviz's `dot` program was not found.*apt-get install graphviz"):
        save(draw(chain()[2]), tmp_path / "g.svg")
    assert not (tmp_path / "g.svg").exists()


def test_the_engines_do_not_import_graphviz():
    """The engines are standard library only: graphviz is imported when a graph is drawn."""
    code = ("import sys, stage1_scalargrad, stage1_scalargrad.viz, stage2_tensor\n"
            "print('graphviz' in sys.modules)")
    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert printed.strip() == "False"
