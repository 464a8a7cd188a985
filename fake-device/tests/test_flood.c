// SPDX-License-Identifier: MIT
/* Flood engine: pattern contents and pacing. */
#include <string.h>

#include "flood.h"
#include "tests.h"

static struct flood_cfg cfg_of(enum flood_pattern p)
{
	struct flood_cfg c;

	memset(&c, 0, sizeof(c));
	c.pattern = p;
	c.seed = 1;
	c.window = 1000000;
	return c;
}

struct env {
	struct cam_descriptors d;
	struct cam_state st;
	struct flood f;
};

static struct env *env_new(const struct flood_cfg *c)
{
	static struct env e;

	assert_int_equal(cam_descriptors_build(&e.d, NULL), 0);
	cam_state_init(&e.st, &e.d);
	flood_init(&e.f, c, flood_ceiling(CAM_EP_STATUS_INTERVAL));
	return &e;
}

static int is_entity(uint8_t id)
{
	for (size_t i = 0; i < cam_n_entities; i++)
		if (cam_entities[i].id == id)
			return 1;
	return 0;
}

static void test_ceiling(void **state)
{
	(void)state;
	assert_true(flood_ceiling(1) == 8000.0);
	assert_true(flood_ceiling(4) == 1000.0);
	assert_true(flood_ceiling(0) == 8000.0);
}

static void test_control_pattern(void **state)
{
	struct flood_cfg c = cfg_of(PATTERN_CONTROL);
	struct env *e = env_new(&c);
	int seen[CAM_MAX_CTRLS] = { 0 };
	uint8_t b[CAM_STATUS_MAX_LEN];

	(void)state;
	for (int i = 0; i < 500; i++) {
		size_t len = flood_next(&e->f, &e->st, b);
		const struct ctrl_def *ctl = cam_find_ctrl(b[1], b[3]);

		assert_true(len >= 6 && len < CAM_EP_STATUS_MAXPACKET);
		assert_int_equal(b[0], 1);       /* VideoControl status */
		assert_int_equal(b[2], 0);       /* control change */
		assert_int_equal(b[4], 0);       /* value change */
		assert_non_null(ctl);
		assert_true(ctl->flags & CTRL_MAPPED);
		assert_int_equal(len, 5u + ctl->len);
		/* the state model now reports the announced value */
		assert_memory_equal(e->st.cur[cam_ctrl_index(ctl)], &b[5],
				    ctl->len);
		seen[cam_ctrl_index(ctl)]++;
	}
	/* every mapped control but the asynchronous ones (reported only when
	 * a set completes, which this camera's never does) */
	for (size_t i = 0; i < cam_n_ctrls; i++)
		if ((cam_ctrls[i].flags & CTRL_MAPPED) &&
		    !(cam_ctrls[i].info & UVC_INFO_ASYNC))
			assert_true(seen[i] > 0);
		else
			assert_int_equal(seen[i], 0);
	assert_int_equal(e->f.st.sent, 500);
	assert_int_equal(e->f.st.by_kind[PK_CONTROL], 500);
	assert_int_equal(e->f.st.by_pattern[PATTERN_CONTROL], 500);
}

static void test_control_values_in_range(void **state)
{
	struct flood_cfg c = cfg_of(PATTERN_CONTROL);
	struct env *e = env_new(&c);
	uint8_t b[CAM_STATUS_MAX_LEN];
	int changed = 0;

	(void)state;
	for (int i = 0; i < 5000; i++) {
		flood_next(&e->f, &e->st, b);
		const struct ctrl_def *ctl = cam_find_ctrl(b[1], b[3]);

		if (ctl->flags & (CTRL_NO_RANGE | CTRL_BITMAP)) {
			if (ctl->flags & CTRL_BITMAP)
				assert_true(b[5] & ctl->res[0]);
			continue;
		}
		int64_t v = ctrl_value(ctl, &b[5]);
		int64_t lo = ctrl_value(ctl, ctl->min);
		int64_t hi = ctrl_value(ctl, ctl->max);
		assert_true(v >= lo && v <= hi);
		changed |= v != ctrl_value(ctl, ctl->def);
	}
	assert_true(changed);
}

static void test_button_pattern(void **state)
{
	struct flood_cfg c = cfg_of(PATTERN_BUTTON);
	struct env *e = env_new(&c);
	uint8_t b[CAM_STATUS_MAX_LEN];

	(void)state;
	for (int i = 0; i < 10; i++) {
		assert_int_equal(flood_next(&e->f, &e->st, b), 4);
		assert_int_equal(b[0], 2);
		assert_int_equal(b[1], CAM_IF_STREAMING);
		assert_int_equal(b[2], 0);
		assert_int_equal(b[3], i % 2 == 0);     /* press, release, ... */
	}
	assert_int_equal(e->f.st.by_kind[PK_BUTTON_PRESS], 5);
	assert_int_equal(e->f.st.by_kind[PK_BUTTON_RELEASE], 5);
}

