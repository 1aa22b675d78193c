// SPDX-License-Identifier: GPL-2.0
/*
 * Frames are named from the very file that was mapped (issue 20, "identity,
 * not paths"): a binary replaced at its path (renamed over, as an upgrade
 * does) after its process ran must not lend its symbols to that process's
 * samples. The profiler's fd budget is exhausted on purpose (a small
 * RLIMIT_NOFILE: the binaries of the processes already running take it),
 * so that the file is looked for again by path at the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/support/tests.h"

static struct run_result r;
static char dir[] = "/tmp/profile-identity-XXXXXX";
static const char *backend;
static char planted[256];	/* a debug file put under /usr/lib/debug, removed in teardown */

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	run_result_free(&r);
	if (planted[0]) {
		unlink(planted);
		*strrchr(planted, '/') = '\0';
		rmdir(planted);		/* the xx/ directory, if made for it alone */
		planted[0] = '\0';
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/profile-identity-XXXXXX");
}

/*
 * The defined symbols of the ELF file at path (nm), one per line between
 * newlines ("\nname\n" finds one); to free. Read once per file and report:
 * an nm per frame of every line took seconds.
 */
static char *symbols_of(const char *path)
{
	char cmd[512], line[512], *buf = NULL;
	size_t len = 0;
	FILE *f, *m = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(m);
	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	fputc('\n', m);
	while (fgets(line, sizeof(line), f)) {
		char *sym = strrchr(line, ' ');

		line[strcspn(line, "\n")] = '\0';
		if (sym)
			fprintf(m, "%s\n", sym + 1);
	}
	pclose(f);
	fclose(m);
	return buf;
}

/* Whether name is one of symbols (symbols_of). */
static bool has_symbol(const char *symbols, const char *name)
{
	size_t len = strlen(name);

	for (const char *at = strstr(symbols, name); at; at = strstr(at + 1, name))
		if (at[-1] == '\n' && at[len] == '\n')
			return true;
	return false;
}

/*
 * Every frame of the lines of comm that names a function of the binary
 * other (and not of own, the one that comm ran) is a forged frame.
 */
static unsigned int forged_frames_of(const char *out, const char *comm, const char *own,
				     const char *other, unsigned long *comm_samples)
{
	unsigned int forged = 0;
	char *copy = strdup(out), *save = NULL;
	char *own_syms = symbols_of(own), *other_syms = symbols_of(other);
	size_t len = strlen(comm);

	*comm_samples = 0;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *fsave = NULL;

		if (strncmp(line, comm, len) || line[len] != ';' || !sp)
			continue;
		*sp = '\0';
		*comm_samples += strtoul(sp + 1, NULL, 10);
		for (char *f = strtok_r(line + len + 1, ";", &fsave); f;
		     f = strtok_r(NULL, ";", &fsave))
			if (*f && has_symbol(other_syms, f) && !has_symbol(own_syms, f)) {
				fprintf(stderr, "identity: %s: forged frame %s\n", comm, f);
				forged++;
			}
	}
	free(own_syms);
	free(other_syms);
	free(copy);
	return forged;
}

/* Forged frames of comm "prog", which ran orig: names of repl. */
static unsigned int forged_frames(const char *out, const char *orig, const char *repl,
				  unsigned long *prog_samples)
{
	return forged_frames_of(out, "prog", orig, repl, prog_samples);
}

