// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/lib/clock.h"
#include "core/proc/proctrack.h"
#include "core/proc/retire.h"
#include "core/sym/symbolize.h"
#include "tests/support/tests.h"

static struct mapping map_of(uint64_t start, uint64_t end, uint64_t pgoff, const char *path)
{
	return (struct mapping){ .start = start, .end = end, .pgoff = pgoff, .exec = true,
				 .path = (char *)path };
}

START_TEST(insert_trims_what_it_overlaps)
{
	struct addr_space as = { 0 };
	struct mapping a = map_of(0x1000, 0x5000, 0, "/a"), b = map_of(0x2000, 0x3000, 0, "/b");
	const struct mapping *m;

	ck_assert_int_eq(addr_space__insert(&as, &a), 0);
	ck_assert_int_eq(addr_space__insert(&as, &b), 0);
	ck_assert_uint_eq(as.nr_maps, 3);
	m = addr_space__find(&as, 0x1fff);
	ck_assert_str_eq(m->path, "/a");
	ck_assert_uint_eq(m->end, 0x2000);
	m = addr_space__find(&as, 0x2000);
	ck_assert_str_eq(m->path, "/b");
	m = addr_space__find(&as, 0x4000);
	ck_assert_str_eq(m->path, "/a");
	ck_assert_uint_eq(m->start, 0x3000);
	ck_assert_uint_eq(m->pgoff, 0x2000);	/* the tail keeps its file offset */
	ck_assert_ptr_null(addr_space__find(&as, 0x5000));
	ck_assert_ptr_null(addr_space__find(&as, 0xfff));

	/* A mapping that covers everything replaces everything. */
	struct mapping c = map_of(0x0, 0x10000, 0, "/c");

	ck_assert_int_eq(addr_space__insert(&as, &c), 0);
	ck_assert_uint_eq(as.nr_maps, 1);
	ck_assert_str_eq(addr_space__find(&as, 0x2500)->path, "/c");
	for (size_t i = 0; i < as.nr_maps; i++)
		free(as.maps[i].path);
	free(as.maps);
}
END_TEST

START_TEST(maps_file_keeps_executable_mappings)
{
	char path[] = "/tmp/profile-maps-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct addr_space as = { 0 };
	const struct mapping *m;

	fputs("55d0c0000000-55d0c0001000 r--p 00000000 08:01 1234   /usr/bin/app\n"
	      "55d0c0001000-55d0c0005000 r-xp 00001000 08:01 1234   /usr/bin/app\n"
	      "7f0000000000-7f0000100000 r-xp 00028000 08:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	      "7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0                          [vdso]\n"
	      "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n",
	      f);
	fclose(f);
	ck_assert_int_eq(addr_space__load_maps_file(&as, path), 0);
	unlink(path);
	ck_assert_uint_eq(as.nr_maps, 3);
	m = addr_space__find(&as, 0x55d0c0001234);
	ck_assert_str_eq(m->path, "/usr/bin/app");
	ck_assert_uint_eq(m->pgoff, 0x1000);
	ck_assert_uint_eq(m->ino, 1234);
	ck_assert_str_eq(addr_space__find(&as, 0x7f0000000010)->path,
			 "/usr/lib/x86_64-linux-gnu/libc.so.6");
	ck_assert_str_eq(addr_space__find(&as, 0x7ffc00000100)->path, "[vdso]");
	ck_assert_ptr_null(addr_space__find(&as, 0x55d0c0000010));	/* r--p */
	for (size_t i = 0; i < as.nr_maps; i++)
		free(as.maps[i].path);
	free(as.maps);
}
END_TEST

START_TEST(fork_copies_exec_resets_old_space_survives)
{
	struct proctrack *pt = proctrack__new();
	struct mapping a = map_of(0x1000, 0x2000, 0, "/parent");
	struct addr_space *parent, *child, *after_exec;

	/* pid 0 is never read from /proc: a clean start for the test. */
	ck_assert_int_eq(proctrack__exec(pt, 1000000, "parent", 0), 0);
	ck_assert_int_eq(proctrack__mmap(pt, 1000000, &a), 0);
	parent = proctrack__addr_space(pt, 1000000);
	ck_assert_int_eq(proctrack__fork(pt, 1000001, 1000000, 0), 0);
	child = proctrack__addr_space(pt, 1000001);
	ck_assert_ptr_ne(child, parent);
	ck_assert_str_eq(addr_space__find(child, 0x1800)->path, "/parent");

	ck_assert_int_eq(proctrack__exec(pt, 1000001, "child", 0), 0);
	after_exec = proctrack__addr_space(pt, 1000001);
	ck_assert_ptr_ne(after_exec, child);
	ck_assert_ptr_null(addr_space__find(after_exec, 0x1800));
	/* Stacks counted before the exec still resolve through the old space. */
	ck_assert_str_eq(addr_space__find(child, 0x1800)->path, "/parent");
	proctrack__free(pt);
}
END_TEST

/* Images are chosen by time, never by comm: pid reuse and exec in one interval. */
START_TEST(images_by_time)
{
	struct proctrack *pt = proctrack__new();
	struct addr_space *got[8], *first, *forked, *execd;

	/* 1000002 runs (time 100), its pid is reused by a fork (200), which execs (300). */
	ck_assert_int_eq(proctrack__exec(pt, 1000002, "victim", 100), 0);
	first = proctrack__addr_space(pt, 1000002);
	ck_assert_int_eq(proctrack__exec(pt, 1000003, "attacker", 50), 0);
	ck_assert_int_eq(proctrack__fork(pt, 1000002, 1000003, 200), 0);
	forked = proctrack__addr_space(pt, 1000002);
	ck_assert_int_eq(proctrack__exec(pt, 1000002, "victim", 300), 0);
	execd = proctrack__addr_space(pt, 1000002);

	/* Exact times: the one image that ran then, whatever the comm. */
	ck_assert_uint_eq(proctrack__images(pt, 1000002, 150, 150, got, 8), 1);
	ck_assert_ptr_eq(got[0], first);
	ck_assert_uint_eq(proctrack__images(pt, 1000002, 200, 200, got, 8), 1);
	ck_assert_ptr_eq(got[0], forked);
	ck_assert_uint_eq(proctrack__images(pt, 1000002, 250, 250, got, 8), 1);
	ck_assert_ptr_eq(got[0], forked);
	ck_assert_uint_eq(proctrack__images(pt, 1000002, 400, 400, got, 8), 1);
	ck_assert_ptr_eq(got[0], execd);
	/* No time: the current one. */
	ck_assert_uint_eq(proctrack__images(pt, 1000002, UINT64_MAX, UINT64_MAX, got, 8), 1);
	ck_assert_ptr_eq(got[0], execd);
	/* An interval: every image that ran in it, newest first. */
	ck_assert_uint_eq(proctrack__images(pt, 1000002, 150, 350, got, 8), 3);
	ck_assert_ptr_eq(got[0], execd);
	ck_assert_ptr_eq(got[1], forked);
	ck_assert_ptr_eq(got[2], first);
	ck_assert_uint_eq(proctrack__images(pt, 1000002, 210, 290, got, 8), 1);
	ck_assert_ptr_eq(got[0], forked);
	ck_assert_uint_eq(proctrack__images(pt, 1000002, 150, 350, got, 2), 2);
	/* The uid of a process never seen running is not known. */
	ck_assert_uint_eq(execd->uid, (uid_t)-1);
	proctrack__free(pt);
}
END_TEST

