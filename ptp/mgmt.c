/* mgmt.c — see mgmt.h. */
#include "ptp/mgmt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"

/* Offsets in the message (IEEE 1588-2008 Table 18 and Table 37). */
#define OFF_TSMT 0
#define OFF_VERSION 1
#define OFF_LENGTH 2
#define OFF_DOMAIN 4
#define OFF_FLAGS 6
#define OFF_CORRECTION 8
#define OFF_SOURCE 20
#define OFF_SEQ 30
#define OFF_CONTROL 32
#define OFF_LOG_INTERVAL 33
#define OFF_TARGET 34
#define OFF_STARTING_HOPS 44
#define OFF_HOPS 45
#define OFF_ACTION 46
#define OFF_TLV 48

#define PTP_MANAGEMENT 0xD
#define PTP_VERSION 2
#define CTL_MANAGEMENT 4

/* Data layout sizes (linuxptp tlv.h, ds.h with PACKED structs). */
#define LEN_PORT_ID 10
#define LEN_TIME_STATUS 50
#define LEN_CURRENT_DS 18
#define LEN_TIME_PROPS 4
#define LEN_PARENT_DS 32
#define LEN_PORT_DS 26
#define LEN_SUBSCRIBE (2 + MGMT_EVENT_BYTES)
#define LEN_PORT_PROPERTIES 13	/* before the interface name's bytes */
#define LEN_PORT_STATS (LEN_PORT_ID + 2 * 16 * 8)
#define LEN_ERROR_STATUS 8	/* error id, management id, reserved (4) */

static void put_port_id(uint8_t *p, const struct mgmt_port_id *id)
{
	memcpy(p, id->clock.id, 8);
	bytes_put_be16(p + 8, id->port);
}

static void get_port_id(const uint8_t *p, struct mgmt_port_id *id)
{
	memcpy(id->clock.id, p, 8);
	id->port = bytes_get_be16(p + 8);
}

void mgmt_target_all(struct mgmt_port_id *target)
{
	memset(target->clock.id, 0xff, sizeof(target->clock.id));
	target->port = 0xffff;
}

/* Header, management fields and the MANAGEMENT TLV's type, length and id
 * for a message of total length len; the data follows at MGMT_HDR_LEN + 6.
 * Fields not set here (flags, correction, reserved) are zero. */
static void mgmt_put_head(uint8_t *buf, size_t len, const struct mgmt_hdr *h,
			  enum mgmt_action action, uint16_t id)
{
	memset(buf, 0, len);
	buf[OFF_TSMT] = PTP_MANAGEMENT;
	buf[OFF_VERSION] = PTP_VERSION;
	bytes_put_be16(buf + OFF_LENGTH, (uint16_t)len);
	buf[OFF_DOMAIN] = h->domain;
	put_port_id(buf + OFF_SOURCE, &h->source);
	bytes_put_be16(buf + OFF_SEQ, h->seq);
	buf[OFF_CONTROL] = CTL_MANAGEMENT;
	/* 0x7F: "no interval" for messages not sent periodically. */
	buf[OFF_LOG_INTERVAL] = 0x7f;
	put_port_id(buf + OFF_TARGET, &h->target);
	buf[OFF_STARTING_HOPS] = h->boundary_hops;
	buf[OFF_HOPS] = h->boundary_hops;
	buf[OFF_ACTION] = (uint8_t)action;
	bytes_put_be16(buf + OFF_TLV, MGMT_TLV_MANAGEMENT);
	bytes_put_be16(buf + OFF_TLV + 2, (uint16_t)(len - OFF_TLV - 4));
	bytes_put_be16(buf + OFF_TLV + 4, id);
}

int mgmt_encode_get(uint8_t *buf, size_t len, const struct mgmt_hdr *h,
		    uint16_t id)
{
	if (len < MGMT_GET_LEN)
		return -ENOSPC;
	mgmt_put_head(buf, MGMT_GET_LEN, h, MGMT_GET, id);
	return MGMT_GET_LEN;
}

