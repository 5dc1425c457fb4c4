/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * /dev/pevb-gpuN, the character device of the GPU on the guest's bus (pevb-gpu.ko): each
 * open file is a CUDA context of the GPU model, destroyed (its memory freed, its pins'
 * free callbacks run) when the file is released.
 */
#ifndef PEVB_GPU_UAPI_H
#define PEVB_GPU_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

struct pevb_gpu_info {
	__u64 vram_size;	/* bytes of VRAM */
	__u64 bar1_base;	/* the GPU's BAR1 in the fabric: bus address, bytes */
	__u64 bar1_size;
	__u32 context;		/* this file's context */
	__u32 callbacks;	/* free callbacks this file's pins have had */
};

struct pevb_gpu_alloc {
	__u64 size;		/* in: bytes */
	__u64 ptr;		/* out: the device pointer (cudaMalloc) */
};

#define PEVB_GPU_HTOD 1
#define PEVB_GPU_DTOH 2
#define PEVB_GPU_DTOD 3

/*
 * A copy on a stream (0: the legacy default stream). From the host, the bytes are taken
 * before the call returns; to the host, the call returns once the stream's earlier work
 * and the copy have run.
 */
struct pevb_gpu_memcpy {
	__u64 dst;		/* a device pointer or a user address, as kind says */
	__u64 src;
	__u64 size;
	__u32 kind;		/* PEVB_GPU_HTOD, PEVB_GPU_DTOH or PEVB_GPU_DTOD */
	__u32 stream;
};

struct pevb_gpu_memset {
	__u64 ptr;
	__u64 size;
	__u32 value;		/* the byte */
	__u32 stream;
};

/*
 * One command of the device's (PEVB_GPU_CMD_*, pevb_gpu_regs.h) for this file's context:
 * those of streams, events, stream memory operations, kernels, pointers and device
 * queries, device-to-device copies, memsets, allocation and synchronisation. A command
 * that takes a buffer (KERNEL_LOOKUP: arg[0], LAUNCH: arg[4]) gets the file's bounce
 * buffer there, filled with in_size bytes from data; out_size bytes go back to data.
 * The ioctl returns 0 once the device answered, with its answer in status (0, a CUDA
 * error, or a negative errno) and result.
 */
struct pevb_gpu_cmd_io {
	__u32 opcode;
	__s32 status;		/* out */
	__u64 arg[5];
	__u64 result;		/* out */
	__u64 data;		/* a user address */
	__u32 in_size;
	__u32 out_size;
};

/* pin device memory through the module's nv-p2p exports, as a peer's driver does */
struct pevb_gpu_pin {
	__u64 va;		/* in: 64 KiB aligned, as nvidia_p2p_get_pages wants */
	__u64 size;
	__u64 first_bus;	/* out: the first page's bus address (BAR1), as DMA-mapped */
	__u32 entries;		/* out: 64 KiB pages */
	__u32 pad;
};

#define PEVB_GPU_IOC_MAGIC 'G'
#define PEVB_GPU_IOC_INFO _IOR(PEVB_GPU_IOC_MAGIC, 0, struct pevb_gpu_info)
#define PEVB_GPU_IOC_ALLOC _IOWR(PEVB_GPU_IOC_MAGIC, 1, struct pevb_gpu_alloc)
#define PEVB_GPU_IOC_FREE _IOW(PEVB_GPU_IOC_MAGIC, 2, __u64)
#define PEVB_GPU_IOC_MEMCPY _IOW(PEVB_GPU_IOC_MAGIC, 3, struct pevb_gpu_memcpy)
#define PEVB_GPU_IOC_MEMSET _IOW(PEVB_GPU_IOC_MAGIC, 4, struct pevb_gpu_memset)
#define PEVB_GPU_IOC_SYNC _IO(PEVB_GPU_IOC_MAGIC, 5)
#define PEVB_GPU_IOC_PIN _IOWR(PEVB_GPU_IOC_MAGIC, 6, struct pevb_gpu_pin)
#define PEVB_GPU_IOC_UNPIN _IOW(PEVB_GPU_IOC_MAGIC, 7, __u64)
#define PEVB_GPU_IOC_CMD _IOWR(PEVB_GPU_IOC_MAGIC, 8, struct pevb_gpu_cmd_io)

#endif /* PEVB_GPU_UAPI_H */
