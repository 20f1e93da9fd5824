/* corr_traffic.c — the traffic as a second opinion on the clocks (see
 * corr_traffic.h): interval arithmetic, windows per pair of hosts, the
 * check against the journals, loops of three, the "traffic" output.
 */
#include <stdlib.h>
#include <string.h>

#include "base/hist.h"
#include "base/print.h"
#include "base/summary.h"
#include "base/xalloc.h"
#include "corr/corr_traffic.h"

#define TW_NONE INT64_MIN

/* ------------------------------------------------------------ intervals */

struct corr_traffic_iv corr_traffic_interval(bool have_ab, int64_t d_ab,
					     bool have_ba, int64_t d_ba)
{
	struct corr_traffic_iv iv = { 0, 0, false, false };

	if (have_ab) {
		iv.hi = d_ab;
		iv.has_hi = true;
	}
	if (have_ba) {
		iv.lo = -d_ba;
		iv.has_lo = true;
	}
	return iv;
}

bool corr_traffic_empty(const struct corr_traffic_iv *iv)
{
	return iv->has_lo && iv->has_hi && iv->lo > iv->hi;
}

bool corr_traffic_contains(const struct corr_traffic_iv *iv, int64_t v)
{
	return (!iv->has_lo || iv->lo <= v) && (!iv->has_hi || v <= iv->hi);
}

struct corr_traffic_iv corr_traffic_add(const struct corr_traffic_iv *x,
					const struct corr_traffic_iv *y)
{
	struct corr_traffic_iv s = { 0, 0, false, false };

	if (x->has_lo && y->has_lo) {
		s.lo = x->lo + y->lo;
		s.has_lo = true;
	}
	if (x->has_hi && y->has_hi) {
		s.hi = x->hi + y->hi;
		s.has_hi = true;
	}
	return s;
}

struct corr_traffic_iv corr_traffic_neg(const struct corr_traffic_iv *x)
{
	struct corr_traffic_iv n = {
		.lo = -x->hi, .hi = -x->lo, .has_lo = x->has_hi,
		.has_hi = x->has_lo,
	};

	return n;
}

struct corr_traffic_iv corr_traffic_narrow(const struct corr_traffic_iv *iv,
					   int64_t claim)
{
	struct corr_traffic_iv n = *iv;

	if (claim < 0)
		return n;
	if (!n.has_lo || n.lo < -claim)
		n.lo = -claim;
	if (!n.has_hi || n.hi > claim)
		n.hi = claim;
	n.has_lo = n.has_hi = true;
	return n;
}

int64_t corr_traffic_miss(const struct corr_traffic_iv *iv, int64_t claim)
{
	int64_t m = INT64_MIN;

	if (claim < 0)
		return m;
	if (iv->has_lo)
		m = iv->lo - claim;
	if (iv->has_hi && -claim - iv->hi > m)
		m = -claim - iv->hi;
	return m;
}

/* 0 in a + b − c, none of them empty. */
static bool tw_closes(const struct corr_traffic_iv *a,
		      const struct corr_traffic_iv *b,
		      const struct corr_traffic_iv *c)
{
	struct corr_traffic_iv s, n;

	if (corr_traffic_empty(a) || corr_traffic_empty(b) ||
	    corr_traffic_empty(c))
		return false;
	n = corr_traffic_neg(c);
	s = corr_traffic_add(a, b);
	s = corr_traffic_add(&s, &n);
	return corr_traffic_contains(&s, 0);
}

void corr_traffic_loop_check(const struct corr_traffic_iv iv[3],
			     const int64_t claim[3],
			     struct corr_traffic_loop *out)
{
	/* The pairs each host is in: x in 0 and 2, y in 0 and 1, z in 1
	 * and 2. */
	static const unsigned in[3] = { 1u << 0 | 1u << 2, 1u << 0 | 1u << 1,
					1u << 1 | 1u << 2 };
	struct corr_traffic_iv n[3], m[3];

	for (unsigned k = 0; k < 3; k++)
		n[k] = corr_traffic_narrow(&iv[k], claim[k]);
	out->closes_traffic = tw_closes(&iv[0], &iv[1], &iv[2]);
	out->closes = out->closes_traffic && tw_closes(&n[0], &n[1], &n[2]);
	out->blame = 0;
	if (out->closes || !out->closes_traffic)
		return;
	for (unsigned h = 0; h < 3; h++) {
		for (unsigned k = 0; k < 3; k++)
			m[k] = in[h] & (1u << k) ? iv[k] : n[k];
		if (tw_closes(&m[0], &m[1], &m[2]))
			out->blame |= 1u << h;
	}
}

/* ---------------------------------------------------------------- state */

/* A pair's window being filled. */
struct tw_slot {
	int64_t w;		/* its index (start / window_ns); TW_NONE */
	int64_t d_ab, d_ba;	/* least one-way less the cable */
	uint64_t n_ab, n_ba;
	int64_t claim;		/* least bound sum; -1: none */
};

