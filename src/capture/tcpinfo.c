/* The facts of the kernel's TCP_INFO the capture needs, kept apart:
 * <linux/tcp.h> (which has the fields) and glibc's <netinet/tcp.h> (which
 * the rest includes through libcurl) cannot be in one file. */
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "tcpinfo.h"

int tcp_counts(int fd, struct tcp_counts *out)
{
	for (int i = 0; i < 3; i++) {
		struct tcp_info ti;
		socklen_t len = sizeof ti;
		int q1, q2;

		memset(&ti, 0, sizeof ti);
		if (ioctl(fd, SIOCINQ, &q1) != 0 ||
		    getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
		    ioctl(fd, SIOCINQ, &q2) != 0)
			return -1;
		/* tcpi_rcv_ooopack is Linux 5.4+: an older kernel returns less */
		if (len < offsetof(struct tcp_info, tcpi_rcv_ooopack) + sizeof ti.tcpi_rcv_ooopack)
			return -1;
		if (q1 != q2 || q1 < 0)
			continue; /* bytes arrived meanwhile: look again */
		out->ooo_packets = ti.tcpi_rcv_ooopack;
		out->bytes_read = ti.tcpi_bytes_received - (uint64_t)q1;
		/* A FIN takes a sequence number, so tcpi_bytes_received counts
		 * it as a byte once the peer has closed (the kernel's states
		 * after a received FIN: CLOSE_WAIT 8, LAST_ACK 9, CLOSING 11,
		 * TIME_WAIT 6; include/net/tcp_states.h). */
		if (ti.tcpi_state == 8 || ti.tcpi_state == 9 || ti.tcpi_state == 11 ||
		    ti.tcpi_state == 6)
			out->bytes_read -= 1;
		return 0;
	}
	return -1;
}