static void test_mixed_pattern(void **state)
{
	struct flood_cfg c = cfg_of(PATTERN_MIXED);
	struct env *e = env_new(&c);
	uint8_t b[CAM_STATUS_MAX_LEN];

	(void)state;
	for (int i = 0; i < 100; i++)
		flood_next(&e->f, &e->st, b);
	assert_int_equal(e->f.st.by_kind[PK_CONTROL], 50);
	assert_int_equal(e->f.st.by_kind[PK_BUTTON_PRESS] +
			 e->f.st.by_kind[PK_BUTTON_RELEASE], 50);
	assert_int_equal(e->f.st.by_pattern[PATTERN_MIXED], 100);
}

static void test_malformed_pattern(void **state)
{
	struct flood_cfg c = cfg_of(PATTERN_MALFORMED);
	struct env *e = env_new(&c);
	uint8_t b[CAM_STATUS_MAX_LEN];

	(void)state;
	for (int i = 0; i < 7000; i++) {
		uint64_t before[PK_COUNT];
		size_t len;
		int kind = -1;

		memcpy(before, e->f.st.by_kind, sizeof(before));
		len = flood_next(&e->f, &e->st, b);
		for (int k = 0; k < PK_COUNT; k++)
			if (e->f.st.by_kind[k] != before[k])
				kind = k;
		assert_true(len < CAM_EP_STATUS_MAXPACKET);
		switch (kind) {
		case PK_MAL_SHORT:
			assert_true(len >= 1);
			assert_true(b[0] == 1 ? len < 6 : len < 4);
			break;
		case PK_MAL_TYPE:
			assert_true((b[0] & 0x0f) != 1 && (b[0] & 0x0f) != 2);
			break;
		case PK_MAL_ORIGINATOR:
			assert_false(is_entity(b[1]));
			break;
		case PK_MAL_SELECTOR:
			assert_true(is_entity(b[1]));
			assert_null(cam_find_ctrl(b[1], b[3]));
			assert_false(b[1] == CAM_ENTITY_EXTENSION && b[3] == 0);
			break;
		case PK_MAL_ATTRIBUTE:
			assert_true(b[4] >= 5);
			break;
		case PK_MAL_EVENT:
			assert_int_not_equal(b[2], 0);
			break;
		case PK_MAL_ZERO:
			assert_int_equal(len, 0);
			break;
		default:
			fail_msg("packet %d has kind %d", i, kind);
		}
	}
	for (int k = PK_MAL_SHORT; k <= PK_MAL_ZERO; k++)
		assert_int_equal(e->f.st.by_kind[k], 1000);
}

static void run_random(uint64_t seed, int xu0, uint8_t out[][16],
		       size_t *lens, int n, int *xu0_seen)
{
	struct flood_cfg c = cfg_of(PATTERN_RANDOM);
	struct env *e;

	c.seed = seed;
	c.xu_selector0 = xu0;
	e = env_new(&c);
	*xu0_seen = 0;
	for (int i = 0; i < n; i++) {
		uint8_t b[CAM_STATUS_MAX_LEN];
		size_t len = flood_next(&e->f, &e->st, b);

		assert_true(len < CAM_EP_STATUS_MAXPACKET);
		if (len >= 6 && (b[0] & 0x0f) == 1 && b[1] == CAM_ENTITY_EXTENSION &&
		    b[2] == 0 && b[3] == 0 && b[4] < 5)
			(*xu0_seen)++;
		if (out && i < 64) {
			memcpy(out[i], b, len);
			lens[i] = len;
		}
	}
}

static void test_random_reproducible(void **state)
{
	static uint8_t a[64][16], b[64][16], c[64][16];
	size_t la[64], lb[64], lc[64];
	int x;

	(void)state;
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	memset(c, 0, sizeof(c));
	run_random(42, 0, a, la, 64, &x);
	run_random(42, 0, b, lb, 64, &x);
	run_random(43, 0, c, lc, 64, &x);
	assert_memory_equal(la, lb, sizeof(la));
	assert_memory_equal(a, b, sizeof(a));
	assert_true(memcmp(a, c, sizeof(a)) != 0 ||
		    memcmp(la, lc, sizeof(la)) != 0);
}

static void test_random_xu_selector0_opt_in(void **state)
{
	int seen_off, seen_on;

	(void)state;
	run_random(7, 0, NULL, NULL, 400000, &seen_off);
	run_random(7, 1, NULL, NULL, 400000, &seen_on);
	assert_int_equal(seen_off, 0);
	assert_true(seen_on > 0);
}

