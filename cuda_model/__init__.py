"""The GPU side: VRAM, CUDA runtime, nv-p2p page tables and the GPU PCIe endpoint.

Not implemented yet; this package is the home of the GPU model milestone.
"""
