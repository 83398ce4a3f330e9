"""A small denoising U-net (chapter 13, "13_inference_compiler": the U-net trained here).

The network the seed's engine was built for, image denoising, at MNIST's size: two levels
(16 then 32 channels, each two 3x3 convolutions with ReLU), a 32-channel bottleneck at a
quarter of the resolution, nearest-neighbour upsampling, each level's features concatenated
with the skip connection of the same resolution, and a 1x1 convolution that predicts the
noise, subtracted from the input (residual learning, as DnCNN: the network learns the small
correction, not the whole digit).

Any size works: the input is padded (edge values) up to a multiple of 4, the two poolings'
product, so both Concats see equal extents, and the output is cropped back. The padding
depends on the input's size, so the two modules that do it write their own ONNX nodes
(``export_onnx``): the Shape, Mod, Sub, Concat, Pad and Slice arithmetic the seed's padded
U-net has, which the importer evaluates on the host from the symbolic shape.
"""
import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F

MULTIPLE = 4            # 2 poolings of 2


class PadToMultiple(nn.Module):
    """(N, C, H, W) -> (N, C, H', W'), H' and W' the next multiples of ``multiple``, the new
    rows and columns copies of the last ones (edge padding: no dark border to denoise)."""

    def __init__(self, multiple=MULTIPLE):
        super().__init__()
        self.multiple = multiple

    def forward(self, x):
        h, w = x.shape[2:]
        return F.pad(x, (0, -w % self.multiple, 0, -h % self.multiple), mode="replicate")

    def export_onnx(self, b, x):
        """pads = [0, 0, 0, 0, 0, 0, (m - H mod m) mod m, (m - W mod m) mod m]."""
        m = b.ints([self.multiple], "multiple")
        [shape] = b.node("Shape", [x])
        [hw] = b.node("Slice", [shape, b.ints([2], "two"), b.ints([4], "four")])
        [rem] = b.node("Mod", [hw, m])
        [up] = b.node("Sub", [m, rem])
        [extra] = b.node("Mod", [up, m])
        [pads] = b.node("Concat", [b.ints([0] * 6, "zeros6"), extra], axis=0)
        return b.node("Pad", [x, pads], mode="edge")[0]


class CropLike(nn.Module):
    """y cropped to x's height and width (what PadToMultiple added, taken off)."""

    def forward(self, y, x):
        return y[:, :, :x.shape[2], :x.shape[3]]

    def export_onnx(self, b, y, x):
        [shape] = b.node("Shape", [x])
        [hw] = b.node("Slice", [shape, b.ints([2], "two"), b.ints([4], "four")])
        return b.node("Slice", [y, b.ints([0, 0], "zeros2"), hw, b.ints([2, 3], "axes23")])[0]


class Block(nn.Module):
    """Two 3x3 convolutions (padding 1: the size kept), each followed by ReLU."""

    def __init__(self, c_in, c_out, device=None):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, padding=1, device=device)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1, device=device)

    def forward(self, x):
        return F.relu(self.conv2(F.relu(self.conv1(x))))


class UNet(nn.Module):
    """(N, 1, H, W) noisy images -> (N, 1, H, W) denoised, any H and W."""

    def __init__(self, channels=16, device=None):
        super().__init__()
        c = channels
        self.pad, self.crop = PadToMultiple(), CropLike()
        self.down1 = Block(1, c, device)
        self.down2 = Block(c, 2 * c, device)
        self.bottom = nn.Conv2d(2 * c, 2 * c, 3, padding=1, device=device)
        self.pool = nn.MaxPool2d(2)
        self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
        self.up2 = nn.Conv2d(4 * c, 2 * c, 3, padding=1, device=device)
        self.up1 = nn.Conv2d(3 * c, c, 3, padding=1, device=device)
        self.head = nn.Conv2d(c, 1, 1, device=device)

    def forward(self, x):
        p = self.pad(x)
        s1 = self.down1(p)                                          # (N, c, H, W)
        s2 = self.down2(self.pool(s1))                              # (N, 2c, H/2, W/2)
        b = F.relu(self.bottom(self.pool(s2)))                      # (N, 2c, H/4, W/4)
        u2 = F.relu(self.up2(tg.cat([s2, self.upsample(b)], 1)))    # skip of H/2
        u1 = F.relu(self.up1(tg.cat([s1, self.upsample(u2)], 1)))   # skip of H
        return x - self.crop(self.head(u1), x)                      # the noise, predicted, removed
