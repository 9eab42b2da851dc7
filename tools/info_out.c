/* SPDX-License-Identifier: BSD-2-Clause */
#include "info_out.h"

#include <stdarg.h>
#include <string.h>

void out_init(struct out *o, FILE *f, bool json)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->json = json;
	o->first[0] = true;
	if (json)
		fputc('{', f);
}

void out_finish(struct out *o)
{
	if (o->json)
		fputs("\n}\n", o->f);
}

static void indent(struct out *o, int depth)
{
	/* the first line of an object in a list carries its dash */
	if (!o->json && depth > 0 && depth == o->depth && o->dash[depth]) {
		o->dash[depth] = false;
		for (int i = 0; i < depth - 1; i++)
			fputs("  ", o->f);
		fputs("- ", o->f);
		return;
	}
	for (int i = 0; i < depth; i++)
		fputs("  ", o->f);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* JSON: the separator and member name before a value */
static void json_member(struct out *o, const char *key)
{
	if (!o->first[o->depth])
		fputc(',', o->f);
	o->first[o->depth] = false;
	fputc('\n', o->f);
	indent(o, o->depth + 1);
	if (!o->in_array[o->depth] && key) {
		json_string(o->f, key);
		fputs(": ", o->f);
	}
}

/* text: the line head of a value; array items get a dash */
static void text_head(struct out *o, const char *key, const char *label)
{
	indent(o, o->depth);
	if (o->in_array[o->depth])
		fputs("- ", o->f);
	else
		fprintf(o->f, "%s: ", label ? label : key);
}

static void push(struct out *o, bool array)
{
	if (o->depth + 1 < OUT_MAX_DEPTH)
		o->depth++;
	o->first[o->depth] = true;
	o->in_array[o->depth] = array;
	o->dash[o->depth] = false;
}

void out_obj_begin(struct out *o, const char *key, const char *label)
{
	if (o->json) {
		json_member(o, key);
		fputc('{', o->f);
	} else if ((o->first[o->depth] = false), o->in_array[o->depth]) {
		/* an object in a list: its first field follows the dash */
		push(o, false);
		o->dash[o->depth] = true;
		return;
	} else {
		indent(o, o->depth);
		fprintf(o->f, "%s:\n", label ? label : key);
	}
	push(o, false);
}

void out_obj_end(struct out *o)
{
	bool empty = o->first[o->depth];

	if (o->depth > 0)
		o->depth--;
	if (o->json) {
		if (!empty) {
			fputc('\n', o->f);
			indent(o, o->depth + 1);
		}
		fputc('}', o->f);
	}
}

void out_arr_begin(struct out *o, const char *key, const char *label)
{
	if (o->json) {
		json_member(o, key);
		fputc('[', o->f);
	} else {
		o->first[o->depth] = false;
		indent(o, o->depth);
		fprintf(o->f, "%s:\n", label ? label : key);
	}
	push(o, true);
}

void out_arr_end(struct out *o)
{
	bool empty = o->first[o->depth];

	if (o->depth > 0)
		o->depth--;
	if (o->json) {
		if (!empty) {
			fputc('\n', o->f);
			indent(o, o->depth + 1);
		}
		fputc(']', o->f);
	} else if (empty) {
		indent(o, o->depth + 1);
		fputs("(none)\n", o->f);
	}
}

void out_str(struct out *o, const char *key, const char *label, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (o->json) {
		json_member(o, key);
		json_string(o->f, buf);
	} else {
		o->first[o->depth] = false;
		text_head(o, key, label);
		fprintf(o->f, "%s\n", buf);
	}
}

void out_int(struct out *o, const char *key, const char *label, long long v)
{
	if (o->json) {
		json_member(o, key);
		fprintf(o->f, "%lld", v);
	} else {
		o->first[o->depth] = false;
		text_head(o, key, label);
		fprintf(o->f, "%lld\n", v);
	}
}

void out_uint(struct out *o, const char *key, const char *label,
	      unsigned long long v)
{
	if (o->json) {
		json_member(o, key);
		fprintf(o->f, "%llu", v);
	} else {
		o->first[o->depth] = false;
		text_head(o, key, label);
		fprintf(o->f, "%llu\n", v);
	}
}

void out_bool(struct out *o, const char *key, const char *label, bool v)
{
	if (o->json) {
		json_member(o, key);
		fputs(v ? "true" : "false", o->f);
	} else {
		o->first[o->depth] = false;
		text_head(o, key, label);
		fputs(v ? "yes\n" : "no\n", o->f);
	}
}

void out_note(struct out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->json)
		return;
	indent(o, o->depth);
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
	fputc('\n', o->f);
}
