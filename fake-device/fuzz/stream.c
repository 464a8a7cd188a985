// SPDX-License-Identifier: MIT
/* The usb-guest side of the fuzz targets: QEMU's hello, then the input. */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

#include <usbredirparser.h>

#include "device.h"

int fuzz_sink_write(void *ctx, uint8_t *data, int count)
{
	(void)ctx;
	(void)data;
	return count;
}

int fuzz_input_read(void *ctx, uint8_t *data, int count)
{
	struct fuzz_input *in = ctx;
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
	struct fuzz_hello *h = priv;

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
const struct fuzz_hello *fuzz_guest_hello(void)
{
	static struct fuzz_hello h;      /* written once, then read-only */
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

double fuzz_drive(struct fake_dev *d, const struct fuzz_input *in)
{
	double now = 0;

	for (int round = 0; round < 64 && (in->pos < in->len || round < 4); round++) {
		now += 0.013;
		if (fake_dev_read(d, now) < 0)
			break;
		fake_dev_tick(d, now);
		if (fake_dev_want_write(d))
			fake_dev_write(d);
	}
	fake_dev_tick(d, now + 1.0);
	if (fake_dev_want_write(d))
		fake_dev_write(d);
	return now;
}
