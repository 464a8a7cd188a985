// SPDX-License-Identifier: MIT
/*
 * fake-uvc: a fake UVC webcam on the usb-host side of usbredir, for QEMU's
 * usb-redir device.  It floods the status interrupt endpoint.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "device.h"

enum exit_code {
	EXIT_OK = 0,            /* signal, peer closed, or flood done */
	EXIT_RUNTIME = 1,       /* socket or protocol failure */
	EXIT_USAGE = 2,         /* bad command line */
};

struct options {
	const char *listen_path;
	int created_socket;     /* listen_path is ours to remove at exit */
	const char *connect_path;
	double connect_timeout;
	int exit_when_done;
	int dump_profile;
	struct fake_cfg dev;
};

/* Output is coalesced: the parser's per-packet writes land in `out` and
 * go to the socket in one send() per loop iteration. */
#define OUT_CAP (256 * 1024)

struct sock_io {
	int fd;
	int eof;
	int err;
	uint8_t *out;
	size_t out_len;
};

static const char usage_text[] =
"Usage: fake-uvc (--listen PATH | --connect PATH) [options]\n"
"       fake-uvc --dump-profile [--serial STR]\n"
"       fake-uvc --check-profile FILE\n"
"       fake-uvc --compare-capture PROFILE CAPTURED\n"
"\n"
"A fake high-speed UVC 1.1 webcam on the usb-host side of usbredir.  QEMU\n"
"attaches it with\n"
"  -device qemu-xhci,id=xhci -chardev socket,id=cam0,path=PATH\n"
"  -device usb-redir,chardev=cam0,bus=xhci.0\n"
"Once the guest opens the camera (uvcvideo starts the status URB), the\n"
"status interrupt endpoint is flooded with status packets.\n"
"\n"
"Transport:\n"
"  --listen PATH          create a unix socket at PATH, serve one connection\n"
"  --connect PATH         connect to a unix socket (QEMU server=on)\n"
"  --connect-timeout S    keep retrying the connect for S seconds (10)\n"
"Flood:\n"
"  --pattern P            control | button | mixed | malformed | random\n"
"                         (default control)\n"
"  --rate N|max           status packets per second (default max: the\n"
"                         endpoint's ceiling, 8000/s at bInterval 1)\n"
"  --seed N               seed for random and malformed values (default 1)\n"
"  --duration S           stop flooding S seconds after the first start\n"
"                         (a trailing 's' is accepted)\n"
"  --count N              stop flooding after N packets\n"
"  --exit-when-done       exit once duration/count is reached (default: keep\n"
"                         serving the idle camera until SIGTERM or close)\n"
"  --window N             at most N packets modelled as queued in QEMU (256)\n"
"  --guest-rate N         consumption rate of the queue model (ceiling)\n"
"  --batch-ms MS          flood wakeup period in milliseconds (2)\n"
"  --serial STR           the camera's serial number string (DMAH-0001);\n"
"                         give each camera its own when running several\n"
"  --xu-selector0         let malformed/random send value events for the\n"
"                         extension unit's selector 0 (see README)\n"
"Hotplug:\n"
"  --hotplug S            unplug the camera S seconds after the flood first\n"
"                         starts, then S seconds after each replug ...\n"
"  --hotplug-off S        ... and plug it back S seconds later (0.5)\n"
"Profiles (profiles/FORMAT.md):\n"
"  --profile FILE         serve the device FILE describes instead of the\n"
"                         built-in camera: its descriptors, its answers,\n"
"                         and each interrupt IN endpoint flooded as its\n"
"                         `interrupt` lines say (--rate, --seed, --count,\n"
"                         --duration apply to each endpoint; --pattern\n"
"                         and --xu-selector0 do not)\n"
"  --bulk-in hold|random|zero\n"
"                         --profile: answer the guest's bulk IN reads with\n"
"                         one packet of random bytes or zeros each, paced\n"
"                         by --rate for --duration (hold, the default: a\n"
"                         quiet device, reads stay in flight)\n"
"  --check-profile FILE   load FILE, report the first error (FILE:LINE:\n"
"                         ...) and exit: 0 valid, 2 not\n"
"  --dump-profile         write the built-in camera as a profile (what a\n"
"                         capture of it reads) to stdout and exit\n"
"  --compare-capture PROFILE CAPTURED\n"
"                         is CAPTURED (dmaharness-capture of a device\n"
"                         replaying PROFILE) faithful?  Compares what a\n"
"                         capture can give back (FORMAT.md, the round trip);\n"
"                         exit 0 same, 1 not (the statements that differ on\n"
"                         stdout), 2 a file does not load\n"
"Other:\n"
"  -v, --verbose          more log on stderr (repeat for more)\n"
"  -q, --quiet            errors only\n"
"  -h, --help             this text\n"
"  -V, --version          version\n"
"\n"
"Counters: one JSON line on stdout at exit and on SIGUSR1.\n"
"Exit status: 0 SIGTERM/SIGINT, peer closed or flood done; 1 runtime\n"
"error; 2 usage error.\n";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_double(const char *s, double *out, int allow_suffix_s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno)
		return -1;
	if (allow_suffix_s && *end == 's')
		end++;
	if (*end || !isfinite(v) || v < 0)
		return -1;
	*out = v;
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (end == s || *end || errno)
		return -1;
	*out = v;
	return 0;
}

