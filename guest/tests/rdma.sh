#!/bin/sh
# In the guest: the GPU's driver, then the card's, and pevb-rdma-test moving data between
# them (CUDA surfaces pinned through nv-p2p); both drivers unloaded after.
# usage: rdma.sh TOOLS_DIR GPU_MODULE.ko CARD_MODULE.ko
set -e
bin=$1
"$bin/pevb-insmod" "$2"
"$bin/pevb-insmod" "$3"
"$bin/pevb-rdma-test"
"$bin/pevb-insmod" -r pevb
"$bin/pevb-insmod" -r pevb_gpu
echo "rdma: drivers unloaded"
