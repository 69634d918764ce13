/* Fuzz entry point: Prometheus text exposition parser (src/lib/prom.c). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tt_prom *p = NULL;
	char buf[64];

	if (tt_prom_parse((const char *)data, size, &p, NULL) > TT_WARN)
		return 0;
	/* Touch every result the way the capture does. */
	for (size_t i = 0; i < p->n_samples; i++) {
		volatile double s = tt_prom_sum(p->samples, p->n_samples, p->samples[i].name);
		(void)s;
		tt_prom_label(p->samples[i].labels, "num_gpu_blocks", buf, sizeof buf);
		tt_prom_label(p->samples[i].labels, "le", buf, sizeof buf);
	}
	tt_prom_free(p);
	return 0;
}
