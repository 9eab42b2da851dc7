# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Host side of the soft-RoCE guests, shared by vm-run (one guest) and
# vm-pair (two guests on one emulated link): host packages, the cached
# guest kernel, the initramfs, a guest's run dir and QEMU's common
# arguments. Sourced; the caller sets VM_TAG (the prefix of its messages)
# and `set -euo pipefail`.

VM_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_CACHE=${IDM_VM_CACHE:-/var/cache/libidm-rdma-vm}

say() { printf '%s: %s\n' "${VM_TAG:-vm}" "$*" >&2; }
fail() { say "$*"; exit 125; }

# vm_host_packages: what the guests need comes from the host root.
vm_host_packages() {
	local pkgs p missing=()
	pkgs="qemu-system-x86 busybox-static kmod iproute2 rdma-core ibverbs-providers
	      ibverbs-utils rdmacm-utils perftest open-iscsi libiscsi-bin bc ${IDM_VM_EXTRA_PKGS:-}"
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	[ -z "${IDM_VM_NO_APT:-}" ] || fail "missing packages: ${missing[*]}"
	say "installing ${missing[*]}"
	vm_apt_update
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >&2 || fail "apt-get install failed"
}

VM_APT_FRESH=
vm_apt_update() {
	[ -n "$VM_APT_FRESH" ] && return 0
	apt-get update -qq >&2 || fail "apt-get update failed"
	VM_APT_FRESH=1
}

# vm_kernel: sets VM_KVER and VM_KDIR; the guest kernel is downloaded and
# unpacked into the cache once, never installed on the host. Which one:
# IDM_VM_KERNEL=bookworm (the default: linux-image-amd64 as apt resolves it,
# bookworm's 6.1), cached in $VM_CACHE/VERSION as it always was, or
# backports (linux-image-amd64 from bookworm-backports, 6.12; its sources
# entry is added, on the host's own bookworm mirror, if apt has none),
# cached in $VM_CACHE/backports/VERSION: a directory of its own, so that
# no script that takes the cache's one kernel picks it up by accident.
vm_kernel() {
	local d dl flavour=${IDM_VM_KERNEL:-bookworm} ver base=$VM_CACHE
	case "$flavour" in
	bookworm) ;;
	backports) base=$VM_CACHE/backports ;;
	*) fail "IDM_VM_KERNEL=$flavour: bookworm or backports" ;;
	esac
	VM_KVER=
	for d in "$base"/*-amd64; do
		[ -f "$d/.complete" ] && VM_KVER=${d##*/}
	done
	if [ -z "$VM_KVER" ]; then
		[ -z "${IDM_VM_NO_APT:-}" ] || fail "no $flavour kernel in $base"
		vm_apt_update
		if [ "$flavour" = backports ]; then
			vm_backports_source
			ver=$(apt-cache madison linux-image-amd64 |
				awk -F'|' '$3 ~ /bookworm-backports/ { gsub(/ /, "", $2); print $2; exit }')
			[ -n "$ver" ] || fail "no linux-image-amd64 in bookworm-backports"
		else
			ver=$(apt-cache policy linux-image-amd64 | sed -n 's/^ *Candidate: //p')
		fi
		VM_KVER=$(apt-cache show "linux-image-amd64=$ver" |
			sed -n 's/^Depends: .*linux-image-\([0-9][^ ,]*-amd64\).*/\1/p' | head -1)
		[ -n "$VM_KVER" ] || fail "cannot resolve linux-image-amd64 ($flavour)"
		d=$base/$VM_KVER
		say "fetching kernel linux-image-$VM_KVER ($flavour) into $d"
		rm -rf "$d"; mkdir -p "$d"
		dl=$(mktemp -d)
		(cd "$dl" && apt-get download -qq -o APT::Sandbox::User=root "linux-image-$VM_KVER" >&2) ||
			fail "apt-get download linux-image-$VM_KVER failed"
		dpkg-deb -x "$dl"/linux-image-*.deb "$d/root"
		rm -rf "$dl"
		# The guest has no hardware: drop driver trees it can never use
		# (~half the size). virtio_net lives in drivers/net/ and stays.
		(cd "$d/root/lib/modules/$VM_KVER/kernel" &&
			rm -rf sound drivers/gpu drivers/media drivers/net/wireless \
				drivers/net/ethernet drivers/usb drivers/infiniband/hw \
				drivers/staging drivers/iio drivers/hid drivers/bluetooth \
				net/bluetooth net/wireless net/mac80211)
		depmod -b "$d/root" "$VM_KVER"
		touch "$d/.complete"
	fi
	VM_KDIR=$base/$VM_KVER
	say "guest kernel: $VM_KVER (IDM_VM_KERNEL=$flavour)"
}

