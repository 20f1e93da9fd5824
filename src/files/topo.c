/* topo.c — see topo.h. */
#include "files/topo.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/xalloc.h"

#define TOPO_MAX_NODES 256
#define TOPO_MAX_ADDRS 16
#define TOPO_MAX_LINKS 512

struct topo_node {
	char name[64];
	bool declared;		/* by a host or switch line, not only a link */
	bool is_switch;
	bool store_forward;
	double speed_bps;
	unsigned naddr;
	struct {
		int family;
		uint8_t a[16];
	} addr[TOPO_MAX_ADDRS];
	/* An observation point (a tap, a port mirror) on the link between
	 * nodes tap_a and tap_b: it owns no address, and sees frames the
	 * way tap_a does. */
	bool tap;
	unsigned tap_a, tap_b;
};

struct topo_link {
	unsigned a, b;
	double prop_ns;
};

struct topo {
	struct topo_node node[TOPO_MAX_NODES];
	unsigned nnodes;
	struct topo_link link[TOPO_MAX_LINKS];
	unsigned nlinks;
};

static int topo_find(const struct topo *t, const char *name)
{
	for (unsigned i = 0; i < t->nnodes; i++)
		if (!strcmp(t->node[i].name, name))
			return (int)i;
	return -1;
}

/* A node by name, added as a host when new (a link may name a host before
 * or without its host line). */
static int topo_node(struct topo *t, const char *name, const char **why)
{
	int i = topo_find(t, name);

	if (i >= 0)
		return i;
	if (t->nnodes == TOPO_MAX_NODES) {
		*why = "too many hosts and switches";
		return -1;
	}
	if (strlen(name) >= sizeof(t->node[0].name)) {
		*why = "name too long";
		return -1;
	}
	snprintf(t->node[t->nnodes].name, sizeof(t->node[0].name), "%s", name);
	return (int)t->nnodes++;
}

int topo_parse_speed(const char *s, double *bps)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !isfinite(v) || v <= 0)
		return -EINVAL;
	if (!strcmp(end, "G") || !strcmp(end, "g"))
		v *= 1e9;
	else if (!strcmp(end, "M") || !strcmp(end, "m"))
		v *= 1e6;
	else if (*end)
		return -EINVAL;
	*bps = v;
	return 0;
}

/* Add address s (IPv4 or IPv6) to host n. */
static int topo_addr(struct topo_node *n, const char *s, const char **why)
{
	if (n->naddr == TOPO_MAX_ADDRS) {
		*why = "host: too many addresses";
		return -EINVAL;
	}
	if (inet_pton(AF_INET, s, n->addr[n->naddr].a) == 1) {
		n->addr[n->naddr++].family = AF_INET;
	} else if (inet_pton(AF_INET6, s, n->addr[n->naddr].a) == 1) {
		n->addr[n->naddr++].family = AF_INET6;
	} else {
		*why = "host: not an IPv4 or IPv6 address";
		return -EINVAL;
	}
	return 0;
}

static int topo_link_between(const struct topo *t, unsigned a, unsigned b);

/* Observation point name on the link between a and b (nodes made when
 * new: a link line may come later). */
static int topo_tap_add(struct topo *t, const char *name, const char *a,
			const char *b, const char **why)
{
	int i = topo_find(t, name), ia, ib;

	/* Named again the same way (a baseline's inputs): the same point. */
	if (i >= 0 && t->node[i].tap && topo_find(t, a) == (int)t->node[i].tap_a &&
	    topo_find(t, b) == (int)t->node[i].tap_b)
		return 0;
	if (i >= 0) {
		*why = "tap: name already used by a host or switch";
		return -EINVAL;
	}
	if ((ia = topo_node(t, a, why)) < 0 || (ib = topo_node(t, b, why)) < 0 ||
	    (i = topo_node(t, name, why)) < 0)
		return -EINVAL;
	if (ia == ib) {
		*why = "tap: both ends of its link are the same";
		return -EINVAL;
	}
	t->node[i].declared = true;
	t->node[i].tap = true;
	t->node[i].tap_a = (unsigned)ia;
	t->node[i].tap_b = (unsigned)ib;
	return 0;
}

