"""stage4_models.vision, torchvision's names for MNIST programs: the dataset as torchvision
hands it out, the transforms against numpy, the grid a saved picture holds, and ResNet's
layers as torchvision names and sizes them."""
import numpy as np
import pytest

import stage2_tensor as tg
from stage4_models.mnist import data
from stage4_models.vision import datasets, models, transforms, utils

pytestmark = pytest.mark.stage4


@pytest.fixture(scope="module")
def test_split():
    try:
        return datasets.MNIST("unused", train=False, transform=transforms.ToTensor())
    except FileNotFoundError as e:
        pytest.skip(f"MNIST is not in $TRACEGRAD_DATA or ~/.cache/tracegrad (tests never download): {e}")


def test_mnist_samples_as_torchvision_gives_them(test_split):
    images, labels = data.load("test", download=False)
    assert len(test_split) == len(labels) == 10000
    assert test_split.data.dtype is tg.uint8 and test_split.data.shape == (10000, 28, 28)
    assert test_split.targets.dtype is tg.int64 and test_split.targets[:50].tolist() == labels[:50].tolist()
    image, label = test_split[7]
    assert label == labels[7] and isinstance(label, int)
    assert image.dtype is tg.float32 and image.shape == (1, 28, 28)
    np.testing.assert_array_equal(image.numpy()[0], images[7].astype(np.float32) / 255)


def test_transforms_against_numpy():
    rng = np.random.default_rng(0)
    picture = rng.integers(0, 256, (5, 4, 3), dtype=np.uint8)
    pipeline = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5, 0.25, 0.1), (0.2, 0.3, 0.4)),
                                   transforms.Lambda(lambda x: x * 2)])
    got = pipeline(picture).numpy()
    want = (picture.transpose(2, 0, 1).astype(np.float32) / 255 - np.array([0.5, 0.25, 0.1])[:, None, None]) \
        / np.array([0.2, 0.3, 0.4])[:, None, None] * 2
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="std evaluated to zero"):
        transforms.Normalize((0.0,), (0.0,))


def test_a_saved_grid_holds_each_image_in_its_place(tmp_path):
    rng = np.random.default_rng(1)
    images = rng.random((5, 1, 3, 4)).astype(np.float32)
    utils.save_image(tg.from_numpy(images), tmp_path / "grid.png", nrow=2, padding=1)
    from PIL import Image
    saved = np.asarray(Image.open(tmp_path / "grid.png"))
    assert saved.shape == (3 * 4 + 1, 2 * 5 + 1, 3)           # three rows of two, one pixel apart
    for k in range(5):
        y, x = divmod(k, 2)
        block = saved[1 + y * 4:1 + y * 4 + 3, 1 + x * 5:1 + x * 5 + 4, 0]
        np.testing.assert_array_equal(block, np.clip(images[k, 0] * 255 + 0.5, 0, 255).astype(np.uint8))


def test_resnet18_has_torchvisions_layers():
    model = models.resnet18()
    # torchvision's resnet18 has 11,689,512 parameters and these names
    assert sum(p.numel() for p in model.parameters()) == 11_689_512
    names = set(model.state_dict())
    assert {"conv1.weight", "bn1.running_mean", "layer2.0.downsample.0.weight", "layer4.1.bn2.bias",
            "fc.weight"} <= names
    small = models.resnet18(num_classes=10)
    assert small(tg.randn(2, 3, 32, 32)).shape == (2, 10)
    with pytest.raises(ValueError, match="no pretrained weights"):
        models.resnet18(weights="IMAGENET1K_V1")
