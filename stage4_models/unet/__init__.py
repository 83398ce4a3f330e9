"""A denoising U-net trained on noisy MNIST digits, exported to ONNX and run back through
the inference engine (chapter 13, "13_inference_compiler"):

    python -m stage4_models.unet train --steps 400 --out runs/unet
    python -m stage4_models.unet denoise --checkpoint runs/unet/checkpoint.tg
    python -m stage4_models.unet export --checkpoint runs/unet/checkpoint.tg --out runs/unet/unet.onnx

model.py (the U-net, padding any size to a multiple of 4), data.py (noisy MNIST, PSNR),
training.py (training, evaluation, checkpoint, the ONNX round trip), __main__.py (the CLI).
"""
