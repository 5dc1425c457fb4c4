"""Mapping a PCI function's BAR into a process without its driver, as seed 002 does:
``/sys/bus/pci/devices/<bdf>/resourceN`` (pci_mmap_resource) and ``/dev/mem`` (with
``CONFIG_STRICT_DEVMEM``). Both give a device mapping (``VM_IO | VM_PFNMAP``, uncached),
what ``cudaHostRegister(..., cudaHostRegisterIoMemory)`` takes. Each returns the mapping's
address or a negative errno, as the system calls fail.
"""

from __future__ import annotations

import errno

from .host import PAGE_SIZE, HostMemory, UserProcess
from .platform import Platform


def mmap_resource(
    platform: Platform, process: UserProcess, bar: int, length: int, offset: int = 0
) -> int:
    """``mmap`` of ``resource<bar>``: -EPERM unless the process is root (the file is
    0600 root and the kernel wants CAP_SYS_RAWIO), -EINVAL for no such BAR, an offset
    not page aligned or a range past the BAR's end."""
    if not process.privileged:
        return -errno.EPERM
    size = platform.pci_resource_len(bar) if 0 <= bar < 6 else 0
    if not size or offset % PAGE_SIZE or length <= 0 or offset + length > size:
        return -errno.EINVAL
    start = platform.pci_resource_start(bar) + offset
    return process.mmap_io(start, length, name=f"resource{bar}")


def mmap_dev_mem(process: UserProcess, host: HostMemory, phys: int, length: int) -> int:
    """``mmap`` of ``/dev/mem`` at ``phys``: -EPERM unless root, and for RAM
    (STRICT_DEVMEM lets only device ranges through); -EINVAL when ``phys`` is not page
    aligned."""
    if not process.privileged:
        return -errno.EPERM
    if phys % PAGE_SIZE or length <= 0:
        return -errno.EINVAL
    if phys < host.base + host.size and host.base < phys + length:
        return -errno.EPERM
    return process.mmap_io(phys, length, name="/dev/mem")