/*
 * Wait until pid has code of a file whose path contains needle mapped: its
 * exec is done (/proc/PID/exe changes before the new image is mapped).
 */
static void wait_mapped(pid_t pid, const char *needle)
{
	char path[64], line[4200];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "r");
		bool found = false;

		while (f && !found && fgets(line, sizeof(line), f))
			found = strstr(line, " r-xp ") && strstr(line, needle);
		if (f)
			fclose(f);
		if (found)
			return;
		usleep(10000);
	}
	ck_abort_msg("pid %d never mapped %s", (int)pid, needle);
}

/*
 * Side-band records lost (issue 22): the processes still running are read
 * again. A mapping the tracker missed is added; a process whose image it
 * got wrong (a lost exec) gets a new one with what /proc shows.
 */
START_TEST(resync_after_lost_records)
{
	struct proctrack *pt = proctrack__new();
	long page = sysconf(_SC_PAGESIZE);
	struct addr_space *before, *after;
	char self[64];
	void *extra;
	pid_t child;
	int fd;

	/* Our own process, known to the tracker, then a mapping it is not told of. */
	before = proctrack__addr_space(pt, getpid());
	ck_assert_ptr_nonnull(before);
	snprintf(self, sizeof(self), "/proc/%d/exe", (int)getpid());
	fd = open(self, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	extra = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(extra, MAP_FAILED);
	close(fd);
	ck_assert_ptr_null(addr_space__find(before, (uint64_t)(uintptr_t)extra));

	/* A process the tracker thinks runs another image (its exec record was lost). */
	child = fork();
	ck_assert_int_ge(child, 0);
	if (!child) {
		execl("/bin/sleep", "sleep", "5", (char *)NULL);
		_exit(127);
	}
	wait_mapped(child, "/sleep");
	ck_assert_int_eq(proctrack__exec(pt, child, "old", 10), 0);
	for (size_t i = 0; i < before->nr_maps; i++)
		ck_assert_int_eq(proctrack__mmap(pt, child, &before->maps[i]), 0);

	ck_assert_int_ge(proctrack__resync(pt, NULL, NULL, 20), 2);
	ck_assert_ptr_eq(proctrack__addr_space(pt, getpid()), before);
	ck_assert_ptr_nonnull(addr_space__find(before, (uint64_t)(uintptr_t)extra));
	after = proctrack__addr_space(pt, child);
	ck_assert_uint_eq(after->start_time, 20);
	ck_assert_ptr_nonnull(after->older);
	/* The new image is what runs: sleep's, not the test's. */
	bool sleep_mapped = false, test_mapped = false;

	for (size_t i = 0; i < after->nr_maps; i++) {
		sleep_mapped |= strstr(after->maps[i].path, "/sleep") != NULL;
		test_mapped |= strstr(after->maps[i].path, "check_profile") != NULL;
	}
	ck_assert(sleep_mapped && !test_mapped);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	munmap(extra, page);
	proctrack__free(pt);
}
END_TEST

/*
 * pid 5000000 ("parent", mapping a at 100) forks 5000001 at 200, which
 * execs "child" at 300: the three images. pids above the kernel's
 * PID_MAX_LIMIT (4194304): /proc never shows them.
 */
static void parent_forks_child(struct proctrack *pt, const struct mapping *a,
			       struct addr_space **parent, struct addr_space **forked,
			       struct addr_space **child)
{
	ck_assert_int_eq(proctrack__exec(pt, 5000000, "parent", 100), 0);
	ck_assert_int_eq(proctrack__mmap(pt, 5000000, a), 0);
	*parent = proctrack__addr_space(pt, 5000000);
	ck_assert_int_eq(proctrack__fork(pt, 5000001, 5000000, 200), 0);
	*forked = proctrack__addr_space(pt, 5000001);
	ck_assert_int_eq(proctrack__exec(pt, 5000001, "child", 300), 0);
	*child = proctrack__addr_space(pt, 5000001);
}

/* The pid's one image at time t is want. */
static void assert_image_at(struct proctrack *pt, pid_t pid, uint64_t t,
			    const struct addr_space *want)
{
	struct addr_space *out[4];

	ck_assert_uint_eq(proctrack__images(pt, pid, t, t, out, 4), 1);
	ck_assert_ptr_eq(out[0], want);
}

/*
 * Images that ended (an exec, an exit) give back their mappings once the
 * newest record is more than the grace past their end; a fork's shared
 * mappings stay with the parent while it runs; what a released image's
 * pid maps next is a new image's.
 */
START_TEST(ended_images_release_their_mappings_after_the_grace)
{
	struct proctrack *pt = proctrack__new();
	struct mapping a = map_of(0x1000, 0x2000, 0, "/parent"), b = map_of(0x5000, 0x6000, 0, "/b");
	struct addr_space *parent, *forked, *child;
	unsigned int gen;

	parent_forks_child(pt, &a, &parent, &forked, &child);
	ck_assert_int_eq(proctrack__mmap(pt, 5000001, &b), 0);
	/* A thread's exit is not the image's end; the main thread's is. */
	ck_assert_int_eq(proctrack__exit(pt, 5000001, 5000002, 350), 0);
	ck_assert_uint_eq(child->end_time, 0);
	ck_assert_int_eq(proctrack__exit(pt, 5000001, 5000001, 400), 0);
	ck_assert_int_eq(proctrack__exit(pt, 5000000, 5000000, 500), 0);
	ck_assert_uint_eq(proctrack__settle(pt, 1000), 0);	/* nothing is 1000 old */

	/* Time goes on (another process execs): the forked image's end is past the grace. */
	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 1350), 0);
	gen = forked->generation;
	ck_assert_uint_eq(proctrack__settle(pt, 1000), 1);
	ck_assert(forked->settled && !child->settled && !parent->settled);
	ck_assert_uint_eq(proctrack__release_settled(pt), 1);
	ck_assert(forked->released);
	ck_assert_uint_eq(forked->nr_maps, 0);
	ck_assert_uint_ne(forked->generation, gen);
	ck_assert_str_eq(addr_space__find(parent, 0x1800)->path, "/parent");
	ck_assert_uint_eq(proctrack__release_settled(pt), 0);

	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 2000), 0);
	ck_assert_uint_eq(proctrack__settle(pt, 1000), 2);
	ck_assert_uint_eq(proctrack__release_settled(pt), 2);
	ck_assert(parent->released && child->released);
	ck_assert_ptr_null(addr_space__find(parent, 0x1800));
	/* A late sample still finds its image (released: the pipeline counts it). */
	assert_image_at(pt, 5000001, 450, child);

	/* The pid taken by a process whose fork record was lost: its mappings are its own image's. */
	ck_assert_int_eq(proctrack__mmap(pt, 5000001, &a), 0);
	ck_assert_ptr_ne(proctrack__addr_space(pt, 5000001), child);
	ck_assert_ptr_eq(proctrack__addr_space(pt, 5000001)->older, child);
	ck_assert_str_eq(addr_space__find(proctrack__addr_space(pt, 5000001), 0x1800)->path,
			 "/parent");
	ck_assert_uint_eq(child->nr_maps, 0);
	proctrack__free(pt);
}
END_TEST

