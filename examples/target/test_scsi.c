/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests of idm-target's SCSI emulation, without any transport:
 * CDB checks, sense data, data produced and consumed, mode pages. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "scsi.h"
#include "scsi_run.h"
#include "target.h"

static struct lun *lun;
static struct lun *luns[1];
static uint8_t buf[1 << 20];
static uint32_t opt_io; /* what run() passes as scsi_cmd.opt_io */

static void setup(void)
{
	ck_assert_int_eq(lun_open("ram:1M", 1, 512, &lun), 0);
	luns[0] = lun;
}

static void teardown(void)
{
	lun_close(lun);
}

/* Run one command: Data-Out from `out` (len bytes) or room for Data-In. */
static struct scsi_cmd run(const uint8_t *cdb, const void *out, uint32_t len)
{
	return scsi_run_opt(lun, buf, sizeof(buf), opt_io, cdb, out, len);
}

static void assert_sense(const struct scsi_cmd *sc, uint8_t key, uint16_t ascq)
{
	ck_assert_int_eq(sc->status, SAM_CHECK_CONDITION);
	if (sc->sense[0] == 0x72) {
		ck_assert_int_eq(sc->sense[1], key);
		ck_assert_int_eq(be16(sc->sense + 2), ascq);
	} else {
		ck_assert_int_eq(sc->sense[0] & 0x7f, 0x70);
		ck_assert_int_eq(sc->sense[2] & 0xf, key);
		ck_assert_int_eq(be16(sc->sense + 12), ascq);
	}
}

