// SPDX-License-Identifier: MIT
/*
 * pevb-cuda-test: the guest's CUDA libraries (libcudart.so.13, libcuda.so.1) from a C
 * program, against the GPU model: device queries, allocation, copies both ways and
 * between device buffers, memsets, a model kernel launched both ways nvcc's code does,
 * a stream held by cuStreamWaitValue32 while other work goes on, events, pointer
 * attributes, host memory and the errors' names. Exits 1 at the first check that fails.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pevb_cuda.h"

#define MIB (1u << 20)

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "cuda: FAILED %s:%d: ", __FILE__, __LINE__);	\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		exit(1);						\
	}								\
} while (0)
#define OK(call) do {							\
	cudaError_t e_ = (call);					\
	CHECK(!e_, "%s: %d %s", #call, e_, cudaGetErrorName(e_));	\
} while (0)

/* the host stub of a kernel, as nvcc makes one: only its address matters here */
static void fill_surface_stub(uint32_t *out, uint32_t xor_val)
{
}

static void no_such_kernel_stub(void)
{
}

static uint32_t surface_word(uint32_t x, uint32_t y, uint32_t xor_val)
{
	return ((y & 0xffff) << 16 | (x & 0xffff)) ^ xor_val;
}

static void devices(void)
{
	struct cudaDeviceProp p;
	int n = 0, v = 0;

	OK(cudaGetDeviceCount(&n));
	CHECK(n == 1, "device count %d", n);
	OK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
	CHECK(v == 132, "%d SMs", v);
	OK(cudaGetDeviceProperties(&p, 0));
	CHECK(p.major == 9 && p.minor == 0 && p.warpSize == 32 && p.totalGlobalMem > 0,
	      "properties %d.%d warp %d", p.major, p.minor, p.warpSize);
	CHECK(cudaSetDevice(1) == cudaErrorInvalidDevice, "device 1");
	CHECK(cudaGetLastError() == cudaErrorInvalidDevice, "last error");
	CHECK(cudaGetLastError() == cudaSuccess, "last error reset");
	OK(cuInit(0));
	OK(cuDeviceGetAttribute(&v, 116, 0));
	CHECK(v == 1, "GPUDirect RDMA %d", v);
	printf("cuda: device %s, %d SMs, %zu MiB\n", p.name, p.multiProcessorCount,
	       p.totalGlobalMem >> 20);
}

static void copies(void)
{
	uint8_t *host = malloc(MIB), *back = malloc(MIB);
	struct cudaPointerAttributes attr;
	void *a, *b;
	size_t i, free_before, free_after, total;

	CHECK(host && back, "malloc");
	for (i = 0; i < MIB; i++)
		host[i] = (uint8_t)(i * 7 + (i >> 12));
	OK(cudaMemGetInfo(&free_before, &total));
	OK(cudaMalloc(&a, MIB));
	OK(cudaMalloc(&b, MIB));
	OK(cudaMemGetInfo(&free_after, &total));
	CHECK(free_after + 2 * MIB <= free_before, "free memory %zu -> %zu", free_before, free_after);
	CHECK((uintptr_t)a + MIB <= (uintptr_t)b || (uintptr_t)b + MIB <= (uintptr_t)a,
	      "overlapping allocations %p %p", a, b);
	CHECK((uintptr_t)a != (uintptr_t)host, "a device pointer equals a host one");
	OK(cudaPointerGetAttributes(&attr, a));
	CHECK(attr.type == cudaMemoryTypeDevice && attr.devicePointer == a, "attributes of %p", a);
	OK(cudaPointerGetAttributes(&attr, host));
	CHECK(attr.type == cudaMemoryTypeUnregistered, "attributes of malloc memory");
	OK(cudaMemcpy(a, host, MIB, cudaMemcpyHostToDevice));
	OK(cudaMemcpy(b, a, MIB, cudaMemcpyDeviceToDevice));
	OK(cudaMemcpy(back, b, MIB, cudaMemcpyDefault));
	CHECK(!memcmp(host, back, MIB), "1 MiB came back changed");
	OK(cudaMemset((uint8_t *)b + 4096, 0xa5, 100));
	OK(cudaMemcpy(back, b, 8192, cudaMemcpyDeviceToHost));
	CHECK(back[4095] == host[4095] && back[4096] == 0xa5 && back[4195] == 0xa5 &&
	      back[4196] == host[4196], "memset");
	CHECK(cudaMemcpy(back, (void *)0x1000, 16, cudaMemcpyDeviceToHost) != cudaSuccess,
	      "a copy from memory CUDA never gave");
	OK(cudaFree(a));
	CHECK(cudaMemcpy(back, a, 16, cudaMemcpyDeviceToHost) != cudaSuccess,
	      "a copy from freed memory");
	OK(cudaFree(b));
	free(host);
	free(back);
	printf("cuda: 1 MiB copied both ways and between device buffers\n");
}

