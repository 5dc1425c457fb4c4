// SPDX-License-Identifier: MIT
/*
 * pevb-dma-test: move data host -> card -> host through the pevb driver and check it.
 *
 *   pevb-dma-test [-d /dev/pevb0] [-s SEED] [-n RANDOM] [-f FAULTS]
 *
 * Each case writes a pattern from a host buffer at some offset into the card's memory at
 * some offset (pwrite: H2C), reads it back into another buffer at another offset
 * (pread: C2H) and compares, with guard bytes on both sides of what the read fills.
 * The cases cover odd lengths and offsets, transfers across pages, one byte, the last
 * bytes of the card's memory, and the errors the driver must return. With -n, RANDOM more
 * cases follow, their lengths (up to 64 KiB and the card's memory) and offsets drawn from
 * SEED. With -f, up to FAULTS transfers may fail with EIO, the error the driver returns
 * for a fault the simulation injects on the card's reads (an Unsupported Request, a
 * completion timeout): each such case is reported and run again, and must then be exact.
 * Exit status 0 when every case passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "pevb_uapi.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GUARD 64
#define GUARD_BYTE 0xa5

static uint32_t rng_state;

static uint8_t rng(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 16;
}

/* a number in [0, n) */
static size_t rng_below(size_t n)
{
	size_t v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v = v << 8 | rng();
	return n ? v % n : 0;
}

struct xfer_case {
	size_t len;
	size_t host_off;	/* into the source buffer */
	size_t back_off;	/* into the buffer the read fills */
	uint64_t card_off;	/* into the card's memory; UINT64_MAX: the last len bytes */
};

static const char *irq_name(uint32_t mode)
{
	switch (mode) {
	case PEVB_IRQ_MSIX:
		return "MSI-X";
	case PEVB_IRQ_MSI:
		return "MSI";
	case PEVB_IRQ_INTX:
		return "INTx";
	default:
		return "?";
	}
}

static int failures;
static unsigned int faults_left;	/* EIOs still allowed (-f) */
static unsigned int faults_seen;

static void fail(const char *what, const struct xfer_case *c)
{
	printf("FAIL %s (len %zu, host +%zu, back +%zu, card +0x%llx)\n", what, c->len,
	       c->host_off, c->back_off, (unsigned long long)c->card_off);
	failures++;
}

/* an injected fault: the driver's EIO, allowed while -f has some left */
static int injected(const char *what, ssize_t n, const struct xfer_case *c)
{
	if (n >= 0 || errno != EIO || !faults_left)
		return 0;
	faults_left--;
	faults_seen++;
	printf("fault %s: EIO (len %zu, card +0x%llx): run again\n", what, c->len,
	       (unsigned long long)c->card_off);
	return 1;
}

static void run_case(int fd, uint64_t ram, struct xfer_case c, uint8_t *src, uint8_t *dst)
{
	uint8_t *from = src + c.host_off;
	uint8_t *to = dst + GUARD + c.back_off;
	ssize_t n;
	size_t i;

	if (c.card_off == UINT64_MAX)
		c.card_off = ram - c.len;
	for (i = 0; i < c.len; i++)
		from[i] = rng();
	memset(dst, GUARD_BYTE, c.back_off + c.len + 2 * GUARD);

	n = pwrite(fd, from, c.len, c.card_off);
	if (injected("H2C", n, &c)) {
		run_case(fd, ram, c, src, dst);
		return;
	}
	if (n != (ssize_t)c.len) {
		printf("  pwrite returned %zd (%s)\n", n, n < 0 ? strerror(errno) : "short");
		fail("H2C", &c);
		return;
	}
	n = pread(fd, to, c.len, c.card_off);
	if (injected("C2H", n, &c)) {
		run_case(fd, ram, c, src, dst);
		return;
	}
	if (n != (ssize_t)c.len) {
		printf("  pread returned %zd (%s)\n", n, n < 0 ? strerror(errno) : "short");
		fail("C2H", &c);
		return;
	}
	for (i = 0; i < c.len; i++) {
		if (to[i] != from[i]) {
			printf("  byte %zu is 0x%02x, wrote 0x%02x\n", i, to[i], from[i]);
			fail("data", &c);
			return;
		}
	}
	for (i = 0; i < GUARD + c.back_off; i++) {
		if (dst[i] != GUARD_BYTE) {
			printf("  byte %zd before the buffer changed\n", (ssize_t)i - GUARD - (ssize_t)c.back_off);
			fail("guard before", &c);
			return;
		}
	}
	for (i = 0; i < GUARD; i++) {
		if (to[c.len + i] != GUARD_BYTE) {
			printf("  byte %zu after the buffer changed\n", i);
			fail("guard after", &c);
			return;
		}
	}
	printf("ok   len %zu, host +%zu, back +%zu, card +0x%llx\n", c.len, c.host_off,
	       c.back_off, (unsigned long long)c.card_off);
}

