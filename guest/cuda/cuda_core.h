/* SPDX-License-Identifier: MIT */
/*
 * What libcuda.so.1 shares with libcudart.so.13 (not CUDA's API): the process's context
 * on the guest's GPU (/dev/pevb-gpu0, one open file), its commands, the memory the
 * process allocated through CUDA, and the errors' names.
 */
#ifndef PEVB_CUDA_CORE_H
#define PEVB_CUDA_CORE_H

#include <stdint.h>
#include <stddef.h>

#define PEVB_CUDA_API __attribute__((visibility("default")))

enum pevb_mem_kind { PEVB_MEM_NONE, PEVB_MEM_DEVICE, PEVB_MEM_HOST_ALLOC, PEVB_MEM_HOST_REG };

struct pevb_mem {
	enum pevb_mem_kind kind;
	uint64_t base, size;
	unsigned int flags;
};

/* 0, or a CUDA error (the runtime's and the driver's numbers agree for these) */
PEVB_CUDA_API int pevb_cuda_open(void);
/* run a device command (PEVB_GPU_CMD_*) in the process's context; a CUDA error */
PEVB_CUDA_API int pevb_cuda_cmd(uint32_t op, const uint64_t *args, uint64_t *result,
				void *data, uint32_t in_size, uint32_t out_size);
/* a copy (PEVB_GPU_HTOD, DTOH, DTOD) or a memset on a stream; a CUDA error */
PEVB_CUDA_API int pevb_cuda_memcpy(uint64_t dst, uint64_t src, uint64_t size, uint32_t kind,
				   uint32_t stream);
PEVB_CUDA_API int pevb_cuda_memset(uint64_t ptr, int value, uint64_t size, uint32_t stream);
PEVB_CUDA_API uint64_t pevb_cuda_vram_size(void);
/* the process's CUDA memory: note, forget, find (the range that holds ptr) */
PEVB_CUDA_API int pevb_cuda_track(enum pevb_mem_kind kind, uint64_t base, uint64_t size,
				  unsigned int flags);
PEVB_CUDA_API int pevb_cuda_untrack(enum pevb_mem_kind kind, uint64_t base, struct pevb_mem *out);
PEVB_CUDA_API struct pevb_mem pevb_cuda_find(uint64_t ptr);
PEVB_CUDA_API int pevb_cuda_overlaps(uint64_t base, uint64_t size);
/* names: the runtime's (driver = 0) or the driver API's; NULL when unknown */
PEVB_CUDA_API const char *pevb_cuda_error_name(int code, int driver);
PEVB_CUDA_API const char *pevb_cuda_error_string(int code);

#endif /* PEVB_CUDA_CORE_H */
