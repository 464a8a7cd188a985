// SPDX-License-Identifier: GPL-2.0-only
/*
 * dmaharness-agent: guest-side load generator and counter for the fake UVC
 * camera.
 *
 * It runs inside the busybox initramfs as a child of PID 1.  It opens the
 * camera's /dev/videoN (uvcvideo only runs its status interrupt URB while a
 * file handle is open), subscribes to V4L2 control events for every control,
 * counts them (using the events' sequence numbers to also count what the
 * driver emitted but the one-element per-control event queue dropped), reads
 * the camera's input device and counts key events, reads the input device's
 * phys string with EVIOCGPHYS at a configured rate, cycles close/open of the
 * video node at a configured rate, survives the camera disconnecting and
 * coming back, and prints one line `DMAHARNESS-AGENT {json}` at the end.
 *
 * Layout: pure logic first (JSON writer, argument parsing, sequence-gap
 * counting, rate scheduling, per-second series, error table, control table),
 * unit-tested by tests/test_agent.c, which includes this file with
 * DMAHARNESS_AGENT_TEST defined; then the device I/O and main().
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <linux/input.h>
#include <linux/videodev2.h>

#define AGENT_NAME		"dmaharness-agent"
#define AGENT_JSON_VERSION	1
#define AGENT_LINE_PREFIX	"DMAHARNESS-AGENT "
#define AGENT_TICK_PREFIX	"DMAHARNESS-AGENT-TICK "

/* Exit codes (documented in --help, stable). */
enum {
	EXIT_AGENT_OK = 0,
	EXIT_AGENT_RUNTIME = 1,	/* a camera was found but could not be used */
	EXIT_AGENT_NO_CAMERA = 2,	/* no camera appeared within --wait */
	EXIT_AGENT_FEWER = 3,	/* fewer cameras than --cameras appeared */
	EXIT_AGENT_USAGE = 64,	/* bad command line */
};

/* Functions only main() uses (the unit-test build has no main). */
#ifdef DMAHARNESS_AGENT_TEST
#define MAIN_ONLY __attribute__((unused))
#else
#define MAIN_ONLY
#endif

#define MAX_CAMERAS		8
#define MAX_CTRLS		128
#define MAX_ERRS		48
#define JW_MAX_DEPTH		16
#define NSEC_PER_SEC		1000000000ULL
#define INPUT_GRACE_NS		(2 * NSEC_PER_SEC)

/* Limits for options. */
#define MAX_DURATION_S		(7.0 * 24 * 3600)
#define MAX_HZ			1000000.0

/* ------------------------------------------------------------------------
 * JSON writer
 */

enum jw_kind { JW_TOP, JW_OBJECT, JW_ARRAY };

struct jw {
	char *buf;
	size_t len;
	size_t cap;
	unsigned int depth;
	enum jw_kind kind[JW_MAX_DEPTH];
	bool first[JW_MAX_DEPTH];
	bool failed;		/* out of memory or misuse; output invalid */
};

static void jw_init(struct jw *w)
{
	memset(w, 0, sizeof(*w));
	w->kind[0] = JW_TOP;
	w->first[0] = true;
}

