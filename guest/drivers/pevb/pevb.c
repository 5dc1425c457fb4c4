// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pevb: a Linux driver for the picoevb card and the XDMA drop-in of this project (the
 * picoevb's IDs and the XDMA IP's default ones).
 *
 * It finds the engine's register BAR as Xilinx's driver does (the BAR whose IRQ and
 * config block identifiers read right), counts the channels, takes one MSI-X or MSI
 * vector for every channel interrupt (or, with msi=0, the legacy interrupt, shared, as
 * NVIDIA's picoevb-rdma does), and gives each card a character device: pwrite()
 * and pread() move data between a user buffer and the card's memory through H2C and C2H
 * descriptor chains built in DMA-coherent memory (see pevb_uapi.h).
 *
 * It also serves NVIDIA picoevb-rdma's ioctls (picoevb_uapi.h): LEDs, the card's memory
 * size, H2C, C2H and H2C2H runs from and to a user buffer or a CUDA surface, and pinning
 * CUDA surfaces through the nv-p2p interface of the GPU's driver, found at run time
 * (symbol_get): the driver loads without it, and a pin fails with ENODEV then. Every use
 * of a surface is under its file's lock, so a surface's free callback (the GPU freeing
 * the memory) waits until no chain of the card uses it; the handle is gone after it.
 *
 * A transfer pins the user pages, maps them for DMA, writes one descriptor per mapped
 * segment (split at the engine's length limit) with the adjacent count the engine may
 * prefetch, starts channel 0, and sleeps until the channel's interrupt; then it checks
 * the status and the completed descriptor count. Every wait is bounded: a channel that
 * does not finish in time is stopped and drained before its pages are released.
 */
#include <linux/cdev.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "nv-p2p.h"
#include "pevb_regs.h"
#include "pevb_uapi.h"
#include "picoevb_uapi.h"

#define DRV_NAME "pevb"
#define PEVB_MAX_CARDS 8
#define PEVB_MAX_CHANNELS 4
/* descriptors per channel ring: one page of user buffer each, plus a split or two */
#define PEVB_RING 512
/* bytes one chain moves at most (a longer transfer runs several chains) */
#define PEVB_CHUNK (1UL << 20)
/* descriptors in one 2 KiB group: the engine prefetches adjacent ones within it */
#define PEVB_ADJ_GROUP 64
/* CUDA surfaces one open file may pin; their GPU pages */
#define PEVB_MAX_SURFACES 64
#define GPU_PAGE_SHIFT 16
#define GPU_PAGE_SIZE (1ULL << GPU_PAGE_SHIFT)

static unsigned int timeout_ms = 60000;
module_param(timeout_ms, uint, 0644);
MODULE_PARM_DESC(timeout_ms, "how long one descriptor chain may take (ms)");

static bool flush_start = true;
module_param(flush_start, bool, 0644);
MODULE_PARM_DESC(flush_start,
		 "read a register after starting a chain (N: sleep at once, as NVIDIA's picoevb-rdma)");

static bool msi = true;
module_param(msi, bool, 0444);
MODULE_PARM_DESC(msi, "take MSI-X or MSI (N: the legacy interrupt, INTx, shared)");

static unsigned long ram_size;
module_param(ram_size, ulong, 0444);
MODULE_PARM_DESC(ram_size, "bytes of card memory (default: the card's user BAR says)");

struct pevb_desc {
	__le32 control;
	__le32 length;
	__le64 src;
	__le64 dst;
	__le64 next;
} __packed;

struct pevb_chan {
	struct pevb_dev *pd;
	int dir;			/* PEVB_TGT_H2C or PEVB_TGT_C2H */
	int index;
	u32 irq_bit;			/* its bit in the IRQ block channel registers */
	struct mutex lock;		/* one chain at a time */
	struct completion done;
	struct pevb_desc *ring;
	dma_addr_t ring_bus;
};

struct pevb_dev {
	struct pci_dev *pdev;
	void __iomem *regs;		/* the DMA BAR */
	void __iomem *user;		/* the user (AXI4-Lite) BAR, if any */
	int dma_bar;
	int minor;
	u64 ram_size;
	int irq_mode;
	int h2c_count, c2h_count;
	struct pevb_chan h2c, c2h;	/* channel 0 of each direction */
	struct cdev cdev;
	struct device *dev;
	atomic64_t transfers, descriptors;
};

/* the GPU driver's nv-p2p functions, held with symbol_get() */
struct pevb_p2p_ops {
	typeof(&nvidia_p2p_get_pages) get_pages;
	typeof(&nvidia_p2p_put_pages) put_pages;
	typeof(&nvidia_p2p_dma_map_pages) dma_map_pages;
	typeof(&nvidia_p2p_dma_unmap_pages) dma_unmap_pages;
	typeof(&nvidia_p2p_free_page_table) free_page_table;
};

/* a CUDA surface pinned through nv-p2p, by a handle of its file's */
struct pevb_surface {
	struct pevb_file *file;
	struct pevb_p2p_ops p2p;
	int slot;			/* in the file's table; -1 once taken out of it */
	u64 va;				/* as pinned: GPU page aligned */
	u64 offset;			/* of the surface in its first page */
	u64 size;
	struct nvidia_p2p_page_table *table;
};

struct pevb_file {
	struct pevb_dev *pd;
	struct kref ref;		/* the open file's, and one per surface */
	struct mutex lock;		/* the surfaces, and every run that uses one */
	struct pevb_surface *surfaces[PEVB_MAX_SURFACES];
};

/* one side of a picoevb-rdma run: user memory, or a CUDA surface mapped for the card */
struct pevb_side {
	struct pevb_surface *surf;	/* NULL: user memory at addr */
	u64 addr;
	struct nvidia_p2p_dma_mapping *map;
};

static struct class *pevb_class;
static dev_t pevb_devt;
static DEFINE_IDA(pevb_ida);

static u32 reg_read(struct pevb_dev *pd, u32 off)
{
	return ioread32(pd->regs + off);
}

static void reg_write(struct pevb_dev *pd, u32 off, u32 val)
{
	iowrite32(val, pd->regs + off);
}

static u32 chan_reg(struct pevb_chan *ch, u32 off)
{
	return PEVB_REG(ch->dir, ch->index, off);
}

static u32 sg_reg(struct pevb_chan *ch, u32 off)
{
	int tgt = ch->dir == PEVB_TGT_H2C ? PEVB_TGT_H2C_SGDMA : PEVB_TGT_C2H_SGDMA;

	return PEVB_REG(tgt, ch->index, off);
}

static bool id_matches(u32 id, int tgt, int channel)
{
	return ((id & PEVB_ID_SUBSYSTEM_MASK) >> PEVB_ID_SUBSYSTEM_SHIFT) ==
		       PEVB_ID_SUBSYSTEM_VALUE &&
	       ((id & PEVB_ID_TARGET_MASK) >> PEVB_ID_TARGET_SHIFT) == tgt &&
	       ((id & PEVB_ID_CHANNEL_MASK) >> PEVB_ID_CHANNEL_SHIFT) == channel;
}

/* the engine's register BAR: at least 64 KiB, IRQ and config block identifiers right */
static int pevb_find_bars(struct pevb_dev *pd)
{
	struct pci_dev *pdev = pd->pdev;
	int bar, prev = -1;

	for (bar = 0; bar < PCI_STD_NUM_BARS; bar++) {
		void __iomem *base;

		if (!(pci_resource_flags(pdev, bar) & IORESOURCE_MEM) ||
		    !pci_resource_len(pdev, bar))
			continue;
		if (pci_resource_len(pdev, bar) < PEVB_BAR_DMA_SIZE) {
			prev = bar;
			continue;
		}
		base = pci_iomap(pdev, bar, PEVB_BAR_DMA_SIZE);
		if (!base)
			return -ENOMEM;
		if (id_matches(ioread32(base + PEVB_REG(PEVB_TGT_IRQ, 0, 0)), PEVB_TGT_IRQ, 0) &&
		    id_matches(ioread32(base + PEVB_REG(PEVB_TGT_CONFIG, 0, 0)),
			       PEVB_TGT_CONFIG, 0)) {
			pd->regs = base;
			pd->dma_bar = bar;
			break;
		}
		pci_iounmap(pdev, base);
		prev = bar;
	}
	if (!pd->regs) {
		dev_err(&pdev->dev, "no BAR holds the DMA engine's registers\n");
		return -ENODEV;
	}
	/* the AXI4-Lite master's BAR comes before the DMA BAR */
	if (prev >= 0) {
		pd->user = pci_iomap(pdev, prev, 0);
		if (!pd->user)
			return -ENOMEM;
	}
	return 0;
}

static int pevb_count_channels(struct pevb_dev *pd, int dir)
{
	int n;

	for (n = 0; n < PEVB_MAX_CHANNELS; n++)
		if (!id_matches(reg_read(pd, PEVB_REG(dir, n, PEVB_CH_IDENTIFIER)), dir, n))
			break;
	return n;
}

static irqreturn_t pevb_irq(int irq, void *data)
{
	struct pevb_dev *pd = data;
	/* the enabled channel interrupts pending: on a shared legacy line, ours or none */
	u32 req = reg_read(pd, PEVB_REG(PEVB_TGT_IRQ, 0, PEVB_IRQ_CHAN_INT_PEND));
	struct pevb_chan *chans[] = { &pd->h2c, &pd->c2h };
	int i;

	if (!req || req == ~0U)
		return IRQ_NONE;
	for (i = 0; i < ARRAY_SIZE(chans); i++) {
		if (!(req & chans[i]->irq_bit))
			continue;
		/* quiet the channel until its waiter has read the status */
		reg_write(pd, PEVB_REG(PEVB_TGT_IRQ, 0, PEVB_IRQ_CHAN_INT_EN_W1C),
			  chans[i]->irq_bit);
		complete(&chans[i]->done);
	}
	return IRQ_HANDLED;
}

static void pevb_chan_stop(struct pevb_chan *ch)
{
	struct pevb_dev *pd = ch->pd;

	reg_write(pd, chan_reg(ch, PEVB_CH_CONTROL_W1C), PEVB_CTRL_RUN);
	reg_write(pd, PEVB_REG(PEVB_TGT_IRQ, 0, PEVB_IRQ_CHAN_INT_EN_W1C), ch->irq_bit);
	reg_read(pd, chan_reg(ch, PEVB_CH_STATUS));
}

/* wait (at most 100 ms) for a stopped channel to finish what it has in flight */
static bool pevb_chan_drain(struct pevb_chan *ch)
{
	int i;

	for (i = 0; i < 100; i++) {
		u32 status = reg_read(ch->pd, chan_reg(ch, PEVB_CH_STATUS));

		if (status != ~0U && !(status & PEVB_STAT_BUSY))
			return true;
		usleep_range(1000, 2000);
	}
	return false;
}

/* descriptors after ring[i] the engine may fetch with it: contiguous, same 2 KiB group */
static u32 pevb_adjacent(struct pevb_chan *ch, int i, int count)
{
	dma_addr_t addr = ch->ring_bus + i * sizeof(struct pevb_desc);
	u32 room = PEVB_DESC_ADJ_MAX - ((addr & 0xfff) >> 5) % PEVB_ADJ_GROUP;
	u32 left = count - i - 1;

	return min(room, left);
}

/* descriptors for len bytes between bus and card, after the n in the ring; the new n */
static int pevb_add_descs(struct pevb_chan *ch, int n, u64 bus, u64 len, u64 card)
{
	while (len) {
		u32 piece = min_t(u64, len, PEVB_DESC_MAX_LEN);
		struct pevb_desc *d;

		if (n == PEVB_RING)
			return -E2BIG;
		d = &ch->ring[n++];
		d->length = cpu_to_le32(piece);
		if (ch->dir == PEVB_TGT_H2C) {
			d->src = cpu_to_le64(bus);
			d->dst = cpu_to_le64(card);
		} else {
			d->src = cpu_to_le64(card);
			d->dst = cpu_to_le64(bus);
		}
		bus += piece;
		card += piece;
		len -= piece;
	}
	return n;
}

/* each descriptor names the next and how many follow that one contiguously */
static void pevb_link_chain(struct pevb_chan *ch, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		u32 ctrl = (u32)PEVB_DESC_MAGIC << PEVB_DESC_MAGIC_SHIFT;

		if (i == n - 1) {
			ctrl |= PEVB_DESC_STOP | PEVB_DESC_COMPLETED | PEVB_DESC_EOP;
			ch->ring[i].next = 0;
		} else {
			ctrl |= pevb_adjacent(ch, i + 1, n) << PEVB_DESC_NXT_ADJ_SHIFT;
			ch->ring[i].next = cpu_to_le64(ch->ring_bus + (i + 1) * sizeof(*ch->ring));
		}
		ch->ring[i].control = cpu_to_le32(ctrl);
	}
}

static int pevb_build_chain(struct pevb_chan *ch, struct sg_table *sgt, u64 card)
{
	struct scatterlist *sg;
	int i, n = 0;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		n = pevb_add_descs(ch, n, sg_dma_address(sg), sg_dma_len(sg), card);
		if (n < 0)
			return n;
		card += sg_dma_len(sg);
	}
	pevb_link_chain(ch, n);
	return n;
}