START_TEST(a_binary_renamed_over_lends_no_names)
{
	char prog[128], orig[128], repl[128], script[1024];
	unsigned long samples;
	struct bg_proc bg;

	backend = test_backends[_i];
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(orig, sizeof(orig), "%s/orig", dir);
	snprintf(repl, sizeof(repl), "%s/prog.new", dir);
	/* A copy of the original kept to read its names. */
	snprintf(script, sizeof(script), "cp '%s' '%s'", workload("busy"), orig);
	ck_assert_int_eq(system(script), 0);
	/*
	 * Ten times: prog runs for 50 ms while sampled, exits, and is replaced
	 * at once at its path (before the profiler has named its frames).
	 */
	snprintf(script, sizeof(script),
		 "echo ready; sleep 0.5; for i in 1 2 3 4 5 6 7 8 9 10; do "
		 "cp '%s' '%s' && cp '%s' '%s' && '%s' 2 0.05 && mv '%s' '%s' || exit 1; done",
		 workload("busy"), prog, workload("ratio31"), repl, prog, repl, prog);
	bg_start(&bg, (char *[]){ "/bin/sh", "-c", script, NULL });
	/* 20 files held at most (core/proc/files.c keeps 160 descriptors for the rest). */
	run_cmd((char *[]){ "/usr/bin/prlimit", "--nofile=180:180", (char *)profile_bin(), "--backend",
			    (char *)backend, "-U", "-F", "999", "-f", "3", NULL },
		60, 0, &r);
	bg_stop(&bg);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_uint_eq(forged_frames(r.out, orig, prog, &samples), 0);
	ck_assert_msg(samples >= 50, "prog was sampled %lu times", samples);
	/* Named while it ran, or [unknown] with a warning once replaced: never the new names. */
	ck_assert_msg(strstr(r.out, "burn_") || strstr(r.err, "replaced or removed"),
		      "neither names nor a warning: %s", r.err);
}
END_TEST

/*
 * A process execs another program, which renames itself to the first
 * one's comm; without ASLR (setarch -R) both images sit at the same
 * addresses. The second image's samples are its own (second_spin), or
 * [unknown] where the bpf backend cannot tell the two images apart in one
 * drain interval: never the first image's names (first_spin, half the run).
 */
START_TEST(a_renamed_exec_is_not_resolved_in_the_old_image)
{
	uint64_t total, first, second, unknown;

	backend = test_backends[_i];
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)backend, "-U", "-F", "499",
			    "-f", "--", "/usr/bin/setarch", "x86_64", "-R",
			    (char *)workload("execfirst"), "700", (char *)workload("execsecond"),
			    NULL },
		60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	total = folded_count_prefix(r.out, "execfirst;");
	first = folded_count(r.out, ";first_spin");
	second = folded_count(r.out, ";second_spin");
	unknown = total - first - second;
	fprintf(stderr, "identity: %s: %lu samples, first_spin %lu, second_spin %lu, unknown %lu\n",
		backend, (unsigned long)total, (unsigned long)first, (unsigned long)second,
		(unsigned long)unknown);
	ck_assert_uint_ge(total, 100);
	ck_assert_msg(first * 100 <= total * 65, "first_spin %lu of %lu: forged", (unsigned long)first,
		      (unsigned long)total);
	if (!strcmp(backend, "perf"))	/* each sample has its time */
		ck_assert_uint_ge(second * 100, total * 35);
}
END_TEST

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Issue 20: a process with 32,000 executable mappings (about what
 * vm.max_map_count allows with gaps) made a one-second profile of it take
 * 20-30 s to start (each mapping copied the list and sorted it again).
 */
START_TEST(many_mappings_start_quickly)
{
	char pid[16];
	struct bg_proc bg;
	double t0, took;

	backend = test_backends[_i];
	bg_start(&bg, (char *[]){ (char *)workload("manymaps"), "32000", "30", "0", dir, NULL });
	ck_assert_str_eq(bg.first_line, "ready");
	snprintf(pid, sizeof(pid), "%d", (int)bg.pid);
	t0 = mono_s();
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)backend, "-F", "99", "-f",
			    "-p", pid, "1", NULL },
		60, 0, &r);
	took = mono_s() - t0;
	bg_stop(&bg);
	fprintf(stderr, "identity: %s: 1 s profile of 32000 mappings took %.2f s\n", backend, took);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(took < 6, "took %.1f s", took);
}
END_TEST

