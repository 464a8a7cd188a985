// SPDX-License-Identifier: MIT
/* The control state model: standard requests and UVC class requests. */
#include <string.h>

#include "camera.h"
#include "tests.h"

struct fixture {
	struct cam_descriptors d;
	struct cam_state st;
	uint8_t in[4096];
};

static struct fixture *fx_new(void)
{
	static struct fixture f;

	assert_int_equal(cam_descriptors_build(&f.d, NULL), 0);
	cam_state_init(&f.st, &f.d);
	assert_int_equal(cam_set_configuration(&f.st, 1), 0);
	return &f;
}

static int get(struct fixture *f, uint8_t req, uint8_t unit, uint8_t sel,
	       uint8_t iface, uint16_t len)
{
	struct usb_setup s = { 0xa1, req, (uint16_t)(sel << 8),
			       (uint16_t)(unit << 8 | iface), len };

	return cam_control(&f->st, &s, NULL, 0, f->in, sizeof(f->in)).len;
}

static int set(struct fixture *f, uint8_t unit, uint8_t sel, uint8_t iface,
	       const uint8_t *data, uint16_t len)
{
	struct usb_setup s = { 0x21, UVC_SET_CUR, (uint16_t)(sel << 8),
			       (uint16_t)(unit << 8 | iface), len };

	return cam_control(&f->st, &s, data, len, f->in, sizeof(f->in)).len;
}

static int error_code(struct fixture *f)
{
	assert_int_equal(get(f, UVC_GET_CUR, 0, 0x02, 0, 1), 1);
	return f->in[0];
}

static int std_req(struct fixture *f, uint8_t type, uint8_t req,
		   uint16_t value, uint16_t index, uint16_t len)
{
	struct usb_setup s = { type, req, value, index, len };

	return cam_control(&f->st, &s, NULL, 0, f->in, sizeof(f->in)).len;
}

static void test_every_control_answers_gets(void **state)
{
	struct fixture *f = fx_new();

	(void)state;
	for (size_t i = 0; i < cam_n_ctrls; i++) {
		const struct ctrl_def *c = &cam_ctrls[i];

		assert_int_equal(get(f, UVC_GET_INFO, c->unit, c->selector, 0, 1), 1);
		assert_int_equal(f->in[0], c->info);
		assert_int_equal(get(f, UVC_GET_LEN, c->unit, c->selector, 0, 2), 2);
		assert_int_equal(f->in[0] | f->in[1] << 8, c->len);
		assert_int_equal(get(f, UVC_GET_MIN, c->unit, c->selector, 0,
				     c->len), c->len);
		assert_memory_equal(f->in, c->min, c->len);
		assert_int_equal(get(f, UVC_GET_MAX, c->unit, c->selector, 0,
				     c->len), c->len);
		assert_memory_equal(f->in, c->max, c->len);
		assert_int_equal(get(f, UVC_GET_RES, c->unit, c->selector, 0,
				     c->len), c->len);
		assert_int_equal(get(f, UVC_GET_DEF, c->unit, c->selector, 0,
				     c->len), c->len);
		assert_memory_equal(f->in, c->def, c->len);
		if (c->unit == 0 || (c->unit == CAM_ENTITY_EXTENSION &&
				     c->selector == 3))
			continue;       /* error code, frame counter: live */
		assert_int_equal(get(f, UVC_GET_CUR, c->unit, c->selector, 0,
				     c->len), c->len);
		assert_memory_equal(f->in, c->def, c->len);
	}
}

