/* mgmt.h — IEEE 1588 management messages as linuxptp's ptp4l speaks them:
 * GET and SET SUBSCRIBE_EVENTS_NP encoded, responses and notifications
 * decoded into typed structs.
 *
 * tapless-syncd supervises ptp4l (linuxptp 3.1.1) through its UNIX
 * management socket (pmc.h). It reads ptp4l's state from the binary
 * messages themselves rather than from pmc's text output, whose layout is
 * no interface and changes between releases. Pure codec: no I/O, no
 * allocation, nothing printed.
 *
 * A management message (IEEE 1588-2008 §13.3, §15.4) is the 34-byte PTP
 * header, then
 *
 *   34  targetPortIdentity (10)   44  startingBoundaryHops
 *   45  boundaryHops              46  actionField (low 4 bits)
 *   47  reserved                  48  the TLV: type (2), length (2), ...
 *
 * with a MANAGEMENT TLV (type 1: managementId (2), then the data) or a
 * MANAGEMENT_ERROR_STATUS TLV (type 2). Everything is big-endian except
 * where linuxptp says otherwise: PORT_STATS_NP counters are little-endian
 * (linuxptp tlv.c converts them with __cpu_to_le64). TLV data is padded to
 * an even length (a PTPText of odd size gets one zero byte).
 *
 * Layouts follow IEEE 1588-2008 §15.5.3 for the standard data sets and
 * linuxptp's tlv.h, tlv.c, ds.h, ddt.h, msg.h and fsm.h for the rest, and
 * were checked against what ptp4l 3.1.1 sends (tests/unit/test_mgmt.c
 * holds three such messages).
 */
#ifndef TAPLESS_MGMT_H
#define TAPLESS_MGMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MGMT_HDR_LEN 48		/* PTP header and the management fields */
#define MGMT_GET_LEN 54		/* a GET: header, TLV header, id */
#define MGMT_SUBSCRIBE_LEN 120	/* SET SUBSCRIBE_EVENTS_NP */

enum mgmt_action {
	MGMT_GET = 0,
	MGMT_SET = 1,
	MGMT_RESPONSE = 2,
	MGMT_COMMAND = 3,
	MGMT_ACKNOWLEDGE = 4,
};

/* TLV types */
#define MGMT_TLV_MANAGEMENT 0x0001
#define MGMT_TLV_ERROR_STATUS 0x0002

/* Management IDs decoded here; others are passed through undecoded. */
#define MGMT_ID_CURRENT_DATA_SET 0x2001
#define MGMT_ID_PARENT_DATA_SET 0x2002
#define MGMT_ID_TIME_PROPERTIES_DATA_SET 0x2003
#define MGMT_ID_PORT_DATA_SET 0x2004
#define MGMT_ID_TIME_STATUS_NP 0xC000
#define MGMT_ID_SUBSCRIBE_EVENTS_NP 0xC003
#define MGMT_ID_PORT_PROPERTIES_NP 0xC004
#define MGMT_ID_PORT_STATS_NP 0xC005

/* managementErrorId values (IEEE 1588-2008 Table 72) */
#define MGMT_ERR_RESPONSE_TOO_BIG 0x0001
#define MGMT_ERR_NO_SUCH_ID 0x0002
#define MGMT_ERR_WRONG_LENGTH 0x0003
#define MGMT_ERR_WRONG_VALUE 0x0004
#define MGMT_ERR_NOT_SETABLE 0x0005
#define MGMT_ERR_NOT_SUPPORTED 0x0006
#define MGMT_ERR_GENERAL_ERROR 0xFFFE

/* SUBSCRIBE_EVENTS_NP events (linuxptp notification.h): bit n of the
 * events argument is bit n % 8 of byte n / 8 of the 64-byte mask on the
 * wire. ptp4l 3.1.1 knows these two. */
#define MGMT_NOTIFY_PORT_STATE 0
#define MGMT_NOTIFY_TIME_SYNC 1
#define MGMT_EVENT(n) (UINT64_C(1) << (n))
#define MGMT_EVENT_BYTES 64

/* linuxptp's enum port_state (fsm.h): portState values. */
enum mgmt_port_state {
	MGMT_PS_INITIALIZING = 1,
	MGMT_PS_FAULTY,
	MGMT_PS_DISABLED,
	MGMT_PS_LISTENING,
	MGMT_PS_PRE_MASTER,
	MGMT_PS_MASTER,
	MGMT_PS_PASSIVE,
	MGMT_PS_UNCALIBRATED,
	MGMT_PS_SLAVE,
	MGMT_PS_GRAND_MASTER,	/* linuxptp's extension, not in 1588 */
};

