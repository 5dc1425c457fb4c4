// SPDX-License-Identifier: MIT
/*
 * libcudart.so.13: the CUDA runtime API that GPUDirect programs call, and the calls
 * nvcc's generated code makes, against the guest's GPU through libcuda.so.1's context
 * (cuda_core.h). Symbols carry the version node libcudart.so.13, as NVIDIA's do.
 *
 * Kernels: nvcc's code registers each kernel's host stub with its device name; a launch
 * looks the name up among the GPU model's kernels (cuda_model/kernels.py), which say how
 * many parameters it takes and their sizes, packs the arguments by them and launches it
 * on the stream. A kernel the model does not have is cudaErrorInvalidDeviceFunction,
 * named on stderr. Host memory (cudaHostAlloc, cudaHostRegister) is the process's own,
 * page-locked; the GPU model copies to and from it but does not map it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pevb_gpu_regs.h"
#include "pevb_gpu_uapi.h"
#include "cuda_core.h"
#include "pevb_cuda.h"

#define API PEVB_CUDA_API
#define MAX_PARAMS 32

static __thread cudaError_t last_error;

static cudaError_t note(cudaError_t e)
{
	if (e)
		last_error = e;
	return e;
}

static uint32_t stream_of(cudaStream_t s)
{
	/* the legacy and per-thread default streams are the legacy stream here */
	if (s == cudaStreamLegacy || s == cudaStreamPerThread)
		return 0;
	return (uint32_t)(uintptr_t)s;
}

static cudaError_t cmd(uint32_t op, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t *result)
{
	uint64_t args[5] = { a0, a1, a2 };

	return note(pevb_cuda_cmd(op, args, result, NULL, 0, 0));
}

/* --- devices ------------------------------------------------------------------------ */

API cudaError_t cudaGetDeviceCount(int *count)
{
	cudaError_t e;

	if (!count)
		return note(cudaErrorInvalidValue);
	e = pevb_cuda_open();
	*count = e ? 0 : 1;
	return note(e);
}

API cudaError_t cudaGetDevice(int *device)
{
	if (!device)
		return note(cudaErrorInvalidValue);
	*device = 0;
	return cudaSuccess;
}

API cudaError_t cudaSetDevice(int device)
{
	if (device != 0)
		return note(cudaErrorInvalidDevice);
	return note(pevb_cuda_open());
}

API cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device)
{
	uint64_t v;
	cudaError_t e;

	if (!value)
		return note(cudaErrorInvalidValue);
	if (device != 0)
		return note(cudaErrorInvalidDevice);
	e = cmd(PEVB_GPU_CMD_DEVICE_ATTRIBUTE, (uint64_t)attr, 0, 0, &v);
	if (!e)
		*value = (int)v;
	return e;
}

static int attribute(int attr)
{
	int v = 0;

	cudaDeviceGetAttribute(&v, attr, 0);
	return v;
}

API cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
	cudaError_t e;

	if (!p)
		return note(cudaErrorInvalidValue);
	if (device != 0)
		return note(cudaErrorInvalidDevice);
	e = note(pevb_cuda_open());
	if (e)
		return e;
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", "NVIDIA H100 (pevb GPU model)");
	p->totalGlobalMem = pevb_cuda_vram_size();
	p->sharedMemPerBlock = attribute(8);
	p->regsPerBlock = attribute(12);
	p->warpSize = attribute(10);
	p->maxThreadsPerBlock = attribute(1);
	p->maxThreadsDim[0] = attribute(2);
	p->maxThreadsDim[1] = attribute(3);
	p->maxThreadsDim[2] = attribute(4);
	p->maxGridSize[0] = attribute(5);
	p->maxGridSize[1] = attribute(6);
	p->maxGridSize[2] = attribute(7);
	p->totalConstMem = attribute(9);
	p->major = attribute(75);
	p->minor = attribute(76);
	p->multiProcessorCount = attribute(16);
	p->canMapHostMemory = attribute(19);
	p->asyncEngineCount = attribute(40);
	p->unifiedAddressing = attribute(41);
	p->memoryBusWidth = attribute(37);
	p->l2CacheSize = attribute(38);
	p->maxThreadsPerMultiProcessor = attribute(39);
	p->sharedMemPerMultiprocessor = attribute(81);
	p->concurrentManagedAccess = attribute(89);
	p->memoryPoolsSupported = attribute(115);
	p->gpuDirectRDMASupported = attribute(116);
	p->gpuDirectRDMAFlushWritesOptions = attribute(117);
	p->gpuDirectRDMAWritesOrdering = attribute(118);
	return cudaSuccess;
}