static void test_set_cur_range_and_error_code(void **state)
{
	struct fixture *f = fx_new();
	const uint8_t bright_ok[2] = { 0xc0, 0xff };     /* -64 */
	const uint8_t bright_low[2] = { 0xbf, 0xff };    /* -65 */
	const uint8_t bright_hi[2] = { 65, 0 };
	const uint8_t wb[2] = { 0x70, 0x17 };            /* 6000 K */

	(void)state;
	assert_int_equal(set(f, CAM_ENTITY_PROCESSING, 0x02, 0, bright_ok, 2), 0);
	assert_int_equal(get(f, UVC_GET_CUR, CAM_ENTITY_PROCESSING, 0x02, 0, 2), 2);
	assert_memory_equal(f->in, bright_ok, 2);
	assert_int_equal(error_code(f), UVC_ERR_NONE);

	assert_int_equal(set(f, CAM_ENTITY_PROCESSING, 0x02, 0, bright_low, 2), -1);
	assert_int_equal(error_code(f), UVC_ERR_OUT_OF_RANGE);
	/* reading the error code does not clear it ... */
	assert_int_equal(error_code(f), UVC_ERR_OUT_OF_RANGE);
	assert_int_equal(set(f, CAM_ENTITY_PROCESSING, 0x02, 0, bright_hi, 2), -1);
	/* ... the next successful request does */
	assert_int_equal(set(f, CAM_ENTITY_PROCESSING, 0x0a, 0, wb, 2), 0);
	assert_int_equal(error_code(f), UVC_ERR_NONE);
	/* the failed SETs left the value alone */
	get(f, UVC_GET_CUR, CAM_ENTITY_PROCESSING, 0x02, 0, 2);
	assert_memory_equal(f->in, bright_ok, 2);

	/* wrong length */
	assert_int_equal(set(f, CAM_ENTITY_PROCESSING, 0x02, 0, wb, 1), -1);
	assert_int_equal(error_code(f), UVC_ERR_INVALID_REQUEST);
}

static void test_read_only_and_unknown(void **state)
{
	struct fixture *f = fx_new();
	const uint8_t one = 1;

	(void)state;
	/* privacy is GET + AUTOUPDATE only */
	assert_int_equal(set(f, CAM_ENTITY_CAMERA, 0x11, 0, &one, 1), -1);
	assert_int_equal(error_code(f), UVC_ERR_INVALID_REQUEST);
	/* unknown selector on a real unit, and an unknown unit */
	assert_int_equal(get(f, UVC_GET_CUR, CAM_ENTITY_CAMERA, 0x1f, 0, 1), -1);
	assert_int_equal(error_code(f), UVC_ERR_INVALID_CONTROL);
	assert_int_equal(get(f, UVC_GET_CUR, 0x42, 0x01, 0, 1), -1);
	assert_int_equal(error_code(f), UVC_ERR_INVALID_UNIT);
	/* XU selector 0 does not exist */
	assert_int_equal(get(f, UVC_GET_INFO, CAM_ENTITY_EXTENSION, 0, 0, 1), -1);
	/* a GET request code with the OUT direction bit */
	struct usb_setup s = { 0x21, UVC_GET_CUR, 0x0200, 0x0200, 2 };
	assert_int_equal(cam_control(&f->st, &s, NULL, 0, f->in,
				     sizeof(f->in)).len, -1);
}

static void test_bitmap_control(void **state)
{
	struct fixture *f = fx_new();
	const uint8_t manual = 0x01, aperture = 0x08, auto_ = 0x02, two = 0x09;

	(void)state;
	assert_int_equal(set(f, CAM_ENTITY_CAMERA, 0x02, 0, &manual, 1), 0);
	assert_int_equal(set(f, CAM_ENTITY_CAMERA, 0x02, 0, &aperture, 1), 0);
	assert_int_equal(set(f, CAM_ENTITY_CAMERA, 0x02, 0, &auto_, 1), -1);
	assert_int_equal(set(f, CAM_ENTITY_CAMERA, 0x02, 0, &two, 1), -1);
	get(f, UVC_GET_CUR, CAM_ENTITY_CAMERA, 0x02, 0, 1);
	assert_int_equal(f->in[0], aperture);
}

