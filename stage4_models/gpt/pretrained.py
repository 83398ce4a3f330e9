"""GPT-2's released weights in stage4's GPT (thesis, section "GPT"): ``GPT.from_pretrained``
reads a Hugging Face GPT-2 folder, its ``config.json`` and ``model.safetensors``.

Getting GPT-2 (the 124M-parameter model, a 548 MB file), with internet access:

    huggingface-cli download gpt2 config.json model.safetensors --local-dir gpt2

(``hf download`` with the same arguments in newer huggingface_hub), or the two files by hand, into one folder:

    https://huggingface.co/gpt2/resolve/main/config.json
    https://huggingface.co/gpt2/resolve/main/model.safetensors

then

    import stage2_tensor as tg
    from stage4_models.gpt import GPT
    from stage4_models.tokenizer import GPT2Tokenizer
    model = GPT.from_pretrained("gpt2", device="cpu")   # "cpu": stage3's native kernels
    tokenizer = GPT2Tokenizer.default()                 # GPT-2's BPE: its ids are the model's
    idx = tg.tensor([tokenizer.encode("Hello, I'm a language model,")], device="cpu")
    logits = model(idx)                                 # (1, T, 50257)

The tokenizer is the one to use: GPT-2's ids mean nothing under another vocabulary.
``GPT2Tokenizer.default()`` finds its two files (encoder.json, vocab.bpe) in
$TRACEGRAD_DATA/gpt2 or ~/.cache/tracegrad/gpt2, or downloads them (stage4_models/data.py).
Loading GPT-2 on "cpu" takes seconds and about 2 GB of memory at its peak.

gpt2-medium, gpt2-large and gpt2-xl load the same way (same names, larger config). Device
"python" works as well, for small checkpoints: at GPT-2's size, loading and every forward
pass run at pure-Python speed (minutes).

The checkpoint differs from our model in four ways, each undone here:

* names: Hugging Face's start at ``wte``, ``h.0``, ``ln_f`` (or ``transformer.wte``, ...
  when saved from GPT2LMHeadModel); ours are the same under ``transformer.``;
* GPT-2's Linear layers are Conv1D modules whose weight is stored (in, out), the transpose
  of nn.Linear's (out, in): c_attn, c_proj (attention and MLP) and c_fc are transposed;
* ``h.{i}.attn.bias`` (the causal mask as a (1, 1, n_positions, n_positions) buffer) and
  ``h.{i}.attn.masked_bias`` are buffers, not weights: our attention builds its mask;
* ``lm_head.weight``, where present, is the token embedding again (tied): it must equal
  ``wte.weight``.

``save_pretrained(model, folder)`` goes the other way: it writes a model of ours as such a
folder (Hugging Face's names without prefix, Conv1D weights (in, out), no buffers, no
``lm_head.weight``, and a config.json with GPT-2's keys), which ``from_pretrained`` and
Hugging Face's ``GPT2LMHeadModel.from_pretrained`` both read.
"""
import json
import math
import re
from pathlib import Path

import numpy as np

import stage2_tensor as tg
import stage2_tensor.factories as factories
import stage2_tensor.nn as nn
from stage2_tensor.atomic import atomic_write_text

from .model import GPT, GPTConfig
from .safetensors import read_header, read_numpy, save

PREFIX = "transformer."
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
BUFFER = re.compile(r"h\.\d+\.attn\.(bias|masked_bias)")
REQUIRED = ("vocab_size", "n_embd", "n_head", "n_layer")


