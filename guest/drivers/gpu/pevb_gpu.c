// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pevb_gpu: a Linux driver for the GPU on the guest's bus (tb/guest/gpu.py, the GPU model
 * of the simulation), exporting NVIDIA's nv-p2p kernel interface (nv-p2p.h) as NVIDIA's
 * driver does, so that a GPUDirect RDMA driver builds and runs against it unchanged.
 *
 * The device takes commands from a ring in DMA-coherent memory (the control block in
 * BAR0 says where) and answers with an MSI; free callbacks come as events in a second
 * ring. Many commands may be in flight: a caller claims the next free entry, fills it,
 * rings the doorbell and sleeps until the device sets that entry's done flag (bounded
 * by timeout_ms, and a signal ends the wait). The device runs each command as it comes,
 * so one that waits for the GPU (a stream's synchronisation) holds up no other caller.
 *
 * nv-p2p: a pin's pages are 64 KiB pages of the GPU's BAR1 in the simulated fabric, and
 * their bus addresses are what a peer's DMA uses (the guest has no IOMMU). When pinned
 * memory is freed, the pin's free callback runs here in process context (a work item),
 * the page table and its DMA mappings are freed after it returns, and only then is the
 * device told, which unmaps BAR1. nvidia_p2p_put_pages() never calls the callback; one
 * that races a callback of the same pin waits for it to return (so the peer may free
 * what its callback uses once put_pages returns), except from the callback itself. And
 * nvidia_p2p_free_page_table() and nvidia_p2p_free_dma_mapping() do nothing, as in
 * NVIDIA's driver.
 *
 * /dev/pevb-gpuN gives user space a CUDA context per open file (pevb_gpu_uapi.h): memory,
 * copies through the file's bounce buffer, the CUDA commands of the guest's runtime
 * library (guest/cuda/), and pins made through the exports above.
 */
#include <linux/cdev.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "nv-p2p.h"
#include "pevb_gpu_regs.h"
#include "pevb_gpu_uapi.h"

#define DRV_NAME "pevb_gpu"
#define RING_ENTRIES 64
#define EVENT_ENTRIES 64
#define BOUNCE_SIZE (1UL << 20)
#define GPU_PAGE_SHIFT 16

enum { SLOT_FREE, SLOT_WAITED, SLOT_ABANDONED };

static unsigned int timeout_ms = 60000;
module_param(timeout_ms, uint, 0644);
MODULE_PARM_DESC(timeout_ms, "how long one command may take (ms)");

struct pevb_gpu_cmd {
	u32 opcode;
	u32 context;
	u64 arg[5];
	s32 status;
	u32 flags;
	u64 result;
};

struct pevb_gpu_event {
	u32 type;
	u32 flags;
	u64 handle;
};

struct gpu_pin_rec {
	struct list_head node;
	u32 handle;
	u64 va;
	bool persistent;
	bool revoking;		/* its free callback runs */
	void (*free_callback)(void *data);
	void *data;
	struct nvidia_p2p_page_table *table;
	struct list_head mappings;
};

struct pevb_gpu_map {
	struct list_head node;
	struct nvidia_p2p_dma_mapping mapping;
};

struct pevb_gpu {
	struct pci_dev *pdev;
	void __iomem *regs;
	struct pevb_gpu_cmd *ring;
	dma_addr_t ring_dma;
	struct pevb_gpu_event *events;
	dma_addr_t events_dma;
	u32 event_tail;
	void *bounce;		/* the pins' page tables come back here */
	dma_addr_t bounce_dma;
	struct mutex bounce_lock;
	spinlock_t ring_lock;	/* the next entry, the slots, the doorbell */
	u32 next;
	u8 slot[RING_ENTRIES];	/* SLOT_FREE, SLOT_WAITED or SLOT_ABANDONED */
	wait_queue_head_t slot_free;
	wait_queue_head_t done;
	wait_queue_head_t revoked;	/* a free callback has returned */
	struct work_struct event_work;
	spinlock_t pins_lock;
	struct list_head pins;
	u8 uuid[16];
	u64 vram_size, bar1_base, bar1_size;
	struct cdev cdev;
	struct device *dev;
};

/* the open file: its context and the pins it made */
struct pevb_gpu_file {
	struct pevb_gpu *gpu;
	u32 context;
	struct mutex lock;	/* the pins and the bounce buffer */
	void *bounce;		/* BOUNCE_SIZE, made at the first copy */
	dma_addr_t bounce_dma;
	struct list_head pins;
	atomic_t callbacks;
};

struct pevb_gpu_file_pin {
	struct list_head node;
	struct pevb_gpu_file *file;
	u64 va;
	struct nvidia_p2p_page_table *table;
	struct nvidia_p2p_dma_mapping *mapping;
	bool revoked;
};

static struct pevb_gpu *the_gpu;	/* nv-p2p's functions name no device */
static dev_t pevb_gpu_devt;
static struct class *pevb_gpu_class;

static u32 reg_read(struct pevb_gpu *g, u32 off)
{
	return ioread32(g->regs + off);
}

static void reg_write(struct pevb_gpu *g, u32 off, u32 val)
{
	iowrite32(val, g->regs + off);
}

static u64 reg_read64(struct pevb_gpu *g, u32 off)
{
	return reg_read(g, off) | (u64)reg_read(g, off + 4) << 32;
}

/*
 * Claim the next entry and post the command in it; false while that entry still holds a
 * command in flight. An entry whose waiter gave up is free again once the device has
 * answered it.
 */
static bool post_cmd(struct pevb_gpu *g, u32 op, u32 ctx, const u64 *args, u32 *slot)
{
	struct pevb_gpu_cmd *c;
	u32 i = g->next % RING_ENTRIES;
	int a;

	spin_lock(&g->ring_lock);
	c = &g->ring[i];
	if (g->slot[i] == SLOT_ABANDONED && (READ_ONCE(c->flags) & PEVB_GPU_FLAG_DONE))
		g->slot[i] = SLOT_FREE;
	if (g->slot[i] != SLOT_FREE) {
		spin_unlock(&g->ring_lock);
		return false;
	}
	g->slot[i] = SLOT_WAITED;
	memset(c, 0, sizeof(*c));
	c->opcode = op;
	c->context = ctx;
	for (a = 0; a < 5 && args; a++)
		c->arg[a] = args[a];
	c->status = -EINPROGRESS;
	dma_wmb();
	g->next++;
	/* the doorbell only moves forward: written under the lock */
	reg_write(g, PEVB_GPU_REG_DOORBELL, g->next);
	spin_unlock(&g->ring_lock);
	*slot = i;
	return true;
}

/* run one command; its status (0, a CUDA error, or -errno) */
static int gpu_cmd(struct pevb_gpu *g, u32 op, u32 ctx, const u64 *args, u64 *result)
{
	unsigned long limit = msecs_to_jiffies(timeout_ms);
	struct pevb_gpu_cmd *c;
	long left;
	u32 i;
	int ret;

	left = wait_event_interruptible_timeout(g->slot_free, post_cmd(g, op, ctx, args, &i),
						limit);
	if (left <= 0)
		return left ? -EINTR : -EBUSY;
	c = &g->ring[i];
	left = wait_event_interruptible_timeout(g->done, READ_ONCE(c->flags) & PEVB_GPU_FLAG_DONE,
						limit);
	if (left <= 0) {
		/* the device still owns the entry: it is reused once answered */
		spin_lock(&g->ring_lock);
		g->slot[i] = SLOT_ABANDONED;
		spin_unlock(&g->ring_lock);
		if (!left)
			dev_err(&g->pdev->dev, "command %u did not complete in %u ms\n", op,
				timeout_ms);
		return left ? -EINTR : -ETIMEDOUT;
	}
	dma_rmb();
	ret = c->status;
	if (result)
		*result = c->result;
	spin_lock(&g->ring_lock);
	g->slot[i] = SLOT_FREE;
	spin_unlock(&g->ring_lock);
	wake_up(&g->slot_free);
	return ret;
}

/* a CUDA error as an errno for callers that only know those */
static int gpu_errno(int status)
{
	return status > 0 ? -EINVAL : status;
}

/* --- nv-p2p ------------------------------------------------------------------------ */

static void free_table(struct nvidia_p2p_page_table *t)
{
	u32 i;

	if (!t)
		return;
	for (i = 0; i < t->entries; i++)
		kfree(t->pages[i]);
	kfree(t->pages);
	kfree(t);
}

static void free_pin(struct gpu_pin_rec *pin)
{
	struct pevb_gpu_map *m, *tmp;

	list_for_each_entry_safe(m, tmp, &pin->mappings, node) {
		kfree(m->mapping.dma_addresses);
		kfree(m);
	}
	free_table(pin->table);
	kfree(pin);
}

/* the pin of a table the driver still tracks (NULL: released, or freed after its callback) */
static struct gpu_pin_rec *find_pin(struct pevb_gpu *g, struct nvidia_p2p_page_table *t)
{
	struct gpu_pin_rec *pin;

	list_for_each_entry(pin, &g->pins, node)
		if (pin->table == t && !pin->revoking)
			return pin;
	return NULL;
}

/* whether the free callback of the pin of table t runs now */
static bool pin_revoking(struct pevb_gpu *g, struct nvidia_p2p_page_table *t)
{
	struct gpu_pin_rec *pin;
	bool found = false;

	spin_lock(&g->pins_lock);
	list_for_each_entry(pin, &g->pins, node)
		found |= pin->table == t && pin->revoking;
	spin_unlock(&g->pins_lock);
	return found;
}

static int gpu_pin(u64 va, u64 length, struct nvidia_p2p_page_table **page_table,
		   void (*cb)(void *), void *data, bool persistent)
{
	struct pevb_gpu *g = the_gpu;
	struct nvidia_p2p_page_table *t;
	struct gpu_pin_rec *pin;
	u64 room, args[5] = { 0 }, handle, *words;
	u32 i, n;
	int ret;

	if (!g)
		return -ENODEV;
	if (!page_table || !length)
		return -EINVAL;
	room = length >> GPU_PAGE_SHIFT;
	if (room + 2 > BOUNCE_SIZE / sizeof(u64))
		return -EINVAL;
	pin = kzalloc(sizeof(*pin), GFP_KERNEL);
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!pin || !t) {
		ret = -ENOMEM;
		goto fail;
	}
	args[0] = va;
	args[1] = length;
	args[2] = g->bounce_dma;
	args[3] = room;
	mutex_lock(&g->bounce_lock);
	ret = gpu_cmd(g, persistent ? PEVB_GPU_CMD_P2P_GET_PAGES_PERSISTENT :
		      PEVB_GPU_CMD_P2P_GET_PAGES, 0, args, &handle);
	if (ret) {
		mutex_unlock(&g->bounce_lock);
		ret = gpu_errno(ret);
		goto fail;
	}
	words = g->bounce;
	n = words[0];
	t->pages = kcalloc(n, sizeof(*t->pages), GFP_KERNEL);
	for (i = 0; t->pages && i < n; i++) {
		t->pages[i] = kzalloc(sizeof(*t->pages[i]), GFP_KERNEL);
		if (!t->pages[i])
			break;
		t->pages[i]->physical_address = words[2 + i];
		t->entries = i + 1;
	}
	if (t->entries != n) {
		u64 put[5] = { handle, va };

		gpu_cmd(g, persistent ? PEVB_GPU_CMD_P2P_PUT_PAGES_PERSISTENT :
			PEVB_GPU_CMD_P2P_PUT_PAGES, 0, put, NULL);
		mutex_unlock(&g->bounce_lock);
		ret = -ENOMEM;
		goto fail;
	}
	t->version = NVIDIA_P2P_PAGE_TABLE_VERSION;
	t->page_size = NVIDIA_P2P_PAGE_SIZE_64KB;
	t->gpu_uuid = g->uuid;
	pin->handle = handle;
	pin->va = va;
	pin->persistent = persistent;
	pin->free_callback = cb;
	pin->data = data;
	pin->table = t;
	INIT_LIST_HEAD(&pin->mappings);
	spin_lock(&g->pins_lock);
	list_add_tail(&pin->node, &g->pins);
	spin_unlock(&g->pins_lock);
	mutex_unlock(&g->bounce_lock);
	*page_table = t;
	return 0;
fail:
	free_table(t);
	kfree(pin);
	return ret;
}

