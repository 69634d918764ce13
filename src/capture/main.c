/* tokentrace-capture: record a speed-test matrix from a live server
 * (docs/capture.md).  The program's steps, each its own module: options,
 * opening or resuming the run, running the matrix, the summary. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT, SCHED_RESET_ON_FORK */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "capture_opts.h"
#include "run_matrix.h"
#include "run_open.h"
#include "run_summary.h"
#include "sweep.h"

static volatile sig_atomic_t stop_flag;

/* --repeat N (docs/capture.md "Repeats"): RUN is a directory of N runs,
 * RUN/rep-1 .. RUN/rep-N, each a complete run of the same matrix
 * (formats/run-set-v1.md); RUN/rep-1 is the run the capture opens as
 * usual, the others are created from its manifest or resumed. */
struct repeats {
	struct tt_run_writer *w[CAP_REPEAT_MAX];
	size_t n;
	char first[4096];
};

static int has_manifest(const char *dir)
{
	char p[4300];
	struct stat st;

	snprintf(p, sizeof p, "%s/manifest.json", dir);
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static void rep_dir(char *buf, size_t len, const char *set, size_t k)
{
	snprintf(buf, len, "%s/rep-%zu", set, k + 1);
}

/* Before the run is opened: a new set's directory made and -o pointed at
 * its first run; a set being resumed counted and --resume pointed at its
 * first run.  Returns -1 to go on, else the exit status. */
static int repeats_prepare(struct cap_opts *o, struct repeats *r)
{
	char d[4200];

	memset(r, 0, sizeof *r);
	r->n = 1;
	if (o->resume) {
		if (has_manifest(o->resume))
			return o->repeat > 1 && opts_given(o, "repeat")
				       ? usage_error("--resume: '%s' is one run, not a set of "
						     "repeats; resume without --repeat", o->resume)
				       : -1;
		rep_dir(d, sizeof d, o->resume, 0);
		if (!has_manifest(d))
			return -1; /* run_open names what is wrong */
		r->n = 0;
		while (r->n < CAP_REPEAT_MAX) {
			rep_dir(d, sizeof d, o->resume, r->n);
			if (!has_manifest(d))
				break;
			r->n++;
		}
		if (opts_given(o, "repeat") && (size_t)o->repeat != r->n)
			return usage_error("--resume: --repeat %lld contradicts the set '%s', which "
					   "holds %zu repeats; resume without --repeat",
					   (long long)o->repeat, o->resume, r->n);
		rep_dir(r->first, sizeof r->first, o->resume, 0);
		o->resume = r->first;
		return -1;
	}
	if (o->repeat <= 1)
		return -1;
	r->n = (size_t)o->repeat;
	if (mkdir(o->out, 0755) != 0) {
		DIR *dir;
		struct dirent *e;
		int empty = 1;
		if (errno != EEXIST) {
			fprintf(stderr, "tokentrace-capture: error: cannot create '%s': %s\n",
				o->out, strerror(errno));
			return 1;
		}
		/* as for a run: an existing directory only when empty */
		dir = opendir(o->out);
		while (dir && (e = readdir(dir)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				empty = 0;
		if (dir)
			closedir(dir);
		if (!dir || !empty) {
			fprintf(stderr, "tokentrace-capture: error: '%s' already exists and is not "
					"an empty directory (use --resume to continue it, or another "
					"-o)\n", o->out);
			return 1;
		}
	}
	rep_dir(r->first, sizeof r->first, o->out, 0);
	o->out = r->first;
	return -1;
}

/* After the first run is open: the other repeats created (same manifest,
 * so the same matrix, settings and time origin) or resumed.  0 or 1. */
static int repeats_open(struct cap *c, struct repeats *r, const char *set, int resume)
{
	struct tt_run_writer *first = c->run;

	r->w[0] = c->run;
	for (size_t k = 1; k < r->n; k++) {
		struct tt_error err;
		char d[4200];
		enum tt_code rc;

		rep_dir(d, sizeof d, set, k);
		rc = resume ? tt_run_writer_resume(d, &r->w[k], &err)
			    : tt_run_writer_create(d, &c->made, &r->w[k], &err);
		if (rc == TT_OK && tt_run_writer_manifest(r->w[k])->n_cells !=
				       tt_run_writer_manifest(first)->n_cells) {
			fprintf(stderr, "tokentrace-capture: error: '%s' has another matrix than "
					"'%s': not repeats of one capture\n", d, r->first);
			tt_run_writer_free(r->w[k]);
			r->w[k] = NULL;
			return 1;
		}
		if (rc != TT_OK) {
			fprintf(stderr, "tokentrace-capture: error: %s\n", err.msg);
			return 1;
		}
		c->run = r->w[k];
		run_write_capture_info(c);
	}
	c->run = first;
	return 0;
}

static void repeats_close(struct repeats *r)
{
	for (size_t k = 1; k < r->n; k++)
		tt_run_writer_free(r->w[k]);
}

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
	struct repeats reps;
	char set[4096] = "";
	int status, resuming;

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
	memset(&reps, 0, sizeof reps);
	reps.n = 1;
	if (status < 0) {
		snprintf(set, sizeof set, "%s", o.resume ? o.resume : o.out ? o.out : "");
		status = repeats_prepare(&o, &reps);
	}
	if (status >= 0)
		goto cleanup;
	resuming = o.resume != NULL;

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
	if (status == 0 && reps.n > 1 && o.redo)
		status = usage_error("--redo: '%s' is a set of repeats; resume one repeat with "
				     "--resume %s/rep-N --redo %s", set, set, o.redo);
	if (status == 0)
		status = run_redo(&c);
	if (status == 0 && reps.n > 1)
		status = repeats_open(&c, &reps, set, resuming);
	if (status == 0)
		status = run_matrix(&c, reps.n > 1 ? reps.w : NULL, reps.n > 1 ? reps.n : 0);
	if (status == 0)
		status = run_sweep(&c);
	if (status == 0 && reps.n > 1) {
		/* one summary line per repeat; the worst status */
		struct tt_run_writer *first = c.run;
		for (size_t k = 0; k < reps.n; k++) {
			int st;
			c.run = reps.w[k];
			st = run_summary(&c);
			if (st > status)
				status = st;
		}
		c.run = first;
		if (status && !o.quiet)
			fprintf(stderr, "tokentrace-capture: the %zu repeats continue together with "
					"--resume %s\n", reps.n, set);
	} else if (status == 0) {
		status = run_summary(&c);
	}

cleanup:
	repeats_close(&reps);
	run_close(&c);
	opts_release(&o);
	return status;
}
