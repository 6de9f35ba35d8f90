/* Unit tests of orchestrator/core/stats.c against reference values: textbook
 * and published examples, closed forms, statistical tables, and exact
 * p-values enumerated here by brute force (an independent check of the
 * counting recurrences in stats.c).  Each reference says where it is from. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "util/util.h"

#define assert_near(a, b, tol) do { \
	double a_ = (a), b_ = (b); \
	if (!(fabs(a_ - b_) <= (tol))) \
		fail_msg("%s = %.15g, expected %.15g (tolerance %g)", #a, a_, b_, (double)(tol)); \
} while (0)

/* The classic example (Wikipedia, "Standard deviation"): population
 * standard deviation 2, so the sample one is sqrt(32 / 7). */
static const double textbook[] = { 2, 4, 4, 4, 5, 5, 7, 9 };

static void test_stats__summaries_match_textbook_example(void **state)
{
	assert_near(stats_mean(textbook, 8), 5, 1e-15);
	assert_near(stats_stddev(textbook, 8), sqrt(32.0 / 7), 1e-15);
	assert_near(stats_median(textbook, 8), 4.5, 1e-15);
	assert_near(stats_median(textbook, 7), 4, 1e-15);
	assert_near(stats_cv_percent(textbook, 8), 100 * sqrt(32.0 / 7) / 5, 1e-12);
	assert_near(stats_stddev(textbook, 1), 0, 0);
	assert_near(stats_median(textbook, 0), 0, 0);
}

static void test_stats__mad_matches_wikipedia_example(void **state)
{
	/* Wikipedia, "Median absolute deviation": {1,1,2,2,4,6,9} has MAD 1 */
	static const double v[] = { 1, 1, 2, 2, 4, 6, 9 };

	assert_near(stats_mad(v, 7), 1.482602218505602, 1e-12);
	assert_near(stats_mad(v, 1), 0, 0);
}

static void test_stats__quantile_interpolates_like_r_type_7(void **state)
{
	/* R: quantile(c(4, 1, 3, 2), c(0, .25, .5, .9, 1)) = 1 1.75 2.5 3.7 4 */
	static const double v[] = { 4, 1, 3, 2 };

	assert_near(stats_quantile(v, 4, 0), 1, 0);
	assert_near(stats_quantile(v, 4, 0.25), 1.75, 1e-15);
	assert_near(stats_quantile(v, 4, 0.5), 2.5, 1e-15);
	assert_near(stats_quantile(v, 4, 0.9), 3.7, 1e-15);
	assert_near(stats_quantile(v, 4, 1), 4, 0);
	assert_near(v[0], 4, 0);	/* not sorted in place */
}

static void test_stats__change_percent_is_relative_to_the_first(void **state)
{
	assert_near(stats_change_percent(200, 150), -25, 1e-12);
	assert_near(stats_change_percent(9300, 265), -97.1505376344086, 1e-9);
	assert_near(stats_change_percent(-200, -100), 50, 1e-12);
	assert_near(stats_change_percent(0, 5), 0, 0);
}

static void test_stats__incbeta_matches_closed_forms(void **state)
{
	/* I_x(1,1) = x, I_x(a,1) = x^a, I_x(1,b) = 1 - (1-x)^b, I_1/2(a,a) = 1/2 */
	for (double x = 0.05; x < 1; x += 0.1) {
		assert_near(stats_incbeta(1, 1, x), x, 1e-13);
		assert_near(stats_incbeta(3.5, 1, x), pow(x, 3.5), 1e-13);
		assert_near(stats_incbeta(1, 7, x), 1 - pow(1 - x, 7), 1e-13);
	}
	assert_near(stats_incbeta(12.5, 12.5, 0.5), 0.5, 1e-13);
	assert_near(stats_incbeta(2, 3, 0), 0, 0);
	assert_near(stats_incbeta(2, 3, 1), 1, 0);
}