/* Peak RSS in KB of a profile run while manymaps forks `forks` times (GNU time). */
static long profile_rss_with_forks(const char *forks)
{
	char script[1024];
	struct bg_proc bg;
	FILE *f;
	long kb = -1;
	char path[160];

	snprintf(path, sizeof(path), "%s/rss", dir);
	snprintf(script, sizeof(script), "echo ready; sleep 0.5; exec '%s' 5000 2 %s '%s'",
		 workload("manymaps"), forks, dir);
	bg_start(&bg, (char *[]){ "/bin/sh", "-c", script, NULL });
	run_cmd((char *[]){ "/usr/bin/time", "-f", "%M", "-o", path, (char *)profile_bin(),
			    "--backend", (char *)backend, "-F", "49", "-f", "3", NULL },
		60, 0, &r);
	bg_stop(&bg);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%ld", &kb), 1);
	fclose(f);
	run_result_free(&r);
	return kb;
}

/*
 * Issue 20: 5,000 mappings with long paths, then fork: each child cost
 * 8-11 MB of copies. Children share their parent's list until they change it.
 */
START_TEST(forks_share_their_mappings)
{
	long none, many;

	backend = test_backends[_i];
	none = profile_rss_with_forks("0");
	many = profile_rss_with_forks("200");
	fprintf(stderr, "identity: %s: peak RSS %ld KB without forks, %ld KB with 200\n", backend,
		none, many);
	ck_assert_msg(many < none + 20 * 1024, "200 forks added %ld KB", many - none);
}
END_TEST

/*
 * Issue 20: a JIT process of one user (65534, no perf map of its own)
 * exits; another user (12345) writes /tmp/perf-PID.map for its pid and
 * takes the pid (pidtaker asks the kernel for it and becomes 12345: what
 * the user reaches by forking through the pids, 32,768 forks and half a
 * minute of a loaded host, done at once). The map must not name the
 * first process's JIT frames: it is checked against the user the process
 * ran as, not whoever has the pid at report time.
 */
START_TEST(a_reused_pid_lends_no_perf_map)
{
	char script[2048], pidfile[160], v[32] = "";
	FILE *f;

	backend = test_backends[_i];
	snprintf(pidfile, sizeof(pidfile), "%s/victim", dir);
	/*
	 * The profile ends when the pid is the other user's: the report is
	 * made then. The process on the pid holds no descriptor of the
	 * profile's output, which the runner reads to its end.
	 */
	snprintf(script, sizeof(script),
		 "setpriv --reuid 65534 --regid 65534 --clear-groups '%s' 2 nomap > '%s'; "
		 "V=$(sed -n 's/pid=//p' '%s'); "
		 "setpriv --reuid 12345 --regid 12345 --clear-groups sh -c "
		 "\"printf '0 7fffffffffff forged_jit_name\\n' > /tmp/perf-$V.map\"; "
		 "PIDTAKER_UID=12345 '%s' $V 60 > '%s/took' 2>&1; cat '%s/took' >&2",
		 workload("jit"), pidfile, pidfile, workload("pidtaker"), dir, dir);
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)backend, "-F", "199", "-f",
			    "--", "/bin/sh", "-c", script, NULL },
		120, 0, &r);
	f = fopen(pidfile, "r");
	if (f) {
		if (fscanf(f, "pid=%31s", v) == 1) {
			char cmd[96];

			snprintf(cmd, sizeof(cmd), "rm -f /tmp/perf-%s.map; pkill -9 -f 'pidtaker %s '",
				 v, v);
			ck_assert_int_ge(system(cmd), 0);
		}
		fclose(f);
	}
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "took "), "the pid was not reused: %s", r.err);
	ck_assert_msg(folded_count_prefix(r.out, "jit;") > 5, "jit was not sampled");
	ck_assert_msg(!strstr(r.out, "forged_jit_name"), "a forged JIT name: %s",
		      strstr(r.out, "forged_jit_name") - 100);
}
END_TEST

/* from copied to to, without its build-id note if plain. */
static void copy_binary(const char *from, const char *to, bool plain)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 plain ? "objcopy --remove-section .note.gnu.build-id '%s' '%s'" : "cp '%s' '%s'",
		 from, to);
	ck_assert_int_eq(system(cmd), 0);
}

