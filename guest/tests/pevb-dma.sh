#!/bin/sh
# In the guest: load the project's driver, move data host -> card -> host and check it
# (pevb-dma-test), unload the driver.
# usage: pevb-dma.sh TOOLS_DIR MODULE.ko [PARAM=VALUE ...] [pevb-dma-test arguments]
set -e
bin=$1
ko=$2
shift 2
params=
while [ $# -gt 0 ]; do
	case $1 in
	-*) break ;;
	*=*) params="$params $1"; shift ;;
	*) break ;;
	esac
done
# shellcheck disable=SC2086 # the module's parameters, one word each
"$bin/pevb-insmod" "$ko" $params
dmesg | grep -i pevb || true
"$bin/pevb-dma-test" "$@"
"$bin/pevb-insmod" -r pevb
echo "pevb-dma: driver unloaded"
