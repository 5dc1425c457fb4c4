"""Real Linux drivers in the loop: a guest kernel whose PCI bus holds the simulated card.

- :mod:`tb.guest.vhost_user`: the device side of vhost-user (sockets, shared RAM, rings)
- :mod:`tb.guest.virtpci`: the virt-pci messages and the device interface a bus reaches
- :mod:`tb.guest.card`: a function of the simulated fabric behind that interface
- :mod:`tb.guest.uml`: the User-mode Linux process
- :mod:`tb.guest.bridge`: all of it inside the simulation
"""
