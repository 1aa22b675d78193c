// SPDX-License-Identifier: GPL-2.0
/*
 * -v's lines on the Python frames of a run: the processes found, what the
 * backend's table and the ticks' budget left out, why samples had no
 * Python frames, and who filled their budget of names and line tables.
 */
#include "app/run/python.h"

#include <stdint.h>

#include "app/run/python_early.h"
#include "app/run/python_internal.h"
#include "app/run/python_watch.h"
#include "app/run/scan_budget_internal.h"
#include "core/lib/log.h"
#include "core/model/interp_merge.h"
#include "core/model/resolve.h"
#include "interp/python/registry.h"

/*
 * Who made us refuse names or line tables (a process's budget, py_codes_held):
 * each process still held by its pid and uid, the gone ones in the total.
 */
static void report_budgets(const struct run_python *rp, const struct py_registry_stats *st)
{
	if (!st->over_budget)
		return;
	pr_info("python: %zu processes filled their budget of names and line tables: %llu "
		"line tables (%.1f MiB) not kept, their frames without lines; %llu names not "
		"kept, their frames unnamed\n", st->over_budget,
		(unsigned long long)st->tables_refused, st->table_bytes_refused / 1048576.0,
		(unsigned long long)st->names_refused);
	for (size_t i = 0; i < py_registry__count(rp->reg); i++) {
		const struct py_process *p = py_registry__get(rp->reg, i);
		struct py_codes_held h;

		if (!p->over_budget)
			continue;
		py_codes__held(p->codes, &h);
		pr_info("python: pid %d (uid %d): %zu line tables (%.1f MiB) and %.1f MiB of names "
			"held, the %zu MiB one process may make us hold; %llu line tables "
			"(%.1f MiB) and %llu names refused\n", (int)p->pid,
			p->uid == (uid_t)-1 ? -1 : (int)p->uid, h.tables, h.table_bytes / 1048576.0,
			h.name_bytes / 1048576.0, h.limit >> 20,
			(unsigned long long)h.tables_refused, h.table_bytes_refused / 1048576.0,
			(unsigned long long)h.names_refused);
	}
}

void run_python__report(const struct run_python *rp, const struct pipeline *pl,
			const struct resolver *res)
{
	static const char *const why[] = {
		[INTERP_NO_THREAD] = "their thread was not known yet",
		[INTERP_BAD_THREAD] = "their thread's state was reused",
		[INTERP_IDLE] = "no Python code was running",
		[INTERP_UNREADABLE] = "their thread's state could not be read",
		[INTERP_LOST] = "the frames were not kept (a full map)",
	};
	struct interp_merge_counts mc;
	struct py_registry_stats st;
	uint64_t early_reads, early_frames, rewalks;

	py_registry__stats(rp->reg, &st);
	resolver__interp_counts(res, &mc);
	if (rp->watch.dropped)
		pr_info("python: %llu processes that mapped an interpreter's file were looked for "
			"only at their samples: %d were being looked for already\n",
			(unsigned long long)rp->watch.dropped, PYTHON_WATCH_MAX);
	if (rp->left_out.procs)
		pr_info("python: %zu of %zu Python processes were not walked in the kernel at once "
			"(its table was full; their samples keep their native frames): uid %u ran "
			"%zu of them, and each owner's processes had an equal share of the table\n",
			rp->left_out.procs, rp->left_out.of, (unsigned int)rp->left_out.uid,
			rp->left_out.uid_procs);
	if (rp->ticks_over)
		pr_info("python: %llu ticks ran out of their %d ms for reading Python processes (the "
			"rest was read at the next ones); the costliest thread list to read: pid %d "
			"(uid %d), %.1f ms\n",
			(unsigned long long)rp->ticks_over, TICK_BUDGET_MS, (int)rp->slowest_pid,
			rp->slowest_uid == (uid_t)-1 ? -1 : (int)rp->slowest_uid, rp->slowest_us / 1000.0);
	if (st.idle)
		pr_info("python: %llu looks at processes that map an interpreter but run none "
			"(not Python processes until they do)\n", (unsigned long long)st.idle);
	if (!st.processes && !st.refused)
		return;
	pr_info("python: %zu processes, %llu samples with Python frames\n", st.processes,
		(unsigned long long)pl->interp_samples[INTERP_FRAMES]);
	python_early__counts(rp->early, &early_reads, &early_frames, &rewalks);
	if (early_reads)
		pr_info("python: %llu samples read right after they were taken (the reader "
			"thread), %llu of them with Python frames; the others at the drain\n",
			(unsigned long long)early_reads, (unsigned long long)early_frames);
	if (rewalks)
		pr_info("python: %llu walks read again: the thread left the frame they began "
			"with while they read its callers\n", (unsigned long long)rewalks);
	for (size_t i = INTERP_NO_THREAD; i <= INTERP_LOST; i++)
		if (pl->interp_samples[i])
			pr_info("python: %llu samples without Python frames: %s\n",
				(unsigned long long)pl->interp_samples[i], why[i]);
	if (pl->interp_other_process)
		pr_info("python: %llu samples counted in the kernel over an interval in which their "
			"pid was two processes' (one ended, another took its pid): their Python frames "
			"cannot be told apart, [python: process ended]\n",
			(unsigned long long)pl->interp_other_process);
	if (pl->interp_cut)
		pr_info("python: %llu samples with their Python stack cut (deeper than %d frames, "
			"or a frame unreadable)\n",
			(unsigned long long)pl->interp_cut, MAX_INTERP_DEPTH);
	if (mc.no_eval)
		pr_info("python: %llu of %llu stacks with Python frames put them under the native "
			"leaf frames: the native walk did not reach the eval loop (an interpreter "
			"built without frame pointers; --unwind dwarf interleaves them)\n",
			(unsigned long long)mc.no_eval, (unsigned long long)mc.stacks);
	if (mc.mismatched)
		pr_info("python: %llu stacks had more or fewer eval loop calls than runs of Python "
			"frames\n", (unsigned long long)mc.mismatched);
	if (mc.unnamed)
		pr_info("python: %llu frames could not be named (the process's memory could not "
			"be read)\n", (unsigned long long)mc.unnamed);
	if (mc.ended || st.handed_over || st.no_handle)
		pr_info("python: %llu frames of processes that ended before their names were read: "
			"[python: process ended] (%zu processes' pids were another's before their "
			"memory was opened; %zu could not be opened)\n",
			(unsigned long long)mc.ended, st.handed_over, st.no_handle);
	if (mc.freed)
		pr_info("python: %llu frames ran code objects freed before they were named "
			"(freed memory is not read for names; a module's body at an import, "
			"throwaway code): [python: code object freed]\n",
			(unsigned long long)mc.freed);
	report_budgets(rp, &st);
}