static int topo_line(struct topo *t, char **f, int nf, const char **why)
{
	int i, j;

	if (!strcmp(f[0], "host")) {
		if (nf < 2) {
			*why = "host: expected 'host NAME [ADDRESS ...]'";
			return -EINVAL;
		}
		if ((i = topo_node(t, f[1], why)) < 0)
			return -EINVAL;
		if (t->node[i].is_switch) {
			*why = "host: name already used by a switch";
			return -EINVAL;
		}
		t->node[i].declared = true;
		for (int k = 2; k < nf; k++)
			if (topo_addr(&t->node[i], f[k], why))
				return -EINVAL;
		return 0;
	}
	if (!strcmp(f[0], "switch")) {
		if (nf < 3 || nf > 4 || (strcmp(f[2], "cut-through") &&
					 strcmp(f[2], "store-and-forward"))) {
			*why = "switch: expected 'switch NAME cut-through|"
			       "store-and-forward [SPEED]'";
			return -EINVAL;
		}
		/* A link may name the switch before its switch line. */
		i = topo_find(t, f[1]);
		if (i >= 0 && t->node[i].declared) {
			*why = "switch: name already used";
			return -EINVAL;
		}
		if (i < 0 && (i = topo_node(t, f[1], why)) < 0)
			return -EINVAL;
		t->node[i].declared = true;
		t->node[i].is_switch = true;
		t->node[i].store_forward = !strcmp(f[2], "store-and-forward");
		t->node[i].speed_bps = 10e9;
		if (nf == 4 && topo_parse_speed(f[3], &t->node[i].speed_bps)) {
			*why = "switch: SPEED is not like 10G, 25G, 1G or 100M";
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(f[0], "link")) {
		double len, per_m = TOPO_NS_PER_M;
		char *end;

		if (nf < 4 || nf > 5) {
			*why = "link: expected 'link A B LENGTH [NS_PER_M]'";
			return -EINVAL;
		}
		len = strtod(f[3], &end);
		if (end == f[3] || (*end && strcmp(end, "m")) || len < 0 ||
		    !isfinite(len)) {
			*why = "link: LENGTH is not a length in metres";
			return -EINVAL;
		}
		if (nf == 5) {
			per_m = strtod(f[4], &end);
			if (end == f[4] || (*end && strcmp(end, "ns/m")) ||
			    per_m <= 0 || !isfinite(per_m)) {
				*why = "link: NS_PER_M is not a positive number";
				return -EINVAL;
			}
		}
		if ((i = topo_node(t, f[1], why)) < 0 ||
		    (j = topo_node(t, f[2], why)) < 0)
			return -EINVAL;
		if (i == j) {
			*why = "link: both ends are the same";
			return -EINVAL;
		}
		if (t->nlinks == TOPO_MAX_LINKS) {
			*why = "too many links";
			return -EINVAL;
		}
		t->link[t->nlinks++] = (struct topo_link){
			(unsigned)i, (unsigned)j, len * per_m };
		return 0;
	}
	if (!strcmp(f[0], "tap")) {
		if (nf != 4) {
			*why = "tap: expected 'tap NAME A B'";
			return -EINVAL;
		}
		return topo_tap_add(t, f[1], f[2], f[3], why);
	}
	*why = "expected host, switch, link or tap";
	return -EINVAL;
}

int topo_load(struct topo **out, const char *path, char err[TOPO_ERRBUF])
{
	char line[1024];
	struct topo *t;
	unsigned lineno = 0;
	FILE *f;

	*out = NULL;
	f = fopen(path, "re");
	if (!f) {
		int e = errno;

		snprintf(err, TOPO_ERRBUF, "%s: %s", path, strerror(e));
		return -e;
	}
	t = xcalloc(1, sizeof(*t));
	while (fgets(line, sizeof(line), f)) {
		char *fields[24], *save = NULL, *p, *hash;
		const char *why = NULL;
		int nf = 0;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, TOPO_ERRBUF, "%s:%u: line too long", path,
				 lineno);
			goto bad;
		}
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		for (p = strtok_r(line, " \t\r\n", &save); p && nf < 24;
		     p = strtok_r(NULL, " \t\r\n", &save))
			fields[nf++] = p;
		if (!nf)
			continue;
		if (p) {
			snprintf(err, TOPO_ERRBUF, "%s:%u: too many fields",
				 path, lineno);
			goto bad;
		}
		if (topo_line(t, fields, nf, &why) < 0) {
			snprintf(err, TOPO_ERRBUF, "%s:%u: %s", path, lineno, why);
			goto bad;
		}
	}
	/* A tap line may come before its link's: checked once all are in. */
	for (unsigned i = 0; i < t->nnodes; i++)
		if (t->node[i].tap && t->nlinks &&
		    topo_link_between(t, t->node[i].tap_a, t->node[i].tap_b) < 0) {
			snprintf(err, TOPO_ERRBUF, "%s: tap %s: no link between %s "
				 "and %s", path, t->node[i].name,
				 t->node[t->node[i].tap_a].name,
				 t->node[t->node[i].tap_b].name);
			goto bad;
		}
	fclose(f);
	*out = t;
	return 0;