struct forgotten {
	unsigned int ids[8];
	unsigned int n;
};

static void note_forgotten(void *ctx, const struct addr_space *as)
{
	struct forgotten *f = ctx;

	ck_assert_uint_lt(f->n, 8);
	ck_assert(as->released);
	f->ids[f->n++] = as->id;
}

/*
 * Released images are freed (a busy host ends thousands of processes a
 * minute), each told to the caller first; a pid whose image went points at
 * a released one that maps nothing, so a late sample is still late, and
 * the pid's next image begins as usual.
 */
static size_t pooled_paths(const struct proctrack *pt)
{
	struct proctrack_counts c;

	proctrack__counts(pt, &c);
	return c.paths;
}

/*
 * A process maps 1,000 files once each, one over the other, under long
 * paths, and exits: each path goes when no mapping names it (the one it
 * replaced at once, the rest with its image a grace after its exit), and
 * a fork's copy holds its own (issue 32: the pool was never pruned).
 */
START_TEST(the_paths_of_an_exited_process_are_let_go)
{
	struct proctrack *pt = proctrack__new();
	static char path[4000];
	struct mapping m;

	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	ck_assert_int_eq(proctrack__exec(pt, 5000000, "maps", 100), 0);
	for (int i = 0; i < 1000; i++) {
		snprintf(path + 1, 12, "%010d", i);
		path[11] = 'p';
		m = map_of(0x10000, 0x11000, 0, path);
		ck_assert_int_eq(proctrack__mmap(pt, 5000000, &m), 0);
	}
	ck_assert_uint_eq(pooled_paths(pt), 1);
	/* A child shares the parent's mappings, then maps one of its own: both hold theirs. */
	ck_assert_int_eq(proctrack__fork(pt, 5000001, 5000000, 200), 0);
	m = map_of(0x20000, 0x21000, 0, "/child");
	ck_assert_int_eq(proctrack__mmap(pt, 5000001, &m), 0);
	ck_assert_uint_eq(pooled_paths(pt), 2);
	ck_assert_int_eq(proctrack__exit(pt, 5000001, 5000001, 300), 0);
	ck_assert_int_eq(proctrack__exit(pt, 5000000, 5000000, 400), 0);
	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 2000), 0);
	ck_assert_uint_ge(proctrack__settle(pt, 1000), 2);
	ck_assert_uint_ge(proctrack__release_settled(pt), 2);
	ck_assert_uint_eq(pooled_paths(pt), 0);
	proctrack__free(pt);
}
END_TEST

START_TEST(released_images_are_freed_and_their_pids_left_late)
{
	struct proctrack *pt = proctrack__new();
	struct mapping a = map_of(0x1000, 0x2000, 0, "/parent");
	struct forgotten f = { .n = 0 };
	struct addr_space *parent, *forked, *child, *runs, *gone, *again;
	unsigned int ids[3];

	parent_forks_child(pt, &a, &parent, &forked, &child);
	/* Another child that execs and runs on: only its forked image ends. */
	ck_assert_int_eq(proctrack__fork(pt, 5000003, 5000000, 210), 0);
	ck_assert_int_eq(proctrack__exec(pt, 5000003, "runs", 310), 0);
	runs = proctrack__addr_space(pt, 5000003);
	ck_assert_int_eq(proctrack__exit(pt, 5000001, 5000001, 400), 0);
	ck_assert_int_eq(proctrack__exit(pt, 5000000, 5000000, 500), 0);
	ids[0] = parent->id;
	ids[1] = forked->id;
	ids[2] = child->id;
	ck_assert_uint_eq(proctrack__free_released(pt, note_forgotten, &f), 0);

	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 2000), 0);
	ck_assert_uint_eq(proctrack__settle(pt, 1000), 4);
	ck_assert_uint_eq(proctrack__release_settled(pt), 4);
	ck_assert_uint_eq(proctrack__free_released(pt, note_forgotten, &f), 4);
	ck_assert_uint_eq(f.n, 4);
	for (unsigned int i = 0; i < 3; i++) {
		bool told = false;

		for (unsigned int k = 0; k < f.n; k++)
			told |= f.ids[k] == ids[i];
		ck_assert_msg(told, "image %u freed untold", ids[i]);
	}

	gone = proctrack__addr_space(pt, 5000001);
	ck_assert(gone->released && !gone->nr_maps);
	ck_assert_ptr_eq(proctrack__addr_space(pt, 5000000), gone);
	for (unsigned int i = 0; i < 3; i++)
		ck_assert_uint_ne(gone->id, ids[i]);
	assert_image_at(pt, 5000001, 450, gone);
	/* A running process's freed older image: a sample of its time is late, not the new one's. */
	ck_assert(!runs->released);
	ck_assert_ptr_eq(runs->older, gone);
	assert_image_at(pt, 5000003, 250, gone);
	assert_image_at(pt, 5000003, 320, runs);
	/* Its exit again (a late record) changes nothing. */
	ck_assert_int_eq(proctrack__exit(pt, 5000001, 5000001, 2100), 0);
	ck_assert(!gone->leader_exited);

	ck_assert_int_eq(proctrack__exec(pt, 5000001, "again", 2500), 0);
	again = proctrack__addr_space(pt, 5000001);
	ck_assert(!again->released);
	ck_assert_ptr_eq(again->older, gone);
	assert_image_at(pt, 5000001, 450, gone);
	assert_image_at(pt, 5000001, 2600, again);
	ck_assert_uint_eq(proctrack__free_released(pt, note_forgotten, &f), 0);
	proctrack__free(pt);
}
END_TEST

