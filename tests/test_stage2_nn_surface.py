"""The PyTorch surface of stage2's nn a learner reaches for: activations and losses against
numpy and central differences on every engine; buffers, registration, weight tying,
containers and nn.init by their behaviour."""
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn


# ---- buffers, registration, tying ----------------------------------------------------------
class Stats(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.register_buffer("running_mean", tg.zeros(2))
        self.register_buffer("steps", tg.tensor(0))                # an int64 buffer
        self.register_buffer("mask", tg.ones(2), persistent=False)
        self.register_buffer("unset", None)


class Tied(nn.Module):
    """A language model's input embedding and output layer sharing one weight."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 3)
        self.stats = Stats()
        self.head = nn.Linear(3, 5, bias=False)
        self.head.weight = self.emb.weight


def test_buffers_are_state_but_not_parameters(tmp_path):
    m = Tied()
    assert [n for n, _ in m.named_buffers()] == ["stats.running_mean", "stats.steps", "stats.mask"]
    assert len(list(m.buffers())) == 3 and all(not b.requires_grad for b in m.buffers())
    assert "stats.running_mean" not in dict(m.named_parameters())
    sd = m.state_dict()
    assert list(sd) == ["emb.weight", "stats.running_mean", "stats.steps", "stats.lin.weight",
                        "stats.lin.bias", "head.weight"]   # PyTorch's order: own state, then children
    with tg.no_grad():
        m.stats.running_mean.fill_(7.0)
        m.stats.steps.fill_(3)
    tg.save(m.state_dict(), tmp_path / "m.tg")
    fresh = Tied()
    fresh.load_state_dict(tg.load(tmp_path / "m.tg"))
    assert fresh.stats.running_mean.tolist() == [7.0, 7.0] and fresh.stats.steps.item() == 3
    assert fresh.stats.mask.tolist() == [1.0, 1.0]                 # not saved, not loaded
    with pytest.raises(RuntimeError, match="Unexpected key.*'stats.mask'"):
        fresh.load_state_dict({**sd, "stats.mask": tg.zeros(2)})


def test_weight_tying_is_trained_once_saved_twice_and_kept_on_load(tmp_path):
    tg.manual_seed(0)
    m = Tied()
    assert m.head.weight is m.emb.weight
    names = [n for n, _ in m.named_parameters()]
    assert "emb.weight" in names and "head.weight" not in names    # yielded once
    sd = m.state_dict()
    assert sd["head.weight"].tolist() == sd["emb.weight"].tolist()
    tg.save(sd, tmp_path / "tied.tg")
    tg.manual_seed(1)
    fresh = Tied()
    fresh.load_state_dict(tg.load(tmp_path / "tied.tg"))
    assert fresh.head.weight is fresh.emb.weight                   # still one Parameter
    assert fresh.emb.weight.tolist() == m.emb.weight.tolist()
    opt = tg.optim.SGD(fresh.parameters(), lr=0.1)
    fresh.head(fresh.emb(tg.tensor([1, 2]))).sum().backward()
    opt.step()
    assert fresh.head.weight.tolist() == fresh.emb.weight.tolist() != m.emb.weight.tolist()


def test_to_moves_and_converts_buffers():
    m = Stats()
    m.to(tg.float64)
    assert m.running_mean.dtype is tg.float64 and m.mask.dtype is tg.float64
    assert m.steps.dtype is tg.int64 and m.lin.weight.dtype is tg.float64   # ints keep theirs


@pytest.mark.stage3
@pytest.mark.device("cpu")
def test_to_device_moves_buffers_with_parameters():
    import stage3_native  # noqa: F401  (registers "cpu")
    m = Tied().to("cpu")
    assert {t.device for t in [*m.parameters(), *m.buffers()]} == {"cpu"}
    assert m.head.weight is m.emb.weight


def test_register_checks_names_and_values():
    m = Stats()
    for bad, error, match in [(lambda: m.register_buffer("a.b", tg.zeros(1)), KeyError, "contain"),
                              (lambda: m.register_buffer("", tg.zeros(1)), KeyError, "empty"),
                              (lambda: m.register_buffer(3, tg.zeros(1)), TypeError, "should be a string"),
                              (lambda: m.register_buffer("lin", tg.zeros(1)), KeyError, "'lin' already exists"),
                              (lambda: m.register_buffer("forward", tg.zeros(1)), KeyError, "already exists"),
                              (lambda: m.register_buffer("b", [1.0]), TypeError, "'list' object to buffer 'b'"),
                              (lambda: m.register_buffer("b", nn.Parameter(tg.zeros(1))), TypeError, "register_parameter"),
                              (lambda: m.register_parameter("p", tg.zeros(1)), TypeError, "nn.Parameter or None"),
                              (lambda: m.register_parameter("running_mean", nn.Parameter(tg.zeros(1))), KeyError, "already exists"),
                              (lambda: m.add_module("sub", tg.zeros(1)), TypeError, "is not a Module subclass"),
                              (lambda: m.add_module("training", nn.ReLU()), KeyError, "already exists")]:
        with pytest.raises(error, match=match):
            bad()
    m.register_buffer("running_mean", tg.ones(2))                  # re-registering replaces
    m.register_parameter("scale", nn.Parameter(tg.ones(1)))
    m.add_module("act", nn.ReLU())
    m.register_module("extra", nn.Linear(1, 1))
    assert [n for n, _ in m.named_parameters()] == ["scale", "lin.weight", "lin.bias",
                                                    "extra.weight", "extra.bias"]
    assert [n for n, _ in m.named_children()] == ["lin", "act", "extra"]


# ---- containers ----------------------------------------------------------------------------
def test_apply_visits_every_module_children_first():
    m = nn.Sequential(Tied(), nn.ModuleDict({"a": nn.ReLU(), "b": nn.Sequential(nn.Tanh())}))
    seen = []
    m.apply(seen.append)
    assert len(seen) == len(list(m.modules())) == 10 and seen[-1] is m
    assert {id(x) for x in seen} == {id(x) for x in m.modules()}


def test_module_dict():
    d = nn.ModuleDict({"q": nn.Linear(2, 2)})
    d["k"] = nn.Linear(2, 3, bias=False)
    d.update([("v", nn.Linear(2, 1))])
    assert list(d) == list(d.keys()) == ["q", "k", "v"] and "k" in d and len(d) == 3
    assert [n for n, _ in d.named_parameters()] == ["q.weight", "q.bias", "k.weight", "v.weight", "v.bias"]
    assert isinstance(d.pop("v"), nn.Linear) and len(d) == 2
    del d["k"]
    assert list(d.items())[0][0] == "q"
    with pytest.raises(TypeError, match=r"ModuleDict\['x'\]: expected a Module, got Tensor"):
        d["x"] = tg.zeros(1)
    with pytest.raises(KeyError, match="non-empty string without '.'"):
        d["a.b"] = nn.ReLU()
    with pytest.raises(KeyError, match=r"has no key 'z'; its keys are \['q'\]"):
        d["z"]


def test_parameter_list_and_dict(tmp_path):
    pl = nn.ParameterList([tg.zeros(2), nn.Parameter(tg.ones(3))])
    pl.append(tg.ones(1))
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in pl) and len(pl) == 3
    pd = nn.ParameterDict({"scale": tg.ones(2)})
    pd["shift"] = tg.zeros(2)
    owner = nn.Module()
    owner.pl, owner.pd = pl, pd
    assert list(owner.state_dict()) == ["pl.0", "pl.1", "pl.2", "pd.scale", "pd.shift"]
    (pl[0].sum() + (pd["scale"] * 3).sum()).backward()
    assert pl[0].grad.tolist() == [1.0, 1.0] and pd["scale"].grad.tolist() == [3.0, 3.0]
    tg.save(owner.state_dict(), tmp_path / "p.tg")
    with tg.no_grad():
        pd["scale"].fill_(0.0)
    owner.load_state_dict(tg.load(tmp_path / "p.tg"))
    assert pd["scale"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match=r"ParameterList\[3\]: expected a Parameter or a Tensor, got float"):
        pl.append(1.0)
    with pytest.raises(TypeError, match="got ReLU"):
        pd["act"] = nn.ReLU()
