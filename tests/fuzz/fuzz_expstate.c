/* fuzz_expstate — libFuzzer target for tapless export's state file
 * (expstate_load()): any bytes are read back or refused with a message
 * naming the file; a state that loads is written again and reads back
 * the same. The file is the one thing export trusts between runs: a
 * damaged one must never become a count that skips rows silently. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/expstate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], again[80], err[EXPSTATE_ERRBUF];
	struct expstate st, st2;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "/tmp/fuzz-expstate.%d", (int)getpid());
	snprintf(again, sizeof(again), "%s.again", path);
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	rc = expstate_load(path, "algo", "/in", "d t", &st, err);
	if (rc && (rc != -EINVAL || !strstr(err, path)))
		__builtin_trap();
	if (!rc) {
		if (expstate_save(again, "algo", "/in", "d t", &st, err) ||
		    expstate_load(again, "algo", "/in", "d t", &st2, err) ||
		    st.records != st2.records || st.txns != st2.txns ||
		    st.have_at != st2.have_at ||
		    (st.have_at && (strcmp(st.at_file, st2.at_file) ||
				    st.at_offset != st2.at_offset ||
				    st.at_index != st2.at_index)))
			__builtin_trap();
		unlink(again);
	}
	unlink(path);
	return 0;
}
