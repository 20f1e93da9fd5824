/* fuzz_mgmt — libFuzzer target for the management message decoder: the
 * input is one datagram as it would arrive on ptp4l's UNIX socket.
 * mgmt_decode() must never read past the datagram, must return 0 or
 * -EBADMSG with a reason and an offset inside it, and what it decodes must
 * hold together: messageLength within the datagram, the TLV within
 * messageLength, texts NUL-terminated within their fields. What decodes is
 * then passed through the name and format helpers, and its header (and a
 * subscription's duration and events) through the encoders and back. The
 * seed corpus (corpus/mgmt) holds what ptp4l 3.1.1 sent in a live run for
 * every ID decoded, an error status and a notification, and the requests
 * pmc.c sends. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ptp/mgmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t fuzz_sink;

static void check_text(const char *s, size_t cap, size_t max_len)
{
	size_t n = strnlen(s, cap);

	if (n == cap || n > max_len)
		__builtin_trap();
	fuzz_sink += n;
}

/* The header survives encoding and decoding again. */
static void round_trip(const struct mgmt_msg *m)
{
	struct mgmt_hdr h = {
		.domain = m->domain, .seq = m->seq, .source = m->source,
		.target = m->target, .boundary_hops = m->boundary_hops,
	};
	uint8_t buf[MGMT_SUBSCRIBE_LEN];
	struct mgmt_msg back;

	if (mgmt_encode_get(buf, sizeof(buf), &h, m->id) != MGMT_GET_LEN ||
	    mgmt_decode(buf, MGMT_GET_LEN, &back) || back.id != m->id ||
	    back.seq != m->seq || back.domain != m->domain ||
	    memcmp(&back.source.clock, &m->source.clock, 8) ||
	    back.source.port != m->source.port ||
	    memcmp(&back.target.clock, &m->target.clock, 8) ||
	    back.target.port != m->target.port ||
	    back.boundary_hops != m->boundary_hops || back.decoded)
		__builtin_trap();
	if (m->tlv_type == MGMT_TLV_MANAGEMENT && m->decoded &&
	    m->id == MGMT_ID_SUBSCRIBE_EVENTS_NP) {
		if (mgmt_encode_subscribe(buf, sizeof(buf), &h,
					  m->subscribe.duration_s,
					  m->subscribe.events) != MGMT_SUBSCRIBE_LEN ||
		    mgmt_decode(buf, sizeof(buf), &back) || !back.decoded ||
		    back.subscribe.events != m->subscribe.events ||
		    back.subscribe.duration_s != m->subscribe.duration_s ||
		    memcmp(back.subscribe.mask, m->subscribe.mask, 8))
			__builtin_trap();
	}
}

static void use(const struct mgmt_msg *m, size_t size)
{
	char c[MGMT_CLOCK_ID_STRLEN], p[MGMT_PORT_ID_STRLEN];
	double ns = 0;

	if (m->length > size || m->length < MGMT_HDR_LEN + 4)
		__builtin_trap();
	if (m->tlv_type == MGMT_TLV_MANAGEMENT &&
	    (size_t)MGMT_HDR_LEN + 6 + m->data_len > m->length)
		__builtin_trap();
	check_text(mgmt_port_id_str(&m->source, p), sizeof(p), MGMT_PORT_ID_STRLEN - 1);
	check_text(mgmt_port_id_str(&m->target, p), sizeof(p), MGMT_PORT_ID_STRLEN - 1);
	fuzz_sink += strlen(mgmt_action_name(m->action)) +
		     strlen(mgmt_id_name(m->id));
	if (m->tlv_type == MGMT_TLV_ERROR_STATUS) {
		check_text(m->error.text, sizeof(m->error.text), 255);
		fuzz_sink += strlen(mgmt_error_name(m->error.error_id));
	} else if (m->tlv_type == MGMT_TLV_MANAGEMENT && m->decoded) {
		switch (m->id) {
		case MGMT_ID_TIME_STATUS_NP:
			check_text(mgmt_clock_id_str(&m->time_status.gm_identity, c),
				   sizeof(c), MGMT_CLOCK_ID_STRLEN - 1);
			ns = (double)m->time_status.master_offset_ns;
			break;
		case MGMT_ID_CURRENT_DATA_SET:
			ns = mgmt_ti_ns(m->current_ds.offset_from_master) +
			     mgmt_ti_ns(m->current_ds.mean_path_delay);
			break;
		case MGMT_ID_PARENT_DATA_SET:
			check_text(mgmt_clock_id_str(&m->parent_ds.gm_identity, c),
				   sizeof(c), MGMT_CLOCK_ID_STRLEN - 1);
			check_text(mgmt_port_id_str(&m->parent_ds.parent_port, p),
				   sizeof(p), MGMT_PORT_ID_STRLEN - 1);
			break;
		case MGMT_ID_PORT_DATA_SET:
			fuzz_sink += strlen(mgmt_port_state_name(m->port_ds.port_state));
			ns = mgmt_ti_ns(m->port_ds.peer_mean_path_delay);
			break;
		case MGMT_ID_PORT_PROPERTIES_NP:
			/* The name lies inside the data after 13 bytes. */
			check_text(m->port_properties.interface,
				   sizeof(m->port_properties.interface),
				   m->data_len - 13u);
			fuzz_sink += strlen(mgmt_port_state_name(m->port_properties.port_state)) +
				     strlen(mgmt_timestamping_name(m->port_properties.timestamping));
			break;
		case MGMT_ID_PORT_STATS_NP:
			fuzz_sink += m->port_stats.rx[0] + m->port_stats.tx[15];
			break;
		case MGMT_ID_SUBSCRIBE_EVENTS_NP:
			fuzz_sink += m->subscribe.duration_s;
			break;
		case MGMT_ID_TIME_PROPERTIES_DATA_SET:
			fuzz_sink += (uint64_t)(m->time_props.current_utc_offset +
						m->time_props.flags);
			break;
		default:
			__builtin_trap();	/* decoded an ID it does not know */
		}
	}
	fuzz_sink += ns != ns;
	round_trip(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mgmt_msg m;
	int ret = mgmt_decode(data, size, &m);

	if (ret == 0) {
		use(&m, size);
	} else if (ret == -EBADMSG) {
		if (!m.why || m.err_offset > size)
			__builtin_trap();
		fuzz_sink += strlen(m.why);
	} else {
		__builtin_trap();
	}
	return 0;
}
