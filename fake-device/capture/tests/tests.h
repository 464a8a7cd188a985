/* SPDX-License-Identifier: MIT */
/* dmaharness-capture's unit tests: one cmocka list per file. */
#ifndef CAPTURE_TESTS_H
#define CAPTURE_TESTS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

const struct CMUnitTest *cli_tests(size_t *n);
const struct CMUnitTest *usbsys_tests(size_t *n);
const struct CMUnitTest *xfer_tests(size_t *n);
const struct CMUnitTest *plan_tests(size_t *n);

#endif