/* Both files padded with zeros to the larger size: no size tells them apart. */
static void same_size(const char *a, const char *b)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "n=$(stat -c %%s '%s'); m=$(stat -c %%s '%s'); [ $m -gt $n ] && n=$m; "
		 "truncate -s $n '%s' '%s'",
		 a, b, a, b);
	ck_assert_int_eq(system(cmd), 0);
}

/*
 * cp over a binary that no process runs any more rewrites it in place:
 * same device, same inode, same size here. The profiler keeps the file it
 * saw mapped open, so no rename can lend names; but this is the kept file
 * itself, read when the report is made. Its build-id (or, without one, its
 * size and mtime) is no longer what was mapped: [unknown] with the warning,
 * never the new program's names. Then the rewritten file runs (as prog2, a
 * symlink: its own comm): its frames must not get the names read from the
 * first program while it ran (cached by the file's identity at first
 * sight). Both backends, with and without build-ids.
 */
START_TEST(a_binary_copied_over_in_place_lends_no_names)
{
	char prog[128], prog2[128], orig[128], repl[128], script[1024];
	bool plain = _i >= 2;
	unsigned long samples, samples2;
	struct bg_proc bg;

	backend = test_backends[_i % 2];
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(prog2, sizeof(prog2), "%s/prog2", dir);
	snprintf(orig, sizeof(orig), "%s/orig", dir);
	snprintf(repl, sizeof(repl), "%s/repl", dir);
	copy_binary(workload("busy"), orig, plain);
	copy_binary(workload("ratio31"), repl, plain);
	same_size(orig, repl);
	snprintf(script, sizeof(script), "cp '%s' '%s' && ln -s prog '%s'", orig, prog, prog2);
	ck_assert_int_eq(system(script), 0);
	/*
	 * prog runs for a second while sampled, exits, and is rewritten a
	 * second later (its frames named by then, as they come), then runs
	 * again for a second as prog2.
	 */
	snprintf(script, sizeof(script),
		 "echo ready; sleep 0.5; '%s' 2 1 && sleep 1 && cat '%s' > '%s' && "
		 "'%s' 1 > /dev/null && sleep 10",
		 prog, repl, prog, prog2);
	bg_start(&bg, (char *[]){ "/bin/sh", "-c", script, NULL });
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)backend, "-U", "-F", "999",
			    "-f", "5", NULL },
		60, 0, &r);
	bg_stop(&bg);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_uint_eq(forged_frames(r.out, orig, repl, &samples), 0);
	ck_assert_msg(samples >= 50, "prog was sampled %lu times", samples);
	ck_assert_uint_eq(forged_frames_of(r.out, "prog2", repl, orig, &samples2), 0);
	ck_assert_msg(samples2 >= 50, "prog2 was sampled %lu times", samples2);
	/* Named while it ran (frames resolve as they come), or [unknown] with a warning. */
	ck_assert_msg(strstr(r.out, "burn_") || strstr(r.err, "replaced or removed"),
		      "neither names nor a warning: %s", r.err);
}
END_TEST

/* The 4 bytes that, appended to data whose CRC-32 is crc, make it want (CRC-32 is linear). */
static void crc_forge(uint32_t crc, uint32_t want, unsigned char out[4])
{
	uint32_t table[256], s;
	unsigned char top[256], k[4];

	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int j = 0; j < 8; j++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		table[i] = c;
		top[c >> 24] = (unsigned char)i;	/* the top bytes are all different */
	}
	/* Backwards from the register wanted: which table entry each byte selected. */
	s = ~want;
	for (int i = 3; i >= 0; i--) {
		k[i] = top[s >> 24];
		s = (s ^ table[k[i]]) << 8;
	}
	/* Forwards from the register of the data: the bytes that select them. */
	s = ~crc;
	for (int i = 0; i < 4; i++) {
		out[i] = (unsigned char)((s ^ k[i]) & 0xff);
		s = (s >> 8) ^ table[k[i]];
	}
}

