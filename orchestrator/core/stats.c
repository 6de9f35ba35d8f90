/* Statistics over samples: the summaries `klab run` prints; the verdict
 * statistics of performance bisections build on these. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
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

double stats_quantile(const double *v, size_t n, double q)
{
	double *c, h, r;
	size_t lo;

	if (!n)
		return 0;
	q = q < 0 ? 0 : q > 1 ? 1 : q;
	c = xmalloc(n * sizeof(*c));
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	h = (double)(n - 1) * q;
	lo = (size_t)h;
	r = lo + 1 < n ? c[lo] + (h - (double)lo) * (c[lo + 1] - c[lo]) : c[lo];
	free(c);
	return r;
}

double stats_cv_percent(const double *v, size_t n)
{
	double m = stats_mean(v, n);

	return m == 0 ? 0 : 100.0 * stats_stddev(v, n) / fabs(m);
}

double stats_mad(const double *v, size_t n)
{
	double med, *d, mad;

	if (n < 2)
		return 0;
	med = stats_median(v, n);
	d = xmalloc(n * sizeof(*d));
	for (size_t i = 0; i < n; i++)
		d[i] = fabs(v[i] - med);
	/* 1.4826 = 1 / Phi^-1(3/4): the MAD of N(0, s^2) is 0.6745 s */
	mad = 1.482602218505602 * stats_median(d, n);
	free(d);
	return mad;
}

double stats_change_percent(double a, double b)
{
	return a == 0 ? 0 : 100.0 * (b - a) / fabs(a);
}

double stats_normal_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

#define LENTZ_TINY 1e-300

/* One step of the modified Lentz method with the fraction's next
 * coefficient aa: updates c and d, returns the factor for h. */
static double lentz_step(double aa, double *c, double *d)
{
	*d = 1 + aa * *d;
	if (fabs(*d) < LENTZ_TINY)
		*d = LENTZ_TINY;
	*c = 1 + aa / *c;
	if (fabs(*c) < LENTZ_TINY)
		*c = LENTZ_TINY;
	*d = 1 / *d;
	return *d * *c;
}

/* Continued fraction of the incomplete beta function, evaluated with
 * the modified Lentz method (Numerical Recipes, 6.4). */
static double incbeta_cf(double a, double b, double x)
{
	const double eps = 1e-15;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < LENTZ_TINY)
		d = LENTZ_TINY;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 1000; m++) {
		int m2 = 2 * m;
		double del;

		h *= lentz_step(m * (b - m) * x / ((a + m2 - 1) * (a + m2)), &c, &d);
		del = lentz_step(-(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)), &c, &d);
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

double stats_incbeta(double a, double b, double x)
{
	double lbt;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	/* the continued fraction converges fast only below this point */
	if (x < (a + 1) / (a + b + 2))
		return exp(lbt) * incbeta_cf(a, b, x) / a;
	return 1 - exp(lbt) * incbeta_cf(b, a, 1 - x) / b;
}

double stats_t_cdf(double t, double df)
{
	double tail;

	if (isinf(t))
		return t > 0 ? 1 : 0;
	/* P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2) */
	tail = 0.5 * stats_incbeta(df / 2, 0.5, df / (df + t * t));
	return t > 0 ? 1 - tail : tail;
}

