/* bpfstamp_none.c — bpfstamp.h for a build without the BPF program (no
 * clang, bpftool, libbpf or kernel BTF at build time, or BPF=0): every
 * call fails with bpfstamp_check()'s reason, so capd says why and what to
 * use instead.
 */
#include "bpf/bpfstamp.h"

#include <errno.h>

int bpfstamp_open(struct bpfstamp **out, const struct bpfstamp_config *cfg,
		  char err[BPFSTAMP_ERRBUF])
{
	int rc = bpfstamp_check(err);

	(void)cfg;
	*out = NULL;
	return rc ? rc : -ENOTSUP;
}

int bpfstamp_attach(struct bpfstamp *b, const char *path,
		    char err[BPFSTAMP_ERRBUF])
{
	(void)b;
	(void)path;
	bpfstamp_check(err);
	return -ENOTSUP;
}

int bpfstamp_arm_existing(struct bpfstamp *b, bpfstamp_conn_fn on_conn,
			  void *arg, char err[BPFSTAMP_ERRBUF])
{
	(void)b;
	(void)on_conn;
	(void)arg;
	bpfstamp_check(err);
	return -ENOTSUP;
}

int bpfstamp_fd(const struct bpfstamp *b)
{
	(void)b;
	return -1;
}

int bpfstamp_consume(struct bpfstamp *b)
{
	(void)b;
	return -ENOTSUP;
}

int bpfstamp_stats(const struct bpfstamp *b, struct bpfstamp_stats *st)
{
	(void)b;
	*st = (struct bpfstamp_stats){ 0 };
	return -ENOTSUP;
}

void bpfstamp_close(struct bpfstamp *b)
{
	(void)b;
}