/* run the chain of n descriptors in the ring; 0 or a negative errno */
static int pevb_run_chain(struct pevb_chan *ch, int n)
{
	struct pevb_dev *pd = ch->pd;
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	u32 status, count;
	int ret = 0;

	/* the descriptors are in coherent memory: ordered before the MMIO that starts them */
	wmb();
	reinit_completion(&ch->done);
	reg_read(pd, chan_reg(ch, PEVB_CH_STATUS_RC));
	reg_write(pd, sg_reg(ch, PEVB_SG_DESC_LO), lower_32_bits(ch->ring_bus));
	reg_write(pd, sg_reg(ch, PEVB_SG_DESC_HI), upper_32_bits(ch->ring_bus));
	reg_write(pd, sg_reg(ch, PEVB_SG_DESC_ADJ), pevb_adjacent(ch, 0, n));
	reg_write(pd, chan_reg(ch, PEVB_CH_INT_MASK), PEVB_CTRL_IE_ALL);
	reg_write(pd, PEVB_REG(PEVB_TGT_IRQ, 0, PEVB_IRQ_CHAN_INT_EN_W1S), ch->irq_bit);
	reg_write(pd, chan_reg(ch, PEVB_CH_CONTROL), PEVB_CTRL_IE_ALL | PEVB_CTRL_RUN);
	if (flush_start)
		reg_read(pd, chan_reg(ch, PEVB_CH_STATUS));

	for (;;) {
		long left = (long)(deadline - jiffies);
		long woke;

		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		woke = wait_for_completion_interruptible_timeout(&ch->done, left);
		if (woke < 0) {
			ret = -EINTR;
			break;
		}
		status = reg_read(pd, chan_reg(ch, PEVB_CH_STATUS));
		if (status == ~0U) {
			ret = -EIO;
			break;
		}
		if (!(status & PEVB_STAT_BUSY))
			break;
		/* woken (or timed out) while the engine drains: look again shortly */
		reinit_completion(&ch->done);
		reg_write(pd, PEVB_REG(PEVB_TGT_IRQ, 0, PEVB_IRQ_CHAN_INT_EN_W1S), ch->irq_bit);
		if (!woke)
			continue;
		usleep_range(10, 50);
	}
	if (ret) {
		pevb_chan_stop(ch);
		if (!pevb_chan_drain(ch))
			dev_err(&pd->pdev->dev, "%s channel %d still busy after a stop\n",
				ch->dir == PEVB_TGT_H2C ? "H2C" : "C2H", ch->index);
		reg_read(pd, chan_reg(ch, PEVB_CH_STATUS_RC));
		return ret;
	}
	status = reg_read(pd, chan_reg(ch, PEVB_CH_STATUS_RC));
	count = reg_read(pd, chan_reg(ch, PEVB_CH_COMPLETED_COUNT));
	pevb_chan_stop(ch);
	atomic64_inc(&pd->transfers);
	atomic64_add(n, &pd->descriptors);
	if (status & PEVB_STAT_ERROR_MASK) {
		dev_err(&pd->pdev->dev, "%s channel %d: status 0x%08x\n",
			ch->dir == PEVB_TGT_H2C ? "H2C" : "C2H", ch->index, status);
		return -EIO;
	}
	if (count != n) {
		dev_err(&pd->pdev->dev, "%s channel %d: %u of %d descriptors completed\n",
			ch->dir == PEVB_TGT_H2C ? "H2C" : "C2H", ch->index, count, n);
		return -EIO;
	}
	return 0;
}

