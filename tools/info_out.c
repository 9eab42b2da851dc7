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

/* JSON: open an object or array as the next member ('{' or '[') */
static void json_open(struct out *o, const char *key, char open)
{
	json_member(o, key);
	fputc(open, o->f);
}

/* Leave a level; JSON closes it with `close` ('}' or ']') on a line of
 * its own unless it stayed empty. Returns whether it stayed empty. */
static bool pop(struct out *o, char close)
{
	bool empty = o->first[o->depth];

	if (o->depth > 0)
		o->depth--;
	if (o->json) {
		if (!empty) {
			fputc('\n', o->f);
			indent(o, o->depth + 1);
		}
		fputc(close, o->f);
	}
	return empty;
}

void out_obj_begin(struct out *o, const char *key, const char *label)
{
	if (o->json) {
		json_open(o, key, '{');
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
	pop(o, '}');
}

void out_arr_begin(struct out *o, const char *key, const char *label)
{
	if (o->json) {
		json_open(o, key, '[');
	} else {
		o->first[o->depth] = false;
		indent(o, o->depth);
		fprintf(o->f, "%s:\n", label ? label : key);
	}
	push(o, true);
}

void out_arr_end(struct out *o)
{
	if (pop(o, ']') && !o->json) {
		indent(o, o->depth + 1);
		fputs("(none)\n", o->f);
	}
}

/* One scalar, the same for every type: `json` is the JSON value already
 * encoded (NULL: `text` written as a JSON string), `text` what people
 * read after the label. */
static void scalar(struct out *o, const char *key, const char *label,
		   const char *json, const char *text)
{
	if (o->json) {
		json_member(o, key);
		if (json)
			fputs(json, o->f);
		else
			json_string(o->f, text);
	} else {
		o->first[o->depth] = false;
		text_head(o, key, label);
		fprintf(o->f, "%s\n", text);
	}
}

void out_str(struct out *o, const char *key, const char *label, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	scalar(o, key, label, NULL, buf);
}

void out_int(struct out *o, const char *key, const char *label, long long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", v);
	scalar(o, key, label, buf, buf);
}

void out_uint(struct out *o, const char *key, const char *label,
	      unsigned long long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", v);
	scalar(o, key, label, buf, buf);
}

void out_bool(struct out *o, const char *key, const char *label, bool v)
{
	scalar(o, key, label, v ? "true" : "false", v ? "yes" : "no");
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
