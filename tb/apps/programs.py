"""The picoevb user-space applications, as async programs against the driver model.

Each mirrors its C original (reference/picoevb.md): the same calls in the same order, the
same messages on stdout/stderr, the same exit status. They need no simulator themselves:
an :class:`AppEnv` gives them the device, the CUDA runtime, the process and the output.
"""

from __future__ import annotations

import errno
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import numpy as np

from cuda_model import CudaError, CUpointer_attribute, cudaMemcpyKind, fill_surface, surface_word
from cuda_model.hostreg import cudaHostRegisterIoMemory
from cuda_model.runtime import CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD
from driver_model import regs, uapi
from driver_model.host import HostMemoryError, UserProcess
from driver_model.picoevb import PicoevbFile, ioctl

D2H = cudaMemcpyKind.cudaMemcpyDeviceToHost
DMA_BUF_FD = CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD
DMABUF_ALLOC = 2 << 20  # --dmabuf surfaces: own 2 MiB-aligned ranges
SYNC_MEMOPS = CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS
PERF_MAX_SIZE = 100 << 20
# mismatch lines printed before the rest are only counted (the original prints them all)
MAX_MISMATCH_LINES = 16


@dataclass
class AppEnv:
    """What a program sees: ``open()`` of /dev/picoevb, the CUDA runtime, its own address
    space, and stdout/stderr. ``results`` collects figures for the caller (dma time...)."""

    open: Callable[[], PicoevbFile]
    cuda: object
    process: UserProcess
    out: Callable[[str], None]
    err: Callable[[str], None]
    results: dict = field(default_factory=dict)


def expected_surface(width: int, height: int, xor_val: int = 0) -> np.ndarray:
    """``DATA(x, y) ^ xor_val`` for every word of a surface, row-major."""
    y, x = np.mgrid[0:height, 0:width]
    return surface_word(x, y, xor_val).astype(np.uint32).ravel()


def _check_surface(env: AppEnv, got: np.ndarray, width: int, height: int) -> int:
    want = expected_surface(width, height)
    bad = np.flatnonzero(got != want)
    for i in bad[:MAX_MISMATCH_LINES]:
        env.err(f"dst[0x{int(i):x}] is 0x{int(got[i]):x} not 0x{int(want[i]):x}")
    if len(bad) > MAX_MISMATCH_LINES:
        env.err(f"... and {len(bad) - MAX_MISMATCH_LINES} more mismatching words")
    env.results["mismatches"] = len(bad)
    return 1 if len(bad) else 0


def _surface_error(width: int, height: int) -> str | None:
    # the C code refuses these at compile time (#error)
    if width < 16 or height < 16 or width % 16 or height % 16:
        return f"surface {width}x{height}: W and H must be multiples of 16, at least 16"
    return None


def _check_size(env: AppEnv, width: int, height: int) -> bool:
    msg = _surface_error(width, height)
    if msg:
        env.err(msg)
    return msg is None


async def _h2c2h(env: AppEnv, fd: PicoevbFile, src: int, dst: int, size: int, flags: int) -> bool:
    """The H2C2H ioctl of both surface demos; records the DMA time."""
    dma = uapi.picoevb_rdma_h2c2h_dma(src=src, dst=dst, len=size, flags=flags)
    try:
        await ioctl(fd, uapi.PICOEVB_IOC_H2C2H_DMA, dma)
    except OSError as e:
        env.err(f"ioctl(DMA) failed: -1 (errno {e.errno}: {e.strerror})")
        return False
    env.results.update(bytes=size, dma_time_ns=dma.dma_time_ns)
    return True


