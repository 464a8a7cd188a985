// SPDX-License-Identifier: MIT
/* Flood engine: status packet patterns and pacing. */
#include "flood.h"

#include <math.h>
#include <string.h>

#define UVC_STATUS_TYPE_CONTROL   0x01
#define UVC_STATUS_TYPE_STREAMING 0x02

const char *const flood_pattern_names[PATTERN_COUNT] = {
	"control", "button", "mixed", "malformed", "random",
};

const char *const pkt_kind_names[PK_COUNT] = {
	"control", "button_press", "button_release", "malformed_short",
	"malformed_type", "malformed_originator", "malformed_selector",
	"malformed_attribute", "malformed_event", "malformed_zero_length",
	"random",
};

int flood_pattern_parse(const char *s, enum flood_pattern *out)
{
	for (int i = 0; i < PATTERN_COUNT; i++) {
		if (strcmp(s, flood_pattern_names[i]) == 0) {
			*out = (enum flood_pattern)i;
			return 0;
		}
	}
	return -1;
}

double flood_ceiling(uint8_t bInterval)
{
	if (bInterval < 1)
		bInterval = 1;
	if (bInterval > 16)
		bInterval = 16;
	return 8000.0 / (double)(1u << (bInterval - 1));
}

/* splitmix64: small, seedable, reproducible across platforms. */
static uint64_t prng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned prng_below(uint64_t *s, unsigned n)
{
	return n ? (unsigned)(prng_next(s) % n) : 0;
}

void flood_init(struct flood *f, const struct flood_cfg *cfg, double ceiling)
{
	memset(f, 0, sizeof(*f));
	f->cfg = *cfg;
	f->ceiling = ceiling;
	f->rate = cfg->rate > 0 && cfg->rate < ceiling ? cfg->rate : ceiling;
	f->guest_rate = cfg->guest_rate > 0 ? cfg->guest_rate : ceiling;
	if (f->cfg.window == 0)
		f->cfg.window = 1;
	f->first_start = -1;
	f->prng = cfg->seed;
}

void flood_start(struct flood *f, double now)
{
	if (f->running)
		return;
	f->running = 1;
	f->st.starts++;
	if (f->first_start < 0)
		f->first_start = now;
	f->last = now;
	f->tokens = 0;
	f->est_queue = 0;
}

void flood_stop(struct flood *f, double now)
{
	if (!f->running)
		return;
	(void)flood_budget(f, now);     /* settle the model up to now */
	f->running = 0;
	f->st.stops++;
	/* QEMU frees its buffered packets when the endpoint stops. */
	f->st.est_discarded += f->est_queue;
	f->est_queue = 0;
}

unsigned flood_budget(struct flood *f, double now)
{
	double dt, drained, burst, n;

	if (!f->running)
		return 0;
	if (!f->done && f->cfg.duration > 0 &&
	    now - f->first_start >= f->cfg.duration)
		f->done = 1;
	if (!f->done && f->cfg.count && f->st.sent >= f->cfg.count)
		f->done = 1;

	dt = now - f->last;
	if (dt < 0)
		dt = 0;
	f->last = now;

	drained = f->guest_rate * dt;
	if (drained > f->est_queue)
		drained = f->est_queue;
	f->est_queue -= drained;
	f->st.est_consumed += drained;

	if (f->done)
		return 0;

	/* Tokens accrue at the send rate; a late wakeup (busy host) is made
	 * up, but a long stall (SIGSTOP, paused peer) does not turn into a
	 * burst: at most 50 ms worth of packets, 400 at 8000/s, well below
	 * QEMU's 1000-packet target queue. */
	f->tokens += f->rate * dt;
	burst = f->rate * 0.050;
	if (burst < 1)
		burst = 1;
	if (f->tokens > burst)
		f->tokens = burst;

	n = floor(f->tokens);
	if (n > (double)f->cfg.window - f->est_queue) {
		n = floor((double)f->cfg.window - f->est_queue);
		f->st.window_full++;
	}
	if (n < 0)
		n = 0;
	if (f->cfg.count && n > (double)(f->cfg.count - f->st.sent))
		n = (double)(f->cfg.count - f->st.sent);
	return (unsigned)n;
}

double flood_next_wakeup(const struct flood *f, double now, double batch)
{
	double period;

	if (!f->running || f->done)
		return -1;
	period = 1.0 / f->rate;
	return now + (period > batch ? period : batch);
}

/* ---- Patterns ------------------------------------------------------------ */