static void kernels(void)
{
	void **module = __cudaRegisterFatBinary(NULL);
	const unsigned int w = 64, h = 64;
	uint32_t *out, *words = malloc(w * h * 4), xor_val = 0x5a5a;
	void *args[] = { &out, &xor_val };
	dim3 grid = { w / 16, h / 16, 1 }, block = { 16, 16, 1 }, g2, b2;
	cudaKernel_t k;
	cudaStream_t s;
	size_t shared;
	unsigned int x, y;

	CHECK(words, "malloc");
	__cudaRegisterFunction(module, (const char *)fill_surface_stub, "fill_surface",
			       "fill_surface", -1, NULL, NULL, NULL, NULL, NULL);
	__cudaRegisterFunction(module, (const char *)no_such_kernel_stub, "_Z6nosuchv",
			       "nosuch", -1, NULL, NULL, NULL, NULL, NULL);
	__cudaRegisterFatBinaryEnd(module);
	OK(cudaMalloc((void **)&out, w * h * 4));
	OK(cudaMemset(out, 0, w * h * 4));
	/* CUDA 12's way: cudaLaunchKernel by the stub */
	OK(cudaLaunchKernel((const void *)fill_surface_stub, grid, block, args, 0, NULL));
	OK(cudaMemcpy(words, out, w * h * 4, cudaMemcpyDeviceToHost));
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++)
			CHECK(words[y * w + x] == surface_word(x, y, xor_val),
			      "(%u, %u) = %#x", x, y, words[y * w + x]);
	/* CUDA 13's: the configuration pushed, popped in the stub, the kernel by handle */
	xor_val = 0xdeadbeef;
	CHECK(__cudaPushCallConfiguration(grid, block, 0, NULL) == 0, "push");
	OK(__cudaPopCallConfiguration(&g2, &b2, &shared, &s));
	OK(__cudaGetKernel(&k, (const void *)fill_surface_stub));
	OK(__cudaLaunchKernel(k, g2, b2, args, shared, s));
	OK(cudaDeviceSynchronize());
	OK(cudaMemcpy(words, out, w * h * 4, cudaMemcpyDeviceToHost));
	CHECK(words[17 * w + 33] == surface_word(33, 17, xor_val), "second launch");
	CHECK(cudaLaunchKernel((const void *)no_such_kernel_stub, grid, block, NULL, 0, NULL) ==
	      cudaErrorInvalidDeviceFunction, "a kernel the model does not have");
	CHECK(cudaGetLastError() == cudaErrorInvalidDeviceFunction, "its last error");
	CHECK(__cudaGetKernel(&k, (const void *)devices) == cudaErrorInvalidDeviceFunction,
	      "a function never registered");
	cudaGetLastError();
	OK(cudaFree(out));
	__cudaUnregisterFatBinary(module);
	free(words);
	printf("cuda: fill_surface launched by name, checked word by word\n");
}

struct waiter {
	cudaStream_t stream;
	cudaError_t result;
};

static void *synchronize(void *arg)
{
	struct waiter *w = arg;

	w->result = cudaStreamSynchronize(w->stream);
	return NULL;
}