static void test_stats__t_quantiles_match_tables(void **state)
{
	/* closed forms: df 1 is Cauchy, t = tan(pi (p - 1/2)); df 2 has
	 * t = (2p - 1) / sqrt(2 p (1 - p)) */
	assert_near(stats_t_quantile(0.975, 1), tan(M_PI * 0.475), 1e-9);
	assert_near(stats_t_quantile(0.975, 2), 0.95 / sqrt(2 * 0.975 * 0.025), 1e-10);
	/* printed tables of Student's t (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2) */
	assert_near(stats_t_quantile(0.975, 5), 2.570582, 1e-6);
	assert_near(stats_t_quantile(0.975, 7), 2.364624, 1e-6);
	assert_near(stats_t_quantile(0.975, 10), 2.228139, 1e-6);
	assert_near(stats_t_quantile(0.975, 30), 2.042272, 1e-6);
	assert_near(stats_t_quantile(0.95, 9), 1.833113, 1e-6);
	assert_near(stats_t_quantile(0.995, 5), 4.032143, 1e-6);
	assert_near(stats_t_quantile(0.995, 4), 4.604095, 1e-6);
	/* df -> infinity: the normal quantile 1.959964 */
	assert_near(stats_t_quantile(0.975, 1e7), 1.959964, 1e-6);
	assert_near(stats_t_quantile(0.025, 10), -2.228139, 1e-6);
	assert_near(stats_t_cdf(0, 3), 0.5, 1e-15);
	assert_near(stats_t_cdf(2.228139, 10), 0.975, 1e-7);
	assert_near(stats_normal_cdf(1.959963984540054), 0.975, 1e-12);
}

/* SciPy's documentation of scipy.stats.mannwhitneyu (after Conover):
 * males = [19, 22, 16, 29, 24], females = [20, 11, 17, 12]:
 * U1 = 17, exact p = 0.1111111111111111, asymptotic p = 0.11134688653314041. */
static const double males[] = { 19, 22, 16, 29, 24 };
static const double females[] = { 20, 11, 17, 12 };

static void test_stats__mann_whitney_matches_scipy_docs_example(void **state)
{
	struct stats_test t;

	assert_int_equal(stats_mann_whitney(males, 5, females, 4, &t), 0);
	assert_near(t.statistic, 17, 0);
	assert_true(t.exact);
	assert_near(t.p_value, 1.0 / 9, 1e-14);
	assert_int_equal(stats_mann_whitney_method(males, 5, females, 4, STATS_ASYMPTOTIC, &t), 0);
	assert_false(t.exact);
	assert_near(t.p_value, 0.11134688653314041, 1e-14);
	/* the other way round: U2 = n1 n2 - U1, same two-sided p */
	assert_int_equal(stats_mann_whitney(females, 4, males, 5, &t), 0);
	assert_near(t.statistic, 3, 0);
	assert_near(t.p_value, 1.0 / 9, 1e-14);
}

/* A deterministic generator of distinct test values. */
static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* Fill x and y with distinct values in random order. */
static void distinct_samples(uint64_t *seed, double *x, size_t nx, double *y, size_t ny)
{
	double all[32];
	size_t n = nx + ny;

	for (size_t i = 0; i < n; i++)
		all[i] = (double)i * 1.5 + 10;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = lcg(seed) % (i + 1);
		double t = all[i];

		all[i] = all[j];
		all[j] = t;
	}
	memcpy(x, all, nx * sizeof(*x));
	memcpy(y, all + nx, ny * sizeof(*y));
}

static int popcount(unsigned v)
{
	int c = 0;

	for (; v; v &= v - 1)
		c++;
	return c;
}

/* U of the ranks in `mask` (bit r = rank r + 1 belongs to x). */
static double u_of_mask(unsigned mask, size_t nx, size_t n)
{
	double sum = 0;

	for (size_t r = 0; r < n; r++)
		if (mask & (1u << r))
			sum += (double)(r + 1);
	return sum - (double)(nx * (nx + 1)) / 2;
}

static double rank_u(const double *x, size_t nx, const double *y, size_t ny)
{
	/* U = number of pairs with x > y (no ties) */
	double u = 0;

	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			u += x[i] > y[j];
	return u;
}