/* CRC-32 (zlib's, as .gnu_debuglink states it) of the file at path. */
static uint32_t file_crc(const char *path)
{
	unsigned char buf[65536];
	uint32_t crc = (uint32_t)crc32(0L, Z_NULL, 0);
	FILE *f = fopen(path, "rb");
	size_t n;

	ck_assert_ptr_nonnull(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		crc = (uint32_t)crc32(crc, buf, (uInt)n);
	fclose(f);
	return crc;
}

/* At path, an ELF note section's bytes: NT_GNU_BUILD_ID of a random bid[20]. */
static void write_random_build_id_note(const char *path, unsigned char bid[20])
{
	FILE *f;

	ck_assert_int_eq(getentropy(bid, 20), 0);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	fwrite(&(uint32_t[3]){ 4, 20, 3 /* NT_GNU_BUILD_ID */ }, 4, 3, f);
	fwrite("GNU", 1, 4, f);
	fwrite(bid, 1, 20, f);
	fclose(f);
}


/*
 * A stripped binary's names come from its debug file: found by build-id
 * under /usr/lib/debug/.build-id, or by .gnu_debuglink (a name and a
 * CRC-32, which four appended bytes make anything match). A debug file
 * of another program must not name its frames: one without a build-id
 * note at the build-id's path (taken on trust before), or one of another
 * build with its CRC made to match. The binary gets a build-id of its own
 * (random), so that no other profile on the host finds the planted file.
 */
START_TEST(a_debug_file_of_another_build_lends_no_names)
{
	bool by_link = _i >= 2;
	char prog[128], other[160], real[160], note[128], cmd[2048], hex[41];
	unsigned char bid[20], tail[4];
	unsigned long samples;
	FILE *f;

	backend = test_backends[_i % 2];
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(real, sizeof(real), "%s/prog.debug", dir);
	snprintf(other, sizeof(other), "%s/other.debug", dir);
	snprintf(note, sizeof(note), "%s/note", dir);
	write_random_build_id_note(note, bid);
	for (int i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	snprintf(cmd, sizeof(cmd),
		 "cp '%s' '%s' && objcopy --update-section .note.gnu.build-id='%s' '%s' && "
		 "objcopy --only-keep-debug '%s' '%s' && objcopy --strip-all '%s' && "
		 "objcopy --only-keep-debug '%s' '%s'",
		 workload("busy"), prog, note, prog, prog, real, prog, workload("ratio31"), other);
	ck_assert_int_eq(system(cmd), 0);
	if (by_link) {
		/* prog names prog.debug and its CRC; another build's, made to match, is put there. */
		uint32_t want = file_crc(real);

		snprintf(cmd, sizeof(cmd), "cd '%s' && objcopy --add-gnu-debuglink=prog.debug prog",
			 dir);
		ck_assert_int_eq(system(cmd), 0);
		crc_forge(file_crc(other), want, tail);
		f = fopen(other, "ab");
		ck_assert_ptr_nonnull(f);
		fwrite(tail, 1, 4, f);
		fclose(f);
		ck_assert_uint_eq(file_crc(other), want);
		ck_assert_int_eq(rename(other, real), 0);
	} else {
		/* At the build-id's path: another program's debug file, without a note. */
		snprintf(planted, sizeof(planted), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex,
			 hex + 2);
		unlink(real);
		snprintf(cmd, sizeof(cmd),
			 "mkdir -p \"$(dirname '%s')\" && objcopy --remove-section "
			 ".note.gnu.build-id '%s' '%s'",
			 planted, other, planted);
		ck_assert_int_eq(system(cmd), 0);
	}
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)backend, "-U", "-F", "999",
			    "-f", "--", prog, "2", "1", NULL },
		60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_uint_eq(forged_frames(r.out, workload("busy"), workload("ratio31"), &samples), 0);
	ck_assert_msg(samples >= 50, "prog was sampled %lu times", samples);
	ck_assert_msg(strstr(r.err, "of another build"), "no warning: %s", r.err);
}
END_TEST

