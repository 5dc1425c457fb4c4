#!/bin/sh
# In the guest: load the GPU's driver (pevb_gpu.ko), run a program linked against the
# project's CUDA libraries (libcudart.so.13, libcuda.so.1), unload the driver.
# usage: cuda.sh TOOLS_DIR MODULE.ko PROGRAM [ARGS...]
set -e
bin=$1
ko=$2
shift 2
"$bin/pevb-insmod" "$ko"
"$@"
"$bin/pevb-insmod" -r pevb_gpu
echo "cuda: driver unloaded"
