"""The thesis's first autograd example (chapter 3): e = (a * b) ** d with a=2, b=4, d=2.

    python -m stage1_scalargrad.examples.chain
"""
from stage1_scalargrad import Value
from stage1_scalargrad.viz import draw, save
from stage1_scalargrad.workspace import figures_dir

# What the thesis's Java engine printed.
THESIS_GRADS = {"a": 64.0, "b": 32.0, "c": 16.0, "d": 133.0842586675095, "e": 1.0}


def run():
    a, b = Value(2), Value(4)
    c = a * b
    d = Value(2)
    e = c ** d
    e.backward()
    return {"a": a, "b": b, "c": c, "d": d, "e": e}


def main():
    values = run()
    for name, v in values.items():
        print(f"{name} = {v}   (thesis: grad={THESIS_GRADS[name]!r})")
    try:
        graph = draw(values["e"], names={v: n for n, v in values.items()})
        path = save(graph, figures_dir() / "chain_graph.svg")
        print(f"graph written to {path}")
    except RuntimeError as err:          # no Graphviz: the numbers above still stand
        print(f"graph not drawn: {err}")


if __name__ == "__main__":
    main()
