/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm_info's output: one call sequence renders either as indented
 * "label: value" text for people or as JSON for scripts, so the two can
 * never disagree about what was found.
 */
#ifndef IDM_INFO_OUT_H
#define IDM_INFO_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define OUT_MAX_DEPTH 16

struct out {
	FILE *f;
	bool json;
	int depth;
	bool first[OUT_MAX_DEPTH]; /* JSON: nothing written yet at this level */
	bool in_array[OUT_MAX_DEPTH];
	bool dash[OUT_MAX_DEPTH]; /* text: next line opens a list item */
};

void out_init(struct out *o, FILE *f, bool json);
void out_finish(struct out *o);
/* key: JSON member name; label: the text heading (NULL: the key). Inside
 * an array both are ignored. */
void out_obj_begin(struct out *o, const char *key, const char *label);
void out_obj_end(struct out *o);
void out_arr_begin(struct out *o, const char *key, const char *label);
void out_arr_end(struct out *o);
void out_str(struct out *o, const char *key, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void out_int(struct out *o, const char *key, const char *label, long long v);
void out_uint(struct out *o, const char *key, const char *label,
	      unsigned long long v);
void out_bool(struct out *o, const char *key, const char *label, bool v);
/* text only: a free line at the current indentation */
void out_note(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