/* move len bytes (at most PEVB_CHUNK) between user memory and card memory */
static int pevb_chunk(struct pevb_chan *ch, unsigned long uaddr, size_t len, u64 card)
{
	struct device *dev = &ch->pd->pdev->dev;
	enum dma_data_direction dir = ch->dir == PEVB_TGT_H2C ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	unsigned long first = uaddr >> PAGE_SHIFT;
	int npages = ((uaddr + len - 1) >> PAGE_SHIFT) - first + 1;
	struct page **pages;
	struct sg_table sgt;
	int pinned, n, ret;

	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	pinned = pin_user_pages_fast(uaddr & PAGE_MASK, npages,
				     ch->dir == PEVB_TGT_C2H ? FOLL_WRITE : 0, pages);
	if (pinned != npages) {
		ret = pinned < 0 ? pinned : -EFAULT;
		if (pinned > 0)
			unpin_user_pages(pages, pinned);
		goto free_pages;
	}
	ret = sg_alloc_table_from_pages(&sgt, pages, npages, offset_in_page(uaddr), len,
					GFP_KERNEL);
	if (ret)
		goto unpin;
	ret = dma_map_sgtable(dev, &sgt, dir, 0);
	if (ret)
		goto free_table;
	n = pevb_build_chain(ch, &sgt, card);
	ret = n < 0 ? n : pevb_run_chain(ch, n);
	dma_unmap_sgtable(dev, &sgt, dir, 0);
free_table:
	sg_free_table(&sgt);
unpin:
	unpin_user_pages_dirty_lock(pages, npages, ch->dir == PEVB_TGT_C2H && !ret);
free_pages:
	kvfree(pages);
	return ret;
}