static int compare_capture(const char *orig_path, const char *cap_path);

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "fake-uvc: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'fake-uvc --help'.\n");
	return EXIT_USAGE;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum {
		OPT_LISTEN = 256, OPT_CONNECT, OPT_CONNECT_TIMEOUT, OPT_PATTERN,
		OPT_RATE, OPT_SEED, OPT_DURATION, OPT_COUNT, OPT_EXIT_DONE,
		OPT_WINDOW, OPT_GUEST_RATE, OPT_BATCH, OPT_XU0, OPT_HOTPLUG,
		OPT_HOTPLUG_OFF, OPT_SERIAL, OPT_PROFILE, OPT_CHECK_PROFILE,
		OPT_DUMP_PROFILE, OPT_COMPARE, OPT_BULK_IN,
	};
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "connect", required_argument, NULL, OPT_CONNECT },
		{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
		{ "pattern", required_argument, NULL, OPT_PATTERN },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "exit-when-done", no_argument, NULL, OPT_EXIT_DONE },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "guest-rate", required_argument, NULL, OPT_GUEST_RATE },
		{ "batch-ms", required_argument, NULL, OPT_BATCH },
		{ "xu-selector0", no_argument, NULL, OPT_XU0 },
		{ "serial", required_argument, NULL, OPT_SERIAL },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "bulk-in", required_argument, NULL, OPT_BULK_IN },
		{ "check-profile", required_argument, NULL, OPT_CHECK_PROFILE },
		{ "dump-profile", no_argument, NULL, OPT_DUMP_PROFILE },
		{ "compare-capture", required_argument, NULL, OPT_COMPARE },
		{ "hotplug", required_argument, NULL, OPT_HOTPLUG },
		{ "hotplug-off", required_argument, NULL, OPT_HOTPLUG_OFF },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct flood_cfg *fc = &o->dev.flood;
	uint64_t u;
	double v;
	int c;

	memset(o, 0, sizeof(*o));
	o->connect_timeout = 10;
	fc->pattern = PATTERN_CONTROL;
	fc->seed = 1;
	fc->window = 256;
	o->dev.hotplug_off = 0.5;
	o->dev.batch = 0.002;
	o->dev.max_buffered = 1u << 20;
	o->dev.verbose = 1;
	o->dev.log = stderr;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "vqhV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_LISTEN:
			o->listen_path = optarg;
			break;
		case OPT_CONNECT:
			o->connect_path = optarg;
			break;
		case OPT_CONNECT_TIMEOUT:
			if (parse_double(optarg, &o->connect_timeout, 1))
				return usage_error("bad --connect-timeout '%s'",
						   optarg);
			break;
		case OPT_PATTERN:
			if (flood_pattern_parse(optarg, &fc->pattern))
				return usage_error("unknown pattern '%s' (control, "
						   "button, mixed, malformed, random)",
						   optarg);
			break;
		case OPT_RATE:
			if (strcmp(optarg, "max") == 0) {
				fc->rate = 0;
			} else if (parse_double(optarg, &v, 0) || v <= 0) {
				return usage_error("bad --rate '%s' (N per second "
						   "or max)", optarg);
			} else {
				fc->rate = v;
			}
			break;
		case OPT_SEED:
			if (parse_u64(optarg, &fc->seed))
				return usage_error("bad --seed '%s'", optarg);
			break;
		case OPT_DURATION:
			if (parse_double(optarg, &fc->duration, 1) ||
			    fc->duration <= 0)
				return usage_error("bad --duration '%s' (seconds)",
						   optarg);
			break;
		case OPT_COUNT:
			if (parse_u64(optarg, &fc->count) || fc->count == 0)
				return usage_error("bad --count '%s'", optarg);
			break;
		case OPT_EXIT_DONE:
			o->exit_when_done = 1;
			break;
		case OPT_WINDOW:
			if (parse_u64(optarg, &u) || u == 0 || u > 100000)
				return usage_error("bad --window '%s' (1-100000)",
						   optarg);
			fc->window = (unsigned)u;
			break;
		case OPT_GUEST_RATE:
			if (parse_double(optarg, &fc->guest_rate, 0) ||
			    fc->guest_rate <= 0)
				return usage_error("bad --guest-rate '%s'", optarg);
			break;
		case OPT_BATCH:
			if (parse_double(optarg, &v, 0) || v < 0.05 || v > 1000)
				return usage_error("bad --batch-ms '%s' (0.05-1000)",
						   optarg);
			o->dev.batch = v / 1000.0;
			break;
		case OPT_XU0:
			fc->xu_selector0 = 1;
			break;
		case OPT_SERIAL: {
			struct cam_descriptors probe;

			if (cam_descriptors_build(&probe, optarg) < 0)
				return usage_error("bad --serial '%s' (1-32 "
						   "printable ASCII characters)",
						   optarg);
			o->dev.serial = optarg;
			break;
		}
		case OPT_PROFILE:
		case OPT_CHECK_PROFILE: {
			struct profile prof;
			char err[512];

			if (profile_load_file(optarg, &prof, err, sizeof(err)) < 0) {
				fprintf(stderr, "fake-uvc: %s\n", err);
				exit(EXIT_USAGE);
			}
			profile_free(&prof);
			if (c == OPT_CHECK_PROFILE)
				exit(EXIT_OK);
			o->dev.profile = optarg;
			break;
		}
		case OPT_DUMP_PROFILE:
			o->dump_profile = 1;
			break;
		case OPT_BULK_IN:
			if (strcmp(optarg, "hold") == 0)
				o->dev.bulk_in = 0;
			else if (strcmp(optarg, "random") == 0)
				o->dev.bulk_in = 1;
			else if (strcmp(optarg, "zero") == 0)
				o->dev.bulk_in = 2;
			else
				return usage_error("bad --bulk-in '%s' (hold, random, zero)", optarg);
			break;
		case OPT_COMPARE:
			if (optind >= argc)
				return usage_error("%s--compare-capture PROFILE CAPTURED: two files", "");
			exit(compare_capture(optarg, argv[optind]));
		case OPT_HOTPLUG:
			if (parse_double(optarg, &o->dev.hotplug_period, 1) ||
			    o->dev.hotplug_period < 0.1)
				return usage_error("bad --hotplug '%s' (seconds, "
						   ">= 0.1)", optarg);
			break;
		case OPT_HOTPLUG_OFF:
			if (parse_double(optarg, &o->dev.hotplug_off, 1))
				return usage_error("bad --hotplug-off '%s'", optarg);
			break;
		case 'v':
			o->dev.verbose++;
			break;
		case 'q':
			o->dev.verbose = 0;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(EXIT_OK);
		case 'V':
			printf("fake-uvc %s\n", FAKE_UVC_VERSION);
			exit(EXIT_OK);
		default:
			return usage_error("unknown or incomplete option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (o->dump_profile)
		return 0;
	if (!!o->listen_path == !!o->connect_path)
		return usage_error("%sexactly one of --listen PATH or "
				   "--connect PATH is required", "");
	return 0;
}