/* The tracker's per-thread and per-pid entries now. */
static struct proctrack_counts counts_of(const struct proctrack *pt)
{
	struct proctrack_counts c;

	proctrack__counts(pt, &c);
	return c;
}

/*
 * A host that starts a hundred processes a second must not keep an entry
 * per thread and pid until pids wrap: an exited thread's comm and its
 * process's kind go a grace after the exit, a pid's entry a grace after its
 * image was freed; a new thread or process that took the number keeps its
 * own, and a sample dated in a forgotten process's time is late, not the
 * next process's.
 */
START_TEST(exited_threads_and_freed_pids_are_forgotten_after_a_grace)
{
	struct proctrack *pt = proctrack__new();
	struct mapping a = map_of(0x1000, 0x2000, 0, "/parent");
	struct addr_space *parent, *forked, *child, *gone, *out[4];
	struct proctrack_counts c;

	parent_forks_child(pt, &a, &parent, &forked, &child);
	ck_assert_int_eq(proctrack__set_comm(pt, 5000000, "parent"), 0);
	ck_assert_int_eq(proctrack__inherit_comm(pt, 5000002, 5000000, 5000000), 0);
	ck_assert_int_eq(proctrack__set_comm(pt, 5000002, "worker"), 0);
	ck_assert_int_eq(proctrack__set_comm(pt, 5000001, "child"), 0);
	ck_assert(!proctrack__is_kernel_thread(pt, 5000000));
	c = counts_of(pt);
	ck_assert_uint_eq(c.procs, 2);
	ck_assert_uint_eq(c.comms, 3);
	ck_assert_uint_eq(c.kinds, 1);

	ck_assert_int_eq(proctrack__exit(pt, 5000000, 5000002, 350), 0);
	ck_assert_int_eq(proctrack__exit(pt, 5000000, 5000000, 400), 0);
	/* The worker's tid taken by a new thread before the grace: its comm is the new one's. */
	ck_assert_int_eq(proctrack__inherit_comm(pt, 5000002, 5000001, 5000001), 0);
	ck_assert_uint_eq(counts_of(pt).retiring, 2);

	/* Not yet a grace past the exits: all kept. */
	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 1300), 0);
	proctrack__settle(pt, 1000);
	ck_assert_uint_eq(counts_of(pt).comms, 3);

	/* A grace past them: the leader's comm and its kind go, the reused tid's stays. */
	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 1450), 0);
	ck_assert_uint_eq(proctrack__settle(pt, 1000), 2);	/* parent's image and the forked one */
	c = counts_of(pt);
	ck_assert_uint_eq(c.forgotten_threads, 1);
	ck_assert_uint_eq(c.comms, 2);
	ck_assert_uint_eq(c.kinds, 0);
	ck_assert_str_eq(proctrack__comm(pt, 5000001, 5000002), "child");
	ck_assert_str_eq(proctrack__comm(pt, 5000000, 5000000), ":5000000");
	ck_assert_uint_eq(c.procs, 3);	/* the pids stay while their images do */

	/* The images freed: the pid's entry waits a grace more, still late meanwhile. */
	ck_assert_uint_eq(proctrack__release_settled(pt), 2);
	ck_assert_uint_eq(proctrack__free_released(pt, NULL, NULL), 2);
	gone = proctrack__addr_space(pt, 5000000);
	ck_assert(gone->released);
	proctrack__settle(pt, 1000);
	ck_assert_uint_eq(counts_of(pt).procs, 3);

	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 2500), 0);
	proctrack__settle(pt, 1000);
	c = counts_of(pt);
	ck_assert_uint_eq(c.forgotten_pids, 1);
	ck_assert_uint_eq(c.procs, 2);
	ck_assert_uint_eq(c.retiring, 0);
	/* A late sample of it is still late, and makes no entry. */
	assert_image_at(pt, 5000000, 380, gone);
	ck_assert_uint_eq(counts_of(pt).procs, 2);
	/* The pid's next process: its time is its own, the forgotten one's still late. */
	ck_assert_int_eq(proctrack__fork(pt, 5000000, 5000001, 2600), 0);
	ck_assert_ptr_eq(proctrack__addr_space(pt, 5000000)->older, NULL);
	assert_image_at(pt, 5000000, 2700, proctrack__addr_space(pt, 5000000));
	assert_image_at(pt, 5000000, 380, gone);
	ck_assert_uint_eq(proctrack__images(pt, 5000000, 380, 2700, out, 4), 1);
	ck_assert_ptr_eq(out[0], proctrack__addr_space(pt, 5000000));
	proctrack__free(pt);
}
END_TEST

/* A pid taken by a new process before its entry's grace keeps the new process's entry. */
START_TEST(a_pid_reused_before_its_grace_keeps_its_entry)
{
	struct proctrack *pt = proctrack__new();
	struct mapping a = map_of(0x1000, 0x2000, 0, "/parent");
	struct addr_space *parent, *forked, *child, *again;

	parent_forks_child(pt, &a, &parent, &forked, &child);
	ck_assert_int_eq(proctrack__exit(pt, 5000001, 5000001, 400), 0);
	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 1500), 0);
	proctrack__settle(pt, 1000);
	proctrack__release_settled(pt);
	ck_assert_uint_ge(proctrack__free_released(pt, NULL, NULL), 2);
	ck_assert(proctrack__addr_space(pt, 5000001)->released);
	ck_assert_int_eq(proctrack__exec(pt, 5000001, "again", 1600), 0);
	again = proctrack__addr_space(pt, 5000001);
	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 3000), 0);
	proctrack__settle(pt, 1000);
	ck_assert_uint_eq(counts_of(pt).forgotten_pids, 0);
	ck_assert_ptr_eq(proctrack__addr_space(pt, 5000001), again);
	assert_image_at(pt, 5000001, 1700, again);
	proctrack__free(pt);
}
END_TEST

/*
 * After a pid was forgotten, a process found at it through /proc (its fork
 * record lost) began after the forgotten one: a late sample of that one is
 * still late. A comm read from /proc (no record named the thread) goes
 * with the thread's exit like any other.
 */
