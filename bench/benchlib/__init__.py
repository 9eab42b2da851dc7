# SPDX-License-Identifier: BSD-2-Clause
"""Helpers of bench/run (see bench/README.md)."""
