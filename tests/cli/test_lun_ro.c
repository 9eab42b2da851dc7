/* SPDX-License-Identifier: BSD-2-Clause */
/* idm-target's LUN specs: the messages of bad specs, and a ",ro" LUN
 * that MODE SENSE shows write protected and that refuses every write
 * with DATA PROTECT, WRITE PROTECTED (27h/00h), whatever MODE SELECT
 * says about the software write protect bit. */
#include <check.h>
#include "check_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scsi.h"
#include "scsi_run.h"
#include "target.h"

static uint8_t buf[1 << 16];

static struct scsi_cmd run(struct lun *l, const uint8_t *cdb, const void *out, uint32_t len)
{
	return scsi_run(l, buf, sizeof(buf), cdb, out, len);
}

static void assert_wp(const struct scsi_cmd *sc)
{
	ck_assert_int_eq(sc->status, SAM_CHECK_CONDITION);
	ck_assert_int_eq(sc->sense[0] & 0x7f, 0x70); /* fixed format */
	ck_assert_int_eq(sc->sense[2] & 0x0f, SK_DATA_PROTECT);
	ck_assert_int_eq(sc->sense[12], 0x27);
	ck_assert_int_eq(sc->sense[13], 0x00);
}

START_TEST(ro_lun_write_protected)
{
	static const uint8_t data[4096];
	uint8_t ms6[6] = { 0x1a, 0x08, 0x3f, 0, 255, 0 };
	uint8_t ms10[10] = { 0x5a, 0x08, 0x3f, 0, 0, 0, 0, 0x10, 0, 0 };
	uint8_t w10[10] = { 0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t w16[16] = { 0x8a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0 };
	uint8_t ws16[16] = { 0x93, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0 };
	uint8_t r10[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	/* MODE SELECT(6) of the control page with SWP=0 */
	uint8_t sel6[6] = { 0x15, 0x10, 0, 0, 16, 0 };
	uint8_t page[16] = { 0, 0, 0, 0, 0x0a, 10, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0 };
	struct scsi_cmd sc;
	struct lun *l;

	ck_assert_int_eq(lun_open("ram:1M,ro", 1, 512, &l), 0);
	ck_assert(l->ro);
	ck_assert_str_eq(l->spec, "ram:1M");
	sc = run(l, ms6, NULL, 255);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	ck_assert_int_eq(buf[2] & 0x80, 0x80); /* WP */
	sc = run(l, ms10, NULL, 4096);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	ck_assert_int_eq(buf[3] & 0x80, 0x80);
	sc = run(l, w10, data, 512);
	assert_wp(&sc);
	sc = run(l, w16, data, 512);
	assert_wp(&sc);
	sc = run(l, ws16, data, 512);
	assert_wp(&sc);
	sc = run(l, r10, NULL, 512);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	/* clearing SWP does not lift the write protection of a ro LUN */
	sc = run(l, sel6, page, sizeof(page));
	sc = run(l, w10, data, 512);
	assert_wp(&sc);
	sc = run(l, ms6, NULL, 255);
	ck_assert_int_eq(buf[2] & 0x80, 0x80);
	lun_close(l);

	/* a read-write LUN takes the write */
	ck_assert_int_eq(lun_open("ram:1M", 1, 512, &l), 0);
	ck_assert(!l->ro);
	sc = run(l, w10, data, 512);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	sc = run(l, ms6, NULL, 255);
	ck_assert_int_eq(buf[2] & 0x80, 0);
	lun_close(l);
}
END_TEST

static void expect_bad(const char *spec, const char *msg)
{
	char why[512] = "";
	struct lun *l = NULL;
	bool forced;
	int r = lun_open_ex(spec, 1, 512, &l, &forced, why, sizeof(why));

	ck_assert_msg(r < 0, "%s accepted", spec);
	ck_assert_msg(strstr(why, msg), "%s: got '%s', want '%s'", spec, why, msg);
}

START_TEST(bad_specs)
{
	char dir[] = "/tmp/idm-lun-unit.XXXXXX", path[64];
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	expect_bad("ram:abc", "bad size 'abc'");
	expect_bad("ram:", "bad size ''");
	expect_bad("ram:-1", "bad size '-1'");
	expect_bad("ram:99999999T", "bad size");
	expect_bad("ram:0", "must not be 0");
	expect_bad("ram:1000", "1000 bytes is not a multiple of the block size 512");
	expect_bad("disk:/x", "unknown LUN type 'disk'");
	expect_bad("file:", "needs a path");
	expect_bad("file:/nonexistent/x", "No such file or directory");
	expect_bad(dir[0] ? "file:/tmp" : "", "not a regular file or a block device");
	snprintf(path, sizeof(path), "file:%s/empty", dir);
	f = fopen(path + 5, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	expect_bad(path, "is empty (0 bytes)");
	f = fopen(path + 5, "w");
	ck_assert_int_eq(fwrite(buf, 1, 1000, f), 1000);
	fclose(f);
	expect_bad(path, "is 1000 bytes, not a multiple of the block size 512");
	unlink(path + 5);
	rmdir(dir);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { ro_lun_write_protected, bad_specs,
				       NULL };

	return test_suite_run_case("target-lun", "lun", 0, tests);
}
