"""Signal I/O for the models that drive the hard IP's streams from Python: reading a
handle as an int and writing one without cocotb's per-call checks (through cocotb's
private ``_schedule_write`` where it has one, with ``handle.value`` as the fallback),
and the stand-ins a hand-stepped packer or unpacker of cocotbext-pcie waits on."""

from __future__ import annotations

from collections.abc import Callable

import cocotb.handle as _handle_module


class Waiting:
    """What a hand-stepped packer or unpacker yields while it waits (nothing to resume
    it but the clock coroutine that steps it)."""

    def __await__(self):
        yield self


WAIT = Waiting()


class Sync:
    """Stands in for the event that hands a sampled beat to the unpacker."""

    def set(self) -> None:
        pass

    def clear(self) -> None:
        pass

    def wait(self) -> Waiting:
        return WAIT


class Beat:
    """One sampled beat as integers (the unpacker calls int() on each field)."""

    __slots__ = ("tdata", "tkeep", "tlast", "tuser")


def reader(handle, *, strict: bool = False) -> Callable[[], int]:
    """A function reading ``handle`` as an int straight from the simulator's bit string,
    without the ``LogicArray`` that ``handle.value`` builds (X or Z: 0, as the exact
    interface reads a control signal; ``strict``: a ValueError, as it reads a beat)."""
    get = getattr(getattr(handle, "_handle", None), "get_signal_val_binstr", None)
    if get is None:  # no simulator handle under it (not cocotb's own handle classes)

        def slow() -> int:
            try:
                return int(handle.value)
            except ValueError:
                if strict:
                    raise
                return 0

        return slow
    if strict:
        return lambda: int(get(), 2)

    def read() -> int:
        try:
            return int(get(), 2)
        except ValueError:
            return 0

    return read


def never() -> int:
    return 0


def writer(handle) -> Callable[[int], None]:
    """A function writing an int to ``handle`` as ``handle.value = v`` does (a deposit,
    scheduled for the ReadWrite phase by cocotb's own ``_schedule_write``), without its
    per-call type and phase checks; a value that does not fit is a ValueError."""
    raw = getattr(handle, "_handle", None)
    schedule = getattr(_handle_module, "_schedule_write", None)
    action = getattr(getattr(_handle_module, "_GPISetAction", None), "DEPOSIT", None)
    if raw is None or schedule is None or action is None:

        def slow(value: int) -> None:
            handle.value = value

        return slow
    width = len(handle)
    if width <= 32:
        put = raw.set_signal_val_int

        def write(value: int) -> None:
            if value >> width or value < 0:
                raise ValueError(f"{value!r} does not fit {width}-bit {handle._name}")
            schedule(handle, put, action, value)

        return write
    put_str = raw.set_signal_val_binstr
    fmt = f"0{width}b"

    def write_wide(value: int) -> None:
        if value >> width or value < 0:
            raise ValueError(f"{value!r} does not fit {width}-bit {handle._name}")
        schedule(handle, put_str, action, format(value, fmt))

    return write_wide


# --- bit strings straight from the simulator ---------------------------------------------
# The backdoor reads of the card RAM read each word's bits as the simulator's string
# through cocotb's private handle (``_handle``: no cocotb handle object and no value
# object per word), on the verified cocotb only (:data:`tb.models.VERIFIED`); on any
# other version they go through the public ``handle[i].value``.


def private_handles(versions: dict[str, str | None] | None = None) -> bool:
    """Whether cocotb's private handle API may be used: the installed versions are the
    verified ones. ``versions`` stands in for the installed ones (tests)."""
    from . import mismatches

    if versions is not None:
        return not mismatches(versions)
    if _PRIVATE[0] is None:
        _PRIVATE[0] = not mismatches()
    return bool(_PRIVATE[0])


_PRIVATE: list[bool | None] = [None]


def bits_reader(handle, private: bool | None = None) -> Callable[[], str]:
    """A function reading ``handle``'s bits as a string, highest first ('0', '1', 'x',
    'z'...): from the simulator's own handle, or where that is not allowed
    (:func:`private_handles`) from ``handle.value``."""
    raw = getattr(handle, "_handle", None)
    get = getattr(raw, "get_signal_val_binstr", None)
    if get is not None and (private_handles() if private is None else private):
        return get
    return lambda: str(handle.value)


def word_bits_readers(mem, private: bool | None = None) -> Callable[[int], Callable[[], str]]:
    """For a memory (an array handle): a function giving the bits reader of word ``i``
    (:func:`bits_reader`), without a cocotb handle object per word where the private
    API is allowed; an ``IndexError`` for a word the memory lacks."""
    raw = getattr(mem, "_handle", None)
    by_index = getattr(raw, "get_handle_by_index", None)
    if by_index is not None and (private_handles() if private is None else private):

        def fast(i: int) -> Callable[[], str]:
            word = by_index(i)
            if not word:
                raise IndexError(f"{handle_path(mem)} has no word {i}")
            return word.get_signal_val_binstr

        return fast

    def public(i: int) -> Callable[[], str]:
        if not 0 <= i < len(mem):
            raise IndexError(f"{handle_path(mem)} has no word {i}")
        return bits_reader(mem[i], private=False)

    return public


def handle_path(handle) -> str:
    """The handle's hierarchical name (cocotb's ``_path``; its name where that is gone)."""
    return str(getattr(handle, "_path", None) or getattr(handle, "_name", None) or id(handle))