int mgmt_encode_subscribe(uint8_t *buf, size_t len, const struct mgmt_hdr *h,
			  uint16_t duration_s, uint64_t events)
{
	uint8_t *d = buf + MGMT_HDR_LEN + 6;

	if (len < MGMT_SUBSCRIBE_LEN)
		return -ENOSPC;
	mgmt_put_head(buf, MGMT_SUBSCRIBE_LEN, h, MGMT_SET,
		      MGMT_ID_SUBSCRIBE_EVENTS_NP);
	bytes_put_be16(d, duration_s);
	/* linuxptp's event_bitmask: event n is bit n % 8 of byte n / 8. */
	for (int n = 0; n < 64; n++)
		if (events & MGMT_EVENT(n))
			d[2 + n / 8] |= (uint8_t)(1u << (n % 8));
	return MGMT_SUBSCRIBE_LEN;
}

static int bad(struct mgmt_msg *m, size_t off, const char *why)
{
	m->err_offset = off;
	m->why = why;
	return -EBADMSG;
}

/* A PTPText (length byte, then that many bytes) at p, with avail bytes
 * there, into a NUL-terminated out[256]. Returns 0, or -1 when the text
 * runs past avail. */
static int get_text(const uint8_t *p, size_t avail, char out[256])
{
	size_t n;

	if (avail < 1)
		return -1;
	n = p[0];
	if (n > avail - 1)
		return -1;
	memcpy(out, p + 1, n);
	out[n] = '\0';
	return 0;
}

static void get_time_status(const uint8_t *d, struct mgmt_time_status *t)
{
	t->master_offset_ns = (int64_t)bytes_get_be64(d);
	t->ingress_time_ns = (int64_t)bytes_get_be64(d + 8);
	t->cumulative_scaled_rate_offset = (int32_t)bytes_get_be32(d + 16);
	t->scaled_last_gm_phase_change = (int32_t)bytes_get_be32(d + 20);
	t->gm_time_base_indicator = bytes_get_be16(d + 24);
	t->last_gm_phase_change.ns_msb = bytes_get_be16(d + 26);
	t->last_gm_phase_change.ns_lsb = bytes_get_be64(d + 28);
	t->last_gm_phase_change.frac = bytes_get_be16(d + 36);
	t->gm_present = bytes_get_be32(d + 38) != 0;
	memcpy(t->gm_identity.id, d + 42, 8);
}

static void get_current_ds(const uint8_t *d, struct mgmt_current_ds *c)
{
	c->steps_removed = bytes_get_be16(d);
	c->offset_from_master = (int64_t)bytes_get_be64(d + 2);
	c->mean_path_delay = (int64_t)bytes_get_be64(d + 10);
}

static void get_time_props(const uint8_t *d, struct mgmt_time_props *t)
{
	t->current_utc_offset = (int16_t)bytes_get_be16(d);
	t->flags = d[2];
	t->time_source = d[3];
}

static void get_parent_ds(const uint8_t *d, struct mgmt_parent_ds *p)
{
	get_port_id(d, &p->parent_port);
	p->parent_stats = d[10];
	/* d[11] reserved */
	p->observed_parent_offset_scaled_log_variance = bytes_get_be16(d + 12);
	p->observed_parent_clock_phase_change_rate = (int32_t)bytes_get_be32(d + 14);
	p->gm_priority1 = d[18];
	p->gm_clock_quality.clock_class = d[19];
	p->gm_clock_quality.clock_accuracy = d[20];
	p->gm_clock_quality.offset_scaled_log_variance = bytes_get_be16(d + 21);
	p->gm_priority2 = d[23];
	memcpy(p->gm_identity.id, d + 24, 8);
}

