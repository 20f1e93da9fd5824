/* optcheck — one letter, one meaning, across every tapless program.
 *
 * Reads, on stdin, every program's options table as the programs print it
 * (PROGRAM<TAB>NAME<TAB>LETTER<TAB>OLD<TAB>TYPE<TAB>KEY: "NAME --list-options"
 * with the program's name in front, as tests/optcheck feeds it), and the
 * letter table from the OPTION LETTERS section of tapless(8) given as the
 * argument; checks them with opts_letters_check(), so the rule it enforces
 * is the library's (tests/unit/test_opts.c shows it catching clashes).
 *
 * In that section a row is ".B \-x" and, on the next text line, the
 * options the letter stands for (\-\-name each); a letter with none has
 * no meaning and is an old letter wherever it is still taken.
 *
 * Exit 0 when clean; 1 with the clash on stderr; 2 on bad input.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/opts.h"
#include "base/xalloc.h"

#define MAX_PROGS 64
#define MAX_OPTS 128

struct prog {
	char name[64];
	struct opt_def defs[MAX_OPTS + 1];
	size_t n;
};

static struct prog progs[MAX_PROGS];
static size_t nprogs;
static struct opts_letter letters[128];
static size_t nletters;

/* groff text to plain: "\-" to '-', font escapes (\fB, \fR, \fI) out. */
static void optcheck_plain(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] == '-') {
			*d++ = '-';
			s += 2;
		} else if (s[0] == '\\' && s[1] == 'f' && s[2]) {
			s += 3;
		} else {
			*d++ = *s++;
		}
	}
	*d = 0;
}

static int optcheck_man(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	bool in = false, want_names = false;
	int letter = 0;

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, ".SH", 3)) {
			in = strstr(line, "OPTION LETTERS") != NULL;
			continue;
		}
		if (!in)
			continue;
		optcheck_plain(line);
		if (!strncmp(line, ".B -", 4) && line[4] && !line[5]) {
			letter = (unsigned char)line[4];
			want_names = true;
			continue;
		}
		if (want_names && line[0] != '.') {
			const char **names = xcalloc(32, sizeof(*names));
			size_t k = 0;

			for (char *p = strstr(line, "--"); p && k < 31;
			     p = strstr(p, "--")) {
				size_t len;
				char *nm;

				p += 2;
				len = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-");
				nm = xcalloc(len + 1, 1);
				memcpy(nm, p, len);
				names[k++] = nm;
				p += len;
			}
			letters[nletters++] = (struct opts_letter){ letter, names };
			want_names = false;
		}
	}
	fclose(f);
	if (!nletters) {
		fprintf(stderr, "optcheck: %s: no OPTION LETTERS rows\n", path);
		return -1;
	}
	return 0;
}

static int optcheck_read(void)
{
	char line[512];

	while (fgets(line, sizeof(line), stdin)) {
		char prog[64], name[64], letter[8], old[8], type[16];
		struct prog *p = NULL;
		struct opt_def *d;

		if (sscanf(line, "%63[^\t]\t%63[^\t]\t%7[^\t]\t%7[^\t]\t%15s",
			   prog, name, letter, old, type) != 5) {
			fprintf(stderr, "optcheck: bad line: %s", line);
			return -1;
		}
		for (size_t i = 0; i < nprogs; i++)
			if (!strcmp(progs[i].name, prog))
				p = &progs[i];
		if (!p) {
			if (nprogs == MAX_PROGS)
				return -1;
			p = &progs[nprogs++];
			snprintf(p->name, sizeof(p->name), "%s", prog);
		}
		if (p->n == MAX_OPTS)
			return -1;
		d = &p->defs[p->n++];
		d->name = xstrdup(name);
		d->type = strcmp(type, "flag") ? OPT_STRING : OPT_FLAG;
		d->short_name = letter[0] == '-' ? 0 : (unsigned char)letter[0];
		d->flags = old[0] == '-' ? 0 : OPT_OLD_LETTER(old[0]);
	}
	return nprogs ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct opts_program list[MAX_PROGS];
	char err[OPTS_ERRBUF];
	size_t nopts = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: optcheck MANPAGE < TABLES\n");
		return 2;
	}
	if (optcheck_man(argv[1]) || optcheck_read())
		return 2;
	for (size_t i = 0; i < nprogs; i++) {
		list[i] = (struct opts_program){ progs[i].name, progs[i].defs };
		nopts += progs[i].n;
	}
	if (opts_letters_check(list, nprogs, letters, nletters, err)) {
		fprintf(stderr, "optcheck: %s\n", err);
		return 1;
	}
	printf("optcheck: %zu programs, %zu options, %zu letters: "
	       "one meaning each\n", nprogs, nopts, nletters);
	return 0;
}
