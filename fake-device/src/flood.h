/* SPDX-License-Identifier: MIT */
/*
 * Flood engine: what status packets to send (patterns) and when (pacing).
 * No I/O and no clock of its own: the caller passes the time in seconds.
 */
#ifndef FAKE_UVC_FLOOD_H
#define FAKE_UVC_FLOOD_H

#include <stddef.h>
#include <stdint.h>

#include "camera.h"

enum flood_pattern {
	PATTERN_CONTROL,
	PATTERN_BUTTON,
	PATTERN_MIXED,
	PATTERN_MALFORMED,
	PATTERN_RANDOM,
	PATTERN_COUNT
};

/* What each sent packet was, for the counters. */
enum pkt_kind {
	PK_CONTROL,            /* value change of a control uvcvideo maps */
	PK_BUTTON_PRESS,
	PK_BUTTON_RELEASE,
	PK_MAL_SHORT,          /* shorter than the driver's minimum */
	PK_MAL_TYPE,           /* unknown bStatusType */
	PK_MAL_ORIGINATOR,     /* no such entity */
	PK_MAL_SELECTOR,       /* no such control on a real entity */
	PK_MAL_ATTRIBUTE,      /* bAttribute beyond "max change" */
	PK_MAL_EVENT,          /* bEvent != 0 on a control status */
	PK_MAL_ZERO,           /* zero-length packet */
	PK_RANDOM,
	PK_COUNT
};

extern const char *const flood_pattern_names[PATTERN_COUNT];
extern const char *const pkt_kind_names[PK_COUNT];

int flood_pattern_parse(const char *s, enum flood_pattern *out);

struct flood_cfg {
	enum flood_pattern pattern;
	double rate;           /* packets/s; <= 0: the endpoint's ceiling */
	uint64_t count;        /* stop after this many packets; 0: no limit */
	double duration;       /* stop this long after the first start; 0: none */
	uint64_t seed;         /* for `random` (and the malformed values) */
	double guest_rate;     /* consumption model; <= 0: the ceiling */
	unsigned window;       /* max packets modelled as queued in QEMU */
	int xu_selector0;      /* allow (XU, selector 0) value events */
};

#define FLOOD_SERIES_MAX 3600   /* per-second sent counts kept (1 hour) */

struct flood_stats {
	uint64_t sent;
	uint64_t bytes;
	uint64_t by_kind[PK_COUNT];
	uint64_t by_pattern[PATTERN_COUNT];
	uint64_t starts, stops;
	uint64_t window_full;  /* sends deferred because the model queue is full */
	double est_consumed;   /* packets the guest could have taken (model) */
	double est_discarded;  /* modelled queue dropped by QEMU on a stop */
	/* packets sent in second i after the first start (the last second
	 * collects everything beyond FLOOD_SERIES_MAX) */
	uint32_t per_s[FLOOD_SERIES_MAX];
	size_t per_s_len;
};

struct flood {
	struct flood_cfg cfg;
	double ceiling;        /* transfers/s the endpoint allows */
	double rate;           /* effective send rate */
	double guest_rate;

	int running;           /* guest has started interrupt receiving */
	int done;              /* count or duration reached */
	double first_start;    /* < 0 until the first start */
	double last;           /* time of the last budget update */
	double tokens;
	double est_queue;

	uint64_t prng;
	unsigned step;         /* position in the pattern's cycle */
	unsigned ctrl_cursor;
	unsigned value_step;
	uint8_t button;

	struct flood_stats st;
};

/* Transfers per second an interrupt endpoint allows at high speed. */
double flood_ceiling(uint8_t bInterval);

void flood_init(struct flood *f, const struct flood_cfg *cfg, double ceiling);
void flood_start(struct flood *f, double now);
void flood_stop(struct flood *f, double now);

/* How many packets may be sent at @now (0 when not running or done). */
unsigned flood_budget(struct flood *f, double now);

/* Build the next packet into @buf (CAM_STATUS_MAX_LEN bytes), account it as
 * sent, and return its length (0 is a valid, zero-length packet).  Value
 * events also update @st so that GET_CUR agrees with what was announced. */
size_t flood_next(struct flood *f, struct cam_state *st, uint8_t *buf);

/* Account one packet of @len bytes built by someone else (the profile
 * device's generators) as sent: the counters and the pacing. */
void flood_account(struct flood *f, size_t len);

/* When the caller should call flood_budget() again. */
double flood_next_wakeup(const struct flood *f, double now, double batch);

#endif