double stats_t_quantile(double p, double df)
{
	double lo = 0, hi = 1;

	if (p <= 0)
		return -INFINITY;
	if (p >= 1)
		return INFINITY;
	if (p < 0.5)
		return -stats_t_quantile(1 - p, df);
	while (stats_t_cdf(hi, df) < p && hi < 1e300)
		hi *= 2;
	/* bisection: slow but sure, and nothing here is hot */
	for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (stats_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double stats_kolmogorov_sf(double lambda)
{
	double sum = 0, term;

	if (lambda <= 0)
		return 1;
	/* the series is useless near 0, where the probability is 1 anyway */
	if (lambda < 0.2)
		return 1;
	for (int k = 1; k <= 100; k++) {
		term = exp(-2.0 * k * k * lambda * lambda);
		sum += (k % 2 ? 1 : -1) * term;
		if (term < 1e-17)
			break;
	}
	sum *= 2;
	return sum < 0 ? 0 : sum > 1 ? 1 : sum;
}

struct ranked {
	double v;
	int from_x;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	return (x->v > y->v) - (x->v < y->v);
}

/* Pooled sample, sorted, x marked. */
static struct ranked *pool(const double *x, size_t nx, const double *y, size_t ny)
{
	struct ranked *r = xmalloc((nx + ny) * sizeof(*r));

	for (size_t i = 0; i < nx; i++)
		r[i] = (struct ranked){ x[i], 1 };
	for (size_t i = 0; i < ny; i++)
		r[nx + i] = (struct ranked){ y[i], 0 };
	qsort(r, nx + ny, sizeof(*r), cmp_ranked);
	return r;
}

/* Exact two-sided p-value of U for samples of m and n without ties:
 * count the m-subsets of ranks 1..m+n by rank sum. */
static double mwu_exact_p(double u, size_t m, size_t n)
{
	size_t N = m + n, smax = N * (N + 1) / 2;
	double *dp = xcalloc((m + 1) * (smax + 1), sizeof(*dp));
	double total = 0, le = 0, ge = 0, p;
	size_t off = m * (m + 1) / 2;

#define DP(k, s) dp[(k) * (smax + 1) + (s)]
	DP(0, 0) = 1;
	for (size_t r = 1; r <= N; r++)
		for (size_t k = (r < m ? r : m); k >= 1; k--) {
			/* k ranks out of 1..r sum to at most k r - k (k - 1) / 2 */
			size_t top = k * r - k * (k - 1) / 2;

			for (size_t s = top < smax ? top : smax; s >= r; s--)
				DP(k, s) += DP(k - 1, s - r);
		}
	for (size_t s = off; s <= smax; s++) {
		double c = DP(m, s), us = (double)(s - off);

		total += c;
		if (us <= u + 1e-9)
			le += c;
		if (us >= u - 1e-9)
			ge += c;
	}
#undef DP
	free(dp);
	p = 2 * (le < ge ? le : ge) / total;
	return p > 1 ? 1 : p;
}

int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, struct stats_test *out)
{
	return stats_mann_whitney_method(x, nx, y, ny, STATS_AUTO, out);
}

int stats_mann_whitney_method(const double *x, size_t nx, const double *y, size_t ny,
			      enum stats_method method, struct stats_test *out)
{
	size_t n = nx + ny;
	struct ranked *r;
	double rank_x = 0, tie_sum = 0, u, mu, sigma2, z;
	int ties = 0;

	if (!nx || !ny)
		return error("Mann-Whitney test needs two non-empty samples");
	r = pool(x, nx, y, ny);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		double t;

		while (j < n && r[j].v == r[i].v)
			j++;
		t = (double)(j - i);
		if (t > 1) {
			ties = 1;
			tie_sum += t * t * t - t;
		}
		/* mid-rank of positions i..j-1 (1-based) */
		for (size_t k = i; k < j; k++)
			if (r[k].from_x)
				rank_x += (double)(i + j + 1) / 2;
		i = j;
	}
	free(r);
	u = rank_x - (double)nx * (double)(nx + 1) / 2;
	out->statistic = u;
	if (method == STATS_EXACT && ties)
		return error("no exact Mann-Whitney p-value with ties");
	/* the counting table grows as nx (nx + ny)^2 */
	if (method == STATS_EXACT && n > 100)
		return error("no exact Mann-Whitney p-value for %zu runs (100 at most)", n);
	if (method == STATS_EXACT || (method == STATS_AUTO && !ties && nx <= 20 && ny <= 20)) {
		out->exact = 1;
		out->p_value = mwu_exact_p(u, nx, ny);
		return 0;
	}
	/* fully apart (no tie across the samples can give U 0 or nx ny):
	 * exact whatever the ties within them, as the normal approximation
	 * is not for small samples (5 + 5 with ties: 0.011 for 0.008) */
	if (method == STATS_AUTO && ties && (u == 0 || u == (double)nx * (double)ny) && nx <= 20 && ny <= 20) {
		double c = 1;

		for (size_t k = 1; k <= nx; k++)
			c = c * (double)(ny + k) / (double)k;
		out->exact = 1;
		out->p_value = 2 / c > 1 ? 1 : 2 / c;
		return 0;
	}
	out->exact = 0;
	mu = (double)nx * (double)ny / 2;
	sigma2 = (double)nx * (double)ny / 12 * ((double)(n + 1) - tie_sum / ((double)n * (double)(n - 1)));
	if (sigma2 <= 0) {
		out->p_value = 1;
		return 0;
	}
	z = (fabs(u - mu) - 0.5) / sqrt(sigma2);
	if (z < 0)
		z = 0;
	out->p_value = 2 * stats_normal_cdf(-z);
	if (out->p_value > 1)
		out->p_value = 1;
	return 0;
}