static ssize_t pevb_transfer(struct pevb_chan *ch, char __user *buf, size_t count, loff_t *pos)
{
	struct pevb_dev *pd = ch->pd;
	size_t done = 0;
	int ret = 0;

	if (*pos < 0)
		return -EINVAL;
	if (*pos >= pd->ram_size)
		return ch->dir == PEVB_TGT_H2C && count ? -ENOSPC : 0;
	count = min_t(u64, count, pd->ram_size - *pos);
	if (!access_ok(buf, count))
		return -EFAULT;
	if (mutex_lock_interruptible(&ch->lock))
		return -EINTR;
	while (done < count) {
		unsigned long uaddr = (unsigned long)buf + done;
		size_t len = min_t(size_t, count - done,
				   PEVB_CHUNK - (uaddr & (PAGE_SIZE - 1)));

		ret = pevb_chunk(ch, uaddr, len, *pos + done);
		if (ret)
			break;
		done += len;
	}
	mutex_unlock(&ch->lock);
	*pos += done;
	return done ? done : ret;
}

static ssize_t pevb_read(struct file *f, char __user *buf, size_t count, loff_t *pos)
{
	struct pevb_file *pf = f->private_data;

	return pevb_transfer(&pf->pd->c2h, buf, count, pos);
}

static ssize_t pevb_write(struct file *f, const char __user *buf, size_t count, loff_t *pos)
{
	struct pevb_file *pf = f->private_data;

	return pevb_transfer(&pf->pd->h2c, (char __user *)buf, count, pos);
}

/* --- CUDA surfaces through nv-p2p (the GPU's driver, found at run time) ------------- */

static void pevb_p2p_put(struct pevb_p2p_ops *ops)
{
	if (ops->get_pages)
		symbol_put(nvidia_p2p_get_pages);
	if (ops->put_pages)
		symbol_put(nvidia_p2p_put_pages);
	if (ops->dma_map_pages)
		symbol_put(nvidia_p2p_dma_map_pages);
	if (ops->dma_unmap_pages)
		symbol_put(nvidia_p2p_dma_unmap_pages);
	if (ops->free_page_table)
		symbol_put(nvidia_p2p_free_page_table);
	memset(ops, 0, sizeof(*ops));
}

/* hold the GPU driver's nv-p2p functions (a hold per pinned surface); ENODEV without it */
static int pevb_p2p_get(struct pevb_p2p_ops *ops)
{
	ops->get_pages = symbol_get(nvidia_p2p_get_pages);
	ops->put_pages = symbol_get(nvidia_p2p_put_pages);
	ops->dma_map_pages = symbol_get(nvidia_p2p_dma_map_pages);
	ops->dma_unmap_pages = symbol_get(nvidia_p2p_dma_unmap_pages);
	ops->free_page_table = symbol_get(nvidia_p2p_free_page_table);
	if (ops->get_pages && ops->put_pages && ops->dma_map_pages && ops->dma_unmap_pages &&
	    ops->free_page_table)
		return 0;
	pevb_p2p_put(ops);
	return -ENODEV;
}

static void pevb_file_free(struct kref *ref)
{
	kfree(container_of(ref, struct pevb_file, ref));
}

static void pevb_surface_free(struct pevb_surface *surf)
{
	struct pevb_file *pf = surf->file;

	pevb_p2p_put(&surf->p2p);
	kfree(surf);
	kref_put(&pf->ref, pevb_file_free);
}

/* take the surface out of its file's table (the file's lock held): its handle is gone */
static void pevb_surface_unlist(struct pevb_surface *surf)
{
	surf->file->surfaces[surf->slot] = NULL;
	surf->slot = -1;
}

/*
 * The GPU frees a pinned surface's memory. The file's lock waits for any run that uses
 * the surface; then its handle is gone and its page table is freed. If an unpin or the
 * file's release took the surface out first, that one waits in put_pages() for this
 * callback to return and frees the surface after; otherwise the callback frees it.
 */
