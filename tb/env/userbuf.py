"""The user-space side of driver-level tests: buffers (host memory or pinned CUDA
surfaces) with guard bytes around the bytes a transfer moves, and errno checks."""

from __future__ import annotations

from cuda_model import CUpointer_attribute, cudaMemcpyKind
from cuda_model.gpu import BIG_PAGE_SIZE

from .harness import GUARD, Rig

D2H = cudaMemcpyKind.cudaMemcpyDeviceToHost
H2D = cudaMemcpyKind.cudaMemcpyHostToDevice
SYNC = CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS


async def expect_errno(coro, err: int, what: str, says: str = "") -> None:
    """``await coro`` fails with OSError ``err``, its message (the ioctl, the errno's name
    and the driver's reason) containing ``says``."""
    try:
        await coro
    except OSError as e:
        assert e.errno == err, f"{what}: errno {e.errno} ({e}), expected {err}"
        assert says in str(e.strerror), f"{what}: {e.strerror!r} does not say {says!r}"
        return
    raise AssertionError(f"{what}: succeeded, expected errno {err}")


class Side:
    """One side of a transfer: a malloc'd host buffer or a pinned cudaMalloc surface, with
    guard bytes around the ``length`` bytes at ``skew`` (an offset into the buffer)."""

    def __init__(
        self,
        rig: Rig,
        length: int,
        cuda: bool,
        skew: int = 0,
        fill: bytes = b"",
        pad: int = 4096,
        own_pages: bool = False,
    ) -> None:
        self.rig, self.length, self.cuda, self.skew, self.pad = rig, length, cuda, skew, pad
        self.total = pad + skew + length + pad
        image = bytearray([GUARD]) * self.total
        if fill:
            image[pad + skew : pad + skew + length] = fill
        self.image = bytes(image)
        self.handle: int | None = None
        if cuda:
            rt = rig.cuda
            # small allocations share 2 MiB pool chunks, so a pin's 64 KiB pages may
            # cover a neighbour and outlive this buffer's cudaFree (the chunk stays while
            # other buffers live in it); ``own_pages`` asks for an allocation of at least
            # 2 MiB, a range of its own that cudaFree releases (revoking its pins) at once
            self.base = rt.cudaMalloc(max(self.total, BIG_PAGE_SIZE) if own_pages else self.total)
            rt.cuPointerSetAttribute(1, SYNC, self.base)
            rt.cudaMemcpy(self.base, self.image, self.total, H2D)
        else:
            self.base = rig.process.malloc(self.total)
            rig.process.write(self.base, self.image)

    @property
    def addr(self) -> int:
        """Address of the transfer's first byte."""
        return self.base + self.pad + self.skew

    async def pin(self) -> int:
        """Pin the transfer's range (not the guards' pages beyond it) and return the
        handle to pass as src/dst, or the user pointer for host memory."""
        if not self.cuda:
            return self.addr
        self.handle = await self.rig.fd.pin_cuda(self.addr, self.length)
        return self.handle

    def read_all(self) -> bytes:
        if self.cuda:
            out = bytearray(self.total)
            self.rig.cuda.cudaMemcpy(out, self.base, self.total, D2H)
            return bytes(out)
        return self.rig.process.read(self.base, self.total)

    def expect(self, data: bytes, what: str) -> None:
        """The transfer bytes equal ``data``, guards untouched."""
        got = self.read_all()
        want = bytearray(self.image)
        want[self.pad + self.skew : self.pad + self.skew + self.length] = data
        if got != bytes(want):
            first = next(i for i in range(self.total) if got[i] != want[i])
            raise AssertionError(
                f"{what}: byte {first - self.pad - self.skew:#x} of the "
                f"transfer is {got[first]:#04x}, expected {want[first]:#04x}"
            )
