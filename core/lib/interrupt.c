// SPDX-License-Identifier: GPL-2.0
#include "core/lib/interrupt.h"

#include <signal.h>

static volatile sig_atomic_t raised, armed;

void interrupt__raise(void)
{
	raised++;
}

void interrupt__arm(void)
{
	armed = raised;
}

bool interrupt__pending(void)
{
	return raised != armed;
}