START_TEST(what_proc_shows_after_a_pid_was_forgotten_is_newer)
{
	struct proctrack *pt = proctrack__new();
	struct mapping a = map_of(0x1000, 0x2000, 0, "/parent");
	struct addr_space *parent, *forked, *child, *gone, *found;

	parent_forks_child(pt, &a, &parent, &forked, &child);
	/*
	 * No record named thread 5000003, and its comm is first asked for at
	 * its exit (as withheld time does): /proc has none, so the placeholder.
	 */
	ck_assert_int_eq(proctrack__exit(pt, 5000000, 5000003, 390), 0);
	ck_assert_str_eq(proctrack__comm(pt, 5000000, 5000003), ":5000003");
	ck_assert_uint_eq(counts_of(pt).comms, 1);
	ck_assert_int_eq(proctrack__exit(pt, 5000000, 5000000, 400), 0);
	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 1500), 0);
	proctrack__settle(pt, 1000);
	ck_assert_uint_eq(counts_of(pt).forgotten_threads, 1);
	ck_assert_uint_eq(counts_of(pt).comms, 0);
	proctrack__release_settled(pt);
	proctrack__free_released(pt, NULL, NULL);
	gone = proctrack__addr_space(pt, 5000000);
	ck_assert(gone->released);
	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 3000), 0);
	proctrack__settle(pt, 1000);
	ck_assert_uint_eq(counts_of(pt).forgotten_pids, 1);

	found = proctrack__addr_space(pt, 5000000);
	ck_assert(found != gone && !found->released);
	assert_image_at(pt, 5000000, 380, gone);
	assert_image_at(pt, 5000000, 3100, found);
	proctrack__free(pt);
}
END_TEST

/* The queue gives entries back in order, only once older than the cutoff, across its growth. */
START_TEST(the_retire_queue_keeps_order_as_it_grows_and_slides)
{
	struct retire_queue q = { 0 };
	struct retiree r;
	uint64_t next = 0;

	for (uint64_t t = 0; t < 1000; t++)
		ck_assert_int_eq(retire_queue__push(&q, &(struct retiree){ .time = t, .tid = 1 }), 0);
	ck_assert(!retire_queue__pop_before(&q, 0, &r));
	while (retire_queue__pop_before(&q, 700, &r))
		ck_assert_uint_eq(r.time, next++);
	ck_assert_uint_eq(next, 700);
	/* Room at the front again: later pushes slide the rest down rather than grow. */
	for (uint64_t t = 1000; t < 1500; t++)
		ck_assert_int_eq(retire_queue__push(&q, &(struct retiree){ .time = t, .tid = 1 }), 0);
	ck_assert_uint_eq(retire_queue__len(&q), 800);
	ck_assert_uint_le(q.cap, 1024);
	while (retire_queue__pop_before(&q, UINT64_MAX, &r))
		ck_assert_uint_eq(r.time, next++);
	ck_assert_uint_eq(next, 1500);
	ck_assert_uint_eq(retire_queue__len(&q), 0);
	retire_queue__free(&q);
}
END_TEST

/*
 * A process whose main thread exited but whose other threads run is not
 * settled until it is gone; a zombie is gone.
 */
START_TEST(a_process_is_not_settled_while_proc_shows_it)
{
	struct proctrack *pt = proctrack__new();
	struct addr_space *as;
	siginfo_t info;
	char path[64];
	pid_t child = fork();

	ck_assert_int_ge(child, 0);
	if (!child) {
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	wait_mapped(child, "/sleep");
	snprintf(path, sizeof(path), "/proc/%d", (int)child);
	as = proctrack__addr_space(pt, child);
	ck_assert_uint_gt(as->nr_maps, 0);
	/* The main thread's exit record, while /proc still shows the process. */
	ck_assert_int_eq(proctrack__exit(pt, child, child, 100), 0);
	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 10000), 0);
	ck_assert_uint_eq(proctrack__settle(pt, 1000), 0);
	ck_assert(!as->settled);

	kill(child, SIGKILL);
	/* Dead, not reaped: /proc still shows a zombie, which runs nothing. */
	ck_assert_int_eq(waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT), 0);
	ck_assert_int_eq(access(path, F_OK), 0);
	/* Gone now, but dated from when it was last seen running: a grace more. */
	ck_assert_uint_eq(proctrack__settle(pt, 1000), 0);
	ck_assert_int_eq(proctrack__exec(pt, 5000005, "other", 20000), 0);
	ck_assert_uint_eq(proctrack__settle(pt, 1000), 1);
	ck_assert_uint_eq(proctrack__release_settled(pt), 1);
	ck_assert_uint_eq(as->nr_maps, 0);
	waitpid(child, NULL, 0);
	proctrack__free(pt);
}
END_TEST

START_TEST(comm_cached_inherited_or_placeholder)
{
	struct proctrack *pt = proctrack__new();
	char own[32];
	FILE *f = fopen("/proc/self/comm", "r");

	ck_assert_ptr_nonnull(fgets(own, sizeof(own), f));
	fclose(f);
	own[strcspn(own, "\n")] = '\0';
	ck_assert_str_eq(proctrack__comm(pt, getpid(), getpid()), own);
	ck_assert_int_eq(proctrack__set_comm(pt, 77777777, "renamed"), 0);
	ck_assert_str_eq(proctrack__comm(pt, 1, 77777777), "renamed");
	ck_assert_int_eq(proctrack__inherit_comm(pt, 77777778, 1, 77777777), 0);
	ck_assert_str_eq(proctrack__comm(pt, 1, 77777778), "renamed");
	/* Gone and never seen: perf script's placeholder. */
	ck_assert_str_eq(proctrack__comm(pt, 2147483000, 2147483001), ":2147483001");
	proctrack__free(pt);
}
END_TEST

/*
 * A comm read from /proc is of the thread there now: for a sample taken
 * before that thread began (its number was another's then) it is not the
 * sample's, and the placeholder stands (issue 32). Records' comms are.
 */
START_TEST(a_comm_read_from_proc_names_no_sample_older_than_its_thread)
{
	struct proctrack *pt = proctrack__new();
	int64_t to_wall = mono_to_wall_ns();
	uint64_t before = (uint64_t)mono_ns() - 200000000ull, after;
	char own[32], placeholder[32];
	FILE *f = fopen("/proc/self/comm", "r");
	pid_t child;

	ck_assert_ptr_nonnull(fgets(own, sizeof(own), f));
	fclose(f);
	own[strcspn(own, "\n")] = '\0';
	child = fork();
	if (!child) {
		pause();
		_exit(0);
	}
	ck_assert_int_gt(child, 0);
	after = (uint64_t)mono_ns() + 50000000ull;
	snprintf(placeholder, sizeof(placeholder), ":%d", (int)child);
	/* The child began after `before`: a sample then was another thread's. */
	proctrack__set_clock_to_wall(pt, to_wall);
	ck_assert_str_eq(proctrack__comm_at(pt, child, child, before), placeholder);
	ck_assert_str_eq(proctrack__comm_at(pt, child, child, after), own);
	/* Times not on the wall clock's scale (no use_clockid), or none: not dated. */
	proctrack__set_clock_to_wall(pt, 0);
	ck_assert_str_eq(proctrack__comm_at(pt, child, child, before), own);
	proctrack__set_clock_to_wall(pt, to_wall);
	ck_assert_str_eq(proctrack__comm_at(pt, child, child, 0), own);
	/* A record's comm is the thread's whatever the time. */
	ck_assert_int_eq(proctrack__set_comm(pt, child, "recorded"), 0);
	ck_assert_str_eq(proctrack__comm_at(pt, child, child, before), "recorded");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	proctrack__free(pt);
}
END_TEST