int nvidia_p2p_get_pages(u64 p2p_token, u32 va_space, u64 virtual_address, u64 length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data)
{
	if (!free_callback)
		return -EINVAL;
	if (p2p_token || va_space)
		return -EINVAL;	/* tokens of the old API: none here */
	return gpu_pin(virtual_address, length, page_table, free_callback, data, false);
}
EXPORT_SYMBOL_GPL(nvidia_p2p_get_pages);

int nvidia_p2p_get_pages_persistent(u64 virtual_address, u64 length,
				    struct nvidia_p2p_page_table **page_table, u32 flags)
{
	return gpu_pin(virtual_address, length, page_table, NULL, NULL, true);
}
EXPORT_SYMBOL_GPL(nvidia_p2p_get_pages_persistent);

static int gpu_unpin(struct nvidia_p2p_page_table *t, u64 va, bool persistent)
{
	struct pevb_gpu *g = the_gpu;
	struct gpu_pin_rec *pin;
	u64 args[5] = { 0 };
	int ret;

	if (!g || !t)
		return persistent && t ? -EINVAL : 0;
	spin_lock(&g->pins_lock);
	pin = find_pin(g, t);
	if (pin && pin->persistent == persistent && pin->va == va)
		list_del(&pin->node);
	else
		pin = NULL;
	spin_unlock(&g->pins_lock);
	if (!pin) {
		/*
		 * Not tracked: released already, or freed after its callback, or its callback
		 * runs now: wait for that to return (unless this is the callback calling).
		 */
		if (current_work() != &g->event_work)
			wait_event(g->revoked, !pin_revoking(g, t));
		return persistent ? -EINVAL : 0;
	}
	args[0] = pin->handle;
	args[1] = va;
	ret = gpu_cmd(g, persistent ? PEVB_GPU_CMD_P2P_PUT_PAGES_PERSISTENT :
		      PEVB_GPU_CMD_P2P_PUT_PAGES, 0, args, NULL);
	free_pin(pin);
	return gpu_errno(ret);
}