static void get_port_ds(const uint8_t *d, struct mgmt_port_ds *p)
{
	get_port_id(d, &p->port);
	p->port_state = d[10];
	p->log_min_delay_req_interval = (int8_t)d[11];
	p->peer_mean_path_delay = (int64_t)bytes_get_be64(d + 12);
	p->log_announce_interval = (int8_t)d[20];
	p->announce_receipt_timeout = d[21];
	p->log_sync_interval = (int8_t)d[22];
	p->delay_mechanism = d[23];
	p->log_min_pdelay_req_interval = (int8_t)d[24];
	p->version_number = d[25] & 0x0f;
}

static void get_subscribe(const uint8_t *d, struct mgmt_subscribe *s)
{
	s->duration_s = bytes_get_be16(d);
	memcpy(s->mask, d + 2, MGMT_EVENT_BYTES);
	s->events = bytes_get_le64(d + 2);	/* byte n / 8 holds bit n */
}

static void get_port_stats(const uint8_t *d, struct mgmt_port_stats *s)
{
	get_port_id(d, &s->port);
	/* linuxptp sends PORT_STATS_NP counters in little-endian order. */
	for (int i = 0; i < 16; i++) {
		s->rx[i] = bytes_get_le64(d + LEN_PORT_ID + 8 * i);
		s->tx[i] = bytes_get_le64(d + LEN_PORT_ID + 128 + 8 * i);
	}
}

/* The MANAGEMENT TLV's data: d[0..n) at message offset off. */
static int mgmt_decode_data(const uint8_t *d, size_t n, size_t off,
			    struct mgmt_msg *m)
{
	size_t need;

	switch (m->id) {
	case MGMT_ID_TIME_STATUS_NP:
		need = LEN_TIME_STATUS;
		break;
	case MGMT_ID_CURRENT_DATA_SET:
		need = LEN_CURRENT_DS;
		break;
	case MGMT_ID_PARENT_DATA_SET:
		need = LEN_PARENT_DS;
		break;
	case MGMT_ID_TIME_PROPERTIES_DATA_SET:
		need = LEN_TIME_PROPS;
		break;
	case MGMT_ID_PORT_DATA_SET:
		need = LEN_PORT_DS;
		break;
	case MGMT_ID_SUBSCRIBE_EVENTS_NP:
		need = LEN_SUBSCRIBE;
		break;
	case MGMT_ID_PORT_PROPERTIES_NP:
		need = LEN_PORT_PROPERTIES;
		break;
	case MGMT_ID_PORT_STATS_NP:
		need = LEN_PORT_STATS;
		break;
	default:
		return 0;
	}
	if (n == 0)
		return 0;	/* a GET, or a reply without data */
	if (n < need)
		return bad(m, off + n, "management data shorter than its ID's layout");
	switch (m->id) {
	case MGMT_ID_TIME_STATUS_NP:
		get_time_status(d, &m->time_status);
		break;
	case MGMT_ID_CURRENT_DATA_SET:
		get_current_ds(d, &m->current_ds);
		break;
	case MGMT_ID_PARENT_DATA_SET:
		get_parent_ds(d, &m->parent_ds);
		break;
	case MGMT_ID_TIME_PROPERTIES_DATA_SET:
		get_time_props(d, &m->time_props);
		break;
	case MGMT_ID_PORT_DATA_SET:
		get_port_ds(d, &m->port_ds);
		break;
	case MGMT_ID_SUBSCRIBE_EVENTS_NP:
		get_subscribe(d, &m->subscribe);
		break;
	case MGMT_ID_PORT_PROPERTIES_NP:
		get_port_id(d, &m->port_properties.port);
		m->port_properties.port_state = d[10];
		m->port_properties.timestamping = d[11];
		if (get_text(d + 12, n - 12, m->port_properties.interface))
			return bad(m, off + 12, "interface name overruns the TLV");
		break;
	case MGMT_ID_PORT_STATS_NP:
		get_port_stats(d, &m->port_stats);
		break;
	}
	m->decoded = true;
	return 0;
}