static void jw_free(struct jw *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

static void jw_raw(struct jw *w, const char *s, size_t n)
{
	if (w->failed)
		return;
	if (w->len + n + 1 > w->cap) {
		size_t ncap = w->cap ? w->cap : 256;
		char *nb;

		while (ncap < w->len + n + 1)
			ncap *= 2;
		nb = realloc(w->buf, ncap);
		if (!nb) {
			w->failed = true;
			return;
		}
		w->buf = nb;
		w->cap = ncap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void jw_rawf(struct jw *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void jw_rawf(struct jw *w, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		w->failed = true;
		return;
	}
	jw_raw(w, tmp, (size_t)n);
}

/*
 * Length of the valid UTF-8 sequence at s (at most avail bytes), or 0 when
 * the bytes there are not valid UTF-8 (overlong forms, surrogates and code
 * points above U+10FFFF are invalid).
 */
static size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (avail < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/* Write s as a JSON string; invalid UTF-8 bytes become U+FFFD. */
static void jw_quoted(struct jw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);

	jw_raw(w, "\"", 1);
	while (left > 0) {
		unsigned char c = *p;
		size_t n;

		switch (c) {
		case '"':
			jw_raw(w, "\\\"", 2);
			break;
		case '\\':
			jw_raw(w, "\\\\", 2);
			break;
		case '\n':
			jw_raw(w, "\\n", 2);
			break;
		case '\r':
			jw_raw(w, "\\r", 2);
			break;
		case '\t':
			jw_raw(w, "\\t", 2);
			break;
		case '\b':
			jw_raw(w, "\\b", 2);
			break;
		case '\f':
			jw_raw(w, "\\f", 2);
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				jw_rawf(w, "\\u%04x", c);
				break;
			}
			n = utf8_seq_len(p, left);
			if (n == 0) {
				jw_raw(w, "\\ufffd", 6);
				break;
			}
			jw_raw(w, (const char *)p, n);
			p += n;
			left -= n;
			continue;
		}
		p++;
		left--;
	}
	jw_raw(w, "\"", 1);
}

/* Separator and key before a value; marks misuse (key in array etc.). */
static void jw_prefix(struct jw *w, const char *key)
{
	unsigned int d = w->depth;

	if (w->kind[d] == JW_OBJECT) {
		if (!key) {
			w->failed = true;
			return;
		}
	} else if (key || (w->kind[d] == JW_TOP && !w->first[d])) {
		/* keys only in objects; a single top-level value */
		w->failed = true;
		return;
	}
	if (!w->first[d])
		jw_raw(w, ",", 1);
	w->first[d] = false;
	if (key) {
		jw_quoted(w, key);
		jw_raw(w, ":", 1);
	}
}

static void jw_open(struct jw *w, const char *key, enum jw_kind kind)
{
	jw_prefix(w, key);
	if (w->failed)
		return;
	if (w->depth + 1 >= JW_MAX_DEPTH) {
		w->failed = true;
		return;
	}
	jw_raw(w, kind == JW_OBJECT ? "{" : "[", 1);
	w->depth++;
	w->kind[w->depth] = kind;
	w->first[w->depth] = true;
}

static void jw_close(struct jw *w, enum jw_kind kind)
{
	if (w->failed)
		return;
	if (w->depth == 0 || w->kind[w->depth] != kind) {
		w->failed = true;
		return;
	}
	jw_raw(w, kind == JW_OBJECT ? "}" : "]", 1);
	w->depth--;
}

static void jw_obj(struct jw *w, const char *key) { jw_open(w, key, JW_OBJECT); }
static void jw_obj_end(struct jw *w) { jw_close(w, JW_OBJECT); }
static void jw_arr(struct jw *w, const char *key) { jw_open(w, key, JW_ARRAY); }
static void jw_arr_end(struct jw *w) { jw_close(w, JW_ARRAY); }

static void jw_null(struct jw *w, const char *key)
{
	jw_prefix(w, key);
	jw_raw(w, "null", 4);
}

static void jw_str(struct jw *w, const char *key, const char *s)
{
	if (!s) {
		jw_null(w, key);
		return;
	}
	jw_prefix(w, key);
	jw_quoted(w, s);
}

static void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	jw_prefix(w, key);
	jw_rawf(w, "%" PRIu64, v);
}

static void jw_i64(struct jw *w, const char *key, int64_t v)
{
	jw_prefix(w, key);
	jw_rawf(w, "%" PRId64, v);
}

static void jw_bool(struct jw *w, const char *key, bool v)
{
	jw_prefix(w, key);
	jw_raw(w, v ? "true" : "false", v ? 4 : 5);
}

/* Fixed-point number with `decimals` digits; NaN and infinities are null. */
static void jw_dbl(struct jw *w, const char *key, double v, int decimals)
{
	if (v != v || v > 1e300 || v < -1e300) {
		jw_null(w, key);
		return;
	}
	jw_prefix(w, key);
	jw_rawf(w, "%.*f", decimals, v);
}

/* True when a complete, well-formed document has been written. */
static bool jw_done(const struct jw *w)
{
	return !w->failed && w->depth == 0 && !w->first[0];
}

/* ------------------------------------------------------------------------
 * Options
 */

struct options {
	double duration_s;
	double wait_s;
	double cycle_hz;
	double phys_hz;
	double batch_s;
	unsigned int cameras;
	unsigned int ndevices;
	const char *devices[MAX_CAMERAS];
	const char *output;
	bool series;
	bool live;
	bool initial;
	bool help;
};

static const char usage_text[] =
"Usage: " AGENT_NAME " [OPTIONS]\n"
"\n"
"Drive uvcvideo cameras the way applications do and count what happens:\n"
"open /dev/videoN (the status URB runs only while it is open), subscribe to\n"
"V4L2_EVENT_CTRL for every control and count events (dequeued, and emitted\n"
"according to the events' sequence numbers), count key events on the\n"
"camera's input device, read its phys string with EVIOCGPHYS, and cycle\n"
"close/open.  A camera that disconnects is reopened when it comes back.\n"
"At the end one line `" AGENT_LINE_PREFIX "{json}` goes to stdout.\n"
"\n"
"Options (VALUE may also be given as --option=VALUE):\n"
"  --duration SECONDS  run time after the cameras appeared (default 10;\n"
"                      suffixes s, ms, m accepted: 20s, 500ms, 2m)\n"
"  --wait SECONDS      how long to wait for the cameras to appear (default 30)\n"
"  --cycle-hz HZ       close and reopen each video node HZ times per second,\n"
"                      re-subscribing after each open (default 0: never)\n"
"  --phys-hz HZ        EVIOCGPHYS reads of each input device per second\n"
"                      (default 0: never)\n"
"  --batch SECONDS     after a wake-up that found events, wait this long before\n"
"                      polling again, then read everything queued (default 0:\n"
"                      wake for every event).  Fewer wake-ups leave the guest's\n"
"                      CPU to the driver; V4L2 events are still all counted\n"
"                      (sequence numbers), key events as long as the input\n"
"                      device's buffer (64 events) does not overflow\n"
"                      (syn_dropped counts that); at most 1 s, e.g. 2ms\n"
"  --cameras N         wait for and drive N uvcvideo cameras (1..8, default 1)\n"
"  --device PATH       use this video node instead of scanning /dev/video*;\n"
"                      repeat for several cameras (sets --cameras)\n"
"  --initial           subscribe with V4L2_EVENT_SUB_FL_SEND_INITIAL (the\n"
"                      driver reads every control on each subscription)\n"
"  --series            include per-second series in the JSON\n"
"  --live              print `" AGENT_TICK_PREFIX "{json}` to stderr every second\n"
"  --output PATH       also write the result line to PATH (e.g. a virtio\n"
"                      console, away from kernel messages on the serial console)\n"
"  -h, --help          show this help and exit\n"
"\n"
"Cameras are found by VIDIOC_QUERYCAP: driver \"uvcvideo\" with the\n"
"video-capture capability (the metadata node is skipped).  A camera that\n"
"comes back is recognised by its bus_info (USB port path).  The input device\n"
"is the /dev/input/eventN whose phys is \"<bus_info>/button\".\n"
"\n"
"Exit status: 0 success; 1 a camera was found but could not be driven;\n"
"2 no camera appeared within --wait; 3 fewer cameras than --cameras appeared\n"
"(the run still happens with those found); 64 bad command line.\n"
"The JSON line is printed in every case except --help; on failure it has an\n"
"\"error\" string, otherwise \"error\" is null.  Its fields (JSON version\n"
"1) are described in harness/guest/agent.c, section Output.\n";

static void options_default(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->duration_s = 10.0;
	o->wait_s = 30.0;
	o->cameras = 1;
}

/* Seconds with an optional suffix s, ms or m; finite, >= 0, <= max. */
static int parse_seconds(const char *s, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -1;
	if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
		;
	else if (strcmp(end, "ms") == 0)
		v /= 1000.0;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		v *= 60.0;
	else
		return -1;
	if (!(v >= 0.0) || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A rate in Hz, optionally suffixed "hz" or "/s"; 0 disables. */
static int parse_hz(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -1;
	if (*end && strcasecmp(end, "hz") != 0 && strcmp(end, "/s") != 0)
		return -1;
	if (!(v >= 0.0) || v > MAX_HZ)
		return -1;
	*out = v;
	return 0;
}

static int parse_uint(const char *s, unsigned int lo, unsigned int hi,
		      unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

/*
 * Parse argv into o (which the caller filled with defaults).  Returns 0 on
 * success (o->help set for --help) or -1 with a message in err.
 */
static int parse_args(int argc, char **argv, struct options *o,
		      char *err, size_t errlen)
{
	bool cameras_given = false;
	int i;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = NULL;
		char name[32];
		const char *eq;
		bool flag;

		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			o->help = true;
			return 0;
		}
		if (strncmp(arg, "--", 2) != 0) {
			snprintf(err, errlen, "unexpected argument '%s'", arg);
			return -1;
		}
		eq = strchr(arg, '=');
		if (eq) {
			size_t n = (size_t)(eq - arg);

			if (n >= sizeof(name)) {
				snprintf(err, errlen, "unknown option '%s'", arg);
				return -1;
			}
			memcpy(name, arg, n);
			name[n] = '\0';
			val = eq + 1;
		} else {
			snprintf(name, sizeof(name), "%s", arg);
			if (strlen(arg) >= sizeof(name)) {
				snprintf(err, errlen, "unknown option '%s'", arg);
				return -1;
			}
		}

		flag = strcmp(name, "--series") == 0 ||
		       strcmp(name, "--live") == 0 ||
		       strcmp(name, "--initial") == 0;
		if (flag) {
			if (val) {
				snprintf(err, errlen, "%s takes no value", name);
				return -1;
			}
			if (strcmp(name, "--series") == 0)
				o->series = true;
			else if (strcmp(name, "--live") == 0)
				o->live = true;
			else
				o->initial = true;
			continue;
		}
		if (strcmp(name, "--duration") && strcmp(name, "--wait") &&
		    strcmp(name, "--cycle-hz") && strcmp(name, "--phys-hz") &&
		    strcmp(name, "--cameras") && strcmp(name, "--device") &&
		    strcmp(name, "--output") && strcmp(name, "--batch")) {
			snprintf(err, errlen, "unknown option '%s' (see --help)",
				 name);
			return -1;
		}
		if (!val) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "%s needs a value", name);
				return -1;
			}
			val = argv[++i];
		}

		if (strcmp(name, "--duration") == 0) {
			if (parse_seconds(val, MAX_DURATION_S, &o->duration_s)) {
				snprintf(err, errlen,
					 "--duration: '%s' is not a duration between 0 and %.0f seconds (e.g. 20, 20s, 500ms, 2m)",
					 val, MAX_DURATION_S);
				return -1;
			}
		} else if (strcmp(name, "--wait") == 0) {
			if (parse_seconds(val, MAX_DURATION_S, &o->wait_s)) {
				snprintf(err, errlen,
					 "--wait: '%s' is not a duration between 0 and %.0f seconds",
					 val, MAX_DURATION_S);
				return -1;
			}
		} else if (strcmp(name, "--batch") == 0) {
			if (parse_seconds(val, 1.0, &o->batch_s)) {
				snprintf(err, errlen,
					 "--batch: '%s' is not a time between 0 and 1 second (e.g. 2ms)",
					 val);
				return -1;
			}
		} else if (strcmp(name, "--cycle-hz") == 0 ||
			   strcmp(name, "--phys-hz") == 0) {
			double *dst = strcmp(name, "--cycle-hz") == 0 ?
				      &o->cycle_hz : &o->phys_hz;

			if (parse_hz(val, dst)) {
				snprintf(err, errlen,
					 "%s: '%s' is not a rate between 0 and %.0f Hz",
					 name, val, MAX_HZ);
				return -1;
			}
		} else if (strcmp(name, "--cameras") == 0) {
			if (parse_uint(val, 1, MAX_CAMERAS, &o->cameras)) {
				snprintf(err, errlen,
					 "--cameras: '%s' is not a number between 1 and %d",
					 val, MAX_CAMERAS);
				return -1;
			}
			cameras_given = true;
		} else if (strcmp(name, "--device") == 0) {
			if (!*val) {
				snprintf(err, errlen, "--device: empty path");
				return -1;
			}
			if (o->ndevices >= MAX_CAMERAS) {
				snprintf(err, errlen,
					 "--device: at most %d devices",
					 MAX_CAMERAS);
				return -1;
			}
			o->devices[o->ndevices++] = val;
		} else { /* --output */
			if (!*val) {
				snprintf(err, errlen, "--output: empty path");
				return -1;
			}
			o->output = val;
		}
	}

	if (o->ndevices > 0) {
		if (cameras_given && o->cameras != o->ndevices) {
			snprintf(err, errlen,
				 "--cameras %u contradicts %u --device option(s)",
				 o->cameras, o->ndevices);
			return -1;
		}
		o->cameras = o->ndevices;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Event sequence tracking
 *
 * v4l2 numbers the events queued on one file handle 0, 1, 2, ... (the
 * counter starts at -1 in v4l2_fh_init and is incremented before each queued
 * event, also for events that later get replaced).  uvcvideo subscribes with
 * one element per control, so an event not dequeued before the next one for
 * the same control is overwritten: the dequeued numbers then have gaps.  A
 * session is one open file handle; the numbering restarts on each open.
 */

struct seqtrack {
	bool have;		/* an event was seen in this session */
	uint32_t last;		/* its sequence number */
	uint64_t dequeued;	/* totals over all sessions */
	uint64_t emitted;
	uint64_t dropped;
	uint64_t anomalies;	/* duplicate or backwards numbers */
	uint64_t max_session_emitted;
};

struct seq_delta {
	uint64_t emitted;
	uint64_t dropped;
};

static void seqtrack_new_session(struct seqtrack *t)
{
	t->have = false;
	t->last = 0;
}

static struct seq_delta seqtrack_feed(struct seqtrack *t, uint32_t seq)
{
	struct seq_delta d = { 0, 0 };

	t->dequeued++;
	if (!t->have) {
		/* events 0 .. seq-1 were emitted and overwritten */
		d.emitted = (uint64_t)seq + 1;
		d.dropped = seq;
		t->have = true;
	} else {
		uint32_t step = seq - t->last;	/* modulo 2^32 */

		if (step == 0 || step >= 0x80000000u) {
			t->anomalies++;
			return d;
		}
		d.emitted = step;
		d.dropped = step - 1;
	}
	t->last = seq;
	t->emitted += d.emitted;
	t->dropped += d.dropped;
	return d;
}

/* ------------------------------------------------------------------------
 * Rate scheduling
 *
 * A ticker fires every period on a fixed grid from its start.  When the
 * caller falls behind, at most max_burst due ticks are returned at once and
 * the rest are counted as skipped (so the achieved rate stays visible).
 */

struct ticker {
	bool on;
	uint64_t period_ns;
	uint64_t next_ns;
	uint64_t fired;
	uint64_t skipped;
};

static void ticker_init(struct ticker *t, double hz, uint64_t now_ns)
{
	memset(t, 0, sizeof(*t));
	if (!(hz > 0.0))
		return;
	t->on = true;
	t->period_ns = (uint64_t)(1e9 / hz + 0.5);
	if (t->period_ns == 0)
		t->period_ns = 1;
	t->next_ns = now_ns + t->period_ns;
}

static uint64_t ticker_due(struct ticker *t, uint64_t now_ns,
			   uint64_t max_burst)
{
	uint64_t n;

	if (!t->on || now_ns < t->next_ns)
		return 0;
	n = (now_ns - t->next_ns) / t->period_ns + 1;
	t->next_ns += n * t->period_ns;
	if (max_burst && n > max_burst) {
		t->skipped += n - max_burst;
		n = max_burst;
	}
	t->fired += n;
	return n;
}

/* Nanoseconds until the next tick (0 when due, UINT64_MAX when off). */
static uint64_t ticker_wait_ns(const struct ticker *t, uint64_t now_ns)
{
	if (!t->on)
		return UINT64_MAX;
	return t->next_ns > now_ns ? t->next_ns - now_ns : 0;
}

/* ------------------------------------------------------------------------
 * Per-second series
 */

struct bucket {
	uint64_t dequeued;
	uint64_t emitted;
	uint64_t dropped;
	uint64_t keys;
	uint64_t phys_reads;
	uint64_t cycles;
	uint64_t disconnects;
};

struct series {
	uint64_t start_ns;
	struct bucket *b;
	size_t n;		/* buckets in use */
	size_t cap;
	struct bucket spill;	/* target when allocation fails */
	bool oom;
};

static void series_init(struct series *s, uint64_t start_ns)
{
	memset(s, 0, sizeof(*s));
	s->start_ns = start_ns;
}

static void series_free(struct series *s)
{
	free(s->b);
	s->b = NULL;
	s->n = s->cap = 0;
}

/* The bucket for time now_ns (times before the start go to bucket 0). */
static struct bucket *series_at(struct series *s, uint64_t now_ns)
{
	size_t idx = now_ns > s->start_ns ?
		     (size_t)((now_ns - s->start_ns) / NSEC_PER_SEC) : 0;

	if (idx >= s->cap) {
		size_t ncap = s->cap ? s->cap : 64;
		struct bucket *nb;

		while (ncap <= idx)
			ncap *= 2;
		nb = realloc(s->b, ncap * sizeof(*nb));
		if (!nb) {
			s->oom = true;
			return &s->spill;
		}
		memset(nb + s->cap, 0, (ncap - s->cap) * sizeof(*nb));
		s->b = nb;
		s->cap = ncap;
	}
	if (idx >= s->n)
		s->n = idx + 1;
	return &s->b[idx];
}

/* ------------------------------------------------------------------------
 * Error table: one record per (operation, errno), with the first context.
 */

struct errrec {
	const char *op;		/* static string */
	int err;
	uint64_t count;
	double first_t;		/* seconds since agent start */
	char first_ctx[96];
};

struct errtab {
	struct errrec e[MAX_ERRS];
	size_t n;
	uint64_t total;
	uint64_t unrecorded;	/* errors beyond MAX_ERRS distinct kinds */
};

/* Returns true the first time this (op, err) is seen. */
static bool errtab_add(struct errtab *t, const char *op, int err,
		       const char *ctx, double t_s)
{
	size_t i;

	t->total++;
	for (i = 0; i < t->n; i++) {
		if (t->e[i].err == err && strcmp(t->e[i].op, op) == 0) {
			t->e[i].count++;
			return false;
		}
	}
	if (t->n >= MAX_ERRS) {
		t->unrecorded++;
		return false;
	}
	t->e[t->n].op = op;
	t->e[t->n].err = err;
	t->e[t->n].count = 1;
	t->e[t->n].first_t = t_s;
	snprintf(t->e[t->n].first_ctx, sizeof(t->e[t->n].first_ctx), "%s",
		 ctx ? ctx : "");
	t->n++;
	return true;
}

static const char *errno_name(int err, char *buf, size_t len)
{
	const char *name = err ? strerrorname_np(err) : NULL;

	if (name)
		return name;
	snprintf(buf, len, "E%d", err);
	return buf;
}

/* ------------------------------------------------------------------------
 * Control table (per camera, merged across re-enumerations)
 */

struct ctrlinfo {
	uint32_t id;
	uint32_t type;
	uint32_t flags;
	char name[32];
	bool subscribed;
	uint64_t events;
};

struct ctrltab {
	struct ctrlinfo c[MAX_CTRLS];
	size_t n;
	uint64_t overflow;	/* controls beyond MAX_CTRLS */
	uint64_t unknown_events;	/* events for an id not in the table */
};

static struct ctrlinfo *ctrltab_find(struct ctrltab *t, uint32_t id)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->c[i].id == id)
			return &t->c[i];
	return NULL;
}