/*
 * An MMAP2 record of 5.12+ names a file by the path the mapping process
 * saw, in its own mount namespace, and the build-id the kernel read from
 * it, which anyone may write into their own file. User 65534 makes a user
 * and mount namespace (unshare -Urm), mounts a program of theirs with the
 * build-id note of root's DIR/bin/prog over that path, and runs it (as
 * "run", a symlink: its own comm); then root runs the real DIR/bin/prog.
 * Root's frames must be named from root's program, never from the file the
 * user mounted (the profiler once took the file first found at a path with
 * a build-id for every later record naming both).
 */
START_TEST(a_build_id_forged_in_a_mount_namespace_lends_no_names)
{
	char bin[160], prog[200], evil[160], mine[200], run[200], note[160], cmd[2048];
	unsigned char bid[20];
	unsigned long samples, own;

	backend = test_backends[_i];
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	snprintf(prog, sizeof(prog), "%s/prog", bin);
	snprintf(evil, sizeof(evil), "%s/evil", dir);
	snprintf(mine, sizeof(mine), "%s/prog", evil);
	snprintf(run, sizeof(run), "%s/run", evil);
	snprintf(note, sizeof(note), "%s/note", dir);
	/* A build-id of their own, so that no other profile on the host meets it. */
	write_random_build_id_note(note, bid);
	snprintf(cmd, sizeof(cmd),
		 "chmod 755 '%s' && mkdir -m 755 '%s' '%s' && "
		 "objcopy --update-section .note.gnu.build-id='%s' '%s' '%s' && "
		 "objcopy --update-section .note.gnu.build-id='%s' '%s' '%s' && "
		 "chown 65534:65534 '%s' && ln -s '%s' '%s'",
		 dir, bin, evil, note, workload("busy"), prog, note, workload("ratio31"), mine, mine,
		 prog, run);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd),
		 "setpriv --reuid 65534 --regid 65534 --clear-groups unshare -Urm sh -c "
		 "\"mount --bind '%s' '%s' && exec '%s' 1 > /dev/null\" && '%s' 2 1",
		 mine, prog, run, prog);
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)backend, "-U", "-F", "999",
			    "-f", "--", "/bin/sh", "-c", cmd, NULL },
		60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	/* The user's program ran from the mount, sampled and named as itself. */
	ck_assert_msg(folded_count_prefix(r.out, "run;") >= 50, "run was not sampled: %s", r.err);
	ck_assert_msg(folded_count(r.out, ";hot_loop") > 0, "run was not the user's program");
	ck_assert_uint_eq(forged_frames_of(r.out, "run", mine, prog, &own), 0);
	/* Root's program: its own names, or none. */
	ck_assert_uint_eq(forged_frames(r.out, prog, mine, &samples), 0);
	ck_assert_msg(samples >= 50, "prog was sampled %lu times", samples);
}
END_TEST

/*
 * Issue 32: a stripped root binary in a sticky world-writable directory
 * (or one that a root service sees there through a mount namespace of its
 * own, as systemd's PrivateTmp gives it, while the profiler looks beside
 * the path in its own) names its debug file in .gnu_debuglink. User 65534
 * makes .debug/prog.debug there: another program's debug file with the
 * binary's build-id note copied in and its CRC forced to the link's. The
 * build-id and the CRC both match; but the place is the user's, and so is
 * the file: root's frames must not be named from it.
 */
