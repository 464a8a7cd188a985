// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: arbitrary bytes as the usb-guest's side of the usbredir
 * stream, after a well-formed guest hello (as QEMU sends it), so that the
 * fuzzer reaches the device's handlers rather than only the handshake.
 * Between reads the device's timers run (flood, hotplug), so responses and
 * status packets are generated too; the output is discarded.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <usbredirparser.h>

#include "device.h"

struct hello_buf {
	uint8_t data[256];
	size_t len;
};

struct input {
	const uint8_t *data;
	size_t len, pos;
};

static int sink_write(void *ctx, uint8_t *data, int count)
{
	(void)ctx;
	(void)data;
	return count;
}

static int input_read(void *ctx, uint8_t *data, int count)
{
	struct input *in = ctx;
	size_t n = in->len - in->pos;

	if (n == 0)
		return 0;
	/* Hand out small, uneven chunks to exercise partial headers. */
	if (n > (size_t)count)
		n = (size_t)count;
	if (n > 1 + in->pos % 61)
		n = 1 + in->pos % 61;
	memcpy(data, in->data + in->pos, n);
	in->pos += n;
	return (int)n;
}

static int hello_write(void *priv, uint8_t *data, int count)
{
	struct hello_buf *h = priv;

	if (h->len + (size_t)count > sizeof(h->data))
		abort();
	memcpy(h->data + h->len, data, (size_t)count);
	h->len += (size_t)count;
	return count;
}

static int hello_read(void *priv, uint8_t *data, int count)
{
	(void)priv;
	(void)data;
	(void)count;
	return 0;
}

/* The hello QEMU's usb-redir sends, produced by the library itself. */
static const struct hello_buf *guest_hello(void)
{
	static struct hello_buf h;      /* written once, then read-only */
	uint32_t caps[USB_REDIR_CAPS_SIZE] = { 0 };
	struct usbredirparser *p;

	if (h.len)
		return &h;
	p = usbredirparser_create();
	p->priv = &h;
	p->read_func = hello_read;
	p->write_func = hello_write;
	usbredirparser_caps_set_cap(caps, usb_redir_cap_connect_device_version);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_filter);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_ep_info_max_packet_size);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_64bits_ids);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_32bits_bulk_length);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_bulk_receiving);
	usbredirparser_init(p, "fuzz usb-guest", caps, USB_REDIR_CAPS_SIZE, 0);
	usbredirparser_do_write(p);
	usbredirparser_destroy(p);
	return &h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct hello_buf *h = guest_hello();
	uint8_t *buf = malloc(h->len + size + 1);
	struct input in = { buf, h->len + size, 0 };
	struct fake_io io = { &in, input_read, sink_write };
	struct fake_cfg cfg;
	struct fake_dev *d;
	char err[128];

	if (!buf)
		return 0;
	memcpy(buf, h->data, h->len);
	if (size)
		memcpy(buf + h->len, data, size);

	memset(&cfg, 0, sizeof(cfg));
	/* The first input byte picks the pattern and whether hotplug runs. */
	cfg.flood.pattern = size ? (enum flood_pattern)(data[0] % PATTERN_COUNT) :
			    PATTERN_CONTROL;
	cfg.flood.seed = size;
	cfg.flood.window = 64;
	cfg.flood.xu_selector0 = 1;
	cfg.hotplug_period = size && (data[0] & 0x80) ? 0.5 : 0;
	cfg.hotplug_off = 0.1;
	cfg.batch = 0.001;
	cfg.max_buffered = 1u << 16;
	cfg.log = NULL;

	d = fake_dev_new(&cfg, &io, 0.0, err, sizeof(err));
	if (!d)
		abort();
	double now = 0;
	for (int round = 0; round < 64 && (in.pos < in.len || round < 4);
	     round++) {
		now += 0.013;
		if (fake_dev_read(d, now) < 0)
			break;
		fake_dev_tick(d, now);
		if (fake_dev_want_write(d))
			fake_dev_write(d);
	}
	fake_dev_tick(d, now + 1.0);
	fake_dev_free(d);
	free(buf);
	return 0;
}
