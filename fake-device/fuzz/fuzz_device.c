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
#include "stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct fuzz_hello *h = fuzz_guest_hello();
	uint8_t *buf = malloc(h->len + size + 1);
	struct fuzz_input in = { buf, h->len + size, 0 };
	struct fake_io io = { &in, fuzz_input_read, fuzz_sink_write };
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
	fuzz_drive(d, &in);
	fake_dev_free(d);
	free(buf);
	return 0;
}