static void expect(const char *what, ssize_t got, ssize_t want, int want_errno)
{
	if (got == want && (want >= 0 || errno == want_errno)) {
		printf("ok   %s\n", what);
		return;
	}
	printf("FAIL %s: returned %zd (%s), expected %zd%s%s\n", what, got,
	       got < 0 ? strerror(errno) : "-", want, want_errno ? " " : "",
	       want_errno ? strerror(want_errno) : "");
	failures++;
}

int main(int argc, char **argv)
{
	const char *path = "/dev/pevb0";
	struct pevb_info info;
	uint8_t *src, *dst;
	size_t room = 1 << 20;
	unsigned int i, random_cases = 0;
	int fd, opt;

	rng_state = 1;
	while ((opt = getopt(argc, argv, "d:s:n:f:")) != -1) {
		switch (opt) {
		case 'd':
			path = optarg;
			break;
		case 's':
			rng_state = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			random_cases = strtoul(optarg, NULL, 0);
			break;
		case 'f':
			faults_left = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEVICE] [-s SEED] [-n RANDOM] [-f FAULTS]\n",
				argv[0]);
			return 2;
		}
	}
	fd = open(path, O_RDWR);
	if (fd < 0) {
		printf("FAIL open %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (ioctl(fd, PEVB_IOC_INFO, &info) < 0) {
		printf("FAIL PEVB_IOC_INFO: %s\n", strerror(errno));
		return 1;
	}
	printf("card: %llu bytes of memory, %u H2C and %u C2H channels, %s, DMA BAR %u\n",
	       (unsigned long long)info.ram_size, info.h2c_channels, info.c2h_channels,
	       irq_name(info.irq_mode), info.dma_bar);

	src = mmap(NULL, room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = mmap(NULL, room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED || dst == MAP_FAILED) {
		printf("FAIL mmap: %s\n", strerror(errno));
		return 1;
	}

	{
		struct xfer_case cases[] = {
			{ 4096, 0, 0, 0 },		/* one page, all aligned */
			{ 1, 0, 0, 0x10 },		/* one byte */
			{ 3, 1, 2, 0x101 },		/* odd everything */
			{ 777, 4093, 5, 0x333 },	/* across a page of the source */
			{ 5000, 3000, 4090, 0x1ffd },	/* across pages on both sides */
			{ 12345, 123, 4001, 0x2001 },	/* several pages */
			{ 64, 0, 0, UINT64_MAX },	/* the last bytes of the card */
		};

		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			if (cases[i].card_off != UINT64_MAX &&
			    cases[i].card_off + cases[i].len > info.ram_size)
				continue;
			run_case(fd, info.ram_size, cases[i], src, dst);
		}
	}

	for (i = 0; i < random_cases; i++) {
		size_t most = info.ram_size < 65536 ? info.ram_size : 65536;
		struct xfer_case c;

		c.len = 1 + rng_below(most);
		c.host_off = rng_below(8192);
		c.back_off = rng_below(8192);
		c.card_off = rng_below(info.ram_size - c.len + 1);
		run_case(fd, info.ram_size, c, src, dst);
	}

	/* the edges of the card's memory */
	errno = 0;
	expect("read at the end of card memory reads nothing",
	       pread(fd, dst, 16, info.ram_size), 0, 0);
	errno = 0;
	expect("write at the end of card memory: ENOSPC",
	       pwrite(fd, src, 16, info.ram_size), -1, ENOSPC);
	errno = 0;
	expect("write across the end is cut there",
	       pwrite(fd, src, 32, info.ram_size - 8), 8, 0);
	{
		/* a page that was mapped and is no longer */
		void *hole = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		munmap(hole, 4096);
		errno = 0;
		expect("unmapped buffer: EFAULT", pwrite(fd, hole, 16, 0), -1, EFAULT);
	}

	if (ioctl(fd, PEVB_IOC_INFO, &info) == 0)
		printf("driver: %llu chains, %llu descriptors\n",
		       (unsigned long long)info.transfers, (unsigned long long)info.descriptors);
	close(fd);
	if (faults_seen)
		printf("faults: %u transfer(s) failed with EIO and were exact when run again\n",
		       faults_seen);
	printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
	return failures ? 1 : 0;
}
