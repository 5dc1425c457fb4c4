// SPDX-License-Identifier: MIT
/*
 * The process's CUDA context on the guest's GPU: /dev/pevb-gpu0 opened at the first call
 * (pevb_gpu.ko makes each open file a context of the GPU model, freed at exit), the
 * device's commands through its ioctls, the memory the process got from CUDA, and the
 * errors' names and strings (as CUDA 13 prints them: cuda_model/probes/device_query.txt).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "pevb_gpu_regs.h"
#include "pevb_gpu_uapi.h"
#include "cuda_core.h"
#include "pevb_cuda.h"

#define DEVICE_PATH "/dev/pevb-gpu0"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int gpu_fd = -1;
static int open_error;
static struct pevb_gpu_info info;
static struct pevb_mem *mems;
static size_t n_mems, room_mems;

/* a CUDA error for a failed ioctl or a device's negative status */
static int from_errno(int e)
{
	switch (e) {
	case 0:
		return cudaSuccess;
	case ENOMEM:
		return cudaErrorMemoryAllocation;
	case ENODEV:
	case ENOENT:
	case ENXIO:
		return cudaErrorNoDevice;
	case EINVAL:
	case EFAULT:
	case ENOSPC:
	case ENOTTY:
		return cudaErrorInvalidValue;
	default:
		return cudaErrorUnknown;
	}
}

int pevb_cuda_open(void)
{
	int fd;

	pthread_mutex_lock(&lock);
	if (gpu_fd < 0 && !open_error) {
		fd = open(DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, PEVB_GPU_IOC_INFO, &info)) {
			open_error = from_errno(errno);
			if (fd >= 0)
				close(fd);
		} else {
			gpu_fd = fd;
		}
	}
	pthread_mutex_unlock(&lock);
	return gpu_fd < 0 ? open_error : cudaSuccess;
}

uint64_t pevb_cuda_vram_size(void)
{
	return pevb_cuda_open() ? 0 : info.vram_size;
}

int pevb_cuda_cmd(uint32_t op, const uint64_t *args, uint64_t *result, void *data,
		  uint32_t in_size, uint32_t out_size)
{
	struct pevb_gpu_cmd_io io;
	int ret = pevb_cuda_open();

	if (ret)
		return ret;
	memset(&io, 0, sizeof(io));
	io.opcode = op;
	if (args)
		memcpy(io.arg, args, sizeof(io.arg));
	io.data = (uintptr_t)data;
	io.in_size = in_size;
	io.out_size = out_size;
	if (ioctl(gpu_fd, PEVB_GPU_IOC_CMD, &io))
		return from_errno(errno);
	if (result)
		*result = io.result;
	return io.status < 0 ? from_errno(-io.status) : io.status;
}

int pevb_cuda_memcpy(uint64_t dst, uint64_t src, uint64_t size, uint32_t kind, uint32_t stream)
{
	struct pevb_gpu_memcpy m = { .dst = dst, .src = src, .size = size, .kind = kind,
				     .stream = stream };
	int ret = pevb_cuda_open();

	if (ret)
		return ret;
	return ioctl(gpu_fd, PEVB_GPU_IOC_MEMCPY, &m) ? from_errno(errno) : cudaSuccess;
}

int pevb_cuda_memset(uint64_t ptr, int value, uint64_t size, uint32_t stream)
{
	struct pevb_gpu_memset m = { .ptr = ptr, .size = size, .value = value & 0xff,
				     .stream = stream };
	int ret = pevb_cuda_open();

	if (ret)
		return ret;
	return ioctl(gpu_fd, PEVB_GPU_IOC_MEMSET, &m) ? from_errno(errno) : cudaSuccess;
}

/* --- the process's CUDA memory ------------------------------------------------------ */

