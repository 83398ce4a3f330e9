"""Lazy execution and kernel fusion for device "cpu" (chapter 11)."""
