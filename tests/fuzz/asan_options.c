/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Defaults of the sanitizer runtime for the -Dfuzz=true harnesses (the
 * environment's ASAN_OPTIONS still override them). The build links the
 * shared ASan runtime (top-level meson.build), and libFuzzer's libstdc++
 * comes before it in the executable's library list: harmless, since
 * libstdc++ defines none of the functions ASan intercepts, but ASan
 * refuses to start unless told not to check.
 */
const char *__asan_default_options(void);

const char *__asan_default_options(void)
{
	return "verify_asan_link_order=0:detect_leaks=1";
}
