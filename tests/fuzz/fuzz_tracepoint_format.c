// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: an event format file of arbitrary bytes, parsed by
 * tp_format__parse, then looked up as the off-CPU loader does. The file is
 * the kernel's (root-owned), but the parser must be total: any input gives
 * 0 or -errno with a reason, never a read outside the text or a field
 * beyond a record.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compat/tracepoint.h"

static struct tp_format fmt;

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sched_switch_layout layout;
	char reason[256] = "";
	char *text;
	uint64_t v;
	int err;

	/* Exactly size bytes, no terminating NUL: any read past them is caught. */
	text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	err = tp_format__parse(&fmt, text, size, reason, sizeof(reason));
	free(text);
	if (err) {
		check(err == -EINVAL || err == -E2BIG);
		check(reason[0] != '\0' && memchr(reason, '\0', sizeof(reason)));
		return 0;
	}
	check(fmt.nr_fields > 0 && fmt.nr_fields <= TP_MAX_FIELDS);
	check(fmt.nr_flags <= TP_MAX_FLAGS);
	check(memchr(fmt.name, '\0', sizeof(fmt.name)) != NULL);
	for (unsigned int i = 0; i < fmt.nr_fields; i++) {
		const struct tp_field *f = &fmt.fields[i];

		check(memchr(f->name, '\0', sizeof(f->name)) && f->name[0]);
		check(memchr(f->type, '\0', sizeof(f->type)) && f->type[0]);
		check(f->offset <= TP_MAX_RECORD && f->size <= TP_MAX_RECORD - f->offset);
		check(tp_format__field(&fmt, f->name) != NULL);
	}
	for (unsigned int i = 0; i < fmt.nr_flags; i++) {
		check(memchr(fmt.flags[i].name, '\0', sizeof(fmt.flags[i].name)) != NULL);
		check(tp_format__flag(&fmt, fmt.flags[i].name, &v) == 0);
	}
	err = sched_switch__layout(&fmt, &layout, reason, sizeof(reason));
	if (!err) {
		check(layout.next_pid_off != 0);
		check(layout.prev_state_size == 4 || layout.prev_state_size == 8);
		check(layout.state_mask != 0);
	} else {
		check(err == -EINVAL && reason[0]);
	}
	return 0;
}