/* ---- Sockets ------------------------------------------------------------- */

static int make_addr(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path)) {
		fprintf(stderr, "fake-uvc: socket path too long (%zu bytes, "
			"max %zu): %s\n", strlen(path), sizeof(a->sun_path) - 1,
			path);
		return -1;
	}
	strcpy(a->sun_path, path);
	return 0;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Wait up to timeout_ms for @fd (may be -1: none) to be readable or for a
 * signal.  Returns 1 when fd is ready, 0 on timeout or signal (stored in
 * *sig), -1 on error. */
static int wait_fd_or_signal(int fd, int sfd, int timeout_ms, int *sig)
{
	struct pollfd p[2];
	nfds_t n = 0;
	int r;

	p[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	if (fd >= 0)
		p[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	r = poll(p, n, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -1;
	if (p[0].revents & POLLIN) {
		struct signalfd_siginfo si;

		if (read(sfd, &si, sizeof(si)) == sizeof(si))
			*sig = (int)si.ssi_signo;
		return 0;
	}
	return n > 1 && p[1].revents ? 1 : 0;
}

/* The socket appears at @path only once it accepts connections: it is
 * bound under a temporary name, put in listening state, then hard-linked to
 * @path (which fails rather than replace an existing file). */
static int listen_accept(const char *path, int sfd, int *sig, int *created)
{
	struct sockaddr_un a;
	struct stat stb;
	char tmp[sizeof(a.sun_path) + 16];
	int lfd, cfd;

	if (make_addr(path, &a) < 0)
		return -1;
	if (lstat(path, &stb) == 0) {
		fprintf(stderr, "fake-uvc: %s already exists; refusing to "
			"replace it\n", path);
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
	if (make_addr(tmp, &a) < 0)
		return -1;
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		fprintf(stderr, "fake-uvc: socket: %s\n", strerror(errno));
		return -1;
	}
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "fake-uvc: cannot create socket %s: %s\n", tmp,
			strerror(errno));
		close(lfd);
		return -1;
	}
	if (listen(lfd, 1) < 0 || link(tmp, path) < 0) {
		fprintf(stderr, "fake-uvc: cannot listen on %s: %s\n", path,
			strerror(errno));
		unlink(tmp);
		close(lfd);
		return -1;
	}
	unlink(tmp);
	*created = 1;
	for (;;) {
		int r = wait_fd_or_signal(lfd, sfd, -1, sig);

		if (r < 0) {
			fprintf(stderr, "fake-uvc: poll: %s\n", strerror(errno));
			close(lfd);
			return -1;
		}
		if (*sig == SIGTERM || *sig == SIGINT || *sig == SIGHUP) {
			close(lfd);
			return -2;
		}
		*sig = 0;
		if (r == 0)
			continue;
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd >= 0)
			break;
		if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
			fprintf(stderr, "fake-uvc: accept on %s: %s\n", path,
				strerror(errno));
			close(lfd);
			return -1;
		}
	}
	close(lfd);
	return cfd;
}