# vm_backports_source: an apt sources entry for bookworm-backports, on the
# mirror the host's bookworm entry uses, unless apt knows the suite already.
# Backports' default pin (100) never upgrades a host package by itself.
vm_backports_source() {
	local uri
	# grep reads it all: with -q, apt-cache's SIGPIPE would fail the pipe
	apt-cache policy | grep ' bookworm-backports/main ' >/dev/null && return 0
	uri=$(apt-cache policy | awk '$3 ~ /^bookworm\/main$/ { print $2; exit }')
	[ -n "$uri" ] || fail "no bookworm entry in apt's sources to add bookworm-backports beside"
	say "adding bookworm-backports ($uri) to apt's sources"
	printf '%s\n' "Types: deb" "URIs: $uri" "Suites: bookworm-backports" "Components: main" \
		"Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" \
		> /etc/apt/sources.list.d/libidm-bookworm-backports.sources
	apt-get update -qq >&2 || fail "apt-get update failed"
}

# vm_initrd OUT: busybox, guest-stage1 and the modules that mount the 9p root.
vm_initrd() {
	local out=$1 ird
	ird=$(mktemp -d "${out%/*}/initrd.XXXXXX")
	mkdir -p "$ird"/{bin,dev,proc,sys,mnt,ko}
	cp /bin/busybox "$ird/bin/busybox"
	install -m 755 "$VM_HERE/guest-stage1" "$ird/init"
	for m in virtio_pci 9pnet_virtio 9p overlay; do
		modprobe -d "$VM_KDIR/root" -S "$VM_KVER" --show-depends "$m"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
		cp "$ko" "$ird/ko/"
		echo "${ko##*/}" >> "$ird/ko/list"
	done
	(cd "$ird" && find . | busybox cpio -o -H newc -R 0:0 2>/dev/null | gzip -1) > "$out"
	rm -rf "$ird"
}

# vm_run_dir DIR CMD...: what guest-stage2 reads from its run dir: the
# command, the cwd, the modules and the caller's exported environment.
vm_run_dir() {
	local dir=$1
	shift
	mkdir -p "$dir"
	printf '%q ' "$@" > "$dir/cmd"
	pwd -P > "$dir/cwd"
	echo "$VM_KDIR/root/lib/modules/$VM_KVER" > "$dir/modules"
	export -p | grep -vE '^declare -x (PWD|OLDPWD|SHLVL|_|HOSTNAME|TERM)=' > "$dir/env" || true
	: > "$dir/out"
}

# vm_shares DIR...: sets VM_VIRTFS (QEMU arguments) and writes the list
# of "tag path" that guest-stage2 mounts read-write to VM_SHARES_FILE.
vm_shares() {
	local d n=0
	VM_VIRTFS=()
	: > "$VM_SHARES_FILE"
	for d in "$@"; do
		[ -d "$d" ] && [ "$d" != / ] || continue
		d=$(cd "$d" && pwd -P)
		VM_VIRTFS+=(-virtfs "local,path=$d,mount_tag=share$n,security_model=none,multidevs=remap")
		echo "share$n $d" >> "$VM_SHARES_FILE"
		n=$((n + 1))
	done
}

