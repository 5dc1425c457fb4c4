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

struct pevb_gpu_memcpy {
	__u64 dst;		/* a device pointer or a user address, as kind says */
	__u64 src;
	__u64 size;
	__u32 kind;		/* PEVB_GPU_HTOD or PEVB_GPU_DTOH */
	__u32 pad;
};

struct pevb_gpu_memset {
	__u64 ptr;
	__u64 size;
	__u32 value;		/* the byte */
	__u32 pad;
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

#endif /* PEVB_GPU_UAPI_H */
