"""PyTorch's module layout, torch.nn.modules.SUBMODULE.Class: the same classes under the
names of the files PyTorch defines them in, so a program (or a saved model's safe list)
that spells ``torch.nn.modules.rnn.LSTM`` or ``import torch.nn.modules.linear`` finds
them. tracegrad's own files follow its concepts instead; this table maps one layout onto
the other (PyTorch's ``NonDynamicallyQuantizableLinear``, a Linear kept apart for its
quantization, is Linear here)."""
import sys
import types

LAYOUT = {
    "activation": "Threshold, ReLU, RReLU, Hardtanh, ReLU6, Sigmoid, Hardsigmoid, Tanh, SiLU, Mish,"
                  " Hardswish, ELU, CELU, SELU, GLU, GELU, Hardshrink, LeakyReLU, LogSigmoid,"
                  " Softplus, Softshrink, MultiheadAttention, PReLU, Softsign, Tanhshrink, Softmin,"
                  " Softmax, Softmax2d, LogSoftmax",
    "batchnorm": "BatchNorm1d, LazyBatchNorm1d, BatchNorm2d, LazyBatchNorm2d, BatchNorm3d,"
                 " LazyBatchNorm3d, SyncBatchNorm",
    "channelshuffle": "ChannelShuffle",
    "container": "Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict",
    "conv": "Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, LazyConv1d,"
            " LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d",
    "distance": "PairwiseDistance, CosineSimilarity",
    "dropout": "Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout",
    "flatten": "Flatten, Unflatten",
    "fold": "Fold, Unfold",
    "instancenorm": "InstanceNorm1d, LazyInstanceNorm1d, InstanceNorm2d, LazyInstanceNorm2d,"
                    " InstanceNorm3d, LazyInstanceNorm3d",
    "linear": "Identity, Linear, Bilinear, LazyLinear, NonDynamicallyQuantizableLinear",
    "loss": "L1Loss, NLLLoss, NLLLoss2d, PoissonNLLLoss, GaussianNLLLoss, KLDivLoss, MSELoss,"
            " BCELoss, BCEWithLogitsLoss, HingeEmbeddingLoss, MultiLabelMarginLoss, SmoothL1Loss,"
            " HuberLoss, SoftMarginLoss, CrossEntropyLoss, MultiLabelSoftMarginLoss,"
            " CosineEmbeddingLoss, MarginRankingLoss, MultiMarginLoss, TripletMarginLoss,"
            " TripletMarginWithDistanceLoss, CTCLoss",
    "module": "Module",
    "normalization": "LocalResponseNorm, CrossMapLRN2d, LayerNorm, GroupNorm, RMSNorm",
    "padding": "CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,"
               " ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d,"
               " ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d",
    "pixelshuffle": "PixelShuffle, PixelUnshuffle",
    "pooling": "MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, AvgPool1d,"
               " AvgPool2d, AvgPool3d, LPPool1d, LPPool2d, LPPool3d, AdaptiveMaxPool1d,"
               " AdaptiveMaxPool2d, AdaptiveMaxPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool2d,"
               " AdaptiveAvgPool3d",
    "rnn": "RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell",
    "sparse": "Embedding, EmbeddingBag",
    "transformer": "Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer,"
                   " TransformerDecoderLayer",
    "upsampling": "Upsample, UpsamplingNearest2d, UpsamplingBilinear2d",
}


def install(nn):
    """Give ``nn.modules`` one submodule per entry of LAYOUT, importable by its dotted
    name, holding the classes of ``nn`` (the package) it names."""
    modules = nn.modules
    for name, classes in LAYOUT.items():
        full = f"{modules.__name__}.{name}"
        sub = types.ModuleType(full, f"PyTorch's torch.nn.modules.{name}: tracegrad's classes of that name")
        for cls in classes.replace(",", " ").split():
            setattr(sub, cls, getattr(nn, "Linear" if cls == "NonDynamicallyQuantizableLinear" else cls))
        setattr(modules, name, sub)
        sys.modules[full] = sub