static void test_stats__mann_whitney_exact_matches_enumeration(void **state)
{
	uint64_t seed = 42;

	for (size_t nx = 1; nx <= 8; nx++) {
		for (size_t ny = 1; ny <= 8; ny++) {
			double x[8], y[8], u, le = 0, ge = 0, total = 0, p;
			size_t n = nx + ny;
			struct stats_test t;

			distinct_samples(&seed, x, nx, y, ny);
			u = rank_u(x, nx, y, ny);
			/* all C(n, nx) rank sets of x are equally likely under H0 */
			for (unsigned mask = 0; mask < (1u << n); mask++) {
				double um;

				if ((size_t)popcount(mask) != nx)
					continue;
				um = u_of_mask(mask, nx, n);
				total++;
				le += um <= u;
				ge += um >= u;
			}
			p = 2 * fmin(le, ge) / total;
			p = p > 1 ? 1 : p;
			assert_int_equal(stats_mann_whitney(x, nx, y, ny, &t), 0);
			assert_true(t.exact);
			assert_near(t.statistic, u, 0);
			assert_near(t.p_value, p, 1e-12);
		}
	}
}

static void test_stats__mann_whitney_normal_approximation_is_close_to_exact(void **state)
{
	/* 10 against 10, no ties: the continuity-corrected normal
	 * approximation stays within 0.01 of the exact p (its error at this
	 * size is a few thousandths; a broken variance or correction would
	 * be off by far more) */
	uint64_t seed = 7;

	for (int round = 0; round < 50; round++) {
		double x[10], y[10];
		struct stats_test ex, as;

		distinct_samples(&seed, x, 10, y, 10);
		assert_int_equal(stats_mann_whitney_method(x, 10, y, 10, STATS_EXACT, &ex), 0);
		assert_int_equal(stats_mann_whitney_method(x, 10, y, 10, STATS_ASYMPTOTIC, &as), 0);
		assert_near(as.statistic, ex.statistic, 0);
		assert_near(as.p_value, ex.p_value, 0.01);
	}
}

static void test_stats__mann_whitney_ties_use_midranks(void **state)
{
	/* pooled 1 2 2 2 3: the 2s share rank 3, so x = {1, 2, 2} has rank
	 * sum 1 + 3 + 3 = 7 and U = 7 - 6 = 1; tie-corrected variance
	 * 3*2/12 * (6 - (27 - 3) / (5*4)) = 2.4, z = (|1 - 3| - 0.5) / sqrt(2.4) */
	static const double x[] = { 1, 2, 2 }, y[] = { 2, 3 };
	struct stats_test t;

	assert_int_equal(stats_mann_whitney(x, 3, y, 2, &t), 0);
	assert_false(t.exact);
	assert_near(t.statistic, 1, 1e-15);
	assert_near(t.p_value, erfc(1.5 / sqrt(2.4) / M_SQRT2), 1e-14);
	assert_int_equal(stats_mann_whitney_method(x, 3, y, 2, STATS_EXACT, &t), -1);
	assert_int_equal(stats_mann_whitney(x, 0, y, 2, &t), -1);
}

/* Two samples fully apart, ties only within them (a KPI rounded to
 * whole numbers): the one labelling of the values that puts them apart
 * is the only one as extreme, so p is 2 / C(10, 5) = 2 / 252 exactly;
 * the normal approximation said 0.0114.  A tie across the samples is
 * not fully apart and keeps the approximation. */
static void test_stats__mann_whitney_fully_apart_with_ties_is_exact(void **state)
{
	static const double x[] = { 999, 1000, 1001, 999, 1000 }, y[] = { 919, 920, 921, 919, 920 },
			    z[] = { 919, 920, 921, 999, 920 };
	struct stats_test t;

	assert_int_equal(stats_mann_whitney(x, 5, y, 5, &t), 0);
	assert_true(t.exact);
	assert_near(t.statistic, 25, 0);
	assert_near(t.p_value, 2.0 / 252, 1e-15);
	assert_int_equal(stats_mann_whitney(y, 5, x, 5, &t), 0);
	assert_near(t.statistic, 0, 0);
	assert_near(t.p_value, 2.0 / 252, 1e-15);
	assert_int_equal(stats_mann_whitney(x, 5, z, 5, &t), 0);
	assert_false(t.exact);
	assert_true(t.p_value > 2.0 / 252);
}