static void streams(void)
{
	uint8_t got[4096];
	cudaStream_t s, other;
	cudaEvent_t start, end;
	struct waiter w;
	pthread_t thread;
	uint32_t *flag;
	uint8_t *data;
	float ms = 0;

	OK(cudaMalloc((void **)&flag, 4096));
	OK(cudaMalloc((void **)&data, 4096));
	OK(cudaMemset(flag, 0, 4096));
	OK(cudaMemset(data, 0, 4096));
	OK(cudaDeviceSynchronize());
	OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	OK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
	OK(cuStreamWaitValue32(s, (CUdeviceptr)(uintptr_t)flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
	OK(cudaMemsetAsync(data, 0xcd, 4096, s));
	CHECK(cudaStreamQuery(s) == cudaErrorNotReady, "the held stream is ready");
	/* a thread waits on the held stream; the rest of the process goes on meanwhile */
	w.stream = s;
	w.result = -1;
	CHECK(!pthread_create(&thread, NULL, synchronize, &w), "pthread_create");
	OK(cudaMemcpy(got, data, 4096, cudaMemcpyDeviceToHost));
	CHECK(got[0] == 0 && got[4095] == 0, "the memset ran before its wait was met");
	OK(cuStreamWriteValue32(other, (CUdeviceptr)(uintptr_t)flag, 1, 0));
	CHECK(!pthread_join(thread, NULL), "pthread_join");
	CHECK(w.result == cudaSuccess, "synchronize: %d", w.result);
	OK(cudaMemcpyAsync(got, data, 4096, cudaMemcpyDeviceToHost, s));
	CHECK(got[0] == 0xcd && got[4095] == 0xcd, "the memset behind the wait");
	OK(cudaEventCreate(&start));
	OK(cudaEventCreate(&end));
	OK(cudaEventRecord(start, s));
	OK(cudaMemsetAsync(data, 1, 4096, s));
	OK(cudaEventRecord(end, s));
	OK(cudaEventSynchronize(end));
	OK(cudaEventQuery(end));
	OK(cudaEventElapsedTime(&ms, start, end));
	CHECK(ms > 0 && ms < 1, "elapsed %f ms", ms);
	OK(cudaEventDestroy(start));
	OK(cudaEventDestroy(end));
	OK(cudaStreamDestroy(s));
	OK(cudaStreamDestroy(other));
	CHECK(cudaStreamSynchronize(s) == cudaErrorInvalidResourceHandle, "a destroyed stream");
	cudaGetLastError();
	OK(cudaFree(flag));
	OK(cudaFree(data));
	printf("cuda: a stream held by cuStreamWaitValue32 while the process went on; "
	       "events %.6f ms apart\n", ms);
}

static void pointers_and_host_memory(void)
{
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens = { 1, 1 };
	unsigned int one = 1;
	unsigned char sync = 0;
	uint8_t *pinned, *plain = malloc(8192);
	void *d, *dev;

	OK(cudaMalloc(&d, 65536));
	OK(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)(uintptr_t)d));
	OK(cuPointerGetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
				 (CUdeviceptr)(uintptr_t)d));
	CHECK(sync == 1, "SYNC_MEMOPS %u", sync);
	OK(cuPointerGetAttribute(&tokens, CU_POINTER_ATTRIBUTE_P2P_TOKENS,
				 (CUdeviceptr)(uintptr_t)d));
	CHECK(tokens.p2pToken == 0 && tokens.vaSpaceToken != 1, "P2P tokens");
	CHECK(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_BUFFER_ID,
				    (CUdeviceptr)(uintptr_t)d) == CUDA_ERROR_INVALID_VALUE,
	      "a read-only attribute set");
	OK(cudaMallocHost((void **)&pinned, 8192));
	OK(cudaMemset(d, 0x3c, 8192));
	OK(cudaMemcpy(pinned, d, 8192, cudaMemcpyDeviceToHost));
	CHECK(pinned[0] == 0x3c && pinned[8191] == 0x3c, "a copy into cudaMallocHost memory");
	OK(cudaHostGetDevicePointer(&dev, pinned, 0));
	CHECK(dev == pinned, "its device pointer");
	OK(cudaFreeHost(pinned));
	CHECK(cudaFreeHost(pinned) == cudaErrorInvalidValue, "freed twice");
	OK(cudaHostRegister(plain, 8192, cudaHostRegisterDefault));
	CHECK(cudaHostRegister(plain + 4096, 4096, 0) == cudaErrorHostMemoryAlreadyRegistered,
	      "registered twice");
	OK(cudaHostUnregister(plain));
	CHECK(cudaHostUnregister(plain) == cudaErrorHostMemoryNotRegistered, "unregistered twice");
	cudaGetLastError();
	OK(cudaFree(d));
	free(plain);
	printf("cuda: pointer attributes and host memory\n");
}

static void errors(void)
{
	const char *s = NULL;

	CHECK(!strcmp(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress"),
	      "a name");
	CHECK(!strcmp(cudaGetErrorString(cudaErrorNotReady), "device not ready"), "a string");
	CHECK(!strcmp(cudaGetErrorName(12345), "unrecognized error code"), "an unknown code");
	OK(cuGetErrorName(CUDA_ERROR_INVALID_HANDLE, &s));
	CHECK(!strcmp(s, "CUDA_ERROR_INVALID_HANDLE"), "a driver name");
	CHECK(cuGetErrorName(12345, &s) == CUDA_ERROR_INVALID_VALUE && !s, "an unknown result");
}

int main(void)
{
	devices();
	copies();
	kernels();
	streams();
	pointers_and_host_memory();
	errors();
	printf("cuda: all checks passed\n");
	return 0;
}
