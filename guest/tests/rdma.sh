#!/bin/sh
# In the guest: the GPU's driver, then the card's, and programs moving data between them
# (CUDA surfaces pinned through nv-p2p); both drivers unloaded after.
# usage: rdma.sh TOOLS_DIR GPU_MODULE.ko CARD_MODULE.ko [PROGRAM ARGS... [+ PROGRAM ARGS...]]
# The programs run one after the other, a "+" between them; pevb-rdma-test without one.
set -e
bin=$1
"$bin/pevb-insmod" "$2"
"$bin/pevb-insmod" "$3"
shift 3
[ $# -gt 0 ] || set -- "$bin/pevb-rdma-test"
while [ $# -gt 0 ]; do
	cmd=
	while [ $# -gt 0 ] && [ "$1" != + ]; do
		cmd="$cmd $1"
		shift
	done
	[ $# -eq 0 ] || shift
	# shellcheck disable=SC2086 # the program and its arguments, one word each
	$cmd
done
"$bin/pevb-insmod" -r pevb
"$bin/pevb-insmod" -r pevb_gpu
echo "rdma: drivers unloaded"