int mgmt_decode(const uint8_t *buf, size_t len, struct mgmt_msg *m)
{
	size_t end, tlv_len;
	const uint8_t *t;

	memset(m, 0, sizeof(*m));
	if (len < MGMT_HDR_LEN)
		return bad(m, len, "shorter than a management header");
	m->transport_specific = buf[OFF_TSMT] >> 4;
	if ((buf[OFF_TSMT] & 0x0f) != PTP_MANAGEMENT)
		return bad(m, OFF_TSMT, "not a management message");
	m->version = buf[OFF_VERSION] & 0x0f;
	if (m->version != PTP_VERSION)
		return bad(m, OFF_VERSION, "not PTP version 2");
	m->length = bytes_get_be16(buf + OFF_LENGTH);
	if (m->length > len)
		return bad(m, OFF_LENGTH, "messageLength beyond the datagram");
	if (m->length < MGMT_HDR_LEN + 4)
		return bad(m, OFF_LENGTH, "messageLength leaves no room for a TLV");
	end = m->length;
	m->domain = buf[OFF_DOMAIN];
	m->flags[0] = buf[OFF_FLAGS];
	m->flags[1] = buf[OFF_FLAGS + 1];
	m->correction = (int64_t)bytes_get_be64(buf + OFF_CORRECTION);
	get_port_id(buf + OFF_SOURCE, &m->source);
	m->seq = bytes_get_be16(buf + OFF_SEQ);
	get_port_id(buf + OFF_TARGET, &m->target);
	m->starting_boundary_hops = buf[OFF_STARTING_HOPS];
	m->boundary_hops = buf[OFF_HOPS];
	m->action = buf[OFF_ACTION] & 0x0f;
	if (m->action > MGMT_ACKNOWLEDGE)
		return bad(m, OFF_ACTION, "actionField not GET, SET, RESPONSE, COMMAND or ACKNOWLEDGE");

	t = buf + OFF_TLV;
	m->tlv_type = bytes_get_be16(t);
	tlv_len = bytes_get_be16(t + 2);
	if (tlv_len > end - OFF_TLV - 4)
		return bad(m, OFF_TLV + 2, "TLV overruns the message");
	if (tlv_len % 2)
		return bad(m, OFF_TLV + 2, "TLV length odd");
	switch (m->tlv_type) {
	case MGMT_TLV_MANAGEMENT:
		if (tlv_len < 2)
			return bad(m, OFF_TLV + 2, "MANAGEMENT TLV without a managementId");
		m->id = bytes_get_be16(t + 4);
		m->data_len = (uint16_t)(tlv_len - 2);
		return mgmt_decode_data(t + 6, m->data_len, OFF_TLV + 6, m);
	case MGMT_TLV_ERROR_STATUS:
		if (tlv_len < LEN_ERROR_STATUS)
			return bad(m, OFF_TLV + 2, "MANAGEMENT_ERROR_STATUS TLV shorter than 8 bytes");
		m->error.error_id = bytes_get_be16(t + 4);
		m->id = bytes_get_be16(t + 6);
		/* displayData is optional: present when the TLV is longer. */
		if (tlv_len > LEN_ERROR_STATUS &&
		    get_text(t + 4 + LEN_ERROR_STATUS, tlv_len - LEN_ERROR_STATUS,
			     m->error.text))
			return bad(m, OFF_TLV + 4 + LEN_ERROR_STATUS,
				   "displayData overruns the TLV");
		m->decoded = true;
		return 0;
	default:
		return 0;
	}
}

double mgmt_ti_ns(int64_t ti)
{
	return (double)ti / 65536.0;
}

