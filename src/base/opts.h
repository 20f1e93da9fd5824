/* opts.h — one options table per program.
 *
 * The table (name, type, default, range, help) drives the command line
 * (getopt_long built from it), the config file (INI, linuxptp style: "key
 * value" lines, '#' comments, [section] headers) and --help. Values given on
 * the command line win over the file, the file over the defaults.
 *
 * Names: an option's name is one word whose parts are joined by '_' in a
 * config file and by '-' on the command line (key journal_dir, option
 * --journal-dir). Every table writes its names the config file's way,
 * with '_' (the programs without a file too, so there is one rule), and
 * the accessors take that spelling. Everywhere a name is read as input,
 * '-' and '_' are the same character (opts_name_eq): a file may say
 * journal-dir (the files of tapless-capd and tapless-swemu did), the
 * command line --journal_dir. Messages quote a file's key as the file
 * wrote it, and an option as the command line spells it.
 *
 * Errors never print: they come back as -EINVAL with a message in the
 * caller's char err[OPTS_ERRBUF] naming the option, and for files the path
 * and line.
 */
#ifndef TAPLESS_OPTS_H
#define TAPLESS_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum opt_type {
	OPT_FLAG,	/* no argument on the command line; "0"/"1" in a file */
	OPT_INT,	/* long long within [min, max]; 1e+15 taken when integral */
	OPT_DOUBLE,	/* double within [min, max] */
	OPT_STRING,
	OPT_ENUM,	/* one of .choices */
	OPT_LIST,	/* repeatable string; each use appends */
	OPT_DURATION,	/* a time: a number with ns, us, ms, s or m (250us,
			 * 1.5s); a bare number is in the unit of the flags'
			 * OPT_NS..OPT_S, as the option always took it. min,
			 * max in that unit; never negative unless min is.
			 * Read in nanoseconds with opts_ns(). */
};

#define OPT_CLI_ONLY	0x1	/* not accepted in a config file */
#define OPT_FILE_ONLY	0x2	/* not accepted on the command line */
/* OPT_DURATION: the unit of a bare number (OPT_NS when none is given). */
#define OPT_NS		0x00
#define OPT_US		0x10
#define OPT_MS		0x20
#define OPT_S		0x30
#define OPT_UNIT_MASK	0x30
/* An old short letter still taken for this option, as a deprecated alias:
 * flags |= OPT_OLD_LETTER('p'). --help and the man page say so. It must
 * not clash inside the table; across programs it is exempt from the rule
 * that a letter means one thing (opts_letters_check). */
#define OPT_OLD_LETTER(c)	((unsigned)(unsigned char)(c) << 8)
#define opt_old_letter(d)	((int)(((d)->flags >> 8) & 0xff))
/* An old long name still taken on the command line for the row before it,
 * as a deprecated alias: OPT_OLD_NAME("out") right after the "output" row.
 * It is a row of its own (so the tables' rows keep their ten fields) that
 * only names: --help shows "(also --out, deprecated)" on the row it
 * follows, accessors and config files know only the real name. */
#define OPT_ALIAS	0x4
#define OPT_OLD_NAME(old) \
	{ old, 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, NULL, OPT_ALIAS }

struct opt_def {
	const char *name;	/* the key in a file; --name with '-' for '_' */
	int short_name;		/* 'x' for -x, 0 for none */
	enum opt_type type;
	const char *def;	/* default as text, NULL: unset */
	double min, max;	/* INT, DOUBLE: inclusive range; 0, 0: none */
	const char *const *choices;	/* ENUM: NULL-terminated */
	const char *arg;	/* metavariable for --help ("IFACE") */
	const char *help;	/* one line */
	unsigned flags;		/* OPT_CLI_ONLY, OPT_FILE_ONLY, ... */
};

#define OPT_END { .name = NULL }

/* Longest name, with its NUL. */
#define OPTS_NAME_MAX 64

/* Room for an error message of any opts_* function. */
#define OPTS_ERRBUF 512

struct opts;

/* Values for the table defs (terminated by OPT_END), all at their defaults.
 * The table must outlive the struct. */
struct opts *opts_create(const struct opt_def *defs);
void opts_destroy(struct opts *o);

/* Parse the command line from argv[1]; stops at the first non-option or
 * "--". Returns the index of the first operand (argc if none), or -EINVAL
 * (err says why: unknown option, missing argument, bad value, out of range).
 * "--help"/-h is not special here: define it in the table if wanted. */
int opts_parse_args(struct opts *o, int argc, char **argv,
		    char err[OPTS_ERRBUF]);

