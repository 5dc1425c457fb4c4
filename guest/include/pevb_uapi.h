/* SPDX-License-Identifier: MIT */
/*
 * The pevb driver's user interface (guest/drivers/pevb): one character device per card,
 * /dev/pevbN.
 *
 * pwrite(fd, buf, n, off) moves n bytes from buf to the card's memory at off (an H2C
 * descriptor chain), pread(fd, buf, n, off) from the card's memory at off into buf (C2H).
 * Any length, any alignment of buf and off. A transfer that would pass the end of the
 * card's memory is cut there; one that starts at the end reads 0 bytes or fails to
 * write with ENOSPC. Errors: EFAULT (a bad buffer), EIO (the engine reported an error or
 * completed fewer descriptors than it was given), ETIMEDOUT (no completion in time),
 * EINTR (a signal while waiting; the transfer was stopped).
 */
#ifndef PEVB_UAPI_H
#define PEVB_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* PEVB_IOC_INFO: what the driver found on the card */
struct pevb_info {
	__u64 ram_size;		/* bytes of card memory the channels reach */
	__u32 h2c_channels;	/* channels the engine has, each direction */
	__u32 c2h_channels;
	__u32 irq_mode;		/* PEVB_IRQ_MSIX, PEVB_IRQ_MSI or PEVB_IRQ_INTX */
	__u32 dma_bar;		/* the BAR holding the engine's registers */
	__u64 transfers;	/* descriptor chains run since the driver bound */
	__u64 descriptors;	/* descriptors those chains held */
};

#define PEVB_IRQ_MSI 1
#define PEVB_IRQ_MSIX 2
#define PEVB_IRQ_INTX 3

#define PEVB_IOC_MAGIC 'E'
#define PEVB_IOC_INFO _IOR(PEVB_IOC_MAGIC, 0, struct pevb_info)

#endif /* PEVB_UAPI_H */
