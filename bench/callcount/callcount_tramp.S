/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * 512 counting trampolines for callcount.c, 16 bytes apart: slot i adds
 * one to callcount_counts[i] and jumps to callcount_targets[i]. A jump,
 * not a call: the stack, the argument registers (%al of a varargs call
 * included) and the return address are the caller's, untouched.
 */
	.text
	.p2align 4
	.globl callcount_tramps
	.hidden callcount_tramps
	.type callcount_tramps, @function
callcount_tramps:
	.set slot, 0
	.rept 512
	.p2align 4
	lock incq callcount_counts + 8 * slot(%rip)
	jmp *callcount_targets + 8 * slot(%rip)
	.set slot, slot + 1
	.endr
	.size callcount_tramps, . - callcount_tramps
	.section .note.GNU-stack,"",@progbits
