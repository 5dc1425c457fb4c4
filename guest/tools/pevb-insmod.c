// SPDX-License-Identifier: MIT
/*
 * pevb-insmod: load or unload a kernel module in the guest, which has no kmod of its own
 * (its root is the host's /).
 *
 *   pevb-insmod MODULE.ko [PARAM=VALUE ...]   load (finit_module)
 *   pevb-insmod -r NAME                         unload (delete_module)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

static int print_usage(void)
{
	fprintf(stderr, "usage: pevb-insmod MODULE.ko [PARAM=VALUE ...] | pevb-insmod -r NAME\n");
	return 2;
}

int main(int argc, char **argv)
{
	char params[4096] = "";
	size_t used = 0;
	int fd, i;

	if (argc < 2)
		return print_usage();
	if (!strcmp(argv[1], "-r")) {
		if (argc != 3)
			return print_usage();
		if (syscall(SYS_delete_module, argv[2], O_NONBLOCK) < 0) {
			fprintf(stderr, "pevb-insmod: unloading %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
		return 0;
	}
	for (i = 2; i < argc; i++) {
		size_t n = strlen(argv[i]);

		if (used + n + 2 > sizeof(params)) {
			fprintf(stderr, "pevb-insmod: module parameters too long\n");
			return 2;
		}
		if (used)
			params[used++] = ' ';
		memcpy(params + used, argv[i], n + 1);
		used += n;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "pevb-insmod: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (syscall(SYS_finit_module, fd, params, 0) < 0) {
		fprintf(stderr, "pevb-insmod: loading %s: %s\n", argv[1], strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}
