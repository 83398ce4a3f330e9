"""Examples on device "cpu": `python -m stage3_native.examples.<name>`."""