def read_config(path):
    """(GPTConfig, LayerNorm eps) from a Hugging Face GPT-2 config.json. Settings our GPT
    does not implement, and sizes no GPT has (GPTConfig's own checks), are refused with a
    ValueError naming the key and the file, rather than loaded into a model that would
    compute something else."""
    path = Path(path)
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"from_pretrained: {path} not found; a Hugging Face GPT-2 folder "
                                "holds config.json and model.safetensors (see "
                                "stage4_models/gpt/pretrained.py for where to get them)") from None
    except (ValueError, RecursionError) as err:     # not UTF-8, not JSON, nested too deeply
        raise ValueError(f"from_pretrained: {path} is not JSON ({type(err).__name__}: {err})") from None

    def refuse(why):
        return ValueError(f"from_pretrained: {path}: {why}")

    if not isinstance(config, dict):
        raise refuse(f"it holds a JSON {type(config).__name__}; expected an object of GPT-2's settings")
    if config.get("model_type", "gpt2") != "gpt2":
        raise refuse(f"model_type is {config['model_type']!r}; expected 'gpt2'")
    missing = [key for key in REQUIRED if key not in config]
    if "n_positions" not in config and "n_ctx" not in config:
        missing.append("n_positions")
    if missing:
        raise refuse(f"missing key(s) {', '.join(missing)}")
    # Hugging Face's "gelu_new" is GELU's tanh approximation, the one GPT-2 was trained with
    # and the one our MLP computes; its "gelu" (the exact one) would differ by up to 1e-3.
    activation = config.get("activation_function", "gelu_new")
    if activation != "gelu_new":
        raise refuse(f"activation_function is {activation!r}; this GPT's MLP computes "
                     "'gelu_new' (GELU's tanh approximation) only")
    positions = "n_positions" if "n_positions" in config else "n_ctx"    # n_ctx: older files
    try:            # dropout 0: the model is for inference (and fine-tuning, where one sets it anew)
        gpt = GPTConfig(vocab_size=config["vocab_size"], block_size=config[positions],
                        n_layer=config["n_layer"], n_head=config["n_head"], n_embd=config["n_embd"],
                        dropout=0.0, bias=True)
    except (TypeError, ValueError) as err:          # a size that is no positive int, n_head 0, ...
        raise refuse(str(err).removeprefix("GPTConfig: ").replace("block_size", positions)) from None
    if config.get("n_inner") not in (None, 4 * gpt.n_embd):
        raise refuse(f"n_inner is {config['n_inner']}; this GPT's MLP is 4 * n_embd = {4 * gpt.n_embd} wide")
    if not config.get("scale_attn_weights", True) or config.get("scale_attn_by_inverse_layer_idx", False):
        raise refuse("the attention scores are scaled differently (scale_attn_weights, "
                     "scale_attn_by_inverse_layer_idx); this GPT divides them by sqrt(head size)")
    eps = config.get("layer_norm_epsilon", 1e-5)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < math.inf:
        raise refuse(f"layer_norm_epsilon is {eps!r}; expected a positive number")
    return gpt, eps


def parameter_shapes(config):
    """{our parameter name: shape} of ``GPT(config)``, less the tied lm_head.weight, worked
    out from the config alone: what a checkpoint must hold, known before a model of the
    config's size is built (the tests compare it with a built model's state dict)."""
    C = config.n_embd
    layer = {"ln_1.weight": (C,), "ln_1.bias": (C,),
             "attn.c_attn.weight": (3 * C, C), "attn.c_attn.bias": (3 * C,),
             "attn.c_proj.weight": (C, C), "attn.c_proj.bias": (C,),
             "ln_2.weight": (C,), "ln_2.bias": (C,),
             "mlp.c_fc.weight": (4 * C, C), "mlp.c_fc.bias": (4 * C,),
             "mlp.c_proj.weight": (C, 4 * C), "mlp.c_proj.bias": (C,)}
    shapes = {PREFIX + "wte.weight": (config.vocab_size, C), PREFIX + "wpe.weight": (config.block_size, C)}
    for i in range(config.n_layer):
        shapes.update({f"{PREFIX}h.{i}.{name}": shape for name, shape in layer.items()})
    shapes.update({PREFIX + "ln_f.weight": (C,), PREFIX + "ln_f.bias": (C,)})
    return shapes


