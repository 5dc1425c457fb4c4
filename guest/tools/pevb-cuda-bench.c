// SPDX-License-Identifier: MIT
/*
 * pevb-cuda-bench: what a C program's cudaMemcpy costs in the guest, on the project's
 * CUDA libraries over pevb_gpu.ko. It times RUNS copies of BYTES each way between
 * cudaMallocHost memory and a cudaMalloc buffer on the guest's CLOCK_MONOTONIC (wall
 * time when the guest runs free, the simulation's under shared time), after one copy
 * each way that is not timed, and checks the last copy back.
 *
 *   pevb-cuda-bench [RUNS [BYTES]]     (8 runs of 1 MiB by default)
 *
 * Prints "pevb-cuda-bench: <HtoD|DtoH> BYTES B: N ns per copy" for each direction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pevb_cuda.h"

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int fail(const char *what, cudaError_t e)
{
	fprintf(stderr, "pevb-cuda-bench: %s: %s\n", what, cudaGetErrorName(e));
	return 1;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 8, i, way;
	size_t bytes = argc > 2 ? strtoul(argv[2], NULL, 0) : 1u << 20, j;
	unsigned char *host, *back;
	cudaError_t e;
	void *dev;

	if (runs < 1 || !bytes) {
		fprintf(stderr, "usage: %s [RUNS [BYTES]]\n", argv[0]);
		return 2;
	}
	e = cudaMalloc(&dev, bytes);
	if (!e)
		e = cudaMallocHost((void **)&host, bytes);
	if (!e)
		e = cudaMallocHost((void **)&back, bytes);
	if (e)
		return fail("allocation", e);
	for (j = 0; j < bytes; j++)
		host[j] = (unsigned char)(j * 7 + (j >> 12));
	for (way = 0; way < 2; way++) {
		enum cudaMemcpyKind kind = way ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice;
		void *dst = way ? (void *)back : dev, *src = way ? dev : (void *)host;
		long long t0;

		e = cudaMemcpy(dst, src, bytes, kind);	/* once, not timed */
		if (e)
			return fail("cudaMemcpy", e);
		t0 = now_ns();
		for (i = 0; i < runs && !e; i++)
			e = cudaMemcpy(dst, src, bytes, kind);
		if (e)
			return fail("cudaMemcpy", e);
		printf("pevb-cuda-bench: %s %zu B: %lld ns per copy\n", way ? "DtoH" : "HtoD",
		       bytes, (now_ns() - t0) / runs);
	}
	if (memcmp(host, back, bytes)) {
		fprintf(stderr, "pevb-cuda-bench: the bytes came back wrong\n");
		return 1;
	}
	cudaFreeHost(back);
	cudaFreeHost(host);
	cudaFree(dev);
	return 0;
}