struct mgmt_clock_id {
	uint8_t id[8];
};

struct mgmt_port_id {
	struct mgmt_clock_id clock;
	uint16_t port;
};

/* What a request carries besides its TLV. target all 0xff bytes and port
 * 0xffff (mgmt_target_all()) addresses every port, as pmc does; with
 * boundary_hops 0 (pmc -b 0) ptp4l answers itself and forwards nothing
 * onto the network. */
struct mgmt_hdr {
	uint8_t domain;
	uint16_t seq;
	struct mgmt_port_id source;
	struct mgmt_port_id target;
	uint8_t boundary_hops;	/* both starting and remaining hops */
};

/* ScaledNs (1588 §5.3.2): a 96-bit count of 2^-16 ns, msb first. */
struct mgmt_scaled_ns {
	uint16_t ns_msb;
	uint64_t ns_lsb;
	uint16_t frac;
};

/* TIME_STATUS_NP. master_offset and ingress_time are plain nanoseconds
 * (linuxptp's tmv_to_nanoseconds), not TimeInterval. */
struct mgmt_time_status {
	int64_t master_offset_ns;
	int64_t ingress_time_ns;	/* local time of the last Sync */
	int32_t cumulative_scaled_rate_offset;	/* (rate ratio - 1) * 2^41 */
	int32_t scaled_last_gm_phase_change;
	uint16_t gm_time_base_indicator;
	struct mgmt_scaled_ns last_gm_phase_change;
	bool gm_present;	/* false while the clock is its own GM */
	struct mgmt_clock_id gm_identity;
};

/* TimeInterval fields are kept as sent: nanoseconds * 2^16 (mgmt_ti_ns). */
struct mgmt_current_ds {
	uint16_t steps_removed;
	int64_t offset_from_master;
	int64_t mean_path_delay;
};

/* TIME_PROPERTIES_DATA_SET (1588 §15.5.3.4.1): TAI - UTC and its flags. */
#define MGMT_TP_UTC_OFFSET_VALID 0x04
#define MGMT_TP_PTP_TIMESCALE 0x08
struct mgmt_time_props {
	int16_t current_utc_offset;	/* seconds */
	uint8_t flags;			/* MGMT_TP_*, leap59/61, traceable */
	uint8_t time_source;
};

struct mgmt_clock_quality {
	uint8_t clock_class;
	uint8_t clock_accuracy;
	uint16_t offset_scaled_log_variance;
};

struct mgmt_parent_ds {
	struct mgmt_port_id parent_port;
	uint8_t parent_stats;
	uint16_t observed_parent_offset_scaled_log_variance;
	int32_t observed_parent_clock_phase_change_rate;
	uint8_t gm_priority1;
	struct mgmt_clock_quality gm_clock_quality;
	uint8_t gm_priority2;
	struct mgmt_clock_id gm_identity;
};

struct mgmt_port_ds {
	struct mgmt_port_id port;
	uint8_t port_state;	/* enum mgmt_port_state */
	int8_t log_min_delay_req_interval;
	int64_t peer_mean_path_delay;	/* TimeInterval */
	int8_t log_announce_interval;
	uint8_t announce_receipt_timeout;
	int8_t log_sync_interval;
	uint8_t delay_mechanism;	/* 1 E2E, 2 P2P, 0xFE disabled */
	int8_t log_min_pdelay_req_interval;
	uint8_t version_number;	/* low 4 bits of the byte */
};

struct mgmt_subscribe {
	uint16_t duration_s;
	uint64_t events;	/* bits 0..63 of the mask, MGMT_EVENT(n) */
	uint8_t mask[MGMT_EVENT_BYTES];	/* the whole mask as sent */
};

/* linuxptp's enum timestamp_type, for port_properties.timestamping */
enum mgmt_timestamping {
	MGMT_TS_SOFTWARE,
	MGMT_TS_HARDWARE,
	MGMT_TS_LEGACY_HW,
	MGMT_TS_ONESTEP,
	MGMT_TS_P2P1STEP,
};

struct mgmt_port_properties {
	struct mgmt_port_id port;
	uint8_t port_state;
	uint8_t timestamping;	/* enum mgmt_timestamping */
	char interface[256];	/* the PTPText, NUL-terminated */
};

/* PORT_STATS_NP: messages received and sent by PTP messageType (0 Sync,
 * 1 Delay_Req, ... 0xB Announce, 0xC Signaling, 0xD Management). */
struct mgmt_port_stats {
	struct mgmt_port_id port;
	uint64_t rx[16];
	uint64_t tx[16];
};