static struct ctrlinfo *ctrltab_add(struct ctrltab *t, uint32_t id,
				    uint32_t type, uint32_t flags,
				    const char *name)
{
	struct ctrlinfo *c = ctrltab_find(t, id);

	if (!c) {
		if (t->n >= MAX_CTRLS) {
			t->overflow++;
			return NULL;
		}
		c = &t->c[t->n++];
		memset(c, 0, sizeof(*c));
		c->id = id;
	}
	c->type = type;
	c->flags = flags;
	snprintf(c->name, sizeof(c->name), "%s", name);
	return c;
}

static void ctrltab_count(struct ctrltab *t, uint32_t id)
{
	struct ctrlinfo *c = ctrltab_find(t, id);

	if (c)
		c->events++;
	else
		t->unknown_events++;
}

/* "usb-0000:00:04.0-1" -> "usb-0000:00:04.0-1/button" (uvc_input_init). */
static void expected_input_phys(const char *bus_info, char *out, size_t len)
{
	snprintf(out, len, "%s/button", bus_info);
}

/* ------------------------------------------------------------------------
 * Runtime state
 */

struct camera {
	unsigned int index;
	bool found;		/* seen as a uvcvideo camera at least once */
	bool present_at_end;
	char video_path[64];
	char bus_info[48];
	char card[48];
	int fd;			/* video fd, -1 when closed or absent */
	bool absent;		/* disconnected, waiting to come back */
	uint64_t absent_since_ns;

	char input_path[64];
	char input_name[80];
	char input_phys[80];	/* as read when found */
	char input_match[8];	/* "phys" or "name" */
	int input_fd;
	char phys_bad[80];	/* last phys string that differed */
	char input_error[320];	/* why no input device, while there is none */
	uint64_t attached_ns;	/* last (re)attach */
	uint64_t input_error_ns;	/* when input_error was written */

	struct ctrltab ctrls;
	struct seqtrack seq;

	uint64_t class_controls;
	uint64_t subscribed;
	uint64_t subscribe_failed;
	bool used_queryctrl;	/* VIDIOC_QUERY_EXT_CTRL unsupported */
	uint64_t ev_value;	/* V4L2_EVENT_CTRL_CH_VALUE set */
	uint64_t ev_flags;	/* V4L2_EVENT_CTRL_CH_FLAGS set */
	uint64_t ev_range;	/* V4L2_EVENT_CTRL_CH_RANGE set */
	uint64_t ev_other_type;
	uint64_t key_press;
	uint64_t key_release;
	uint64_t key_repeat;
	uint64_t key_other_codes;	/* EV_KEY with code != KEY_CAMERA */
	uint64_t input_events;	/* all struct input_event read */
	uint64_t syn_dropped;
	uint64_t phys_reads;
	uint64_t phys_mismatches;
	uint64_t opens;
	uint64_t open_failures;
	uint64_t cycles;
	uint64_t disconnects;
	uint64_t reconnects;
	uint64_t input_found;
	uint64_t input_disconnects;
	uint64_t absent_ns;	/* total time disconnected */
	uint64_t attach_ns_total;	/* open + enumerate + subscribe + input */
	uint64_t attach_ns_max;
	uint64_t cycle_ns_max;	/* drain + close + open + subscribe */
};

