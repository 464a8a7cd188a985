// SPDX-License-Identifier: GPL-2.0-only
/* The kernel side of dmaharness-failnth (see failnth_sys.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "failnth_names.h"
#include "io.h"
#include "failnth_result.h"
#include "failnth_sys.h"
#include "timing.h"

/* The stack the child may use once fail-nth is armed, touched before. */
#define PREFAULT_STACK		(32 * 1024)

void fn_sys_init(struct fn_sys *y, const struct fn_options *o, int out_fd)
{
	memset(y, 0, sizeof(*y));
	snprintf(y->drvdir, sizeof(y->drvdir), "%s/sys/bus/usb/drivers/%s",
		 o->root, o->driver);
	snprintf(y->failnth, sizeof(y->failnth), "%s/proc/thread-self/fail-nth",
		 o->root);
	snprintf(y->debugfs, sizeof(y->debugfs), "%s/sys/kernel/debug", o->root);
	y->timeout_s = o->step_timeout_s;
	y->out_fd = out_fd;
}

static int write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -1;
	if (write_all(fd, value, strlen(value)) < 0)
		ret = -1;
	if (close(fd) < 0 && ret == 0)
		ret = -1;
	return ret;
}

int fn_sys_setup_faults(struct fn_sys *y, char *err, size_t errlen)
{
	static const struct {
		const char *dir, *file, *value, *config;
	} knobs[] = {
		{ "failslab", "ignore-gfp-wait", "N", "CONFIG_FAILSLAB" },
		{ "failslab", "verbose", "2", "CONFIG_FAILSLAB" },
		{ "fail_page_alloc", "ignore-gfp-wait", "N", "CONFIG_FAIL_PAGE_ALLOC" },
		{ "fail_page_alloc", "ignore-gfp-highmem", "N", "CONFIG_FAIL_PAGE_ALLOC" },
		{ "fail_page_alloc", "min-order", "0", "CONFIG_FAIL_PAGE_ALLOC" },
		{ "fail_page_alloc", "verbose", "2", "CONFIG_FAIL_PAGE_ALLOC" },
	};
	char path[PATH_MAX + 64];
	size_t i;

	if (access(y->failnth, R_OK | W_OK) < 0) {
		snprintf(err, errlen, "%s: %s (the kernel needs CONFIG_FAULT_INJECTION)",
			 y->failnth, strerror(errno));
		return -1;
	}
	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", y->debugfs, knobs[i].dir,
			 knobs[i].file);
		if (write_file(path, knobs[i].value) < 0) {
			snprintf(err, errlen,
				 "%s: %s (the kernel needs %s and CONFIG_FAULT_INJECTION_DEBUG_FS, debugfs mounted)",
				 path, strerror(errno), knobs[i].config);
			return -1;
		}
	}
	return 0;
}

