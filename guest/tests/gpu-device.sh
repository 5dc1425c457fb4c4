#!/bin/sh
# In the guest: the GPU is the second device of the virt-pci bus (00:01.0) with the
# modelled GPU's IDs and class, a 64 KiB BAR0 (its control block) placed in the guest's
# window and no other BAR; the card stays at 00:00.0.
# usage: gpu-device.sh VENDOR DEVICE CLASS CARD_VENDOR [COMMAND...]   (the IDs as sysfs
# prints them; COMMAND runs after the checks)
set -e
[ $# -ge 4 ] || { echo "gpu-device: $# arguments: $*"; exit 1; }
want_vendor=$1
want_device=$2
want_class=$3
card_vendor=$4
shift 4
gpu=/sys/bus/pci/devices/0000:00:01.0
card=/sys/bus/pci/devices/0000:00:00.0
[ -d "$gpu" ] || { echo "gpu-device: no PCI device 0000:00:01.0"; ls /sys/bus/pci/devices; exit 1; }
for f in vendor device class; do
	echo "gpu-device: $f: $(cat "$gpu/$f")"
done
[ "$(cat "$gpu/vendor")" = "$want_vendor" ] || { echo "gpu-device: vendor, expected $want_vendor"; exit 1; }
[ "$(cat "$gpu/device")" = "$want_device" ] || { echo "gpu-device: device, expected $want_device"; exit 1; }
[ "$(cat "$gpu/class")" = "$want_class" ] || { echo "gpu-device: class, expected $want_class"; exit 1; }
[ "$(cat "$card/vendor")" = "$card_vendor" ] || { echo "gpu-device: the card moved"; exit 1; }
# resource: one line per BAR, "start end flags"
read -r start end _ <"$gpu/resource"
size=$((end - start + 1))
echo "gpu-device: BAR0 $start-$end ($size bytes)"
[ "$size" -eq 65536 ] || { echo "gpu-device: BAR0 of $size bytes, expected 65536"; exit 1; }
[ $((start)) -ge $((0xf0000000)) ] || { echo "gpu-device: BAR0 outside the window"; exit 1; }
sed -n 2p "$gpu/resource" | {
	read -r start end _
	[ $((end)) -eq 0 ] || { echo "gpu-device: a BAR1 in the guest: $start-$end"; exit 1; }
}
echo "gpu-device: ok"
[ $# -eq 0 ] || exec "$@"
