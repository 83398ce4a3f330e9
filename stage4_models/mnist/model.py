"""The thesis's MNIST network and its losses (thesis, "Mnist Training Example").

MnistNet = Linear(784, 128) -> ReLU -> Linear(128, 10) -> Softmax: ten probabilities per
image. The thesis trains it with the squared error of those probabilities against the
one-hot label, summed over the classes and the batch and divided by the batch size
(``thesis_loss``). Cross-entropy on the logits (``cross_entropy_loss``) is the usual
alternative; MnistNet.logits gives what it needs.
"""
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F

IMAGE_PIXELS, HIDDEN, CLASSES = 28 * 28, 128, 10


class MnistNet(nn.Module):
    def __init__(self, device=None):
        super().__init__()
        self.fc1 = nn.Linear(IMAGE_PIXELS, HIDDEN, device=device)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(HIDDEN, CLASSES, device=device)
        self.softmax = nn.Softmax(dim=1)

    def logits(self, x):
        """(N, 784) pixels in [0, 1] -> (N, 10) scores, before the softmax."""
        return self.fc2(self.act(self.fc1(x)))

    def forward(self, x):
        """(N, 784) pixels in [0, 1] -> (N, 10) class probabilities."""
        return self.softmax(self.logits(x))


def thesis_loss(probs, onehot):
    """sum over the batch and the classes of (p - y)^2, divided by the batch size: the
    thesis's ((p - y) ** 2).sum() / B, with the squared error summed by one fused kernel
    (``F.mse_loss``, the same numbers in one kernel each way instead of three)."""
    return F.mse_loss(probs, onehot, reduction="sum") / probs.shape[0]


def cross_entropy_loss(logits, labels):
    """Mean over the batch of -log softmax(logits)[label]."""
    return F.cross_entropy(logits, labels)


# --loss: the thesis's, on probabilities and one-hot labels, or cross-entropy, on logits
# and class indices
LOSSES = ("thesis", "cross_entropy")