struct mgmt_error_status {
	uint16_t error_id;	/* MGMT_ERR_* */
	char text[256];		/* displayData, "" when absent */
};

struct mgmt_msg {
	uint8_t transport_specific;
	uint8_t version;	/* versionPTP (low 4 bits) */
	uint16_t length;	/* messageLength */
	uint8_t domain;
	uint8_t flags[2];
	int64_t correction;
	struct mgmt_port_id source;
	uint16_t seq;
	struct mgmt_port_id target;
	uint8_t starting_boundary_hops;
	uint8_t boundary_hops;
	uint8_t action;		/* enum mgmt_action */
	uint16_t tlv_type;	/* MGMT_TLV_*, or another type left alone */
	uint16_t id;		/* managementId (of both TLV types) */
	uint16_t data_len;	/* MANAGEMENT TLV: bytes after the id */
	bool decoded;		/* the union below holds id's data */
	union {
		struct mgmt_time_status time_status;
		struct mgmt_current_ds current_ds;
		struct mgmt_parent_ds parent_ds;
		struct mgmt_time_props time_props;
		struct mgmt_port_ds port_ds;
		struct mgmt_subscribe subscribe;
		struct mgmt_port_properties port_properties;
		struct mgmt_port_stats port_stats;
		struct mgmt_error_status error;	/* tlv_type ERROR_STATUS */
	};
	/* Set when mgmt_decode() returns -EBADMSG. */
	size_t err_offset;	/* the byte at fault (len when it ran out) */
	const char *why;	/* static text */
};

/* The wildcard target: every clock, every port. */
void mgmt_target_all(struct mgmt_port_id *target);

/* A GET of id with an empty data field (what pmc -z sends; ptp4l answers
 * it). Returns the length (MGMT_GET_LEN) or -ENOSPC. */
int mgmt_encode_get(uint8_t *buf, size_t len, const struct mgmt_hdr *h,
		    uint16_t id);

/* SET SUBSCRIBE_EVENTS_NP: events (MGMT_EVENT(n) bits) for duration_s
 * seconds; events 0 cancels. Returns MGMT_SUBSCRIBE_LEN or -ENOSPC. */
int mgmt_encode_subscribe(uint8_t *buf, size_t len, const struct mgmt_hdr *h,
			  uint16_t duration_s, uint64_t events);

/* Decode a management message from buf[0..len). Reads nothing at or past
 * len and trusts no length field: messageLength must fit in len (bytes
 * after it are ignored) and the first TLV in messageLength.
 *
 * Returns 0 with out filled: the header, action, the first TLV's type and,
 * for MANAGEMENT, id and data_len. For the IDs above with data, decoded is
 * true and the union holds it (data longer than the layout is accepted and
 * the rest ignored, as later linuxptp may append). decoded is false for an
 * empty data field (a GET) and for any other ID, whose data is left alone.
 * A MANAGEMENT_ERROR_STATUS TLV gives id and out->error (decoded true).
 * Another TLV type gives tlv_type and nothing more.
 *
 * Returns -EBADMSG when buf is not a well-formed management message:
 * out->err_offset is the byte at fault and out->why a short static text
 * (messageLength beyond the datagram, not a management message, TLV
 * overruns the message, data shorter than the layout, ...). */
int mgmt_decode(const uint8_t *buf, size_t len, struct mgmt_msg *out);

/* A TimeInterval (ns * 2^16) in nanoseconds. */
double mgmt_ti_ns(int64_t ti);

/* Names as linuxptp prints them; "?" for a value it does not know. */
const char *mgmt_port_state_name(uint8_t state);	/* "SLAVE" */
const char *mgmt_timestamping_name(uint8_t ts);		/* "SOFTWARE" */
const char *mgmt_action_name(uint8_t action);		/* "RESPONSE" */
const char *mgmt_id_name(uint16_t id);			/* "TIME_STATUS_NP" */
const char *mgmt_error_name(uint16_t error_id);		/* "NO_SUCH_ID" */

/* linuxptp's clock identity "c20a30.fffe.1f7e17" and port identity
 * "c20a30.fffe.1f7e17-1" (port number in decimal). Return buf. */
#define MGMT_CLOCK_ID_STRLEN 19
#define MGMT_PORT_ID_STRLEN 25
char *mgmt_clock_id_str(const struct mgmt_clock_id *id,
			char buf[MGMT_CLOCK_ID_STRLEN]);
char *mgmt_port_id_str(const struct mgmt_port_id *id,
		       char buf[MGMT_PORT_ID_STRLEN]);

#endif