struct agent {
	struct options opt;
	uint64_t t0_ns;		/* agent start */
	uint64_t run_start_ns;	/* end of the wait phase */
	uint64_t run_end_ns;
	uint64_t wait_done_ns;
	struct camera cam[MAX_CAMERAS];
	unsigned int ncam;	/* slots in use (found, or given by --device) */
	struct errtab errs;
	struct series series;
	struct ticker cycle, phys, rescan, input_rescan, live;
	uint64_t wakeups;	/* main-loop ppoll() returns */
	uint64_t naps;		/* --batch waits before polling */
	/* guest-wide non-idle CPU ticks (/proc/stat) at the run's start, end */
	uint64_t busy_start, busy_end;
	bool busy_known;
	uint64_t next_poll_ns;	/* with --batch: no poll before this */
	char last_scan_note[160];	/* why the last scan found nothing */
	const char *stopped_by;
	char stop_signal[16];
	char error[256];
	bool running;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static double secs_since(uint64_t start, uint64_t now)
{
	return now > start ? (double)(now - start) / 1e9 : 0.0;
}

/* Record an error; the first of each kind is also reported on stderr. */
static void agent_err(struct agent *a, const char *op, int err,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void agent_err(struct agent *a, const char *op, int err,
		      const char *fmt, ...)
{
	char ctx[96], nb[16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	if (errtab_add(&a->errs, op, err, ctx, secs_since(a->t0_ns, now_ns())))
		fprintf(stderr, AGENT_NAME ": %s: %s: %s (%s)%s\n", ctx, op,
			strerror(err), errno_name(err, nb, sizeof(nb)),
			" [further errors of this kind are only counted]");
}

static bool is_gone_errno(int err)
{
	return err == ENODEV || err == ENOENT || err == ENXIO || err == EIO ||
	       err == ESHUTDOWN;
}

/* ------------------------------------------------------------------------
 * Video node
 */

enum probe_result { PROBE_OK, PROBE_NOT_UVC, PROBE_ERRNO };

/*
 * Open path and check it is a uvcvideo video-capture node.  On PROBE_OK the
 * open fd is returned in *fdp and the capability in *cap; on PROBE_ERRNO
 * *errp holds the errno and *opp the failing operation.
 */
static enum probe_result video_probe(const char *path, int *fdp,
				     struct v4l2_capability *cap, int *errp,
				     const char **opp)
{
	uint32_t caps;
	int fd;

	*fdp = -1;
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*errp = errno;
		*opp = "open";
		return PROBE_ERRNO;
	}
	memset(cap, 0, sizeof(*cap));
	if (ioctl(fd, VIDIOC_QUERYCAP, cap) < 0) {
		*errp = errno;
		*opp = "VIDIOC_QUERYCAP";
		close(fd);
		return PROBE_ERRNO;
	}
	caps = (cap->capabilities & V4L2_CAP_DEVICE_CAPS) ?
	       cap->device_caps : cap->capabilities;
	if (strncmp((const char *)cap->driver, "uvcvideo",
		    sizeof(cap->driver)) != 0 ||
	    !(caps & V4L2_CAP_VIDEO_CAPTURE)) {
		close(fd);
		return PROBE_NOT_UVC;
	}
	*fdp = fd;
	return PROBE_OK;
}

static void copy_cstr(char *dst, size_t len, const void *src, size_t srclen)
{
	size_t n = strnlen(src, srclen);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Enumerate controls into the camera's table. */
static void video_enum_controls(struct agent *a, struct camera *c)
{
	const uint32_t next = V4L2_CTRL_FLAG_NEXT_CTRL |
			      V4L2_CTRL_FLAG_NEXT_COMPOUND;
	uint32_t id = next;
	bool ext = true;
	unsigned int guard;

	c->class_controls = 0;
	c->ctrls.overflow = 0;	/* counts the latest enumeration */
	for (guard = 0; guard < 4 * MAX_CTRLS; guard++) {
		uint32_t got_id, type, flags;
		char name[32];
		int r;

		if (ext) {
			struct v4l2_query_ext_ctrl q;

			memset(&q, 0, sizeof(q));
			q.id = id;
			r = ioctl(c->fd, VIDIOC_QUERY_EXT_CTRL, &q);
			if (r < 0 && errno == ENOTTY && guard == 0) {
				ext = false;
				c->used_queryctrl = true;
				id = V4L2_CTRL_FLAG_NEXT_CTRL;
				continue;
			}
			got_id = q.id;
			type = q.type;
			flags = q.flags;
			copy_cstr(name, sizeof(name), q.name, sizeof(q.name));
		} else {
			struct v4l2_queryctrl q;

			memset(&q, 0, sizeof(q));
			q.id = id;
			r = ioctl(c->fd, VIDIOC_QUERYCTRL, &q);
			got_id = q.id;
			type = q.type;
			flags = q.flags;
			copy_cstr(name, sizeof(name), q.name, sizeof(q.name));
		}
		if (r < 0) {
			if (errno != EINVAL)
				agent_err(a, ext ? "VIDIOC_QUERY_EXT_CTRL" :
					  "VIDIOC_QUERYCTRL", errno,
					  "camera %u %s enumerating controls",
					  c->index, c->video_path);
			return;	/* EINVAL: no more controls */
		}
		if ((got_id & V4L2_CTRL_ID_MASK) <= (id & V4L2_CTRL_ID_MASK) &&
		    guard > 0) {
			agent_err(a, "control enumeration", EPROTO,
				  "camera %u %s: id 0x%08x did not advance",
				  c->index, c->video_path, got_id);
			return;
		}
		if (type == V4L2_CTRL_TYPE_CTRL_CLASS)
			c->class_controls++;
		else
			ctrltab_add(&c->ctrls, got_id, type, flags, name);
		id = (got_id & V4L2_CTRL_ID_MASK) | (ext ? next :
						     V4L2_CTRL_FLAG_NEXT_CTRL);
	}
	agent_err(a, "control enumeration", E2BIG,
		  "camera %u %s: more than %d controls", c->index,
		  c->video_path, 4 * MAX_CTRLS);
}

/* Subscribe to control events for every control; returns false if gone. */
static bool video_subscribe(struct agent *a, struct camera *c)
{
	size_t i;

	for (i = 0; i < c->ctrls.n; i++) {
		struct v4l2_event_subscription sub;

		c->ctrls.c[i].subscribed = false;
		memset(&sub, 0, sizeof(sub));
		sub.type = V4L2_EVENT_CTRL;
		sub.id = c->ctrls.c[i].id;
		sub.flags = a->opt.initial ? V4L2_EVENT_SUB_FL_SEND_INITIAL : 0;
		if (ioctl(c->fd, VIDIOC_SUBSCRIBE_EVENT, &sub) < 0) {
			int err = errno;

			c->subscribe_failed++;
			agent_err(a, "VIDIOC_SUBSCRIBE_EVENT", err,
				  "camera %u %s control 0x%08x", c->index,
				  c->video_path, sub.id);
			if (is_gone_errno(err))
				return false;
			continue;
		}
		c->ctrls.c[i].subscribed = true;
		c->subscribed++;
	}
	return true;
}

static void camera_mark_absent(struct agent *a, struct camera *c,
			       uint64_t now);

/*
 * Dequeue pending events (at most max).  Returns false when the device is
 * gone (the caller marks it absent).
 */
static bool video_drain(struct agent *a, struct camera *c, uint64_t now,
			unsigned int max)
{
	unsigned int i;

	for (i = 0; i < max; i++) {
		struct v4l2_event ev;
		struct seq_delta d;
		struct bucket *b;

		memset(&ev, 0, sizeof(ev));
		if (ioctl(c->fd, VIDIOC_DQEVENT, &ev) < 0) {
			int err = errno;

			if (err == ENOENT)
				return true;
			if (err == EINTR)
				continue;
			agent_err(a, "VIDIOC_DQEVENT", err, "camera %u %s",
				  c->index, c->video_path);
			return !is_gone_errno(err);
		}
		d = seqtrack_feed(&c->seq, ev.sequence);
		b = series_at(&a->series, now);
		b->dequeued++;
		b->emitted += d.emitted;
		b->dropped += d.dropped;
		if (ev.type == V4L2_EVENT_CTRL) {
			ctrltab_count(&c->ctrls, ev.id);
			if (ev.u.ctrl.changes & V4L2_EVENT_CTRL_CH_VALUE)
				c->ev_value++;
			if (ev.u.ctrl.changes & V4L2_EVENT_CTRL_CH_FLAGS)
				c->ev_flags++;
			if (ev.u.ctrl.changes & V4L2_EVENT_CTRL_CH_RANGE)
				c->ev_range++;
		} else {
			c->ev_other_type++;
		}
		if (ev.pending == 0)
			return true;
	}
	return true;
}

/* ------------------------------------------------------------------------
 * Input device
 */

static void input_close(struct camera *c)
{
	if (c->input_fd >= 0)
		close(c->input_fd);
	c->input_fd = -1;
}

static void input_note_missing(struct camera *c, bool now_or_never);

/* Is phys the input phys of another camera we drive? */
static bool phys_of_other_camera(const struct agent *a, const struct camera *c,
				 const char *phys)
{
	char other[80];
	unsigned int i;

	for (i = 0; i < a->ncam; i++) {
		if (&a->cam[i] == c || !a->cam[i].bus_info[0])
			continue;
		expected_input_phys(a->cam[i].bus_info, other, sizeof(other));
		if (strcmp(other, phys) == 0)
			return true;
	}
	return false;
}

/* Open the next /dev/input/eventN of @d (path in @path); -1 at the end. */
static int input_next(DIR *d, char *path, size_t len)
{
	struct dirent *de;
	int fd;

	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "event", 5) != 0)
			continue;
		snprintf(path, len, "/dev/input/%.40s", de->d_name);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0)
			return fd;	/* else gone or not ours: nothing to say */
	}
	return -1;
}

/*
 * Find the camera's /dev/input/eventN: the one whose phys is
 * "<bus_info>/button" (uvc_input_init), else one with the camera's name and
 * a USB phys that is not another camera's ("input_match": "name").
 */
static void input_find(struct agent *a, struct camera *c)
{
	char want[80], name_path[64] = "";
	int name_fd = -1;
	DIR *d;

	if (!c->bus_info[0])
		return;
	expected_input_phys(c->bus_info, want, sizeof(want));
	d = opendir("/dev/input");
	if (!d) {
		int err = errno;

		if (err != ENOENT)
			agent_err(a, "opendir", err, "/dev/input");
		snprintf(c->input_error, sizeof(c->input_error),
			 "/dev/input: %s", strerror(err));
		return;
	}
	for (;;) {
		char path[64], phys[80] = "", name[80] = "";
		int fd = input_next(d, path, sizeof(path));

		if (fd < 0)
			break;
		if (ioctl(fd, EVIOCGPHYS(sizeof(phys) - 1), phys) < 0)
			phys[0] = '\0';
		if (ioctl(fd, EVIOCGNAME(sizeof(name) - 1), name) < 0)
			name[0] = '\0';
		if (strcmp(phys, want) == 0) {
			if (name_fd >= 0)
				close(name_fd);
			name_fd = -1;
			input_close(c);
			c->input_fd = fd;
			snprintf(c->input_path, sizeof(c->input_path), "%s", path);
			snprintf(c->input_phys, sizeof(c->input_phys), "%s", phys);
			snprintf(c->input_name, sizeof(c->input_name), "%s", name);
			snprintf(c->input_match, sizeof(c->input_match), "phys");
			c->input_found++;
			break;
		}
		if (name_fd < 0 && c->card[0] && strcmp(name, c->card) == 0 &&
		    strncmp(phys, "usb-", 4) == 0 &&
		    !phys_of_other_camera(a, c, phys)) {
			name_fd = fd;
			snprintf(name_path, sizeof(name_path), "%s", path);
			continue;
		}
		close(fd);
	}
	closedir(d);
	if (name_fd >= 0) {
		char phys[80] = "", name[80] = "";

		if (ioctl(name_fd, EVIOCGPHYS(sizeof(phys) - 1), phys) < 0)
			phys[0] = '\0';
		if (ioctl(name_fd, EVIOCGNAME(sizeof(name) - 1), name) < 0)
			name[0] = '\0';
		input_close(c);
		c->input_fd = name_fd;
		snprintf(c->input_path, sizeof(c->input_path), "%s", name_path);
		snprintf(c->input_phys, sizeof(c->input_phys), "%s", phys);
		snprintf(c->input_name, sizeof(c->input_name), "%s", name);
		snprintf(c->input_match, sizeof(c->input_match), "name");
		c->input_found++;
	}
	if (c->input_fd >= 0)
		c->input_error[0] = '\0';
	else
		input_note_missing(c, false);
}

/*
 * Explain a missing input device, once (uvc_probe registers the video node
 * before the input device, so give it INPUT_GRACE_NS after an attach).
 */
static void input_note_missing(struct camera *c, bool now_or_never)
{
	char want[80];

	if (c->input_fd >= 0 || c->input_error[0] || !c->bus_info[0])
		return;
	if (!now_or_never && now_ns() - c->attached_ns < INPUT_GRACE_NS)
		return;
	expected_input_phys(c->bus_info, want, sizeof(want));
	c->input_error_ns = now_ns();
	snprintf(c->input_error, sizeof(c->input_error),
		 "no /dev/input/event* with phys %s or name '%.40s' (uvcvideo registers one only with CONFIG_USB_VIDEO_CLASS_INPUT_EVDEV and, in newer kernels such as 6.12, bTriggerSupport=bTriggerUsage=1)",
		 want, c->card);
	fprintf(stderr, AGENT_NAME ": camera %u: %s%s\n", c->index,
		c->input_error, now_or_never ? "" : "; still looking");
}

static void input_lost(struct agent *a, struct camera *c)
{
	(void)a;
	input_close(c);
	c->input_disconnects++;
}

static void input_read(struct agent *a, struct camera *c, uint64_t now)
{
	struct input_event ev[64];
	unsigned int round;

	for (round = 0; round < 16; round++) {
		ssize_t n = read(c->input_fd, ev, sizeof(ev));
		size_t i, cnt;

		if (n < 0) {
			int err = errno;

			if (err == EAGAIN || err == EINTR)
				return;
			agent_err(a, "read", err, "camera %u input %s",
				  c->index, c->input_path);
			if (is_gone_errno(err))
				input_lost(a, c);
			return;
		}
		if (n == 0) {
			input_lost(a, c);
			return;
		}
		cnt = (size_t)n / sizeof(ev[0]);
		for (i = 0; i < cnt; i++) {
			c->input_events++;
			if (ev[i].type == EV_SYN && ev[i].code == SYN_DROPPED) {
				c->syn_dropped++;
			} else if (ev[i].type == EV_KEY) {
				if (ev[i].code != KEY_CAMERA)
					c->key_other_codes++;
				if (ev[i].value == 1)
					c->key_press++;
				else if (ev[i].value == 0)
					c->key_release++;
				else
					c->key_repeat++;
				if (ev[i].value == 0 || ev[i].value == 1)
					series_at(&a->series, now)->keys++;
			}
		}
		if ((size_t)n < sizeof(ev))
			return;
	}
}

