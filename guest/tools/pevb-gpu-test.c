// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pevb-gpu-test: the GPU on the guest's bus through pevb_gpu.ko (/dev/pevb-gpu0): memory,
 * copies both ways through the driver's bounce buffer (more than one bounce of them),
 * a memset, pins made through the driver's nv-p2p exports (their BAR1 bus addresses),
 * a pin's free callback when its memory is freed, and the errors the driver must give.
 *
 *   pevb-gpu-test [-d /dev/pevb-gpu0]
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

#define GPU_PAGE (64u << 10)
#define SIZE (4u << 20)
#define COPY ((3u << 19) + 12345)	/* 1.5 MiB and some: two bounces and a short one */


static uint64_t alloc(int fd, uint64_t size)
{
	struct pevb_gpu_alloc a = { .size = size };

	if (call(fd, PEVB_GPU_IOC_ALLOC, &a))
		return 0;
	return a.ptr;
}

int main(int argc, char **argv)
{
	const char *path = "/dev/pevb-gpu0";
	struct pevb_gpu_info info;
	struct pevb_gpu_memset set;
	struct pevb_gpu_pin pin;
	unsigned char *src, *dst;
	uint64_t ptr, ptr2, bar1_end;
	unsigned int i;
	int fd, opt;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: %s [-d DEVICE]\n", argv[0]);
			return 2;
		}
		path = optarg;
	}
	fd = open(path, O_RDWR);
	if (fd < 0) {
		printf("FAIL open %s: %s\n", path, strerror(errno));
		return 1;
	}
	check(!call(fd, PEVB_GPU_IOC_INFO, &info) && info.vram_size && info.bar1_size,
	      "info: VRAM and BAR1");
	printf("gpu: %llu MiB VRAM, BAR1 0x%llx (%llu MiB), context %u\n",
	       (unsigned long long)info.vram_size >> 20, (unsigned long long)info.bar1_base,
	       (unsigned long long)info.bar1_size >> 20, info.context);
	bar1_end = info.bar1_base + info.bar1_size;

	src = malloc(COPY);
	dst = malloc(COPY);
	if (!src || !dst)
		return 1;
	for (i = 0; i < COPY; i++)
		src[i] = (unsigned char)(i * 7 + (i >> 11));
	memset(dst, 0x5a, COPY);
	ptr = alloc(fd, SIZE);
	check(ptr && ptr % GPU_PAGE == 0, "alloc 4 MiB");
	check(!gpu_copy(fd, ptr + 3, (uintptr_t)src, COPY, PEVB_GPU_HTOD), "copy to the GPU");
	set = (struct pevb_gpu_memset){ .ptr = ptr + 1000, .size = 500, .value = 0xab };
	check(!call(fd, PEVB_GPU_IOC_MEMSET, &set), "memset");
	check(!call(fd, PEVB_GPU_IOC_SYNC, NULL), "synchronize");
	check(!gpu_copy(fd, (uintptr_t)dst, ptr + 3, COPY, PEVB_GPU_DTOH), "copy back");
	memset(src + 997, 0xab, 500);
	check(!memcmp(src, dst, COPY), "the bytes came back, the memset's among them");

	pin = (struct pevb_gpu_pin){ .va = ptr, .size = 4 * GPU_PAGE };
	check(!call(fd, PEVB_GPU_IOC_PIN, &pin) && pin.entries == 4, "pin 256 KiB: 4 pages");
	check(pin.first_bus >= info.bar1_base && pin.first_bus + GPU_PAGE <= bar1_end &&
	      pin.first_bus % GPU_PAGE == 0, "its pages are in BAR1");
	check(!call(fd, PEVB_GPU_IOC_UNPIN, &ptr), "unpin: put_pages, no callback");
	check(!call(fd, PEVB_GPU_IOC_INFO, &info) && info.callbacks == 0, "no callback yet");

	pin = (struct pevb_gpu_pin){ .va = ptr + GPU_PAGE, .size = GPU_PAGE };
	check(!call(fd, PEVB_GPU_IOC_PIN, &pin), "pin again");
	check(!call(fd, PEVB_GPU_IOC_FREE, &ptr), "free the pinned memory");
	check(!call(fd, PEVB_GPU_IOC_INFO, &info) && info.callbacks == 1,
	      "its free callback ran before the free returned");
	ptr2 = ptr + GPU_PAGE;
	check(call(fd, PEVB_GPU_IOC_UNPIN, &ptr2) == ENOENT, "the revoked pin: ENOENT");

	pin = (struct pevb_gpu_pin){ .va = ptr + 4096, .size = GPU_PAGE };
	check(call(fd, PEVB_GPU_IOC_PIN, &pin) == EINVAL, "an unaligned pin: EINVAL");
	pin = (struct pevb_gpu_pin){ .va = ptr, .size = GPU_PAGE };
	check(call(fd, PEVB_GPU_IOC_PIN, &pin) == EINVAL, "freed memory: EINVAL");
	check(alloc(fd, 1ULL << 40) == 0, "a terabyte: refused");
	ptr = alloc(fd, SIZE);
	check(gpu_copy(fd, ptr, 16, 64, PEVB_GPU_HTOD) == EFAULT, "a bad user buffer: EFAULT");
	check(call(fd, PEVB_GPU_IOC_FREE, &ptr2) == EINVAL, "freeing what is not an allocation");
	/* left pinned and allocated: the context's end at close runs its callback */
	pin = (struct pevb_gpu_pin){ .va = ptr, .size = 2 * GPU_PAGE };
	check(!call(fd, PEVB_GPU_IOC_PIN, &pin), "a pin left for the exit");
	close(fd);
	printf("PASSED: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