START_TEST(a_debug_file_planted_in_a_shared_directory_lends_no_names)
{
	bool private_ns = _i >= 2;
	char shared[160], priv[160], prog[200], debug[200], theirs[200], note[160], cmd[4096];
	unsigned char bid[20], tail[4];
	unsigned long samples;
	uint32_t want;
	FILE *f;

	backend = test_backends[_i % 2];
	ck_assert_int_eq(chmod(dir, 0755), 0);
	snprintf(shared, sizeof(shared), "%s/shared", dir);
	snprintf(priv, sizeof(priv), "%s/private", dir);
	snprintf(prog, sizeof(prog), "%s/prog", private_ns ? priv : shared);
	snprintf(debug, sizeof(debug), "%s/prog.debug", dir);
	snprintf(theirs, sizeof(theirs), "%s/theirs.debug", dir);
	snprintf(note, sizeof(note), "%s/note", dir);
	/* A build-id of its own, so that nothing else on the host has it. */
	write_random_build_id_note(note, bid);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -m 755 '%s' && mkdir -m 1777 '%s' && cp '%s' '%s' && "
		 "objcopy --update-section .note.gnu.build-id='%s' '%s' && "
		 "objcopy --only-keep-debug '%s' '%s' && objcopy --strip-all '%s' && "
		 "cd \"$(dirname '%s')\" && cp '%s' prog.debug && "
		 "objcopy --add-gnu-debuglink=prog.debug prog && rm prog.debug && "
		 "objcopy --only-keep-debug '%s' '%s' && "
		 "objcopy --update-section .note.gnu.build-id='%s' '%s'",
		 priv, shared, workload("busy"), prog, note, prog, prog, debug, prog, prog, debug,
		 workload("ratio31"), theirs, note, theirs);
	ck_assert_int_eq(system(cmd), 0);
	/* The other program's debug file, its CRC made the link's. */
	want = file_crc(debug);
	crc_forge(file_crc(theirs), want, tail);
	f = fopen(theirs, "ab");
	ck_assert_ptr_nonnull(f);
	fwrite(tail, 1, 4, f);
	fclose(f);
	ck_assert_uint_eq(file_crc(theirs), want);
	snprintf(cmd, sizeof(cmd),
		 "setpriv --reuid 65534 --regid 65534 --clear-groups sh -c "
		 "\"mkdir '%s/.debug' && cp '%s' '%s/.debug/prog.debug'\"",
		 shared, theirs, shared);
	ck_assert_int_eq(system(cmd), 0);
	if (private_ns)
		snprintf(cmd, sizeof(cmd),
			 "unshare -m sh -c \"mount --make-rprivate / && mount --bind '%s' '%s' && "
			 "exec '%s/prog' 2 1\"",
			 priv, shared, shared);
	else
		snprintf(cmd, sizeof(cmd), "exec '%s' 2 1", prog);
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)backend, "-U", "-F", "999",
			    "-f", "--", "/bin/sh", "-c", cmd, NULL },
		60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_uint_eq(forged_frames(r.out, workload("busy"), workload("ratio31"), &samples), 0);
	ck_assert_msg(samples >= 50, "prog was sampled %lu times: %s", samples, r.err);
}
END_TEST

Suite *identity_suite(void)
{
	Suite *s = suite_create("identity");
	TCase *tc = tcase_create("identity");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, a_binary_renamed_over_lends_no_names, 0, 2);
	tcase_add_loop_test(tc, a_renamed_exec_is_not_resolved_in_the_old_image, 0, 2);
	tcase_add_loop_test(tc, many_mappings_start_quickly, 0, 2);
	tcase_add_loop_test(tc, forks_share_their_mappings, 0, 2);
	tcase_add_loop_test(tc, a_reused_pid_lends_no_perf_map, 0, 2);
	suite_add_tcase(s, tc);
	/* What build-ids tell apart where device, inode and times cannot. */
	tc = tcase_create("buildid");
	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, a_binary_copied_over_in_place_lends_no_names, 0, 4);
	tcase_add_loop_test(tc, a_debug_file_of_another_build_lends_no_names, 0, 4);
	tcase_add_loop_test(tc, a_build_id_forged_in_a_mount_namespace_lends_no_names, 0, 2);
	suite_add_tcase(s, tc);
	/* Trust, round 3 (issue 32). */
	tc = tcase_create("round3");
	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, a_debug_file_planted_in_a_shared_directory_lends_no_names, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}