static void test_xu_controls(void **state)
{
	struct fixture *f = fx_new();
	uint32_t a, b;

	(void)state;
	assert_int_equal(get(f, UVC_GET_LEN, CAM_ENTITY_EXTENSION, 4, 0, 2), 2);
	assert_int_equal(f->in[0], 8);
	/* the frame counter moves on every read */
	get(f, UVC_GET_CUR, CAM_ENTITY_EXTENSION, 3, 0, 4);
	memcpy(&a, f->in, 4);
	get(f, UVC_GET_CUR, CAM_ENTITY_EXTENSION, 3, 0, 4);
	memcpy(&b, f->in, 4);
	assert_int_equal(b, a + 1);
	/* short wLength truncates */
	assert_int_equal(get(f, UVC_GET_CUR, CAM_ENTITY_EXTENSION, 4, 0, 3), 3);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void test_probe_commit(void **state)
{
	struct fixture *f = fx_new();
	uint8_t probe[34] = { 0 };

	(void)state;
	assert_int_equal(get(f, UVC_GET_LEN, 0, VS_PROBE_CONTROL, 1, 2), 2);
	assert_int_equal(f->in[0], 34);
	/* GET_DEF must be complete or uvcvideo warns */
	assert_int_equal(get(f, UVC_GET_DEF, 0, VS_PROBE_CONTROL, 1, 34), 34);
	assert_int_equal(f->in[2], 1);
	assert_int_equal(f->in[3], 1);
	assert_int_equal(le32(&f->in[4]), 333333);

	/* YUYV 320x240 at 15 fps (666666), asking a near interval */
	probe[2] = 2;
	probe[3] = 2;
	probe[4] = 0x10;
	probe[5] = 0x2c;
	probe[6] = 0x0a;                /* 0x0a2c10 = 666640 */
	assert_int_equal(set(f, 0, VS_PROBE_CONTROL, 1, probe, 34), 0);
	assert_int_equal(get(f, UVC_GET_CUR, 0, VS_PROBE_CONTROL, 1, 34), 34);
	assert_int_equal(f->in[2], 2);
	assert_int_equal(f->in[3], 2);
	assert_int_equal(le32(&f->in[4]), 666666);
	assert_int_equal(le32(&f->in[18]), 320 * 240 * 2);
	assert_true(le32(&f->in[22]) > 0 && le32(&f->in[22]) <= 1024);
	assert_int_equal(le32(&f->in[26]), CAM_CLOCK_HZ);

	/* a bogus format is negotiated down to a supported one */
	probe[2] = 9;
	probe[3] = 7;
	assert_int_equal(set(f, 0, VS_PROBE_CONTROL, 1, probe, 26), 0);
	get(f, UVC_GET_CUR, 0, VS_PROBE_CONTROL, 1, 34);
	assert_int_equal(f->in[2], 1);
	assert_int_equal(f->in[3], 1);
	/* but COMMIT of a bogus format is refused */
	assert_int_equal(set(f, 0, VS_COMMIT_CONTROL, 1, probe, 34), -1);
	assert_int_equal(error_code(f), UVC_ERR_INVALID_VALUE);
	/* too short */
	assert_int_equal(set(f, 0, VS_PROBE_CONTROL, 1, probe, 10), -1);
	/* commit what probe returned */
	memcpy(probe, f->in, 34);
	get(f, UVC_GET_CUR, 0, VS_PROBE_CONTROL, 1, 34);
	memcpy(probe, f->in, 34);
	assert_int_equal(set(f, 0, VS_COMMIT_CONTROL, 1, probe, 34), 0);
	assert_int_equal(get(f, UVC_GET_CUR, 0, VS_COMMIT_CONTROL, 1, 34), 34);
	assert_memory_equal(f->in, probe, 34);
	/* still probe and the stream error code */
	assert_int_equal(get(f, UVC_GET_CUR, 0, VS_STILL_PROBE_CONTROL, 1, 11), 11);
	assert_int_equal(get(f, UVC_GET_CUR, 0, VS_STREAM_ERROR_CODE_CONTROL,
			     1, 1), 1);
	assert_int_equal(get(f, UVC_GET_CUR, 0, 0x20, 1, 1), -1);
}

static void test_standard_requests(void **state)
{
	struct fixture *f = fx_new();

	(void)state;
	assert_int_equal(std_req(f, 0x80, 6, 0x0100, 0, 64), 18);
	assert_int_equal(std_req(f, 0x80, 6, 0x0100, 0, 8), 8);
	assert_int_equal(std_req(f, 0x80, 6, 0x0200, 0, 9), 9);
	assert_int_equal(std_req(f, 0x80, 6, 0x0200, 0, 0xffff),
			 (int)f->d.config_len);
	assert_int_equal(std_req(f, 0x80, 6, 0x0201, 0, 0xffff), -1);
	assert_int_equal(std_req(f, 0x80, 6, 0x0302, 0x0409, 255), 32);
	assert_int_equal(std_req(f, 0x80, 6, 0x0309, 0x0409, 255), -1);
	assert_int_equal(std_req(f, 0x80, 6, 0x0600, 0, 10), 10);
	assert_int_equal(std_req(f, 0x80, 6, 0x0f00, 0, 5), -1); /* BOS */
	/* GET_STATUS device, interface, endpoint */
	assert_int_equal(std_req(f, 0x80, 0, 0, 0, 2), 2);
	assert_int_equal(f->in[0], 0);
	assert_int_equal(std_req(f, 0x81, 0, 0, 1, 2), 2);
	assert_int_equal(std_req(f, 0x81, 0, 0, 5, 2), -1);
	assert_int_equal(std_req(f, 0x82, 0, 0, CAM_EP_STATUS, 2), 2);
	assert_int_equal(f->in[0], 0);
	/* halt and clear on the status endpoint */
	assert_int_equal(std_req(f, 0x02, 3, 0, CAM_EP_STATUS, 0), 0);
	std_req(f, 0x82, 0, 0, CAM_EP_STATUS, 2);
	assert_int_equal(f->in[0], 1);
	assert_int_equal(std_req(f, 0x02, 1, 0, CAM_EP_STATUS, 0), 0);
	std_req(f, 0x82, 0, 0, CAM_EP_STATUS, 2);
	assert_int_equal(f->in[0], 0);
	/* no remote wakeup, no such endpoint */
	assert_int_equal(std_req(f, 0x00, 3, 1, 0, 0), -1);
	assert_int_equal(std_req(f, 0x82, 0, 0, 0x85, 2), -1);
	/* the video endpoint exists only in alt > 0 */
	assert_int_equal(std_req(f, 0x82, 0, 0, CAM_EP_VIDEO, 2), -1);
	assert_int_equal(std_req(f, 0x01, 11, 2, 1, 0), 0);
	assert_int_equal(std_req(f, 0x82, 0, 0, CAM_EP_VIDEO, 2), 2);
	assert_int_equal(std_req(f, 0x81, 10, 0, 1, 1), 1);
	assert_int_equal(f->in[0], 2);
	assert_int_equal(std_req(f, 0x01, 11, 4, 1, 0), -1);
	assert_int_equal(std_req(f, 0x01, 11, 1, 0, 0), -1);
	/* vendor requests stall */
	assert_int_equal(std_req(f, 0xc0, 1, 0, 0, 4), -1);
	/* class requests need a configuration */
	assert_int_equal(std_req(f, 0x00, 9, 0, 0, 0), 0);
	assert_int_equal(get(f, UVC_GET_INFO, CAM_ENTITY_PROCESSING, 2, 0, 1), -1);
	assert_int_equal(std_req(f, 0x00, 9, 2, 0, 0), -1);
	assert_int_equal(std_req(f, 0x80, 8, 0, 0, 1), 1);
	assert_int_equal(f->in[0], 0);
}

static void test_reset_keeps_configuration(void **state)
{
	struct fixture *f = fx_new();
	const uint8_t b[2] = { 10, 0 };

	(void)state;
	set(f, CAM_ENTITY_PROCESSING, 0x02, 0, b, 2);
	assert_int_equal(cam_set_interface(&f->st, 1, 3), 0);
	f->st.last_error = 4;
	cam_state_reset(&f->st);
	assert_int_equal(f->st.configuration, 1);
	assert_int_equal(f->st.alt[1], 3);
	assert_int_equal(f->st.last_error, 0);
	get(f, UVC_GET_CUR, CAM_ENTITY_PROCESSING, 0x02, 0, 2);
	assert_memory_equal(f->in, b, 2);
}

TEST_LIST(camera_tests,
	cmocka_unit_test(test_every_control_answers_gets),
	cmocka_unit_test(test_set_cur_range_and_error_code),
	cmocka_unit_test(test_read_only_and_unknown),
	cmocka_unit_test(test_bitmap_control),
	cmocka_unit_test(test_xu_controls),
	cmocka_unit_test(test_probe_commit),
	cmocka_unit_test(test_standard_requests),
	cmocka_unit_test(test_reset_keeps_configuration),
)
