"""The attention kernels the probe's forwards may use.

torch (2.10+, with cuDNN newer than 9.15 on Hopper/Blackwell) puts cuDNN attention first. cuDNN builds an
execution graph for each new set of shapes, and a decode step's key length is new at every step: each
attention call in the decode loops would pay a graph build, which the floor, timed at fixed shapes, never
sees (the cost measured: docs/performance.md). Flash, memory-efficient and math kernels take any length;
on CPU this is the default set.
"""

from __future__ import annotations

from contextlib import nullcontext

try:  # torch >= 2.3
    from torch.nn.attention import SDPBackend, sdpa_kernel

    ANY_LENGTH = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
    _HAS_SDPA_KERNEL = True
except ImportError:  # older torch has no cuDNN attention backend to avoid
    ANY_LENGTH = []
    _HAS_SDPA_KERNEL = False


def any_length_attention():
    """Context: scaled_dot_product_attention without cuDNN attention (no per-shape graph builds)."""
    return sdpa_kernel(ANY_LENGTH) if _HAS_SDPA_KERNEL else nullcontext()
