// SPDX-License-Identifier: GPL-2.0
/* The in-kernel unwinder's lookups over the real maps (native_read.h). */
#include "tests/support/native_read.h"

#include <bpf/bpf.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unwind/tables/tables.h"

static int read_row(int fd, uint32_t i, uint32_t *row)
{
	return bpf_map_lookup_elem(fd, &i, row) ? -EBADMSG : 0;
}

int native_read__lookup(const struct native_maps_fds *fds, uint32_t tgid, uint64_t pc,
			struct native_read *out)
{
	struct native_page_key pk;
	struct native_index_key ik;
	struct native_proc proc;
	struct native_range range;
	uint32_t lo, n, key, row, rule_id;

	memset(out, 0, sizeof(*out));
	out->row = -1;
	out->rule.cfa = UNWIND_CFA_NONE;
	if (bpf_map_lookup_elem(fds->procs, &tgid, &proc))
		return -ENOENT;
	memset(&pk, 0, sizeof(pk));
	pk.tgid = tgid;
	pk.page = pc >> NATIVE_PAGE_SHIFT;
	if (bpf_map_lookup_elem(fds->pages, &pk, &out->page))
		return -ENOENT;
	if (out->page.kind == NATIVE_PAGE_SPLIT) {
		pk.small = 1;
		pk.page = pc >> NATIVE_SMALL_SHIFT;
		if (bpf_map_lookup_elem(fds->pages, &pk, &out->page))
			return -ENOENT;		/* a hole between two mappings */
		if (out->page.kind == NATIVE_PAGE_SPLIT)
			return -EBADMSG;
	}
	if (out->page.kind != NATIVE_PAGE_TABLE)
		return 0;
	out->vaddr = pc - out->page.bias;
	memset(&ik, 0, sizeof(ik));
	ik.table = out->page.table;
	ik.page = (uint32_t)(out->vaddr >> NATIVE_PAGE_SHIFT);
	if (out->vaddr >> NATIVE_PAGE_SHIFT > UINT32_MAX ||
	    bpf_map_lookup_elem(fds->index, &ik, &range))
		return 0;		/* no rows in this page: NONE */
	if (!range.nr || range.nr > 1u << NATIVE_PAGE_SHIFT)
		return -EBADMSG;
	key = out->vaddr & ((1u << NATIVE_PAGE_SHIFT) - 1);
	lo = range.first;
	n = range.nr;
	for (unsigned int i = 0; i < UNWIND_TABLE_STEPS; i++) {
		uint32_t half = n / 2;

		if (!half)
			break;
		if (read_row(fds->rows, lo + half, &row))
			return -EBADMSG;
		if (NATIVE_ROW_ADDR(row) <= key) {
			lo += half;
			n -= half;
		} else {
			n = half;
		}
	}
	if (read_row(fds->rows, lo, &row))
		return -EBADMSG;
	rule_id = NATIVE_ROW_RULE(row);
	if (bpf_map_lookup_elem(fds->rules, &rule_id, &out->rule))
		return -EBADMSG;
	out->row = lo;
	if (out->rule.fold_at && key - NATIVE_ROW_ADDR(row) >= out->rule.fold_at)
		out->rule.cfa_off += out->rule.fold_off;
	out->rule.fold_at = 0;
	out->rule.fold_off = 0;
	return 0;
}

void native_read__make_maps(struct native_maps_fds *fds, bool mapped)
{
	LIBBPF_OPTS(bpf_map_create_opts, arr, .map_flags = mapped ? BPF_F_MMAPABLE : 0);
	struct native_map_sizes sz;

	native_store__map_sizes(NULL, &sz);
	fds->procs = bpf_map_create(BPF_MAP_TYPE_HASH, "native_procs", 4,
				    sizeof(struct native_proc), sz.procs, NULL);
	fds->pages = bpf_map_create(BPF_MAP_TYPE_HASH, "native_pages",
				    sizeof(struct native_page_key), sizeof(struct native_page),
				    sz.pages, NULL);
	fds->index = bpf_map_create(BPF_MAP_TYPE_HASH, "native_index",
				    sizeof(struct native_index_key), sizeof(struct native_range),
				    sz.index, NULL);
	fds->rows = bpf_map_create(BPF_MAP_TYPE_ARRAY, "native_rows", 4, 4, sz.rows, &arr);
	fds->rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "native_rules", 4,
				    sizeof(struct native_rule), sz.rules, &arr);
	fds->unknown = bpf_map_create(BPF_MAP_TYPE_HASH, "native_unknown", 4, 4, sz.unknown,
				      NULL);
	fds->epoch = bpf_map_create(BPF_MAP_TYPE_ARRAY, "native_epoch", 4, 4, 1, NULL);
	ck_assert_int_ge(fds->procs, 0);
	ck_assert_int_ge(fds->pages, 0);
	ck_assert_int_ge(fds->index, 0);
	ck_assert_int_ge(fds->rows, 0);
	ck_assert_int_ge(fds->rules, 0);
	ck_assert_int_ge(fds->unknown, 0);
	ck_assert_int_ge(fds->epoch, 0);
}

void native_read__close_maps(struct native_maps_fds *fds)
{
	close(fds->procs);
	close(fds->pages);
	close(fds->index);
	close(fds->rows);
	close(fds->rules);
	close(fds->unknown);
	close(fds->epoch);
}

/* argv started, once /proc/PID/maps names want (its exec done, libc mapped). */
pid_t spawn_mapped(char *const argv[], const char *want)
{
	char path[64], line[4200];
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		execvp(argv[0], argv);
		_exit(126);
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		bool got = false, libc = false;

		while (f && fgets(line, sizeof(line), f)) {
			got |= strstr(line, want) != NULL;
			libc |= strstr(line, "libc.so.6") != NULL;
		}
		if (f)
			fclose(f);
		if (got && libc)
			return pid;
		usleep(10000);
	}
	ck_abort_msg("%s did not start", argv[0]);
	return -1;
}

void stop_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The executable mapping of libc in pid: start, end, pgoff and path. */
void libc_mapping(pid_t pid, uint64_t *start, uint64_t *end, uint64_t *pgoff, char *file,
		  size_t len)
{
	char path[64], line[4200], perms[8], name[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4095s", start,
			   end, perms, pgoff, name) == 5 &&
		    strchr(perms, 'x') && strstr(name, "libc.so.6")) {
			fclose(f);
			snprintf(file, len, "%s", name);
			return;
		}
	}
	fclose(f);
	ck_abort_msg("no libc in pid %d", (int)pid);
}