static void pevb_p2p_free_callback(void *data)
{
	struct pevb_surface *surf = data;
	struct pevb_file *pf = surf->file;
	bool mine;

	mutex_lock(&pf->lock);
	mine = surf->slot >= 0;
	if (mine)
		pevb_surface_unlist(surf);
	mutex_unlock(&pf->lock);
	surf->p2p.free_page_table(surf->table);
	if (mine)
		pevb_surface_free(surf);
}

/* PICOEVB_IOC_PIN_CUDA, the file's lock held */
static int pevb_pin_cuda(struct pevb_file *pf, struct picoevb_rdma_pin_cuda *p)
{
	struct pevb_surface *surf;
	int slot, ret;

	if (!p->size || p->va + p->size < p->va)
		return -EINVAL;
	for (slot = 0; slot < PEVB_MAX_SURFACES && pf->surfaces[slot]; slot++)
		;
	if (slot == PEVB_MAX_SURFACES)
		return -ENOSPC;
	surf = kzalloc(sizeof(*surf), GFP_KERNEL);
	if (!surf)
		return -ENOMEM;
	ret = pevb_p2p_get(&surf->p2p);
	if (ret) {
		kfree(surf);
		return ret;
	}
	kref_get(&pf->ref);
	surf->file = pf;
	surf->slot = slot;
	surf->va = p->va & ~(GPU_PAGE_SIZE - 1);
	surf->offset = p->va & (GPU_PAGE_SIZE - 1);
	surf->size = p->size;
	/* (the callback cannot run before the table is set: it needs the file's lock) */
	ret = surf->p2p.get_pages(0, 0, surf->va, round_up(surf->offset + p->size, GPU_PAGE_SIZE),
				  &surf->table, pevb_p2p_free_callback, surf);
	if (ret) {
		pevb_surface_free(surf);
		return ret;
	}
	pf->surfaces[slot] = surf;
	p->handle = slot + 1;
	return 0;
}

/*
 * Release a surface taken out of its file's table. Called without the file's lock:
 * put_pages() waits for a free callback already under way, which needs that lock.
 */
static void pevb_surface_release(struct pevb_surface *surf)
{
	surf->p2p.put_pages(0, 0, surf->va, surf->table);
	pevb_surface_free(surf);
}

static struct pevb_surface *pevb_surface(struct pevb_file *pf, u64 handle)
{
	if (!handle || handle > PEVB_MAX_SURFACES)
		return NULL;
	return pf->surfaces[handle - 1];
}

/* a run's side: a surface by its handle, or a user buffer; EINVAL or EFAULT */
static int pevb_side_get(struct pevb_file *pf, struct pevb_side *s, u64 value, bool cuda,
			 u64 len)
{
	memset(s, 0, sizeof(*s));
	if (!cuda) {
		if (!access_ok(u64_to_user_ptr(value), len))
			return -EFAULT;
		s->addr = value;
		return 0;
	}
	s->surf = pevb_surface(pf, value);
	if (!s->surf || len > s->surf->size)
		return -EINVAL;
	return 0;
}

static int pevb_side_map(struct pevb_dev *pd, struct pevb_side *s)
{
	if (!s->surf)
		return 0;
	return s->surf->p2p.dma_map_pages(pd->pdev, s->surf->table, &s->map);
}

static void pevb_side_unmap(struct pevb_dev *pd, struct pevb_side *s)
{
	if (s->map)
		s->surf->p2p.dma_unmap_pages(pd->pdev, s->surf->table, s->map);
	s->map = NULL;
}

/* bytes one chain may move from the side's byte off on */
static u64 pevb_side_room(struct pevb_side *s, u64 off)
{
	if (s->surf)
		return PEVB_CHUNK;
	return PEVB_CHUNK - ((s->addr + off) & (PAGE_SIZE - 1));
}

/* one chain: len bytes (at most the side's room) between the side at off and card */
static int pevb_side_move(struct pevb_chan *ch, struct pevb_side *s, u64 off, u64 len, u64 card)
{
	u64 at, done = 0;
	int n = 0;

	if (!s->surf)
		return pevb_chunk(ch, s->addr + off, len, card);
	at = s->surf->offset + off;
	while (done < len) {
		u64 page = (at + done) >> GPU_PAGE_SHIFT;
		u64 in = (at + done) & (GPU_PAGE_SIZE - 1);
		u64 piece = min_t(u64, len - done, GPU_PAGE_SIZE - in);

		if (page >= s->map->entries)
			return -EINVAL;
		n = pevb_add_descs(ch, n, s->map->dma_addresses[page] + in, piece, card + done);
		if (n < 0)
			return n;
		done += piece;
	}
	pevb_link_chain(ch, n);
	return pevb_run_chain(ch, n);
}

/* PICOEVB_IOC_H2C_DMA and C2H_DMA, the file's lock held: a side and card memory */
static int pevb_picoevb_dma(struct pevb_file *pf, struct picoevb_rdma_h2c_dma *d, bool c2h)
{
	struct pevb_dev *pd = pf->pd;
	struct pevb_chan *ch = c2h ? &pd->c2h : &pd->h2c;
	/* (the C2H struct names the same two fields the other way round) */
	u64 card = d->dst, done = 0;
	struct pevb_side side;
	ktime_t start;
	int ret;

	if (d->flags & ~(u64)PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA)
		return -EINVAL;
	if (card > pd->ram_size || d->len > pd->ram_size - card)
		return -EINVAL;
	ret = pevb_side_get(pf, &side, d->src, d->flags & PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA,
			    d->len);
	if (ret)
		return ret;
	start = ktime_get();
	if (mutex_lock_interruptible(&ch->lock))
		return -EINTR;
	ret = pevb_side_map(pd, &side);
	while (!ret && done < d->len) {
		u64 len = min(d->len - done, pevb_side_room(&side, done));

		ret = pevb_side_move(ch, &side, done, len, card + done);
		done += len;
	}
	pevb_side_unmap(pd, &side);
	mutex_unlock(&ch->lock);
	d->dma_time_ns = ktime_to_ns(ktime_sub(ktime_get(), start));
	return ret;
}

