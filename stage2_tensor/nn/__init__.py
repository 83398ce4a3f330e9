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
* ``recurrent.py``: ``RNN``, ``LSTM``, ``GRU``; ``recurrent_cells.py``: ``RNNCell``,
  ``LSTMCell``, ``GRUCell`` and each one's step;
* ``init.py`` (``nn.init``): in-place initialisations, ``kaiming_uniform_``...;
* ``utils/`` (``nn.utils``): ``clip_grad_norm_``, ``utils.rnn`` (padded and packed sequences).

    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    loss = nn.functional.mse_loss(model(x), y)
"""
import sys

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
from .recurrent import GRU, LSTM, RNN, RNNBase
from .recurrent_cells import GRUCell, LSTMCell, RNNCell, RNNCellBase
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
           "TransformerDecoderLayer", "TransformerDecoder", "Transformer", "RNNBase", "RNN", "LSTM", "GRU",
           "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

# ---- more of PyTorch's nn: activations, losses, padding, pooling, lazy and other layers ----
# (padding.py, pooling.py, fold.py, bags.py: EmbeddingBag and Bilinear, distance.py, lazy.py,
# parameter.py: Buffer and the uninitialized placeholders, data_parallel.py; utils/ is a
# package: clip_grad_value_, parameters_to_vector, weight_norm, spectral_norm, parametrize)
from . import parameter  # noqa: E402
from .activation import (CELU, GLU, SELU, AlphaDropout, CrossMapLRN2d, FeatureAlphaDropout, Hardshrink,  # noqa: E402
                         Hardsigmoid, Hardswish, Hardtanh, LocalResponseNorm, LogSigmoid, Mish, ReLU6, RReLU,
                         Softmax2d, Softmin, Softshrink, Softsign, Tanhshrink, Threshold)
from .bags import Bilinear, EmbeddingBag  # noqa: E402
from .conv import ConvTranspose3d  # noqa: E402
from .data_parallel import DataParallel  # noqa: E402
from .distance import CosineSimilarity, PairwiseDistance  # noqa: E402
from .fold import Fold, Unfold  # noqa: E402
from .lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d,  # noqa: E402
                   LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
                   LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d, LazyLinear)
from .loss import (CosineEmbeddingLoss, CTCLoss, GaussianNLLLoss, HingeEmbeddingLoss, KLDivLoss,  # noqa: E402
                   MarginRankingLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                   NLLLoss2d, PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss)
from .normalization import BatchNorm3d, InstanceNorm3d, SyncBatchNorm  # noqa: E402
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,  # noqa: E402
                      ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d,
                      ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .parameter import Buffer, UninitializedBuffer, UninitializedParameter  # noqa: E402
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool3d,  # noqa: E402
                      AvgPool3d, LPPool1d, LPPool2d, LPPool3d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .upsampling import ChannelShuffle, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: E402

__all__ += ["parameter", "CELU", "GLU", "SELU", "AlphaDropout", "FeatureAlphaDropout", "Hardshrink", "Hardsigmoid",
            "Hardswish", "Hardtanh", "LocalResponseNorm", "LogSigmoid", "Mish", "ReLU6", "RReLU", "Softmax2d",
            "Softmin", "Softshrink", "Softsign", "Tanhshrink", "Threshold", "Bilinear", "EmbeddingBag",
            "ConvTranspose3d", "DataParallel", "CosineSimilarity", "PairwiseDistance", "Fold", "Unfold",
            "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
            "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d",
            "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear", "CosineEmbeddingLoss", "CTCLoss", "GaussianNLLLoss",
            "HingeEmbeddingLoss", "KLDivLoss", "MarginRankingLoss", "MultiLabelMarginLoss",
            "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss",
            "TripletMarginWithDistanceLoss", "BatchNorm3d", "InstanceNorm3d", "CircularPad1d", "CircularPad2d",
            "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
            "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
            "ZeroPad3d", "Buffer", "UninitializedBuffer", "UninitializedParameter", "AdaptiveAvgPool1d",
            "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool3d", "AvgPool3d", "LPPool1d", "LPPool2d",
            "LPPool3d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "ChannelShuffle",
            "UpsamplingBilinear2d", "UpsamplingNearest2d", "CrossMapLRN2d", "NLLLoss2d", "SyncBatchNorm"]

from . import layout as _layout  # noqa: E402

_layout.install(sys.modules[__name__])       # torch.nn.modules.rnn.LSTM and the rest