static void test_pacing_rate(void **state)
{
	struct flood_cfg c = cfg_of(PATTERN_BUTTON);
	struct env *e;
	uint8_t b[CAM_STATUS_MAX_LEN];
	unsigned total = 0;

	(void)state;
	c.rate = 1000;
	e = env_new(&c);
	assert_int_equal(flood_budget(&e->f, 0.0), 0);      /* not started */
	flood_start(&e->f, 10.0);
	for (int ms = 1; ms <= 1000; ms++) {
		unsigned n = flood_budget(&e->f, 10.0 + ms / 1000.0);

		for (unsigned i = 0; i < n; i++)
			flood_next(&e->f, &e->st, b);
		total += n;
	}
	assert_true(total >= 995 && total <= 1001);

	/* rate max: the 8000/s ceiling */
	c.rate = 0;
	e = env_new(&c);
	flood_start(&e->f, 0);
	total = 0;
	for (int ms = 1; ms <= 1000; ms++) {
		unsigned n = flood_budget(&e->f, ms / 1000.0);

		for (unsigned i = 0; i < n; i++)
			flood_next(&e->f, &e->st, b);
		total += n;
	}
	assert_true(total >= 7990 && total <= 8001);
	/* the per-second series adds up */
	assert_int_equal(e->f.st.per_s_len, 2);     /* [0,1) and t = 1.0 */
	assert_int_equal(e->f.st.per_s[0] + e->f.st.per_s[1], total);
	assert_true(e->f.st.per_s[0] >= 7980);
	/* a long stall does not turn into a burst */
	assert_true(flood_budget(&e->f, 5.0) <= 400);
}

static void test_pacing_window(void **state)
{
	struct flood_cfg c = cfg_of(PATTERN_BUTTON);
	struct env *e;
	uint8_t b[CAM_STATUS_MAX_LEN];
	unsigned total = 0;

	(void)state;
	c.guest_rate = 100;             /* the modelled guest drains 100/s */
	c.window = 50;
	e = env_new(&c);
	flood_start(&e->f, 0);
	for (int ms = 1; ms <= 1000; ms++) {
		unsigned n = flood_budget(&e->f, ms / 1000.0);

		for (unsigned i = 0; i < n; i++)
			flood_next(&e->f, &e->st, b);
		total += n;
	}
	assert_true(total >= 145 && total <= 151);  /* window + drained */
	assert_true(e->f.st.window_full > 0);
	/* a stop discards what the model says is queued */
	flood_stop(&e->f, 1.0);
	assert_true(e->f.st.est_discarded > 40);
	assert_int_equal(flood_budget(&e->f, 2.0), 0);
	assert_int_equal(e->f.st.starts, 1);
	assert_int_equal(e->f.st.stops, 1);
}

static void test_count_and_duration(void **state)
{
	struct flood_cfg c = cfg_of(PATTERN_CONTROL);
	struct env *e;
	uint8_t b[CAM_STATUS_MAX_LEN];

	(void)state;
	c.count = 500;
	e = env_new(&c);
	flood_start(&e->f, 0);
	for (int ms = 1; ms <= 1000; ms++) {
		unsigned n = flood_budget(&e->f, ms / 1000.0);

		for (unsigned i = 0; i < n; i++)
			flood_next(&e->f, &e->st, b);
	}
	assert_int_equal(e->f.st.sent, 500);
	assert_true(e->f.done);

	c.count = 0;
	c.duration = 0.5;
	e = env_new(&c);
	flood_start(&e->f, 100);
	for (int ms = 1; ms <= 1000; ms++) {
		unsigned n = flood_budget(&e->f, 100 + ms / 1000.0);

		for (unsigned i = 0; i < n; i++)
			flood_next(&e->f, &e->st, b);
	}
	assert_true(e->f.done);
	assert_true(e->f.st.sent >= 3990 && e->f.st.sent <= 4001);
	assert_int_equal(e->f.st.per_s_len, 1);
	assert_int_equal(e->f.st.per_s[0], e->f.st.sent);
	/* the duration counts from the first start, across restarts */
	flood_stop(&e->f, 101);
	flood_start(&e->f, 102);
	assert_int_equal(flood_budget(&e->f, 102.5), 0);
}

TEST_LIST(flood_tests,
	cmocka_unit_test(test_ceiling),
	cmocka_unit_test(test_control_pattern),
	cmocka_unit_test(test_control_values_in_range),
	cmocka_unit_test(test_button_pattern),
	cmocka_unit_test(test_mixed_pattern),
	cmocka_unit_test(test_malformed_pattern),
	cmocka_unit_test(test_random_reproducible),
	cmocka_unit_test(test_random_xu_selector0_opt_in),
	cmocka_unit_test(test_pacing_rate),
	cmocka_unit_test(test_pacing_window),
	cmocka_unit_test(test_count_and_duration),
)
