/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The nv-p2p kernel interface NVIDIA's driver exports (nvidia_p2p_*), written for this
 * project from the interface's documented facts: its structures, versions and
 * functions, as GPUDirect RDMA clients build against them. The module that exports them
 * in the guest is guest/drivers/gpu (pevb-gpu.ko), backed by the simulation's GPU model.
 */
#ifndef PEVB_NV_P2P_H
#define PEVB_NV_P2P_H

#include <linux/types.h>

struct pci_dev;

/* a structure's version: major in the upper 16 bits, minor in the lower */
#define NVIDIA_P2P_MAJOR_VERSION_MASK 0xffff0000
#define NVIDIA_P2P_MINOR_VERSION_MASK 0x0000ffff
#define NVIDIA_P2P_MAJOR_VERSION(v) (((v) & NVIDIA_P2P_MAJOR_VERSION_MASK) >> 16)
#define NVIDIA_P2P_MINOR_VERSION(v) ((v) & NVIDIA_P2P_MINOR_VERSION_MASK)
/* what a client built against version v accepts: the same major, a minor at least v's */
#define NVIDIA_P2P_VERSION_COMPATIBLE(p, v)                                        \
	(NVIDIA_P2P_MAJOR_VERSION((p)->version) == NVIDIA_P2P_MAJOR_VERSION(v) &&  \
	 NVIDIA_P2P_MINOR_VERSION((p)->version) >= NVIDIA_P2P_MINOR_VERSION(v))

#define NVIDIA_P2P_PAGE_TABLE_VERSION 0x00020000
#define NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(p) \
	NVIDIA_P2P_VERSION_COMPATIBLE(p, NVIDIA_P2P_PAGE_TABLE_VERSION)
#define NVIDIA_P2P_DMA_MAPPING_VERSION 0x00020003
#define NVIDIA_P2P_DMA_MAPPING_VERSION_COMPATIBLE(p) \
	NVIDIA_P2P_VERSION_COMPATIBLE(p, NVIDIA_P2P_DMA_MAPPING_VERSION)

/* nvidia_p2p_get_pages_persistent() and nvidia_p2p_put_pages_persistent() flags */
#define NVIDIA_P2P_FLAGS_DEFAULT 0
#define NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING 1

enum nvidia_p2p_page_size_type {
	NVIDIA_P2P_PAGE_SIZE_4KB = 0,
	NVIDIA_P2P_PAGE_SIZE_64KB,
	NVIDIA_P2P_PAGE_SIZE_128KB,
	NVIDIA_P2P_PAGE_SIZE_COUNT
};

/* one GPU page: its bus address in the GPU's BAR1 */
struct nvidia_p2p_page {
	u64 physical_address;
	union nvidia_p2p_request_registers {
		struct {
			u32 wreqmb_h;
			u32 rreqmb_h;
			u32 rreqmb_0;
			u32 reserved[3];
		} fermi;
	} registers;
};

struct nvidia_p2p_page_table {
	u32 version;
	u32 page_size;		/* enum nvidia_p2p_page_size_type */
	struct nvidia_p2p_page **pages;
	u32 entries;
	u8 *gpu_uuid;
	u32 flags;
};

struct nvidia_p2p_dma_mapping {
	u32 version;
	enum nvidia_p2p_page_size_type page_size_type;
	u32 entries;
	u64 *dma_addresses;
	void *private;
	struct pci_dev *pci_dev;
};

int nvidia_p2p_get_pages(u64 p2p_token, u32 va_space, u64 virtual_address, u64 length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data);
int nvidia_p2p_get_pages_persistent(u64 virtual_address, u64 length,
				    struct nvidia_p2p_page_table **page_table, u32 flags);
int nvidia_p2p_put_pages(u64 p2p_token, u32 va_space, u64 virtual_address,
			 struct nvidia_p2p_page_table *page_table);
int nvidia_p2p_put_pages_persistent(u64 virtual_address,
				    struct nvidia_p2p_page_table *page_table, u32 flags);
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table);
int nvidia_p2p_dma_map_pages(struct pci_dev *peer, struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **dma_mapping);
int nvidia_p2p_dma_unmap_pages(struct pci_dev *peer, struct nvidia_p2p_page_table *page_table,
			       struct nvidia_p2p_dma_mapping *dma_mapping);
int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping);

#endif /* PEVB_NV_P2P_H */
