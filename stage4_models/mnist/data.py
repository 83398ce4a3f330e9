"""MNIST: 60,000 training and 10,000 test images of handwritten digits, 28x28 grey
levels 0-255, and their labels 0-9 (thesis, "Mnist Training Example").

``load(split)`` finds the four original files (``stage4_models.data``: $TRACEGRAD_DATA/mnist,
then ~/.cache/tracegrad/mnist, else a checked download), reads them with ``idx.read_idx``
and checks they belong together. Mini-batches come from ``stage4_models.training.Batches``.
"""
import numpy as np

from ..data import DataFile, fetch
from .idx import IdxError, read_idx

# Two public mirrors of the original files (yann.lecun.com no longer serves them reliably);
# the SHA-256 sums are those of the original 1998 files.
MIRRORS = ("https://ossci-datasets.s3.amazonaws.com/mnist/",
           "https://storage.googleapis.com/cvdf-datasets/mnist/")
SHA256 = {
    "train-images-idx3-ubyte.gz": "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
    "train-labels-idx1-ubyte.gz": "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    "t10k-images-idx3-ubyte.gz": "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    "t10k-labels-idx1-ubyte.gz": "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
}
FILES = {name: DataFile("mnist", name, tuple(m + name for m in MIRRORS), digest)
         for name, digest in SHA256.items()}
PREFIX = {"train": "train", "test": "t10k"}
SIZES = {"train": 60000, "test": 10000}
IMAGE_MAGIC, LABEL_MAGIC = 2051, 2049


def files(split):
    """The (images, labels) DataFiles of a split, "train" or "test"."""
    if split not in PREFIX:
        raise ValueError(f"MNIST split must be 'train' or 'test', got {split!r}")
    p = PREFIX[split]
    return FILES[f"{p}-images-idx3-ubyte.gz"], FILES[f"{p}-labels-idx1-ubyte.gz"]


def load(split, download=True):
    """(images uint8 (N, 28, 28), labels uint8 (N,)) of a split, "train" or "test"."""
    image_path, label_path = fetch(files(split), download=download)
    return read_pair(image_path, label_path, expected=SIZES[split])


def read_pair(image_path, label_path, expected=None):
    """Images and labels from two IDX files, checked to match each other (and, when
    ``expected`` is given, to hold that many examples)."""
    images = read_idx(image_path, expect_magic=IMAGE_MAGIC)
    labels = read_idx(label_path, expect_magic=LABEL_MAGIC)
    if images.shape[1:] != (28, 28):
        raise IdxError(f"{image_path}: images of shape {images.shape[1:]}, expected (28, 28)")
    if len(images) != len(labels):
        raise IdxError(f"{image_path} holds {len(images)} images but {label_path} "
                       f"{len(labels)} labels; they must be the same split")
    if expected is not None and len(images) != expected:
        raise IdxError(f"{image_path}: {len(images)} images, expected {expected}")
    if len(labels) and labels.max() > 9:
        raise IdxError(f"{label_path}: label {int(labels.max())} outside 0-9")
    return images, labels


def as_inputs(images):
    """Images as the network reads them: float32 rows of 784 pixels scaled to [0, 1]."""
    return (np.asarray(images, dtype=np.float32) / 255.0).reshape(len(images), -1)
