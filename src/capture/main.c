/* tokentrace-capture: record a speed-test matrix from a live server
 * (docs/capture.md).  The program's steps, each its own module: options,
 * opening or resuming the run, running the matrix, the summary. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT, SCHED_RESET_ON_FORK */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "capture_opts.h"
#include "run_matrix.h"
#include "run_open.h"
#include "run_summary.h"
#include "sweep.h"

static volatile sig_atomic_t stop_flag;

/* The loop's thread takes its times as it reads the sockets: a capture
 * that waits for a CPU reads several events of a stream at once, and they
 * share the newest one's stamp (docs/capture.md "When a stamp is late").
 * So it asks for a real-time priority (SCHED_FIFO, low: 10, so the
 * kernel's own real-time threads still come first; the writer thread and
 * anything started later go back to normal, SCHED_RESET_ON_FORK), and says
 * when it cannot have it, or when the machine has more runnable work than
 * CPUs for it. */
static void keep_on_cpu(const struct cap_opts *o)
{
	double load[1];
	int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		cpus = CPU_COUNT(&set); /* taskset: the CPUs it may use */
	if (!o->no_realtime) {
		struct sched_param sp;
		memset(&sp, 0, sizeof sp);
		sp.sched_priority = 10;
		if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) != 0)
			fprintf(stderr,
				"warning: cannot run at real-time priority (SCHED_FIFO: %s): on a "
				"busy machine the capture may wait for a CPU, and chunks it then "
				"reads together share one time; the report marks cells where that "
				"could move a figure (Client overloaded)\n",
				strerror(errno));
	}
	if (!o->quiet && getloadavg(load, 1) == 1 && cpus > 0 && load[0] > cpus)
		fprintf(stderr,
			"warning: the machine is overcommitted: load average %.2f on %d CPU%s "
			"the capture may use%s\n",
			load[0], cpus, cpus == 1 ? "" : "s",
			o->no_realtime ? "; without real-time priority its times may be late" : "");
}

static void on_signal(int sig)
{
	(void)sig;
	stop_flag++;
	if (stop_flag > 2)
		_exit(130); /* third Ctrl-C: the user really wants out */
}

int main(int argc, char **argv)
{
	struct cap_opts o;
	struct cap c;
	struct sigaction sa;
	const char *url_arg = NULL;
	int status;

	/* Every transfer gets libcurl's 256 KiB receive buffer (xfer.c) and
	 * gives it back at its end: with glibc's default thresholds the heap
	 * was trimmed and grown again (brk, page faults) about once a request,
	 * 3 % of the capture's CPU at 2,000 requests/s (perf).  Keep the heap
	 * and serve such buffers from it. */
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	memset(&c, 0, sizeof c);
	tt_manifest_init(&c.made);
	tt_manifest_init(&c.probed);
	opts_init(&o);
	status = opts_parse(&o, argc, argv, &url_arg);
	if (status < 0 && !o.resume) {
		char *bad = run_unknown_cell(&o);
		if (bad) {
			status = usage_error("--cells: '%s' is not a cell of the matrix "
					     "(ids look like prefill-8K or decode-8Kx16)", bad);
			free(bad);
		}
	}
	if (status >= 0)
		goto cleanup;

	c.o = &o;
	c.net.o = &o;
	c.net.stop = &stop_flag;
	c.last_running = c.last_waiting = NAN;
	c.tty = !o.quiet && isatty(2);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	keep_on_cpu(&o);

	status = run_open(&c, url_arg);
	if (status == 0)
		status = run_matrix(&c);
	if (status == 0)
		status = run_sweep(&c);
	if (status == 0)
		status = run_summary(&c);

cleanup:
	run_close(&c);
	opts_release(&o);
	return status;
}
