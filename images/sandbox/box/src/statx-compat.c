/*
 * Preloaded in every box (/etc/ld.so.preload). gVisor releases before 2023 (Debian bookworm's
 * runsc among them) refuse statx() with AT_NO_AUTOMOUNT, which GNU ls and stat always pass, so
 * `ls -l` fails there with "Invalid argument". A box has no automount points, so dropping the flag
 * changes nothing under runc and makes ls and stat work under runsc.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf) {
  return (int)syscall(SYS_statx, dirfd, path, flags & ~AT_NO_AUTOMOUNT, mask, buf);
}