static int connect_retry(const char *path, double timeout, int sfd, int *sig)
{
	struct sockaddr_un a;
	double deadline = now_s() + timeout;

	if (make_addr(path, &a) < 0)
		return -1;
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			fprintf(stderr, "fake-uvc: socket: %s\n", strerror(errno));
			return -1;
		}
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		int e = errno;
		close(fd);
		if ((e != ENOENT && e != ECONNREFUSED) || now_s() >= deadline) {
			fprintf(stderr, "fake-uvc: cannot connect to %s: %s\n",
				path, strerror(e));
			return -1;
		}
		wait_fd_or_signal(-1, sfd, 50, sig);
		if (*sig == SIGTERM || *sig == SIGINT || *sig == SIGHUP)
			return -2;
		*sig = 0;
	}
}

static int sock_read(void *ctx, uint8_t *data, int count)
{
	struct sock_io *s = ctx;
	ssize_t n = recv(s->fd, data, (size_t)count, 0);

	if (n > 0)
		return (int)n;
	if (n == 0) {
		s->eof = 1;
		return -1;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return 0;
	s->err = errno;
	return -1;
}

/* Send what is buffered; 0 when all of it went (or would block), -1 on a
 * socket error (in s->err). */
static int sock_flush(struct sock_io *s)
{
	size_t done = 0;

	while (done < s->out_len) {
		ssize_t n = send(s->fd, s->out + done, s->out_len - done,
				 MSG_NOSIGNAL);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			s->err = errno;
			return -1;
		}
		break;
	}
	memmove(s->out, s->out + done, s->out_len - done);
	s->out_len -= done;
	return 0;
}