def match_checkpoint(config, shapes, where="the checkpoint"):
    """({our parameter name: the checkpoint's tensor name}, the name of its lm_head.weight or
    None) for a checkpoint in Hugging Face's layout whose tensors have ``shapes`` ({name:
    shape}): the module docstring's prefixes and buffers undone. Only shapes are compared,
    so a file's header suffices, before any weight is read or any model built. Too few
    tensors for config's layers, missing tensors, unexpected ones and wrong shapes are all
    listed in one ValueError, with shapes as the checkpoint should hold them (Conv1D
    weights (in, out))."""
    # Each layer is 12 tensors: a config.json's n_layer beyond what the file can hold is
    # refused before the expected names (12 per layer) are even listed.
    if 12 * config.n_layer + 4 > len(shapes):
        raise _misfit(config, where, [f"it holds {len(shapes)} tensor(s), fewer than the 12 * n_layer + 4 = "
                      f"{12 * config.n_layer + 4} of such a model"])
    ours = parameter_shapes(config)

    def hf_shape(name):
        return ours[name][::-1] if name.endswith(CONV1D) else ours[name]

    found, lm_head = {}, None
    for name, shape in shapes.items():
        short = name[len(PREFIX):] if name.startswith(PREFIX) else name
        if BUFFER.fullmatch(short):
            continue
        if short == "lm_head.weight":
            lm_head = name
            continue
        found[PREFIX + short] = name

    problems = []
    missing = [name[len(PREFIX):] for name in ours if name not in found]
    if missing:
        problems.append("missing: " + ", ".join(missing))
    unexpected = [found[name] for name in found if name not in ours]
    if unexpected:
        problems.append("unexpected: " + ", ".join(unexpected))
    problems += [f"{found[name]}: expected shape {hf_shape(name)}"
                 f"{' (Conv1D: in, out)' if name.endswith(CONV1D) else ''}, found {tuple(shapes[found[name]])}"
                 for name in ours if name in found and tuple(shapes[found[name]]) != hf_shape(name)]
    if problems:
        raise _misfit(config, where, problems)
    return {name: found[name] for name in ours}, lm_head


def checkpoint_state(config, weights, where="the checkpoint"):
    """{our parameter name: numpy array} from a checkpoint's {name: array} in Hugging Face's
    layout (``match_checkpoint``'s checks, then Conv1D weights transposed and the tied
    lm_head checked to equal the token embedding)."""
    names, lm_head = match_checkpoint(config, {name: a.shape for name, a in weights.items()}, where)
    state = {ours: weights[theirs].T if ours.endswith(CONV1D) else weights[theirs]
             for ours, theirs in names.items()}
    wte = state[PREFIX + "wte.weight"]
    if lm_head is not None and not np.array_equal(weights[lm_head], wte):
        raise _misfit(config, where, ["lm_head.weight differs from wte.weight; this GPT ties them "
                                      f"(expected equal {wte.shape} matrices, found {weights[lm_head].shape})"])
    state["lm_head.weight"] = wte
    return state


def parameter_count(config):
    """The numbers in ``GPT(config)`` (the tied lm_head once): embeddings, 12 C^2 + 13 C per
    block, the final LayerNorm; ``parameter_shapes`` added up, without listing them."""
    C = config.n_embd
    return (config.vocab_size + config.block_size) * C + config.n_layer * (12 * C * C + 13 * C) + 2 * C


def _misfit(config, where, problems):
    n = parameter_count(config)
    return ValueError(f"from_pretrained: {where} does not fit GPT-2 with n_layer={config.n_layer}, "
                      f"n_embd={config.n_embd}, vocab_size={config.vocab_size}, block_size="
                      f"{config.block_size} ({n:,} parameters, {4 * n:,} bytes in float32):\n  "
                      + "\n  ".join(problems))