static void input_read_phys(struct agent *a, struct camera *c, uint64_t now)
{
	char phys[80];

	memset(phys, 0, sizeof(phys));
	if (ioctl(c->input_fd, EVIOCGPHYS(sizeof(phys) - 1), phys) < 0) {
		int err = errno;

		agent_err(a, "EVIOCGPHYS", err, "camera %u input %s", c->index,
			  c->input_path);
		if (is_gone_errno(err))
			input_lost(a, c);
		return;
	}
	c->phys_reads++;
	series_at(&a->series, now)->phys_reads++;
	if (strcmp(phys, c->input_phys) != 0) {
		c->phys_mismatches++;
		snprintf(c->phys_bad, sizeof(c->phys_bad), "%s", phys);
	}
}

/* ------------------------------------------------------------------------
 * Camera lifecycle
 */

static void video_close(struct agent *a, struct camera *c, uint64_t now)
{
	if (c->fd < 0)
		return;
	/* Count what is still queued before the file handle goes away. */
	video_drain(a, c, now, 1u << 16);
	if (close(c->fd) < 0)
		agent_err(a, "close", errno, "camera %u %s", c->index,
			  c->video_path);
	c->fd = -1;
}

static void camera_mark_absent(struct agent *a, struct camera *c,
			       uint64_t now)
{
	bool was_open = c->fd >= 0;

	if (was_open) {
		close(c->fd);	/* drained already or device gone */
		c->fd = -1;
	}
	if (!c->absent) {
		c->absent = true;
		c->absent_since_ns = now;
		if (was_open || c->opens > 0) {
			c->disconnects++;
			series_at(&a->series, now)->disconnects++;
		}
	}
}

/* Start a session on an open fd: controls (when asked), subscriptions. */
static bool camera_start_session(struct agent *a, struct camera *c,
				 bool enumerate)
{
	c->opens++;
	seqtrack_new_session(&c->seq);
	if (enumerate)
		video_enum_controls(a, c);
	return video_subscribe(a, c);
}

/* Take an fd for a camera that (re)appeared and start driving it. */
static void camera_attach(struct agent *a, struct camera *c, int fd,
			  const char *path, uint64_t now)
{
	uint64_t start = now_ns(), took;

	c->fd = fd;
	if (path != c->video_path)	/* no overlapping snprintf */
		snprintf(c->video_path, sizeof(c->video_path), "%s", path);
	if (c->absent) {
		c->absent = false;
		if (c->opens > 0)
			c->reconnects++;
		c->absent_ns += now - c->absent_since_ns;
	}
	if (!camera_start_session(a, c, true)) {
		camera_mark_absent(a, c, now);
		return;
	}
	/* The old input device, if still open, belongs to the old device. */
	input_close(c);
	c->attached_ns = start;
	input_find(a, c);
	took = now_ns() - start;
	c->attach_ns_total += took;
	if (took > c->attach_ns_max)
		c->attach_ns_max = took;
}

/* Reopen the same node (close/open cycle). */
static void camera_cycle(struct agent *a, struct camera *c, uint64_t now)
{
	struct v4l2_capability cap;
	enum probe_result r;
	uint64_t start = now_ns();
	const char *op = "";
	int fd, err = 0;

	video_close(a, c, now);
	c->cycles++;
	series_at(&a->series, now)->cycles++;
	r = video_probe(c->video_path, &fd, &cap, &err, &op);
	if (r == PROBE_OK &&
	    strncmp((const char *)cap.bus_info, c->bus_info,
		    sizeof(cap.bus_info)) == 0) {
		uint64_t took;

		c->fd = fd;
		if (!camera_start_session(a, c, false))
			camera_mark_absent(a, c, now);
		took = now_ns() - start;
		if (took > c->cycle_ns_max)
			c->cycle_ns_max = took;
		return;
	}
	if (r == PROBE_OK)
		close(fd);	/* another camera took the node number */
	c->open_failures++;
	if (r == PROBE_ERRNO) {
		agent_err(a, op, err, "camera %u %s reopen", c->index,
			  c->video_path);
		if (!is_gone_errno(err))
			return;	/* retry at the next cycle */
	}
	camera_mark_absent(a, c, now);
}

static int cmp_video_names(const void *pa, const void *pb)
{
	const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
	long na = strtol(a + 5, NULL, 10), nb = strtol(b + 5, NULL, 10);

	return na < nb ? -1 : na > nb;
}

static bool path_in_use(const struct agent *a, const char *path)
{
	unsigned int i;

	for (i = 0; i < MAX_CAMERAS; i++)
		if (a->cam[i].fd >= 0 && strcmp(a->cam[i].video_path, path) == 0)
			return true;
	return false;
}

/*
 * Look at one candidate node.  In the wait phase (!a->running) a new camera
 * is bound (identity recorded) and its fd closed again; during the run an
 * absent camera whose identity matches is reattached.
 */
static void scan_one(struct agent *a, const char *path, int slot_hint,
		     uint64_t now)
{
	struct v4l2_capability cap;
	struct camera *c = NULL;
	enum probe_result r;
	const char *op = "";
	char bus[48];
	unsigned int i;
	int fd, err = 0;

	if (path_in_use(a, path))
		return;
	r = video_probe(path, &fd, &cap, &err, &op);
	if (r == PROBE_ERRNO) {
		snprintf(a->last_scan_note, sizeof(a->last_scan_note),
			 "%s: %s: %s", path, op, strerror(err));
		return;
	}
	if (r == PROBE_NOT_UVC) {
		snprintf(a->last_scan_note, sizeof(a->last_scan_note),
			 "%s: not a uvcvideo video-capture node", path);
		return;
	}
	copy_cstr(bus, sizeof(bus), cap.bus_info, sizeof(cap.bus_info));

	if (slot_hint >= 0) {
		c = &a->cam[slot_hint];
	} else {
		/* a known camera coming back */
		for (i = 0; i < a->ncam && !c; i++)
			if (a->cam[i].found && a->cam[i].fd < 0 &&
			    strcmp(a->cam[i].bus_info, bus) == 0)
				c = &a->cam[i];
		/* a new camera, when slots are free and it is not bound */
		if (!c && a->ncam < a->opt.cameras) {
			for (i = 0; i < a->ncam; i++)
				if (strcmp(a->cam[i].bus_info, bus) == 0)
					break;
			if (i == a->ncam)
				c = &a->cam[a->ncam];
		}
	}
	if (!c || (c->fd >= 0)) {
		close(fd);
		return;
	}
	if (!c->found) {
		c->found = true;
		snprintf(c->bus_info, sizeof(c->bus_info), "%s", bus);
		copy_cstr(c->card, sizeof(c->card), cap.card, sizeof(cap.card));
		snprintf(c->video_path, sizeof(c->video_path), "%s", path);
		if (slot_hint < 0)
			a->ncam++;
	} else if (strcmp(c->bus_info, bus) != 0) {
		/* --device path now holds another camera: follow it */
		snprintf(c->bus_info, sizeof(c->bus_info), "%s", bus);
		copy_cstr(c->card, sizeof(c->card), cap.card, sizeof(cap.card));
	}
	if (!a->running) {
		close(fd);
		return;
	}
	camera_attach(a, c, fd, path, now);
}

/* Scan /dev/video* (or the --device paths) for cameras to bind/reattach. */
static void scan_cameras(struct agent *a, uint64_t now)
{
	char *names[256];
	size_t n = 0, i;
	struct dirent *de;
	DIR *d;

	if (a->opt.ndevices > 0) {
		for (i = 0; i < a->opt.ndevices; i++)
			if (a->cam[i].fd < 0)
				scan_one(a, a->opt.devices[i], (int)i, now);
		return;
	}

	d = opendir("/dev");
	if (!d) {
		agent_err(a, "opendir", errno, "/dev");
		return;
	}
	while ((de = readdir(d)) != NULL && n < 256) {
		const char *p = de->d_name;

		if (strncmp(p, "video", 5) != 0 || p[5] < '0' || p[5] > '9' ||
		    strspn(p + 5, "0123456789") != strlen(p + 5))
			continue;
		names[n] = strdup(p);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n == 0)
		snprintf(a->last_scan_note, sizeof(a->last_scan_note),
			 "no /dev/video* node");
	qsort(names, n, sizeof(names[0]), cmp_video_names);
	for (i = 0; i < n; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/dev/%.50s", names[i]);
		scan_one(a, path, -1, now);
		free(names[i]);
	}
}

static unsigned int cameras_found(const struct agent *a)
{
	unsigned int i, n = 0;

	for (i = 0; i < a->ncam; i++)
		n += a->cam[i].found;
	return n;
}

static bool any_absent(const struct agent *a)
{
	unsigned int i;

	if (a->ncam < a->opt.cameras)
		return true;
	for (i = 0; i < a->ncam; i++)
		if (a->cam[i].fd < 0)
			return true;
	return false;
}

/* ------------------------------------------------------------------------
 * Signals
 */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

