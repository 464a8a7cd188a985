/* SPDX-License-Identifier: MIT */
/*
 * Shared by the device fuzz targets (fuzz_device.c, fuzz_pdevice.c): the
 * usb-guest hello QEMU's usb-redir sends, produced by the library itself,
 * and the fuzz input handed to the device in small, uneven chunks.
 */
#ifndef FAKE_UVC_FUZZ_STREAM_H
#define FAKE_UVC_FUZZ_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct fuzz_hello {
	uint8_t data[256];
	size_t len;
};

struct fuzz_input {
	const uint8_t *data;
	size_t len, pos;
};

/* fake_io callbacks: discard what the device writes; read @ctx (a struct
 * fuzz_input) in chunks of 1 to 61 bytes. */
int fuzz_sink_write(void *ctx, uint8_t *data, int count);
int fuzz_input_read(void *ctx, uint8_t *data, int count);

/* The guest hello (made once, then read-only). */
const struct fuzz_hello *fuzz_guest_hello(void);

struct fake_dev;

/* Feed the device its input over up to 64 rounds of 13 ms (read, run its
 * timers, write), then one more second of timers; returns the time
 * reached. */
double fuzz_drive(struct fake_dev *d, const struct fuzz_input *in);

#endif
