// SPDX-License-Identifier: MIT
/*
 * pevb-rdma-perf: the project's own version of NVIDIA's rdma-cuda-h2c-perf and
 * rdma-cuda-c2h-perf, built by nvcc against the project's CUDA libraries. It pins two
 * cudaMalloc surfaces through the card's driver and times H2C runs (GPU -> FPGA) and C2H
 * runs (FPGA -> GPU) of each size from 4 KiB to the card's memory, doubling, as the
 * driver measures them (dma_time_ns: the guest's clock, the simulation's under shared
 * time). Each size's last C2H lands in the second surface; cudaMemcpy brings it back and
 * every word must be the first surface's.
 *
 *   pevb-rdma-perf [-d /dev/pevb0] [-n RUNS]
 *
 * Prints one line per direction and size (bytes, runs, MB/s) and "PASSED".
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

#define CK(x) do {							\
	cudaError_t e_ = (x);						\
	if (e_ != cudaSuccess) {					\
		fprintf(stderr, "pevb-rdma-perf: %s: %s\n", #x,	\
			cudaGetErrorName(e_));				\
		return 1;						\
	}								\
} while (0)

static int pin(int fd, void *surface, size_t size, uint32_t *handle)
{
	struct picoevb_rdma_pin_cuda p;

	memset(&p, 0, sizeof(p));
	p.va = (uintptr_t)surface;
	p.size = size;
	if (ioctl(fd, PICOEVB_IOC_PIN_CUDA, &p) < 0) {
		fprintf(stderr, "pevb-rdma-perf: PIN_CUDA: %s\n", strerror(errno));
		return 1;
	}
	*handle = p.handle;
	return 0;
}

/* runs H2C (c2h 0) or C2H runs of len bytes; their guest ns in all, or 0 on an error */
static uint64_t timed(int fd, int c2h, uint32_t handle, uint64_t len, int runs)
{
	struct picoevb_rdma_h2c_dma h;
	struct picoevb_rdma_c2h_dma c;
	uint64_t ns = 0;
	int i;

	for (i = 0; i < runs; i++) {
		int err;

		memset(&h, 0, sizeof(h));
		memset(&c, 0, sizeof(c));
		if (c2h) {
			c.dst = handle;
			c.len = len;
			c.flags = PICOEVB_C2H_DMA_FLAG_DST_IS_CUDA;
			err = ioctl(fd, PICOEVB_IOC_C2H_DMA, &c);
			ns += c.dma_time_ns;
		} else {
			h.src = handle;
			h.len = len;
			h.flags = PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA;
			err = ioctl(fd, PICOEVB_IOC_H2C_DMA, &h);
			ns += h.dma_time_ns;
		}
		if (err < 0) {
			fprintf(stderr, "pevb-rdma-perf: %s of %llu: %s\n", c2h ? "C2H" : "H2C",
				(unsigned long long)len, strerror(errno));
			return 0;
		}
	}
	return ns ? ns : 1;
}

int main(int argc, char **argv)
{
	const char *path = "/dev/pevb0";
	struct picoevb_rdma_card_info info;
	struct picoevb_rdma_unpin_cuda unpin;
	uint32_t *src, *dst, *want, *got, hsrc, hdst;
	uint64_t len, ns, size;
	int fd, opt, runs = 4, dir;

	while ((opt = getopt(argc, argv, "d:n:")) != -1) {
		if (opt == 'd') {
			path = optarg;
		} else if (opt == 'n') {
			runs = atoi(optarg);
		} else {
			fprintf(stderr, "usage: %s [-d CARD] [-n RUNS]\n", argv[0]);
			return 2;
		}
	}
	if (runs < 1) {
		fprintf(stderr, "pevb-rdma-perf: -n %d: at least one run\n", runs);
		return 2;
	}
	fd = open(path, O_RDWR);
	if (fd < 0 || ioctl(fd, PICOEVB_IOC_CARD_INFO, &info) < 0) {
		fprintf(stderr, "pevb-rdma-perf: %s: %s\n", path, strerror(errno));
		return 1;
	}
	/* the surfaces: the card's memory, in whole 64 KiB GPU pages, as 256-word rows */
	size = (info.fpga_ram_size + 0xffff) & ~0xffffull;
	CK(cudaMalloc((void **)&src, size));
	CK(cudaMalloc((void **)&dst, size));
	CK(cudaMallocHost((void **)&want, size, 0));
	CK(cudaMallocHost((void **)&got, size, 0));
	fill_surface<<<dim3(16, size / 1024 / 16), dim3(16, 16)>>>(src, 0x3c3c3c3c);
	CK(cudaGetLastError());
	CK(cudaMemcpy(want, src, size, cudaMemcpyDeviceToHost));
	if (pin(fd, src, size, &hsrc) || pin(fd, dst, size, &hdst))
		return 1;
	for (len = 4096; len <= info.fpga_ram_size; len *= 2) {
		for (dir = 0; dir < 2; dir++) {
			ns = timed(fd, dir, dir ? hdst : hsrc, len, runs);
			if (!ns)
				return 1;
			printf("pevb-rdma-perf: %s %8llu bytes x %d: %8.1f MB/s\n",
			       dir ? "C2H" : "H2C", (unsigned long long)len, runs,
			       (double)len * runs * 1000.0 / (double)ns);
		}
		memset(got, 0, len);
		CK(cudaMemcpy(got, dst, len, cudaMemcpyDeviceToHost));
		if (memcmp(got, want, len)) {
			fprintf(stderr, "pevb-rdma-perf: %llu bytes GPU -> FPGA -> GPU differ\n",
				(unsigned long long)len);
			return 1;
		}
	}
	unpin.handle = hsrc;
	ioctl(fd, PICOEVB_IOC_UNPIN_CUDA, &unpin);
	unpin.handle = hdst;
	ioctl(fd, PICOEVB_IOC_UNPIN_CUDA, &unpin);
	CK(cudaFree(src));
	CK(cudaFree(dst));
	CK(cudaFreeHost(want));
	CK(cudaFreeHost(got));
	close(fd);
	printf("pevb-rdma-perf: PASSED\n");
	return 0;
}
