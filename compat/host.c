// SPDX-License-Identifier: GPL-2.0
#include "compat/host.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

int perf_event_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int level = 2;

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = 2;
		fclose(f);
	}
	return level;
}

/* A whole number from a /proc file, or def. */
static long long proc_number(const char *path, long long def)
{
	FILE *f = fopen(path, "re");
	long long v = def;

	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = def;
		fclose(f);
	}
	return v;
}

unsigned int perf_event_max_sample_rate(void)
{
	long long v = proc_number("/proc/sys/kernel/perf_event_max_sample_rate", 100000);

	return v > 0 && v < UINT32_MAX ? (unsigned int)v : 100000;
}

uint64_t mem_available_bytes(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	unsigned long long kb = 0;
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kb * 1024;
}

const char *kernel_release(void)
{
	static struct utsname u;

	if (!u.release[0] && uname(&u))
		return "unknown";
	return u.release;
}

bool kernel_cuts_syscall_user_stacks(const char *release, const char *machine)
{
	int major, minor;

	if (strcmp(machine, "x86_64") || sscanf(release, "%d.%d", &major, &minor) != 2)
		return false;
	return major < 4 || (major == 4 && minor < 16);
}