/* A flagged window, kept in full. */
struct tw_flag {
	int64_t start;
	struct corr_traffic_iv iv;
	int64_t claim, miss;
	bool inconsistent;
};

struct tw_pair {
	struct tw_slot slot[CORR_TRAFFIC_SLOTS];
	struct corr_traffic_pair_stats st;
	int64_t tightest_width;
	struct hist *widths;
	struct tw_flag *kept;	/* CORR_TRAFFIC_KEEP, on the first flag */
	/* The window being closed, for its loops. */
	bool closing;
	struct corr_traffic_iv iv;
	int64_t claim;
};

struct corr_traffic {
	int64_t window_ns;
	unsigned slots;
	int64_t cur;		/* the newest window met; TW_NONE */
	int64_t open_from;	/* windows before are closed */
	unsigned nmax;		/* 1 + the highest host index met */
	struct tw_pair *pair[CORR_TRAFFIC_HOSTS * CORR_TRAFFIC_HOSTS];
	struct corr_traffic_loops loops;
	uint64_t suspects;	/* hosts every blaming loop blamed */
	uint64_t blaming;	/* loops failing with the claims only */
};

static int64_t tw_floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static unsigned tw_slot_of(const struct corr_traffic *t, int64_t w)
{
	int64_t r = w % (int64_t)t->slots;

	return (unsigned)(r < 0 ? r + t->slots : r);
}

struct corr_traffic *corr_traffic_create(int64_t window_ns, int64_t late_ns)
{
	struct corr_traffic *t = xcalloc(1, sizeof(*t));
	int64_t need;

	t->window_ns = window_ns > 0 ? window_ns : 1000000000LL;
	/* The window being filled, those a late sample may still reach,
	 * and one for a sample stamped a little before its peers'. */
	need = (late_ns > 0 ? (late_ns + t->window_ns - 1) / t->window_ns : 0) + 2;
	t->slots = need > CORR_TRAFFIC_SLOTS ? CORR_TRAFFIC_SLOTS : (unsigned)need;
	t->cur = TW_NONE;
	t->loops.suspect = -1;
	t->suspects = UINT64_MAX;
	return t;
}

void corr_traffic_destroy(struct corr_traffic *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < sizeof(t->pair) / sizeof(t->pair[0]); i++)
		if (t->pair[i]) {
			hist_destroy(t->pair[i]->widths);
			free(t->pair[i]->kept);
			free(t->pair[i]);
		}
	free(t);
}

static struct tw_pair *tw_pair(const struct corr_traffic *t, unsigned a,
			       unsigned b)
{
	return t->pair[a * CORR_TRAFFIC_HOSTS + b];
}

static void tw_keep(struct tw_pair *p, const struct tw_flag *f)
{
	if (p->st.kept == CORR_TRAFFIC_KEEP)
		return;
	if (!p->kept)
		p->kept = xcalloc(CORR_TRAFFIC_KEEP, sizeof(*p->kept));
	p->kept[p->st.kept++] = *f;
}

/* A pair's window w is complete: its interval into the pair's figures. */
static void tw_pair_close(struct corr_traffic *t, struct tw_pair *p,
			  struct tw_slot *s)
{
	struct corr_traffic_iv iv = corr_traffic_interval(s->n_ab > 0, s->d_ab,
							  s->n_ba > 0, s->d_ba);
	struct tw_flag f = { .start = s->w * t->window_ns, .iv = iv,
			     .claim = s->claim };

	p->st.windows++;
	p->closing = true;
	p->iv = iv;
	p->claim = s->claim;
	if (corr_traffic_empty(&iv)) {
		p->st.inconsistent++;
		f.inconsistent = true;
		f.miss = iv.lo - iv.hi;
		tw_keep(p, &f);
	} else if ((f.miss = corr_traffic_miss(&iv, s->claim)) > 0) {
		p->st.flagged++;
		tw_keep(p, &f);
	}
	if (iv.has_lo && iv.has_hi) {
		p->st.both++;
		if (!corr_traffic_empty(&iv)) {
			int64_t width = iv.hi - iv.lo;

			hist_add(p->widths, width);
			if (!p->st.have_tightest || width < p->tightest_width) {
				p->st.have_tightest = true;
				p->st.tightest = iv;
				p->st.tightest_start = f.start;
				p->tightest_width = width;
			}
		}
	}
	s->w = TW_NONE;
}