START_TEST(first_sight_reads_proc_maps)
{
	struct proctrack *pt = proctrack__new();
	struct addr_space *as = proctrack__addr_space(pt, getpid());
	const struct mapping *m = addr_space__find(as, (uint64_t)(uintptr_t)&proctrack__new);
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m->path, self);
	ck_assert(proctrack__knows(pt, getpid()));
	proctrack__free(pt);
}
END_TEST

/*
 * A mapping's path is anyone's to replace: a FIFO planted there must not
 * block the profiler (a plain open() waits for a writer forever).
 */
START_TEST(a_fifo_at_a_mapping_path_does_not_block)
{
	char dir[] = "/tmp/profile-fifo-XXXXXX", path[128];
	struct mapping m = { .start = 0x1000, .end = 0x2000, .exec = true, .path = path };
	struct stat st;
	bool owned;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lib.so", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	m.dev = st.st_dev;
	m.ino = st.st_ino;
	alarm(5);
	fd = file_table__open(NULL, &m, &owned);
	alarm(0);
	ck_assert_int_lt(fd, 0);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* A temporary directory for the identity tests, and shell commands run in it. */
static char idir[] = "/tmp/profile-fileid-XXXXXX";

static void sh(const char *fmt, const char *a, const char *b)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

/* prog running, its exec done. */
static pid_t run_prog(const char *prog)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(prog, prog, "1", "5", (char *)NULL);
		_exit(127);
	}
	wait_mapped(pid, prog);
	return pid;
}

static void stop_prog(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The mapping of prog's code in as (its executable segment). */
static const struct mapping *prog_map(const struct addr_space *as, const char *prog)
{
	for (size_t i = 0; i < as->nr_maps; i++)
		if (!strcmp(as->maps[i].path, prog))
			return &as->maps[i];
	ck_abort_msg("%s not mapped", prog);
	return NULL;
}

/*
 * The tracker keeps the binary open from first sight, so that a file
 * renamed over it later cannot lend its names. But cp over a file that no
 * process runs rewrites it in place, inode and all: the kept fd then reads
 * another program. It is refused once its build-id (or, without one, its
 * size and mtime) is not what was first seen; a rename over the path
 * leaves the kept file as it was, and it still reads.
 */
static void kept_file_rewritten(bool with_build_id)
{
	char prog[128], repl[128], moved[128];
	struct proctrack *pt = proctrack__new();
	struct file_identity id;
	struct addr_space *as;
	struct mapping m;
	bool owned;
	pid_t pid;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(idir));
	snprintf(prog, sizeof(prog), "%s/prog", idir);
	snprintf(repl, sizeof(repl), "%s/repl", idir);
	snprintf(moved, sizeof(moved), "%s/moved", idir);
	sh(with_build_id ? "cp '%s' '%s'" : "objcopy --remove-section .note.gnu.build-id '%s' '%s'",
	   workload("busy"), prog);
	sh(with_build_id ? "cp '%s' '%s'" : "objcopy --remove-section .note.gnu.build-id '%s' '%s'",
	   workload("ratio31"), repl);
	pid = run_prog(prog);
	as = proctrack__addr_space(pt, pid);
	m = *prog_map(as, prog);
	stop_prog(pid);
	fd = file_table__open(as->files, &m, &owned);
	ck_assert_int_ge(fd, 0);
	ck_assert(!owned);	/* kept from first sight */

	/* Renamed away and over: the kept file is still the one mapped. */
	sh("mv '%s' '%s'", prog, moved);
	sh("cp '%s' '%s'", repl, prog);
	ck_assert_int_eq(file_table__open(as->files, &m, &owned), fd);
	/* Rewritten in place (same inode), at the same size: refused. */
	sh("truncate -s $(stat -c %%s '%s') '%s'", repl, moved);
	sh("cat '%s' > '%s'", repl, moved);
	ck_assert_int_lt(file_table__open(as->files, &m, &owned), 0);
	/*
	 * Names read while it was the file mapped are cached by its identity
	 * (no system call): the identity stands until the rewritten file is
	 * mapped again, and then no more.
	 */
	ck_assert(file_table__identity(as->files, &m, &id));
	pid = run_prog(moved);
	ck_assert_uint_eq(prog_map(proctrack__addr_space(pt, pid), moved)->ino, m.ino);
	stop_prog(pid);
	ck_assert(!file_table__identity(as->files, &m, &id));
	proctrack__free(pt);
	sh("rm -rf '%s'%s", idir, "");
	strcpy(idir, "/tmp/profile-fileid-XXXXXX");
}

START_TEST(a_kept_binary_rewritten_in_place_is_refused)
{
	kept_file_rewritten(true);
}
END_TEST

START_TEST(a_kept_binary_without_build_id_rewritten_in_place_is_refused)
{
	kept_file_rewritten(false);
}
END_TEST

/* A pid that no process has now: a child that exited. */
static pid_t gone_pid(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

/*
 * In a new idir: prog (busy) and repl (ratio31), each padded to the other's
 * size, so that only their contents and build-ids tell them apart; *bid is
 * prog's build-id.
 */
static void same_size_pair(char *prog, char *repl, size_t size, struct build_id *bid)
{
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(idir));
	snprintf(prog, size, "%s/prog", idir);
	snprintf(repl, size, "%s/repl", idir);
	sh("cp '%s' '%s'", workload("busy"), prog);
	sh("cp '%s' '%s'", workload("ratio31"), repl);
	sh("truncate -s $(stat -c %%s '%s') '%s'", repl, prog);
	sh("truncate -s $(stat -c %%s '%s') '%s'", prog, repl);
	fd = open(prog, O_RDONLY);
	ck_assert_int_eq(build_id__read_fd(fd, bid), 1);
	close(fd);
}

/*
 * An MMAP2 record of 5.12+ carries the build-id the kernel read from the
 * file mapped, and no device or inode: those come from the file at the
 * path if it has that build-id. A process gone, its binary renamed over
 * by one of the same size and another build-id: nothing is named from it.
 */
