/* report.h — the figures of a lab run directory, FTTC style: BUY and SELL
 * latency and switch latency per message rate, the switch emulator's truth
 * beside them, and the files a report is made of (tables, the data gnuplot
 * reads, the plot scripts, index.md, report.json).
 *
 * The run directory (written by tapless lab run, or laid out by hand the same
 * way; the contract is in tapless-report(1)):
 *
 *   lab.conf                      "key value" lines; rates is required
 *   journals/HOST.journal         sync journals (optional)
 *   rate-R/samples.txt            tapless correlate --samples, per rate R
 *   rate-R/correlate.json         linked, not read
 *   rate-R/VENUE.cal, ALGO.cal    the hosts' stamp calibrations
 *                                 (optional): said beside the error
 *   rate-R/switch/swemu/PORT.pcapng  the switch emulator's ingress and
 *                                 egress stamps (optional): the truth
 *   follow.jsonl                  tapless correlate --follow's stream of
 *                                 the runs (optional)
 *
 * Reading is streaming: samples go into histograms (hist.h), so memory is
 * bounded by the range of the values, not their number; the truth pairs a
 * frame's ingress and egress stamps while merging the port files in time
 * order, so only frames inside the switch at one time are held.
 *
 * Nothing here prints or exits: errors come back as -errno with a message,
 * and what a reader should know (a bad line skipped, a rate without samples,
 * no truth) as notes the program reports.
 */
#ifndef TAPLESS_REPORT_H
#define TAPLESS_REPORT_H

#include <stdbool.h>
#include <stddef.h>

struct printer;
struct report;

#define REPORT_ERRBUF 1024

/* Read DIR. Returns 0 with *out set (notes may say that parts are
 * missing), -ENOENT or another -errno when DIR or DIR/lab.conf cannot be
 * read, -EINVAL for a bad lab.conf ("PATH:LINE: why"). Every rate's
 * samples, truth and the journals are read here; a rate whose samples are
 * missing or unreadable is kept, without figures, and noted. */
int report_load(struct report **out, const char *dir, char err[REPORT_ERRBUF]);
void report_destroy(struct report *r);

/* Rates listed in lab.conf, and how many of them have no samples. */
size_t report_rate_count(const struct report *r);
size_t report_rates_missing(const struct report *r);
/* Samples counted, over all rates and series (0: nothing to report). */
unsigned long long report_sample_count(const struct report *r);

/* Notes in the order they arose; warning: something expected was missing
 * or bad, else information. NULL past the end. */
const char *report_note(const struct report *r, size_t i, bool *warning);

/* Write OUTDIR/data/NAME.dat (reading the samples again for the per-sample
 * time series, and the live stream again for its own), OUTDIR/tables.txt
 * and OUTDIR/tables.md. OUTDIR and its
 * data/ and plots/ are created. Returns 0 or -errno with err naming the
 * file. */
int report_write_data(struct report *r, const char *outdir,
		      char err[REPORT_ERRBUF]);

/* The plots, in order: their names (measurement-error, latency-rate,
 * switch-truth, cdf, histograms, latency-time, ptp-offset, follow-time). A
 * plot whose data is missing (no journals, no truth, no live stream) is
 * not wanted:
 * report_plot_wanted() says why in *why. */
size_t report_plot_count(void);
const char *report_plot_name(size_t i);
bool report_plot_wanted(const struct report *r, size_t i, const char **why);

/* Instantiate TEMPLATE_DIR/NAME.gp as OUTDIR/plots/NAME.gp: the @KEY@
 * placeholders get this run's values (rates, titles, outputs). The script
 * is run from OUTDIR and writes plots/NAME.png and plots/NAME.svg. Returns
 * 0 or -errno with err naming the file. */
int report_plot_script(const struct report *r, size_t i,
		       const char *template_dir, const char *outdir,
		       char err[REPORT_ERRBUF]);

/* What plot i shows, measured how, with which stamps: the caption under
 * it in index.md and in the picture. Returns buf. */
const char *report_plot_caption(const struct report *r, size_t i, char *buf,
				size_t len);

/* Whether plot i was drawn, and if not why (kept for index.md and
 * report.json; msg is copied). */
void report_plot_result(struct report *r, size_t i, bool ok, const char *msg);

/* OUTDIR/index.md: what ran, the tables, the plots, the accuracy per rate,
 * the notes. Returns 0 or -errno. */
int report_write_index(const struct report *r, const char *outdir,
		       char err[REPORT_ERRBUF]);

/* Every figure through the printer: text is the headline (per rate the
 * measurement error against the emulator's truth and how often its bound
 * holds, whether after calibration, the emulator's achieved residence
 * beside its model, BUY and SELL), JSON all of it. */
void report_print(struct printer *p, const struct report *r,
		  const char *index_path);

#endif
