/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one entry point every harness of tests/fuzz defines. Built with
 * -Dfuzz=true, libFuzzer's main() calls it; otherwise replay.c's main()
 * calls it once per file of the seed corpus (suite 'fuzz'), so the
 * harnesses compile with gcc and the corpus stays a regression test.
 */
#ifndef IDM_FUZZ_H
#define IDM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
