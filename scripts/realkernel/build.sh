#!/usr/bin/env bash
# Build Debian's Linux 6.1 with the two schedlab sched features
# (patch_sched.py) for a QEMU guest. Needs root for apt-get; ~10 minutes on
# 2 cores. Output: $WORK/linux-source-6.1/arch/x86/boot/bzImage.
set -euo pipefail
WORK=${WORK:-/tmp/schedlab-realkernel}
HZ=${HZ:-250}
here=$(cd "$(dirname "$0")" && pwd)
DEBIAN_FRONTEND=noninteractive apt-get install -y -q linux-source-6.1 \
    qemu-system-x86 busybox-static linux-perf flex bison libelf-dev \
    libssl-dev bc cpio >/dev/null
mkdir -p "$WORK"
cd "$WORK"
[ -d linux-source-6.1 ] || tar xf /usr/src/linux-source-6.1.tar.xz
cd linux-source-6.1
python3 "$here/patch_sched.py" .
make defconfig >/dev/null
make kvm_guest.config >/dev/null
./scripts/config -e SCHED_DEBUG -e SCHEDSTATS -e DEBUG_FS -e PERF_EVENTS \
    -e SCHED_AUTOGROUP -e NO_HZ_IDLE -e DEVTMPFS -e DEVTMPFS_MOUNT \
    -e BLK_DEV_INITRD -d HZ_100 -d HZ_300 -d HZ_1000 -d HZ_250 -e "HZ_$HZ" \
    -d DEBUG_INFO -d DEBUG_INFO_DWARF5 -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
    -e DEBUG_INFO_NONE -d DRM -d SOUND -d USB_SUPPORT -d WLAN -d WIRELESS \
    -d CFG80211
make olddefconfig >/dev/null
grep -q "^CONFIG_HZ=$HZ$" .config || { echo "build.sh: CONFIG_HZ is not $HZ" >&2; exit 1; }
make -j"$(nproc)" bzImage
echo "kernel: $PWD/arch/x86/boot/bzImage"
