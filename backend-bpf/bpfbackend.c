// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf backend. A BPF program on one cpu-clock event per CPU counts
 * {tgid, comm, user stack id, kernel stack id} in one of two hash maps; only
 * unique stacks and counts cross to user space. When the active map is half
 * full, the program is switched to the other map and the full one is drained
 * into the core and emptied, so long runs lose nothing. Dummy side-band
 * events keep the process tracker current, as in the perf backend.
 *
 * This is the only code that includes libbpf.h and the skeleton.
 */
#include "backend-bpf/bpfbackend.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "backend-bpf/convert.h"
#include "backend-bpf/dwarf.h"
#include "backend-bpf/shared_maps.h"
#include "backend-perfring/ringset.h"
#include "bpf/profile.skel.h"
#include "bpf/profile_pidns.skel.h"
#include "compat/features.h"
#include "compat/perf_event.h"
#include "compat/pidns.h"
#include "core/hashmap.h"
#include "core/log.h"

#define SIDEBAND_PAGES 32
#define MIN_MAP_ENTRIES 1024
/*
 * Drain at least this often: the work is spread over the run, and the
 * report after the end waits only for what the last second counted.
 */
#define DRAIN_PERIOD_MS 1000
/* Entries moved per batch syscall (5.6+). */
#define BATCH_ENTRIES 4096

struct backend {
	struct profile_core *core;
	struct profile_bpf *skel;
	pid_t target;
	int *event_fds;
	int nr_events;
	struct ring_set sideband;
	int counts_fd[2];
	int stacks_fd;
	int stats_fd;
	int config_fd;
	struct profile_config config;
	unsigned int hash_size;
	unsigned int stack_size;
	uint64_t new_keys_at_switch;
	int64_t last_switch_ms;
	int nr_cpus;			/* possible CPUs: the per-CPU value count */
	uint64_t drains;
	/* Stack ids never change meaning (the stack map is never cleared): read each once. */
	struct hashmap stack_cache;
	bool no_batch;			/* the kernel lacks batch map operations */
	struct bpf_dwarf *dwarf;	/* --unwind dwarf: stack copies instead of counts */
	/* A profiler inside a pid namespace counts with tasks' ids there. */
	struct profile_pidns_bpf *pidns;
};

#define PIDNS_WHY "the profiler runs in a pid namespace, where the bpf backend needs " \
		  "bpf_get_ns_current_pid_tgid (Linux 5.7)"

/* Dwarf records arrive every few milliseconds: look more often than the side-band needs. */
#define DWARF_POLL_MS 25

/* A stack map value, kept to its depth (most stacks are far shallower than the map's 127). */
struct stack_copy {
	int32_t id;
	uint64_t ips[];		/* zero-terminated unless PROFILE_MAX_STACK_DEPTH long */
};

static uint64_t stack_hash(const void *key)
{
	return hash_u64((uint64_t)(uint32_t)*(const int32_t *)key);
}

