/* SPDX-License-Identifier: MIT */
#ifndef FAKE_UVC_TESTS_H
#define FAKE_UVC_TESTS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

const struct CMUnitTest *desc_tests(size_t *n);
const struct CMUnitTest *camera_tests(size_t *n);
const struct CMUnitTest *flood_tests(size_t *n);
const struct CMUnitTest *loopback_tests(size_t *n);
const struct CMUnitTest *profile_tests(size_t *n);
const struct CMUnitTest *pmodel_tests(size_t *n);
const struct CMUnitTest *plan_tests(size_t *n);

#define TEST_LIST(name, ...)                                               \
	const struct CMUnitTest *name(size_t *n)                           \
	{                                                                  \
		static const struct CMUnitTest t[] = { __VA_ARGS__ };      \
		*n = sizeof(t) / sizeof(t[0]);                             \
		return t;                                                  \
	}

#endif
