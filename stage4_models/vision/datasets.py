"""torchvision.datasets.MNIST over stage4's MNIST files (``stage4_models.mnist.data``)."""
import stage2_tensor as tg
from stage2_tensor.utils.data import Dataset

from ..mnist import data as mnist


class MNIST(Dataset):
    """The MNIST training (``train=True``) or test split. ``root`` is accepted and not used:
    the files are found as every stage4 loader finds them ($TRACEGRAD_DATA/mnist, then
    ~/.cache/tracegrad/mnist, else a checked download when ``download`` is true). A sample is
    (greyscale PIL image, int label), each through its transform when given."""
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root=None, train=True, transform=None, target_transform=None, download=False):
        self.train, self.transform, self.target_transform = train, transform, target_transform
        images, labels = mnist.load("train" if train else "test", download=download)
        self._images, self._labels = images, labels
        self.data = tg.from_numpy(images)                       # uint8 (N, 28, 28)
        self.targets = tg.from_numpy(labels.astype("int64"))

    def __len__(self):
        return len(self._labels)

    def __getitem__(self, index):
        from PIL import Image
        image = Image.fromarray(self._images[index], mode="L")
        target = int(self._labels[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target
