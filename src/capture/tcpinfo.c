/* The one fact of the kernel's TCP_INFO the capture needs, kept apart:
 * <linux/tcp.h> (which has the field) and glibc's <netinet/tcp.h> (which
 * the rest includes through libcurl) cannot be in one file. */
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "tcpinfo.h"

int tcp_ooo_packets(int fd, uint32_t *n)
{
	struct tcp_info ti;
	socklen_t len = sizeof ti;

	memset(&ti, 0, sizeof ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
		return -1;
	/* tcpi_rcv_ooopack is Linux 5.4+: an older kernel returns less */
	if (len < offsetof(struct tcp_info, tcpi_rcv_ooopack) + sizeof ti.tcpi_rcv_ooopack)
		return -1;
	*n = ti.tcpi_rcv_ooopack;
	return 0;
}