MAIN_ONLY static int setup_signals(sigset_t *wait_mask)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa;
	sigset_t block;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -1;
		sigaddset(&block, sigs[i]);
	}
	/* Blocked except while waiting in ppoll(): no lost wake-ups. */
	if (sigprocmask(SIG_BLOCK, &block, wait_mask) < 0)
		return -1;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigdelset(wait_mask, sigs[i]);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* ------------------------------------------------------------------------
 * Output
 *
 * The result line is `DMAHARNESS-AGENT ` followed by one JSON object:
 *
 *   version            1 (bumped when a field changes meaning or goes away)
 *   tool               "dmaharness-agent"
 *   error              null, or what went wrong (usage, no camera, fewer
 *                      cameras than asked, camera never opened, ppoll error)
 *   exit_code          the process's exit status (see --help)
 *   stopped_by         "duration" | "signal:SIGTERM|SIGINT|SIGHUP" |
 *                      "wait-timeout" | "usage" | "error"
 *   options            the effective options (duration_s, wait_s, cycle_hz,
 *                      phys_hz, batch_s, cameras, devices[], initial, series)
 *   wait_elapsed_s     time from start until the cameras were found
 *   run_elapsed_s      time from the end of the wait to the result
 *   agent_start_s, run_start_s: CLOCK_MONOTONIC seconds (the clock of
 *                      printk timestamps) of the agent's start and of
 *                      second 0 of the series (null before a run)
 *   cameras_requested, cameras_found
 *   totals             sums over cameras: events_dequeued, events_emitted,
 *                      events_dropped, seq_anomalies, key_events,
 *                      syn_dropped, phys_reads, phys_mismatches, cycles,
 *                      opens, disconnects, reconnects, errors
 *   scheduling         cycle_ticks(_skipped), phys_ticks(_skipped): ticks
 *                      of the rate schedulers and ticks given up because
 *                      the agent was late (achieved rate = ticks / run time);
 *                      wakeups (main-loop ppoll returns), naps (--batch
 *                      waits before a poll), guest_cpu_busy_s (non-idle
 *                      CPU seconds of the whole guest during the run,
 *                      from /proc/stat; null if unreadable), cpu_user_s and
 *                      cpu_sys_s (the agent's own CPU time, getrusage)
 *   cameras[]          per camera:
 *     index, video_device, bus_info, card, found, present_at_end,
 *     input_device, input_name, input_phys, input_match ("phys" | "name"),
 *     input_error (null, or why no input device was found)
 *     events_dequeued     V4L2 events read with VIDIOC_DQEVENT
 *     events_emitted      events the driver queued on our file handles,
 *                         from the sequence numbers (last seen + 1 per open
 *                         file handle); includes slave-control events and,
 *                         with --initial, the initial event per subscription
 *     events_dropped      emitted - dequeued: overwritten in the one-element
 *                         per-control queue before we read them
 *     seq_anomalies       sequence numbers that repeated or went backwards
 *     events_value_change / _flags_change / _range_change: changes bits
 *     events_other_type, events_unknown_control
 *     controls, class_controls, controls_untracked (beyond the table),
 *     used_queryctrl, subscriptions,
 *     subscribe_failures, per_control[] {id, name, type, subscribed, events}
 *     key_events (press + release), key_press, key_release, key_repeat,
 *     key_other_codes, input_events (all records read), syn_dropped
 *     (evdev buffer overruns), phys_reads, phys_mismatches,
 *     phys_last_mismatch (EVIOCGPHYS differing from the first read)
 *     opens, open_failures, cycles, disconnects, reconnects, absent_s,
 *     attach_s_total, attach_s_max (open + enumerate + subscribe + input
 *     lookup after (re)appearing), cycle_s_max (drain + close + reopen +
 *     subscribe), input_found, input_disconnects
 *   errors[]           one per (op, errno): op, errno ("ENODEV"), message,
 *                      count, first_context, first_t_s (since agent start)
 *   errors_unrecorded  errors of kinds beyond the table's size
 *   series             with --series: interval_s (1), truncated, and arrays
 *                      indexed by second since the run started:
 *                      events_dequeued, events_emitted, events_dropped,
 *                      key_events, phys_reads, cycles, disconnects
 *
 * With --live, stderr gets `DMAHARNESS-AGENT-TICK {json}` each second: t (the
 * second's index), that second's events_dequeued, events_emitted,
 * key_events, phys_reads, cycles, disconnects, and total_events_dequeued,
 * total_events_emitted, total_key_events so far (progress survives a panic).
 *
 * Events emitted after the last drain before a close, or pending when the
 * device disappears, cannot be seen and are not counted.
 */

static uint64_t sum_cam(const struct agent *a, size_t off)
{
	uint64_t s = 0;
	unsigned int i;

	for (i = 0; i < a->ncam; i++)
		s += *(const uint64_t *)((const char *)&a->cam[i] + off);
	return s;
}

#define SUM(a, field) sum_cam((a), offsetof(struct camera, field))

static void json_camera(struct jw *w, const struct camera *c)
{
	size_t i;

	jw_obj(w, NULL);
	jw_u64(w, "index", c->index);
	jw_str(w, "video_device", c->video_path[0] ? c->video_path : NULL);
	jw_str(w, "bus_info", c->bus_info[0] ? c->bus_info : NULL);
	jw_str(w, "card", c->card[0] ? c->card : NULL);
	jw_bool(w, "found", c->found);
	jw_bool(w, "present_at_end", c->present_at_end);
	jw_str(w, "input_device", c->input_path[0] ? c->input_path : NULL);
	jw_str(w, "input_name", c->input_name[0] ? c->input_name : NULL);
	jw_str(w, "input_phys", c->input_phys[0] ? c->input_phys : NULL);
	jw_str(w, "input_match", c->input_match[0] ? c->input_match : NULL);
	jw_str(w, "input_error", c->input_error[0] ? c->input_error : NULL);

	jw_u64(w, "events_dequeued", c->seq.dequeued);
	jw_u64(w, "events_emitted", c->seq.emitted);
	jw_u64(w, "events_dropped", c->seq.dropped);
	jw_u64(w, "seq_anomalies", c->seq.anomalies);
	jw_u64(w, "events_value_change", c->ev_value);
	jw_u64(w, "events_flags_change", c->ev_flags);
	jw_u64(w, "events_range_change", c->ev_range);
	jw_u64(w, "events_other_type", c->ev_other_type);

	jw_u64(w, "controls", c->ctrls.n);
	jw_u64(w, "class_controls", c->class_controls);
	jw_u64(w, "controls_untracked", c->ctrls.overflow);
	jw_bool(w, "used_queryctrl", c->used_queryctrl);
	jw_u64(w, "subscriptions", c->subscribed);
	jw_u64(w, "subscribe_failures", c->subscribe_failed);
	jw_u64(w, "events_unknown_control", c->ctrls.unknown_events);
	jw_arr(w, "per_control");
	for (i = 0; i < c->ctrls.n; i++) {
		const struct ctrlinfo *ci = &c->ctrls.c[i];
		char idbuf[16];

		snprintf(idbuf, sizeof(idbuf), "0x%08" PRIx32, ci->id);
		jw_obj(w, NULL);
		jw_str(w, "id", idbuf);
		jw_str(w, "name", ci->name);
		jw_u64(w, "type", ci->type);
		jw_bool(w, "subscribed", ci->subscribed);
		jw_u64(w, "events", ci->events);
		jw_obj_end(w);
	}
	jw_arr_end(w);

	jw_u64(w, "key_events", c->key_press + c->key_release);
	jw_u64(w, "key_press", c->key_press);
	jw_u64(w, "key_release", c->key_release);
	jw_u64(w, "key_repeat", c->key_repeat);
	jw_u64(w, "key_other_codes", c->key_other_codes);
	jw_u64(w, "input_events", c->input_events);
	jw_u64(w, "syn_dropped", c->syn_dropped);
	jw_u64(w, "phys_reads", c->phys_reads);
	jw_u64(w, "phys_mismatches", c->phys_mismatches);
	jw_str(w, "phys_last_mismatch", c->phys_bad[0] ? c->phys_bad : NULL);

	jw_u64(w, "opens", c->opens);
	jw_u64(w, "open_failures", c->open_failures);
	jw_u64(w, "cycles", c->cycles);
	jw_u64(w, "disconnects", c->disconnects);
	jw_u64(w, "reconnects", c->reconnects);
	jw_dbl(w, "absent_s", (double)c->absent_ns / 1e9, 3);
	jw_dbl(w, "attach_s_total", (double)c->attach_ns_total / 1e9, 3);
	jw_dbl(w, "attach_s_max", (double)c->attach_ns_max / 1e9, 3);
	jw_dbl(w, "cycle_s_max", (double)c->cycle_ns_max / 1e9, 3);
	jw_u64(w, "input_found", c->input_found);
	jw_u64(w, "input_disconnects", c->input_disconnects);
	jw_obj_end(w);
}

#define SERIES_FIELD(w, s, name, field)					\
	do {								\
		size_t k_;						\
		jw_arr((w), (name));					\
		for (k_ = 0; k_ < (s)->n; k_++)				\
			jw_u64((w), NULL, (s)->b[k_].field);		\
		jw_arr_end(w);						\
	} while (0)

static void json_build(struct jw *w, const struct agent *a, int exit_code,
		       uint64_t now)
{
	const struct options *o = &a->opt;
	unsigned int i;
	size_t k;

	jw_obj(w, NULL);
	jw_u64(w, "version", AGENT_JSON_VERSION);
	jw_str(w, "tool", AGENT_NAME);
	jw_str(w, "error", a->error[0] ? a->error : NULL);
	jw_i64(w, "exit_code", exit_code);
	jw_str(w, "stopped_by", a->stopped_by);

	jw_obj(w, "options");
	jw_dbl(w, "duration_s", o->duration_s, 3);
	jw_dbl(w, "wait_s", o->wait_s, 3);
	jw_dbl(w, "cycle_hz", o->cycle_hz, 3);
	jw_dbl(w, "phys_hz", o->phys_hz, 3);
	jw_dbl(w, "batch_s", o->batch_s, 4);
	jw_u64(w, "cameras", o->cameras);
	jw_arr(w, "devices");
	for (i = 0; i < o->ndevices; i++)
		jw_str(w, NULL, o->devices[i]);
	jw_arr_end(w);
	jw_bool(w, "initial", o->initial);
	jw_bool(w, "series", o->series);
	jw_obj_end(w);

	jw_dbl(w, "wait_elapsed_s", secs_since(a->t0_ns, a->wait_done_ns ?
					       a->wait_done_ns : now), 3);
	jw_dbl(w, "run_elapsed_s", a->run_start_ns ?
	       secs_since(a->run_start_ns, now) : 0.0, 3);
	/* absolute CLOCK_MONOTONIC: the clock of printk's timestamps */
	jw_dbl(w, "agent_start_s", (double)a->t0_ns / 1e9, 6);
	if (a->run_start_ns)
		jw_dbl(w, "run_start_s", (double)a->run_start_ns / 1e9, 6);
	else
		jw_null(w, "run_start_s");
	jw_u64(w, "cameras_requested", o->cameras);
	jw_u64(w, "cameras_found", cameras_found(a));

	jw_obj(w, "totals");
	jw_u64(w, "events_dequeued", SUM(a, seq.dequeued));
	jw_u64(w, "events_emitted", SUM(a, seq.emitted));
	jw_u64(w, "events_dropped", SUM(a, seq.dropped));
	jw_u64(w, "seq_anomalies", SUM(a, seq.anomalies));
	jw_u64(w, "key_events", SUM(a, key_press) + SUM(a, key_release));
	jw_u64(w, "syn_dropped", SUM(a, syn_dropped));
	jw_u64(w, "phys_reads", SUM(a, phys_reads));
	jw_u64(w, "phys_mismatches", SUM(a, phys_mismatches));
	jw_u64(w, "cycles", SUM(a, cycles));
	jw_u64(w, "opens", SUM(a, opens));
	jw_u64(w, "disconnects", SUM(a, disconnects));
	jw_u64(w, "reconnects", SUM(a, reconnects));
	jw_u64(w, "errors", a->errs.total);
	jw_obj_end(w);

	jw_obj(w, "scheduling");
	jw_u64(w, "cycle_ticks", a->cycle.fired);
	jw_u64(w, "cycle_ticks_skipped", a->cycle.skipped);
	jw_u64(w, "phys_ticks", a->phys.fired);
	jw_u64(w, "phys_ticks_skipped", a->phys.skipped);
	jw_u64(w, "wakeups", a->wakeups);
	jw_u64(w, "naps", a->naps);
	if (a->busy_known && a->busy_end >= a->busy_start)
		jw_dbl(w, "guest_cpu_busy_s", (double)(a->busy_end - a->busy_start) /
		       (double)sysconf(_SC_CLK_TCK), 2);
	else
		jw_null(w, "guest_cpu_busy_s");
	{
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru) == 0) {
			jw_dbl(w, "cpu_user_s", (double)ru.ru_utime.tv_sec +
			       (double)ru.ru_utime.tv_usec / 1e6, 3);
			jw_dbl(w, "cpu_sys_s", (double)ru.ru_stime.tv_sec +
			       (double)ru.ru_stime.tv_usec / 1e6, 3);
		} else {
			jw_null(w, "cpu_user_s");
			jw_null(w, "cpu_sys_s");
		}
	}
	jw_obj_end(w);

	jw_arr(w, "cameras");
	for (i = 0; i < a->ncam; i++)
		json_camera(w, &a->cam[i]);
	jw_arr_end(w);

	jw_arr(w, "errors");
	for (k = 0; k < a->errs.n; k++) {
		const struct errrec *e = &a->errs.e[k];
		char nb[16];

		jw_obj(w, NULL);
		jw_str(w, "op", e->op);
		jw_str(w, "errno", errno_name(e->err, nb, sizeof(nb)));
		jw_str(w, "message", strerror(e->err));
		jw_u64(w, "count", e->count);
		jw_str(w, "first_context", e->first_ctx);
		jw_dbl(w, "first_t_s", e->first_t, 3);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_u64(w, "errors_unrecorded", a->errs.unrecorded);

	if (o->series) {
		const struct series *s = &a->series;

		jw_obj(w, "series");
		jw_u64(w, "interval_s", 1);
		jw_bool(w, "truncated", s->oom);
		SERIES_FIELD(w, s, "events_dequeued", dequeued);
		SERIES_FIELD(w, s, "events_emitted", emitted);
		SERIES_FIELD(w, s, "events_dropped", dropped);
		SERIES_FIELD(w, s, "key_events", keys);
		SERIES_FIELD(w, s, "phys_reads", phys_reads);
		SERIES_FIELD(w, s, "cycles", cycles);
		SERIES_FIELD(w, s, "disconnects", disconnects);
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t r = write(fd, s, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Print the result line (one write, to keep it in one piece). */
MAIN_ONLY static int emit_result(struct agent *a, int exit_code)
{
	const char *prefix = AGENT_LINE_PREFIX;
	struct jw w;
	int ret = exit_code;

	jw_init(&w);
	jw_raw(&w, prefix, strlen(prefix));
	/* jw_raw left the writer at top level with nothing written */
	json_build(&w, a, exit_code, now_ns());
	jw_raw(&w, "\n", 1);
	if (w.failed || w.depth != 0) {
		fprintf(stderr, AGENT_NAME
			": could not build the JSON result (out of memory)\n");
		printf(AGENT_LINE_PREFIX
		       "{\"version\":%d,\"error\":\"agent out of memory\",\"exit_code\":%d}\n",
		       AGENT_JSON_VERSION, EXIT_AGENT_RUNTIME);
		fflush(stdout);
		jw_free(&w);
		return EXIT_AGENT_RUNTIME;
	}
	fflush(stdout);
	if (write_all(STDOUT_FILENO, w.buf, w.len) < 0) {
		fprintf(stderr, AGENT_NAME ": writing the result to stdout: %s\n",
			strerror(errno));
		ret = EXIT_AGENT_RUNTIME;
	}
	if (a->opt.output) {
		int fd = open(a->opt.output,
			      O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (fd < 0 || write_all(fd, w.buf, w.len) < 0) {
			fprintf(stderr, AGENT_NAME ": writing the result to %s: %s\n",
				a->opt.output, strerror(errno));
			ret = ret ? ret : EXIT_AGENT_RUNTIME;
		}
		if (fd >= 0)
			close(fd);
	}
	jw_free(&w);
	return ret;
}

/*
 * The --live progress record for the second that ended at now: that
 * second's counts ("t" is its index in the series) and running totals.
 */
static void tick_json(struct jw *w, const struct agent *a, uint64_t now)
{
	const struct bucket *b = NULL;
	size_t idx = now > a->run_start_ns ?
		     (size_t)((now - a->run_start_ns) / NSEC_PER_SEC) : 0;

	if (idx > 0 && idx - 1 < a->series.n)
		b = &a->series.b[idx - 1];
	jw_obj(w, NULL);
	jw_u64(w, "version", AGENT_JSON_VERSION);
	jw_u64(w, "t", idx ? idx - 1 : 0);
	jw_u64(w, "events_dequeued", b ? b->dequeued : 0);
	jw_u64(w, "events_emitted", b ? b->emitted : 0);
	jw_u64(w, "key_events", b ? b->keys : 0);
	jw_u64(w, "phys_reads", b ? b->phys_reads : 0);
	jw_u64(w, "cycles", b ? b->cycles : 0);
	jw_u64(w, "disconnects", b ? b->disconnects : 0);
	jw_u64(w, "total_events_dequeued", SUM(a, seq.dequeued));
	jw_u64(w, "total_events_emitted", SUM(a, seq.emitted));
	jw_u64(w, "total_key_events", SUM(a, key_press) + SUM(a, key_release));
	jw_obj_end(w);
}

static void emit_tick(const struct agent *a, uint64_t now)
{
	struct jw w;

	jw_init(&w);
	tick_json(&w, a, now);
	if (jw_done(&w))
		fprintf(stderr, AGENT_TICK_PREFIX "%s\n", w.buf);
	jw_free(&w);
}

/* ------------------------------------------------------------------------
 * Main loop
 */

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static bool check_stop(struct agent *a)
{
	int sig = stop_signal;

	if (!sig)
		return false;
	snprintf(a->stop_signal, sizeof(a->stop_signal), "%s",
		 sig == SIGTERM ? "signal:SIGTERM" :
		 sig == SIGINT ? "signal:SIGINT" : "signal:SIGHUP");
	a->stopped_by = a->stop_signal;
	return true;
}

static int ppoll_ns(struct pollfd *fds, nfds_t n, uint64_t wait_ns,
		    const sigset_t *mask)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(wait_ns / NSEC_PER_SEC);
	ts.tv_nsec = (long)(wait_ns % NSEC_PER_SEC);
	return ppoll(fds, n, &ts, mask);
}

/* Is there an input device whose phys is the camera's "<bus_info>/button"? */
static bool input_present(const char *bus_info)
{
	char want[80], path[64];
	bool found = false;
	DIR *d;
	int fd;

	expected_input_phys(bus_info, want, sizeof(want));
	d = opendir("/dev/input");
	if (!d)
		return false;
	while (!found && (fd = input_next(d, path, sizeof(path))) >= 0) {
		char phys[80] = "";

		if (ioctl(fd, EVIOCGPHYS(sizeof(phys) - 1), phys) >= 0)
			found = strcmp(phys, want) == 0;
		close(fd);
	}
	closedir(d);
	return found;
}

/*
 * uvcvideo registers /dev/videoN (uvc_register_chains) before it sets up
 * the status endpoint (uvc_status_init: the input device, then the URB).
 * An open in between starts no status URB, and nothing does until the
 * next first open: a run that opens once would see no status event at
 * all.  So before the first open wait until each camera's input device
 * exists, then a little more for the URB allocated right after it; a
 * camera without one (no status endpoint, no INPUT_EVDEV) is given up on
 * after SETTLE_MAX_S.
 */
#define SETTLE_MAX_S	3.0
#define SETTLE_AFTER_MS	50

static void settle_cameras(struct agent *a, const sigset_t *mask)
{
	uint64_t deadline = now_ns() + (uint64_t)(SETTLE_MAX_S * 1e9);
	unsigned int i;

	for (;;) {
		bool all = true;

		for (i = 0; i < a->ncam; i++)
			if (a->cam[i].found && !input_present(a->cam[i].bus_info))
				all = false;
		if (all || now_ns() >= deadline || check_stop(a))
			break;
		ppoll_ns(NULL, 0, 20 * 1000000ULL, mask);
	}
	ppoll_ns(NULL, 0, SETTLE_AFTER_MS * 1000000ULL, mask);
}

/* Wait phase: find (bind) the cameras; returns true when at least one. */
static bool wait_for_cameras(struct agent *a, const sigset_t *mask)
{
	uint64_t deadline = a->t0_ns + (uint64_t)(a->opt.wait_s * 1e9);
	uint64_t now = a->t0_ns;
	struct ticker t;

	ticker_init(&t, 20.0, now);
	for (;;) {
		scan_cameras(a, now);
		if (cameras_found(a) >= a->opt.cameras || check_stop(a))
			break;
		now = now_ns();
		if (now >= deadline)
			break;
		ppoll_ns(NULL, 0, min_u64(ticker_wait_ns(&t, now),
					  deadline - now), mask);
		now = now_ns();
		ticker_due(&t, now, 1);
	}
	if (cameras_found(a) > 0)
		settle_cameras(a, mask);
	a->wait_done_ns = now_ns();
	return cameras_found(a) > 0;
}

struct pollmap {
	struct camera *cam;
	bool input;
};

/*
 * Non-idle CPU time of the whole guest so far, in USER_HZ ticks: user,
 * nice, system, irq, softirq and steal of /proc/stat's "cpu" line.  Over
 * the run it says how much guest CPU the flood took, whatever the clock
 * does while the guest idles (e.g. QEMU's -icount, where it jumps ahead).
 */
static bool cpu_busy_ticks(const char *path, uint64_t *ticks)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return false;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 7)
		return false;
	/* user nice system [idle iowait] irq softirq steal */
	*ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	return true;
}

static void run_loop(struct agent *a, const sigset_t *mask)
{
	struct pollfd fds[2 * MAX_CAMERAS];
	struct pollmap map[2 * MAX_CAMERAS];
	uint64_t now;
	unsigned int i;

	a->running = true;
	now = now_ns();
	a->run_start_ns = now;
	a->run_end_ns = now + (uint64_t)(a->opt.duration_s * 1e9);
	a->busy_known = cpu_busy_ticks("/proc/stat", &a->busy_start);
	series_init(&a->series, now);
	series_at(&a->series, now);	/* series has at least one bucket */
	ticker_init(&a->cycle, a->opt.cycle_hz, now);
	ticker_init(&a->phys, a->opt.phys_hz, now);
	ticker_init(&a->rescan, 20.0, now);
	ticker_init(&a->input_rescan, 2.0, now);
	ticker_init(&a->live, a->opt.live ? 1.0 : 0.0, now);

	/* Cameras found in the wait phase were closed again: open them. */
	for (i = 0; i < a->ncam; i++) {
		struct camera *c = &a->cam[i];
		struct v4l2_capability cap;
		const char *op = "";
		int fd, err = 0;
		enum probe_result r;

		if (!c->found)
			continue;	/* a --device not there yet */
		r = video_probe(c->video_path, &fd, &cap, &err, &op);
		if (r == PROBE_OK) {
			camera_attach(a, c, fd, c->video_path, now);
			continue;
		}
		c->open_failures++;
		if (r == PROBE_ERRNO)
			agent_err(a, op, err, "camera %u %s first open",
				  c->index, c->video_path);
		camera_mark_absent(a, c, now);
	}

	while (!check_stop(a)) {
		uint64_t wait, due;
		nfds_t n = 0;
		int pr;

		now = now_ns();
		if (now >= a->run_end_ns) {
			a->stopped_by = "duration";
			break;
		}
		for (i = 0; i < a->ncam; i++) {
			struct camera *c = &a->cam[i];

			if (c->fd >= 0) {
				fds[n].fd = c->fd;
				fds[n].events = POLLPRI;
				fds[n].revents = 0;
				map[n].cam = c;
				map[n].input = false;
				n++;
			}
			if (c->input_fd >= 0) {
				fds[n].fd = c->input_fd;
				fds[n].events = POLLIN;
				fds[n].revents = 0;
				map[n].cam = c;
				map[n].input = true;
				n++;
			}
		}
		if (now < a->next_poll_ns) {
			/* --batch: let events queue up, then read them at once */
			ppoll_ns(NULL, 0, min_u64(a->next_poll_ns, a->run_end_ns) - now,
				 mask);
			a->naps++;
			continue;
		}
		wait = a->run_end_ns - now;
		wait = min_u64(wait, ticker_wait_ns(&a->cycle, now));
		wait = min_u64(wait, ticker_wait_ns(&a->phys, now));
		wait = min_u64(wait, ticker_wait_ns(&a->live, now));
		if (any_absent(a))
			wait = min_u64(wait, ticker_wait_ns(&a->rescan, now));
		wait = min_u64(wait, ticker_wait_ns(&a->input_rescan, now));

		pr = ppoll_ns(fds, n, wait, mask);
		a->wakeups++;
		if (pr < 0 && errno != EINTR) {
			agent_err(a, "ppoll", errno, "main loop");
			snprintf(a->error, sizeof(a->error),
				 "ppoll failed: %s", strerror(errno));
			a->stopped_by = "error";
			break;
		}
		now = now_ns();
		if (pr > 0 && a->opt.batch_s > 0)
			a->next_poll_ns = now + (uint64_t)(a->opt.batch_s * 1e9);

		for (i = 0; pr > 0 && i < n; i++) {
			struct camera *c = map[i].cam;
			short re = fds[i].revents;

			if (!re)
				continue;
			if (map[i].input) {
				if (c->input_fd != fds[i].fd)
					continue;
				if (re & POLLIN)
					input_read(a, c, now);
				if (c->input_fd >= 0 &&
				    (re & (POLLERR | POLLHUP | POLLNVAL)))
					input_lost(a, c);
				continue;
			}
			if (c->fd != fds[i].fd)
				continue;
			if (re & POLLPRI) {
				if (!video_drain(a, c, now, 4096)) {
					camera_mark_absent(a, c, now);
					continue;
				}
			}
			if (re & (POLLERR | POLLHUP | POLLNVAL))
				camera_mark_absent(a, c, now);
		}

		if (now >= a->run_end_ns)
			continue;	/* the loop head ends the run */
		due = ticker_due(&a->phys, now, 1000);
		while (due-- > 0)
			for (i = 0; i < a->ncam; i++)
				if (a->cam[i].input_fd >= 0)
					input_read_phys(a, &a->cam[i], now);
		if (ticker_due(&a->cycle, now, 1))
			for (i = 0; i < a->ncam; i++)
				if (a->cam[i].fd >= 0)
					camera_cycle(a, &a->cam[i], now);
		if (ticker_due(&a->rescan, now, 1) && any_absent(a))
			scan_cameras(a, now);
		if (ticker_due(&a->input_rescan, now, 1))
			for (i = 0; i < a->ncam; i++)
				if (a->cam[i].fd >= 0 && a->cam[i].input_fd < 0)
					input_find(a, &a->cam[i]);
		if (ticker_due(&a->live, now, 1))
			emit_tick(a, now);
	}

	now = now_ns();
	a->busy_known = a->busy_known &&
			cpu_busy_ticks("/proc/stat", &a->busy_end);
	for (i = 0; i < a->ncam; i++) {
		struct camera *c = &a->cam[i];

		c->present_at_end = c->fd >= 0;
		if (c->present_at_end)
			input_note_missing(c, true);
		if (c->input_fd >= 0)
			input_read(a, c, now);
		if (c->fd >= 0)
			video_close(a, c, now);
		input_close(c);
		if (c->absent)
			c->absent_ns += now - c->absent_since_ns;
		/* keep fd == -1 but remember presence for the report */
	}
}

/* Fresh state (a is zeroed by the caller). */
static void agent_init(struct agent *a)
{
	unsigned int i;

	a->t0_ns = now_ns();
	for (i = 0; i < MAX_CAMERAS; i++) {
		a->cam[i].index = i;
		a->cam[i].fd = -1;
		a->cam[i].input_fd = -1;
	}
	options_default(&a->opt);
}

/* After option parsing: --device slots exist from the start. */
static void agent_apply_options(struct agent *a)
{
	unsigned int i;

	a->ncam = a->opt.ndevices;
	for (i = 0; i < a->opt.ndevices; i++)
		snprintf(a->cam[i].video_path, sizeof(a->cam[i].video_path),
			 "%s", a->opt.devices[i]);
}

/* The wait phase found nothing: say why. */
static void agent_wait_failed(struct agent *a)
{
	if (!a->stopped_by) {
		snprintf(a->error, sizeof(a->error),
			 "no uvcvideo camera appeared within %.1f s (%s)",
			 a->opt.wait_s, a->last_scan_note[0] ?
			 a->last_scan_note : "nothing scanned");
		a->stopped_by = "wait-timeout";
	} else {
		snprintf(a->error, sizeof(a->error),
			 "stopped by %s before any camera appeared",
			 a->stopped_by);
	}
}

/* Exit code after a run; sets the error string for failures. */
static int agent_final_code(struct agent *a)
{
	if (a->stopped_by && strcmp(a->stopped_by, "error") == 0)
		return EXIT_AGENT_RUNTIME;
	if (cameras_found(a) < a->opt.cameras) {
		snprintf(a->error, sizeof(a->error),
			 "only %u of %u cameras appeared", cameras_found(a),
			 a->opt.cameras);
		return EXIT_AGENT_FEWER;
	}
	if (SUM(a, opens) == 0) {
		snprintf(a->error, sizeof(a->error),
			 "camera found but never opened (%s)",
			 a->errs.n ? a->errs.e[0].first_ctx : "see errors");
		return EXIT_AGENT_RUNTIME;
	}
	return EXIT_AGENT_OK;
}

#ifndef DMAHARNESS_AGENT_TEST
int main(int argc, char **argv)
{
	struct agent *a;
	sigset_t wait_mask;
	char err[256] = "";
	int code;

	a = calloc(1, sizeof(*a));
	if (!a) {
		fprintf(stderr, AGENT_NAME ": out of memory\n");
		printf(AGENT_LINE_PREFIX
		       "{\"version\":%d,\"error\":\"agent out of memory\",\"exit_code\":%d}\n",
		       AGENT_JSON_VERSION, EXIT_AGENT_RUNTIME);
		return EXIT_AGENT_RUNTIME;
	}
	agent_init(a);
	if (parse_args(argc, argv, &a->opt, err, sizeof(err)) < 0) {
		a->opt.ndevices = 0;	/* may be partly filled */
		fprintf(stderr, AGENT_NAME ": %s\n", err);
		snprintf(a->error, sizeof(a->error), "usage: %s", err);
		a->stopped_by = "usage";
		code = emit_result(a, EXIT_AGENT_USAGE);
		free(a);
		return code;
	}
	if (a->opt.help) {
		fputs(usage_text, stdout);
		free(a);
		return EXIT_AGENT_OK;
	}
	if (setup_signals(&wait_mask) < 0) {
		snprintf(a->error, sizeof(a->error),
			 "cannot install signal handlers: %s", strerror(errno));
		fprintf(stderr, AGENT_NAME ": %s\n", a->error);
		a->stopped_by = "error";
		code = emit_result(a, EXIT_AGENT_RUNTIME);
		free(a);
		return code;
	}
	agent_apply_options(a);
	/* Fine-grained ppoll() wake-ups for high --phys-hz rates. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);

	if (!wait_for_cameras(a, &wait_mask)) {
		agent_wait_failed(a);
		fprintf(stderr, AGENT_NAME ": %s\n", a->error);
		code = emit_result(a, EXIT_AGENT_NO_CAMERA);
		free(a);
		return code;
	}
	if (cameras_found(a) < a->opt.cameras)
		fprintf(stderr, AGENT_NAME
			": only %u of %u cameras appeared within %.1f s; running with those and still looking\n",
			cameras_found(a), a->opt.cameras, a->opt.wait_s);

	if (!a->stopped_by)
		run_loop(a, &wait_mask);

	code = agent_final_code(a);
	if (a->error[0])
		fprintf(stderr, AGENT_NAME ": %s\n", a->error);
	code = emit_result(a, code);
	series_free(&a->series);
	free(a);
	return code;
}
#endif /* DMAHARNESS_AGENT_TEST */
