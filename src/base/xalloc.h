/* xalloc.h — the one allocation wrapper.
 *
 * Out of memory is fatal (exit status 2 with one line on stderr): tapless
 * allocates at start-up and per file or flow, never per packet, so running out
 * means the machine or the configuration is wrong and carrying on would only
 * lose data more quietly. Library code that must survive allocation failure
 * (none so far) uses malloc() directly and returns -ENOMEM.
 */
#ifndef TAPLESS_XALLOC_H
#define TAPLESS_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);

#endif