/*
 * PICOEVB_IOC_H2C2H_DMA, the file's lock held: src -> card memory -> dst, in pieces of
 * at most the card's memory, each one an H2C chain to the card's offset 0 and a C2H chain
 * back.
 */
static int pevb_picoevb_h2c2h(struct pevb_file *pf, struct picoevb_rdma_h2c2h_dma *d)
{
	struct pevb_dev *pd = pf->pd;
	struct pevb_side src, dst;
	u64 done = 0;
	ktime_t start;
	int ret;

	if (d->flags & ~(u64)(PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA |
			      PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA))
		return -EINVAL;
	ret = pevb_side_get(pf, &src, d->src, d->flags & PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA,
			    d->len);
	if (!ret)
		ret = pevb_side_get(pf, &dst, d->dst,
				    d->flags & PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA, d->len);
	if (ret)
		return ret;
	start = ktime_get();
	if (mutex_lock_interruptible(&pd->h2c.lock))
		return -EINTR;
	if (mutex_lock_interruptible(&pd->c2h.lock)) {
		mutex_unlock(&pd->h2c.lock);
		return -EINTR;
	}
	ret = pevb_side_map(pd, &src);
	if (!ret)
		ret = pevb_side_map(pd, &dst);
	while (!ret && done < d->len) {
		u64 len = min3(d->len - done, pd->ram_size, pevb_side_room(&src, done));

		len = min(len, pevb_side_room(&dst, done));
		ret = pevb_side_move(&pd->h2c, &src, done, len, 0);
		if (!ret)
			ret = pevb_side_move(&pd->c2h, &dst, done, len, 0);
		done += len;
	}
	pevb_side_unmap(pd, &dst);
	pevb_side_unmap(pd, &src);
	mutex_unlock(&pd->c2h.lock);
	mutex_unlock(&pd->h2c.lock);
	d->dma_time_ns = ktime_to_ns(ktime_sub(ktime_get(), start));
	return ret;
}

static long pevb_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct pevb_file *pf = f->private_data;
	struct pevb_dev *pd = pf->pd;
	void __user *uarg = (void __user *)arg;
	struct pevb_info info = {
		.ram_size = pd->ram_size,
		.h2c_channels = pd->h2c_count,
		.c2h_channels = pd->c2h_count,
		.irq_mode = pd->irq_mode,
		.dma_bar = pd->dma_bar,
		.transfers = atomic64_read(&pd->transfers),
		.descriptors = atomic64_read(&pd->descriptors),
	};
	union {
		struct picoevb_rdma_pin_cuda pin;
		struct picoevb_rdma_unpin_cuda unpin;
		struct picoevb_rdma_card_info card;
		struct picoevb_rdma_h2c_dma dma;
		struct picoevb_rdma_h2c2h_dma h2c2h;
	} a;
	struct pevb_surface *surf = NULL;
	int ret;

	switch (cmd) {
	case PEVB_IOC_INFO:
		return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
	case PICOEVB_IOC_LED:
		/* (the LEDs' bits are the argument itself, as picoevb-rdma takes them) */
		if (!pd->user)
			return -ENODEV;
		iowrite32(arg & 0x7, pd->user + PEVB_USER_LED);
		return 0;
	case PICOEVB_IOC_CARD_INFO:
		a.card.fpga_ram_size = pd->ram_size;
		return copy_to_user(uarg, &a.card, sizeof(a.card)) ? -EFAULT : 0;
	case PICOEVB_IOC_PIN_CUDA:
	case PICOEVB_IOC_UNPIN_CUDA:
	case PICOEVB_IOC_H2C_DMA:
	case PICOEVB_IOC_C2H_DMA:
	case PICOEVB_IOC_H2C2H_DMA:
		break;
	default:
		return -ENOTTY;
	}
	if (copy_from_user(&a, uarg, _IOC_SIZE(cmd)))
		return -EFAULT;
	if (mutex_lock_interruptible(&pf->lock))
		return -EINTR;
	switch (cmd) {
	case PICOEVB_IOC_PIN_CUDA:
		ret = pevb_pin_cuda(pf, &a.pin);
		break;
	case PICOEVB_IOC_UNPIN_CUDA:
		surf = pevb_surface(pf, a.unpin.handle);
		ret = surf ? 0 : -EINVAL;
		if (surf)
			pevb_surface_unlist(surf);
		break;
	case PICOEVB_IOC_H2C2H_DMA:
		ret = pevb_picoevb_h2c2h(pf, &a.h2c2h);
		break;
	default:
		ret = pevb_picoevb_dma(pf, &a.dma, cmd == PICOEVB_IOC_C2H_DMA);
	}
	mutex_unlock(&pf->lock);
	if (surf)
		pevb_surface_release(surf);
	if (!ret && (_IOC_DIR(cmd) & _IOC_READ) && copy_to_user(uarg, &a, _IOC_SIZE(cmd)))
		ret = -EFAULT;
	return ret;
}

