#!/bin/sh
# In the guest: load the GPU's driver (pevb_gpu.ko, nv-p2p's exports), run pevb-gpu-test
# on /dev/pevb-gpu0, unload the driver.
# usage: gpu.sh TOOLS_DIR MODULE.ko
set -e
bin=$1
ko=$2
"$bin/pevb-insmod" "$ko"
dmesg | grep -i pevb_gpu || true
"$bin/pevb-gpu-test"
"$bin/pevb-insmod" -r pevb_gpu
echo "gpu: driver unloaded"