bad:
	fclose(f);
	free(t);
	return -EINVAL;
}

void topo_destroy(struct topo *t)
{
	free(t);
}

struct topo *topo_create(void)
{
	return xcalloc(1, sizeof(struct topo));
}

int topo_add_host(struct topo *t, const char *name, const char *addrs,
		  char err[TOPO_ERRBUF])
{
	struct topo_node saved;
	const char *why = NULL, *p = addrs;
	unsigned nnodes = t->nnodes;
	int i;

	if ((i = topo_node(t, name, &why)) < 0) {
		snprintf(err, TOPO_ERRBUF, "%s", why);
		return -EINVAL;
	}
	if (t->node[i].is_switch) {
		snprintf(err, TOPO_ERRBUF, "'%s' is a switch in the topology",
			 name);
		return -EINVAL;
	}
	saved = t->node[i];
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char a[INET6_ADDRSTRLEN + 1];

		if (n >= sizeof(a) || !n) {
			why = "host: not an IPv4 or IPv6 address";
		} else {
			memcpy(a, p, n);
			a[n] = '\0';
			topo_addr(&t->node[i], a, &why);
		}
		if (why) {
			snprintf(err, TOPO_ERRBUF, "'%.*s': %s", (int)(n < 64 ? n : 64),
				 p, !strcmp(why, "host: too many addresses") ?
				 "too many addresses (at most 16 a host)" :
				 "not an IPv4 or IPv6 address");
			t->node[i] = saved;
			t->nnodes = nnodes;	/* a new host goes again */
			return -EINVAL;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	t->node[i].declared = true;
	return 0;
}

int topo_add_tap(struct topo *t, const char *name, const char *link,
		 char err[TOPO_ERRBUF])
{
	const char *why = NULL, *dash = NULL;
	char a[64], b[64];
	unsigned splits = 0;

	/* A-B where names may hold dashes themselves: the split whose two
	 * sides are nodes of the topology, or the only dash. */
	for (const char *p = strchr(link, '-'); p; p = strchr(p + 1, '-')) {
		size_t n = (size_t)(p - link);

		splits++;
		if (!n || n >= sizeof(a) || strlen(p + 1) >= sizeof(b) || !p[1])
			continue;
		memcpy(a, link, n);
		a[n] = '\0';
		if (topo_find(t, a) >= 0 && topo_find(t, p + 1) >= 0) {
			dash = p;
			break;
		}
	}
	if (!dash && splits == 1)
		dash = strchr(link, '-');
	if (!dash || dash == link || !dash[1] ||
	    (size_t)(dash - link) >= sizeof(a) || strlen(dash + 1) >= sizeof(b)) {
		snprintf(err, TOPO_ERRBUF, "'%s': not A-B, a link between two "
			 "hosts or switches of the topology", link);
		return -EINVAL;
	}
	memcpy(a, link, (size_t)(dash - link));
	a[dash - link] = '\0';
	snprintf(b, sizeof(b), "%s", dash + 1);
	/* With a topology of links, the point must be on one of them. */
	if (t->nlinks && (topo_find(t, a) < 0 || topo_find(t, b) < 0 ||
			  topo_link_between(t, (unsigned)topo_find(t, a),
					    (unsigned)topo_find(t, b)) < 0)) {
		snprintf(err, TOPO_ERRBUF, "'%s': the topology has no link "
			 "between %s and %s", link, a, b);
		return -EINVAL;
	}
	if (topo_tap_add(t, name, a, b, &why)) {
		snprintf(err, TOPO_ERRBUF, "%s", why);
		return -EINVAL;
	}
	return 0;
}

bool topo_tap(const struct topo *t, const char *name, const char **a,
	      const char **b)
{
	int i = topo_find(t, name);

	if (i < 0 || !t->node[i].tap)
		return false;
	*a = t->node[t->node[i].tap_a].name;
	*b = t->node[t->node[i].tap_b].name;
	return true;
}

bool topo_has_host(const struct topo *t, const char *host)
{
	int i = topo_find(t, host);

	return i >= 0 && !t->node[i].is_switch;
}

bool topo_owns(const struct topo *t, const char *host, int family,
	       const uint8_t *addr)
{
	int i = topo_find(t, host);
	size_t len = family == AF_INET ? 4 : 16;

	if (i < 0)
		return false;
	if (t->node[i].tap)
		i = (int)t->node[i].tap_a;	/* sees frames as its end does */
	for (unsigned k = 0; k < t->node[i].naddr; k++)
		if (t->node[i].addr[k].family == family &&
		    !memcmp(t->node[i].addr[k].a, addr, len))
			return true;
	return false;
}

static int topo_link_between(const struct topo *t, unsigned a, unsigned b)
{
	for (unsigned k = 0; k < t->nlinks; k++)
		if ((t->link[k].a == a && t->link[k].b == b) ||
		    (t->link[k].a == b && t->link[k].b == a))
			return (int)k;
	return -1;
}

int topo_path(const struct topo *t, const char *a, const char *b,
	      struct topo_path *p)
{
	int ia = topo_find(t, a), ib = topo_find(t, b), k, l;

	memset(p, 0, sizeof(*p));
	if (ia < 0 || ib < 0)
		return -ENOENT;
	if ((k = topo_link_between(t, (unsigned)ia, (unsigned)ib)) >= 0) {
		p->prop_ns = t->link[k].prop_ns;
		return 0;
	}
	for (unsigned s = 0; s < t->nnodes; s++) {
		if (!t->node[s].is_switch)
			continue;
		k = topo_link_between(t, (unsigned)ia, s);
		l = topo_link_between(t, s, (unsigned)ib);
		if (k < 0 || l < 0)
			continue;
		p->prop_ns = t->link[k].prop_ns + t->link[l].prop_ns;
		p->sw = t->node[s].name;
		p->store_forward = t->node[s].store_forward;
		p->speed_bps = t->node[s].speed_bps;
		return 0;
	}
	return -ENOENT;
}

double topo_serialisation_ns(uint32_t wire_len, double speed_bps)
{
	return speed_bps > 0 ? (wire_len + 4.0) * 8.0 * 1e9 / speed_bps : 0;
}