START_TEST(inquiry)
{
	uint8_t std[6] = { 0x12, 0, 0, 0, 255, 0 };
	uint8_t vpd[6] = { 0x12, 1, 0x00, 0, 255, 0 };
	uint8_t short_alloc[6] = { 0x12, 0, 0, 0, 36, 0 };
	uint8_t bad[6] = { 0x12, 0, 0x80, 0, 255, 0 }; /* page without EVPD */
	uint8_t nopage[6] = { 0x12, 1, 0x42, 0, 255, 0 };
	struct scsi_cmd sc = run(std, NULL, 255);

	ck_assert_int_eq(sc.status, SAM_GOOD);
	ck_assert_int_eq(sc.spdtl_in, 66);
	ck_assert_int_eq(memcmp(buf + 8, "LIBIDM  ", 8), 0);
	/* allocation length truncates, SPDTL follows it */
	sc = run(short_alloc, NULL, 255);
	ck_assert_int_eq(sc.spdtl_in, 36);
	sc = run(vpd, NULL, 255);
	ck_assert_int_eq(sc.in_len, 10);
	ck_assert_int_eq(buf[9], 0xb2);
	sc = run(bad, NULL, 255);
	assert_sense(&sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	sc = run(nopage, NULL, 255);
	assert_sense(&sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
}
END_TEST

/* Block Limits (VPD 0xb0): Linux's sd sends requests of at most the
 * OPTIMAL TRANSFER LENGTH, so it must be the target's real optimum (one
 * burst), never a small constant, and never above the maximum. */
START_TEST(block_limits)
{
	uint8_t b0[6] = { 0x12, 1, 0xb0, 0, 255, 0 };
	struct scsi_cmd sc;

	opt_io = 1048576; /* the MaxBurstLength idm-target offers */
	sc = run(b0, NULL, 255);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	ck_assert_int_eq(sc.in_len, 64);
	ck_assert_int_eq(buf[1], 0xb0);
	ck_assert_int_eq(be16(buf + 2), 0x3c);
	ck_assert_int_eq(be32(buf + 8), (1 << 20) / 512);  /* MAXIMUM */
	ck_assert_int_eq(be32(buf + 12), (1 << 20) / 512); /* OPTIMAL */
	/* at least what Linux's ib_iser can send in one command (512 KiB) */
	ck_assert_uint_ge(be32(buf + 12) * 512u, 512u * 1024);
	opt_io = 262144; /* a smaller negotiated burst */
	sc = run(b0, NULL, 255);
	ck_assert_int_eq(be32(buf + 8), 2048);
	ck_assert_int_eq(be32(buf + 12), 512);
	opt_io = 16u << 20; /* never above the maximum */
	sc = run(b0, NULL, 255);
	ck_assert_int_eq(be32(buf + 12), 2048);
	opt_io = 0; /* unknown: the maximum */
	sc = run(b0, NULL, 255);
	ck_assert_int_eq(be32(buf + 12), 2048);
	ck_assert_uint_le(be32(buf + 12), be32(buf + 8));
}
END_TEST

START_TEST(no_such_lun)
{
	uint8_t tur[6] = { 0 };
	uint8_t inq[6] = { 0x12, 0, 0, 0, 96, 0 };
	struct scsi_cmd sc;

	memset(&sc, 0, sizeof(sc));
	sc.cdb = tur;
	ck_assert_int_eq(scsi_prepare(&sc), -1);
	assert_sense(&sc, SK_ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED);
	memset(&sc, 0, sizeof(sc));
	sc.cdb = inq;
	ck_assert_int_eq(scsi_prepare(&sc), 0);
	sc.buf = buf;
	sc.buf_len = 96;
	scsi_exec(&sc);
	ck_assert_int_eq(buf[0], 0x7f); /* qualifier 011b: no LUN here */
}
END_TEST

START_TEST(read_write)
{
	uint8_t w10[10] = { 0x2a, 0, 0, 0, 0, 8, 0, 0, 2, 0 };
	uint8_t r10[10] = { 0x28, 0, 0, 0, 0, 8, 0, 0, 2, 0 };
	uint8_t eol[10] = { 0x28, 0, 0, 0, 0x07, 0xff, 0, 0, 2, 0 }; /* 2047 + 2 > 2048 */
	uint8_t rdprot[10] = { 0x28, 0x20, 0, 0, 0, 8, 0, 0, 1, 0 };
	uint8_t data[1024];
	struct scsi_cmd sc;

	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	sc = run(w10, data, sizeof(data));
	ck_assert_int_eq(sc.status, SAM_GOOD);
	ck_assert_int_eq(sc.kind, SCK_WRITE);
	ck_assert_int_eq(sc.lba, 8);
	memset(buf, 0, sizeof(data));
	sc = run(r10, NULL, sizeof(data));
	ck_assert_int_eq(sc.status, SAM_GOOD);
	ck_assert_int_eq(sc.in_len, 1024);
	ck_assert_int_eq(memcmp(buf, data, sizeof(data)), 0);
	sc = run(eol, NULL, 1024);
	assert_sense(&sc, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	sc = run(rdprot, NULL, 512);
	assert_sense(&sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
}
END_TEST

START_TEST(write_short_edtl)
{
	/* EDTL of 512 bytes for 2 blocks: the whole block EDTL covers is
	 * written, the other is not */
	uint8_t w10[10] = { 0x2a, 0, 0, 0, 0, 0, 0, 0, 2, 0 };
	uint8_t r10[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 2, 0 };
	uint8_t data[700];
	struct scsi_cmd sc;

	memset(data, 'b', sizeof(data));
	sc = run(w10, data, 512);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	ck_assert_int_eq(sc.spdtl_out, 1024);
	run(r10, NULL, 1024);
	ck_assert_int_eq(buf[511], 'b');
	ck_assert_int_eq(buf[512], 0);
}
END_TEST

START_TEST(write_short_edtl_part_block)
{
	/* EDTL of 700 bytes for 2 blocks ends inside the second: nothing
	 * is written, INVALID FIELD IN INFORMATION UNIT (libiscsi's
	 * iSCSIResiduals.Write10Residuals: either that or all 700 bytes
	 * written) */
	uint8_t w10[10] = { 0x2a, 0, 0, 0, 0, 0x10, 0, 0, 2, 0 };
	uint8_t r10[10] = { 0x28, 0, 0, 0, 0, 0x10, 0, 0, 2, 0 };
	uint8_t data[700];
	struct scsi_cmd sc;

	memset(data, 'c', sizeof(data));
	sc = run(w10, data, sizeof(data));
	assert_sense(&sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_IU);
	ck_assert_int_eq(sc.spdtl_out, 1024);
	run(r10, NULL, 1024);
	ck_assert_int_eq(buf[0], 0);
	ck_assert_int_eq(buf[1023], 0);
}
END_TEST

START_TEST(capacity)
{
	uint8_t rc10[10] = { 0x25 };
	uint8_t rc16[16] = { 0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32 };
	struct scsi_cmd sc = run(rc10, NULL, 8);

	ck_assert_int_eq(be32(buf), 2047);
	ck_assert_int_eq(be32(buf + 4), 512);
	sc = run(rc16, NULL, 32);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	ck_assert_int_eq(be64(buf), 2047);
	ck_assert_int_eq(buf[14] & 0xc0, 0xc0); /* LBPME, LBPRZ */
}
END_TEST

START_TEST(report_luns)
{
	uint8_t cdb[12] = { 0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 12 };
	struct scsi_cmd sc = run(cdb, NULL, 12);

	ck_assert_int_eq(sc.status, SAM_GOOD);
	ck_assert_int_eq(be32(buf), 8); /* LUN LIST LENGTH is not truncated */
	ck_assert_int_eq(sc.spdtl_in, 12);
	ck_assert_int_eq(buf[9], 1);
}
END_TEST

START_TEST(compare_and_write)
{
	uint8_t caw[16] = { 0x89, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 1 };
	uint8_t data[1024];
	struct scsi_cmd sc;

	memset(data, 0, 512);        /* compare: blocks are zero */
	memset(data + 512, 'x', 512);
	sc = run(caw, data, 1024);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	/* now the block holds 'x': comparing with zeros miscompares at 0 */
	sc = run(caw, data, 1024);
	assert_sense(&sc, SK_MISCOMPARE, ASC_MISCOMPARE_VERIFY);
	ck_assert_int_eq(sc.sense[0], 0xf0); /* VALID + fixed format */
	/* EDTL that disagrees with NUMBER OF LOGICAL BLOCKS */
	sc = run(caw, data, 512);
	assert_sense(&sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
}
END_TEST

START_TEST(unmap_and_write_same)
{
	uint8_t ws16[16] = { 0x93, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 4 };
	uint8_t r10[10] = { 0x28, 0, 0, 0, 0, 16, 0, 0, 4, 0 };
	uint8_t unmap[10] = { 0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0 };
	uint8_t pat[512], par[24] = { 0, 22, 0, 16 };
	struct scsi_cmd sc;

	memset(pat, 0xab, sizeof(pat));
	sc = run(ws16, pat, 512);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	run(r10, NULL, 2048);
	ck_assert_int_eq(buf[0], 0xab);
	ck_assert_int_eq(buf[2047], 0xab);
	wbe64(par + 8, 16);
	wbe32(par + 16, 4);
	sc = run(unmap, par, 24);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	run(r10, NULL, 2048);
	ck_assert_int_eq(buf[0], 0);
	ck_assert_int_eq(buf[2047], 0);
	wbe64(par + 8, 2047);
	sc = run(unmap, par, 24);
	assert_sense(&sc, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
}
END_TEST

START_TEST(mode_pages)
{
	uint8_t sense6[6] = { 0x1a, 0x08, 0x0a, 0, 255, 0 };
	uint8_t saved[6] = { 0x1a, 0x08, 0xca, 0, 255, 0 };
	uint8_t select6[6] = { 0x15, 0x10, 0, 0, 16, 0 };
	uint8_t w10[10] = { 0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t tur[6] = { 0 };
	uint8_t page[16] = { 0 };
	uint8_t data[512] = { 0 };
	struct scsi_cmd sc = run(sense6, NULL, 255);

	ck_assert_int_eq(sc.status, SAM_GOOD);
	ck_assert_int_eq(buf[4], 0x0a);     /* control page, no block descriptor */
	ck_assert_int_eq(buf[0], 3 + 12);
	sc = run(saved, NULL, 255);
	assert_sense(&sc, SK_ILLEGAL_REQUEST, ASC_SAVING_NOT_SUPPORTED);
	/* SWP=1 and D_SENSE=1 through MODE SELECT(6) */
	page[4] = 0x0a;
	page[5] = 0x0a;
	page[6] = 0x04;
	page[8] = 0x08;
	sc = run(select6, page, 16);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	ck_assert(lun->swp && lun->d_sense);
	sc = run(w10, data, 512);
	assert_sense(&sc, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	ck_assert_int_eq(sc.sense[0], 0x72); /* descriptor format now */
	sc = run(tur, NULL, 0);
	ck_assert_int_eq(sc.status, SAM_GOOD);
}
END_TEST

static struct scsi_cmd run_as(const char *iport, const uint8_t *cdb, const void *out, uint32_t len)
{
	struct scsi_cmd sc;

	memset(&sc, 0, sizeof(sc));
	sc.cdb = cdb;
	sc.lun = lun;
	sc.luns = luns;
	sc.nluns = 1;
	sc.max_io = 1 << 20;
	sc.edtl = len;
	sc.nexus = iport;
	sc.iport = iport;
	if (scsi_prepare(&sc) < 0)
		return sc;
	sc.buf = buf;
	if (sc.kind == SCK_OUT) {
		memcpy(buf, out, len);
		sc.buf_len = len;
	} else {
		sc.buf_len = len;
	}
	scsi_exec(&sc);
	return sc;
}

START_TEST(persistent_reservations)
{
	uint8_t reg[10] = { 0x5f, 0x06, 0, 0, 0, 0, 0, 0, 24, 0 }; /* REGISTER AND IGNORE */
	uint8_t res[10] = { 0x5f, 0x01, 0x03, 0, 0, 0, 0, 0, 24, 0 }; /* RESERVE, EA */
	uint8_t keys[10] = { 0x5e, 0x00, 0, 0, 0, 0, 0, 1, 0, 0 };
	uint8_t rres[10] = { 0x5e, 0x01, 0, 0, 0, 0, 0, 1, 0, 0 };
	uint8_t r10[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t inq[6] = { 0x12, 0, 0, 0, 96, 0 };
	uint8_t p[24] = { 0 };
	struct scsi_cmd sc;

	wbe64(p + 8, 0x1111);
	sc = run_as("a,i,0x1", reg, p, 24);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	wbe64(p + 8, 0x2222);
	sc = run_as("b,i,0x1", reg, p, 24);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	sc = run_as("a,i,0x1", keys, NULL, 256);
	ck_assert_int_eq(be32(buf + 4), 16);
	/* RESERVE needs the caller's own key */
	wbe64(p, 0x2222);
	sc = run_as("a,i,0x1", res, p, 24);
	ck_assert_int_eq(sc.status, SAM_RESERVATION_CONFLICT);
	wbe64(p, 0x1111);
	sc = run_as("a,i,0x1", res, p, 24);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	sc = run_as("b,i,0x1", rres, NULL, 256);
	ck_assert_int_eq(be64(buf + 8), 0x1111);
	ck_assert_int_eq(buf[21], 3);
	/* exclusive access: the other nexus may INQUIRY but not READ */
	sc = run_as("b,i,0x1", r10, NULL, 512);
	ck_assert_int_eq(sc.status, SAM_RESERVATION_CONFLICT);
	sc = run_as("b,i,0x1", inq, NULL, 96);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	sc = run_as("a,i,0x1", r10, NULL, 512);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	/* the holder unregisters: the reservation goes with it */
	memset(p + 8, 0, 8);
	sc = run_as("a,i,0x1", reg, p, 24);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	sc = run_as("b,i,0x1", r10, NULL, 512);
	ck_assert_int_eq(sc.status, SAM_GOOD);
}
END_TEST

START_TEST(unknown_opcode)
{
	uint8_t cdb[16] = { 0xc5 };
	struct scsi_cmd sc = run(cdb, NULL, 0);

	assert_sense(&sc, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("target_scsi");
	TCase *tc = tcase_create("all");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, inquiry);
	tcase_add_test(tc, block_limits);
	tcase_add_test(tc, no_such_lun);
	tcase_add_test(tc, read_write);
	tcase_add_test(tc, write_short_edtl);
	tcase_add_test(tc, write_short_edtl_part_block);
	tcase_add_test(tc, capacity);
	tcase_add_test(tc, report_luns);
	tcase_add_test(tc, compare_and_write);
	tcase_add_test(tc, unmap_and_write_same);
	tcase_add_test(tc, mode_pages);
	tcase_add_test(tc, persistent_reservations);
	tcase_add_test(tc, unknown_opcode);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
