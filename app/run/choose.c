// SPDX-License-Identifier: GPL-2.0
#include "app/run/choose.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "compat/features.h"
#include "compat/host.h"
#include "core/lib/interrupt.h"
#include "core/lib/log.h"

static void print_features(void)
{
	struct utsname u;

	pr_info("kernel %s\n", kernel_release());
	if (!uname(&u) && kernel_cuts_syscall_user_stacks(u.release, u.machine))
		pr_info("note: before Linux 4.16 a system call on x86-64's fast path does not save "
			"rbp: user stacks taken inside one (off-CPU stacks, samples in system "
			"calls) may end at the libc wrapper, in perf record's profiles too\n");
	for (enum kernel_feature f = 0; f < __FEAT_CNT && log_verbosity() >= 2; f++)
		pr_debug("feature %s: %s\n", kernel_feature__desc(f),
			 feature_state__name(kernel_feature__state(f)));
}

/* A plan's reason: a backend that wrote none still has its errno said, never an empty reason. */
static const char *why_of(const struct backend_plan *p)
{
	if (p->why[0])
		return p->why;
	return p->err ? strerror(-p->err) : "no reason given";
}

const struct backend_ops *choose_backend(const char *name, const struct backend_ops *const *backends,
					 const struct backend_config *cfg,
					 struct backend_plan *plan)
{
	const struct backend_ops *partial = NULL;
	struct backend_plan partial_plan;
	char all_why[1536] = "";

	print_features();
	for (int i = 0; backends[i]; i++) {
		const struct backend_ops *ops = backends[i];

		if (name && strcmp(ops->name, name))
			continue;
		memset(plan, 0, sizeof(*plan));
		ops->probe(cfg, plan);
		/* A stop during the probe (a BPF load gives way to it): the run says so. */
		if (interrupt__pending())
			return NULL;
		if (!plan->err && plan->partial && !name) {
			/* Keep looking for one that does all that was asked. */
			pr_info("backend %s: usable, but %s\n", ops->name, why_of(plan));
			if (!partial) {
				partial = ops;
				partial_plan = *plan;
			}
			continue;
		}
		if (!plan->err) {
			if (plan->partial)
				pr_warn("note: %s\n", why_of(plan));
			if (plan->user_mode_only)
				pr_warn("note: kernel stacks are not collected: %s\n", why_of(plan));
			pr_info("backend %s: usable; chosen\n", ops->name);
			return ops;
		}
		if (name) {
			pr_warn("backend %s cannot run here: %s\n", ops->name, why_of(plan));
			return NULL;
		}
		pr_info("backend %s: not used: %s\n", ops->name, why_of(plan));
		snprintf(all_why + strlen(all_why), sizeof(all_why) - strlen(all_why), "%s%s: %s",
			 all_why[0] ? "; " : "", ops->name, why_of(plan));
	}
	if (partial) {
		*plan = partial_plan;
		pr_warn("note: %s\n", why_of(plan));
		pr_info("backend %s: chosen, the others being unusable\n", partial->name);
		return partial;
	}
	if (name)
		pr_warn("backend %s is not built into this profile\n", name);
	else
		pr_warn("no backend can run here: %s\n", all_why);
	return NULL;
}
