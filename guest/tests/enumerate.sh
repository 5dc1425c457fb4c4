#!/bin/sh
# In the guest: the card is on the virt-pci bus with the IDs the simulation gave it.
# usage: enumerate.sh VENDOR DEVICE CLASS   (as sysfs prints them: 0x10ee ...)
set -e
# the command gets exactly its own arguments (nothing of the kernel's command line)
[ $# -eq 3 ] || { echo "enumerate: $# arguments: $*"; exit 1; }
dev=/sys/bus/pci/devices/0000:00:00.0
[ -d "$dev" ] || { echo "enumerate: no PCI device 0000:00:00.0"; ls /sys/bus/pci/devices; exit 1; }
for f in vendor device class resource; do
	echo "enumerate: $f: $(cat "$dev/$f" | head -3 | tr '\n' ' ')"
done
[ "$(cat "$dev/vendor")" = "$1" ] || { echo "enumerate: vendor $(cat "$dev/vendor"), expected $1"; exit 1; }
[ "$(cat "$dev/device")" = "$2" ] || { echo "enumerate: device $(cat "$dev/device"), expected $2"; exit 1; }
[ "$(cat "$dev/class")" = "$3" ] || { echo "enumerate: class $(cat "$dev/class"), expected $3"; exit 1; }
echo "enumerate: ok"
