"""torchvision's names that learners' programs import, for MNIST: a program ports by
changing ``from torchvision import datasets, transforms`` to
``from stage4_models.vision import datasets, transforms`` (and ``torchvision.utils``,
``torchvision.models`` likewise):

* ``datasets.MNIST``: the digits from stage4's MNIST files, as torchvision hands them out
  (a greyscale PIL image and an int label per sample; ``.data`` uint8, ``.targets`` int64);
* ``transforms``: ``Compose``, ``ToTensor``, ``Normalize``, ``Lambda``;
* ``utils``: ``make_grid`` and ``save_image``;
* ``models``: ``resnet18`` (and 34), built from stage2's layers, untrained.
"""
from . import datasets, models, transforms, utils

__all__ = ["datasets", "models", "transforms", "utils"]
