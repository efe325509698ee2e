/*
 * standin.c - stand-in for the Wristlink firmware's BlueZ-less Linux backend.
 *
 * Proves the kernel plumbing an ANCS Notification Consumer needs on Linux 6.1
 * without bluetoothd, and documents it (every mgmt command and event is
 * printed with its bytes):
 *
 *   mgmt control socket (HCI_CHANNEL_CONTROL):
 *     Read Version, Read Index List (or wait for Index Added), Read Info,
 *     [Set Powered 0], Set LE 1, [Set BR/EDR 0], Set Secure Connections 1,
 *     Set Bondable 1, Set IO Capability, Set Local Name,
 *     [Load Long Term Keys, Load IRKs from --keys], Set Powered 1,
 *     Add Advertising (flags + ANCS in AD 0x15; name in scan response).
 *     Events: User Confirmation Request -> User Confirmation Reply,
 *     New Long Term Key / New IRK -> saved to --keys.
 *   L2CAP LE socket bound to CID 4 (ATT), listen, accept; then as a GATT
 *   client: Exchange MTU, Find By Type Value (ANCS, GATT service), Read By
 *   Type (characteristics), Find Information (CCCDs), Write CCCD of Data
 *   Source, Notification Source, Service Changed; on ATT error 0x05/0x0F
 *   setsockopt(SOL_BLUETOOTH, BT_SECURITY, MEDIUM), wait for the socket to
 *   become writable again (pairing/encryption done), retry.
 *   Prints Notification Source PDUs; optionally fetches attributes through
 *   the Control Point, performs an action, and reacts to Service Changed.
 *
 * Keep it simple: this is a test tool, not the firmware.
 * Build: gcc -O1 -Wall -o standin standin.c -lbluetooth
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/l2cap.h>

/* ------------------------------------------------------------------------ */
/* Management API (BlueZ doc/mgmt-api.txt; kernel include/net/bluetooth/mgmt.h).
 * Debian's libbluetooth-dev does not ship these. All fields little-endian.   */

#define MGMT_INDEX_NONE 0xFFFF

struct mgmt_hdr {
	uint16_t opcode;
	uint16_t index;
	uint16_t len;
} __attribute__((packed));

struct mgmt_addr_info {
	bdaddr_t bdaddr;
	uint8_t type; /* 0 BR/EDR, 1 LE public, 2 LE random */
} __attribute__((packed));

#define MGMT_OP_READ_VERSION        0x0001
#define MGMT_OP_READ_INDEX_LIST     0x0003
#define MGMT_OP_READ_INFO           0x0004
#define MGMT_OP_SET_POWERED         0x0005
#define MGMT_OP_SET_CONNECTABLE     0x0007
#define MGMT_OP_SET_BONDABLE        0x0009
#define MGMT_OP_SET_LE              0x000D
#define MGMT_OP_SET_LOCAL_NAME      0x000F
#define MGMT_OP_LOAD_LONG_TERM_KEYS 0x0013
#define MGMT_OP_SET_IO_CAPABILITY   0x0018
#define MGMT_OP_USER_CONFIRM_REPLY  0x001C
#define MGMT_OP_SET_BREDR           0x002A
#define MGMT_OP_SET_SECURE_CONN     0x002D
#define MGMT_OP_LOAD_IRKS           0x0030
#define MGMT_OP_ADD_ADVERTISING     0x003E

#define MGMT_EV_CMD_COMPLETE        0x0001
#define MGMT_EV_CMD_STATUS          0x0002
#define MGMT_EV_CONTROLLER_ERROR    0x0003
#define MGMT_EV_INDEX_ADDED         0x0004
#define MGMT_EV_INDEX_REMOVED       0x0005
#define MGMT_EV_NEW_SETTINGS        0x0006
#define MGMT_EV_NEW_LONG_TERM_KEY   0x000A
#define MGMT_EV_DEVICE_CONNECTED    0x000B
#define MGMT_EV_DEVICE_DISCONNECTED 0x000C
#define MGMT_EV_USER_CONFIRM_REQUEST 0x000F
#define MGMT_EV_AUTH_FAILED         0x0011
#define MGMT_EV_NEW_IRK             0x0018
#define MGMT_EV_NEW_CSRK            0x0019
#define MGMT_EV_NEW_CONN_PARAM      0x001C
#define MGMT_EV_ADVERTISING_ADDED   0x0023
#define MGMT_EV_ADVERTISING_REMOVED 0x0024

#define MGMT_SETTING_POWERED     (1u << 0)
#define MGMT_SETTING_CONNECTABLE (1u << 1)
#define MGMT_SETTING_BONDABLE    (1u << 4)
#define MGMT_SETTING_BREDR       (1u << 7)
#define MGMT_SETTING_LE          (1u << 9)
#define MGMT_SETTING_ADVERTISING (1u << 10)
#define MGMT_SETTING_SECURE_CONN (1u << 11)

#define MGMT_ADV_FLAG_CONNECTABLE (1u << 0)

struct mgmt_ltk_info {
	struct mgmt_addr_info addr;
	uint8_t type;      /* 0 unauth legacy, 1 auth legacy, 2 unauth P-256, 3 auth P-256, 4 debug */
	uint8_t initiator; /* legacy: 1 = key used when we are central */
	uint8_t enc_size;
	uint16_t ediv;
	uint64_t rand;
	uint8_t val[16];
} __attribute__((packed));

struct mgmt_irk_info {
	struct mgmt_addr_info addr;
	uint8_t val[16];
} __attribute__((packed));

struct mgmt_ev_new_long_term_key {
	uint8_t store_hint;
	struct mgmt_ltk_info key;
} __attribute__((packed));

struct mgmt_ev_new_irk {
	uint8_t store_hint;
	bdaddr_t rpa;
	struct mgmt_irk_info irk;
} __attribute__((packed));

struct mgmt_ev_user_confirm_request {
	struct mgmt_addr_info addr;
	uint8_t confirm_hint; /* 1: Just Works, may auto-accept */
	uint32_t value;
} __attribute__((packed));

struct mgmt_cp_add_advertising {
	uint8_t instance;
	uint32_t flags;
	uint16_t duration;
	uint16_t timeout;
	uint8_t adv_data_len;
	uint8_t scan_rsp_len;
	uint8_t data[];
} __attribute__((packed));

_Static_assert(sizeof(struct mgmt_hdr) == 6, "mgmt_hdr");
_Static_assert(sizeof(struct mgmt_ltk_info) == 36, "ltk_info");
_Static_assert(sizeof(struct mgmt_irk_info) == 23, "irk_info");
_Static_assert(sizeof(struct mgmt_ev_user_confirm_request) == 12, "ucr");
_Static_assert(sizeof(struct mgmt_cp_add_advertising) == 11, "add_adv");