int fn_sys_list(struct fn_sys *y, struct fn_names *out, char *err, size_t errlen)
{
	struct dirent *e;
	DIR *d;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	d = opendir(y->drvdir);
	if (!d) {
		snprintf(err, errlen, "%s: %s (is the driver's module loaded?)",
			 y->drvdir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (!fn_is_interface_name(e->d_name))
			continue;
		if (fn_names_add(out, e->d_name) < 0) {
			snprintf(err, errlen, "%s: more than %d interfaces bound",
				 y->drvdir, FN_MAX_IFACES);
			ret = -1;
			break;
		}
	}
	closedir(d);
	fn_names_sort(out);
	return ret;
}

static int sys_bound(void *ctx, const struct fn_names *set, uint32_t *mask,
		     char *err, size_t errlen)
{
	struct fn_names now;
	unsigned int i;

	*mask = 0;
	if (fn_sys_list(ctx, &now, err, errlen) < 0)
		return -1;
	for (i = 0; i < set->n; i++)
		if (fn_names_find(&now, set->name[i]) >= 0)
			*mask |= UINT32_C(1) << i;
	return 0;
}

static void sys_settle(void *ctx, unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	(void)ctx;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* What the child reports through its pipe. */
struct child_msg {
	int stage;		/* STAGE_* reached */
	int err;		/* the write's errno; for a failed stage, that errno */
	int read_err;		/* reading fail-nth back */
	int left_ok;
	unsigned long left;	/* fail-nth read back after the write */
};

enum { STAGE_OPEN_ATTR = 1, STAGE_OPEN_FAILNTH, STAGE_ARM, STAGE_DONE };

/*
 * Touch the stack below the caller, so that the calls made once fail-nth is
 * armed find their stack pages already copied (a copy-on-write fault then
 * would allocate a page in this task and could take the Nth call).
 */
__attribute__((noinline)) static void prefault_stack(void)
{
	volatile char pad[PREFAULT_STACK];
	size_t i;

	for (i = 0; i < sizeof(pad); i += 512)
		pad[i] = 0;
	pad[sizeof(pad) - 1] = 0;
}

/*
 * The child: open the files first (their allocations must not count), run
 * every call of the armed sequence once unarmed (pread, pwrite; their code
 * pages are then mapped), print the begin marker, arm, write, read fail-nth
 * back, disarm, report.  Nothing between arming and disarming writes to
 * memory the child has not written before.
 */
static void child(const struct fn_sys *y, const char *attr, const char *intf,
		  unsigned int n, enum fn_path p, int wfd)
{
	char path[PATH_MAX + 16], nbuf[16], rbuf[32], line[256];
	size_t ilen = strlen(intf), nlen = 0;
	struct child_msg m;
	int fa, ff = -1;
	ssize_t k;

	memset(&m, 0, sizeof(m));
	memset(rbuf, 0, sizeof(rbuf));
	prefault_stack();
	snprintf(path, sizeof(path), "%s/%s", y->drvdir, attr);
	fa = open(path, O_WRONLY | O_CLOEXEC);
	if (fa < 0) {
		m.stage = STAGE_OPEN_ATTR;
		m.err = errno;
		goto report;
	}
	if (n > 0) {
		ff = open(y->failnth, O_RDWR | O_CLOEXEC);
		if (ff < 0 || pread(ff, rbuf, sizeof(rbuf) - 1, 0) < 0 ||
		    pwrite(ff, "0", 1, 0) < 0) {
			m.stage = STAGE_OPEN_FAILNTH;
			m.err = errno;
			goto report;
		}
		nlen = (size_t)snprintf(nbuf, sizeof(nbuf), "%u", n);
		(void)write_all(y->out_fd, line,
				   fn_format_begin(line, sizeof(line), p, n, getpid()));
		errno = 0;
		if (pwrite(ff, nbuf, nlen, 0) != (ssize_t)nlen) {
			m.stage = STAGE_ARM;
			m.err = errno;
			goto report;
		}
	}
	k = write(fa, intf, ilen);
	m.err = k < 0 ? errno : 0;
	if (n > 0) {
		k = pread(ff, rbuf, sizeof(rbuf) - 1, 0);
		m.read_err = k < 0 ? errno : 0;
		(void)pwrite(ff, "0", 1, 0);
		if (k > 0) {
			char *end;

			rbuf[k] = '\0';
			m.left = strtoul(rbuf, &end, 10);
			m.left_ok = end != rbuf;
		}
	}
	m.stage = STAGE_DONE;
report:
	(void)write_all(wfd, (const char *)&m, sizeof(m));
	_exit(0);
}

static const char *stage_name(int stage)
{
	switch (stage) {
	case STAGE_OPEN_ATTR:
		return "open-attr";
	case STAGE_OPEN_FAILNTH:
		return "open-fail-nth";
	case STAGE_ARM:
		return "arm-fail-nth";
	default:
		return "unknown-stage";
	}
}

/* Wait for the child's message until the deadline: 1 got it, 0 eof, -1 timeout. */
static int wait_msg(int fd, struct child_msg *m, uint64_t deadline)
{
	size_t got = 0;

	while (got < sizeof(*m)) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		uint64_t now = now_ns();
		int ms, rc;
		ssize_t k;

		if (now >= deadline)
			return -1;
		ms = (int)min_u64((deadline - now + 999999) / 1000000, INT32_MAX);
		rc = poll(&pfd, 1, ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return 0;
		if (rc == 0)
			continue;
		k = read(fd, (char *)m + got, sizeof(*m) - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 0;
		got += (size_t)k;
	}
	return 1;
}

static int sys_write(void *ctx, const char *attr, const char *intf,
		     unsigned int n, enum fn_path p, struct fn_write *w)
{
	struct fn_sys *y = ctx;
	struct child_msg m;
	int pfd[2], st, rc;
	pid_t pid;

	memset(w, 0, sizeof(*w));
	memset(&m, 0, sizeof(m));
	w->injected = -1;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(w->died, sizeof(w->died), "pipe-errno-%d", errno);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(w->died, sizeof(w->died), "fork-errno-%d", errno);
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		child(y, attr, intf, n, p, pfd[1]);
	}
	close(pfd[1]);
	w->pid = (int)pid;
	rc = wait_msg(pfd[0], &m, now_ns() + (uint64_t)(y->timeout_s * 1e9));
	close(pfd[0]);
	if (rc < 0) {
		/* stuck in the kernel: SIGKILL only lands when it returns */
		kill(pid, SIGKILL);
		w->hung = true;
		snprintf(w->died, sizeof(w->died), "timeout");
		return -1;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (rc == 0) {
		if (WIFSIGNALED(st))
			snprintf(w->died, sizeof(w->died), "signal-%d", WTERMSIG(st));
		else
			snprintf(w->died, sizeof(w->died), "exit-%d-without-report",
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -1;
	}
	if (m.stage != STAGE_DONE) {
		snprintf(w->died, sizeof(w->died), "%s-errno-%d", stage_name(m.stage),
			 m.err);
		return -1;
	}
	w->err = m.err;
	if (n == 0)
		w->injected = 0;
	else if (m.left_ok)
		w->injected = m.left == 0;
	else
		w->injected = -1;	/* unreadable; judged unknown */
	return 0;
}

void fn_sys_ops(struct fn_sys *y, struct fn_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->ctx = y;
	ops->out_fd = y->out_fd;
	ops->bound = sys_bound;
	ops->write = sys_write;
	ops->settle = sys_settle;
}