async def rdma_cuda(
    env: AppEnv, width: int = 1024, height: int = 1024, dmabuf: bool = False
) -> int:
    """cudaMalloc two surfaces, pin them, fill them, H2C2H GPU -> FPGA -> GPU, verify.
    With ``dmabuf`` (not in the original) each surface is exported as a dma-buf and
    imported by its fd (PIN_DMABUF) instead of pinned through nv-p2p: the surfaces are
    allocated in 2 MiB so that the export's range is 4 KiB aligned."""
    if not _check_size(env, width, height):
        return 1
    rt = env.cuda
    size = width * height * 4
    alloc = -(-size // DMABUF_ALLOC) * DMABUF_ALLOC if dmabuf else size
    fd = env.open()
    env.results["pinned_by"] = "dma-buf" if dmabuf else "nv-p2p"
    ptrs: dict[str, int] = {}
    handles: dict[str, int] = {}
    fds: dict[str, int] = {}
    try:
        for name in ("src", "dst"):
            try:
                ptrs[name] = rt.cudaMalloc(alloc)
            except CudaError as e:
                env.err(f"Allocation of {name}_d failed: {int(e.code)}")
                return 1
            try:
                rt.cuPointerSetAttribute(1, SYNC_MEMOPS, ptrs[name])
            except CudaError as e:
                env.err(f"cuPointerSetAttribute({name}_d) failed: {int(e.code)}")
                return 1
        for name in ("src", "dst"):
            if dmabuf:
                h = await _import_dmabuf(env, fd, name, ptrs[name], size, fds)
                if h is None:
                    return 1
                handles[name] = h
                continue
            pin = uapi.picoevb_rdma_pin_cuda(va=ptrs[name], size=size)
            try:
                await ioctl(fd, uapi.PICOEVB_IOC_PIN_CUDA, pin)
            except OSError as e:
                env.err(f"ioctl(PIN_CUDA {name}) failed: ret=-1 errno={e.errno}")
                return 1
            handles[name] = pin.handle
        fill_surface(rt, ptrs["src"], 0, width, height)
        fill_surface(rt, ptrs["dst"], 0xFFFFFFFF, width, height)
        try:
            rt.cudaDeviceSynchronize()
        except CudaError as e:
            env.err(f"cudaDeviceSynchronize() failed: {int(e.code)}")
            return 1
        flags = uapi.PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA | uapi.PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA
        if not await _h2c2h(env, fd, handles["src"], handles["dst"], size, flags):
            return 1
        dst_cpu = bytearray(size)
        rt.cudaMemcpy(dst_cpu, ptrs["dst"], size, D2H)
        return _check_surface(env, np.frombuffer(dst_cpu, dtype="<u4"), width, height)
    finally:
        for name, h in handles.items():
            try:
                await ioctl(fd, uapi.PICOEVB_IOC_UNPIN_CUDA, uapi.picoevb_rdma_unpin_cuda(h))
            except OSError as e:
                env.err(f"ioctl(UNPIN_CUDA {name}) failed: errno={e.errno}")
        for p in ptrs.values():
            rt.cudaFree(p)
        for dfd in fds.values():
            env.process.close(dfd)
        await fd.release()


async def _import_dmabuf(
    env: AppEnv, fd: PicoevbFile, name: str, ptr: int, size: int, fds: dict[str, int]
) -> int | None:
    """Export ``size`` bytes (rounded up to 4 KiB) at ``ptr`` as a dma-buf and import it
    with PIN_DMABUF; the handle, or None (the error printed)."""
    span = -(-size // 4096) * 4096
    try:
        fds[name] = env.cuda.cuMemGetHandleForAddressRange(ptr, span, DMA_BUF_FD, 0)
    except CudaError as e:
        env.err(f"cuMemGetHandleForAddressRange({name}_d) failed: {int(e.code)}")
        return None
    pin = uapi.picoevb_rdma_pin_dmabuf(fd=fds[name])
    try:
        await ioctl(fd, uapi.PICOEVB_IOC_PIN_DMABUF, pin)
    except OSError as e:
        env.err(f"ioctl(PIN_DMABUF {name}) failed: ret=-1 errno={e.errno}")
        return None
    return pin.handle


async def rdma_malloc(env: AppEnv, width: int = 1024, height: int = 1024) -> int:
    """The same through malloc'd host buffers filled by the CPU (flags 0)."""
    if not _check_size(env, width, height):
        return 1
    size = width * height * 4
    proc = env.process
    fd = env.open()
    try:
        src, dst = proc.malloc(size), proc.malloc(size)
    except HostMemoryError:
        env.err("malloc failed")
        await fd.release()
        return 1
    try:
        proc.write(src, expected_surface(width, height).astype("<u4").tobytes())
        proc.write(dst, expected_surface(width, height, 0xFFFFFFFF).astype("<u4").tobytes())
        if not await _h2c2h(env, fd, src, dst, size, 0):
            return 1
        got = np.frombuffer(proc.read(dst, size), dtype="<u4")
        return _check_surface(env, got, width, height)
    finally:
        proc.free(src)
        proc.free(dst)
        await fd.release()


async def _perf(env: AppEnv, to_card: bool, cuda: bool, size: int | None) -> int:
    """One H2C or C2H of min(card RAM, 100 MiB) bytes; prints the rate."""
    fd = env.open()
    rt = env.cuda
    ptr = handle = None
    try:
        try:
            info = uapi.picoevb_rdma_card_info()
            await ioctl(fd, uapi.PICOEVB_IOC_CARD_INFO, info)
        except OSError as e:
            env.err(f"ioctl(CARD_INFO) failed: errno={e.errno}  [{e.strerror}]")
            return 1
        size = min(info.fpga_ram_size, PERF_MAX_SIZE) if size is None else size
        if cuda:
            try:
                ptr = rt.cudaMalloc(size)
            except CudaError as e:
                env.err(f"cudaMalloc failed: {int(e.code)}")
                return 1
            handle = await _pin(env, fd, ptr, size, with_reason=True)
            if handle is None:
                return 1
            target = handle
        else:
            ptr = env.process.malloc(size)
            target = ptr
        if to_card:
            dma = uapi.picoevb_rdma_h2c_dma(
                src=target,
                dst=0,
                len=size,
                flags=uapi.PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA if cuda else 0,
            )
            cmd, name = uapi.PICOEVB_IOC_H2C_DMA, "H2C"
        else:
            dma = uapi.picoevb_rdma_c2h_dma(
                dst=target,
                src=0,
                len=size,
                flags=uapi.PICOEVB_C2H_DMA_FLAG_DST_IS_CUDA if cuda else 0,
            )
            cmd, name = uapi.PICOEVB_IOC_C2H_DMA, "C2H"
        try:
            await ioctl(fd, cmd, dma)
        except OSError as e:
            env.err(f"ioctl({name}_DMA) failed: {-e.errno}  [{e.strerror}]")
            return 1
        ns = dma.dma_time_ns
        usecs = ns // 1000
        mbps = size * 1000.0 / ns if ns else 0.0
        env.out(f"Bytes:{size} usecs:{usecs} MB/s:{mbps:f}")
        env.results.update(bytes=size, dma_time_ns=ns, mbps=mbps)
        return 0
    finally:
        if handle is not None:
            await ioctl(fd, uapi.PICOEVB_IOC_UNPIN_CUDA, uapi.picoevb_rdma_unpin_cuda(handle))
        if ptr is not None:
            if cuda:
                rt.cudaFree(ptr)
            else:
                env.process.free(ptr)
        await fd.release()


async def set_leds(env: AppEnv, value: int) -> int:
    """``set-leds N``: the LED ioctl (active low)."""
    fd = env.open()
    try:
        await ioctl(fd, uapi.PICOEVB_IOC_LED, value)
    except OSError as e:
        env.err(f"ioctl(LED) failed: errno={e.errno}  [{e.strerror}]")
        return 1
    finally:
        await fd.release()
    return 0


# the marks gpu-mailbox's kernel writes into the card's mailbox, as the notes' kernel did:
# the first data word arrived, the last data word arrived, the processing is done
MARK_FIRST, MARK_LAST, MARK_DONE = 0x6D62_0001, 0x6D62_0002, 0x6D62_0003
MARK_NAMES = {
    MARK_FIRST: "first data word arrived",
    MARK_LAST: "last data word arrived",
    MARK_DONE: "GPU processing done",
}
MAILBOX_KEY = 0x0F0F_0F0F  # what the kernel's processing XORs each word with
MAILBOX_XOR = 0x8000_0000  # the data's words are never 0: the kernel waits for non-zero
MAILBOX_WAIT_NS = 5_000_000  # how long the host waits for each mark


async def gpu_mailbox(env: AppEnv, width: int = 256, height: int = 64) -> int:
    """The notes' GPU -> FPGA mailbox (seed 002; not a picoevb program): the host maps the
    card's user BAR (the driver's mmap), registers it with cudaHostRegister(IoMemory) and
    takes its device pointer; a kernel waits for the card's DMA into a surface, writes a
    mark into the card's mailbox register when the first data word arrives, when the
    last does, and when its processing is done; the card raises a user interrupt per
    mark, and the host reads the marks in order (PICOEVB_IOC_MAILBOX_READ)."""
    if not _check_size(env, width, height):
        return 1
    rt, proc = env.cuda, env.process
    size = width * height * 4
    words = width * height
    fd = env.open()
    ptrs: list[int] = []
    handle = None
    host = None
    try:
        bar = fd.mmap(4096, regs.BAR_USER << uapi.PICOEVB_MMAP_BAR_SHIFT)
        if bar < 0:
            env.err(f"mmap of the user BAR failed: errno={-bar}")
            return 1
        try:
            rt.cudaHostRegister(bar, 4096, cudaHostRegisterIoMemory)
            mailbox = rt.cudaHostGetDevicePointer(bar) + regs.USER_MAILBOX
            for _ in range(2):
                ptrs.append(rt.cudaMalloc(size))
            rt.cudaMemset(ptrs[0], 0, size)
            rt.cudaDeviceSynchronize()
        except CudaError as e:
            env.err(f"CUDA setup failed: {int(e.code)} ({e})")
            return 1
        src, out = ptrs
        handle = await _pin(env, fd, src, size)
        if handle is None:
            return 1
        data = expected_surface(width, height, MAILBOX_XOR).astype("<u4")
        host = proc.malloc(size)
        proc.write(host, data.tobytes())
        try:  # the card RAM gets the data first
            await ioctl(fd, uapi.PICOEVB_IOC_H2C_DMA, _h2c(host, size))
        except OSError as e:
            env.err(f"ioctl(H2C_DMA) failed: errno={e.errno}")
            return 1

        async def watch_and_process(k) -> None:
            last = src + size - 4
            for word, mark in ((src, MARK_FIRST), (last, MARK_LAST)):
                while await k.ld32(word, mmio=False) == 0:
                    await k.nanosleep(200)
                await k.st32(mailbox, mark)
            got = np.frombuffer(await k.load(src, size), dtype="<u4")
            await k.store(out, (got ^ np.uint32(MAILBOX_KEY)).astype("<u4"))
            await k.threadfence_system()
            await k.st32(mailbox, MARK_DONE)

        irqs = env.results.setdefault("mailbox_irqs", [])
        rt.launch(watch_and_process, -(-words // 256), 256)
        c2h = uapi.picoevb_rdma_c2h_dma(src=0, dst=handle, len=size)
        c2h.flags = uapi.PICOEVB_C2H_DMA_FLAG_DST_IS_CUDA
        try:  # the card -> the GPU surface the kernel watches
            await ioctl(fd, uapi.PICOEVB_IOC_C2H_DMA, c2h)
        except OSError as e:
            env.err(f"ioctl(C2H_DMA) failed: errno={e.errno}")
            return 1
        seen = []
        for want in (MARK_FIRST, MARK_LAST, MARK_DONE):
            m = uapi.picoevb_rdma_mailbox(timeout_ns=MAILBOX_WAIT_NS)
            try:
                await ioctl(fd, uapi.PICOEVB_IOC_MAILBOX_READ, m)
            except OSError as e:
                env.err(f"ioctl(MAILBOX_READ) failed: errno={e.errno} after {seen}")
                return 1
            seen.append(m.value)
            irqs.append(fd.drv.mbox_irqs)
            env.out(f"mailbox: {m.value:#010x} {MARK_NAMES.get(m.value, 'unknown mark')}")
            if m.value != want or m.flags:
                env.err(f"mailbox: expected {want:#010x}, flags 0 (got flags {m.flags})")
                return 1
        try:
            await rt.synchronize()
        except CudaError as e:
            env.err(f"cudaDeviceSynchronize() failed: {int(e.code)}")
            return 1
        got = bytearray(size)
        rt.cudaMemcpy(got, out, size, D2H)
        want = (data ^ np.uint32(MAILBOX_KEY)).astype("<u4")
        bad = int(np.count_nonzero(np.frombuffer(got, dtype="<u4") != want))
        if bad:
            env.err(f"processed surface: {bad} of {words} words wrong")
            return 1
        env.out(f"mailbox: 3 marks in order, {words} words processed")
        return 0
    finally:
        if handle is not None:
            await ioctl(fd, uapi.PICOEVB_IOC_UNPIN_CUDA, uapi.picoevb_rdma_unpin_cuda(handle))
        for ptr in ptrs:
            rt.cudaFree(ptr)
        if host is not None:
            proc.free(host)
        await fd.release()


async def _pin(
    env: AppEnv, fd: PicoevbFile, va: int, size: int, with_reason: bool = False
) -> int | None:
    """PIN_CUDA of ``size`` bytes at ``va``: the handle, or None with the C programs'
    message (the perf programs add the reason)."""
    pin = uapi.picoevb_rdma_pin_cuda(va=va, size=size)
    try:
        await ioctl(fd, uapi.PICOEVB_IOC_PIN_CUDA, pin)
    except OSError as e:
        reason = f"  [{e.strerror}]" if with_reason else ""
        env.err(f"ioctl(PIN_CUDA) failed: ret=-1 errno={e.errno}{reason}")
        return None
    return pin.handle


def _h2c(src: int, n: int) -> uapi.picoevb_rdma_h2c_dma:
    return uapi.picoevb_rdma_h2c_dma(src=src, dst=0, len=n)


class UsageError(ValueError):
    """A demo command line that cannot run; its message is one line for the user."""


def _int(text: str, what: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise UsageError(f"{what} must be a number, not {text!r}") from None


def _parse_surface(args: list[str]) -> tuple[int, int]:
    """``[WxH]`` (or ``[N]`` for NxN) in 32-bit words; 1024x1024 by default."""
    if len(args) > 1:
        raise UsageError(f"takes one WxH argument, not {len(args)}")
    if not args:
        return 1024, 1024
    w, sep, h = args[0].lower().partition("x")
    width, height = _int(w, "W"), _int(h, "H") if sep else _int(w, "W")
    msg = _surface_error(width, height)
    if msg:
        raise UsageError(msg)
    return width, height


def _parse_length(args: list[str], card_ram: int | None) -> int | None:
    """``[bytes]``: a transfer of 1 byte up to the card RAM (and 100 MiB)."""
    if len(args) > 1:
        raise UsageError(f"takes one length argument, not {len(args)}")
    if not args:
        return None
    n = _int(args[0], "the length")
    if n < 1:
        raise UsageError(f"length {n}: must be at least 1 byte")
    if card_ram is not None and n > min(card_ram, PERF_MAX_SIZE):
        raise UsageError(
            f"length {n} exceeds the card RAM ({card_ram} bytes): one DMA fills it at most"
        )
    return n


def _parse_leds(args: list[str]) -> int:
    if len(args) != 1:
        raise UsageError("needs the LED value (usage: set-leds <value>, e.g. set-leds 2)")
    value = _int(args[0], "the LED value")
    if not 0 <= value <= 0xFFFFFFFF:
        raise UsageError(f"LED value {value}: must fit in 32 bits")
    return value


def _perf_app(to_card: bool, cuda: bool):
    async def app(env: AppEnv, args: list[str]) -> int:
        return await _perf(env, to_card, cuda, _parse_length(args, None))

    return app


def _split_dmabuf(args: list[str]) -> tuple[list[str], bool]:
    """``--dmabuf`` anywhere on rdma-cuda's command line (a model extension)."""
    rest = [a for a in args if a != "--dmabuf"]
    return rest, len(rest) != len(args)


async def _surface_app_cuda(env: AppEnv, args: list[str]) -> int:
    rest, dmabuf = _split_dmabuf(args)
    return await rdma_cuda(env, *_parse_surface(rest), dmabuf=dmabuf)


async def _surface_app_malloc(env: AppEnv, args: list[str]) -> int:
    return await rdma_malloc(env, *_parse_surface(args))


def _parse_mailbox(args: list[str], card_ram: int | None) -> tuple[int, int]:
    """gpu-mailbox's ``[WxH]`` (256x64 by default): the surface must fit the card RAM."""
    w, h = _parse_surface(args or ["256x64"])
    if card_ram is not None and 4 * w * h > card_ram:
        raise UsageError(f"surface {w}x{h} ({4 * w * h} bytes) exceeds the card RAM ({card_ram})")
    return w, h


def _check_mailbox_args(args: list[str], card_ram: int) -> None:
    _parse_mailbox(args, card_ram)


async def _mailbox_app(env: AppEnv, args: list[str]) -> int:
    return await gpu_mailbox(env, *_parse_mailbox(args, None))


async def _set_leds_app(env: AppEnv, args: list[str]) -> int:
    return await set_leds(env, _parse_leds(args))


def _check_surface_args(args: list[str], _card_ram: int) -> None:
    _parse_surface(args)


def _check_surface_cuda_args(args: list[str], _card_ram: int) -> None:
    _parse_surface(_split_dmabuf(args)[0])


def _check_length_args(args: list[str], card_ram: int) -> None:
    _parse_length(args, card_ram)


def _check_led_args(args: list[str], _card_ram: int) -> None:
    _parse_leds(args)


@dataclass(frozen=True)
class Demo:
    """A demo program, the help of its arguments, and their check (which raises
    :class:`UsageError`) for a card of ``card_ram`` bytes."""

    run: Callable[[AppEnv, list[str]], Awaitable[int]]
    usage: str
    check: Callable[[list[str], int], None]


SURFACE_USAGE = "[WxH] surface in 32-bit words (default 1024x1024)"
DEMOS: dict[str, Demo] = {
    "rdma-cuda": Demo(
        _surface_app_cuda,
        f"{SURFACE_USAGE}; --dmabuf: import the surfaces as dma-bufs (not in the original)",
        _check_surface_cuda_args,
    ),
    "rdma-malloc": Demo(_surface_app_malloc, SURFACE_USAGE, _check_surface_args),
    "rdma-cuda-h2c-perf": Demo(
        _perf_app(True, True), "[bytes] (default min(card RAM, 100 MiB))", _check_length_args
    ),
    "rdma-cuda-c2h-perf": Demo(_perf_app(False, True), "[bytes]", _check_length_args),
    "rdma-malloc-h2c-perf": Demo(_perf_app(True, False), "[bytes]", _check_length_args),
    "rdma-malloc-c2h-perf": Demo(_perf_app(False, False), "[bytes]", _check_length_args),
    "set-leds": Demo(_set_leds_app, "<value> (LEDs are active low: 0 lights all)", _check_led_args),
    "gpu-mailbox": Demo(
        _mailbox_app,
        "[WxH] surface (default 256x64): the notes' GPU -> FPGA mailbox (not a picoevb program)",
        _check_mailbox_args,
    ),
}


def expected_bytes(name: str, args: list[str], card_ram: int) -> int:
    """The bytes the demo's DMA moves in all (both directions), for a progress estimate;
    0 when it moves none."""
    if name in ("rdma-cuda", "rdma-malloc"):
        w, h = _parse_surface(_split_dmabuf(args)[0])
        return 2 * 4 * w * h  # H2C2H: each byte in and out of the card
    if name == "gpu-mailbox":
        w, h = _parse_mailbox(args, card_ram)
        return 2 * 4 * w * h  # into the card RAM, then out to the GPU
    if name.endswith("-perf"):
        n = _parse_length(args, card_ram)
        return min(card_ram, PERF_MAX_SIZE) if n is None else n
    return 0


def check_demo(name: str, args: list[str], card_ram: int) -> None:
    """Raise :class:`UsageError` unless demo ``name`` can run with ``args`` on a card of
    ``card_ram`` bytes (checked before a simulation is built)."""
    if name not in DEMOS:
        raise UsageError(f"unknown demo {name!r}; choose one of {', '.join(DEMOS)}")
    try:
        DEMOS[name].check(args, card_ram)
    except UsageError as e:
        raise UsageError(f"{name}: {e}") from None


async def run_demo(env: AppEnv, name: str, args: list[str]) -> int:
    """Run demo ``name`` with command-line ``args``; its exit status."""
    if name not in DEMOS:
        env.err(f"unknown demo {name!r}; choose one of {', '.join(DEMOS)}")
        return errno.EINVAL
    try:
        return await DEMOS[name].run(env, args)
    except UsageError as e:
        env.err(f"{name}: {e}")
        return 1