int pevb_cuda_track(enum pevb_mem_kind kind, uint64_t base, uint64_t size, unsigned int flags)
{
	struct pevb_mem *grown;
	int ret = 0;

	pthread_mutex_lock(&lock);
	if (n_mems == room_mems) {
		grown = realloc(mems, (room_mems * 2 + 16) * sizeof(*mems));
		if (!grown) {
			ret = -ENOMEM;
			goto out;
		}
		mems = grown;
		room_mems = room_mems * 2 + 16;
	}
	mems[n_mems++] = (struct pevb_mem){ .kind = kind, .base = base, .size = size,
					     .flags = flags };
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

int pevb_cuda_untrack(enum pevb_mem_kind kind, uint64_t base, struct pevb_mem *out)
{
	size_t i;
	int ret = -ENOENT;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n_mems; i++) {
		if (mems[i].kind == kind && mems[i].base == base) {
			if (out)
				*out = mems[i];
			mems[i] = mems[--n_mems];
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

struct pevb_mem pevb_cuda_find(uint64_t ptr)
{
	struct pevb_mem found = { .kind = PEVB_MEM_NONE };
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n_mems; i++) {
		if (ptr >= mems[i].base && ptr - mems[i].base < (mems[i].size ? mems[i].size : 1)) {
			found = mems[i];
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return found;
}

int pevb_cuda_overlaps(uint64_t base, uint64_t size)
{
	size_t i;
	int hit = 0;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n_mems && !hit; i++)
		hit = mems[i].kind != PEVB_MEM_DEVICE && base < mems[i].base + mems[i].size &&
		      mems[i].base < base + size;
	pthread_mutex_unlock(&lock);
	return hit;
}

/* --- errors -------------------------------------------------------------------------- */

static const struct {
	int code;
	const char *name, *driver_name, *string;
} errors[] = {
	{ 0, "cudaSuccess", "CUDA_SUCCESS", "no error" },
	{ 1, "cudaErrorInvalidValue", "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ 2, "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ 3, "cudaErrorInitializationError", "CUDA_ERROR_NOT_INITIALIZED",
	  "initialization error" },
	{ 4, "cudaErrorCudartUnloading", "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
	{ 9, "cudaErrorInvalidConfiguration", NULL, "invalid configuration argument" },
	{ 17, "cudaErrorInvalidDevicePointer", NULL, "invalid device pointer" },
	{ 21, "cudaErrorInvalidMemcpyDirection", NULL, "invalid copy direction for memcpy" },
	{ 52, "cudaErrorMissingConfiguration", NULL, "__global__ function call is not configured" },
	{ 98, "cudaErrorInvalidDeviceFunction", NULL, "invalid device function" },
	{ 100, "cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ 101, "cudaErrorInvalidDevice", "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ 200, "cudaErrorInvalidKernelImage", "CUDA_ERROR_INVALID_IMAGE",
	  "device kernel image is invalid" },
	{ 400, "cudaErrorInvalidResourceHandle", "CUDA_ERROR_INVALID_HANDLE",
	  "invalid resource handle" },
	{ 500, "cudaErrorSymbolNotFound", "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ 600, "cudaErrorNotReady", "CUDA_ERROR_NOT_READY", "device not ready" },
	{ 700, "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS",
	  "an illegal memory access was encountered" },
	{ 712, "cudaErrorHostMemoryAlreadyRegistered", "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
	  "part or all of the requested memory range is already mapped" },
	{ 713, "cudaErrorHostMemoryNotRegistered", "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
	  "pointer does not correspond to a registered memory region" },
	{ 719, "cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure" },
	{ 800, "cudaErrorNotPermitted", "CUDA_ERROR_NOT_PERMITTED", "operation not permitted" },
	{ 801, "cudaErrorNotSupported", "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
	{ 999, "cudaErrorUnknown", "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static int find_error(int code)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(errors); i++)
		if (errors[i].code == code)
			return i;
	return -1;
}

const char *pevb_cuda_error_name(int code, int driver)
{
	int i = find_error(code);

	if (i < 0)
		return NULL;
	return driver ? errors[i].driver_name : errors[i].name;
}

const char *pevb_cuda_error_string(int code)
{
	int i = find_error(code);

	return i < 0 ? NULL : errors[i].string;
}
