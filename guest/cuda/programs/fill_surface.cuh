// SPDX-License-Identifier: MIT
/*
 * fill_surface: the kernel the design card's demo runs (the GPU model has it by this
 * name: cuda_model/kernels.py), each word its (y, x) position XORed with a value; and
 * the word it writes at (x, y), for checking on the host. For the guest's CUDA programs.
 */
#ifndef PEVB_FILL_SURFACE_CUH
#define PEVB_FILL_SURFACE_CUH

#include <stdint.h>

extern "C" __global__ void fill_surface(uint32_t *output, uint32_t xor_val)
{
	unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
	unsigned int w = gridDim.x * blockDim.x;

	output[y * w + x] = ((y & 0xffff) << 16 | (x & 0xffff)) ^ xor_val;
}

static inline uint32_t surface_word(unsigned int x, unsigned int y, uint32_t xor_val)
{
	return ((y & 0xffff) << 16 | (x & 0xffff)) ^ xor_val;
}

#endif /* PEVB_FILL_SURFACE_CUH */