static void tw_loops(struct corr_traffic *t)
{
	for (unsigned x = 0; x < t->nmax; x++)
		for (unsigned y = x + 1; y < t->nmax; y++) {
			struct tw_pair *xy = tw_pair(t, x, y);

			if (!xy || !xy->closing)
				continue;
			for (unsigned z = y + 1; z < t->nmax; z++) {
				struct tw_pair *yz = tw_pair(t, y, z),
					       *xz = tw_pair(t, x, z);
				unsigned h[3] = { x, y, z };
				struct corr_traffic_loop l;
				uint64_t mask = 0;

				if (!yz || !yz->closing || !xz || !xz->closing)
					continue;
				struct corr_traffic_iv iv[3] = { xy->iv, yz->iv,
								 xz->iv };
				int64_t claim[3] = { xy->claim, yz->claim,
						     xz->claim };

				corr_traffic_loop_check(iv, claim, &l);
				t->loops.checked++;
				if (l.closes)
					continue;
				t->loops.failed++;
				if (!l.closes_traffic) {
					t->loops.open++;
					continue;
				}
				for (unsigned k = 0; k < 3; k++)
					if (l.blame & (1u << k)) {
						mask |= 1ull << h[k];
						t->loops.blamed[h[k]]++;
					}
				t->suspects &= mask;
				t->blaming++;
			}
		}
}

/* Window w of every pair is complete. */
static void tw_close(struct corr_traffic *t, int64_t w)
{
	unsigned k = tw_slot_of(t, w);

	for (unsigned a = 0; a < t->nmax; a++)
		for (unsigned b = a + 1; b < t->nmax; b++) {
			struct tw_pair *p = tw_pair(t, a, b);

			if (p && p->slot[k].w == w)
				tw_pair_close(t, p, &p->slot[k]);
		}
	if (t->nmax >= 3)
		tw_loops(t);
	for (unsigned a = 0; a < t->nmax; a++)
		for (unsigned b = a + 1; b < t->nmax; b++)
			if (tw_pair(t, a, b))
				tw_pair(t, a, b)->closing = false;
}

/* Every window before lim is complete. */
static void tw_close_before(struct corr_traffic *t, int64_t lim)
{
	for (int64_t w = t->open_from; w < lim && w <= t->cur; w++)
		tw_close(t, w);
	if (lim > t->open_from)
		t->open_from = lim;
}

void corr_traffic_sample(struct corr_traffic *t, unsigned from, unsigned to,
			 int64_t ts, int64_t over_cable, int64_t bound)
{
	unsigned a = from < to ? from : to, b = from < to ? to : from;
	int64_t w = tw_floordiv(ts, t->window_ns);
	struct tw_pair *p;
	struct tw_slot *s;

	if (from == to || b >= CORR_TRAFFIC_HOSTS)
		return;
	p = t->pair[a * CORR_TRAFFIC_HOSTS + b];
	if (!p) {
		/* A new pair: the one allocation, as a new flow's. */
		p = t->pair[a * CORR_TRAFFIC_HOSTS + b] = xcalloc(1, sizeof(*p));
		for (unsigned k = 0; k < CORR_TRAFFIC_SLOTS; k++)
			p->slot[k].w = TW_NONE;
		p->widths = hist_create();
		if (b + 1 > t->nmax)
			t->nmax = b + 1;
	}
	if (t->cur == TW_NONE) {
		t->cur = w;
		t->open_from = w - (int64_t)t->slots + 1;
	} else if (w > t->cur) {
		tw_close_before(t, w - (int64_t)t->slots + 1);
		t->cur = w;
	}
	if (w < t->open_from) {
		p->st.late++;
		return;
	}
	s = &p->slot[tw_slot_of(t, w)];
	if (s->w != w) {
		*s = (struct tw_slot){ .w = w, .claim = -1 };
	}
	if (from == a) {
		if (!s->n_ab++ || over_cable < s->d_ab)
			s->d_ab = over_cable;
	} else {
		if (!s->n_ba++ || over_cable < s->d_ba)
			s->d_ba = over_cable;
	}
	if (bound >= 0 && (s->claim < 0 || bound < s->claim))
		s->claim = bound;
}

void corr_traffic_flush(struct corr_traffic *t)
{
	if (t->cur != TW_NONE)
		tw_close_before(t, t->cur + 1);
}

bool corr_traffic_pair(const struct corr_traffic *t, unsigned a, unsigned b,
		       struct corr_traffic_pair_stats *s)
{
	const struct tw_pair *p;

	if (a >= b || b >= CORR_TRAFFIC_HOSTS || !(p = tw_pair(t, a, b)))
		return false;
	*s = p->st;
	s->median_width = -1;
	if (hist_count(p->widths)) {
		struct summary sm;

		hist_summary(p->widths, &sm);
		s->median_width = sm.p50;
	}
	return true;
}

void corr_traffic_loops(const struct corr_traffic *t,
			struct corr_traffic_loops *l)
{
	*l = t->loops;
	l->suspect = -1;
	if (t->blaming && t->suspects && !(t->suspects & (t->suspects - 1)))
		l->suspect = __builtin_ctzll(t->suspects);
}