static int sock_write(void *ctx, uint8_t *data, int count)
{
	struct sock_io *s = ctx;
	size_t n = (size_t)count;

	if (s->err)
		return -1;
	if (s->out_len + n > OUT_CAP && sock_flush(s) < 0)
		return -1;
	if (s->out_len + n > OUT_CAP) {
		if (s->out_len)
			return 0;       /* would block: the parser keeps it */
		n = OUT_CAP;
	}
	memcpy(s->out + s->out_len, data, n);
	s->out_len += n;
	return (int)n;
}

/* ---- Main loop --------------------------------------------------------------- */

static int run(struct options *o, int sfd)
{
	struct sock_io sio = { .fd = -1, .out = malloc(OUT_CAP) };
	struct fake_io io = { &sio, sock_read, sock_write };
	struct fake_dev *d;
	const char *reason = "peer-closed";
	char err[128];
	int sig = 0, rc = EXIT_OK;

	if (o->listen_path)
		sio.fd = listen_accept(o->listen_path, sfd, &sig,
				       &o->created_socket);
	else
		sio.fd = connect_retry(o->connect_path, o->connect_timeout, sfd,
				       &sig);
	if (!sio.out) {
		fprintf(stderr, "fake-uvc: out of memory\n");
		return EXIT_RUNTIME;
	}
	if (sio.fd < 0)
		free(sio.out);
	if (sio.fd == -2)
		return EXIT_OK;         /* signalled before a peer came */
	if (sio.fd < 0)
		return EXIT_RUNTIME;
	if (set_nonblock(sio.fd) < 0) {
		fprintf(stderr, "fake-uvc: fcntl: %s\n", strerror(errno));
		close(sio.fd);
		free(sio.out);
		return EXIT_RUNTIME;
	}

	d = fake_dev_new(&o->dev, &io, now_s(), err, sizeof(err));
	if (!d) {
		fprintf(stderr, "fake-uvc: %s\n", err);
		close(sio.fd);
		free(sio.out);
		return EXIT_RUNTIME;
	}

	for (;;) {
		double now = now_s(), deadline;
		struct pollfd p[2] = {
			{ .fd = sio.fd, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		struct timespec ts, *tsp = NULL;

		fake_dev_tick(d, now);
		if (fake_dev_want_write(d))
			fake_dev_write(d);      /* errors land in sio.err */
		if (sio.out_len)
			sock_flush(&sio);
		if (sio.err) {
			if (sio.err == EPIPE || sio.err == ECONNRESET) {
				reason = "peer-closed";
			} else {
				fprintf(stderr, "fake-uvc: socket write: %s\n",
					strerror(sio.err));
				reason = "socket-error";
				rc = EXIT_RUNTIME;
			}
			break;
		}
		if (fake_dev_done(d) && o->exit_when_done &&
		    !fake_dev_want_write(d) && !sio.out_len) {
			reason = "flood-done";
			break;
		}
		if (fake_dev_want_write(d) || sio.out_len)
			p[0].events |= POLLOUT;

		deadline = fake_dev_deadline(d, now);
		if (deadline >= 0) {
			double dt = deadline - now_s();

			if (dt < 0)
				dt = 0;
			ts.tv_sec = (time_t)dt;
			ts.tv_nsec = (long)((dt - (double)ts.tv_sec) * 1e9);
			tsp = &ts;
		}
		if (ppoll(p, 2, tsp, NULL) < 0 && errno != EINTR) {
			fprintf(stderr, "fake-uvc: poll: %s\n", strerror(errno));
			reason = "poll-error";
			rc = EXIT_RUNTIME;
			break;
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGUSR1) {
					fake_dev_json(d, stdout, "stats",
						      "sigusr1", now_s());
				} else {
					reason = si.ssi_signo == SIGINT ?
						 "sigint" : si.ssi_signo == SIGHUP ?
						 "sighup" : "sigterm";
					break;
				}
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (fake_dev_read(d, now_s()) < 0) {
				if (sio.eof || sio.err == ECONNRESET) {
					reason = "peer-closed";
				} else {
					fprintf(stderr, "fake-uvc: socket read: "
						"%s\n", sio.err ?
						strerror(sio.err) : "error");
					reason = "socket-error";
					rc = EXIT_RUNTIME;
				}
				break;
			}
		}
	}

	/* Best effort: flush what is queued (e.g. the last replies). */
	if (!sio.eof && !sio.err) {
		if (fake_dev_want_write(d))
			fake_dev_write(d);
		sock_flush(&sio);
	}
	fake_dev_json(d, stdout, "exit", reason, now_s());
	if (d->cfg.verbose >= 2)
		fprintf(stderr, "fake-uvc: exiting: %s\n", reason);
	fake_dev_free(d);
	close(sio.fd);
	free(sio.out);
	return rc;
}

/* Each statement line of @p's canonical text, for a line diff. */
static char *canonical(const struct profile *p, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	profile_write(f, p);
	fclose(f);
	return text;
}

static int has_line(const char *text, const char *line, size_t n)
{
	for (const char *s = text; s && *s;) {
		const char *e = strchr(s, '\n');
		size_t m = e ? (size_t)(e - s) : strlen(s);

		if (m == n && !memcmp(s, line, n))
			return 1;
		s = e ? e + 1 : NULL;
	}
	return 0;
}

/* Lines of @a that @b lacks, prefixed with @mark; comments skipped. */
static void missing_lines(const char *a, const char *b, char mark)
{
	for (const char *s = a; s && *s;) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if (n && s[0] != '#' && !has_line(b, s, n))
			printf("%c %.*s\n", mark, (int)n, s);
		s = e ? e + 1 : NULL;
	}
}

