/* Statistics over samples.  Pure. */
#ifndef KLAB_STATS_H
#define KLAB_STATS_H

#include <stddef.h>

double stats_mean(const double *v, size_t n);
/* Sample standard deviation (n - 1); 0 for n < 2. */
double stats_stddev(const double *v, size_t n);
/* Median (the array is not modified). */
double stats_median(const double *v, size_t n);
/* stddev / |mean| in percent; 0 when the mean is 0. */
double stats_cv_percent(const double *v, size_t n);

#endif