int nvidia_p2p_put_pages(u64 p2p_token, u32 va_space, u64 virtual_address,
			 struct nvidia_p2p_page_table *page_table)
{
	return gpu_unpin(page_table, virtual_address, false);
}
EXPORT_SYMBOL_GPL(nvidia_p2p_put_pages);

int nvidia_p2p_put_pages_persistent(u64 virtual_address,
				    struct nvidia_p2p_page_table *page_table, u32 flags)
{
	if (flags)
		return -EINVAL;
	return gpu_unpin(page_table, virtual_address, true);
}
EXPORT_SYMBOL_GPL(nvidia_p2p_put_pages_persistent);

int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table)
{
	return 0;	/* the driver frees its tables itself */
}
EXPORT_SYMBOL_GPL(nvidia_p2p_free_page_table);

int nvidia_p2p_dma_map_pages(struct pci_dev *peer, struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **dma_mapping)
{
	struct pevb_gpu *g = the_gpu;
	struct gpu_pin_rec *pin;
	struct pevb_gpu_map *m;
	u64 *addrs;
	u32 i;

	if (!g || !peer || !page_table || !dma_mapping)
		return -EINVAL;
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	addrs = kcalloc(page_table->entries, sizeof(*addrs), GFP_KERNEL);
	if (!m || !addrs) {
		kfree(m);
		kfree(addrs);
		return -ENOMEM;
	}
	/* no IOMMU in the guest: a peer reaches BAR1 at its bus addresses */
	for (i = 0; i < page_table->entries; i++)
		addrs[i] = page_table->pages[i]->physical_address;
	m->mapping.version = NVIDIA_P2P_DMA_MAPPING_VERSION;
	m->mapping.page_size_type = page_table->page_size;
	m->mapping.entries = page_table->entries;
	m->mapping.dma_addresses = addrs;
	m->mapping.pci_dev = peer;
	spin_lock(&g->pins_lock);
	pin = find_pin(g, page_table);
	if (pin) {
		m->mapping.private = pin;
		list_add_tail(&m->node, &pin->mappings);
	}
	spin_unlock(&g->pins_lock);
	if (!pin) {
		kfree(addrs);
		kfree(m);
		return -EINVAL;
	}
	*dma_mapping = &m->mapping;
	return 0;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_dma_map_pages);

