/* Statistics over samples.  Pure. */
#ifndef KLAB_STATS_H
#define KLAB_STATS_H

#include <stddef.h>

double stats_mean(const double *v, size_t n);
/* Sample standard deviation (n - 1); 0 for n < 2. */
double stats_stddev(const double *v, size_t n);
/* Median (the array is not modified). */
double stats_median(const double *v, size_t n);
/* Quantile q (0..1) with linear interpolation between order statistics
 * (R's default, type 7); the array is not modified. */
double stats_quantile(const double *v, size_t n, double q);
/* stddev / |mean| in percent; 0 when the mean is 0. */
double stats_cv_percent(const double *v, size_t n);
/* Median absolute deviation from the median, times 1.4826 so that it
 * estimates the standard deviation of normal data; 0 for n < 2. */
double stats_mad(const double *v, size_t n);

/* (b - a) / |a| in percent; 0 when a is 0. */
double stats_change_percent(double a, double b);

/* Mann-Whitney U test of x against y, two-sided: U of x, and the
 * p-value (exact distribution when there are no ties and
 * nx, ny <= 20 each; also exact for two samples fully apart whose ties
 * are within a sample: 2 / C(nx + ny, nx), the one labelling of the
 * values that puts them apart, either way round; otherwise the normal
 * approximation with tie correction and continuity correction). */
struct stats_test {
	double statistic;
	double p_value;
	int exact;
};
int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, struct stats_test *out);

/* The same with the p-value's method forced: STATS_EXACT fails (after
 * error()) when there are ties or more than 100 runs in all. */
enum stats_method {
	STATS_AUTO,
	STATS_EXACT,
	STATS_ASYMPTOTIC,
};
int stats_mann_whitney_method(const double *x, size_t nx, const double *y, size_t ny,
			      enum stats_method method, struct stats_test *out);

/* Two-sample Kolmogorov-Smirnov test, two-sided: D and its p-value
 * (exact for small samples without ties, else the asymptotic one). */
int stats_ks_2samp(const double *x, size_t nx, const double *y, size_t ny, struct stats_test *out);

/* The smallest two-sided p-value the exact Kolmogorov-Smirnov test can
 * give samples of these sizes (at D = 1, 2 / C(nx + ny, nx)): 12 runs
 * against 2 cannot go below 0.022, 5 against 4 below 0.016. */
double stats_ks_min_p(size_t nx, size_t ny);

/* Confidence intervals at `level` (e.g. 0.95): of the mean (Student t),
 * of the median (distribution-free, from order statistics; the widest
 * available when n is too small for the level). */
int stats_ci_mean(const double *v, size_t n, double level, double *lo, double *hi);
int stats_ci_median(const double *v, size_t n, double level, double *lo, double *hi);

/* Distributions the tests above need. */
/* Standard normal: P(Z <= z). */
double stats_normal_cdf(double z);
/* Regularized incomplete beta function I_x(a, b). */
double stats_incbeta(double a, double b, double x);
/* Student t with df degrees of freedom (df > 0, need not be whole):
 * P(T <= t), and its inverse for 0 < p < 1. */
double stats_t_cdf(double t, double df);
double stats_t_quantile(double p, double df);
/* Kolmogorov distribution: P(K > lambda) = 2 sum (-1)^(k-1) e^(-2 k^2 lambda^2). */
double stats_kolmogorov_sf(double lambda);

#endif
