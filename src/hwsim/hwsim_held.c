/* hwsim_held.c — see hwsim_held.h. */
#include "hwsim/hwsim_held.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

void hwsim_held_init(struct hwsim_held *h)
{
	h->n = 0;
	h->order = 0;
}

unsigned hwsim_held_count(const struct hwsim_held *h)
{
	return h->n;
}

int hwsim_held_put(struct hwsim_held *h, const struct hwsim_held_msg *m)
{
	if (h->n >= HWSIM_HELD_SLOTS)
		return -ENOSPC;
	h->m[h->n] = *m;
	h->m[h->n].order = h->order++;
	h->n++;
	return 0;
}

int64_t hwsim_held_next_due(const struct hwsim_held *h)
{
	int64_t due = INT64_MAX;

	for (unsigned i = 0; i < h->n; i++)
		if (h->m[i].due_ns < due)
			due = h->m[i].due_ns;
	return due;
}

/* Take slot i out; the last one fills its place (order is kept in each
 * message, not by position). */
static void hwsim_held_take(struct hwsim_held *h, unsigned i,
			    struct hwsim_held_msg *out)
{
	*out = h->m[i];
	h->n--;
	if (i != h->n)
		h->m[i] = h->m[h->n];
}

int hwsim_held_take_due(struct hwsim_held *h, int64_t now_ns,
			struct hwsim_held_msg *out)
{
	unsigned best = h->n;

	for (unsigned i = 0; i < h->n; i++) {
		const struct hwsim_held_msg *m = &h->m[i];

		if (m->due_ns > now_ns)
			continue;
		if (best == h->n || m->due_ns < h->m[best].due_ns ||
		    (m->due_ns == h->m[best].due_ns && m->order < h->m[best].order))
			best = i;
	}
	if (best == h->n)
		return 0;
	hwsim_held_take(h, best, out);
	return 1;
}

int hwsim_held_take_oldest(struct hwsim_held *h, struct hwsim_held_msg *out)
{
	unsigned best = 0;

	if (!h->n)
		return 0;
	for (unsigned i = 1; i < h->n; i++)
		if (h->m[i].order < h->m[best].order)
			best = i;
	hwsim_held_take(h, best, out);
	return 1;
}

/* The length of the whole control messages of buf[0..len) that fit in
 * cap bytes. */
static size_t hwsim_cmsg_fit(const unsigned char *buf, size_t len, size_t cap)
{
	size_t at = 0;

	while (at + sizeof(struct cmsghdr) <= len) {
		struct cmsghdr c;
		size_t space;

		memcpy(&c, buf + at, sizeof(c));
		if (c.cmsg_len < sizeof(struct cmsghdr))
			break;
		space = CMSG_ALIGN(c.cmsg_len);
		if (at + c.cmsg_len > len || at + c.cmsg_len > cap)
			break;
		at += space <= len - at ? space : len - at;
	}
	return at < cap ? at : cap;
}

void hwsim_held_from_msg(struct hwsim_held_msg *m, const struct msghdr *msg,
			 ssize_t n, int64_t due_ns)
{
	size_t left = n > 0 ? (size_t)n : 0, ctrl;

	memset(m, 0, offsetof(struct hwsim_held_msg, data));
	m->due_ns = due_ns;
	m->len = (uint32_t)left;
	m->flags = msg->msg_flags;
	for (size_t i = 0; i < (size_t)msg->msg_iovlen && left &&
	     m->datalen < HWSIM_HELD_DATA; i++) {
		size_t k = msg->msg_iov[i].iov_len;

		if (k > left)
			k = left;
		if (k > (size_t)(HWSIM_HELD_DATA - m->datalen))
			k = (size_t)(HWSIM_HELD_DATA - m->datalen);
		memcpy(m->data + m->datalen, msg->msg_iov[i].iov_base, k);
		m->datalen = (uint16_t)(m->datalen + k);
		left -= k;
	}
	if (m->datalen < m->len)
		m->flags |= MSG_TRUNC;
	ctrl = msg->msg_control ? msg->msg_controllen : 0;
	m->ctrllen = (uint16_t)hwsim_cmsg_fit(msg->msg_control, ctrl,
					      HWSIM_HELD_CTRL);
	memcpy(m->ctrl.b, msg->msg_control, m->ctrllen);
	if (m->ctrllen < ctrl && hwsim_cmsg_fit(msg->msg_control, ctrl, ctrl) > m->ctrllen)
		m->flags |= MSG_CTRUNC;
	if (msg->msg_name && msg->msg_namelen) {
		m->namelen = (uint8_t)(msg->msg_namelen < HWSIM_HELD_NAME ?
				       msg->msg_namelen : HWSIM_HELD_NAME);
		memcpy(m->name, msg->msg_name, m->namelen);
	}
}

ssize_t hwsim_held_to_msg(const struct hwsim_held_msg *m, struct msghdr *msg,
			  int flags)
{
	size_t done = 0, ctrl;

	(void)flags;
	msg->msg_flags = m->flags & ~(MSG_TRUNC | MSG_CTRUNC);
	for (size_t i = 0; i < (size_t)msg->msg_iovlen && done < m->datalen; i++) {
		size_t k = msg->msg_iov[i].iov_len;

		if (k > m->datalen - done)
			k = m->datalen - done;
		memcpy(msg->msg_iov[i].iov_base, m->data + done, k);
		done += k;
	}
	if (done < m->len)
		msg->msg_flags |= MSG_TRUNC;
	ctrl = msg->msg_control ? msg->msg_controllen : 0;
	ctrl = hwsim_cmsg_fit(m->ctrl.b, m->ctrllen, ctrl);
	if (ctrl)
		memcpy(msg->msg_control, m->ctrl.b, ctrl);
	if (ctrl < m->ctrllen || (m->flags & MSG_CTRUNC))
		msg->msg_flags |= MSG_CTRUNC;
	msg->msg_controllen = ctrl;
	if (msg->msg_name) {
		size_t k = m->namelen < msg->msg_namelen ? m->namelen : msg->msg_namelen;

		memcpy(msg->msg_name, m->name, k);
		msg->msg_namelen = m->namelen;
	}
	return (ssize_t)done;
}