int nvidia_p2p_dma_unmap_pages(struct pci_dev *peer, struct nvidia_p2p_page_table *page_table,
			       struct nvidia_p2p_dma_mapping *dma_mapping)
{
	struct pevb_gpu *g = the_gpu;
	struct pevb_gpu_map *m;
	struct gpu_pin_rec *pin;

	if (!g || !peer || !page_table || !dma_mapping)
		return -EINVAL;
	spin_lock(&g->pins_lock);
	pin = find_pin(g, page_table);
	if (!pin || dma_mapping->private != pin) {
		spin_unlock(&g->pins_lock);
		return -EINVAL;
	}
	m = container_of(dma_mapping, struct pevb_gpu_map, mapping);
	list_del(&m->node);
	spin_unlock(&g->pins_lock);
	kfree(m->mapping.dma_addresses);
	kfree(m);
	return 0;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_dma_unmap_pages);

int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping)
{
	return 0;	/* freed with its page table */
}
EXPORT_SYMBOL_GPL(nvidia_p2p_free_dma_mapping);

/* --- events: free callbacks, in process context ------------------------------------ */

static void gpu_event_work(struct work_struct *work)
{
	struct pevb_gpu *g = container_of(work, struct pevb_gpu, event_work);
	struct pevb_gpu_event ev;
	struct gpu_pin_rec *pin, *found;

	/* the device marks each entry it writes; no register read on the way */
	for (;;) {
		struct pevb_gpu_event *slot = &g->events[g->event_tail % EVENT_ENTRIES];

		if (!(READ_ONCE(slot->flags) & PEVB_GPU_EVENT_FLAG_VALID))
			break;
		dma_rmb();
		ev = *slot;
		WRITE_ONCE(slot->flags, 0);
		g->event_tail++;
		/* (the entry is free again once the device sees the tail pass it) */
		wmb();
		reg_write(g, PEVB_GPU_REG_EVENT_TAIL, g->event_tail);
		if (ev.type != PEVB_GPU_EVENT_P2P_FREE) {
			dev_warn(&g->pdev->dev, "event of type %u ignored\n", ev.type);
			continue;
		}
		found = NULL;
		spin_lock(&g->pins_lock);
		list_for_each_entry(pin, &g->pins, node) {
			if (pin->handle == ev.handle && !pin->revoking) {
				pin->revoking = true;
				found = pin;
				break;
			}
		}
		spin_unlock(&g->pins_lock);
		if (found && found->free_callback)
			found->free_callback(found->data);
		if (found) {
			spin_lock(&g->pins_lock);
			list_del(&found->node);
			spin_unlock(&g->pins_lock);
			free_pin(found);
			wake_up_all(&g->revoked);
		}
		/* only now may the GPU unmap BAR1 */
		reg_write(g, PEVB_GPU_REG_CALLBACK_DONE, ev.handle);
	}
}

