// SPDX-License-Identifier: MIT
/*
 * cuda-fill: a CUDA program as users write one, built unmodified by NVIDIA's nvcc
 * (nvcc --cudart shared) and run in the guest against the project's libcudart.so.13 and
 * libcuda.so.1. It launches fill_surface with <<<>>> (dispatched by name to the GPU
 * model's kernel), copies the surface back into cudaMallocHost memory and checks each
 * word; then it holds a stream with cuStreamWaitValue32, queues a copy behind it,
 * releases it with cuStreamWriteValue32 from another stream and checks the copy landed
 * only then.
 * usage: cuda-fill [WIDTH HEIGHT]   (multiples of 16; 256 x 256 by default)
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fill_surface.cuh"

#define CK(x) do {							\
	cudaError_t e_ = (x);						\
	if (e_ != cudaSuccess) {					\
		fprintf(stderr, "cuda-fill: %s: %s (%s)\n", #x,		\
			cudaGetErrorName(e_), cudaGetErrorString(e_));	\
		return 1;						\
	}								\
} while (0)
#define CU(x) do {							\
	CUresult r_ = (x);						\
	if (r_ != CUDA_SUCCESS) {					\
		fprintf(stderr, "cuda-fill: %s: %d\n", #x, (int)r_);	\
		return 1;						\
	}								\
} while (0)

int main(int argc, char **argv)
{
	unsigned int w = argc > 2 ? atoi(argv[1]) : 256, h = argc > 2 ? atoi(argv[2]) : 256;
	size_t size = (size_t)w * h * 4;
	uint32_t *surface, *host, *flag, *copy, xor_val = 0xa5a5a5a5;
	cudaStream_t held, other;
	unsigned int one = 1, x, y;
	unsigned char got;

	if (!w || !h || w % 16 || h % 16) {
		fprintf(stderr, "cuda-fill: %u x %u: multiples of 16\n", w, h);
		return 2;
	}
	CK(cudaMalloc((void **)&surface, size));
	CU(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)surface));
	fill_surface<<<dim3(w / 16, h / 16), dim3(16, 16)>>>(surface, xor_val);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	CK(cudaMallocHost((void **)&host, size, 0));
	CK(cudaMemcpy(host, surface, size, cudaMemcpyDeviceToHost));
	for (y = 0; y < h; y++) {
		for (x = 0; x < w; x++) {
			if (host[y * w + x] != surface_word(x, y, xor_val)) {
				fprintf(stderr, "cuda-fill: (%u, %u) = %#x, not %#x\n", x, y,
					host[y * w + x], surface_word(x, y, xor_val));
				return 1;
			}
		}
	}
	printf("cuda-fill: fill_surface %u x %u verified\n", w, h);

	CK(cudaMalloc((void **)&flag, 4));
	CK(cudaMalloc((void **)&copy, size));
	CK(cudaMemset(flag, 0, 4));
	CK(cudaMemset(copy, 0, size));
	CK(cudaDeviceSynchronize());
	CK(cudaStreamCreateWithFlags(&held, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
	CU(cuStreamWaitValue32(held, (CUdeviceptr)flag, 1, CU_STREAM_WAIT_VALUE_EQ));
	CK(cudaMemcpyAsync(copy, surface, size, cudaMemcpyDeviceToDevice, held));
	if (cudaStreamQuery(held) != cudaErrorNotReady) {
		fprintf(stderr, "cuda-fill: the held stream ran past its wait\n");
		return 1;
	}
	CK(cudaMemcpy(&got, copy, 1, cudaMemcpyDeviceToHost));
	if (got) {
		fprintf(stderr, "cuda-fill: the copy landed before its wait was met\n");
		return 1;
	}
	CU(cuStreamWriteValue32(other, (CUdeviceptr)flag, 1, 0));
	CK(cudaStreamSynchronize(held));
	CK(cudaMemcpy(host, copy, size, cudaMemcpyDeviceToHost));
	if (host[(h - 1) * w + w - 1] != surface_word(w - 1, h - 1, xor_val)) {
		fprintf(stderr, "cuda-fill: the copy behind the wait is wrong\n");
		return 1;
	}
	printf("cuda-fill: a copy held by cuStreamWaitValue32 landed once released\n");
	CK(cudaStreamDestroy(held));
	CK(cudaStreamDestroy(other));
	CK(cudaFreeHost(host));
	CK(cudaFree(copy));
	CK(cudaFree(flag));
	CK(cudaFree(surface));
	printf("cuda-fill: PASSED\n");
	return 0;
}
