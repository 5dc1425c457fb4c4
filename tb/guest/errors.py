"""The one error every guest-facing parser raises (the vhost-user messages and rings,
the guest's memory table, virt-pci, the time-travel calendar): what a guest or its front
end sent that the bridge cannot take. Plain Python.

The bridge turns each into :class:`tb.guest.uml.GuestError`, which ends the run with one
line naming the bad message; nothing a guest sends ends it any other way.
"""

from __future__ import annotations


class GuestProtocolError(Exception):
    """A message, ring or table from the guest's side that breaks its protocol."""
