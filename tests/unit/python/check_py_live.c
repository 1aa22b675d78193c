// SPDX-License-Identifier: GPL-2.0
/*
 * interp/python on real interpreters: a script records its threads' frames
 * (sys._current_frames: qualname or name, file, line) and stops itself
 * with SIGSTOP; the stopped process is then read from outside (detection,
 * validation, threads, walk, names) and must give exactly what it
 * recorded. Each of pyenv's versions (2.7, 3.6-3.13) and Debian's static
 * /usr/bin/python3.11 that is installed; the others are skipped. The
 * threads: main (a generator, called from a lambda that sorted() calls,
 * with unicode names of each width), one inside zlib.compress with the GIL
 * released, one waiting on an Event. Reading a child needs no root.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "interp/python/python.h"
#include "tests/support/tests.h"
#include "tests/unit/python/pyenv.h"

/*
 * The script, for Python 2.7 and 3.x; %1$s..%3$s are the names of the
 * generator, the key function and the method (unicode of widths 1, 2 and 4
 * on 3.x: identifiers must be ASCII on 2.7).
 */
static const char script[] =
	"# -*- coding: utf-8 -*-\n"
	"import os, signal, sys, threading, time, zlib\n"
	"natives = {}\n"
	"started = threading.Event()\n"
	"never = threading.Event()\n"
	"def native_id():\n"
	"    try:\n"
	"        return threading.get_native_id()\n"
	"    except AttributeError:\n"
	"        import ctypes\n"
	"        return ctypes.CDLL(None).syscall(186)\n"
	"def note():\n"
	"    natives[threading.current_thread().ident] = native_id()\n"
	"def frames_of(f):\n"
	"    out = []\n"
	"    while f is not None:\n"
	"        c = f.f_code\n"
	"        out.append('frame\\t%%s\\t%%s\\t%%d' %% (getattr(c, 'co_qualname', c.co_name),\n"
	"                   c.co_filename, f.f_lineno))\n"
	"        f = f.f_back\n"
	"    return out\n"
	"def snapshot():\n"
	"    me = threading.current_thread().ident\n"
	"    out = []\n"
	"    for ident, f in sys._current_frames().items():\n"
	"        if ident == me:\n"
	"            f = f.f_back\n"
	"        out.append('thread %%d %%d' %% (ident, natives.get(ident, 0)))\n"
	"        out.extend(frames_of(f))\n"
	"    out.append('READY\\n')\n"
	"    text = '\\n'.join(out)\n"
	"    if not isinstance(text, bytes):\n"
	"        text = text.encode('utf-8')\n"
	"    getattr(sys.stdout, 'buffer', sys.stdout).write(text)\n"
	"    sys.stdout.flush()\n"
	"def squeeze():\n"
	"    note()\n"
	"    data = os.urandom(1 << 20) * 32\n"
	"    started.set()\n"
	"    while True:\n"
	"        zlib.compress(data, 9)\n"
	"def wait_forever():\n"
	"    note()\n"
	"    never.wait()\n"
	"def stopper():\n"
	"    snapshot(); os.kill(os.getpid(), signal.SIGSTOP); os._exit(0)\n"
	"def %1$s():\n"
	"    stopper()\n"
	"    yield 1\n"
	"def %2$s(x):\n"
	"    if x == 2:\n"
	"        next(%1$s())\n"
	"    return x\n"
	"class Worker(object):\n"
	"    def %3$s(self):\n"
	"        return sorted([3, 2, 1], key=lambda x: %2$s(x))\n"
	"def main():\n"
	"    note()\n"
	"    for fn in (squeeze, wait_forever):\n"
	"        t = threading.Thread(target=fn)\n"
	"        t.daemon = True\n"
	"        t.start()\n"
	"    started.wait()\n"
	"    while len(natives) < 3:\n"
	"        time.sleep(0.01)\n"
	"    time.sleep(0.2)\n"
	"    Worker().%3$s()\n"
	"main()\n";

/* Frames and threads the script recorded. */
struct want_thread {
	unsigned long long ident, native;
	size_t first, nr;	/* its frames in want_frames */
};

struct want_frame {
	char *name, *file;
	int line;
};

struct truth {
	struct want_thread threads[16];
	size_t nr_threads;
	struct want_frame frames[256];
	size_t nr_frames;
};

