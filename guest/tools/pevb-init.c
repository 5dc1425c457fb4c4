// SPDX-License-Identifier: MIT
/*
 * pevb-init: the first process of the simulation's Linux guest.
 *
 * The guest's root is the host's / read-only (hostfs), so this init mounts what a
 * program expects (/proc, /sys, /dev, /tmp, /run), shows again the host directories
 * its own /tmp and /run hide (PEVB_HOST_DIRS, from the kernel's command line: the
 * repository and the guest's build wherever they are), runs the command the kernel was
 * given after "--" (a shell script, typically), prints its exit status on the console
 * in a line the simulation reads ("pevb-init: exit status N"), and powers the guest
 * off. Nothing else: no shell of its own, no services.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void mount_fs(const char *type, const char *target)
{
	if (mount(type, target, type, 0, NULL) < 0 && errno != EBUSY)
		fprintf(stderr, "pevb-init: mounting %s on %s: %s\n", type, target,
			strerror(errno));
}

/* make every directory of an absolute path (in the guest's own /tmp or /run) */
static int make_dirs(const char *path)
{
	char dir[4096];
	size_t i, n = strlen(path);

	if (n >= sizeof(dir) || path[0] != '/')
		return -1;
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		memcpy(dir, path, i);
		dir[i] = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -1;
	}
	return 0;
}

/* each host directory of PEVB_HOST_DIRS (colon-separated) at its own path, read-only */
static void show_host_dirs(void)
{
	const char *list = getenv("PEVB_HOST_DIRS");
	char *copy, *dir, *save = NULL;

	if (!list)
		return;
	copy = strdup(list);
	if (!copy)
		return;
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		if (make_dirs(dir) < 0 ||
		    mount("none", dir, "hostfs", MS_RDONLY, dir) < 0)
			fprintf(stderr, "pevb-init: showing the host's %s: %s\n", dir,
				strerror(errno));
	}
	free(copy);
	unsetenv("PEVB_HOST_DIRS");
}

static void finish(int status)
{
	printf("pevb-init: exit status %d\n", status);
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	/* not reached unless reboot failed */
	exit(status);
}

int main(int argc, char **argv)
{
	int status;
	pid_t pid;

	mount_fs("proc", "/proc");
	mount_fs("sysfs", "/sys");
	mount_fs("devtmpfs", "/dev");
	mount_fs("tmpfs", "/tmp");
	mount_fs("tmpfs", "/run");
	show_host_dirs();
	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 0);
	setenv("HOME", "/tmp", 1);
	setenv("TMPDIR", "/tmp", 1);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (argc < 2) {
		fprintf(stderr, "pevb-init: no command given (kernel command line: -- CMD ARGS)\n");
		finish(127);
	}
	printf("pevb-init: running %s\n", argv[1]);
	pid = fork();
	if (pid < 0) {
		perror("pevb-init: fork");
		finish(126);
	}
	if (pid == 0) {
		execv(argv[1], argv + 1);
		fprintf(stderr, "pevb-init: %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	/* as process 1, reap everything; the command's status is the one that counts */
	for (;;) {
		pid_t done = wait(&status);

		if (done < 0 && errno == EINTR)
			continue;
		if (done < 0)
			finish(125);
		if (done == pid)
			break;
	}
	if (WIFEXITED(status))
		finish(WEXITSTATUS(status));
	printf("pevb-init: %s killed by signal %d\n", argv[1], WTERMSIG(status));
	finish(128 + WTERMSIG(status));
	return 0;
}