/* ------------------------------------------------------------------------ */
/* ATT / ANCS */
#define ATT_CID 4
#define ATT_ERROR_RSP 0x01
#define ATT_MTU_REQ 0x02
#define ATT_MTU_RSP 0x03
#define ATT_FIND_INFO_REQ 0x04
#define ATT_FIND_INFO_RSP 0x05
#define ATT_FIND_BY_TYPE_REQ 0x06
#define ATT_FIND_BY_TYPE_RSP 0x07
#define ATT_READ_BY_TYPE_REQ 0x08
#define ATT_READ_BY_TYPE_RSP 0x09
#define ATT_WRITE_REQ 0x12
#define ATT_WRITE_RSP 0x13
#define ATT_NOTIFY 0x1B
#define ATT_INDICATE 0x1D
#define ATT_CONFIRM 0x1E
#define ATT_ERR_INSUFF_AUTHEN 0x05
#define ATT_ERR_REQ_NOT_SUPP 0x06
#define ATT_ERR_ATTR_NOT_FOUND 0x0A
#define ATT_ERR_INSUFF_ENC 0x0F

static const uint8_t ANCS_SVC[16] = {0xD0,0x00,0x2D,0x12,0x1E,0x4B,0x0F,0xA4,0x99,0x4E,0xCE,0xB5,0x31,0xF4,0x05,0x79};
static const uint8_t ANCS_NS[16]  = {0xBD,0x1D,0xA2,0x99,0xE6,0x25,0x58,0x8C,0xD9,0x42,0x01,0x63,0x0D,0x12,0xBF,0x9F};
static const uint8_t ANCS_CP[16]  = {0xD9,0xD9,0xAA,0xFD,0xBD,0x9B,0x21,0x98,0xA8,0x49,0xE1,0x45,0xF3,0xD8,0xD1,0x69};
static const uint8_t ANCS_DS[16]  = {0xFB,0x7B,0x7C,0xCE,0x6A,0xB3,0x44,0xBE,0xB5,0x4B,0xD6,0x24,0xE9,0xC6,0xEA,0x22};

/* ------------------------------------------------------------------------ */
static struct {
	int index;
	const char *name;
	int io_cap;
	int timeout_s;
	const char *keys_path;
	const char *summary_path;
	bool fetch;         /* Get Notification/App Attributes on new notifications */
	int action;         /* -1 none, 0 positive, 1 negative */
	bool bogus_action;  /* Perform Notification Action on an unknown UID (expect 0xA2) */
	bool probe_resecure; /* setsockopt(BT_SECURITY) again on an encrypted link: log result */
	int mtu;
} opt = {.index = -1, .name = "Wristlink", .io_cap = 3, .timeout_s = 170,
	 .action = -1, .mtu = 247};

static int mgmt_fd = -1, listen_fd = -1, att_fd = -1;
static volatile sig_atomic_t stop_flag;
static struct timespec t0;

/* command completion slot */
static struct { bool done; uint16_t op; uint8_t status; uint8_t data[1024]; size_t len; } cmd_res;
/* ATT response slot */
static struct { bool done; uint8_t pdu[1024]; size_t len; } att_res;

/* results */
static struct {
	int sessions, ns_count, ds_bytes, sc_indications, pairing_confirms, new_ltks, security_raises;
	int cp_ok, cp_errors, mgmt_errors;
	int sec_level;
	char ns_log[4096];
	char cp_log[2048];
	bool subscribed;
} res;

/* per-session state */
static struct {
	uint16_t mtu;
	uint16_t ancs_start, ancs_end, ns_h, ns_cccd, cp_h, ds_h, ds_cccd;
	uint16_t gatt_start, gatt_end, sc_h, sc_cccd;
	bool ancs_found, need_rediscover, fetch_done, disconnected;
	uint32_t pending_uid; bool have_pending;
	uint8_t ds_buf[2048]; size_t ds_len;
	bdaddr_t peer; uint8_t peer_type;
} s;

static double now_s(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
	va_list ap;
	printf("[%7.3f] ", now_s());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}
#define LOG(...) logf_(__VA_ARGS__)

static char *hex(const void *p, size_t n) {
	static char buf[4][2200];
	static int slot;
	char *b = buf[slot++ & 3];
	const uint8_t *u = p;
	size_t i, o = 0;
	for (i = 0; i < n && o + 3 < sizeof buf[0]; i++)
		o += sprintf(b + o, "%02x", u[i]);
	b[o] = 0;
	return b;
}

static char *addrstr(const bdaddr_t *a) {
	static char buf[2][18];
	static int slot;
	char *b = buf[slot++ & 1];
	ba2str(a, b);
	return b;
}

static const char *mgmt_op_name(uint16_t op) {
	switch (op) {
	case MGMT_OP_READ_VERSION: return "Read Management Version";
	case MGMT_OP_READ_INDEX_LIST: return "Read Controller Index List";
	case MGMT_OP_READ_INFO: return "Read Controller Information";
	case MGMT_OP_SET_POWERED: return "Set Powered";
	case MGMT_OP_SET_CONNECTABLE: return "Set Connectable";
	case MGMT_OP_SET_BONDABLE: return "Set Bondable";
	case MGMT_OP_SET_LE: return "Set Low Energy";
	case MGMT_OP_SET_LOCAL_NAME: return "Set Local Name";
	case MGMT_OP_LOAD_LONG_TERM_KEYS: return "Load Long Term Keys";
	case MGMT_OP_SET_IO_CAPABILITY: return "Set IO Capability";
	case MGMT_OP_USER_CONFIRM_REPLY: return "User Confirmation Reply";
	case MGMT_OP_SET_BREDR: return "Set BR/EDR";
	case MGMT_OP_SET_SECURE_CONN: return "Set Secure Connections";
	case MGMT_OP_LOAD_IRKS: return "Load Identity Resolving Keys";
	case MGMT_OP_ADD_ADVERTISING: return "Add Advertising";
	default: return "?";
	}
}

static const char *mgmt_ev_name(uint16_t ev) {
	switch (ev) {
	case MGMT_EV_CMD_COMPLETE: return "Command Complete";
	case MGMT_EV_CMD_STATUS: return "Command Status";
	case MGMT_EV_CONTROLLER_ERROR: return "Controller Error";
	case MGMT_EV_INDEX_ADDED: return "Index Added";
	case MGMT_EV_INDEX_REMOVED: return "Index Removed";
	case MGMT_EV_NEW_SETTINGS: return "New Settings";
	case MGMT_EV_NEW_LONG_TERM_KEY: return "New Long Term Key";
	case MGMT_EV_DEVICE_CONNECTED: return "Device Connected";
	case MGMT_EV_DEVICE_DISCONNECTED: return "Device Disconnected";
	case MGMT_EV_USER_CONFIRM_REQUEST: return "User Confirmation Request";
	case MGMT_EV_AUTH_FAILED: return "Authentication Failed";
	case MGMT_EV_NEW_IRK: return "New Identity Resolving Key";
	case MGMT_EV_NEW_CSRK: return "New Signature Resolving Key";
	case MGMT_EV_NEW_CONN_PARAM: return "New Connection Parameter";
	case MGMT_EV_ADVERTISING_ADDED: return "Advertising Added";
	case MGMT_EV_ADVERTISING_REMOVED: return "Advertising Removed";
	default: return "?";
	}
}

