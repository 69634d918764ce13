/* The trace sink: a thread that encodes, compresses and writes records.
 *
 * The network loop only links finished records into a queue; everything
 * slow (zstd, write, fsync) happens here, so a frame being synced never
 * holds back the timestamp of a chunk.  Frames are ended at least once a
 * second so a crash loses at most about a second of records. */
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sink.h"
#include "protocol/prom.h"

struct item {
	struct item *next;
	int is_scrape;
	struct tt_request r;
	struct tt_chunk *chunks;
	char *error;
	int64_t t_ns;
	char *text;
	size_t len;
};

struct sink {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;      /* work queued, or stop */
	pthread_cond_t idle_cv; /* queue drained */
	struct item *head, *tail;
	int busy;
	int stop;
	struct tt_trace_writer *tw;
	enum tt_code rc;
	struct tt_error err;
};

static void item_free(struct item *it)
{
	free(it->chunks);
	free((void *)it->r.chunk_text); /* ours: sink_request took it with r */
	free(it->error);
	free(it->text);
	free(it);
}

static void write_item(struct sink *s, struct tt_trace_writer *tw, struct item *it)
{
	struct tt_error e;
	enum tt_code rc;

	if (!tw)
		return;
	if (it->is_scrape) {
		struct tt_prom *p = NULL;
		/* A scrape with bad lines keeps its good ones (TT_WARN). */
		if (tt_prom_parse(it->text, it->len, &p, NULL) > TT_WARN)
			return;
		{
			struct tt_scrape sc = {it->t_ns, p->n_samples, p->samples};
			rc = tt_trace_write_scrape(tw, &sc, &e);
		}
		tt_prom_free(p);
	} else {
		it->r.chunks = it->chunks;
		it->r.error = it->error;
		rc = tt_trace_write_request(tw, &it->r, &e);
	}
	if (rc != TT_OK && s->rc == TT_OK) {
		pthread_mutex_lock(&s->mu);
		s->rc = rc;
		s->err = e;
		pthread_mutex_unlock(&s->mu);
	}
}

static void *sink_main(void *arg)
{
	struct sink *s = arg;
	struct timespec last;

#ifdef __linux__
	{
		/* Lower this thread's priority (Linux nice is per thread): when
		 * the loop and the writer share a core, the loop must win, or a
		 * batch being compressed delays a whole wake of timestamps.  The
		 * writer only has to keep up on average. */
		pid_t tid = (pid_t)syscall(SYS_gettid);
		errno = 0;
		int prio = getpriority(PRIO_PROCESS, (id_t)tid);
		if (errno == 0)
			setpriority(PRIO_PROCESS, (id_t)tid, prio + 10 > 19 ? 19 : prio + 10);
	}
#endif

	clock_gettime(CLOCK_MONOTONIC, &last);
	pthread_mutex_lock(&s->mu);
	for (;;) {
		struct item *batch;
		struct tt_trace_writer *tw;
		struct timespec now, until;

		while (!s->head && !s->stop) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 200 * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&s->cv, &s->mu, &until);
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (s->tw && now.tv_sec - last.tv_sec >= 1)
				break;
		}
		if (!s->head && s->stop)
			break;
		batch = s->head;
		s->head = s->tail = NULL;
		tw = s->tw;
		s->busy = 1;
		pthread_mutex_unlock(&s->mu);

		while (batch) {
			struct item *next = batch->next;
			write_item(s, tw, batch);
			item_free(batch);
			batch = next;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (tw && now.tv_sec - last.tv_sec >= 1) {
			struct tt_error e;
			if (tt_trace_flush(tw, &e) != TT_OK && s->rc == TT_OK) {
				pthread_mutex_lock(&s->mu);
				s->rc = e.code;
				s->err = e;
				pthread_mutex_unlock(&s->mu);
			}
			last = now;
		}

		pthread_mutex_lock(&s->mu);
		s->busy = 0;
		if (!s->head)
			pthread_cond_broadcast(&s->idle_cv);
	}
	s->busy = 0;
	pthread_cond_broadcast(&s->idle_cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

enum tt_code sink_start(struct sink **out, struct tt_error *err)
{
	struct sink *s = calloc(1, sizeof *s);
	int e;

	if (!s)
		return tt_error_set(err, TT_ENOMEM, "out of memory starting the trace writer");
	{
		/* Priority inheritance: the writer runs at nice +10 and the loop
		 * may run SCHED_FIFO; a writer preempted while it held the lock
		 * (on a loaded machine, for several ms) held the loop's next
		 * push, and with it every send due meanwhile (replays went out
		 * up to 9 ms late; docs/workloads.md "Fidelity").  With it, the
		 * writer runs at the loop's priority until it lets go. */
		pthread_mutexattr_t ma;
		pthread_mutexattr_init(&ma);
		pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
		pthread_mutex_init(&s->mu, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	pthread_cond_init(&s->cv, NULL);
	pthread_cond_init(&s->idle_cv, NULL);
	e = pthread_create(&s->thread, NULL, sink_main, s);
	if (e) {
		free(s);
		return tt_error_set(err, TT_EINTERNAL, "cannot start the trace writer thread: %s",
				    strerror(e));
	}
	*out = s;
	return TT_OK;
}

enum tt_code sink_set_writer(struct sink *s, struct tt_trace_writer *tw, struct tt_error *err)
{
	enum tt_code rc;

	pthread_mutex_lock(&s->mu);
	pthread_cond_signal(&s->cv);
	while (s->head || s->busy)
		pthread_cond_wait(&s->idle_cv, &s->mu);
	s->tw = tw;
	rc = s->rc;
	if (rc != TT_OK && err)
		*err = s->err;
	s->rc = TT_OK;
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static void push(struct sink *s, struct item *it)
{
	pthread_mutex_lock(&s->mu);
	if (s->tail)
		s->tail->next = it;
	else
		s->head = it;
	s->tail = it;
	pthread_mutex_unlock(&s->mu);
	/* No signal per record: the thread wakes every 200 ms and writes the
	 * batch; waking it per request would cost the loop a syscall each. */
}

void sink_request(struct sink *s, const struct tt_request *r, struct tt_chunk *chunks,
		  char *error)
{
	struct item *it = calloc(1, sizeof *it);

	if (!it) {
		free(chunks);
		free((void *)r->chunk_text);
		free(error);
		return;
	}
	it->r = *r;
	it->chunks = chunks;
	it->error = error;
	push(s, it);
}

void sink_scrape(struct sink *s, int64_t t_ns, char *text, size_t len)
{
	struct item *it = calloc(1, sizeof *it);

	if (!it) {
		free(text);
		return;
	}
	it->is_scrape = 1;
	it->t_ns = t_ns;
	it->text = text;
	it->len = len;
	push(s, it);
}

void sink_stop(struct sink *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	while (s->head) {
		struct item *next = s->head->next;
		item_free(s->head);
		s->head = next;
	}
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	pthread_cond_destroy(&s->idle_cv);
	free(s);
}