static void parse_truth(char *out, struct truth *t)
{
	char *save = NULL;

	memset(t, 0, sizeof(*t));
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "thread ", 7)) {
			struct want_thread *w = &t->threads[t->nr_threads++];

			ck_assert_uint_le(t->nr_threads, 16);
			ck_assert_int_eq(sscanf(line + 7, "%llu %llu", &w->ident, &w->native), 2);
			w->first = t->nr_frames;
		} else if (!strncmp(line, "frame\t", 6)) {
			struct want_frame *f = &t->frames[t->nr_frames++];
			char *name = line + 6, *file = strchr(name, '\t'), *num;

			ck_assert(t->nr_threads && t->nr_frames <= 256 && file);
			*file++ = '\0';
			num = strrchr(file, '\t');
			ck_assert_ptr_nonnull(num);
			*num++ = '\0';
			f->name = name;
			f->file = file;
			f->line = atoi(num);
			t->threads[t->nr_threads - 1].nr++;
		}
	}
}

/* Runs the script under exe until it has stopped itself; its output in *out. */
static pid_t start_stopped(const char *exe, const char *script_path, char **out)
{
	size_t len = 0, cap = 65536;
	int pipefd[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(pipefd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		/* A failed test must not leave a stopped process behind. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		/* UTF-8 file names whatever the locale (3.6 would take them as ASCII). */
		setenv("LC_ALL", "C.UTF-8", 1);
		execl(exe, exe, "-E", "-s", script_path, (char *)NULL);
		_exit(126);
	}
	close(pipefd[1]);
	*out = malloc(cap);
	ck_assert_ptr_nonnull(*out);
	while (len < cap - 1) {
		ssize_t n = read(pipefd[0], *out + len, cap - 1 - len);

		if (n <= 0)
			break;
		len += n;
		(*out)[len] = '\0';
		if (strstr(*out, "READY\n"))
			break;
	}
	(*out)[len] = '\0';
	close(pipefd[0]);
	ck_assert_msg(strstr(*out, "READY\n"), "%s: no record: %s", exe, *out);
	ck_assert_int_eq(waitpid(pid, &status, WUNTRACED), pid);
	ck_assert_msg(WIFSTOPPED(status), "%s did not stop", exe);
	return pid;
}

/* The first mapping of a file of pid whose name contains needle: its path and load bias. */
static bool find_mapping(pid_t pid, const char *needle, char *path, size_t len, uint64_t *bias)
{
	char maps[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long start, off;
		char *p = strchr(line, '/');

		if (!p || !strstr(p, needle) || sscanf(line, "%llx-%*x %*s %llx", &start, &off) != 2 ||
		    off)
			continue;
		p[strcspn(p, "\n")] = '\0';
		snprintf(path, len, "%s", p);
		*bias = start;
		found = true;
	}
	fclose(f);
	return found;
}

/* The bias of a file mapped at start: start less its first PT_LOAD's page. */
static uint64_t load_bias(int fd, uint64_t start)
{
	Elf *elf;
	size_t n;
	uint64_t vaddr = 0;

	ck_assert(elf_version(EV_CURRENT) != EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	ck_assert_int_eq(elf_getphdrnum(elf, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD) {
			vaddr = ph.p_vaddr & ~0xfffULL;
			break;
		}
	}
	elf_end(elf);
	return start - vaddr;
}

/* Compares one thread's walk, named, with what the script recorded. */
static void check_thread(const struct py_interp *pi, struct py_proc_mem *pm,
			 struct py_codes *codes, const struct py_tstate *t, const struct truth *truth,
			 const struct want_thread *w, const char *exe)
{
	struct py_stack *st = malloc(sizeof(*st));
	size_t k = 0;

	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(py_walk(pi->layout, &pm->mem, t->tstate, st), 0);
	ck_assert_uint_eq(st->status, 0);
	for (uint32_t i = 0; i < st->nr_frames; i++) {
		const struct want_frame *f;
		struct py_code_info info;

		if (py_frame__is_shim(pi->layout, &st->frames[i]))
			continue;
		ck_assert_msg(k < w->nr, "%s: thread %llu: more frames than recorded", exe,
			      w->ident);
		f = &truth->frames[w->first + k++];
		/* Live code: alive, with the identity it was walked with. */
		ck_assert_uint_ne(st->frames[i].ident, 0);
		ck_assert_int_eq(py_codes__lookup(codes, st->frames[i].code, st->frames[i].ident,
						  st->frames[i].lasti, &info), 0);
		if (getenv("PY_LIVE_VERBOSE"))
			fprintf(stderr, "%s: thread %llu: %s (%s:%d)%s\n", exe, w->ident, info.name,
				py_short_filename(info.file), info.line,
				st->frames[i].code & PY_FRAME_ENTRY ? " [entry]" : "");
		ck_assert_msg(!strcmp(info.name, f->name) && !strcmp(info.file, f->file) &&
				      info.line == f->line,
			      "%s: thread %llu frame %zu: read %s (%s:%d), recorded %s (%s:%d)", exe,
			      w->ident, k - 1, info.name, info.file, info.line, f->name, f->file,
			      f->line);
	}
	ck_assert_msg(k == w->nr, "%s: thread %llu: %zu frames read, %zu recorded", exe, w->ident,
		      k, w->nr);
	free(st);
}

static void write_script(const char *dir, const char *file, bool ascii)
{
	char path[512];
	FILE *f;

	ck_assert(mkdir(dir, 0700) == 0 || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	if (ascii)
		fprintf(f, script, "gen_frames", "key_two", "run_sorted");
	else
		fprintf(f, script, "g\xc3\xa9n\xc3\xa9rateur", "\xcf\x80_key",
			"\xf0\xa0\x80\x80_run");
	fclose(f);
}

START_TEST(stopped_interpreters_read_as_they_record_themselves)
{
	const char *minor = py_test_minors[_i];
	char exe_buf[512], dir[256], script_path[512], lib[4096], libc[4096], *out;
	const char *exe = py_test_interpreter(minor, exe_buf, sizeof(exe_buf));
	struct py_tstate threads[64];
	struct errmsg why = { "" };
	struct py_proc_mem pm;
	struct py_interp pi;
	struct py_codes *codes;
	uint32_t tid_offset = PY_GLIBC_TID_OFFSET;
	uint64_t start;
	unsigned int flags;
	struct truth truth;
	int fd, n, ret;
	pid_t pid;

	if (!exe) {
		fprintf(stderr, "py_live: no Python %s here: skipped\n", minor);
		return;
	}
	snprintf(dir, sizeof(dir), "/tmp/profile-py-%d-\xc3\xbc", (int)getpid());
	snprintf(script_path, sizeof(script_path), "%s/pr\xc3\xbc" "f_\xc3\x9f.py", dir);
	write_script(dir, "pr\xc3\xbc" "f_\xc3\x9f.py", !strcmp(minor, "2.7"));
	pid = start_stopped(exe, script_path, &out);
	parse_truth(out, &truth);
	ck_assert_uint_eq(truth.nr_threads, 3);

	/* The interpreter: libpython if the process maps one, else the executable. */
	if (!find_mapping(pid, "/libpython", lib, sizeof(lib), &start))
		ck_assert(find_mapping(pid, exe, lib, sizeof(lib), &start));
	fd = open(lib, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ret = py_detect(fd, lib, load_bias(fd, start), &pi, &why);
	close(fd);
	ck_assert_msg(ret == 1, "%s: detect %d: %s", lib, ret, why.text);
	ck_assert_msg(pi.nr_eval >= 1, "%s: no eval loop", lib);
	if (strcmp(minor, "debian"))
		ck_assert_int_eq(pi.minor, atoi(minor + 2));
	ck_assert_int_eq(pi.version_from,
			 pi.minor >= 11 ? PY_VERSION_FROM_PY_VERSION : PY_VERSION_FROM_NAME);
	if (find_mapping(pid, "/libc.so.6", libc, sizeof(libc), &start)) {
		fd = open(libc, O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(py_glibc_tid_offset(fd, &tid_offset), 0);
		close(fd);
	}
	py_proc_mem__init(&pm, pid);
	ck_assert_msg(!py_interp__validate(&pi, &pm.mem, &why), "%s: %s", lib, why.text);
	if (pi.minor >= 13)
		ck_assert_int_ge(pi.micro, 0);
	n = py_threads__read(&pi, &pm.mem, tid_offset, threads, 64, &flags);
	ck_assert_msg(n >= 3, "%s: %d threads", lib, n);
	ck_assert_uint_eq(flags, 0);
	codes = py_codes__new(&pi, &pm.mem);
	ck_assert_ptr_nonnull(codes);
	for (size_t w = 0; w < truth.nr_threads; w++) {
		const struct want_thread *want = &truth.threads[w];
		uint64_t check = pi.layout->tstate_native_tid >= 0 ? want->native : want->ident;
		int found = -1;

		for (int i = 0; i < n; i++)
			if (threads[i].check == check)
				found = i;
		ck_assert_msg(found >= 0, "%s: thread %llu not found", lib, want->ident);
		ck_assert_uint_eq(threads[found].tid, want->native);
		check_thread(&pi, &pm, codes, &threads[found], &truth, want, exe);
	}
	py_codes__free(codes);
	kill(pid, SIGCONT);
	ck_assert_int_eq(waitpid(pid, &ret, 0), pid);
	ck_assert(WIFEXITED(ret) && WEXITSTATUS(ret) == 0);
	free(out);
	unlink(script_path);
	rmdir(dir);
}
END_TEST

Suite *py_live_suite(void)
{
	Suite *s = suite_create("py_live");
	TCase *tc = tcase_create("interpreters");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, stopped_interpreters_read_as_they_record_themselves, 0, PY_TEST_NR_MINORS);
	suite_add_tcase(s, tc);
	return s;
}