API cudaError_t cudaDriverGetVersion(int *version)
{
	if (!version)
		return note(cudaErrorInvalidValue);
	*version = CUDA_VERSION;
	return cudaSuccess;
}

API cudaError_t cudaRuntimeGetVersion(int *version)
{
	if (!version)
		return note(cudaErrorInvalidValue);
	*version = CUDART_VERSION;
	return cudaSuccess;
}

API cudaError_t cudaDeviceSynchronize(void)
{
	return cmd(PEVB_GPU_CMD_SYNCHRONIZE, 0, 0, 0, NULL);
}

API cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
	uint64_t v;
	cudaError_t e;

	if (!free || !total)
		return note(cudaErrorInvalidValue);
	e = cmd(PEVB_GPU_CMD_MEM_GET_INFO, 0, 0, 0, &v);
	if (!e) {
		*free = v;
		*total = pevb_cuda_vram_size();
	}
	return e;
}

/* --- errors ------------------------------------------------------------------------- */

API cudaError_t cudaGetLastError(void)
{
	cudaError_t e = last_error;

	last_error = cudaSuccess;
	return e;
}

API cudaError_t cudaPeekAtLastError(void)
{
	return last_error;
}

API const char *cudaGetErrorName(cudaError_t error)
{
	const char *s = pevb_cuda_error_name(error, 0);

	return s ? s : "unrecognized error code";
}

API const char *cudaGetErrorString(cudaError_t error)
{
	const char *s = pevb_cuda_error_string(error);

	return s ? s : "unrecognized error code";
}

/* --- device memory ------------------------------------------------------------------ */

API cudaError_t cudaMalloc(void **ptr, size_t size)
{
	uint64_t p = 0;
	cudaError_t e;

	if (!ptr)
		return note(cudaErrorInvalidValue);
	*ptr = NULL;
	if (!size)
		return cudaSuccess;
	e = cmd(PEVB_GPU_CMD_MEM_ALLOC, size, 0, 0, &p);
	if (e)
		return e;
	if (pevb_cuda_track(PEVB_MEM_DEVICE, p, size, 0)) {
		cmd(PEVB_GPU_CMD_MEM_FREE, p, 0, 0, NULL);
		return note(cudaErrorMemoryAllocation);
	}
	*ptr = (void *)(uintptr_t)p;
	return cudaSuccess;
}

API cudaError_t cudaFree(void *ptr)
{
	cudaError_t e;

	if (!ptr)
		return cudaSuccess;
	e = cmd(PEVB_GPU_CMD_MEM_FREE, (uintptr_t)ptr, 0, 0, NULL);
	if (!e)
		pevb_cuda_untrack(PEVB_MEM_DEVICE, (uintptr_t)ptr, NULL);
	return e;
}

/* where a pointer is: the device's (1) or the host's (0); -1 unknown to CUDA */
static int on_device(const void *p)
{
	struct pevb_mem m = pevb_cuda_find((uintptr_t)p);

	if (m.kind == PEVB_MEM_NONE)
		return -1;
	return m.kind == PEVB_MEM_DEVICE;
}

static cudaError_t copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
			cudaStream_t stream)
{
	int s_dev = on_device(src), d_dev = on_device(dst);

	if ((unsigned int)kind > cudaMemcpyDefault)
		return note(cudaErrorInvalidMemcpyDirection);
	/* unified addressing: a pointer CUDA knows decides; an unknown one, the kind */
	if (s_dev < 0)
		s_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
	if (d_dev < 0)
		d_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
	if (!count)
		return cudaSuccess;
	if (!s_dev && !d_dev) {
		memmove(dst, src, count);
		return cudaSuccess;
	}
	return note(pevb_cuda_memcpy((uintptr_t)dst, (uintptr_t)src, count,
				     s_dev ? (d_dev ? PEVB_GPU_DTOD : PEVB_GPU_DTOH) :
				     PEVB_GPU_HTOD, stream_of(stream)));
}

API cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	return copy(dst, src, count, kind, NULL);
}

API cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
				enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return copy(dst, src, count, kind, stream);
}

API cudaError_t cudaMemset(void *ptr, int value, size_t count)
{
	return note(pevb_cuda_memset((uintptr_t)ptr, value, count, 0));
}

API cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
	return note(pevb_cuda_memset((uintptr_t)ptr, value, count, stream_of(stream)));
}

API cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *ptr)
{
	struct pevb_mem m = pevb_cuda_find((uintptr_t)ptr);

	if (!attr)
		return note(cudaErrorInvalidValue);
	memset(attr, 0, sizeof(*attr));
	switch (m.kind) {
	case PEVB_MEM_DEVICE:
		attr->type = cudaMemoryTypeDevice;
		attr->devicePointer = (void *)ptr;
		break;
	case PEVB_MEM_HOST_ALLOC:
	case PEVB_MEM_HOST_REG:
		attr->type = cudaMemoryTypeHost;
		attr->devicePointer = (void *)ptr;
		attr->hostPointer = (void *)ptr;
		break;
	default:
		attr->type = cudaMemoryTypeUnregistered;
		attr->device = -2;
	}
	return cudaSuccess;
}

/* --- host memory -------------------------------------------------------------------- */

API cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
	void *p;

	if (!ptr || flags & ~0xfu)
		return note(cudaErrorInvalidValue);
	*ptr = NULL;
	if (!size)
		return cudaSuccess;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return note(cudaErrorMemoryAllocation);
	mlock(p, size);	/* page-locked where the limits allow */
	if (pevb_cuda_track(PEVB_MEM_HOST_ALLOC, (uintptr_t)p, size, flags)) {
		munmap(p, size);
		return note(cudaErrorMemoryAllocation);
	}
	*ptr = p;
	return cudaSuccess;
}

API cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

API cudaError_t cudaFreeHost(void *ptr)
{
	struct pevb_mem m;

	if (!ptr)
		return cudaSuccess;
	if (pevb_cuda_untrack(PEVB_MEM_HOST_ALLOC, (uintptr_t)ptr, &m))
		return note(cudaErrorInvalidValue);
	munmap(ptr, m.size);
	return cudaSuccess;
}

API cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	if (!ptr || !size || flags & ~0xfu)
		return note(cudaErrorInvalidValue);
	if (pevb_cuda_overlaps((uintptr_t)ptr, size))
		return note(cudaErrorHostMemoryAlreadyRegistered);
	mlock(ptr, size);
	if (pevb_cuda_track(PEVB_MEM_HOST_REG, (uintptr_t)ptr, size, flags))
		return note(cudaErrorMemoryAllocation);
	return cudaSuccess;
}

API cudaError_t cudaHostUnregister(void *ptr)
{
	struct pevb_mem m;

	if (!ptr)
		return note(cudaErrorInvalidValue);
	if (pevb_cuda_untrack(PEVB_MEM_HOST_REG, (uintptr_t)ptr, &m))
		return note(cudaErrorHostMemoryNotRegistered);
	munlock(ptr, m.size);
	return cudaSuccess;
}

API cudaError_t cudaHostGetDevicePointer(void **device, void *host, unsigned int flags)
{
	struct pevb_mem m = pevb_cuda_find((uintptr_t)host);

	if (!device || flags)
		return note(cudaErrorInvalidValue);
	if (m.kind != PEVB_MEM_HOST_ALLOC && m.kind != PEVB_MEM_HOST_REG)
		return note(cudaErrorInvalidValue);
	*device = host;	/* unified addressing: the same pointer */
	return cudaSuccess;
}

/* --- streams and events --------------------------------------------------------------- */

API cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
	uint64_t h;
	cudaError_t e;

	if (!stream)
		return note(cudaErrorInvalidValue);
	e = cmd(PEVB_GPU_CMD_STREAM_CREATE, flags, 0, 0, &h);
	if (!e)
		*stream = (cudaStream_t)(uintptr_t)h;
	return e;
}

API cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
	return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

API cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	return cmd(PEVB_GPU_CMD_STREAM_DESTROY, stream_of(stream), 0, 0, NULL);
}

API cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	return cmd(PEVB_GPU_CMD_STREAM_SYNCHRONIZE, stream_of(stream), 0, 0, NULL);
}

API cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	uint64_t args[5] = { stream_of(stream) };

	/* cudaErrorNotReady is an answer, not an error */
	return pevb_cuda_cmd(PEVB_GPU_CMD_STREAM_QUERY, args, NULL, NULL, 0, 0);
}

API cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	return cmd(PEVB_GPU_CMD_STREAM_WAIT_EVENT, stream_of(stream), (uintptr_t)event, flags,
		   NULL);
}

API cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	uint64_t h;
	cudaError_t e;

	if (!event)
		return note(cudaErrorInvalidValue);
	e = cmd(PEVB_GPU_CMD_EVENT_CREATE, flags, 0, 0, &h);
	if (!e)
		*event = (cudaEvent_t)(uintptr_t)h;
	return e;
}

API cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	return cudaEventCreateWithFlags(event, cudaEventDefault);
}

API cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	return cmd(PEVB_GPU_CMD_EVENT_DESTROY, (uintptr_t)event, 0, 0, NULL);
}

API cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	return cmd(PEVB_GPU_CMD_EVENT_RECORD, (uintptr_t)event, stream_of(stream), 0, NULL);
}

API cudaError_t cudaEventQuery(cudaEvent_t event)
{
	uint64_t args[5] = { (uintptr_t)event };

	return pevb_cuda_cmd(PEVB_GPU_CMD_EVENT_QUERY, args, NULL, NULL, 0, 0);
}

API cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	return cmd(PEVB_GPU_CMD_EVENT_SYNCHRONIZE, (uintptr_t)event, 0, 0, NULL);
}

API cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	uint64_t bits;
	uint32_t b;
	cudaError_t e;

	if (!ms)
		return note(cudaErrorInvalidValue);
	e = cmd(PEVB_GPU_CMD_EVENT_ELAPSED, (uintptr_t)start, (uintptr_t)end, 0, &bits);
	if (!e) {
		b = (uint32_t)bits;
		memcpy(ms, &b, sizeof(*ms));
	}
	return e;
}

/* --- kernels ------------------------------------------------------------------------ */

struct kernel {
	struct kernel *next;
	const void *host_fun;
	char *device_fun;	/* the name the device knows it by */
	int looked_up;		/* 0: not yet, 1: found, -1: the model has none */
	uint32_t id, nparams, sizes[MAX_PARAMS];
};

static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kernel *kernels;

static struct kernel *find_kernel(const void *host_fun)
{
	struct kernel *k;

	pthread_mutex_lock(&kernels_lock);
	for (k = kernels; k && k->host_fun != host_fun; k = k->next)
		;
	pthread_mutex_unlock(&kernels_lock);
	return k;
}

API void **__cudaRegisterFatBinary(void *fatbin)
{
	void **handle = calloc(1, sizeof(void *));

	if (handle)
		*handle = fatbin;
	return handle;
}

API void __cudaRegisterFatBinaryEnd(void **handle)
{
}

API void __cudaUnregisterFatBinary(void **handle)
{
	free(handle);
}

API char __cudaInitModule(void **handle)
{
	return 1;
}

API void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
				const char *device_name, int thread_limit, uint3 *tid, uint3 *bid,
				dim3 *block, dim3 *grid, int *warp_size)
{
	struct kernel *k = calloc(1, sizeof(*k));

	if (!k)
		return;
	k->host_fun = host_fun;
	k->device_fun = strdup(device_fun);
	pthread_mutex_lock(&kernels_lock);
	k->next = kernels;
	kernels = k;
	pthread_mutex_unlock(&kernels_lock);
}

API void __cudaRegisterVar(void **handle, char *host_var, char *device_address,
			   const char *device_name, int ext, size_t size, int constant, int global)
{
	/* __device__ variables: the model has no module memory; their use is an error */
	fprintf(stderr, "pevb cudart: __device__ variable '%s' is not modelled\n", device_name);
}

struct launch_config {
	dim3 grid, block;
	size_t shared;
	cudaStream_t stream;
};

#define MAX_CONFIGS 16
static __thread struct launch_config configs[MAX_CONFIGS];
static __thread unsigned int n_configs;