/* Called for keys in sections other than [global], and once at each such
 * section's header with key and value NULL (so an empty section is seen,
 * at its own line); return 0 to accept, or -EINVAL after filling err. */
typedef int (*opts_section_fn)(void *arg, const char *section,
			       const char *key, const char *value,
			       const char *path, int line,
			       char err[OPTS_ERRBUF]);

/* Strip blanks from both ends of s, in place; returns its new start. For
 * the "key value" lines of config files, ours and the lab's lab.conf. */
char *opts_trim(char *s);

/* Parse a config file. Keys before any section header and in [global] set
 * table options (unless the command line already set them); keys of other
 * sections go to section_fn, and are an error when it is NULL. Returns 0,
 * -ENOENT or another -errno opening it, or -EINVAL with "PATH:LINE: ..." */
int opts_parse_file(struct opts *o, const char *path,
		    opts_section_fn section_fn, void *arg,
		    char err[OPTS_ERRBUF]);

/* Set from text as if from a source; used by tests and programs that take
 * options from elsewhere. from_cli: command-line precedence. */
int opts_set_value(struct opts *o, const char *name, const char *value,
		   bool from_cli, char err[OPTS_ERRBUF]);

/* Give dst (created from the same table) every value src took from the
 * command line, with command-line precedence: a daemon re-reading its file
 * keeps what it was started with. */
void opts_copy_cli(struct opts *dst, const struct opts *src);

/* The command-line spelling of key (without "--"): '_' becomes '-'.
 * Truncated to size - 1 characters. */
void opts_cli_name(char *dst, size_t size, const char *key);

/* Are a and b the same name, '-' and '_' being one character? */
bool opts_name_eq(const char *a, const char *b);

/* Accessors; name must be in the table with that type (a mismatch is a
 * programming error and aborts). Written the table's way ("write_dir":
 * tests/optcheck checks the source); a name a program also prints as an
 * option ("--%s") may come in the command line's. */
bool opts_flag(const struct opts *o, const char *name);
long long opts_int(const struct opts *o, const char *name);
long long opts_ns(const struct opts *o, const char *name); /* DURATION */
double opts_double(const struct opts *o, const char *name);
const char *opts_str(const struct opts *o, const char *name); /* or NULL */
int opts_enum(const struct opts *o, const char *name);	/* index */
size_t opts_list(const struct opts *o, const char *name,
		 const char *const **items);
bool opts_given(const struct opts *o, const char *name); /* not default */
/* The line of the file (opts_parse_file, [global]) that set name; for a
 * list, the line of its item-th item. 0 when the value did not come from
 * the file (command line, default, opts_set_value). So an error found
 * after parsing can still name FILE:LINE. */
int opts_line(const struct opts *o, const char *name, size_t item);
bool opts_has(const struct opts *o, const char *name);	/* in the table */

/* --help text: one line per option with its argument, help, default and
 * range, in table order; every form it prints parses back. */
void opts_usage(FILE *f, const struct opt_def *defs);

/* Parse a duration as OPT_DURATION does: a number with ns, us, ms, s or m,
 * or bare in unit_ns nanoseconds. 0, or -EINVAL (not a duration), -ERANGE
 * (beyond a long long of nanoseconds). */
int opts_parse_ns(const char *text, long long unit_ns, long long *ns);

/* ns as the shortest exact text opts_parse_ns takes back: "250ms". */
void opts_format_ns(char *dst, size_t size, long long ns);

/* The table as lines for tools (shell completion, the letter check, the
 * naming check): "NAME<TAB>LETTER<TAB>OLD<TAB>TYPE<TAB>KEY", NAME the
 * command-line spelling, KEY the table's, LETTER and OLD "-" when none. */
void opts_print_table(FILE *f, const struct opt_def *defs);

/* One letter, one meaning. */
struct opts_program {
	const char *name;		/* "tapless-capd", "tapless correlate" */
	const struct opt_def *defs;
};
struct opts_letter {
	int letter;
	const char *const *names;	/* the command-line names it may mean,
					 * NULL-terminated; none: no meaning */
};
/* Check the programs' tables against the letter table (n_letters rows;
 * a letter not in it means whatever its first use means). Fails, with
 * why in err, when a letter is used twice in one program (as a letter or
 * an old letter), or when a letter stands for an option its table row
 * does not list, or, without a row, for two differently named options in
 * two programs. Old letters (OPT_OLD_LETTER) are exempt across programs.
 * Returns 0 or -EINVAL. */
int opts_letters_check(const struct opts_program *progs, size_t n,
		       const struct opts_letter *letters, size_t n_letters,
		       char err[OPTS_ERRBUF]);

#endif