static void test_stats__ks_matches_known_small_case(void **state)
{
	/* scipy.stats.ks_2samp([1, 2, 3], [4, 5, 6]) = (1.0, 0.1): only 2
	 * of the C(6, 3) = 20 orderings are as extreme */
	static const double x[] = { 1, 2, 3 }, y[] = { 4, 5, 6 };
	struct stats_test t;

	assert_int_equal(stats_ks_2samp(x, 3, y, 3, &t), 0);
	assert_true(t.exact);
	assert_near(t.statistic, 1, 0);
	assert_near(t.p_value, 0.1, 1e-14);
	assert_int_equal(stats_ks_2samp(x, 3, y, 0, &t), -1);
}

/* The smallest p the exact test can give: both samples apart, 2 of the
 * C(nx + ny, nx) orderings. */
static void test_stats__ks_min_p_is_two_orderings(void **state)
{
	static const double x[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }, y[] = { 20, 21 };
	struct stats_test t;

	(void)state;
	assert_near(stats_ks_min_p(3, 3), 0.1, 1e-14);
	assert_near(stats_ks_min_p(12, 2), 2.0 / 91, 1e-14);
	assert_near(stats_ks_min_p(2, 12), 2.0 / 91, 1e-14);
	assert_near(stats_ks_min_p(5, 4), 2.0 / 126, 1e-14);
	assert_near(stats_ks_min_p(1, 1), 1, 0);
	assert_true(stats_ks_min_p(1000, 1000) < 1e-290);
	assert_int_equal(stats_ks_2samp(x, 12, y, 2, &t), 0);
	assert_near(t.p_value, stats_ks_min_p(12, 2), 1e-12);
}

/* D of the assignment `mask` (bit r: the r-th smallest value is x's). */
static double ks_d_of_mask(unsigned mask, size_t nx, size_t ny)
{
	double cx = 0, cy = 0, d = 0;

	for (size_t r = 0; r < nx + ny; r++) {
		if (mask & (1u << r))
			cx++;
		else
			cy++;
		d = fmax(d, fabs(cx / (double)nx - cy / (double)ny));
	}
	return d;
}

static void test_stats__ks_exact_matches_enumeration(void **state)
{
	uint64_t seed = 1234;

	for (size_t nx = 1; nx <= 8; nx++) {
		for (size_t ny = 1; ny <= 8; ny++) {
			double x[8], y[8], total = 0, extreme = 0, d = 0;
			size_t n = nx + ny;
			unsigned obs = 0;
			struct stats_test t;

			distinct_samples(&seed, x, nx, y, ny);
			/* the observed assignment of ranks to x */
			for (size_t r = 0; r < n; r++) {
				double v = (double)r * 1.5 + 10;

				for (size_t i = 0; i < nx; i++)
					if (x[i] == v)
						obs |= 1u << r;
			}
			d = ks_d_of_mask(obs, nx, ny);
			for (unsigned mask = 0; mask < (1u << n); mask++) {
				if ((size_t)popcount(mask) != nx)
					continue;
				total++;
				extreme += ks_d_of_mask(mask, nx, ny) >= d - 1e-12;
			}
			assert_int_equal(stats_ks_2samp(x, nx, y, ny, &t), 0);
			assert_true(t.exact);
			assert_near(t.statistic, d, 1e-12);
			assert_near(t.p_value, extreme / total, 1e-12);
		}
	}
}

static void test_stats__kolmogorov_sf_matches_critical_values(void **state)
{
	/* asymptotic critical values of the Kolmogorov distribution
	 * (Smirnov 1948; the c(alpha) of every KS table) */
	assert_near(stats_kolmogorov_sf(1.2238), 0.10, 5e-4);
	assert_near(stats_kolmogorov_sf(1.3581), 0.05, 5e-4);
	assert_near(stats_kolmogorov_sf(1.6276), 0.01, 5e-5);
	assert_near(stats_kolmogorov_sf(0.1), 1, 0);
}