API unsigned int __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared,
					 cudaStream_t stream)
{
	if (n_configs == MAX_CONFIGS)
		return 1;
	configs[n_configs++] = (struct launch_config){ grid, block, shared, stream };
	return 0;
}

API cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream)
{
	struct launch_config *c;

	if (!n_configs)
		return note(cudaErrorMissingConfiguration);
	c = &configs[--n_configs];
	*grid = c->grid;
	*block = c->block;
	*shared = c->shared;
	*(cudaStream_t *)stream = c->stream;
	return cudaSuccess;
}

API cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *host_fun)
{
	struct kernel *k = find_kernel(host_fun);

	if (!kernel || !k)
		return note(cudaErrorInvalidDeviceFunction);
	*kernel = (cudaKernel_t)k;
	return cudaSuccess;
}

/* the model's kernel of this name: its number and its parameters' sizes */
static cudaError_t look_up(struct kernel *k)
{
	uint32_t buf[2 + MAX_PARAMS];
	size_t len = strlen(k->device_fun);
	uint64_t args[5] = { 0, len }, id;
	char name[PEVB_GPU_MAX_KERNEL_NAME];
	int e;

	if (k->looked_up)
		return k->looked_up > 0 ? cudaSuccess : cudaErrorInvalidDeviceFunction;
	if (len > sizeof(name))
		return cudaErrorInvalidDeviceFunction;
	memcpy(name, k->device_fun, len);
	e = pevb_cuda_cmd(PEVB_GPU_CMD_KERNEL_LOOKUP, args, &id, name, len, sizeof(buf));
	if (e == cudaErrorInvalidDeviceFunction) {
		fprintf(stderr, "pevb cudart: kernel '%s' is not one of the GPU model's (%s)\n",
			k->device_fun, "cuda_model/kernels.py");
		k->looked_up = -1;
	}
	if (e)
		return e;
	memcpy(buf, name, sizeof(buf) < sizeof(name) ? sizeof(buf) : sizeof(name));
	if (buf[0] > MAX_PARAMS)
		return cudaErrorInvalidDeviceFunction;
	k->id = (uint32_t)id;
	k->nparams = buf[0];
	memcpy(k->sizes, &buf[1], buf[0] * sizeof(uint32_t));
	k->looked_up = 1;
	return cudaSuccess;
}

static cudaError_t launch(struct kernel *k, dim3 grid, dim3 block, void **args,
			  cudaStream_t stream)
{
	uint8_t blob[8 + PEVB_GPU_MAX_PARAMS];
	uint32_t off = 0, i, size;
	uint64_t a[5];
	cudaError_t e;

	e = look_up(k);
	if (e)
		return note(e);
	for (i = 0; i < k->nparams; i++) {
		size = k->sizes[i];
		off = (off + size - 1) / size * size;
		if (8 + off + size > sizeof(blob))
			return note(cudaErrorInvalidValue);
		memcpy(blob + 8 + off, args[i], size);
		off += size;
	}
	memcpy(blob, &off, 4);
	memset(blob + 4, 0, 4);
	a[0] = k->id | (uint64_t)stream_of(stream) << 32;
	a[1] = grid.x | (uint64_t)grid.y << 32;
	a[2] = grid.z | (uint64_t)block.x << 32;
	a[3] = block.y | (uint64_t)block.z << 32;
	a[4] = 0;
	return note(pevb_cuda_cmd(PEVB_GPU_CMD_LAUNCH, a, NULL, blob, 8 + off, 0));
}

API cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
				   size_t shared, cudaStream_t stream)
{
	if (!kernel)
		return note(cudaErrorInvalidDeviceFunction);
	return launch((struct kernel *)kernel, grid, block, args, stream);
}

API cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block,
					void **args, size_t shared, cudaStream_t stream)
{
	return __cudaLaunchKernel(kernel, grid, block, args, shared, stream);
}

API cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
				 size_t shared, cudaStream_t stream)
{
	struct kernel *k = find_kernel(func);

	if (!k)
		return note(cudaErrorInvalidDeviceFunction);
	return launch(k, grid, block, args, stream);
}

API cudaError_t cudaDeviceReset(void)
{
	return cudaDeviceSynchronize();
}
