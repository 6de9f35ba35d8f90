/* libFuzzer harness for the agent's job.conf reader (guests/agent/jobconf.c):
 * the input is the file the host puts into the initramfs.  A file that
 * parses must keep the reader's promises (argv terminated, values inside
 * the buffer).  Built and run by run-fuzz.sh. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the agent's reporting, formatted (so the fuzzer runs the formats) but
 * kept quiet */
static void quiet(const char *fmt, va_list ap)
{
	char buf[256];

	vsnprintf(buf, sizeof(buf), fmt, ap);
}

void jobconf_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	quiet(fmt, ap);
	va_end(ap);
}

int jobconf_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	quiet(fmt, ap);
	va_end(ap);
	return -1;
}

static int inside(const struct job_conf *jc, size_t len, const char *p)
{
	return p >= jc->buf && p <= jc->buf + len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job_conf jc = { .drop_caches = -1 };

	if (size > CONF_MAX + 1)
		return 0;
	/* as the agent reads it: the bytes, then a NUL */
	jc.buf = malloc(size + 1);
	if (!jc.buf)
		return 0;
	memcpy(jc.buf, data, size);
	jc.buf[size] = '\0';
	if (jobconf_parse(&jc, "job.conf", size) == 0) {
		if (!jc.argc || jc.argv[jc.argc] || jc.drop_caches > 3)
			abort();
		for (size_t i = 0; i < jc.argc; i++)
			if (!inside(&jc, size, jc.argv[i]))
				abort();
		for (size_t i = 0; i < jc.nr_env; i++)
			if (!inside(&jc, size, jc.env[i]) || !strchr(jc.env[i], '='))
				abort();
		/* perf-profile is on only when named, never by default */
		if (!jc.monitors && jobconf_monitor_named(&jc, "perf-profile"))
			abort();
		if (jc.monitors && !inside(&jc, size, jc.monitors))
			abort();
		for (size_t i = 0; i < jc.nr_settings; i++)
			if (!inside(&jc, size, jc.settings[i].value) || strstr(jc.settings[i].path, "/../"))
				abort();
	}
	jobconf_release(&jc);
	return 0;
}