static void settings_str(uint32_t st, char *out, size_t n) {
	static const char *names[] = {"powered", "connectable", "fast-connectable", "discoverable",
		"bondable", "link-security", "ssp", "br/edr", "hs", "le", "advertising",
		"secure-conn", "debug-keys", "privacy", "configuration", "static-addr",
		"phy-config", "wbs", "cis-central", "cis-peripheral"};
	size_t o = 0;
	out[0] = 0;
	for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
		if (st & (1u << i))
			o += snprintf(out + o, o < n ? n - o : 0, "%s%s", o ? "," : "", names[i]);
}

/* ------------------------------------------------------------------------ */
/* keys file: one key per line
 *   ltk <addr> <addr_type> <type> <initiator> <enc_size> <ediv> <rand16hex> <val32hex>
 *   irk <addr> <addr_type> <val32hex>                                          */
static void keys_append(const char *line) {
	if (!opt.keys_path)
		return;
	FILE *f = fopen(opt.keys_path, "a");
	if (!f) {
		LOG("keys: cannot open %s: %s", opt.keys_path, strerror(errno));
		return;
	}
	fprintf(f, "%s\n", line);
	fclose(f);
}

static bool unhex(const char *h, uint8_t *out, size_t n) {
	if (strlen(h) != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return false;
		out[i] = v;
	}
	return true;
}

/* ------------------------------------------------------------------------ */
static void handle_mgmt_event(const uint8_t *buf, size_t n);

