/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * NVIDIA picoevb-rdma's ioctl interface, as the project's pevb driver also serves it on
 * /dev/pevbN: written for this project from the interface's facts (ioctl magic 'P', the
 * numbers and structures its programs pass; shared/reference/picoevb.md). src and dst
 * are a user pointer, or a CUDA surface's handle (PICOEVB_IOC_PIN_CUDA) where the
 * matching flag says so.
 */
#ifndef PEVB_PICOEVB_UAPI_H
#define PEVB_PICOEVB_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

struct picoevb_rdma_pin_cuda {
	__u64 va;		/* in */
	__u64 size;		/* in */
	__u32 handle;		/* out */
};

struct picoevb_rdma_unpin_cuda {
	__u32 handle;
};

/* src -> card memory (from offset 0, in pieces of its size) -> dst */
struct picoevb_rdma_h2c2h_dma {
	__u64 src;		/* a user pointer, or a handle with SRC_IS_CUDA */
	__u64 dst;		/* a user pointer, or a handle with DST_IS_CUDA */
	__u64 len;
	__u64 flags;
	__u64 dma_time_ns;	/* out */
};

#define PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA (1 << 0)
#define PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA (1 << 1)

struct picoevb_rdma_card_info {
	__u64 fpga_ram_size;
};

struct picoevb_rdma_h2c_dma {
	__u64 src;		/* a user pointer, or a handle with SRC_IS_CUDA */
	__u64 dst;		/* an offset in the card's memory */
	__u64 len;
	__u64 flags;
	__u64 dma_time_ns;	/* out */
};

struct picoevb_rdma_c2h_dma {
	__u64 dst;		/* a user pointer, or a handle with DST_IS_CUDA */
	__u64 src;		/* an offset in the card's memory */
	__u64 len;
	__u64 flags;
	__u64 dma_time_ns;	/* out */
};

#define PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA (1 << 0)
#define PICOEVB_C2H_DMA_FLAG_DST_IS_CUDA (1 << 0)

#define PICOEVB_IOC_LED _IOW('P', 0, __u32)
#define PICOEVB_IOC_PIN_CUDA _IOWR('P', 1, struct picoevb_rdma_pin_cuda)
#define PICOEVB_IOC_UNPIN_CUDA _IOW('P', 2, struct picoevb_rdma_unpin_cuda)
#define PICOEVB_IOC_H2C2H_DMA _IOWR('P', 3, struct picoevb_rdma_h2c2h_dma)
#define PICOEVB_IOC_CARD_INFO _IOR('P', 4, struct picoevb_rdma_card_info)
#define PICOEVB_IOC_H2C_DMA _IOWR('P', 5, struct picoevb_rdma_h2c_dma)
#define PICOEVB_IOC_C2H_DMA _IOWR('P', 6, struct picoevb_rdma_c2h_dma)

#endif /* PEVB_PICOEVB_UAPI_H */
