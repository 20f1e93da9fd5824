/* bpfstamp_check.c — can this host stamp cgroups (bpfstamp.h)? Each
 * requirement checked in turn, without libbpf, so the tapless CLI can say
 * it too: the first one missing is the reason given.
 */
#include "bpf/bpfstamp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpfconf.h>	/* TAPLESS_HAVE_BPF: the Makefile's BPF */

#include "base/errbuf.h"

#define BPFSTAMP_BTF "/sys/kernel/btf/vmlinux"
/* The kfunc that asks for a send's stamps (Linux 6.15): its name in the
 * kernel's BTF is the test for the whole feature. */
#define BPFSTAMP_KFUNC "bpf_sock_ops_enable_tx_tstamp"
#define BPFSTAMP_FALLBACK "; stamp senders with tapless-stamp instead"

/* The kernel's BTF holds a string: its header names the string section,
 * the names of every type and function (the kfunc among them). */
static int bpfstamp_btf_has(const char *path, const char *name)
{
	struct {
		uint16_t magic;
		uint8_t version, flags;
		uint32_t hdr_len, type_off, type_len, str_off, str_len;
	} h;
	size_t nlen = strlen(name);
	char *strs = NULL;
	int fd, rc = 0;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, &h, sizeof(h), 0);
	if (n != (ssize_t)sizeof(h) || h.magic != 0xeb9f ||
	    h.hdr_len < sizeof(h) || h.str_len > (256u << 20)) {
		rc = -EBADMSG;
		goto out;
	}
	strs = malloc((size_t)h.str_len + 1);
	if (!strs) {
		rc = -ENOMEM;
		goto out;
	}
	/* sysfs hands out a page per read. */
	for (size_t got = 0; got < h.str_len; got += (size_t)n) {
		n = pread(fd, strs + got, h.str_len - got,
			  (off_t)h.hdr_len + h.str_off + (off_t)got);
		if (n <= 0) {
			rc = n < 0 ? -errno : -EBADMSG;
			goto out;
		}
	}
	strs[h.str_len] = '\0';
	/* Whole strings only: each is NUL-terminated, the first is "". */
	for (size_t off = 0; off < h.str_len; off += strlen(strs + off) + 1)
		if (strlen(strs + off) == nlen && !memcmp(strs + off, name, nlen)) {
			rc = 1;
			break;
		}
out:
	free(strs);
	close(fd);
	return rc;
}

/* The kernel has cgroup v2. Whether a hierarchy is mounted where this
 * process looks is not the question: a program in another mount namespace
 * (ip netns exec mounts a fresh /sys, hiding /sys/fs/cgroup) can still be
 * given a path that reaches it, and bpfstamp_attach() checks that path. */
static bool bpfstamp_cgroup2(void)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/filesystems", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strcmp(line, "nodev\tcgroup2\n");
	fclose(f);
	return found;
}

/* The effective capabilities, from /proc (no libcap). */
static uint64_t bpfstamp_caps(void)
{
	unsigned long long caps = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps;
}

int bpfstamp_check(char err[BPFSTAMP_ERRBUF])
{
	enum { CAP_NET_ADMIN_ = 12, CAP_SYS_ADMIN_ = 21, CAP_PERFMON_ = 38,
	       CAP_BPF_ = 39 };
	struct utsname un;
	uint64_t caps;
	int rc;

	if (uname(&un))
		snprintf(un.release, sizeof(un.release), "?");
#ifndef TAPLESS_HAVE_BPF
	return errbuf_set(err, BPFSTAMP_ERRBUF, -ENOTSUP, "this tapless was "
			  "built without the BPF program (clang, bpftool, "
			  "libbpf-dev or the build host's kernel BTF were "
			  "missing at build time)" BPFSTAMP_FALLBACK);
#endif
	rc = bpfstamp_btf_has(BPFSTAMP_BTF, BPFSTAMP_KFUNC);
	if (rc == -ENOENT)
		return errbuf_set(err, BPFSTAMP_ERRBUF, -ENOTSUP,
				  "kernel %s has no BTF "
				  "(%s; CONFIG_DEBUG_INFO_BTF)" BPFSTAMP_FALLBACK,
				  un.release, BPFSTAMP_BTF);
	if (rc < 0)
		return errbuf_set(err, BPFSTAMP_ERRBUF, rc,
				  "reading %s: %s"
				  BPFSTAMP_FALLBACK, BPFSTAMP_BTF, strerror(-rc));
	if (rc == 0)
		return errbuf_set(err, BPFSTAMP_ERRBUF, -ENOTSUP,
				  "kernel %s lacks BPF TX "
				  "timestamping (the %s kfunc, Linux 6.15 or "
				  "later)" BPFSTAMP_FALLBACK, un.release,
				  BPFSTAMP_KFUNC);
	if (!bpfstamp_cgroup2())
		return errbuf_set(err, BPFSTAMP_ERRBUF, -ENOTSUP,
				  "kernel %s has no cgroup "
				  "v2 (BPF programs attach to cgroup v2 only)"
				  BPFSTAMP_FALLBACK, un.release);
	caps = bpfstamp_caps();
	if (!(caps & (1ull << CAP_SYS_ADMIN_)) &&
	    (!(caps & (1ull << CAP_BPF_)) || !(caps & (1ull << CAP_PERFMON_)) ||
	     !(caps & (1ull << CAP_NET_ADMIN_))))
		return errbuf_set(err, BPFSTAMP_ERRBUF, -EPERM,
				  "this process lacks "
				  "CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN (or "
				  "CAP_SYS_ADMIN): run it as root or grant them");
	return 0;
}
