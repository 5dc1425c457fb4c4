/* SPDX-License-Identifier: MIT */
/*
 * What the guest's test programs share: a line per check and the count of failures,
 * an ioctl's errno, and a copy through the GPU's driver (/dev/pevb-gpuN). For one
 * program each (its definitions are the program's own).
 */
#ifndef PEVB_CHECKS_H
#define PEVB_CHECKS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>

#include "pevb_gpu_uapi.h"

static int failures;

/* print "ok" or "FAIL" and what was checked; count the failures */
static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	if (!ok)
		failures++;
}

/* an ioctl: 0, or its errno */
static int call(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

/* PEVB_GPU_IOC_MEMCPY of size bytes of the kind given */
static inline int gpu_copy(int fd, uint64_t dst, uint64_t src, uint64_t size, uint32_t kind)
{
	struct pevb_gpu_memcpy m = { .dst = dst, .src = src, .size = size, .kind = kind };

	return call(fd, PEVB_GPU_IOC_MEMCPY, &m);
}

#endif /* PEVB_CHECKS_H */