# vm_qemu_args RUN_DIR CPUS: the arguments every guest gets (append more
# after them). Console (kernel log) goes to a file: a stdio chardev blocks
# the guest when our stdin is closed, as it is in CI. no_timer_check: the
# kernel's boot-time check that the IO-APIC timer ticks fails on a TCG
# guest whose host is busy ("Kernel panic - not syncing: IO-APIC + timer
# doesn't work!", seen in CI at a load of 9 on 2 cores); the check is
# for broken hardware, which an emulated machine does not have.
vm_qemu_args() {
	local run=$1 cpus=$2
	# shellcheck disable=SC2034,SC2054 # the caller's; commas are QEMU's
	VM_QEMU=(qemu-system-x86_64
		-accel tcg,thread=multi -cpu max -smp "$cpus" -m "${IDM_VM_MEM:-2048}"
		-nodefaults -no-user-config -display none -no-reboot
		-kernel "$VM_KDIR/root/boot/vmlinuz-$VM_KVER" -initrd "$VM_INITRD"
		-append "console=ttyS0 loglevel=4 panic=-1 no_timer_check idmvm_stage2=$VM_HERE/guest-stage2 idmvm_run=$run"
		-serial "file:$run/console"
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$run,mount_tag=idmrun,security_model=none")
}

# vm_kernel_fault CONSOLE: one line naming the guest kernel's own fault in
# its log, e.g. "kernel panic in rxe_skb_tx_dtor (BUG: kernel NULL pointer
# dereference, address: 0000000000000008)" or "kernel Oops in ...", from the
# first BUG/Oops/panic line and the function of the first RIP after it;
# nothing when the log shows none.
vm_kernel_fault() {
	[ -s "$1" ] || return 0
	tr -d '\r' < "$1" | awk '
	/Kernel panic - not syncing/ && !panic { panic = $0; sub(/.*not syncing: */, "", panic) }
	/(BUG: |Oops|general protection fault|kernel BUG at)/ && !first {
		first = $0; sub(/^\[[ 0-9.]*\] */, "", first) }
	# the kernel code it stopped in: the RIP of kernel mode (0010), else
	# the first frame of the call trace past the panic machinery
	/RIP: 0010:/ && !rip { rip = $0; sub(/.*RIP: 0010:/, "", rip); sub(/\+.*/, "", rip) }
	/Call Trace:/ && !frame { intrace = 1; next }
	intrace && !frame {
		f = $0; sub(/^\[[ 0-9.]*\] */, "", f)
		if (f ~ /^</ || f ~ /^\?/ || f ~ /^(dump_stack|panic|__warn|report_bug|handle_bug|exc_invalid_op|asm_exc)/) next
		sub(/\+.*/, "", f); frame = f; intrace = 0
	}
	END {
		if (!rip) rip = frame
		if (!panic && !first) exit
		what = panic ? "kernel panic" : "kernel Oops"
		if (rip && first) printf "%s in %s (%s)\n", what, rip, first
		else if (rip) printf "%s in %s (%s)\n", what, rip, panic
		else printf "%s: %s\n", what, panic ? panic : first
	}'
}

# vm_fault_report RUN_DIR QEMU_STATUS GUARD_S [ROLE]: the line that names
# why a guest stopped without a result, for the CI summary: its own kernel
# fault, its guard, or QEMU exiting on its own; then the end of its kernel
# log and QEMU's status, on stderr.
# shellcheck disable=SC2034 # VM_FAULT, VM_FAULT_KIND: the caller's
vm_fault_report() {
	local dir=$1 qrc=$2 guard=$3 who=guest${4:+ $4} k
	k=$(vm_kernel_fault "$dir/console")
	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		# a task the kernel saw stuck (LIO's teardown once) says why
		[ -n "$k" ] || k=$(tr -d '\r' < "$dir/console" 2>/dev/null |
			sed -n 's/^\[[ 0-9.]*\] *\(INFO: task .* blocked for more than [0-9]* seconds\).*/\1/p' | head -1 || true)
		VM_FAULT="$who: stopped by its $guard s guard${k:+ (its kernel log: $k)}"
		VM_FAULT_KIND=guard
	elif [ -n "$k" ]; then
		VM_FAULT="$who: $k"
		VM_FAULT_KIND=kernel
	else
		VM_FAULT="$who: QEMU exited (status $qrc) without a result; no panic or Oops in its kernel log"
		VM_FAULT_KIND=stopped
	fi
	say "$VM_FAULT; QEMU's status $qrc; the end of its kernel log:"
	tail -n 40 "$dir/console" | sed "s/^/${4:-guest}| /" >&2
}