/* P(D >= d) for samples of m and n without ties, d = dmn / (m n):
 * the share of lattice paths from (0,0) to (m,n) that touch
 * |i n - j m| >= dmn (Hodges 1957), counted without the cancellation of
 * 1 - P(inside). */
static double ks_exact_p(size_t dmn, size_t m, size_t n)
{
	double *out = xcalloc((n + 1), sizeof(*out));
	double *all = xcalloc((n + 1), sizeof(*all));
	double p;

	/* row by row; out[j] = paths to (i,j) that touched the boundary,
	 * all[j] = every path to (i,j) */
	for (size_t i = 0; i <= m; i++) {
		for (size_t j = 0; j <= n; j++) {
			long long diff = (long long)(i * n) - (long long)(j * m);
			double a, o;

			if (!i && !j) {
				all[0] = 1;
				out[0] = 0;
				continue;
			}
			a = (i ? all[j] : 0) + (j ? all[j - 1] : 0);
			o = (i ? out[j] : 0) + (j ? out[j - 1] : 0);
			if ((size_t)llabs(diff) >= dmn)
				o = a;
			all[j] = a;
			out[j] = o;
		}
	}
	p = out[n] / all[n];
	free(out);
	free(all);
	return p;
}

double stats_ks_min_p(size_t nx, size_t ny)
{
	double c = 1;

	/* C(nx + ny, k) built up factor by factor; large sizes give 0 */
	for (size_t k = 1; k <= nx && c < 1e300; k++)
		c = c * (double)(ny + k) / (double)k;
	return c > 2 ? 2 / c : 1;
}

int stats_ks_2samp(const double *x, size_t nx, const double *y, size_t ny, struct stats_test *out)
{
	size_t n = nx + ny, cx = 0, cy = 0, dmn = 0;
	struct ranked *r;
	int ties = 0;

	if (!nx || !ny)
		return error("Kolmogorov-Smirnov test needs two non-empty samples");
	r = pool(x, nx, y, ny);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		long long diff;

		while (j < n && r[j].v == r[i].v) {
			if (r[j].from_x)
				cx++;
			else
				cy++;
			j++;
		}
		if (j - i > 1)
			ties = 1;
		/* in units of 1 / (nx ny): F_x = cx / nx, F_y = cy / ny */
		diff = (long long)(cx * ny) - (long long)(cy * nx);
		if ((size_t)llabs(diff) > dmn)
			dmn = (size_t)llabs(diff);
		i = j;
	}
	free(r);
	out->statistic = (double)dmn / ((double)nx * (double)ny);
	if (!ties && (double)nx * (double)ny <= 10000) {
		out->exact = 1;
		out->p_value = ks_exact_p(dmn, nx, ny);
		return 0;
	}
	{
		double en = (double)nx * (double)ny / (double)n, s = sqrt(en);

		out->exact = 0;
		/* Stephens' small-sample correction (Numerical Recipes 14.3) */
		out->p_value = stats_kolmogorov_sf((s + 0.12 + 0.11 / s) * out->statistic);
	}
	return 0;
}

int stats_ci_mean(const double *v, size_t n, double level, double *lo, double *hi)
{
	double m, h;

	if (n < 2)
		return error("a confidence interval of the mean needs two samples or more");
	if (!(level > 0 && level < 1))
		return error("confidence level %g is not between 0 and 1", level);
	m = stats_mean(v, n);
	h = stats_t_quantile(1 - (1 - level) / 2, (double)(n - 1)) * stats_stddev(v, n) / sqrt((double)n);
	*lo = m - h;
	*hi = m + h;
	return 0;
}

int stats_ci_median(const double *v, size_t n, double level, double *lo, double *hi)
{
	double *c, cdf = 0, term, alpha = (1 - level) / 2;
	size_t k = 1;

	if (!n)
		return error("a confidence interval of the median needs a sample");
	if (!(level > 0 && level < 1))
		return error("confidence level %g is not between 0 and 1", level);
	/* [x_(k), x_(n+1-k)] covers the median with 1 - 2 P(B <= k-1),
	 * B ~ Binomial(n, 1/2); take the largest k that keeps that at
	 * `level`, or k = 1 (min..max) when none does */
	term = exp(-(double)n * M_LN2);		/* P(B = 0) */
	for (size_t j = 0; j < n / 2; j++) {
		cdf += term;				/* P(B <= j) */
		if (cdf > alpha)
			break;
		k = j + 1;
		term *= (double)(n - j) / (double)(j + 1);
	}
	c = xmalloc(n * sizeof(*c));
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	*lo = c[k - 1];
	*hi = c[n - k];
	free(c);
	return 0;
}