static void test_stats__ks_large_samples_use_the_asymptotic_p(void **state)
{
	/* 150 against 150 (no exact count beyond 10000 pairs); x shifted
	 * by 30 of 150 positions: D = 30/150 = 0.2, and p follows from the
	 * Kolmogorov series with Stephens' correction */
	double x[150], y[150], en = 75, s = sqrt(en);
	struct stats_test t;

	for (int i = 0; i < 150; i++) {
		x[i] = i + 29.5;
		y[i] = i;
	}
	assert_int_equal(stats_ks_2samp(x, 150, y, 150, &t), 0);
	assert_false(t.exact);
	assert_near(t.statistic, 0.2, 1e-12);
	assert_near(t.p_value, stats_kolmogorov_sf((s + 0.12 + 0.11 / s) * 0.2), 1e-12);
	assert_true(t.p_value > 0.002 && t.p_value < 0.006);
}

static void test_stats__ci_mean_uses_student_t(void **state)
{
	/* mean 5, s = sqrt(32/7), n 8: 5 -+ t(0.975, 7) s / sqrt 8 with
	 * t(0.975, 7) = 2.364624 from the tables */
	double lo, hi, h = 2.364624 * sqrt(32.0 / 7) / sqrt(8);

	assert_int_equal(stats_ci_mean(textbook, 8, 0.95, &lo, &hi), 0);
	assert_near(lo, 5 - h, 1e-5);
	assert_near(hi, 5 + h, 1e-5);
	assert_int_equal(stats_ci_mean(textbook, 1, 0.95, &lo, &hi), -1);
	assert_int_equal(stats_ci_mean(textbook, 8, 1.5, &lo, &hi), -1);
}

/* stats_ci_median of v[0..n) at level is [lo, hi] exactly. */
static void assert_ci_median(const double *v, size_t n, double level, double lo, double hi)
{
	double got_lo, got_hi;

	assert_int_equal(stats_ci_median(v, n, level, &got_lo, &got_hi), 0);
	assert_near(got_lo, lo, 0);
	assert_near(got_hi, hi, 0);
}

static void test_stats__ci_median_uses_binomial_order_statistics(void **state)
{
	/* n = 10: P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024, so
	 * the 95% interval is [x(2), x(9)] (coverage 97.9%, the textbook
	 * answer); n = 5 cannot reach 95% (1 - 2/32 = 93.75%): min..max */
	static const double v[] = { 9, 1, 8, 2, 7, 3, 6, 4, 5, 10 };
	double lo, hi;

	assert_ci_median(v, 10, 0.95, 2, 9);
	assert_ci_median(v, 5, 0.95, 1, 9);
	/* 90% with n = 10: 11/1024 <= 0.05 < 56/1024: still [x(2), x(9)] */
	assert_ci_median(v, 10, 0.90, 2, 9);
	/* 80% with n = 10: 0.0547 <= 0.1 < P(B <= 3) = 0.172: [x(3), x(8)] */
	assert_ci_median(v, 10, 0.80, 3, 8);
	assert_int_equal(stats_ci_median(v, 0, 0.95, &lo, &hi), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats__summaries_match_textbook_example),
		cmocka_unit_test(test_stats__mad_matches_wikipedia_example),
		cmocka_unit_test(test_stats__quantile_interpolates_like_r_type_7),
		cmocka_unit_test(test_stats__change_percent_is_relative_to_the_first),
		cmocka_unit_test(test_stats__incbeta_matches_closed_forms),
		cmocka_unit_test(test_stats__t_quantiles_match_tables),
		cmocka_unit_test(test_stats__mann_whitney_matches_scipy_docs_example),
		cmocka_unit_test(test_stats__mann_whitney_exact_matches_enumeration),
		cmocka_unit_test(test_stats__mann_whitney_normal_approximation_is_close_to_exact),
		cmocka_unit_test(test_stats__mann_whitney_ties_use_midranks),
		cmocka_unit_test(test_stats__mann_whitney_fully_apart_with_ties_is_exact),
		cmocka_unit_test(test_stats__ks_matches_known_small_case),
		cmocka_unit_test(test_stats__ks_exact_matches_enumeration),
		cmocka_unit_test(test_stats__ks_min_p_is_two_orderings),
		cmocka_unit_test(test_stats__kolmogorov_sf_matches_critical_values),
		cmocka_unit_test(test_stats__ks_large_samples_use_the_asymptotic_p),
		cmocka_unit_test(test_stats__ci_mean_uses_student_t),
		cmocka_unit_test(test_stats__ci_median_uses_binomial_order_statistics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