static int mgmt_send(uint16_t op, uint16_t idx, const void *param, uint16_t len) {
	uint8_t buf[1024];
	struct mgmt_hdr h = {htobs(op), htobs(idx), htobs(len)};
	memcpy(buf, &h, sizeof h);
	if (len)
		memcpy(buf + sizeof h, param, len);
	LOG("mgmt> 0x%04x %-28s index=%u len=%u params=%s  (wire: %s)", op, mgmt_op_name(op),
	    idx, len, hex(param, len), hex(buf, sizeof h + len));
	if (write(mgmt_fd, buf, sizeof h + len) < 0) {
		LOG("mgmt write: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void read_mgmt(void) {
	uint8_t buf[2048];
	ssize_t n = read(mgmt_fd, buf, sizeof buf);
	if (n < (ssize_t)sizeof(struct mgmt_hdr)) {
		if (n < 0 && errno != EAGAIN)
			LOG("mgmt read: %s", strerror(errno));
		return;
	}
	handle_mgmt_event(buf, n);
}

/* ------------------------------------------------------------------------ */
static void handle_att_pdu(const uint8_t *p, size_t n);
static void att_closed(const char *why);

static void accept_att(void) {
	struct sockaddr_l2 peer;
	socklen_t plen = sizeof peer;
	int fd = accept4(listen_fd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
	if (fd < 0) {
		LOG("accept: %s", strerror(errno));
		return;
	}
	if (att_fd >= 0) {
		LOG("accept: second ATT bearer from %s refused", addrstr(&peer.l2_bdaddr));
		close(fd);
		return;
	}
	att_fd = fd;
	memset(&s, 0, sizeof s);
	s.mtu = 23;
	bacpy(&s.peer, &peer.l2_bdaddr);
	s.peer_type = peer.l2_bdaddr_type;
	struct bt_security sec = {0};
	socklen_t sl = sizeof sec;
	getsockopt(fd, SOL_BLUETOOTH, BT_SECURITY, &sec, &sl);
	res.sessions++;
	LOG("att: accepted ATT bearer from %s (type %u), security level %u", addrstr(&peer.l2_bdaddr),
	    peer.l2_bdaddr_type, sec.level);
}

static void read_att(void) {
	uint8_t buf[1024];
	ssize_t n = read(att_fd, buf, sizeof buf);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		att_closed(strerror(errno));
		return;
	}
	if (n == 0) {
		att_closed("EOF");
		return;
	}
	handle_att_pdu(buf, n);
}

/* One poll iteration over mgmt, listening and ATT sockets.
 * want_out: also report when the ATT socket becomes writable (returns 1). */
static int pump(int timeout_ms, bool want_out) {
	struct pollfd p[3];
	int n = 0, im = -1, il = -1, ia = -1;
	p[n] = (struct pollfd){mgmt_fd, POLLIN, 0}; im = n++;
	if (listen_fd >= 0) { p[n] = (struct pollfd){listen_fd, POLLIN, 0}; il = n++; }
	if (att_fd >= 0) { p[n] = (struct pollfd){att_fd, POLLIN | (want_out ? POLLOUT : 0), 0}; ia = n++; }
	int r = poll(p, n, timeout_ms);
	if (r < 0) {
		if (errno != EINTR)
			LOG("poll: %s", strerror(errno));
		return 0;
	}
	int out = 0;
	if (p[im].revents & POLLIN)
		read_mgmt();
	if (il >= 0 && (p[il].revents & POLLIN))
		accept_att();
	if (ia >= 0 && att_fd >= 0 && p[ia].fd == att_fd) {
		if (p[ia].revents & (POLLIN | POLLERR | POLLHUP))
			read_att();
		if (att_fd >= 0 && want_out && (p[ia].revents & POLLOUT))
			out = 1;
	}
	return out;
}

static bool expired(double deadline) { return stop_flag || now_s() > deadline; }

/* Send a mgmt command and wait for its Command Complete / Command Status. */
static int mgmt_cmd(uint16_t op, uint16_t idx, const void *param, uint16_t len) {
	cmd_res.done = false;
	if (mgmt_send(op, idx, param, len) < 0)
		return -1;
	double deadline = now_s() + 5;
	while (!(cmd_res.done && cmd_res.op == op)) {
		if (expired(deadline)) {
			LOG("mgmt: timeout waiting for 0x%04x", op);
			return -1;
		}
		pump(100, false);
	}
	if (cmd_res.status)
		res.mgmt_errors++;
	return cmd_res.status;
}

static int mgmt_cmd_u8(uint16_t op, uint8_t v) {
	return mgmt_cmd(op, opt.index, &v, 1);
}

/* ------------------------------------------------------------------------ */
static void user_confirm_reply(const struct mgmt_addr_info *a) {
	/* Kernel 6.1 asks to confirm even Just Works (confirm_hint=1): without
	 * bluetoothd nobody else answers and SMP times out after 30 s. Reply is
	 * sent without waiting; its Command Complete is consumed by pump(). */
	mgmt_send(MGMT_OP_USER_CONFIRM_REPLY, opt.index, a, sizeof *a);
}

static void handle_mgmt_event(const uint8_t *buf, size_t n) {
	struct mgmt_hdr h;
	memcpy(&h, buf, sizeof h);
	uint16_t ev = btohs(h.opcode), idx = btohs(h.index), len = btohs(h.len);
	const uint8_t *p = buf + sizeof h;
	if (len > n - sizeof h)
		len = n - sizeof h;
	LOG("mgmt< 0x%04x %-28s index=%u len=%u params=%s", ev, mgmt_ev_name(ev), idx, len,
	    hex(p, len));
	char st[256];
	switch (ev) {
	case MGMT_EV_CMD_COMPLETE:
	case MGMT_EV_CMD_STATUS: {
		uint16_t op = p[0] | p[1] << 8;
		cmd_res.op = op;
		cmd_res.status = p[2];
		cmd_res.len = len > 3 ? len - 3 : 0;
		if (cmd_res.len > sizeof cmd_res.data)
			cmd_res.len = sizeof cmd_res.data;
		memcpy(cmd_res.data, p + 3, cmd_res.len);
		cmd_res.done = true;
		LOG("      -> %s for 0x%04x %s: status 0x%02x", ev == 1 ? "complete" : "status",
		    op, mgmt_op_name(op), p[2]);
		break;
	}
	case MGMT_EV_NEW_SETTINGS: {
		uint32_t v = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
		settings_str(v, st, sizeof st);
		LOG("      -> settings 0x%08x: %s", v, st);
		break;
	}
	case MGMT_EV_DEVICE_CONNECTED: {
		const struct mgmt_addr_info *a = (const void *)p;
		LOG("      -> connected %s type %u", addrstr(&a->bdaddr), a->type);
		break;
	}
	case MGMT_EV_DEVICE_DISCONNECTED: {
		const struct mgmt_addr_info *a = (const void *)p;
		LOG("      -> disconnected %s reason %u", addrstr(&a->bdaddr), p[7]);
		break;
	}
	case MGMT_EV_USER_CONFIRM_REQUEST: {
		struct mgmt_ev_user_confirm_request e;
		memcpy(&e, p, sizeof e);
		LOG("      -> confirm request from %s type %u hint %u value %06u: replying",
		    addrstr(&e.addr.bdaddr), e.addr.type, e.confirm_hint, btohl(e.value));
		res.pairing_confirms++;
		user_confirm_reply(&e.addr);
		break;
	}
	case MGMT_EV_NEW_LONG_TERM_KEY: {
		struct mgmt_ev_new_long_term_key e;
		memcpy(&e, p, sizeof e);
		char line[256];
		snprintf(line, sizeof line, "ltk %s %u %u %u %u %u %016llx %s",
			 addrstr(&e.key.addr.bdaddr), e.key.addr.type, e.key.type, e.key.initiator,
			 e.key.enc_size, btohs(e.key.ediv), (unsigned long long)le64toh(e.key.rand),
			 hex(e.key.val, 16));
		LOG("      -> new LTK (store_hint %u): %s", e.store_hint, line);
		res.new_ltks++;
		if (e.store_hint)
			keys_append(line);
		break;
	}
	case MGMT_EV_NEW_IRK: {
		struct mgmt_ev_new_irk e;
		memcpy(&e, p, sizeof e);
		char line[160];
		snprintf(line, sizeof line, "irk %s %u %s", addrstr(&e.irk.addr.bdaddr),
			 e.irk.addr.type, hex(e.irk.val, 16));
		LOG("      -> new IRK (store_hint %u, rpa %s): %s", e.store_hint,
		    addrstr(&e.rpa), line);
		if (e.store_hint)
			keys_append(line);
		break;
	}
	case MGMT_EV_AUTH_FAILED:
		LOG("      -> authentication failed, status 0x%02x", p[7]);
		break;
	case MGMT_EV_INDEX_ADDED:
		if (opt.index < 0)
			opt.index = idx;
		break;
	case MGMT_EV_INDEX_REMOVED:
		if (idx == opt.index) {
			LOG("      -> our controller went away");
			stop_flag = 1;
		}
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------------------ */
static void load_keys(void) {
	if (!opt.keys_path)
		return;
	FILE *f = fopen(opt.keys_path, "r");
	if (!f) {
		LOG("keys: %s not found, starting unbonded", opt.keys_path);
		return;
	}
	uint8_t ltkbuf[2 + 8 * sizeof(struct mgmt_ltk_info)] = {0};
	uint8_t irkbuf[2 + 8 * sizeof(struct mgmt_irk_info)] = {0};
	int nltk = 0, nirk = 0;
	char line[300];
	while (fgets(line, sizeof line, f)) {
		char kind[8], addr[18], h1[40], h2[40];
		unsigned at, type, init, es, ediv;
		if (sscanf(line, "ltk %17s %u %u %u %u %u %39s %39s", addr, &at, &type, &init, &es,
			   &ediv, h1, h2) == 8 && nltk < 8) {
			struct mgmt_ltk_info k = {0};
			uint8_t r[8];
			str2ba(addr, &k.addr.bdaddr);
			k.addr.type = at;
			k.type = type;
			k.initiator = init;
			k.enc_size = es;
			k.ediv = htobs(ediv);
			unsigned long long rv = strtoull(h1, NULL, 16);
			(void)r;
			k.rand = htole64(rv);
			if (!unhex(h2, k.val, 16))
				continue;
			memcpy(ltkbuf + 2 + nltk++ * sizeof k, &k, sizeof k);
		} else if (sscanf(line, "%7s %17s %u %39s", kind, addr, &at, h1) == 4 &&
			   !strcmp(kind, "irk") && nirk < 8) {
			struct mgmt_irk_info k = {0};
			str2ba(addr, &k.addr.bdaddr);
			k.addr.type = at;
			if (!unhex(h1, k.val, 16))
				continue;
			memcpy(irkbuf + 2 + nirk++ * sizeof k, &k, sizeof k);
		}
	}
	fclose(f);
	LOG("keys: loading %d LTK(s) and %d IRK(s) from %s", nltk, nirk, opt.keys_path);
	if (nirk) {
		irkbuf[0] = nirk;
		mgmt_cmd(MGMT_OP_LOAD_IRKS, opt.index, irkbuf, 2 + nirk * sizeof(struct mgmt_irk_info));
	}
	if (nltk) {
		ltkbuf[0] = nltk;
		mgmt_cmd(MGMT_OP_LOAD_LONG_TERM_KEYS, opt.index, ltkbuf,
			 2 + nltk * sizeof(struct mgmt_ltk_info));
	}
}

static int setup_controller(void) {
	uint8_t b[512];
	/* 1. version + index list */
	if (mgmt_cmd(MGMT_OP_READ_VERSION, MGMT_INDEX_NONE, NULL, 0))
		return -1;
	LOG("mgmt version %u.%u", cmd_res.data[0], cmd_res.data[1] | cmd_res.data[2] << 8);
	double deadline = now_s() + 30;
	while (opt.index < 0) {
		if (mgmt_cmd(MGMT_OP_READ_INDEX_LIST, MGMT_INDEX_NONE, NULL, 0))
			return -1;
		if ((cmd_res.data[0] | cmd_res.data[1] << 8) > 0) {
			opt.index = cmd_res.data[2] | cmd_res.data[3] << 8;
			break;
		}
		LOG("no controller yet, waiting for Index Added");
		while (opt.index < 0 && !expired(deadline))
			pump(500, false);
		if (expired(deadline))
			return -1;
	}
	/* 2. controller info */
	if (mgmt_cmd(MGMT_OP_READ_INFO, opt.index, NULL, 0))
		return -1;
	bdaddr_t ba;
	memcpy(&ba, cmd_res.data, 6);
	uint32_t supported, current;
	memcpy(&supported, cmd_res.data + 9, 4);
	memcpy(&current, cmd_res.data + 13, 4);
	char s1[256], s2[256];
	settings_str(le32toh(supported), s1, sizeof s1);
	settings_str(le32toh(current), s2, sizeof s2);
	LOG("hci%d address %s version %u manufacturer %u", opt.index, addrstr(&ba), cmd_res.data[6],
	    cmd_res.data[7] | cmd_res.data[8] << 8);
	LOG("  supported: %s", s1);
	LOG("  current:   %s", s2);
	supported = le32toh(supported);
	current = le32toh(current);

	/* 3. configure while powered off */
	if (current & MGMT_SETTING_POWERED)
		mgmt_cmd_u8(MGMT_OP_SET_POWERED, 0);
	if (mgmt_cmd_u8(MGMT_OP_SET_LE, 1))
		return -1;
	if ((supported & MGMT_SETTING_BREDR) && (current & MGMT_SETTING_BREDR))
		mgmt_cmd_u8(MGMT_OP_SET_BREDR, 0);
	if (mgmt_cmd_u8(MGMT_OP_SET_SECURE_CONN, 1))
		return -1;
	if (mgmt_cmd_u8(MGMT_OP_SET_BONDABLE, 1))
		return -1;
	if (mgmt_cmd_u8(MGMT_OP_SET_IO_CAPABILITY, opt.io_cap))
		return -1;
	memset(b, 0, 260);
	snprintf((char *)b, 249, "%s", opt.name);
	snprintf((char *)b + 249, 11, "%.10s", opt.name);
	mgmt_cmd(MGMT_OP_SET_LOCAL_NAME, opt.index, b, 260);
	load_keys();
	if (mgmt_cmd_u8(MGMT_OP_SET_POWERED, 1))
		return -1;

	/* 4. advertising: flags + ANCS solicitation in AD, name in scan response */
	struct mgmt_cp_add_advertising *cp = (void *)b;
	uint8_t *d = cp->data;
	size_t ad = 0, sr = 0;
	d[ad++] = 2; d[ad++] = 0x01; d[ad++] = 0x06;            /* LE General Disc., no BR/EDR */
	d[ad++] = 17; d[ad++] = 0x15;                            /* 128-bit Service Solicitation */
	memcpy(d + ad, ANCS_SVC, 16); ad += 16;
	size_t nl = strlen(opt.name) > 29 ? 29 : strlen(opt.name);
	d[ad + sr++] = nl + 1; d[ad + sr++] = 0x09;              /* Complete Local Name */
	memcpy(d + ad + sr, opt.name, nl); sr += nl;
	cp->instance = 1;
	cp->flags = htole32(MGMT_ADV_FLAG_CONNECTABLE);
	cp->duration = 0;
	cp->timeout = 0;
	cp->adv_data_len = ad;
	cp->scan_rsp_len = sr;
	if (mgmt_cmd(MGMT_OP_ADD_ADVERTISING, opt.index, cp, sizeof *cp + ad + sr))
		return -1;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* ATT */
static void att_closed(const char *why) {
	LOG("att: bearer closed (%s)", why);
	close(att_fd);
	att_fd = -1;
	s.disconnected = true;
	res.subscribed = false;
}

static int att_send(const uint8_t *p, size_t n) {
	if (att_fd < 0)
		return -1;
	LOG("att> %s", hex(p, n));
	if (write(att_fd, p, n) < 0) {
		LOG("att write: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static const char *ns_event(uint8_t e) {
	return e == 0 ? "Added" : e == 1 ? "Modified" : e == 2 ? "Removed" : "Reserved";
}

static void on_notification_source(const uint8_t *v, size_t n) {
	if (n != 8) {
		LOG("NS: malformed (%zu bytes): %s", n, hex(v, n));
		return;
	}
	uint32_t uid = v[4] | v[5] << 8 | v[6] << 16 | (uint32_t)v[7] << 24;
	LOG("NS PDU %s: event=%s flags=0x%02x%s%s%s%s%s category=%u count=%u uid=%u", hex(v, 8),
	    ns_event(v[0]), v[1], v[1] & 1 ? " silent" : "", v[1] & 2 ? " important" : "",
	    v[1] & 4 ? " preexisting" : "", v[1] & 8 ? " positive" : "", v[1] & 16 ? " negative" : "",
	    v[2], v[3], uid);
	res.ns_count++;
	size_t o = strlen(res.ns_log);
	snprintf(res.ns_log + o, sizeof res.ns_log - o, "%s\"%s\"", o ? "," : "", hex(v, 8));
	if (v[0] == 0 && !(v[1] & 4) && !s.have_pending && !s.fetch_done) {
		s.pending_uid = uid;
		s.have_pending = true;
	}
}

static void handle_att_pdu(const uint8_t *p, size_t n) {
	LOG("att< %s", hex(p, n));
	uint8_t op = p[0];
	switch (op) {
	case ATT_NOTIFY:
	case ATT_INDICATE: {
		uint16_t h = p[1] | p[2] << 8;
		if (op == ATT_INDICATE) {
			uint8_t c = ATT_CONFIRM;
			att_send(&c, 1);
		}
		if (h == s.ns_h && s.ns_h)
			on_notification_source(p + 3, n - 3);
		else if (h == s.ds_h && s.ds_h) {
			LOG("DS chunk (%zu bytes): %s", n - 3, hex(p + 3, n - 3));
			if (s.ds_len + n - 3 <= sizeof s.ds_buf) {
				memcpy(s.ds_buf + s.ds_len, p + 3, n - 3);
				s.ds_len += n - 3;
			}
			res.ds_bytes += n - 3;
		} else if (h == s.sc_h && s.sc_h && n >= 7) {
			uint16_t a = p[3] | p[4] << 8, b = p[5] | p[6] << 8;
			LOG("Service Changed indication: 0x%04x-0x%04x", a, b);
			res.sc_indications++;
			s.need_rediscover = true;
		} else
			LOG("notification for unknown handle 0x%04x ignored", h);
		break;
	}
	case ATT_MTU_REQ: { /* the phone may ask too: answer with ours */
		uint8_t r[3] = {ATT_MTU_RSP, opt.mtu & 0xff, opt.mtu >> 8};
		uint16_t peer = p[1] | p[2] << 8;
		s.mtu = peer < opt.mtu ? peer : opt.mtu;
		att_send(r, 3);
		break;
	}
	case ATT_ERROR_RSP: case ATT_MTU_RSP: case ATT_FIND_INFO_RSP: case ATT_FIND_BY_TYPE_RSP:
	case ATT_READ_BY_TYPE_RSP: case 0x0B: case 0x0D: case 0x11: case ATT_WRITE_RSP:
	case 0x17: case 0x19:
		memcpy(att_res.pdu, p, n < sizeof att_res.pdu ? n : sizeof att_res.pdu);
		att_res.len = n;
		att_res.done = true;
		break;
	default:
		if (op == 0x52 || op == 0xD2) /* commands: no response */
			break;
		if (!(op & 1) || op == ATT_CONFIRM) { /* a request to our (empty) server */
			uint16_t h = n >= 3 ? (p[1] | p[2] << 8) : 0;
			uint8_t code = (op == ATT_FIND_INFO_REQ || op == ATT_FIND_BY_TYPE_REQ ||
					op == ATT_READ_BY_TYPE_REQ || op == 0x10)
					       ? ATT_ERR_ATTR_NOT_FOUND
					       : ATT_ERR_REQ_NOT_SUPP;
			if (op == ATT_CONFIRM)
				break;
			uint8_t r[5] = {ATT_ERROR_RSP, op, h & 0xff, h >> 8, code};
			att_send(r, 5);
		}
		break;
	}
}

/* Send a request and wait for the response (or error). Returns the response
 * opcode, or -1 on disconnect/timeout. */
static int att_request(const uint8_t *req, size_t n) {
	att_res.done = false;
	if (att_send(req, n) < 0)
		return -1;
	double deadline = now_s() + 30;
	while (!att_res.done) {
		if (att_fd < 0 || expired(deadline))
			return -1;
		pump(200, false);
	}
	if (att_res.pdu[0] == ATT_ERROR_RSP)
		LOG("att: error 0x%02x for request 0x%02x handle 0x%04x", att_res.pdu[4],
		    att_res.pdu[1], att_res.pdu[2] | att_res.pdu[3] << 8);
	return att_res.pdu[0];
}

static uint8_t att_error_code(void) {
	return att_res.pdu[0] == ATT_ERROR_RSP ? att_res.pdu[4] : 0;
}

/* Raise link security with BT_SECURITY and wait until the kernel has paired
 * (or re-encrypted) and the socket is writable again. */
static int raise_security(int level) {
	struct bt_security sec = {.level = level, .key_size = 0};
	struct bt_security cur = {0};
	socklen_t sl = sizeof cur;
	getsockopt(att_fd, SOL_BLUETOOTH, BT_SECURITY, &cur, &sl);
	LOG("security: current level %u, raising to %u (setsockopt BT_SECURITY)", cur.level, level);
	res.security_raises++;
	if (setsockopt(att_fd, SOL_BLUETOOTH, BT_SECURITY, &sec, sizeof sec) < 0) {
		/* 6.1 returns EINVAL when smp_conn_security() says the link is already
		 * good enough: treat as success if getsockopt agrees. */
		LOG("setsockopt BT_SECURITY: %s", strerror(errno));
		sl = sizeof cur;
		getsockopt(att_fd, SOL_BLUETOOTH, BT_SECURITY, &cur, &sl);
		return cur.level >= level ? 0 : -1;
	}
	double deadline = now_s() + 40;
	while (!expired(deadline)) {
		if (att_fd < 0)
			return -1;
		if (pump(200, true)) {
			sl = sizeof cur;
			getsockopt(att_fd, SOL_BLUETOOTH, BT_SECURITY, &cur, &sl);
			if (cur.level >= level) {
				LOG("security: level %u, key size %u", cur.level, cur.key_size);
				res.sec_level = cur.level;
				return 0;
			}
			usleep(50000);
		}
	}
	LOG("security: timeout");
	return -1;
}

/* Write request with the security retry of ancs.md. */
static int att_write(uint16_t handle, const uint8_t *v, size_t n) {
	uint8_t req[600];
	req[0] = ATT_WRITE_REQ;
	req[1] = handle & 0xff;
	req[2] = handle >> 8;
	memcpy(req + 3, v, n);
	for (int attempt = 0; attempt < 2; attempt++) {
		int r = att_request(req, 3 + n);
		if (r == ATT_WRITE_RSP)
			return 0;
		if (r != ATT_ERROR_RSP)
			return -1;
		uint8_t e = att_error_code();
		if ((e == ATT_ERR_INSUFF_AUTHEN || e == ATT_ERR_INSUFF_ENC) && attempt == 0) {
			if (raise_security(BT_SECURITY_MEDIUM) < 0)
				return -1;
			continue;
		}
		return e;
	}
	return -1;
}

/* Find By Type Value for a primary service UUID. */
static bool find_service(const uint8_t *uuid, size_t ulen, uint16_t *start, uint16_t *end) {
	uint8_t req[32] = {ATT_FIND_BY_TYPE_REQ, 0x01, 0x00, 0xff, 0xff, 0x00, 0x28};
	memcpy(req + 7, uuid, ulen);
	if (att_request(req, 7 + ulen) != ATT_FIND_BY_TYPE_RSP || att_res.len < 5)
		return false;
	*start = att_res.pdu[1] | att_res.pdu[2] << 8;
	*end = att_res.pdu[3] | att_res.pdu[4] << 8;
	return true;
}

struct chr { uint16_t decl, value; uint8_t props; uint8_t uuid[16]; uint8_t ulen; };

static int discover_chars(uint16_t start, uint16_t end, struct chr *out, int max) {
	int count = 0;
	uint16_t h = start;
	while (h <= end && count < max) {
		uint8_t req[7] = {ATT_READ_BY_TYPE_REQ, h & 0xff, h >> 8, end & 0xff, end >> 8, 0x03, 0x28};
		if (att_request(req, 7) != ATT_READ_BY_TYPE_RSP)
			break;
		uint8_t l = att_res.pdu[1];
		if (l != 7 && l != 21)
			break;
		uint16_t last = h;
		for (size_t o = 2; o + l <= att_res.len && count < max; o += l) {
			const uint8_t *e = att_res.pdu + o;
			struct chr *c = &out[count++];
			c->decl = e[0] | e[1] << 8;
			c->props = e[2];
			c->value = e[3] | e[4] << 8;
			c->ulen = l - 5;
			memcpy(c->uuid, e + 5, c->ulen);
			last = c->decl;
		}
		if (last == 0xffff)
			break;
		h = last + 1;
	}
	return count;
}

/* Find Information between a value handle and the next declaration. */
static uint16_t find_cccd(uint16_t from, uint16_t to) {
	uint16_t h = from;
	while (h <= to && h != 0) {
		uint8_t req[5] = {ATT_FIND_INFO_REQ, h & 0xff, h >> 8, to & 0xff, to >> 8};
		if (att_request(req, 5) != ATT_FIND_INFO_RSP)
			return 0;
		uint8_t fmt = att_res.pdu[1];
		size_t l = fmt == 1 ? 4 : 18;
		uint16_t last = h;
		for (size_t o = 2; o + l <= att_res.len; o += l) {
			uint16_t hh = att_res.pdu[o] | att_res.pdu[o + 1] << 8;
			if (fmt == 1 && att_res.pdu[o + 2] == 0x02 && att_res.pdu[o + 3] == 0x29)
				return hh;
			last = hh;
		}
		if (last == 0xffff)
			return 0;
		h = last + 1;
	}
	return 0;
}

static uint16_t cccd_for(struct chr *c, int i, int n, uint16_t svc_end) {
	uint16_t to = (i + 1 < n) ? c[i + 1].decl - 1 : svc_end;
	return c[i].value < to ? find_cccd(c[i].value + 1, to) : 0;
}

static bool discover(void) {
	struct chr c[16];
	int n;
	s.ancs_found = false;
	s.ns_h = s.cp_h = s.ds_h = s.ns_cccd = s.ds_cccd = 0;
	/* Generic Attribute service + Service Changed (only once per connection) */
	if (!s.sc_h) {
		uint8_t gatt_uuid[2] = {0x01, 0x18};
		if (find_service(gatt_uuid, 2, &s.gatt_start, &s.gatt_end)) {
			n = discover_chars(s.gatt_start, s.gatt_end, c, 16);
			for (int i = 0; i < n; i++)
				if (c[i].ulen == 2 && c[i].uuid[0] == 0x05 && c[i].uuid[1] == 0x2a) {
					s.sc_h = c[i].value;
					s.sc_cccd = cccd_for(c, i, n, s.gatt_end);
				}
			LOG("GATT service 0x%04x-0x%04x, Service Changed value 0x%04x cccd 0x%04x",
			    s.gatt_start, s.gatt_end, s.sc_h, s.sc_cccd);
		}
	}
	if (!find_service(ANCS_SVC, 16, &s.ancs_start, &s.ancs_end)) {
		LOG("ANCS not found");
		return false;
	}
	n = discover_chars(s.ancs_start, s.ancs_end, c, 16);
	for (int i = 0; i < n; i++) {
		if (c[i].ulen != 16)
			continue; /* ignore unknown characteristics */
		if (!memcmp(c[i].uuid, ANCS_NS, 16)) {
			s.ns_h = c[i].value;
			s.ns_cccd = cccd_for(c, i, n, s.ancs_end);
		} else if (!memcmp(c[i].uuid, ANCS_DS, 16)) {
			s.ds_h = c[i].value;
			s.ds_cccd = cccd_for(c, i, n, s.ancs_end);
		} else if (!memcmp(c[i].uuid, ANCS_CP, 16))
			s.cp_h = c[i].value;
	}
	LOG("ANCS 0x%04x-0x%04x: NS 0x%04x (cccd 0x%04x) CP 0x%04x DS 0x%04x (cccd 0x%04x)",
	    s.ancs_start, s.ancs_end, s.ns_h, s.ns_cccd, s.cp_h, s.ds_h, s.ds_cccd);
	s.ancs_found = s.ns_h && s.ns_cccd;
	return s.ancs_found;
}

static int subscribe(void) {
	static const uint8_t notify[2] = {1, 0}, indicate[2] = {2, 0};
	int e;
	if (s.ds_cccd && (e = att_write(s.ds_cccd, notify, 2))) {
		LOG("subscribe Data Source failed: %d", e);
		return -1;
	}
	if ((e = att_write(s.ns_cccd, notify, 2))) {
		LOG("subscribe Notification Source failed: %d", e);
		return -1;
	}
	LOG("subscribed to Data Source and Notification Source");
	res.subscribed = true;
	if (s.sc_cccd && !att_write(s.sc_cccd, indicate, 2))
		LOG("subscribed to Service Changed");
	return 0;
}

static void cp_log(const char *what, int result) {
	size_t o = strlen(res.cp_log);
	snprintf(res.cp_log + o, sizeof res.cp_log - o, "%s{\"cmd\":\"%s\",\"result\":%d}",
		 o ? "," : "", what, result);
	if (result == 0)
		res.cp_ok++;
	else
		res.cp_errors++;
}

/* Wait until a Data Source response containing `tuples` tuples is complete
 * (no end marker: count tuples); header_len = bytes before the first tuple. */
static bool wait_ds(size_t header_len, int tuples) {
	double deadline = now_s() + 10;
	while (!expired(deadline) && att_fd >= 0) {
		size_t o = header_len;
		int got = 0;
		while (got < tuples && o + 3 <= s.ds_len) {
			size_t l = s.ds_buf[o + 1] | s.ds_buf[o + 2] << 8;
			if (o + 3 + l > s.ds_len)
				break;
			o += 3 + l;
			got++;
		}
		if (got == tuples && s.ds_len >= header_len) {
			LOG("DS response complete (%zu bytes): %s", s.ds_len, hex(s.ds_buf, s.ds_len));
			return true;
		}
		pump(200, false);
	}
	return false;
}

static void control_point_script(uint32_t uid) {
	uint8_t cmd[64];
	int r;
	char name[64];
	if (!s.cp_h)
		return;
	if (opt.fetch) {
		/* Get Notification Attributes: AppIdentifier, Title(32), Message(64), PositiveActionLabel */
		size_t n = 0;
		cmd[n++] = 0;
		memcpy(cmd + n, &(uint32_t){htole32(uid)}, 4); n += 4;
		cmd[n++] = 0;
		cmd[n++] = 1; cmd[n++] = 32; cmd[n++] = 0;
		cmd[n++] = 3; cmd[n++] = 64; cmd[n++] = 0;
		cmd[n++] = 6;
		s.ds_len = 0;
		r = att_write(s.cp_h, cmd, n);
		LOG("CP Get Notification Attributes uid=%u -> %d", uid, r);
		snprintf(name, sizeof name, "get_notification_attributes:%u", uid);
		if (r == 0 && !wait_ds(5, 4))
			r = -2;
		cp_log(name, r);
		/* Get App Attributes for the app identifier we just got */
		if (r == 0 && s.ds_len > 8 && s.ds_buf[5] == 0) {
			size_t al = s.ds_buf[6] | s.ds_buf[7] << 8;
			if (al > 0 && al < 40 && 8 + al <= s.ds_len) {
				n = 0;
				cmd[n++] = 1;
				memcpy(cmd + n, s.ds_buf + 8, al); n += al;
				cmd[n++] = 0;
				cmd[n++] = 0;
				s.ds_len = 0;
				r = att_write(s.cp_h, cmd, n);
				LOG("CP Get App Attributes -> %d", r);
				if (r == 0 && !wait_ds(al + 2, 1))
					r = -2;
				cp_log("get_app_attributes", r);
			}
		}
	}
	if (opt.action >= 0) {
		cmd[0] = 2;
		memcpy(cmd + 1, &(uint32_t){htole32(uid)}, 4);
		cmd[5] = opt.action;
		r = att_write(s.cp_h, cmd, 6);
		LOG("CP Perform Notification Action uid=%u action=%d -> %d", uid, opt.action, r);
		snprintf(name, sizeof name, "perform_action:%u", uid);
		cp_log(name, r);
	}
	if (opt.bogus_action) {
		uint32_t bogus = 0xDEAD;
		cmd[0] = 2;
		memcpy(cmd + 1, &(uint32_t){htole32(bogus)}, 4);
		cmd[5] = 0;
		r = att_write(s.cp_h, cmd, 6);
		LOG("CP Perform Notification Action on unknown uid=%u -> 0x%02x (expect 0xa2)", bogus, r);
		cp_log("perform_action_unknown_uid", r);
	}
}

static void session(void) {
	uint8_t req[3] = {ATT_MTU_REQ, opt.mtu & 0xff, opt.mtu >> 8};
	if (att_request(req, 3) == ATT_MTU_RSP) {
		uint16_t srv = att_res.pdu[1] | att_res.pdu[2] << 8;
		s.mtu = srv < opt.mtu ? srv : opt.mtu;
		LOG("ATT MTU %u (server %u)", s.mtu, srv);
	}
	if (att_fd < 0)
		return;
	if (discover() && subscribe() == 0 && opt.probe_resecure) {
		struct bt_security sec = {.level = BT_SECURITY_MEDIUM}, cur = {0};
		socklen_t sl = sizeof cur;
		getsockopt(att_fd, SOL_BLUETOOTH, BT_SECURITY, &cur, &sl);
		int r = setsockopt(att_fd, SOL_BLUETOOTH, BT_SECURITY, &sec, sizeof sec);
		LOG("probe: link at level %u; setsockopt(BT_SECURITY, MEDIUM) again -> %d (%s)",
		    cur.level, r, r ? strerror(errno) : "ok");
	}
	double deadline = now_s() + opt.timeout_s;
	while (att_fd >= 0 && !expired(deadline)) {
		if (s.need_rediscover) {
			s.need_rediscover = false;
			LOG("Service Changed: rediscovering ANCS");
			res.subscribed = false;
			if (discover())
				subscribe();
			continue;
		}
		if (s.have_pending && !s.fetch_done) {
			s.fetch_done = true;
			s.have_pending = false;
			control_point_script(s.pending_uid);
			continue;
		}
		pump(500, false);
	}
}

/* ------------------------------------------------------------------------ */
static void write_summary(void) {
	if (!opt.summary_path)
		return;
	FILE *f = fopen(opt.summary_path, "w");
	if (!f)
		return;
	fprintf(f, "{\n \"sessions\": %d,\n \"pairing_confirms\": %d,\n \"new_ltks\": %d,\n"
		   " \"security_raises\": %d,\n \"security_level\": %d,\n \"ns_count\": %d,\n"
		   " \"ns\": [%s],\n \"ds_bytes\": %d,\n \"cp\": [%s],\n \"cp_ok\": %d,\n"
		   " \"cp_errors\": %d,\n \"sc_indications\": %d,\n \"mgmt_errors\": %d\n}\n",
		res.sessions, res.pairing_confirms, res.new_ltks, res.security_raises, res.sec_level,
		res.ns_count, res.ns_log, res.ds_bytes, res.cp_log, res.cp_ok, res.cp_errors,
		res.sc_indications, res.mgmt_errors);
	fclose(f);
}

static void on_signal(int sig) { (void)sig; stop_flag = 1; }

static void usage(void) {
	fprintf(stderr,
		"usage: standin [--index N] [--name NAME] [--io-cap N] [--timeout S] [--keys FILE]\n"
		"               [--summary FILE] [--fetch] [--action positive|negative]\n"
		"               [--bogus-action] [--mtu N] [--probe-resecure]\n");
	exit(2);
}

int main(int argc, char **argv) {
	static const struct option lo[] = {
		{"index", 1, 0, 'i'}, {"name", 1, 0, 'n'}, {"io-cap", 1, 0, 'c'},
		{"timeout", 1, 0, 't'}, {"keys", 1, 0, 'k'}, {"summary", 1, 0, 's'},
		{"fetch", 0, 0, 'f'}, {"action", 1, 0, 'a'}, {"bogus-action", 0, 0, 'b'},
		{"mtu", 1, 0, 'm'}, {"probe-resecure", 0, 0, 'p'}, {0, 0, 0, 0}};
	int ch;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'i': opt.index = atoi(optarg); break;
		case 'n': opt.name = optarg; break;
		case 'c': opt.io_cap = atoi(optarg); break;
		case 't': opt.timeout_s = atoi(optarg); break;
		case 'k': opt.keys_path = optarg; break;
		case 's': opt.summary_path = optarg; break;
		case 'f': opt.fetch = true; break;
		case 'a': opt.action = !strcmp(optarg, "negative") ? 1 : 0; break;
		case 'b': opt.bogus_action = true; break;
		case 'm': opt.mtu = atoi(optarg); break;
		case 'p': opt.probe_resecure = true; break;
		default: usage();
		}
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);

	/* mgmt control socket */
	mgmt_fd = socket(PF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, BTPROTO_HCI);
	if (mgmt_fd < 0) {
		perror("socket(PF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)");
		return 1;
	}
	struct sockaddr_hci ha = {.hci_family = AF_BLUETOOTH, .hci_dev = HCI_DEV_NONE,
				  .hci_channel = HCI_CHANNEL_CONTROL};
	if (bind(mgmt_fd, (struct sockaddr *)&ha, sizeof ha) < 0) {
		perror("bind(HCI_CHANNEL_CONTROL)");
		return 1;
	}
	LOG("mgmt: socket(PF_BLUETOOTH, SOCK_RAW|SOCK_CLOEXEC|SOCK_NONBLOCK, BTPROTO_HCI) + "
	    "bind(hci_dev=HCI_DEV_NONE, hci_channel=HCI_CHANNEL_CONTROL) = fd %d", mgmt_fd);

	/* ATT listener: bind to CID 4 with an LE address type before advertising */
	listen_fd = socket(PF_BLUETOOTH, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, BTPROTO_L2CAP);
	if (listen_fd < 0) {
		perror("socket(L2CAP)");
		return 1;
	}
	struct sockaddr_l2 la = {.l2_family = AF_BLUETOOTH, .l2_psm = 0,
				 .l2_cid = htobs(ATT_CID), .l2_bdaddr_type = BDADDR_LE_PUBLIC};
	bacpy(&la.l2_bdaddr, BDADDR_ANY);
	if (bind(listen_fd, (struct sockaddr *)&la, sizeof la) < 0) {
		perror("bind(L2CAP ATT)");
		return 1;
	}
	if (listen(listen_fd, 1) < 0) {
		perror("listen");
		return 1;
	}
	LOG("att: socket(PF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP) + bind(BDADDR_ANY, "
	    "l2_cid=4, l2_bdaddr_type=BDADDR_LE_PUBLIC) + listen = fd %d", listen_fd);

	if (setup_controller() < 0) {
		LOG("controller setup failed");
		write_summary();
		return 1;
	}
	LOG("advertising; waiting for the phone");

	double deadline = now_s() + opt.timeout_s;
	while (!expired(deadline)) {
		if (att_fd >= 0) {
			session();
			if (att_fd >= 0 && stop_flag)
				break;
			LOG("session ended; waiting for a reconnection");
			write_summary();
			continue;
		}
		pump(500, false);
	}
	LOG("exiting: sessions=%d ns=%d ds_bytes=%d cp_ok=%d cp_errors=%d sc=%d", res.sessions,
	    res.ns_count, res.ds_bytes, res.cp_ok, res.cp_errors, res.sc_indications);
	write_summary();
	return 0;
}
