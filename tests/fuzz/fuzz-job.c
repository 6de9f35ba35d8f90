/* libFuzzer harness for the job parser (orchestrator/job/job.c): the input is
 * a job file's YAML bytes.  A job that parses must also turn into the
 * agent's job.conf.  Built and run by run-fuzz.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job job;

	/* a name without a directory: relative kconfig paths resolve in the
	 * fuzzer's working directory, where there are none */
	if (job_parse_buffer(&job, "fuzz.yaml", (const char *)data, size) == 0) {
		struct strbuf conf = STRBUF_INIT;

		job_agent_conf(&job, 1 + (size % 8), &conf);
		strbuf_release(&conf);
		job_release(&job);
	}
	return 0;
}
