// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pevb-rdma-test: the card and the GPU together, through the project's drivers and
 * picoevb-rdma's ioctls. GPU memory comes from /dev/pevb-gpu0 (pevb_gpu.ko), and
 * /dev/pevb0 pins it through nv-p2p (PICOEVB_IOC_PIN_CUDA) and moves it with the card's
 * H2C and C2H channels: GPU -> card -> host and host -> card -> GPU, at odd offsets, and
 * GPU -> card -> GPU in one H2C2H run longer than the card's memory, with the bytes
 * around each piece checked; then the errors, the GPU freeing the memory while the card
 * holds the pin (the driver's free callback: the handle is gone after it), and a pin the
 * card's file still holds when it is closed.
 *
 *   pevb-rdma-test [-d /dev/pevb0] [-g /dev/pevb-gpu0]
 *
 * Prints one line per check and "PASSED: N failure(s)"; exits 1 on any failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "pevb_checks.h"
#include "pevb_gpu_uapi.h"
#include "picoevb_uapi.h"

#define GPU_PAGE (64u << 10)
#define AREA (256u << 10)
/* the surface starts 20000 bytes before the end of the GPU's second page, plus 3 */
#define SKEW (2 * GPU_PAGE - 20000 + 3)
#define LEN_A 40000u
#define LEN_B 30000u
/* an H2C2H run: longer than the picoevb's 64 KiB, so in pieces; into a second area */
#define LEN_C 100000u
#define DST_C 12345u


static int h2c(int p, uint64_t src, uint64_t card, uint64_t len, uint64_t flags)
{
	struct picoevb_rdma_h2c_dma d = { .src = src, .dst = card, .len = len, .flags = flags };

	return call(p, PICOEVB_IOC_H2C_DMA, &d);
}

static int h2c2h(int p, uint64_t src, uint64_t dst, uint64_t len, uint64_t flags)
{
	struct picoevb_rdma_h2c2h_dma d = { .src = src, .dst = dst, .len = len, .flags = flags };

	return call(p, PICOEVB_IOC_H2C2H_DMA, &d);
}

static int c2h(int p, uint64_t dst, uint64_t card, uint64_t len, uint64_t flags)
{
	struct picoevb_rdma_c2h_dma d = { .dst = dst, .src = card, .len = len, .flags = flags };

	return call(p, PICOEVB_IOC_C2H_DMA, &d);
}

int main(int argc, char **argv)
{
	const char *card_path = "/dev/pevb0", *gpu_path = "/dev/pevb-gpu0";
	struct pevb_gpu_alloc alloc = { .size = 2u << 20 }, alloc2 = { .size = AREA };
	struct picoevb_rdma_card_info info;
	struct picoevb_rdma_pin_cuda pin, src, dst;
	struct picoevb_rdma_unpin_cuda unpin;
	unsigned char *a, *b, *got;
	uint64_t ptr, ptr2;
	unsigned int i;
	int p, g, opt;

	while ((opt = getopt(argc, argv, "d:g:")) != -1) {
		if (opt == 'd') {
			card_path = optarg;
		} else if (opt == 'g') {
			gpu_path = optarg;
		} else {
			fprintf(stderr, "usage: %s [-d CARD] [-g GPU]\n", argv[0]);
			return 2;
		}
	}
	p = open(card_path, O_RDWR);
	g = open(gpu_path, O_RDWR);
	if (p < 0 || g < 0) {
		printf("FAIL open: %s\n", strerror(errno));
		return 1;
	}
	check(!call(p, PICOEVB_IOC_CARD_INFO, &info) && info.fpga_ram_size >= LEN_A + 0x2000,
	      "card info");
	check(ioctl(p, PICOEVB_IOC_LED, 5) == 0, "LEDs");
	a = malloc(AREA);
	b = malloc(AREA);
	got = malloc(2 * AREA);
	if (!a || !b || !got)
		return 1;
	for (i = 0; i < AREA; i++) {
		a[i] = (unsigned char)(i * 31 + (i >> 8));
		b[i] = (unsigned char)(i * 17 + 101);
	}
	check(!call(g, PEVB_GPU_IOC_ALLOC, &alloc), "GPU memory");
	ptr = alloc.ptr;
	check(!gpu_copy(g, ptr, (uintptr_t)a, AREA, PEVB_GPU_HTOD), "fill it");

	pin = (struct picoevb_rdma_pin_cuda){ .va = ptr + SKEW, .size = LEN_A };
	check(!call(p, PICOEVB_IOC_PIN_CUDA, &pin) && pin.handle, "pin a surface through nv-p2p");

	/* GPU -> card -> host */
	check(!h2c(p, pin.handle, 100, LEN_A, PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA),
	      "H2C from the surface (across a GPU page)");
	memset(got, 0xee, AREA);
	check(!c2h(p, (uintptr_t)got + 5, 100, LEN_A, 0), "C2H to a host buffer");
	check(!memcmp(got + 5, a + SKEW, LEN_A) && got[4] == 0xee && got[5 + LEN_A] == 0xee,
	      "GPU -> card -> host: every byte, none around");

	/* host -> card -> GPU */
	check(!h2c(p, (uintptr_t)b, 0x2000, LEN_B, 0), "H2C from a host buffer");
	check(!c2h(p, pin.handle, 0x2000, LEN_B, PICOEVB_C2H_DMA_FLAG_DST_IS_CUDA),
	      "C2H into the surface (across a GPU page)");
	check(!gpu_copy(g, (uintptr_t)got, ptr, AREA, PEVB_GPU_DTOH), "read the GPU memory back");
	check(!memcmp(got + SKEW, b, LEN_B), "host -> card -> GPU: every byte");
	check(!memcmp(got, a, SKEW) && !memcmp(got + SKEW + LEN_B, a + SKEW + LEN_B,
						AREA - SKEW - LEN_B), "the GPU's other bytes untouched");

	/* GPU -> card -> GPU: two surfaces, one run in pieces of the card's memory */
	check(!gpu_copy(g, ptr, (uintptr_t)a, AREA, PEVB_GPU_HTOD), "fill the GPU again");
	check(!call(g, PEVB_GPU_IOC_ALLOC, &alloc2), "a second area of GPU memory");
	ptr2 = alloc2.ptr;
	memset(got, 0x5a, AREA);
	check(!gpu_copy(g, ptr2, (uintptr_t)got, AREA, PEVB_GPU_HTOD), "fill it");
	src = (struct picoevb_rdma_pin_cuda){ .va = ptr + SKEW, .size = LEN_C };
	dst = (struct picoevb_rdma_pin_cuda){ .va = ptr2 + DST_C, .size = LEN_C };
	check(!call(p, PICOEVB_IOC_PIN_CUDA, &src) && !call(p, PICOEVB_IOC_PIN_CUDA, &dst) &&
	      src.handle != dst.handle && src.handle != pin.handle, "pin two more surfaces");
	check(!h2c2h(p, src.handle, dst.handle, LEN_C, PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA |
		     PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA), "H2C2H from surface to surface");
	check(!gpu_copy(g, (uintptr_t)got, ptr2, AREA, PEVB_GPU_DTOH), "read the second area");
	check(!memcmp(got + DST_C, a + SKEW, LEN_C), "GPU -> card -> GPU: every byte");
	check(got[DST_C - 1] == 0x5a && got[DST_C + LEN_C] == 0x5a, "none around it");
	/* host -> card -> GPU and GPU -> card -> host in H2C2H runs */
	check(!h2c2h(p, (uintptr_t)b + 1, dst.handle, LEN_C, PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA),
	      "H2C2H from a host buffer into a surface");
	memset(got, 0xee, 2 * AREA);
	check(!h2c2h(p, dst.handle, (uintptr_t)got + 3, LEN_C,
		     PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA), "H2C2H from the surface to a host buffer");
	check(!memcmp(got + 3, b + 1, LEN_C) && got[2] == 0xee && got[3 + LEN_C] == 0xee,
	      "host -> card -> GPU -> card -> host: every byte, none around");
	check(h2c2h(p, src.handle, dst.handle, LEN_C + 1, PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA |
		    PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA) == EINVAL, "H2C2H past a surface: EINVAL");
	check(h2c2h(p, src.handle, dst.handle, 64, 4) == EINVAL, "H2C2H's unknown flag: EINVAL");
	unpin.handle = src.handle;
	check(!call(p, PICOEVB_IOC_UNPIN_CUDA, &unpin), "unpin a surface");
	check(h2c(p, src.handle, 0, 64, PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA) == EINVAL,
	      "its handle is gone: EINVAL");

	/* the errors */
	check(h2c(p, pin.handle, 0, LEN_A + 1, PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA) == EINVAL,
	      "more than the surface: EINVAL");
	check(h2c(p, pin.handle, info.fpga_ram_size - 16, 64, PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA) ==
	      EINVAL, "past the card's memory: EINVAL");
	check(h2c(p, pin.handle + 7, 0, 64, PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA) == EINVAL,
	      "an unknown handle: EINVAL");
	check(h2c(p, pin.handle, 0, 64, 0x80) == EINVAL, "an unknown flag: EINVAL");
	pin.va = ptr + (4u << 20);
	pin.size = 64;
	check(call(p, PICOEVB_IOC_PIN_CUDA, &pin) == EINVAL, "not GPU memory: EINVAL");

	/* the GPU frees the memory under the card's pin: the driver's callback ends it */
	pin = (struct picoevb_rdma_pin_cuda){ .va = ptr, .size = GPU_PAGE };
	check(!call(p, PICOEVB_IOC_PIN_CUDA, &pin), "a second pin");
	check(!call(g, PEVB_GPU_IOC_FREE, &ptr), "the GPU frees the pinned memory");
	check(h2c(p, pin.handle, 0, 64, PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA) == EINVAL,
	      "its surface moves nothing after the callback: EINVAL");
	unpin.handle = pin.handle;
	check(call(p, PICOEVB_IOC_UNPIN_CUDA, &unpin) == EINVAL,
	      "its handle is gone after the callback: unpin is EINVAL");
	/* (dst stays pinned: closing the card's file releases it) */
	close(p);
	close(g);
	printf("PASSED: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