static int pevb_open(struct inode *inode, struct file *f)
{
	struct pevb_file *pf = kzalloc(sizeof(*pf), GFP_KERNEL);

	if (!pf)
		return -ENOMEM;
	pf->pd = container_of(inode->i_cdev, struct pevb_dev, cdev);
	kref_init(&pf->ref);
	mutex_init(&pf->lock);
	f->private_data = pf;
	return 0;
}

static int pevb_release(struct inode *inode, struct file *f)
{
	struct pevb_file *pf = f->private_data;
	struct pevb_surface *surf;
	int slot;

	for (slot = 0; slot < PEVB_MAX_SURFACES; slot++) {
		mutex_lock(&pf->lock);
		surf = pf->surfaces[slot];
		if (surf)
			pevb_surface_unlist(surf);
		mutex_unlock(&pf->lock);
		if (surf)
			pevb_surface_release(surf);
	}
	/* (a callback that took its surface out itself may still hold the file) */
	kref_put(&pf->ref, pevb_file_free);
	return 0;
}

static loff_t pevb_llseek(struct file *f, loff_t off, int whence)
{
	struct pevb_file *pf = f->private_data;

	return fixed_size_llseek(f, off, whence, pf->pd->ram_size);
}

static const struct file_operations pevb_fops = {
	.owner = THIS_MODULE,
	.open = pevb_open,
	.release = pevb_release,
	.llseek = pevb_llseek,
	.read = pevb_read,
	.write = pevb_write,
	.unlocked_ioctl = pevb_ioctl,
};

static int pevb_chan_init(struct pevb_dev *pd, struct pevb_chan *ch, int dir)
{
	ch->pd = pd;
	ch->dir = dir;
	ch->index = 0;
	/* IRQ block channel bits: the H2C channels first, then the C2H ones */
	ch->irq_bit = BIT(dir == PEVB_TGT_H2C ? 0 : pd->h2c_count);
	mutex_init(&ch->lock);
	init_completion(&ch->done);
	ch->ring = dma_alloc_coherent(&pd->pdev->dev, PEVB_RING * sizeof(*ch->ring),
				      &ch->ring_bus, GFP_KERNEL);
	return ch->ring ? 0 : -ENOMEM;
}

static void pevb_chan_free(struct pevb_dev *pd, struct pevb_chan *ch)
{
	if (ch->ring)
		dma_free_coherent(&pd->pdev->dev, PEVB_RING * sizeof(*ch->ring), ch->ring,
				  ch->ring_bus);
	ch->ring = NULL;
}

static int pevb_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct pevb_dev *pd;
	int ret, nvec;

	pd = devm_kzalloc(&pdev->dev, sizeof(*pd), GFP_KERNEL);
	if (!pd)
		return -ENOMEM;
	pd->pdev = pdev;
	pci_set_drvdata(pdev, pd);

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = pci_request_regions(pdev, DRV_NAME);
	if (ret)
		return ret;
	ret = pevb_find_bars(pd);
	if (ret)
		goto release;
	pd->h2c_count = pevb_count_channels(pd, PEVB_TGT_H2C);
	pd->c2h_count = pevb_count_channels(pd, PEVB_TGT_C2H);
	if (!pd->h2c_count || !pd->c2h_count) {
		dev_err(&pdev->dev, "engine has %d H2C and %d C2H channels: needs one of each\n",
			pd->h2c_count, pd->c2h_count);
		ret = -ENODEV;
		goto unmap;
	}
	/* the picoevb card says its memory's size in its user BAR; a design around the
	 * drop-in has its own user BAR, so the module parameter comes first
	 */
	if (ram_size)
		pd->ram_size = ram_size;
	else if (pd->user)
		pd->ram_size = ioread32(pd->user + PEVB_USER_RAM_SIZE);
	if (!pd->ram_size || pd->ram_size == ~0U) {
		dev_err(&pdev->dev, "card memory size unknown (ram_size= module parameter)\n");
		ret = -ENODEV;
		goto unmap;
	}

	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto unmap;
	pci_set_master(pdev);

	nvec = pci_alloc_irq_vectors(pdev, 1, 1, msi ? PCI_IRQ_MSIX | PCI_IRQ_MSI : PCI_IRQ_LEGACY);
	if (nvec < 0) {
		ret = nvec;
		goto unmap;
	}
	if (pdev->msix_enabled)
		pd->irq_mode = PEVB_IRQ_MSIX;
	else
		pd->irq_mode = pdev->msi_enabled ? PEVB_IRQ_MSI : PEVB_IRQ_INTX;
	/* every channel interrupt on vector 0 */
	reg_write(pd, PEVB_REG(PEVB_TGT_IRQ, 0, PEVB_IRQ_CHAN_VECTOR0), 0);
	reg_write(pd, PEVB_REG(PEVB_TGT_IRQ, 0, PEVB_IRQ_CHAN_VECTOR1), 0);
	reg_write(pd, PEVB_REG(PEVB_TGT_IRQ, 0, PEVB_IRQ_CHAN_INT_EN_W1C), ~0U);
	ret = request_irq(pci_irq_vector(pdev, 0), pevb_irq,
			  pd->irq_mode == PEVB_IRQ_INTX ? IRQF_SHARED : 0, DRV_NAME, pd);
	if (ret)
		goto free_vectors;

	ret = pevb_chan_init(pd, &pd->h2c, PEVB_TGT_H2C);
	if (!ret)
		ret = pevb_chan_init(pd, &pd->c2h, PEVB_TGT_C2H);
	if (ret)
		goto free_rings;

	pd->minor = ida_alloc_max(&pevb_ida, PEVB_MAX_CARDS - 1, GFP_KERNEL);
	if (pd->minor < 0) {
		ret = pd->minor;
		goto free_rings;
	}
	cdev_init(&pd->cdev, &pevb_fops);
	pd->cdev.owner = THIS_MODULE;
	ret = cdev_add(&pd->cdev, MKDEV(MAJOR(pevb_devt), pd->minor), 1);
	if (ret)
		goto free_minor;
	pd->dev = device_create(pevb_class, &pdev->dev, MKDEV(MAJOR(pevb_devt), pd->minor),
				pd, DRV_NAME "%d", pd->minor);
	if (IS_ERR(pd->dev)) {
		ret = PTR_ERR(pd->dev);
		goto del_cdev;
	}
	dev_info(&pdev->dev,
		 "%s%d: DMA BAR %d, %d H2C and %d C2H channels, %llu KiB card memory, %s\n",
		 DRV_NAME, pd->minor, pd->dma_bar, pd->h2c_count, pd->c2h_count,
		 pd->ram_size >> 10, pd->irq_mode == PEVB_IRQ_MSIX ? "MSI-X" :
		 pd->irq_mode == PEVB_IRQ_MSI ? "MSI" : "INTx");
	return 0;

