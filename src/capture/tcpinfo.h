/* The kernel's TCP_INFO counts of a connection (tcpinfo.c), for the
 * end-of-request checks of arrival.c. */
#ifndef TT_CAPTURE_TCPINFO_H
#define TT_CAPTURE_TCPINFO_H
#include <stdint.h>

struct tcp_counts {
	uint32_t ooo_packets; /* received out of order (tcpi_rcv_ooopack) */
	uint64_t bytes_read;  /* taken by the application: received in order
			       * (tcpi_bytes_received) less those still unread */
};

/* The connection's counts since it was opened, read together (no byte
 * arrived between the readings).  0, or -1 when unknown (not TCP, a kernel
 * before 5.4, or bytes kept arriving). */
int tcp_counts(int fd, struct tcp_counts *out);

#endif