static const struct ctrl_def *mapped_ctrl(unsigned k)
{
	unsigned seen = 0;

	for (;;) {
		for (size_t i = 0; i < cam_n_ctrls; i++) {
			const struct ctrl_def *c = &cam_ctrls[i];

			/*
			 * An asynchronous control's change is reported when a
			 * set of it completes, never on its own: the control
			 * flood leaves it out (desc.c: Focus, Absolute).
			 */
			if (!(c->flags & CTRL_MAPPED) ||
			    (c->info & UVC_INFO_ASYNC) ||
			    5u + c->len > CAM_STATUS_MAX_LEN)
				continue;
			if (seen++ == k)
				return c;
		}
		if (seen == 0)
			return NULL;
		k %= seen;
		seen = 0;
	}
}

/* The value a control takes at step @k of its walk through its range. */
static void walk_value(const struct ctrl_def *c, unsigned k, uint8_t *out)
{
	memcpy(out, c->def, CTRL_MAX_LEN);
	if (c->flags & CTRL_BITMAP) {
		uint8_t bits[8];
		unsigned n = 0;

		for (unsigned bit = 0; bit < 8; bit++)
			if ((c->res[0] >> bit) & 1)
				bits[n++] = (uint8_t)(1u << bit);
		if (n)
			out[0] = bits[k % n];
		return;
	}
	if (c->flags & CTRL_NO_RANGE) {
		/* Multi-field (pan/tilt): walk the first field by its step. */
		int64_t step = ctrl_value(c, c->res) ? ctrl_value(c, c->res) : 1;

		ctrl_store(c, out, (int64_t)(k % 10) * step);
		return;
	}

	int64_t lo = ctrl_value(c, c->min), hi = ctrl_value(c, c->max);
	int64_t step = ctrl_value(c, c->res);
	if (c->len == 4 && !(c->flags & CTRL_SIGNED)) {
		lo &= 0xffffffff;
		hi &= 0xffffffff;
		step &= 0xffffffff;
	}
	if (step <= 0)
		step = 1;
	if (hi <= lo) {
		ctrl_store(c, out, lo);
		return;
	}
	int64_t span = (hi - lo) / step + 1;
	ctrl_store(c, out, lo + ((int64_t)k % span) * step);
}

static size_t make_control(struct flood *f, struct cam_state *st, uint8_t *b)
{
	const struct ctrl_def *c = mapped_ctrl(f->ctrl_cursor++);

	if (!c)
		return 0;
	if (f->ctrl_cursor % 64 == 0)
		f->value_step++;
	b[0] = UVC_STATUS_TYPE_CONTROL;
	b[1] = c->unit;
	b[2] = 0;                       /* bEvent: control change */
	b[3] = c->selector;
	b[4] = 0;                       /* bAttribute: value change */
	walk_value(c, f->value_step + f->ctrl_cursor, &b[5]);
	if (st)
		memcpy(st->cur[cam_ctrl_index(c)], &b[5], c->len);
	f->st.by_kind[PK_CONTROL]++;
	return 5u + c->len;
}

static size_t make_button(struct flood *f, uint8_t *b)
{
	f->button ^= 1;
	b[0] = UVC_STATUS_TYPE_STREAMING;
	b[1] = CAM_IF_STREAMING;
	b[2] = 0;                       /* bEvent: button press */
	b[3] = f->button;
	f->st.by_kind[f->button ? PK_BUTTON_PRESS : PK_BUTTON_RELEASE]++;
	return 4;
}

static int entity_known(uint8_t id)
{
	for (size_t i = 0; i < cam_n_entities; i++)
		if (cam_entities[i].id == id)
			return 1;
	return 0;
}

/* (XU, selector 0) matches the extension unit's not-yet-initialized controls
 * in uvcvideo (info.selector is 0 until first use); see README. */
static int xu_selector0(const uint8_t *b, size_t len)
{
	return len >= 6 && (b[0] & 0x0f) == UVC_STATUS_TYPE_CONTROL &&
	       b[1] == CAM_ENTITY_EXTENSION && b[2] == 0 && b[3] == 0 &&
	       b[4] < 5;
}