START_TEST(a_build_id_record_names_only_the_file_with_that_build_id)
{
	struct mapping rec = { .start = 0x400000, .end = 0x401000, .exec = true };
	char prog[128], repl[128];
	struct proctrack *pt = proctrack__new(), *fresh;
	const struct mapping *m;
	struct build_id bid, other;
	struct stat st;
	struct file_identity id;
	bool owned;
	pid_t pid = gone_pid();
	int fd;

	same_size_pair(prog, repl, sizeof(prog), &bid);
	ck_assert_int_eq(stat(prog, &st), 0);
	rec.path = prog;

	/* The file with the record's build-id: its inode, its identity, its fd. */
	ck_assert_int_eq(proctrack__mmap_build_id(pt, pid, &rec, &bid), 0);
	m = addr_space__find(proctrack__addr_space(pt, pid), 0x400000);
	ck_assert_uint_eq(m->ino, st.st_ino);
	ck_assert_uint_eq(m->dev, st.st_dev);
	ck_assert(file_table__identity(proctrack__addr_space(pt, pid)->files, m, &id));
	ck_assert(id.bid_known && build_id__equal(&id.bid, &bid));
	ck_assert_int_ge(file_table__open(proctrack__addr_space(pt, pid)->files, m, &owned), 0);

	/* Renamed over (same size, another build-id) before the next record was read. */
	sh("mv '%s' '%s'", repl, prog);
	rec.start = 0x500000;
	rec.end = 0x501000;
	/*
	 * The file kept from the first record has that path and build-id: it
	 * stands for it, if root's alone (else nothing at the path has it).
	 */
	ck_assert_int_eq(proctrack__mmap_build_id(pt, pid, &rec, &bid), 0);
	m = addr_space__find(proctrack__addr_space(pt, pid), 0x500000);
	ck_assert_uint_eq(m->ino, geteuid() == 0 ? st.st_ino : 0);
	fd = file_table__open(proctrack__addr_space(pt, pid)->files, m, &owned);
	if (geteuid() == 0) {
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(build_id__read_fd(fd, &other), 1);
		ck_assert(build_id__equal(&other, &bid));
	} else {
		ck_assert_int_lt(fd, 0);
	}
	/* A tracker that never saw it (first sight now): nothing at the path has the build-id. */
	fresh = proctrack__new();
	ck_assert_int_eq(proctrack__mmap_build_id(fresh, pid, &rec, &bid), 0);
	m = addr_space__find(proctrack__addr_space(fresh, pid), 0x500000);
	ck_assert_uint_eq(m->ino, 0);
	ck_assert_int_lt(file_table__open(proctrack__addr_space(fresh, pid)->files, m, &owned), 0);
	proctrack__free(fresh);
	proctrack__free(pt);
	sh("rm -rf '%s'%s", idir, "");
	strcpy(idir, "/tmp/profile-fileid-XXXXXX");
}
END_TEST

/* A new file whose ELF notes name it rewritten in place: the record of a kept file. */
START_TEST(a_build_id_record_of_a_kept_file_rewritten_in_place_ends_its_names)
{
	struct mapping rec = { .start = 0x400000, .end = 0x401000, .exec = true };
	char prog[128], repl[128];
	struct proctrack *pt = proctrack__new();
	struct build_id bid, other;
	struct file_identity id;
	struct mapping first;
	pid_t pid = gone_pid();
	int fd;

	same_size_pair(prog, repl, sizeof(prog), &bid);
	fd = open(repl, O_RDONLY);
	ck_assert_int_eq(build_id__read_fd(fd, &other), 1);
	close(fd);
	rec.path = prog;
	ck_assert_int_eq(proctrack__mmap_build_id(pt, pid, &rec, &bid), 0);
	first = *addr_space__find(proctrack__addr_space(pt, pid), 0x400000);
	ck_assert(file_table__identity(proctrack__addr_space(pt, pid)->files, &first, &id));
	ck_assert(id.kept);

	/* cp over it: the same inode, now with the other build-id, mapped again. */
	sh("cat '%s' > '%s'", repl, prog);
	rec.start = 0x500000;
	rec.end = 0x501000;
	ck_assert_int_eq(proctrack__mmap_build_id(pt, pid, &rec, &other), 0);
	/* The names cached by its first identity are no one's: not the new mapping's, nor the first's. */
	ck_assert(!file_table__identity(proctrack__addr_space(pt, pid)->files, &first, &id));
	ck_assert(!file_table__identity(proctrack__addr_space(pt, pid)->files,
					addr_space__find(proctrack__addr_space(pt, pid), 0x500000),
					&id));
	proctrack__free(pt);
	sh("rm -rf '%s'%s", idir, "");
	strcpy(idir, "/tmp/profile-fileid-XXXXXX");
}
END_TEST

/* A copy of from at to whose build-id note says bid (both of the same size). */
static void copy_with_build_id(const char *from, const char *to, const unsigned char bid[20])
{
	char note[160], cmd[1024];
	FILE *f;

	snprintf(note, sizeof(note), "%s/note", idir);
	f = fopen(note, "wb");
	ck_assert_ptr_nonnull(f);
	fwrite(&(uint32_t[3]){ 4, 20, 3 /* NT_GNU_BUILD_ID */ }, 4, 3, f);
	fwrite("GNU", 1, 4, f);
	fwrite(bid, 1, 20, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "objcopy --update-section .note.gnu.build-id='%s' '%s' '%s'",
		 note, from, to);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

/*
 * A record of 5.12+ names a file by the path the mapping process saw (in
 * its own mount namespace, where any user may mount their own file over
 * /usr/bin/foo) and by a build-id (which anyone may write into their
 * file). The file found first at a path with a build-id stands for later
 * records naming both only if no user but root could have made it: here a
 * file others may write (0), one another user owns (1), then root's own
 * (2, the shortcut). The first file found at prog has build-id X; then
 * another program of build-id X is at prog (another mount namespace's
 * view, or as here renamed over) and its record comes.
 */
START_TEST(a_build_id_stands_for_its_path_only_in_a_file_root_owns_alone)
{
	struct mapping rec = { .start = 0x400000, .end = 0x401000, .exec = true };
	char prog[128], forged[128], real[128];
	struct proctrack *pt = proctrack__new();
	const struct mapping *m;
	unsigned char raw[20];
	struct build_id bid;
	struct stat fst, rst;
	pid_t pid = gone_pid();
	bool roots = _i == 2 && geteuid() == 0;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(idir));
	snprintf(prog, sizeof(prog), "%s/prog", idir);
	snprintf(forged, sizeof(forged), "%s/forged", idir);
	snprintf(real, sizeof(real), "%s/real", idir);
	ck_assert_int_eq(getentropy(raw, sizeof(raw)), 0);
	copy_with_build_id(workload("ratio31"), forged, raw);
	copy_with_build_id(workload("busy"), real, raw);
	ck_assert_int_eq(chmod(forged, _i == 0 ? 0775 : 0755), 0);
	if (_i == 1 && geteuid() == 0)
		ck_assert_int_eq(chown(forged, 65534, 65534), 0);
	fd = open(forged, O_RDONLY);
	ck_assert_int_eq(build_id__read_fd(fd, &bid), 1);
	close(fd);
	ck_assert_int_eq(stat(forged, &fst), 0);
	ck_assert_int_eq(stat(real, &rst), 0);
	sh("mv '%s' '%s'", forged, prog);
	rec.path = prog;
	ck_assert_int_eq(proctrack__mmap_build_id(pt, pid, &rec, &bid), 0);
	ck_assert_uint_eq(addr_space__find(proctrack__addr_space(pt, pid), 0x400000)->ino,
			  fst.st_ino);

	sh("mv '%s' '%s'", real, prog);
	rec.start = 0x500000;
	rec.end = 0x501000;
	ck_assert_int_eq(proctrack__mmap_build_id(pt, pid, &rec, &bid), 0);
	m = addr_space__find(proctrack__addr_space(pt, pid), 0x500000);
	ck_assert_uint_eq(m->ino, roots ? fst.st_ino : rst.st_ino);
	proctrack__free(pt);
	sh("rm -rf '%s'%s", idir, "");
	strcpy(idir, "/tmp/profile-fileid-XXXXXX");
}
END_TEST