static irqreturn_t gpu_irq(int irq, void *data)
{
	struct pevb_gpu *g = data;

	wake_up(&g->done);
	wake_up(&g->slot_free);	/* an abandoned entry may be answered now */
	schedule_work(&g->event_work);
	return IRQ_HANDLED;
}

/* --- the character device ------------------------------------------------------------ */

static void file_pin_revoked(void *data)
{
	struct pevb_gpu_file_pin *fp = data;

	/* called with the file's lock free: a cudaFree (another ioctl) or the release */
	WRITE_ONCE(fp->revoked, true);
	atomic_inc(&fp->file->callbacks);
}

static int gpu_open(struct inode *inode, struct file *f)
{
	struct pevb_gpu *g = container_of(inode->i_cdev, struct pevb_gpu, cdev);
	struct pevb_gpu_file *pf;
	u64 ctx;
	int ret;

	pf = kzalloc(sizeof(*pf), GFP_KERNEL);
	if (!pf)
		return -ENOMEM;
	ret = gpu_cmd(g, PEVB_GPU_CMD_CTX_CREATE, 0, NULL, &ctx);
	if (ret) {
		kfree(pf);
		return gpu_errno(ret);
	}
	pf->gpu = g;
	pf->context = ctx;
	mutex_init(&pf->lock);
	INIT_LIST_HEAD(&pf->pins);
	atomic_set(&pf->callbacks, 0);
	f->private_data = pf;
	return 0;
}

static void put_file_pin(struct pevb_gpu_file_pin *fp)
{
	struct pci_dev *pdev = fp->file->gpu->pdev;

	if (!READ_ONCE(fp->revoked)) {
		nvidia_p2p_dma_unmap_pages(pdev, fp->table, fp->mapping);
		nvidia_p2p_put_pages(0, 0, fp->va, fp->table);
	}
	list_del(&fp->node);
	kfree(fp);
}

static int gpu_release(struct inode *inode, struct file *f)
{
	struct pevb_gpu_file *pf = f->private_data;
	struct pevb_gpu_file_pin *fp, *tmp;

	/* the process's exit: its memory goes, and the pins on it call back first */
	gpu_cmd(pf->gpu, PEVB_GPU_CMD_CTX_DESTROY, pf->context, NULL, NULL);
	list_for_each_entry_safe(fp, tmp, &pf->pins, node)
		put_file_pin(fp);
	if (pf->bounce)
		dma_free_coherent(&pf->gpu->pdev->dev, BOUNCE_SIZE, pf->bounce, pf->bounce_dma);
	kfree(pf);
	return 0;
}

/* the file's bounce buffer, made at its first use; called with the file's lock held */
static int file_bounce(struct pevb_gpu_file *pf)
{
	lockdep_assert_held(&pf->lock);
	if (!pf->bounce)
		pf->bounce = dma_alloc_coherent(&pf->gpu->pdev->dev, BOUNCE_SIZE, &pf->bounce_dma,
						GFP_KERNEL);
	return pf->bounce ? 0 : -ENOMEM;
}

static int ioctl_memcpy(struct pevb_gpu_file *pf, struct pevb_gpu_memcpy *m)
{
	struct pevb_gpu *g = pf->gpu;
	u64 done = 0, n, args[5] = { 0 };
	int ret = 0;

	if (m->kind == PEVB_GPU_DTOD) {
		args[0] = m->dst;
		args[1] = m->src;
		args[2] = m->size;
		args[3] = m->stream;
		return gpu_errno(gpu_cmd(g, PEVB_GPU_CMD_MEMCPY_DTOD, pf->context, args, NULL));
	}
	if (m->kind != PEVB_GPU_HTOD && m->kind != PEVB_GPU_DTOH)
		return -EINVAL;
	mutex_lock(&pf->lock);
	ret = file_bounce(pf);
	while (!ret && done < m->size) {
		n = min_t(u64, m->size - done, BOUNCE_SIZE);
		args[2] = n;
		args[3] = m->stream;
		if (m->kind == PEVB_GPU_HTOD) {
			if (copy_from_user(pf->bounce, u64_to_user_ptr(m->src + done), n)) {
				ret = -EFAULT;
				break;
			}
			args[0] = m->dst + done;
			args[1] = pf->bounce_dma;
			ret = gpu_errno(gpu_cmd(g, PEVB_GPU_CMD_MEMCPY_HTOD, pf->context, args,
						NULL));
		} else {
			args[0] = pf->bounce_dma;
			args[1] = m->src + done;
			ret = gpu_errno(gpu_cmd(g, PEVB_GPU_CMD_MEMCPY_DTOH, pf->context, args, NULL));
			if (!ret && copy_to_user(u64_to_user_ptr(m->dst + done), pf->bounce, n))
				ret = -EFAULT;
		}
		done += n;
	}
	mutex_unlock(&pf->lock);
	return ret;
}

