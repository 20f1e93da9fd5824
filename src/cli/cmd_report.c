/* cmd_report.c — tapless report: FTTC-style tables, gnuplot plots and an
 * index from a lab run directory (report.h reads it and writes the files;
 * this side finds the plot templates, runs gnuplot and reports).
 *
 * gnuplot runs once per plot (gnuplot.h: fork and exec, no shell; paths with
 * spaces or quotes stay paths), from the report directory so that the
 * scripts it leaves behind name their data relatively and rerun as they
 * are. Its stderr is collected and shown; a failed plot does not stop the
 * others, and the tables and data are written before any plot is tried.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "base/datadir.h"
#include "report/gnuplot.h"
#include "base/opts.h"
#include "base/print.h"
#include "report/report.h"

static const struct opt_def report_opts[] = {
	{ "output", 'o', OPT_STRING, NULL, 0, 0, NULL, "DIR", "write the report into DIR (default: RUNDIR/report)", 0 },
	OPT_OLD_NAME("out"),	/* its name before --output everywhere */
	{ "json", 'j', OPT_FLAG, NULL, 0, 0, NULL, NULL, "print report.json on stdout instead of the summary", 0 },
	{ "no_plots", 0, OPT_FLAG, NULL, 0, 0, NULL, NULL, "write the plot scripts but do not run gnuplot", 0 },
	{ "help", 'h', OPT_FLAG, NULL, 0, 0, NULL, NULL, "show this help", 0 },
	OPT_END
};


/* Instantiate and draw every plot. Returns CMD_OK or CMD_SYSTEM (no
 * templates, no gnuplot, or a plot failed), after saying why. */
static int report_plots(struct report *r, const char *outdir, bool run)
{
	char tdir[PATH_MAX], err[REPORT_ERRBUF], msg[GNUPLOT_MSGBUF], script[PATH_MAX + 32];
	bool no_gnuplot = false;
	int rc = CMD_OK;

	if (datadir_find("TAPLESS_PLOT_DIR", "../scripts/plot",
			 DATADIR_SHARE, "plot", tdir, sizeof(tdir))) {
		fprintf(stderr, "tapless report: no plot templates (looked in %s; set "
			"TAPLESS_PLOT_DIR to the directory of the *.gp templates); "
			"tables and data are written, no plots\n", tdir);
		return CMD_SYSTEM;
	}
	for (size_t i = 0; i < report_plot_count(); i++) {
		const char *name = report_plot_name(i), *why;
		int e;

		if (!report_plot_wanted(r, i, &why))
			continue;
		if (report_plot_script(r, i, tdir, outdir, err)) {
			fprintf(stderr, "tapless report: %s\n", err);
			report_plot_result(r, i, false, err);
			rc = CMD_SYSTEM;
			continue;
		}
		if (!run)
			continue;
		if (no_gnuplot) {
			report_plot_result(r, i, false, "gnuplot is not installed");
			continue;
		}
		snprintf(script, sizeof(script), "plots/%s.gp", name);
		e = gnuplot_run(outdir, script, msg);
		if (e == -ENOENT) {
			fprintf(stderr, "tapless report: gnuplot not found in PATH "
				"(Debian: apt-get install gnuplot-nox); tables and "
				"data are written, the scripts are in %s/plots\n",
				outdir);
			no_gnuplot = true;
			report_plot_result(r, i, false, "gnuplot is not installed");
			rc = CMD_SYSTEM;
		} else if (e == -ECHILD) {
			fprintf(stderr, "tapless report: gnuplot %s/%s failed:\n%s\n",
				outdir, script, msg);
			report_plot_result(r, i, false, "gnuplot failed (see its "
					   "messages on stderr)");
			rc = CMD_SYSTEM;
		} else if (e) {
			fprintf(stderr, "tapless report: running gnuplot: %s\n",
				strerror(-e));
			report_plot_result(r, i, false, strerror(-e));
			rc = CMD_SYSTEM;
		} else {
			if (*msg)
				fprintf(stderr, "tapless report: gnuplot %s: %s\n",
					script, msg);
			report_plot_result(r, i, true, NULL);
		}
	}
	return rc;
}

int cmd_report(int argc, char **argv)
{
	char err[REPORT_ERRBUF], outbuf[PATH_MAX], index_path[PATH_MAX + 16];
	char json_path[PATH_MAX + 16];
	const char *dir, *outdir, *note;
	struct report *r = NULL;
	struct printer *p;
	struct opts *o;
	unsigned pflags = PRINT_PRETTY;	/* no --pretty: JSON indented */
	int first, rc, prc;
	bool warning;
	FILE *jf;

	rc = cmd_options(report_opts, argc, argv, "RUNDIR", &o, &first);
	if (rc)
		return rc < 0 ? CMD_OK : rc;
	if (argc - first != 1) {
		fprintf(stderr, "tapless report: give one run directory; try "
			"'tapless report --help'\n");
		opts_destroy(o);
		return CMD_USAGE;
	}
	dir = argv[first];
	rc = report_load(&r, dir, err);
	if (rc) {
		fprintf(stderr, "tapless report: %s\n", err);
		opts_destroy(o);
		/* What we could not read is the user's input, unless it was
		 * the system refusing (out of descriptors, I/O). */
		return rc == -ENOENT || rc == -ENOTDIR || rc == -EINVAL ||
		       rc == -EACCES ? CMD_USAGE : CMD_SYSTEM;
	}
	for (size_t i = 0; (note = report_note(r, i, &warning)); i++)
		if (warning)
			fprintf(stderr, "tapless report: warning: %s\n", note);
	if (!report_sample_count(r)) {
		fprintf(stderr, "tapless report: %s: no samples in any "
			"rate-R/samples.txt: nothing to report\n", dir);
		report_destroy(r);
		opts_destroy(o);
		return CMD_USAGE;
	}
	outdir = opts_str(o, "output");
	if (!outdir) {
		snprintf(outbuf, sizeof(outbuf), "%s/report", dir);
		outdir = outbuf;
	}
	if (report_write_data(r, outdir, err)) {
		fprintf(stderr, "tapless report: %s\n", err);
		report_destroy(r);
		opts_destroy(o);
		return CMD_SYSTEM;
	}
	rc = report_plots(r, outdir, !opts_flag(o, "no_plots"));
	if (report_write_index(r, outdir, err)) {
		fprintf(stderr, "tapless report: %s\n", err);
		rc = CMD_SYSTEM;
	}
	snprintf(index_path, sizeof(index_path), "%s/index.md", outdir);
	snprintf(json_path, sizeof(json_path), "%s/report.json", outdir);
	jf = fopen(json_path, "w");
	if (!jf) {
		fprintf(stderr, "tapless report: %s: %s\n", json_path, strerror(errno));
		rc = CMD_SYSTEM;
	} else {
		p = print_create(jf, PRINT_JSON, PRINT_PRETTY);
		report_print(p, r, index_path);
		prc = print_destroy(p);
		if (fclose(jf) || prc) {
			fprintf(stderr, "tapless report: %s: write error\n", json_path);
			rc = CMD_SYSTEM;
		}
	}
	p = print_create(stdout, print_format_from_opts(o, &pflags), pflags);
	report_print(p, r, index_path);
	if (print_destroy(p) && !rc)
		rc = CMD_SYSTEM;
	/* A rate of lab.conf without samples is input missing: the report
	 * shows the others, the exit status says it is not whole. */
	if (!rc && report_rates_missing(r))
		rc = CMD_USAGE;
	report_destroy(r);
	opts_destroy(o);
	return rc;
}