/* ---------------------------------------------------------------- print */

static void tw_print_side(struct printer *p, const char *key,
			  const char *fmt, bool has, int64_t v)
{
	if (has)
		print_int(p, key, fmt, v);
	else
		print_null(p, key, fmt);
}

static void tw_print_flag(const struct corr_traffic *t, struct printer *p,
			  const struct tw_flag *f)
{
	print_object_begin(p, NULL);
	print_time(p, "start_ns", "\n    %s:", f->start);
	print_time(p, "end_ns", NULL, f->start + t->window_ns);
	print_str(p, "reason", NULL, f->inconsistent ? "inconsistent" :
		  "journals");
	tw_print_side(p, "lo_ns", " traffic [%lld", f->iv.has_lo, f->iv.lo);
	tw_print_side(p, "hi_ns", ", %lld] ns", f->iv.has_hi, f->iv.hi);
	if (f->claim >= 0)
		print_int(p, "claim_ns", f->inconsistent ? NULL :
			  ", journals claim +-%lld ns", f->claim);
	else
		print_null(p, "claim_ns", NULL);
	print_int(p, "miss_ns", f->inconsistent ?
		  ", lo above hi by %lld ns" : ", missed by %lld ns", f->miss);
	print_object_end(p);
}

void corr_traffic_print(const struct corr_traffic *t,
			const char *const *names, unsigned nhosts,
			struct printer *p)
{
	struct corr_traffic_loops l;
	unsigned n = t->nmax < nhosts ? t->nmax : nhosts;

	print_text(p, "\ntraffic: offset of b's clock less a's, from the least "
		   "one-way delays (ns)\n");
	print_object_begin(p, "traffic");
	print_int(p, "window_ns", NULL, t->window_ns);
	print_array_begin(p, "pairs");
	for (unsigned a = 0; a < n; a++)
		for (unsigned b = a + 1; b < n; b++) {
			const struct tw_pair *tp = tw_pair(t, a, b);
			struct corr_traffic_pair_stats s;

			if (!corr_traffic_pair(t, a, b, &s))
				continue;
			print_object_begin(p, NULL);
			print_str(p, "a", "  a %s", names[a]);
			print_str(p, "b", ", b %s:", names[b]);
			print_uint(p, "windows", " %llu windows", s.windows);
			print_uint(p, "with_both_directions",
				   ", %llu both ways", s.both);
			if (s.have_tightest) {
				print_object_begin(p, "interval_ns");
				print_int(p, "lo", ", tightest [%lld",
					  s.tightest.lo);
				print_int(p, "hi", ", %lld]", s.tightest.hi);
				print_time(p, "start_ns", NULL,
					   s.tightest_start);
				print_time(p, "end_ns", NULL,
					   s.tightest_start + t->window_ns);
				print_object_end(p);
			} else {
				print_null(p, "interval_ns",
					   ", tightest %s");
			}
			if (s.median_width >= 0)
				print_int(p, "median_width_ns",
					  ", median width %lld",
					  s.median_width);
			else
				print_null(p, "median_width_ns", NULL);
			print_uint(p, "flagged", "\n    flagged %llu",
				   s.flagged);
			print_uint(p, "inconsistent", ", inconsistent %llu",
				   s.inconsistent);
			print_uint(p, "late_samples", s.late ?
				   ", %llu samples too late for their window" :
				   NULL, s.late);
			print_array_begin(p, "flagged_windows");
			for (unsigned k = 0; k < s.kept; k++)
				tw_print_flag(t, p, &tp->kept[k]);
			print_array_end(p);
			print_uint(p, "flagged_windows_not_kept",
				   s.flagged + s.inconsistent > s.kept ?
				   "\n    and %llu more" : NULL,
				   s.flagged + s.inconsistent - s.kept);
			print_text(p, "\n");
			print_object_end(p);
		}
	print_array_end(p);
	corr_traffic_loops(t, &l);
	print_object_begin(p, "loops");
	print_uint(p, "checked", "  loops of three: %llu checked", l.checked);
	print_uint(p, "failed", ", %llu failed", l.failed);
	print_uint(p, "open", " (%llu on the traffic alone)", l.open);
	print_str(p, "suspect", ", suspect %s",
		  l.suspect >= 0 && (unsigned)l.suspect < nhosts ?
		  names[l.suspect] : NULL);
	print_array_begin(p, "blamed");
	for (unsigned h = 0; h < n; h++) {
		if (!l.blamed[h])
			continue;
		print_object_begin(p, NULL);
		print_str(p, "host", ", %s", names[h]);
		print_uint(p, "loops", " blamed by %llu", l.blamed[h]);
		print_object_end(p);
	}
	print_array_end(p);
	print_text(p, "\n");
	print_object_end(p);
	print_object_end(p);
}