del_cdev:
	cdev_del(&pd->cdev);
free_minor:
	ida_free(&pevb_ida, pd->minor);
free_rings:
	pevb_chan_free(pd, &pd->c2h);
	pevb_chan_free(pd, &pd->h2c);
	free_irq(pci_irq_vector(pdev, 0), pd);
free_vectors:
	pci_free_irq_vectors(pdev);
unmap:
	if (pd->user)
		pci_iounmap(pdev, pd->user);
	if (pd->regs)
		pci_iounmap(pdev, pd->regs);
release:
	pci_release_regions(pdev);
	return ret;
}

static void pevb_remove(struct pci_dev *pdev)
{
	struct pevb_dev *pd = pci_get_drvdata(pdev);

	device_destroy(pevb_class, MKDEV(MAJOR(pevb_devt), pd->minor));
	cdev_del(&pd->cdev);
	ida_free(&pevb_ida, pd->minor);
	reg_write(pd, PEVB_REG(PEVB_TGT_IRQ, 0, PEVB_IRQ_CHAN_INT_EN_W1C), ~0U);
	free_irq(pci_irq_vector(pdev, 0), pd);
	pci_free_irq_vectors(pdev);
	pevb_chan_free(pd, &pd->c2h);
	pevb_chan_free(pd, &pd->h2c);
	if (pd->user)
		pci_iounmap(pdev, pd->user);
	pci_iounmap(pdev, pd->regs);
	pci_release_regions(pdev);
}

/* the XDMA IP's default device IDs: 0xF0GL, family F (7 series 7, UltraScale 8,
 * UltraScale+ 9), generation G, lanes L (x16: f)
 */
#define XDMA(id) { PCI_DEVICE(PCI_VENDOR_ID_XILINX, id) }

static const struct pci_device_id pevb_ids[] = {
	{ PCI_DEVICE(0x10de, 0x0001) },	/* picoevb (NVIDIA's IDs on the card) */
	XDMA(0x9011), XDMA(0x9012), XDMA(0x9014), XDMA(0x9018), XDMA(0x901f),
	XDMA(0x9021), XDMA(0x9022), XDMA(0x9024), XDMA(0x9028), XDMA(0x902f),
	XDMA(0x9031), XDMA(0x9032), XDMA(0x9034), XDMA(0x9038), XDMA(0x903f),
	XDMA(0x9041), XDMA(0x9042), XDMA(0x9044), XDMA(0x9048), XDMA(0x904f),
	XDMA(0x8011), XDMA(0x8012), XDMA(0x8014), XDMA(0x8018), XDMA(0x801f),
	XDMA(0x8021), XDMA(0x8022), XDMA(0x8024), XDMA(0x8028), XDMA(0x802f),
	XDMA(0x8031), XDMA(0x8032), XDMA(0x8034), XDMA(0x8038), XDMA(0x803f),
	XDMA(0x7011), XDMA(0x7012), XDMA(0x7014), XDMA(0x7018), XDMA(0x701f),
	XDMA(0x7021), XDMA(0x7022), XDMA(0x7024), XDMA(0x7028), XDMA(0x702f),
	{ 0 }
};
MODULE_DEVICE_TABLE(pci, pevb_ids);

static struct pci_driver pevb_driver = {
	.name = DRV_NAME,
	.id_table = pevb_ids,
	.probe = pevb_probe,
	.remove = pevb_remove,
};

static int __init pevb_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&pevb_devt, 0, PEVB_MAX_CARDS, DRV_NAME);
	if (ret)
		return ret;
	pevb_class = class_create(THIS_MODULE, DRV_NAME);
	if (IS_ERR(pevb_class)) {
		ret = PTR_ERR(pevb_class);
		goto unregister;
	}
	ret = pci_register_driver(&pevb_driver);
	if (ret)
		goto destroy;
	return 0;

destroy:
	class_destroy(pevb_class);
unregister:
	unregister_chrdev_region(pevb_devt, PEVB_MAX_CARDS);
	return ret;
}

static void __exit pevb_exit(void)
{
	pci_unregister_driver(&pevb_driver);
	class_destroy(pevb_class);
	unregister_chrdev_region(pevb_devt, PEVB_MAX_CARDS);
}

module_init(pevb_init);
module_exit(pevb_exit);

MODULE_DESCRIPTION("picoevb card and XDMA drop-in: H2C and C2H descriptor chains");
MODULE_AUTHOR("The gpudirect-cosim authors");
MODULE_LICENSE("Dual MIT/GPL");