const char *mgmt_port_state_name(uint8_t state)
{
	static const char *const names[] = {
		[MGMT_PS_INITIALIZING] = "INITIALIZING",
		[MGMT_PS_FAULTY] = "FAULTY",
		[MGMT_PS_DISABLED] = "DISABLED",
		[MGMT_PS_LISTENING] = "LISTENING",
		[MGMT_PS_PRE_MASTER] = "PRE_MASTER",
		[MGMT_PS_MASTER] = "MASTER",
		[MGMT_PS_PASSIVE] = "PASSIVE",
		[MGMT_PS_UNCALIBRATED] = "UNCALIBRATED",
		[MGMT_PS_SLAVE] = "SLAVE",
		[MGMT_PS_GRAND_MASTER] = "GRAND_MASTER",
	};

	if (state >= sizeof(names) / sizeof(names[0]) || !names[state])
		return "?";
	return names[state];
}

const char *mgmt_timestamping_name(uint8_t ts)
{
	static const char *const names[] = {
		[MGMT_TS_SOFTWARE] = "SOFTWARE",
		[MGMT_TS_HARDWARE] = "HARDWARE",
		[MGMT_TS_LEGACY_HW] = "LEGACY_HW",
		[MGMT_TS_ONESTEP] = "ONESTEP",
		[MGMT_TS_P2P1STEP] = "P2P1STEP",
	};

	return ts < sizeof(names) / sizeof(names[0]) ? names[ts] : "?";
}

const char *mgmt_action_name(uint8_t action)
{
	static const char *const names[] = {
		"GET", "SET", "RESPONSE", "COMMAND", "ACKNOWLEDGE",
	};

	return action < sizeof(names) / sizeof(names[0]) ? names[action] : "?";
}

const char *mgmt_id_name(uint16_t id)
{
	switch (id) {
	case MGMT_ID_CURRENT_DATA_SET:
		return "CURRENT_DATA_SET";
	case MGMT_ID_PARENT_DATA_SET:
		return "PARENT_DATA_SET";
	case MGMT_ID_TIME_PROPERTIES_DATA_SET:
		return "TIME_PROPERTIES_DATA_SET";
	case MGMT_ID_PORT_DATA_SET:
		return "PORT_DATA_SET";
	case MGMT_ID_TIME_STATUS_NP:
		return "TIME_STATUS_NP";
	case MGMT_ID_SUBSCRIBE_EVENTS_NP:
		return "SUBSCRIBE_EVENTS_NP";
	case MGMT_ID_PORT_PROPERTIES_NP:
		return "PORT_PROPERTIES_NP";
	case MGMT_ID_PORT_STATS_NP:
		return "PORT_STATS_NP";
	}
	return "?";
}

const char *mgmt_error_name(uint16_t error_id)
{
	switch (error_id) {
	case MGMT_ERR_RESPONSE_TOO_BIG:
		return "RESPONSE_TOO_BIG";
	case MGMT_ERR_NO_SUCH_ID:
		return "NO_SUCH_ID";
	case MGMT_ERR_WRONG_LENGTH:
		return "WRONG_LENGTH";
	case MGMT_ERR_WRONG_VALUE:
		return "WRONG_VALUE";
	case MGMT_ERR_NOT_SETABLE:
		return "NOT_SETABLE";
	case MGMT_ERR_NOT_SUPPORTED:
		return "NOT_SUPPORTED";
	case MGMT_ERR_GENERAL_ERROR:
		return "GENERAL_ERROR";
	}
	return "?";
}

char *mgmt_clock_id_str(const struct mgmt_clock_id *id,
			char buf[MGMT_CLOCK_ID_STRLEN])
{
	const uint8_t *c = id->id;

	snprintf(buf, MGMT_CLOCK_ID_STRLEN,
		 "%02x%02x%02x.%02x%02x.%02x%02x%02x",
		 c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]);
	return buf;
}

char *mgmt_port_id_str(const struct mgmt_port_id *id,
		       char buf[MGMT_PORT_ID_STRLEN])
{
	char clock[MGMT_CLOCK_ID_STRLEN];

	snprintf(buf, MGMT_PORT_ID_STRLEN, "%s-%u",
		 mgmt_clock_id_str(&id->clock, clock), id->port);
	return buf;
}
