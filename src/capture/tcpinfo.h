#ifndef TT_CAPTURE_TCPINFO_H
#define TT_CAPTURE_TCPINFO_H
#include <stdint.h>

/* Packets the kernel has received out of order on socket fd since it was
 * opened (TCP_INFO's tcpi_rcv_ooopack).  0, or -1 when unknown (not TCP,
 * or a kernel before 5.4). */
int tcp_ooo_packets(int fd, uint32_t *n);

#endif