def from_pretrained(folder, device=None, dtype=None):
    """GPT with the weights of the Hugging Face GPT-2 folder ``folder`` (config.json and
    model.safetensors), on ``device`` (the default device when None), in
    ``dtype`` (float32 by default, whatever the file stores), in eval mode."""
    folder = Path(folder)
    config, eps = read_config(folder / "config.json")
    path = folder / "model.safetensors"
    if not path.exists():
        raise FileNotFoundError(f"from_pretrained: {path} not found; see "
                                "stage4_models/gpt/pretrained.py for where to get it")
    # config.json says how large a model to build: its sizes are checked against the weights'
    # header first, so a config that lies is refused before anything of its size is allocated.
    header, _, _ = read_header(path)
    match_checkpoint(config, {name: shape for name, (_, shape, _, _) in header.items()}, str(path))
    state = checkpoint_state(config, read_numpy(path), str(path))
    with factories.skip_init(device):
        model = GPT(config, device=device, dtype=dtype)
    for m in model.modules():
        if isinstance(m, nn.LayerNorm):
            m.eps = eps
    params = model.state_dict()
    tensors = {name: tg.from_numpy(np.ascontiguousarray(array, dtype=params[name].dtype.name),
                                   device=params[name].device)
               for name, array in state.items()}
    model.load_state_dict(tensors)
    return model.eval()


def hf_config(model):
    """config.json's contents for ``model`` in Hugging Face's GPT-2 keys: n_positions and
    n_ctx are the block size, n_inner None means 4 * n_embd, "gelu_new" is the tanh GELU
    our MLP computes, the three dropout rates are the model's one. The LayerNorm epsilon is
    the model's (all its LayerNorms must agree). GPT-2's special-token ids (50256,
    <|endoftext|>) are written only for GPT-2's vocabulary."""
    c = model.config
    if not c.bias:
        raise ValueError("save_pretrained: Hugging Face's GPT-2 has biases in every Linear "
                         "layer; this model was built with bias=False")
    eps = {m.eps for m in model.modules() if isinstance(m, nn.LayerNorm)}
    if len(eps) != 1:
        raise ValueError(f"save_pretrained: the LayerNorms use different epsilons {sorted(eps)}; "
                         "config.json has one layer_norm_epsilon")
    config = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
              "attn_pdrop": c.dropout, "embd_pdrop": c.dropout, "resid_pdrop": c.dropout,
              "initializer_range": 0.02, "layer_norm_epsilon": eps.pop(), "model_type": "gpt2",
              "n_ctx": c.block_size, "n_embd": c.n_embd, "n_head": c.n_head, "n_inner": None,
              "n_layer": c.n_layer, "n_positions": c.block_size, "scale_attn_weights": True,
              "vocab_size": c.vocab_size}
    if c.vocab_size == 50257:
        config.update(bos_token_id=50256, eos_token_id=50256)
    return config


def hf_state(model):
    """{Hugging Face name: numpy array} of ``model``'s weights: ``transformer.`` dropped,
    Conv1D weights transposed to (in, out) (and made contiguous), the tied lm_head left out
    (Hugging Face ties it back to wte when loading)."""
    state = {}
    for name, tensor in model.state_dict().items():
        if name == "lm_head.weight":
            continue
        array = np.array(tensor.numpy())                 # a copy: the file outlives the model
        state[name[len(PREFIX):]] = np.ascontiguousarray(array.T) if name.endswith(CONV1D) else array
    return state


def save_pretrained(model, folder):
    """Write ``model`` (a GPT of ours, any device) as a Hugging Face GPT-2 folder:
    ``config.json`` (``hf_config``) and ``model.safetensors`` (``hf_state``, in the model's
    dtype, with the {"format": "pt"} metadata Hugging Face writes). The inverse of
    ``from_pretrained``: loading the folder gives back the same numbers, bit for bit.
    Returns the folder."""
    folder = Path(folder)
    config = hf_config(model)
    folder.mkdir(parents=True, exist_ok=True)
    save(hf_state(model), folder / "model.safetensors", metadata={"format": "pt"})
    atomic_write_text(folder / "config.json", json.dumps(config, indent=2) + "\n")   # whole or not at all
    return folder
