// SPDX-License-Identifier: MIT
/*
 * pevb-rdma-cuda: the project's own GPUDirect RDMA demo, the system of NVIDIA's
 * rdma-cuda, built by nvcc against the project's CUDA libraries and run in the guest on
 * the project's drivers (pevb_gpu.ko's nv-p2p, pevb.ko's picoevb-rdma ioctls).
 *
 * It fills a cudaMalloc surface with fill_surface<<<>>>, pins it and a second surface
 * through the card's driver (PICOEVB_IOC_PIN_CUDA), moves the first into the second
 * GPU -> FPGA -> GPU through the card's memory (PICOEVB_IOC_H2C2H_DMA) and checks every
 * word after cudaMemcpy; then GPU -> FPGA -> host (H2C from the surface, C2H into a host
 * buffer), every word again. With -r it also frees a third surface (2 MiB, memory of its
 * own) while the card holds its pin: cudaFree returns only after the card driver's free
 * callback, and the handle moves nothing after it.
 *
 *   pevb-rdma-cuda [-d /dev/pevb0] [-s BYTES] [-r]
 *
 * BYTES: the surfaces' size, a multiple of 4 KiB (1 MiB by default). Exits 0 on success.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fill_surface.cuh"

#include "picoevb_uapi.h"

#define WIDTH 1024u		/* words per row of a surface */
#define XOR_SRC 0x5a5a0000u
#define XOR_DST 0x0000c3c3u

#define CK(x) do {							\
	cudaError_t e_ = (x);						\
	if (e_ != cudaSuccess) {					\
		fprintf(stderr, "pevb-rdma-cuda: %s: %s\n", #x,	\
			cudaGetErrorName(e_));				\
		return 1;						\
	}								\
} while (0)

/* an ioctl of the card's driver: 0 or the errno */
static int card(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

/* the first word of words that is not fill_surface's with xor_val, or -1 */
static long first_wrong(const uint32_t *words, size_t n, uint32_t xor_val)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t x = i % WIDTH, y = i / WIDTH;

		if (words[i] != surface_word(x, y, xor_val))
			return (long)i;
	}
	return -1;
}

static int fill(uint32_t *surface, size_t size, uint32_t xor_val)
{
	unsigned int rows = size / 4 / WIDTH;

	fill_surface<<<dim3(WIDTH / 16, rows / 16), dim3(16, 16)>>>(surface, xor_val);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	return 0;
}

static int pin(int fd, void *surface, size_t size, uint32_t *handle)
{
	struct picoevb_rdma_pin_cuda p = { .va = (uintptr_t)surface, .size = size };
	unsigned int one = 1;
	int err;

	/* as NVIDIA asks of memory a peer reads: its copies synchronous with the peer's */
	if (cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
				  (CUdeviceptr)surface) != CUDA_SUCCESS) {
		fprintf(stderr, "pevb-rdma-cuda: cuPointerSetAttribute failed\n");
		return 1;
	}
	err = card(fd, PICOEVB_IOC_PIN_CUDA, &p);
	if (err) {
		fprintf(stderr, "pevb-rdma-cuda: PIN_CUDA: %s\n", strerror(err));
		return 1;
	}
	*handle = p.handle;
	return 0;
}

static int check(const uint32_t *words, size_t size, uint32_t xor_val, const char *what)
{
	long bad = first_wrong(words, size / 4, xor_val);

	if (bad >= 0) {
		fprintf(stderr, "pevb-rdma-cuda: %s: word %ld is %#x\n", what, bad, words[bad]);
		return 1;
	}
	printf("pevb-rdma-cuda: %s: %zu bytes verified\n", what, size);
	return 0;
}