static int compare_capture(const char *orig_path, const char *cap_path)
{
	struct profile orig, want, got;
	char err[512];
	int rc = EXIT_USAGE;

	if (profile_load_file(orig_path, &orig, err, sizeof(err)) < 0) {
		fprintf(stderr, "fake-uvc: %s\n", err);
		return EXIT_USAGE;
	}
	if (profile_load_file(orig_path, &want, err, sizeof(err)) < 0 ||
	    profile_load_file(cap_path, &got, err, sizeof(err)) < 0) {
		fprintf(stderr, "fake-uvc: %s\n", err);
		profile_free(&orig);
		profile_free(&want);
		return EXIT_USAGE;
	}
	if (plan_comparable(&want, &orig) == 0 && plan_comparable(&got, &orig) == 0) {
		if (profile_equal(&want, &got)) {
			printf("same: %s is what a capture of %s gives back\n", cap_path, orig_path);
			rc = EXIT_OK;
		} else {
			size_t la, lb;
			char *a = canonical(&want, &la), *b = canonical(&got, &lb);

			printf("differs: - %s, + %s (statements a capture reads)\n", orig_path,
			       cap_path);
			missing_lines(a, b, '-');
			missing_lines(b, a, '+');
			free(a);
			free(b);
			rc = EXIT_RUNTIME;
		}
	}
	profile_free(&orig);
	profile_free(&want);
	profile_free(&got);
	return rc;
}

static int dump_profile(const char *serial)
{
	struct plan_report rep;
	struct profile p;
	char err[256];

	if (builtin_profile(&p, serial, &rep, err, sizeof(err)) < 0) {
		fprintf(stderr, "fake-uvc: %s\n", err);
		return EXIT_RUNTIME;
	}
	if (rep.failed)
		fprintf(stderr, "fake-uvc: %s", rep.failures);
	if (profile_validate(&p, err, sizeof(err)) < 0) {
		fprintf(stderr, "fake-uvc: the built-in camera's profile does not validate: %s\n",
			err);
		profile_free(&p);
		return EXIT_RUNTIME;
	}
	if (profile_write(stdout, &p) < 0 || fflush(stdout) != 0) {
		fprintf(stderr, "fake-uvc: cannot write the profile: %s\n", strerror(errno));
		profile_free(&p);
		return EXIT_RUNTIME;
	}
	profile_free(&p);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	struct options o;
	sigset_t mask;
	int sfd, rc;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	if (o.dump_profile)
		return dump_profile(o.dev.serial);

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
		fprintf(stderr, "fake-uvc: sigprocmask: %s\n", strerror(errno));
		return EXIT_RUNTIME;
	}
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "fake-uvc: signalfd: %s\n", strerror(errno));
		return EXIT_RUNTIME;
	}

	rc = run(&o, sfd);
	if (o.created_socket)
		unlink(o.listen_path);
	close(sfd);
	return rc;
}