/* which argument of a command user space may send is the bounce buffer: -1 none */
static int cmd_buffer_arg(u32 op)
{
	switch (op) {
	case PEVB_GPU_CMD_KERNEL_LOOKUP:
		return 0;
	case PEVB_GPU_CMD_LAUNCH:
		return 4;
	case PEVB_GPU_CMD_NOP:
	case PEVB_GPU_CMD_MEM_ALLOC:
	case PEVB_GPU_CMD_MEM_FREE:
	case PEVB_GPU_CMD_MEMSET:
	case PEVB_GPU_CMD_MEMCPY_DTOD:
	case PEVB_GPU_CMD_SYNCHRONIZE:
	case PEVB_GPU_CMD_STREAM_CREATE ... PEVB_GPU_CMD_WAIT_VALUE:
	case PEVB_GPU_CMD_POINTER_SET ... PEVB_GPU_CMD_MEM_GET_INFO:
		return -1;
	default:
		return -2;	/* not for user space: contexts, guest memory, pins */
	}
}

static int ioctl_cmd(struct pevb_gpu_file *pf, struct pevb_gpu_cmd_io *io)
{
	int buf = cmd_buffer_arg(io->opcode);
	bool data = io->in_size || io->out_size;
	int ret;

	if (buf == -2 || (data && buf < 0) || io->in_size > BOUNCE_SIZE ||
	    io->out_size > BOUNCE_SIZE)
		return -EINVAL;
	if (buf < 0) {
		ret = gpu_cmd(pf->gpu, io->opcode, pf->context, io->arg, &io->result);
		io->status = ret;
		return ret == -EINTR || ret == -ETIMEDOUT || ret == -EBUSY ? ret : 0;
	}
	mutex_lock(&pf->lock);
	ret = file_bounce(pf);
	if (!ret && copy_from_user(pf->bounce, u64_to_user_ptr(io->data), io->in_size))
		ret = -EFAULT;
	if (!ret) {
		io->arg[buf] = pf->bounce_dma;
		ret = gpu_cmd(pf->gpu, io->opcode, pf->context, io->arg, &io->result);
		io->status = ret;
		if (ret == -EINTR || ret == -ETIMEDOUT || ret == -EBUSY)
			goto out;
		ret = 0;
		if (copy_to_user(u64_to_user_ptr(io->data), pf->bounce, io->out_size))
			ret = -EFAULT;
	}
out:
	mutex_unlock(&pf->lock);
	return ret;
}

static int ioctl_pin(struct pevb_gpu_file *pf, struct pevb_gpu_pin *p)
{
	struct pevb_gpu_file_pin *fp;
	int ret;

	fp = kzalloc(sizeof(*fp), GFP_KERNEL);
	if (!fp)
		return -ENOMEM;
	fp->file = pf;
	fp->va = p->va;
	ret = nvidia_p2p_get_pages(0, 0, p->va, p->size, &fp->table, file_pin_revoked, fp);
	if (ret) {
		kfree(fp);
		return ret;
	}
	ret = nvidia_p2p_dma_map_pages(pf->gpu->pdev, fp->table, &fp->mapping);
	if (ret || !NVIDIA_P2P_DMA_MAPPING_VERSION_COMPATIBLE(fp->mapping) ||
	    !NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(fp->table)) {
		nvidia_p2p_put_pages(0, 0, p->va, fp->table);
		kfree(fp);
		return ret ? ret : -EINVAL;
	}
	p->entries = fp->mapping->entries;
	p->first_bus = fp->mapping->entries ? fp->mapping->dma_addresses[0] : 0;
	list_add_tail(&fp->node, &pf->pins);
	return 0;
}