/* cudaFree under the card's pin: the card driver's callback, then the handle is gone */
static int revoke(int fd, size_t size)
{
	struct picoevb_rdma_h2c_dma h2c = { .dst = 0, .len = 64,
					    .flags = PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA };
	struct picoevb_rdma_unpin_cuda unpin;
	uint32_t *surface, handle;
	int err;

	CK(cudaMalloc((void **)&surface, size));
	if (fill(surface, size, XOR_SRC) || pin(fd, surface, size, &handle))
		return 1;
	h2c.src = handle;
	err = card(fd, PICOEVB_IOC_H2C_DMA, &h2c);
	if (err) {
		fprintf(stderr, "pevb-rdma-cuda: H2C before the free: %s\n", strerror(err));
		return 1;
	}
	CK(cudaFree(surface));
	err = card(fd, PICOEVB_IOC_H2C_DMA, &h2c);
	unpin.handle = handle;
	if (err != EINVAL || card(fd, PICOEVB_IOC_UNPIN_CUDA, &unpin) != EINVAL) {
		fprintf(stderr, "pevb-rdma-cuda: the freed surface's handle still works (%s)\n",
			strerror(err));
		return 1;
	}
	printf("pevb-rdma-cuda: cudaFree under the card's pin: the handle is gone\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = "/dev/pevb0";
	size_t size = 1u << 20;
	struct picoevb_rdma_card_info info;
	struct picoevb_rdma_h2c2h_dma h2c2h = { 0 };
	struct picoevb_rdma_h2c_dma h2c = { 0 };
	struct picoevb_rdma_c2h_dma c2h = { 0 };
	struct picoevb_rdma_unpin_cuda unpin;
	uint32_t *src, *dst, *host, hsrc, hdst;
	size_t done, piece;
	int fd, opt, err, revocation = 0;

	while ((opt = getopt(argc, argv, "d:s:r")) != -1) {
		if (opt == 'd') {
			path = optarg;
		} else if (opt == 's') {
			size = strtoul(optarg, NULL, 0);
		} else if (opt == 'r') {
			revocation = 1;
		} else {
			fprintf(stderr, "usage: %s [-d CARD] [-s BYTES] [-r]\n", argv[0]);
			return 2;
		}
	}
	if (!size || size % (4 * WIDTH * 16)) {
		fprintf(stderr, "pevb-rdma-cuda: -s %zu: a multiple of 64 KiB\n", size);
		return 2;
	}
	fd = open(path, O_RDWR);
	if (fd < 0 || card(fd, PICOEVB_IOC_CARD_INFO, &info)) {
		fprintf(stderr, "pevb-rdma-cuda: %s: %s\n", path, strerror(errno));
		return 1;
	}
	CK(cudaMalloc((void **)&src, size));
	CK(cudaMalloc((void **)&dst, size));
	CK(cudaMallocHost((void **)&host, size, 0));
	if (fill(src, size, XOR_SRC) || fill(dst, size, XOR_DST))
		return 1;
	if (pin(fd, src, size, &hsrc) || pin(fd, dst, size, &hdst))
		return 1;

	/* GPU -> FPGA -> GPU */
	h2c2h.src = hsrc;
	h2c2h.dst = hdst;
	h2c2h.len = size;
	h2c2h.flags = PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA | PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA;
	err = card(fd, PICOEVB_IOC_H2C2H_DMA, &h2c2h);
	if (err) {
		fprintf(stderr, "pevb-rdma-cuda: H2C2H_DMA: %s\n", strerror(err));
		return 1;
	}
	CK(cudaMemcpy(host, dst, size, cudaMemcpyDeviceToHost));
	if (check(host, size, XOR_SRC, "GPU -> FPGA -> GPU"))
		return 1;
	printf("pevb-rdma-cuda: %zu bytes in %llu ns of the guest's time\n", size,
	       (unsigned long long)h2c2h.dma_time_ns);

	/* GPU -> FPGA -> host, in pieces of the card's memory */
	memset(host, 0, size);
	for (done = 0; done < size; done += piece) {
		piece = size - done < info.fpga_ram_size ? size - done : info.fpga_ram_size;
		h2c = (struct picoevb_rdma_h2c_dma){ .src = hsrc, .dst = 0, .len = piece,
			.flags = PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA };
		c2h = (struct picoevb_rdma_c2h_dma){ .dst = (uintptr_t)host + done, .src = 0,
			.len = piece };
		/* (an H2C run starts at the surface's start: this piece from a sub-surface) */
		if (done) {
			struct picoevb_rdma_pin_cuda p = { .va = (uintptr_t)src + done,
							   .size = piece };

			err = card(fd, PICOEVB_IOC_PIN_CUDA, &p);
			h2c.src = p.handle;
			if (!err)
				err = card(fd, PICOEVB_IOC_H2C_DMA, &h2c);
			unpin.handle = p.handle;
			if (!err)
				err = card(fd, PICOEVB_IOC_UNPIN_CUDA, &unpin);
		} else {
			err = card(fd, PICOEVB_IOC_H2C_DMA, &h2c);
		}
		if (!err)
			err = card(fd, PICOEVB_IOC_C2H_DMA, &c2h);
		if (err) {
			fprintf(stderr, "pevb-rdma-cuda: H2C/C2H at %zu: %s\n", done, strerror(err));
			return 1;
		}
	}
	if (check(host, size, XOR_SRC, "GPU -> FPGA -> host"))
		return 1;

	unpin.handle = hsrc;
	err = card(fd, PICOEVB_IOC_UNPIN_CUDA, &unpin);
	unpin.handle = hdst;
	if (err || card(fd, PICOEVB_IOC_UNPIN_CUDA, &unpin)) {
		fprintf(stderr, "pevb-rdma-cuda: UNPIN_CUDA failed\n");
		return 1;
	}
	/*
	 * (2 MiB: memory of its own. A smaller allocation shares a 2 MiB chunk of CUDA's
	 * pool, and freeing it revokes nothing while the chunk holds other allocations.)
	 */
	if (revocation && revoke(fd, 2u << 20))
		return 1;
	CK(cudaFreeHost(host));
	CK(cudaFree(dst));
	CK(cudaFree(src));
	close(fd);
	printf("pevb-rdma-cuda: PASSED\n");
	return 0;
}