static bool stack_equal(const void *a, const void *b)
{
	return *(const int32_t *)a == *(const int32_t *)b;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int need = level == LIBBPF_WARN ? 1 : level == LIBBPF_INFO ? 2 : 3;

	if (log_verbosity() < need)
		return 0;
	fputs("profile: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

static void set_sizes(struct profile_bpf *skel, unsigned int hash, unsigned int stack,
		      unsigned int nr_ids)
{
	bpf_map__set_max_entries(skel->maps.counts0, hash);
	bpf_map__set_max_entries(skel->maps.counts1, hash);
	bpf_map__set_max_entries(skel->maps.stacks, stack);
	bpf_map__set_max_entries(skel->maps.filter_ids, nr_ids ? nr_ids : 1);
}

/* Open and load the program with these map sizes. Returns the skeleton or NULL, errno set. */
static struct profile_bpf *load_program(unsigned int hash, unsigned int stack, unsigned int nr_ids)
{
	struct profile_bpf *skel;
	int err;

	libbpf_set_print(libbpf_log);
	skel = profile_bpf__open();
	if (!skel)
		return NULL;
	set_sizes(skel, hash, stack, nr_ids);
	err = profile_bpf__load(skel);
	if (err) {
		profile_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/* The counting program for a profiler in a pid namespace, on the loaded one's maps. */
static struct profile_pidns_bpf *load_pidns_program(struct profile_bpf *counting)
{
	struct profile_pidns_bpf *skel = profile_pidns_bpf__open();
	int err;

	if (!skel)
		return NULL;
	/* Settings, filter, stack ids, statistics and counts: all the counting program's. */
	err = shared_maps__reuse(skel->obj, counting->obj);
	if (!err)
		err = profile_pidns_bpf__load(skel);
	if (err) {
		profile_pidns_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

static int bpf_probe(const struct profile_opts *opts, char *why, size_t len)
{
	struct perf_event_attr attr;
	struct profile_bpf *skel;
	bool system_wide = !opts->command;
	const char *partial = NULL;
	int fd, *cpus = NULL, nr;
	uint64_t ns_dev, ns_ino;
	bool in_pidns = pidns__in_child(&ns_dev, &ns_ino);

	switch (kernel_feature__state(FEAT_BPF_SYSCALL)) {
	case FEATURE_SUPPORTED:
		break;
	case FEATURE_NOT_PERMITTED:
		snprintf(why, len,
			 "bpf() refused (%s): needs root, or CAP_BPF and CAP_PERFMON; a seccomp "
			 "filter or kernel.unprivileged_bpf_disabled can also refuse it",
			 strerror(kernel_feature__errno(FEAT_BPF_SYSCALL)));
		return -EPERM;
	default:
		snprintf(why, len,
			 "bpf() is not available: kernel %s is older than 3.18 or built without "
			 "CONFIG_BPF_SYSCALL",
			 kernel_release());
		return -ENOSYS;
	}
	/* The map and program types the program uses, oldest kernel first. */
	for (enum kernel_feature f = FEAT_BPF_PERCPU_ARRAY; f <= FEAT_BPF_PERF_EVENT_PROG; f++)
		if (kernel_feature__state(f) == FEATURE_MISSING) {
			snprintf(why, len, "kernel %s is too old: %s is needed", kernel_release(),
				 kernel_feature__desc(f));
			return -EOPNOTSUPP;
		}

	/* The honest probe: load the real program (with small maps). */
	skel = load_program(1, 1, 1);
	if (!skel) {
		int err = errno;

		if (err == EPERM || err == EACCES)
			snprintf(why, len, "loading the BPF program: %s (needs root, or CAP_BPF "
				 "and CAP_PERFMON)", strerror(err));
		else
			snprintf(why, len, "the kernel refused the BPF program: %s (-vv shows "
				 "the verifier's log)", strerror(err));
		return -err;
	}
	if (options__dwarf(opts)) {
		bool task_regs;
		int err = bpf_dwarf__probe(skel, libbpf_num_possible_cpus(), &task_regs);

		profile_bpf__destroy(skel);
		if (err) {
			snprintf(why, len, "the kernel refused the stack-copy program of --unwind "
				 "dwarf: %s (-vv shows the verifier's log)", strerror(-err));
			return err;
		}
		if (!task_regs && in_pidns) {
			snprintf(why, len, "%s", PIDNS_WHY);
			return -EOPNOTSUPP;
		}
		if (!task_regs)
			partial = "samples taken in kernel mode would get frame-pointer user "
				  "stacks (bpf_task_pt_regs needs Linux 5.15 with BTF)";
	} else if (in_pidns) {
		struct profile_pidns_bpf *pidns = load_pidns_program(skel);
		int err = errno;

		profile_pidns_bpf__destroy(pidns);
		profile_bpf__destroy(skel);
		if (!pidns) {
			snprintf(why, len, "%s: %s", PIDNS_WHY, strerror(err));
			return -err;
		}
	} else {
		profile_bpf__destroy(skel);
	}

	nr = ring_set__cpus(opts, &cpus);
	if (nr < 0) {
		snprintf(why, len, "cannot read the online CPUs: %s", strerror(-nr));
		return nr;
	}
	ring_set__cpu_clock_attr(&attr, opts, !system_wide);
	attr.enable_on_exec = 0;
	fd = sys_perf_event_open(&attr, system_wide ? -1 : 0, system_wide ? cpus[0] : -1, -1,
				 PERF_FLAG_FD_CLOEXEC);
	free(cpus);
	if (fd < 0) {
		perf_open_error(fd, system_wide, why, len);
		return fd;
	}
	close(fd);
	if (partial) {
		snprintf(why, len, "%s", partial);
		return PROBE_PARTIAL;
	}
	return 0;
}

/* Where pre-5.11 kernels charge maps to RLIMIT_MEMLOCK, large maps fail: shrink them. */
static struct profile_bpf *load_sized(struct backend *b, unsigned int nr_ids)
{
	const struct profile_opts *o = b->core->opts;
	struct profile_bpf *skel;

	b->hash_size = o->hash_storage_size;
	b->stack_size = o->stack_storage_size;
	for (;;) {
		skel = load_program(b->hash_size, b->stack_size, nr_ids);
		if (skel)
			break;
		if ((errno != EPERM && errno != ENOMEM && errno != E2BIG) ||
		    (b->hash_size <= MIN_MAP_ENTRIES && b->stack_size <= MIN_MAP_ENTRIES)) {
			pr_warn("bpf: loading the program: %s\n", strerror(errno));
			return NULL;
		}
		if (b->stack_size > MIN_MAP_ENTRIES)
			b->stack_size /= 2;
		else
			b->hash_size /= 2;
	}
	if (b->hash_size != o->hash_storage_size || b->stack_size != o->stack_storage_size)
		pr_warn("warning: the kernel refused maps of the asked size (locked memory); "
			"using --stack-storage-size %u --hash-storage-size %u\n",
			b->stack_size, b->hash_size);
	return skel;
}

static int write_config(struct backend *b)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(b->config_fd, &zero, &b->config, BPF_ANY))
		return -errno;
	return 0;
}

static int setup_maps(struct backend *b)
{
	const struct profile_opts *o = b->core->opts;
	const pid_t *ids = o->nr_pids ? o->pids : o->tids;
	int nr_ids = o->nr_pids ? o->nr_pids : o->nr_tids;
	int fd = bpf_map__fd(b->skel->maps.filter_ids);
	__u8 one = 1;

	for (int i = 0; i < nr_ids; i++) {
		__u32 id = (__u32)ids[i];

		if (bpf_map_update_elem(fd, &id, &one, BPF_ANY))
			return -errno;
	}
	b->config.flags |= (o->kernel_only ? 0 : PROFILE_CFG_USER_STACK) |
			  (o->user_only ? 0 : PROFILE_CFG_KERNEL_STACK) |
			  (o->include_idle ? PROFILE_CFG_INCLUDE_IDLE : 0) |
			  (o->nr_pids ? PROFILE_CFG_FILTER_TGID : 0) |
			  (o->nr_tids ? PROFILE_CFG_FILTER_TID : 0);
	b->config.active_counts = 0;
	return write_config(b);
}

static int attach_events(struct backend *b)
{
	int prog_fd = b->dwarf	  ? bpf_dwarf__prog_fd(b->dwarf)
		      : b->pidns ? bpf_program__fd(b->pidns->progs.profile_sample_pidns)
				 : bpf_program__fd(b->skel->progs.profile_sample);
	struct perf_event_attr attr;
	int *cpus = NULL, nr, err = 0;
	char why[256];

	nr = ring_set__cpus(b->core->opts, &cpus);
	if (nr < 0)
		return nr;
	b->event_fds = calloc(nr, sizeof(*b->event_fds));
	if (!b->event_fds) {
		free(cpus);
		return -ENOMEM;
	}
	for (int i = 0; i < nr; i++) {
		int fd;

		ring_set__cpu_clock_attr(&attr, b->core->opts, b->target > 0);
		fd = sys_perf_event_open(&attr, b->target > 0 ? b->target : -1, cpus[i], -1,
					 PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			perf_open_error(fd, b->target <= 0, why, sizeof(why));
			pr_warn("%s (CPU %d)\n", why, cpus[i]);
			err = fd;
			break;
		}
		b->event_fds[b->nr_events++] = fd;
		/* The raw ioctl, not a libbpf link: enabling is ours (enable_on_exec). */
		if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
			err = -errno;
			pr_warn("bpf: attaching to the cpu-clock event of CPU %d: %s\n", cpus[i],
				strerror(-err));
			break;
		}
	}
	free(cpus);
	return err;
}

/* A dummy event per CPU: no samples, only the records that track processes. */
static void sideband_attr(struct perf_event_attr *attr, const struct profile_opts *o, bool launch)
{
	ring_set__cpu_clock_attr(attr, o, launch);
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->freq = 0;
	attr->sample_freq = 0;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	ring_set__track_tasks(attr);
}

static void bpf_close(struct backend *b);
static const uint64_t *cached_stack(void *ctx, int32_t id);

static int bpf_open(struct backend **out, struct profile_core *core, pid_t target)
{
	const struct profile_opts *o = core->opts;
	struct perf_event_attr attr;
	uint64_t ns_dev, ns_ino;
	struct backend *b;
	int err;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->core = core;
	b->target = target;
	hashmap__init(&b->stack_cache, stack_hash, stack_equal);
	b->nr_cpus = libbpf_num_possible_cpus();
	if (b->nr_cpus <= 0) {
		free(b);
		return -EINVAL;
	}
	b->skel = load_sized(b, (unsigned int)(o->nr_pids + o->nr_tids));
	if (!b->skel) {
		err = -errno;
		goto err_out;
	}
	b->counts_fd[0] = bpf_map__fd(b->skel->maps.counts0);
	b->counts_fd[1] = bpf_map__fd(b->skel->maps.counts1);
	b->stacks_fd = bpf_map__fd(b->skel->maps.stacks);
	b->stats_fd = bpf_map__fd(b->skel->maps.stats);
	b->config_fd = bpf_map__fd(b->skel->maps.config);
	if (options__dwarf(o)) {
		b->dwarf = bpf_dwarf__open(core, b->skel, b->nr_cpus, cached_stack, b);
		if (!b->dwarf) {
			err = -errno;
			pr_warn("bpf: loading the stack-copy program: %s\n", strerror(errno));
			goto err_out;
		}
		b->config.dump_chunks = bpf_dwarf__chunks(o->stack_dump_size);
	}
	if (pidns__in_child(&ns_dev, &ns_ino)) {
		if (b->dwarf ? !bpf_dwarf__has_task_regs(b->dwarf)
			     : !(b->pidns = load_pidns_program(b->skel))) {
			err = b->dwarf ? -EOPNOTSUPP : -errno;
			pr_warn("bpf: %s\n", PIDNS_WHY);
			goto err_out;
		}
		b->config.flags |= PROFILE_CFG_PIDNS;
		b->config.pidns_dev = ns_dev;
		b->config.pidns_ino = ns_ino;
		pr_info("bpf: in pid namespace %llu: tasks are named by their ids there\n",
			(unsigned long long)b->config.pidns_ino);
	}
	err = setup_maps(b);
	if (err) {
		pr_warn("bpf: writing the settings map: %s\n", strerror(-err));
		goto err_out;
	}
	err = attach_events(b);
	if (err)
		goto err_out;
	sideband_attr(&attr, o, target > 0);
	err = ring_set__open(&b->sideband, "side-band", core, &attr, &target, 1, SIDEBAND_PAGES);
	if (err)
		goto err_out;
	pr_info("bpf: %d event(s); maps: %u stacks, 2 x %u counts\n", b->nr_events,
		b->stack_size, b->hash_size);
	*out = b;
	return 0;

err_out:
	bpf_close(b);
	return err;
}

static int bpf_start(struct backend *b)
{
	int err;

	b->last_switch_ms = now_ms();
	if (b->target > 0)
		return 0;	/* enable_on_exec */
	err = ring_set__enable(&b->sideband);
	if (err)
		return err;
	for (int i = 0; i < b->nr_events; i++)
		if (ioctl(b->event_fds[i], PERF_EVENT_IOC_ENABLE, 0)) {
			err = -errno;
			pr_warn("bpf: enabling the event: %s\n", strerror(-err));
			return err;
		}
	return 0;
}

static int bpf_wait(struct backend *b, int wake_fd, int timeout_ms)
{
	if (b->dwarf && timeout_ms > DWARF_POLL_MS)
		timeout_ms = DWARF_POLL_MS;
	return ring_set__wait(&b->sideband, wake_fd, timeout_ms);
}

static uint64_t read_stat(struct backend *b, enum profile_stat slot)
{
	uint64_t vals[b->nr_cpus], sum = 0;
	__u32 key = slot;

	if (bpf_map_lookup_elem(b->stats_fd, &key, vals))
		return 0;
	for (int i = 0; i < b->nr_cpus; i++)
		sum += vals[i];
	return sum;
}

/* The stack of id, read from the kernel once per run. NULL if the map lacks it. */
static const uint64_t *lookup_stack(struct backend *b, struct hashmap *cache, int32_t id)
{
	uint64_t ips[PROFILE_MAX_STACK_DEPTH];
	unsigned int depth = 0;
	struct stack_copy *sc;

	if (id < 0)
		return NULL;
	sc = hashmap__find(cache, &id);
	if (sc)
		return sc->ips;
	if (bpf_map_lookup_elem(b->stacks_fd, &id, ips))
		return NULL;
	while (depth < PROFILE_MAX_STACK_DEPTH && ips[depth])
		depth++;
	/* One more slot for the terminating zero, unless the stack fills the map's value. */
	sc = calloc(1, sizeof(*sc) + (depth + (depth < PROFILE_MAX_STACK_DEPTH)) * sizeof(ips[0]));
	if (!sc)
		return NULL;
	sc->id = id;
	memcpy(sc->ips, ips, depth * sizeof(ips[0]));
	if (hashmap__add(cache, &sc->id, sc)) {
		free(sc);
		return NULL;
	}
	return sc->ips;
}

static const uint64_t *cached_stack(void *ctx, int32_t id)
{
	struct backend *b = ctx;

	return lookup_stack(b, &b->stack_cache, id);
}

static int add_entry(struct backend *b, const struct profile_key *key, uint64_t count)
{
	uint64_t kbuf[MAX_STACK_DEPTH + 1];
	const uint64_t *kstack, *ustack;
	struct sample s;

	kstack = lookup_stack(b, &b->stack_cache, key->kernel_stack_id);
	ustack = lookup_stack(b, &b->stack_cache, key->user_stack_id);
	bpf_convert__sample(key, count, kstack, ustack, kbuf, &s);
	return core__add_sample(b->core, &s);
}

/* Linux 5.6+: thousands of entries per system call. Returns -EOPNOTSUPP before that. */
static int drain_counts_batch(struct backend *b, int fd)
{
	struct profile_key *keys = calloc(BATCH_ENTRIES, sizeof(*keys));
	uint64_t *values = calloc(BATCH_ENTRIES, sizeof(*values));
	struct profile_key token;	/* the kernel's cursor: at most a key's size */
	bool first = true, done = false;
	int err = 0;

	if (!keys || !values) {
		err = -ENOMEM;
		goto out;
	}
	while (!done && !err) {
		__u32 count = BATCH_ENTRIES;

		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &token, &token, keys,
						      values, &count, NULL);
		if (err == -ENOENT) {
			done = true;	/* the last batch, possibly empty */
			err = 0;
		} else if (err) {
			/* -524 is the kernel-internal ENOTSUPP that bpf() leaks. */
			if (first && (err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP || err == -524))
				err = -EOPNOTSUPP;
			break;
		}
		first = false;
		for (__u32 i = 0; i < count && !err; i++)
			err = add_entry(b, &keys[i], values[i]);
	}
out:
	free(keys);
	free(values);
	return err;
}

/* Linux 4.9: walk from a key no sample can produce, look up, then delete. */
static int drain_counts_walk(struct backend *b, int fd)
{
	struct profile_key key, *keys = NULL;
	size_t nr = 0, cap = 0;
	int err = 0;

	/* A comm without a NUL cannot exist: the walk starts at the first key. */
	memset(&key, 0xff, sizeof(key));
	for (;;) {
		if (nr == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct profile_key *tmp = realloc(keys, ncap * sizeof(*keys));

			if (!tmp) {
				free(keys);
				return -ENOMEM;
			}
			keys = tmp;
			cap = ncap;
		}
		if (bpf_map_get_next_key(fd, nr ? &keys[nr - 1] : &key, &keys[nr]))
			break;
		nr++;
	}
	for (size_t i = 0; i < nr && !err; i++) {
		uint64_t count;

		if (!bpf_map_lookup_elem(fd, &keys[i], &count))
			err = add_entry(b, &keys[i], count);
	}
	for (size_t i = 0; i < nr; i++)
		bpf_map_delete_elem(fd, &keys[i]);
	free(keys);
	return err;
}

/* Move every entry of one count map into the core, and empty the map. */
static int drain_counts(struct backend *b, int fd)
{
	int err;

	if (!b->no_batch) {
		err = drain_counts_batch(b, fd);
		if (err != -EOPNOTSUPP)
			return err;
		b->no_batch = true;
		pr_info("bpf: no batch map operations (Linux < 5.6): draining key by key\n");
	}
	return drain_counts_walk(b, fd);
}

/* Point the program at the other map, let running samples finish, drain the old one. */
static int switch_and_drain(struct backend *b)
{
	unsigned int old = b->config.active_counts;
	struct timespec grace = { 0, 2000000 };
	int err;

	b->config.active_counts = !old;
	err = write_config(b);
	if (err)
		return err;
	/* A program run is microseconds; 2 ms covers every CPU's run in flight. */
	nanosleep(&grace, NULL);
	b->drains++;
	pr_debug("bpf: count map %u half full; draining it\n", old);
	return drain_counts(b, b->counts_fd[old]);
}

static int bpf_drain(struct backend *b)
{
	uint64_t new_keys;
	int err;

	err = ring_set__drain(&b->sideband);
	if (err)
		return err;
	if (b->dwarf)
		return bpf_dwarf__drain(b->dwarf);
	new_keys = read_stat(b, PROFILE_STAT_NEW_KEYS);
	if (new_keys - b->new_keys_at_switch >= b->hash_size / 2 ||
	    now_ms() - b->last_switch_ms >= DRAIN_PERIOD_MS) {
		b->new_keys_at_switch = new_keys;
		b->last_switch_ms = now_ms();
		return switch_and_drain(b);
	}
	return 0;
}

static int bpf_stop(struct backend *b)
{
	int err;

	for (int i = 0; i < b->nr_events; i++)
		ioctl(b->event_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	ring_set__disable(&b->sideband);
	/* The last mappings first, then both count maps. */
	err = ring_set__drain(&b->sideband);
	if (!err && b->dwarf)
		err = bpf_dwarf__drain(b->dwarf);
	if (!err)
		err = drain_counts(b, b->counts_fd[0]);
	if (!err)
		err = drain_counts(b, b->counts_fd[1]);
	return err;
}

static void bpf_stats(const struct backend *b, struct backend_stats *st)
{
	struct backend *mb = (struct backend *)b;
	uint64_t full = read_stat(mb, PROFILE_STAT_HASH_FULL);
	uint64_t bad = ring_set__bad_records(&b->sideband);

	memset(st, 0, sizeof(*st));
	st->samples = read_stat(mb, PROFILE_STAT_SAMPLES);
	st->lost = full;
	st->lost_reason = "the in-kernel count table was full";
	st->hash_full = full > 0;
	if (b->dwarf) {
		st->lost += bpf_dwarf__lost(b->dwarf);
		if (bpf_dwarf__lost(b->dwarf))
			st->lost_reason = "the perf buffer of stack copies was full";
		bpf_dwarf__report(b->dwarf, read_stat(mb, PROFILE_STAT_NO_USER_REGS));
	}
	if (b->sideband.lost)
		pr_warn("warning: %llu side-band records lost: some exited processes may print "
			"[unknown]\n", (unsigned long long)b->sideband.lost);
	if (bad)
		pr_warn("warning: %llu malformed side-band records skipped\n",
			(unsigned long long)bad);
	pr_info("bpf: %llu samples, %llu mid-run drains\n", (unsigned long long)st->samples,
		(unsigned long long)b->drains);
}

static void bpf_close(struct backend *b)
{
	struct hashmap_entry *ent;
	size_t bkt;

	if (!b)
		return;
	hashmap__for_each(&b->stack_cache, bkt, ent)
		free(ent->value);
	hashmap__clear(&b->stack_cache);
	ring_set__close(&b->sideband);
	for (int i = 0; i < b->nr_events; i++)
		close(b->event_fds[i]);
	bpf_dwarf__close(b->dwarf);
	profile_pidns_bpf__destroy(b->pidns);
	free(b->event_fds);
	profile_bpf__destroy(b->skel);
	free(b);
}

const struct backend_ops bpf_backend_ops = {
	.name = "bpf",
	.probe = bpf_probe,
	.open = bpf_open,
	.start = bpf_start,
	.wait = bpf_wait,
	.drain = bpf_drain,
	.stop = bpf_stop,
	.stats = bpf_stats,
	.close = bpf_close,
};
