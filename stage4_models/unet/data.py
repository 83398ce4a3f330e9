"""Noisy MNIST (chapter 13, "13_inference_compiler": the U-net trained here): MNIST's digits
as clean targets in [0, 1], and the same digits with Gaussian noise of standard deviation
``sigma`` added (not clipped: the noise model the network is trained to remove).

Training draws fresh noise for every batch (from a seeded generator, so a run repeats);
the test set's noise is drawn once from its own seed, so every evaluation of every
checkpoint sees the same noisy digits. Quality is the PSNR, in dB, for a peak of 1.
"""
import numpy as np

SIGMA = 0.4


def clean(images):
    """uint8 digits (N, 28, 28) as (N, 1, 28, 28) float32 in [0, 1]."""
    images = np.asarray(images)
    if images.ndim != 3:
        raise ValueError(f"expected images (N, H, W), got shape {images.shape}")
    return (images.astype(np.float32) / 255.0)[:, None]


def add_noise(x, sigma, rng):
    """x plus Gaussian noise of standard deviation ``sigma``, drawn from ``rng``."""
    return (x + rng.normal(0.0, sigma, x.shape)).astype(np.float32)


def test_pairs(images, sigma=SIGMA, seed=1234):
    """(noisy, clean) for the test digits: the same noise every time."""
    x = clean(images)
    return add_noise(x, sigma, np.random.default_rng(seed)), x


def psnr(estimate, target, peak=1.0):
    """Peak signal-to-noise ratio in dB over all of ``estimate`` against ``target``."""
    mse = float(np.mean((np.asarray(estimate, np.float64) - np.asarray(target, np.float64)) ** 2))
    return float("inf") if mse == 0 else 10.0 * np.log10(peak ** 2 / mse)
