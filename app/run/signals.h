/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Signals during a run: SIGINT, SIGTERM and SIGHUP end sampling (and the
 * report is still printed; one more stops the report, see
 * core/lib/interrupt.h), SIGCHLD wakes the loop; each wakes it through a
 * pipe so that no wait outlasts a signal. SIGTERM and SIGHUP are passed on
 * to a launched command, which gets Ctrl-C from the terminal itself.
 */
#ifndef APP_RUN_SIGNALS_H
#define APP_RUN_SIGNALS_H

#include <signal.h>
#include <sys/types.h>

/* Returns 0 or -errno. */
int signals__install(void);
/* The read end of the wake-up pipe: readable once a signal arrived. */
int signals__wake_fd(void);
/* Empty the wake-up pipe. */
void signals__drain_wakeups(void);
/*
 * After sampling: a stop signal interrupts the system call it lands in (a
 * write blocked on a full pipe) instead of restarting it, and puts
 * /dev/null at out_fd (the report's standard output, or -1), so that the
 * report stops within a second whatever it was doing (SIGCHLD still
 * restarts). Returns 0 or -errno.
 */
int signals__interrupt_syscalls(int out_fd);
/* The signal that asked the run to stop, or 0. */
int signals__stop_requested(void);
/*
 * In a launched command before exec: the dispositions and the signal mask
 * the profiler was started with (SIGPIPE not ignored, nothing blocked that
 * was not), whatever the profiler changed.
 */
void signals__restore_original(void);
/* Pass SIGTERM and SIGHUP on to this process (the launched command); 0 for none. */
void signals__forward_to(pid_t pid);

#endif