static size_t make_malformed(struct flood *f, uint8_t *b)
{
	const struct ctrl_def *c = mapped_ctrl(f->ctrl_cursor++);
	unsigned r = (unsigned)prng_next(&f->prng);
	size_t len;

	memset(b, 0, CAM_STATUS_MAX_LEN);
	switch (f->step++ % 7) {
	case 0:                         /* too short */
		if (r & 1) {
			len = 1 + r % 5;        /* control status needs 6 */
			b[0] = UVC_STATUS_TYPE_CONTROL;
			b[1] = c->unit;
			if (len > 3)
				b[3] = c->selector;
		} else {
			len = 1 + r % 3;        /* button needs 4 */
			b[0] = UVC_STATUS_TYPE_STREAMING;
			b[1] = CAM_IF_STREAMING;
		}
		f->st.by_kind[PK_MAL_SHORT]++;
		return len;
	case 1:                         /* unknown status type */
		b[0] = (uint8_t)((r >> 4) & 0xf0);
		b[0] |= (uint8_t)(r % 2 ? 0 : 3 + r % 13);
		b[1] = c->unit;
		b[3] = c->selector;
		f->st.by_kind[PK_MAL_TYPE]++;
		return 6;
	case 2:                         /* unknown originator */
		b[0] = UVC_STATUS_TYPE_CONTROL;
		do {
			b[1] = (uint8_t)prng_next(&f->prng);
		} while (entity_known(b[1]));
		b[3] = c->selector;
		f->st.by_kind[PK_MAL_ORIGINATOR]++;
		return 6 + r % 3;
	case 3:                         /* unknown selector on a real entity */
		b[0] = UVC_STATUS_TYPE_CONTROL;
		b[1] = cam_entities[r % 3].id;  /* CT, PU or XU */
		do {
			b[3] = (uint8_t)prng_next(&f->prng);
		} while (cam_find_ctrl(b[1], b[3]) ||
			 (!f->cfg.xu_selector0 && xu_selector0(b, 6)));
		f->st.by_kind[PK_MAL_SELECTOR]++;
		return 6 + r % 3;
	case 4:                         /* attribute beyond max change */
		b[0] = UVC_STATUS_TYPE_CONTROL;
		b[1] = c->unit;
		b[3] = c->selector;
		b[4] = (uint8_t)(5 + r % 251);
		f->st.by_kind[PK_MAL_ATTRIBUTE]++;
		return 5u + c->len;
	case 5:                         /* control status with bEvent != 0 */
		b[0] = UVC_STATUS_TYPE_CONTROL;
		b[1] = c->unit;
		b[2] = (uint8_t)(1 + r % 255);
		b[3] = c->selector;
		f->st.by_kind[PK_MAL_EVENT]++;
		return 5u + c->len;
	default:
		f->st.by_kind[PK_MAL_ZERO]++;
		return 0;
	}
}

static uint8_t pick(uint64_t *s, const uint8_t *set, unsigned n)
{
	unsigned r = prng_below(s, 2 * n);

	return r < n ? set[r] : (uint8_t)prng_next(s);
}

static size_t make_random(struct flood *f, uint8_t *b)
{
	static const uint8_t types[] = { 0x01, 0x02 };
	static const uint8_t origins[] = { 0, CAM_ENTITY_CAMERA,
		CAM_ENTITY_PROCESSING, CAM_ENTITY_EXTENSION, CAM_ENTITY_OUTPUT,
		CAM_IF_STREAMING };
	static const uint8_t small[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
		12, 13, 14, 15, 16, 17, 18, 19 };
	size_t len = prng_below(&f->prng, CAM_STATUS_MAX_LEN + 1);

	for (size_t i = 0; i < CAM_STATUS_MAX_LEN; i++)
		b[i] = (uint8_t)prng_next(&f->prng);
	b[0] = pick(&f->prng, types, sizeof(types));
	b[1] = pick(&f->prng, origins, sizeof(origins));
	b[2] = pick(&f->prng, small, 2);
	b[3] = pick(&f->prng, small, sizeof(small));
	b[4] = pick(&f->prng, small, 6);
	if (!f->cfg.xu_selector0 && xu_selector0(b, len))
		b[3] = 1;
	f->st.by_kind[PK_RANDOM]++;
	return len;
}

size_t flood_next(struct flood *f, struct cam_state *st, uint8_t *buf)
{
	size_t len;

	switch (f->cfg.pattern) {
	case PATTERN_CONTROL:
		len = make_control(f, st, buf);
		break;
	case PATTERN_BUTTON:
		len = make_button(f, buf);
		break;
	case PATTERN_MIXED:
		len = f->step++ % 2 ? make_button(f, buf) :
				      make_control(f, st, buf);
		break;
	case PATTERN_MALFORMED:
		len = make_malformed(f, buf);
		break;
	default:
		len = make_random(f, buf);
		break;
	}
	flood_account(f, len);
	return len;
}

void flood_account(struct flood *f, size_t len)
{
	if (f->first_start >= 0) {
		double t = f->last - f->first_start;
		size_t i = t > 0 ? (size_t)t : 0;

		if (i >= FLOOD_SERIES_MAX)
			i = FLOOD_SERIES_MAX - 1;
		f->st.per_s[i]++;
		if (f->st.per_s_len < i + 1)
			f->st.per_s_len = i + 1;
	}
	f->st.sent++;
	f->st.bytes += len;
	f->st.by_pattern[f->cfg.pattern]++;
	f->tokens -= 1;
	f->est_queue += 1;
}
