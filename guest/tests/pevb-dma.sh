#!/bin/sh
# In the guest: load the project's driver, move data host -> card -> host and check it
# (pevb-dma-test), unload the driver.
# usage: pevb-dma.sh TOOLS_DIR MODULE.ko [pevb-dma-test arguments]
set -e
bin=$1
ko=$2
shift 2
"$bin/pevb-insmod" "$ko"
dmesg | grep -i pevb || true
"$bin/pevb-dma-test" "$@"
"$bin/pevb-insmod" -r pevb
echo "pevb-dma: driver unloaded"
