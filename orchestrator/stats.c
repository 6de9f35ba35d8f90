/* Statistics over samples: the summaries `klab run` prints; the verdict
 * statistics of performance bisections build on these. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util/util.h"

double stats_mean(const double *v, size_t n)
{
	double sum = 0;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return sum / (double)n;
}

double stats_stddev(const double *v, size_t n)
{
	double m = stats_mean(v, n), ss = 0;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - m) * (v[i] - m);
	return sqrt(ss / (double)(n - 1));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double stats_median(const double *v, size_t n)
{
	double *c, m;

	if (!n)
		return 0;
	c = xmalloc(n * sizeof(*c));
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

double stats_cv_percent(const double *v, size_t n)
{
	double m = stats_mean(v, n);

	return m == 0 ? 0 : 100.0 * stats_stddev(v, n) / fabs(m);
}