/* The address of symbol name in the ELF file at path (nm). */
static uint64_t symbol_addr(const char *path, const char *name)
{
	char cmd[512], line[1024], sym[512], type;
	unsigned long long a, addr = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %511s", &a, &type, sym) == 3 && !strcmp(sym, name))
			addr = a;
	pclose(p);
	ck_assert_msg(addr, "%s: no symbol %s", path, name);
	return addr;
}

/* A record of pid mapping all of path (device and inode st's) at 0x400000. */
static void map_whole(struct proctrack *pt, pid_t pid, const char *path, const struct stat *st)
{
	struct mapping rec = { .start = 0x400000,
			       .end = 0x400000 + (((uint64_t)st->st_size + 4095) & ~4095ull),
			       .dev = st->st_dev,
			       .ino = st->st_ino,
			       .exec = true,
			       .path = (char *)path };

	ck_assert_int_eq(proctrack__mmap(pt, pid, &rec), 0);
}

/*
 * Past the fd budget a binary is not kept open, only what identifies it
 * (device, inode, ctime, build-id). Once it is deleted its inode number
 * may go to a new file, and a process that maps that file may be gone
 * before its record is read: the tracker can open nothing to tell them
 * apart, and a record with the old file's device and inode (what the
 * kernel writes for the new file that took its number; written here) names
 * the identity of the old one. Its names, read while it was there, must
 * not name the new file's frames: a file not kept open is opened and
 * checked again (gone, or another ctime: no names).
 */
START_TEST(an_inode_reused_past_the_fd_budget_lends_no_cached_names)
{
	struct rlimit rl = { 64, 64 };
	struct symbolizer *s = symbolizer__new();
	struct proctrack *pt;
	struct frame_sym fs;
	struct stat st, fill;
	char prog[128], path[160];
	uint64_t addr;
	pid_t pid = gone_pid(), pid2 = gone_pid();

	ck_assert_ptr_nonnull(mkdtemp(idir));
	/* This test's process only (CK_FORK): a budget of 32 files. */
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	pt = proctrack__new();
	for (int i = 0; i < 32; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/fill%d", idir, i);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs("not a binary, but an fd of the budget\n", f);
		fclose(f);
		ck_assert_int_eq(stat(path, &fill), 0);
		map_whole(pt, pid, path, &fill);
	}
	snprintf(prog, sizeof(prog), "%s/prog", idir);
	sh("cp '%s' '%s'", workload("busy"), prog);
	ck_assert_int_eq(stat(prog, &st), 0);
	map_whole(pt, pid, prog, &st);
	addr = 0x400000 + symbol_addr(prog, "burn_a") + 1;
	symbolizer__user(s, proctrack__addr_space(pt, pid), addr, &fs);
	ck_assert_ptr_nonnull(fs.name);
	ck_assert_str_eq(fs.name, "burn_a");

	/* Deleted; another program at its path; a record of its old number. */
	sh("rm '%s'%s", prog, "");
	sh("cp '%s' '%s'", workload("ratio31"), prog);
	map_whole(pt, pid2, prog, &st);
	symbolizer__user(s, proctrack__addr_space(pt, pid2), addr, &fs);
	ck_assert_msg(!fs.name, "the new file's frame named %s", fs.name);
	symbolizer__free(s);
	proctrack__free(pt);
	sh("rm -rf '%s'%s", idir, "");
	strcpy(idir, "/tmp/profile-fileid-XXXXXX");
}
END_TEST

Suite *proctrack_suite(void)
{
	Suite *s = suite_create("proctrack");
	TCase *tc = tcase_create("maps");

	tcase_add_test(tc, insert_trims_what_it_overlaps);
	tcase_add_test(tc, maps_file_keeps_executable_mappings);
	tcase_add_test(tc, fork_copies_exec_resets_old_space_survives);
	tcase_add_test(tc, ended_images_release_their_mappings_after_the_grace);
	tcase_add_test(tc, a_process_is_not_settled_while_proc_shows_it);
	tcase_add_test(tc, released_images_are_freed_and_their_pids_left_late);
	tcase_add_test(tc, the_paths_of_an_exited_process_are_let_go);
	tcase_add_test(tc, exited_threads_and_freed_pids_are_forgotten_after_a_grace);
	tcase_add_test(tc, a_pid_reused_before_its_grace_keeps_its_entry);
	tcase_add_test(tc, what_proc_shows_after_a_pid_was_forgotten_is_newer);
	tcase_add_test(tc, the_retire_queue_keeps_order_as_it_grows_and_slides);
	tcase_add_test(tc, images_by_time);
	tcase_add_test(tc, resync_after_lost_records);
	tcase_add_test(tc, comm_cached_inherited_or_placeholder);
	tcase_add_test(tc, a_comm_read_from_proc_names_no_sample_older_than_its_thread);
	tcase_add_test(tc, first_sight_reads_proc_maps);
	tcase_add_test(tc, a_fifo_at_a_mapping_path_does_not_block);
	tcase_add_test(tc, a_kept_binary_rewritten_in_place_is_refused);
	tcase_add_test(tc, a_kept_binary_without_build_id_rewritten_in_place_is_refused);
	tcase_add_test(tc, a_build_id_record_names_only_the_file_with_that_build_id);
	tcase_add_test(tc, a_build_id_record_of_a_kept_file_rewritten_in_place_ends_its_names);
	tcase_add_test(tc, an_inode_reused_past_the_fd_budget_lends_no_cached_names);
	tcase_add_loop_test(tc, a_build_id_stands_for_its_path_only_in_a_file_root_owns_alone, 0,
			    3);
	suite_add_tcase(s, tc);
	return s;
}