static long gpu_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct pevb_gpu_file *pf = f->private_data;
	struct pevb_gpu *g = pf->gpu;
	void __user *uarg = (void __user *)arg;
	union {
		struct pevb_gpu_info info;
		struct pevb_gpu_alloc alloc;
		struct pevb_gpu_memcpy copy;
		struct pevb_gpu_memset set;
		struct pevb_gpu_pin pin;
		struct pevb_gpu_cmd_io cmd;
		u64 ptr;
	} a;
	struct pevb_gpu_file_pin *fp;
	u64 args[5] = { 0 };
	int ret;

	if (_IOC_SIZE(cmd) > sizeof(a))
		return -EINVAL;
	if ((_IOC_DIR(cmd) & _IOC_WRITE) && copy_from_user(&a, uarg, _IOC_SIZE(cmd)))
		return -EFAULT;
	/* no lock over a command: one may wait for the GPU while others run */
	switch (cmd) {
	case PEVB_GPU_IOC_INFO:
		memset(&a.info, 0, sizeof(a.info));
		a.info.vram_size = g->vram_size;
		a.info.bar1_base = g->bar1_base;
		a.info.bar1_size = g->bar1_size;
		a.info.context = pf->context;
		a.info.callbacks = atomic_read(&pf->callbacks);
		ret = 0;
		break;
	case PEVB_GPU_IOC_ALLOC:
		args[0] = a.alloc.size;
		ret = gpu_errno(gpu_cmd(g, PEVB_GPU_CMD_MEM_ALLOC, pf->context, args,
					       &a.alloc.ptr));
		break;
	case PEVB_GPU_IOC_FREE:
		args[0] = a.ptr;
		ret = gpu_errno(gpu_cmd(g, PEVB_GPU_CMD_MEM_FREE, pf->context, args, NULL));
		break;
	case PEVB_GPU_IOC_MEMCPY:
		ret = ioctl_memcpy(pf, &a.copy);
		break;
	case PEVB_GPU_IOC_MEMSET:
		args[0] = a.set.ptr;
		args[1] = a.set.value;
		args[2] = a.set.size;
		args[3] = a.set.stream;
		ret = gpu_errno(gpu_cmd(g, PEVB_GPU_CMD_MEMSET, pf->context, args, NULL));
		break;
	case PEVB_GPU_IOC_SYNC:
		ret = gpu_errno(gpu_cmd(g, PEVB_GPU_CMD_SYNCHRONIZE, pf->context, NULL,
					       NULL));
		break;
	case PEVB_GPU_IOC_CMD:
		ret = ioctl_cmd(pf, &a.cmd);
		break;
	case PEVB_GPU_IOC_PIN:
		mutex_lock(&pf->lock);
		ret = ioctl_pin(pf, &a.pin);
		mutex_unlock(&pf->lock);
		break;
	case PEVB_GPU_IOC_UNPIN:
		mutex_lock(&pf->lock);
		ret = -EINVAL;
		list_for_each_entry(fp, &pf->pins, node) {
			if (fp->va == a.ptr) {
				ret = READ_ONCE(fp->revoked) ? -ENOENT : 0;
				put_file_pin(fp);
				break;
			}
		}
		mutex_unlock(&pf->lock);
		break;
	default:
		ret = -ENOTTY;
	}
	if (!ret && (_IOC_DIR(cmd) & _IOC_READ) && copy_to_user(uarg, &a, _IOC_SIZE(cmd)))
		ret = -EFAULT;
	return ret;
}

static const struct file_operations pevb_gpu_fops = {
	.owner = THIS_MODULE,
	.open = gpu_open,
	.release = gpu_release,
	.unlocked_ioctl = gpu_ioctl,
};

/* --- the PCI driver ------------------------------------------------------------------ */

