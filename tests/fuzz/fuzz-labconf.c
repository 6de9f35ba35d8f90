/* libFuzzer harness for the klab.conf parser (orchestrator/lab/lab-config.c):
 * the input is the file's bytes.  Built and run by run-fuzz.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lab/lab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lab lab;

	memset(&lab, 0, sizeof(lab));
	lab_config_parse(&lab, "klab.conf", (const char *)data, size);
	lab_config_release(&lab);
	return 0;
}
