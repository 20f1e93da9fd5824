/* capfile_pcap.c — classic pcap through libpcap: microsecond and nanosecond
 * files (tcpdump -j adapter_unsynced --time-stamp-precision nano, a tap's
 * capture card), asked for at nanosecond precision so both arrive in ns. */
#include <errno.h>
#include <pcap/pcap.h>
#include <string.h>

#include "files/capfile_private.h"

static int cap_pcap_open(struct cap_reader *r)
{
	char err[PCAP_ERRBUF_SIZE];
	struct cap_iface *ifc;
	uint32_t magic = 0, id;
	pcap_t *p;

	if (fread(&magic, 1, 4, r->f) != 4)
		return cap_fail(r, 0, "too short for a pcap file");
	rewind(r->f);
	/* libpcap owns the FILE from here and closes it. */
	p = pcap_fopen_offline_with_tstamp_precision(r->f,
			PCAP_TSTAMP_PRECISION_NANO, err);
	if (!p)
		return cap_fail(r, 0, "%s", err);
	r->f = NULL;
	r->pcap = p;
	r->offset = 24;
	ifc = cap_add_iface(r, &id);
	ifc->linktype = (uint16_t)pcap_datalink(p);
	ifc->snaplen = (uint32_t)pcap_snapshot(p);
	/* The file's own resolution, whatever precision we asked for. */
	ifc->resolution_ns = magic == 0xa1b23c4d || magic == 0x4d3cb2a1 ? 1 : 1000;
	r->stats.sections = 1;
	return 0;
}

static int cap_pcap_next(struct cap_reader *r, struct cap_packet *pkt)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc = pcap_next_ex(r->pcap, &h, &data);

	if (rc == PCAP_ERROR_BREAK)
		return 0;	/* end of file */
	if (rc != 1)
		return cap_fail(r, r->offset, "%s", pcap_geterr(r->pcap));
	memset(pkt, 0, sizeof(*pkt));
	/* With nanosecond precision libpcap puts nanoseconds in tv_usec. */
	pkt->ts_ns = (int64_t)h->ts.tv_sec * 1000000000 + h->ts.tv_usec;
	pkt->caplen = h->caplen;
	pkt->origlen = h->len;
	pkt->data = data;
	pkt->offset = r->offset;
	r->offset += 16 + h->caplen;
	return 1;
}

static void cap_pcap_close(struct cap_reader *r)
{
	if (r->pcap)
		pcap_close(r->pcap);
	r->pcap = NULL;
}

const struct cap_ops cap_pcap_ops = {
	.format = CAP_PCAP,
	.open = cap_pcap_open,
	.next = cap_pcap_next,
	.close = cap_pcap_close,
};
