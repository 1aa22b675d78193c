// SPDX-License-Identifier: GPL-2.0
/*
 * A JIT in miniature: copies machine code for a counting loop into
 * anonymous executable memory, names it in /tmp/perf-PID.map, and runs it
 * for N seconds. With "foreign" the map file is handed to uid 65534 after
 * writing (run as root), which a profiler must not trust; with "nomap" no
 * map is written (a JIT without perf map support).
 * Usage: jit [seconds] [foreign|nomap]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/*
 * push rbp; mov rbp, rsp; mov ecx, 100000; 1: dec ecx; jnz 1b; pop rbp; ret
 * A frame pointer, as JITs keep: code without unwind tables is walked by it.
 */
static const unsigned char code[] = { 0x55, 0x48, 0x89, 0xe5, 0xb9, 0xa0, 0x86, 0x01, 0x00,
				      0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 2);
	unsigned char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void (*fn)(void) = (void (*)(void))(mem + 64);
	char path[64];
	FILE *f;

	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem + 64, code, sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (argc > 2 && !strcmp(argv[2], "nomap")) {
		printf("pid=%d\n", (int)getpid());
		fflush(stdout);
		while (now() < end)
			fn();
		return 0;
	}
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jitted_hot_loop\n", (unsigned long)(mem + 64), sizeof(code));
	fclose(f);
	if (argc > 2 && !strcmp(argv[2], "foreign") && chown(path, 65534, 65534))
		return 1;
	printf("map=%s\n", path);
	fflush(stdout);
	while (now() < end)
		fn();
	return 0;
}