static int gpu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct pevb_gpu *g;
	int ret, i;

	if (the_gpu)
		return -EBUSY;	/* nv-p2p names no device: one GPU */
	g = devm_kzalloc(&pdev->dev, sizeof(*g), GFP_KERNEL);
	if (!g)
		return -ENOMEM;
	g->pdev = pdev;
	mutex_init(&g->bounce_lock);
	spin_lock_init(&g->ring_lock);
	init_waitqueue_head(&g->slot_free);
	init_waitqueue_head(&g->done);
	init_waitqueue_head(&g->revoked);
	INIT_WORK(&g->event_work, gpu_event_work);
	spin_lock_init(&g->pins_lock);
	INIT_LIST_HEAD(&g->pins);
	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	g->regs = pcim_iomap(pdev, 0, PEVB_GPU_BAR0_SIZE);
	if (!g->regs)
		return -ENOMEM;
	if (reg_read(g, PEVB_GPU_REG_MAGIC) != PEVB_GPU_MAGIC ||
	    reg_read(g, PEVB_GPU_REG_VERSION) != PEVB_GPU_VERSION) {
		dev_err(&pdev->dev, "not the simulation's GPU (magic %#x)\n",
			reg_read(g, PEVB_GPU_REG_MAGIC));
		return -ENODEV;
	}
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	pci_set_master(pdev);
	g->ring = dmam_alloc_coherent(&pdev->dev, RING_ENTRIES * sizeof(*g->ring), &g->ring_dma,
				      GFP_KERNEL);
	g->events = dmam_alloc_coherent(&pdev->dev, EVENT_ENTRIES * sizeof(*g->events),
					&g->events_dma, GFP_KERNEL);
	g->bounce = dmam_alloc_coherent(&pdev->dev, BOUNCE_SIZE, &g->bounce_dma, GFP_KERNEL);
	if (!g->ring || !g->events || !g->bounce)
		return -ENOMEM;
	g->vram_size = reg_read64(g, PEVB_GPU_REG_VRAM_SIZE);
	g->bar1_base = reg_read64(g, PEVB_GPU_REG_BAR1_BASE);
	g->bar1_size = reg_read64(g, PEVB_GPU_REG_BAR1_SIZE);
	for (i = 0; i < sizeof(g->uuid); i++)
		g->uuid[i] = (g->bar1_base >> (8 * (i % 8))) ^ i;
	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI);
	if (ret < 0)
		return ret;
	ret = request_irq(pci_irq_vector(pdev, 0), gpu_irq, 0, DRV_NAME, g);
	if (ret)
		goto free_vectors;
	reg_write(g, PEVB_GPU_REG_RING_BASE, lower_32_bits(g->ring_dma));
	reg_write(g, PEVB_GPU_REG_RING_BASE + 4, upper_32_bits(g->ring_dma));
	reg_write(g, PEVB_GPU_REG_RING_ENTRIES, RING_ENTRIES);
	reg_write(g, PEVB_GPU_REG_EVENT_BASE, lower_32_bits(g->events_dma));
	reg_write(g, PEVB_GPU_REG_EVENT_BASE + 4, upper_32_bits(g->events_dma));
	reg_write(g, PEVB_GPU_REG_EVENT_ENTRIES, EVENT_ENTRIES);
	reg_write(g, PEVB_GPU_REG_CONTROL, PEVB_GPU_CONTROL_RUN | PEVB_GPU_CONTROL_IRQ);

	cdev_init(&g->cdev, &pevb_gpu_fops);
	g->cdev.owner = THIS_MODULE;
	ret = cdev_add(&g->cdev, pevb_gpu_devt, 1);
	if (ret)
		goto free_irq;
	g->dev = device_create(pevb_gpu_class, &pdev->dev, pevb_gpu_devt, g, "pevb-gpu0");
	if (IS_ERR(g->dev)) {
		ret = PTR_ERR(g->dev);
		goto del_cdev;
	}
	pci_set_drvdata(pdev, g);
	the_gpu = g;
	dev_info(&pdev->dev, "pevb-gpu0: %llu MiB VRAM, BAR1 %#llx (%llu MiB) in the fabric\n",
		 g->vram_size >> 20, g->bar1_base, g->bar1_size >> 20);
	return 0;

del_cdev:
	cdev_del(&g->cdev);
free_irq:
	reg_write(g, PEVB_GPU_REG_CONTROL, 0);
	free_irq(pci_irq_vector(pdev, 0), g);
free_vectors:
	pci_free_irq_vectors(pdev);
	return ret;
}

static void gpu_remove(struct pci_dev *pdev)
{
	struct pevb_gpu *g = pci_get_drvdata(pdev);
	struct gpu_pin_rec *pin, *tmp;

	device_destroy(pevb_gpu_class, pevb_gpu_devt);
	cdev_del(&g->cdev);
	the_gpu = NULL;
	reg_write(g, PEVB_GPU_REG_CONTROL, 0);
	free_irq(pci_irq_vector(pdev, 0), g);
	cancel_work_sync(&g->event_work);
	pci_free_irq_vectors(pdev);
	/* pins left by clients that never put them (the module cannot unload under them) */
	list_for_each_entry_safe(pin, tmp, &g->pins, node) {
		list_del(&pin->node);
		free_pin(pin);
	}
}

static const struct pci_device_id gpu_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_NVIDIA, 0x2330) },
	{ 0 }
};
MODULE_DEVICE_TABLE(pci, gpu_ids);

static struct pci_driver gpu_driver = {
	.name = DRV_NAME,
	.id_table = gpu_ids,
	.probe = gpu_probe,
	.remove = gpu_remove,
};

static int __init gpu_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&pevb_gpu_devt, 0, 1, DRV_NAME);
	if (ret)
		return ret;
	pevb_gpu_class = class_create(THIS_MODULE, DRV_NAME);
	if (IS_ERR(pevb_gpu_class)) {
		ret = PTR_ERR(pevb_gpu_class);
		goto unregister;
	}
	ret = pci_register_driver(&gpu_driver);
	if (ret)
		goto destroy;
	return 0;
destroy:
	class_destroy(pevb_gpu_class);
unregister:
	unregister_chrdev_region(pevb_gpu_devt, 1);
	return ret;
}

static void __exit gpu_exit(void)
{
	pci_unregister_driver(&gpu_driver);
	class_destroy(pevb_gpu_class);
	unregister_chrdev_region(pevb_gpu_devt, 1);
}

module_init(gpu_init);
module_exit(gpu_exit);
MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("The simulation's GPU in the guest, with NVIDIA's nv-p2p interface");
