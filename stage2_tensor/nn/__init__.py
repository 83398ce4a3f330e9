"""Neural-network modules on tensors (thesis chapter 2, "Neural Networks"), PyTorch's
``torch.nn``: ``import stage2_tensor.nn as nn``.

* ``modules.py``: ``Parameter``, ``Module`` (parameters found by walking attributes,
  buffers, ``state_dict``/``load_state_dict``, ``train``/``eval``, ``to``), ``Sequential``,
  ``ModuleList``;
* ``containers.py``: ``ModuleDict``, ``ParameterList``, ``ParameterDict``;
* ``layers.py``: ``Linear``, ``Embedding``, ``LayerNorm``, ``Dropout``, activations,
  ``Identity``, ``Flatten``, ``Unflatten``, ``MSELoss``, ``NLLLoss``;
* ``loss.py``: ``CrossEntropyLoss``, ``BCELoss``, ``BCEWithLogitsLoss``, ``L1Loss``,
  ``SmoothL1Loss``, ``HuberLoss``;
* ``normalization.py``: ``BatchNorm1d/2d``, ``InstanceNorm1d/2d``, ``GroupNorm``, ``RMSNorm``;
* ``activation.py``: ``SiLU``, ``LeakyReLU``, ``PReLU``, ``ELU``, ``Softplus``;
* ``functional.py`` (``nn.functional`` / ``F``): the functions behind them;
* ``conv.py``: ``Conv1d/2d/3d``, ``ConvTranspose1d/2d``, the pools;
* ``upsampling.py``: ``Upsample``, ``PixelShuffle``, ``PixelUnshuffle``;
* ``dropout.py``: ``Dropout1d/2d/3d`` (whole channels);
* ``attention.py``: ``MultiheadAttention``;
* ``transformer.py``: ``TransformerEncoderLayer``, ``TransformerEncoder``, the decoder's two,
  ``Transformer``;
* ``init.py`` (``nn.init``): in-place initialisations, ``kaiming_uniform_``...;
* ``utils.py``: ``clip_grad_norm_``.

    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    loss = nn.functional.mse_loss(model(x), y)
"""
from . import functional, init, utils
from .activation import ELU, LeakyReLU, PReLU, SiLU, Softplus
from .attention import MultiheadAttention
from .containers import ModuleDict, ParameterDict, ParameterList
from .conv import (AdaptiveAvgPool2d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d, Conv1d, Conv2d, Conv3d,
                   ConvTranspose1d, ConvTranspose2d, MaxPool1d, MaxPool2d)
from .dropout import Dropout1d, Dropout2d, Dropout3d
from .layers import (GELU, Dropout, Embedding, Flatten, Identity, LayerNorm, Linear, LogSoftmax,
                     MSELoss, NLLLoss, ReLU, Sigmoid, Softmax, Tanh, Unflatten)
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, SmoothL1Loss
from .modules import Module, ModuleList, Parameter, Sequential
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)
from .normalization import (BatchNorm1d, BatchNorm2d, GroupNorm, InstanceNorm1d, InstanceNorm2d,
                            RMSNorm)
from .upsampling import PixelShuffle, PixelUnshuffle, Upsample

__all__ = ["functional", "init", "utils", "Parameter", "Module", "Sequential", "ModuleList",
           "ModuleDict", "ParameterList", "ParameterDict", "Linear", "Embedding", "LayerNorm",
           "Dropout", "ReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "LeakyReLU", "PReLU", "ELU", "Softplus",
           "Softmax", "LogSoftmax", "Identity", "Flatten", "Unflatten", "MSELoss",
           "CrossEntropyLoss", "NLLLoss", "Conv1d", "Conv2d", "Conv3d", "MaxPool1d", "MaxPool2d",
           "AvgPool1d", "AvgPool2d", "ConvTranspose1d", "ConvTranspose2d", "AdaptiveAvgPool2d",
           "AdaptiveMaxPool2d", "BCELoss", "BCEWithLogitsLoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
           "BatchNorm1d", "BatchNorm2d", "InstanceNorm1d", "InstanceNorm2d", "GroupNorm", "RMSNorm",
           "Upsample", "PixelShuffle", "PixelUnshuffle", "Dropout1d", "Dropout2d", "Dropout3d",
           "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "TransformerDecoder", "Transformer"]
