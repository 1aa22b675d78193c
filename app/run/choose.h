/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which backend runs: each one's plan for this config, the first that can
 * do all that was asked (--backend auto), else one that can do part of it,
 * else none, with every reason on the -v trail and the one that matters on
 * stderr.
 */
#ifndef APP_RUN_CHOOSE_H
#define APP_RUN_CHOOSE_H

#include "core/backend/backend.h"

/*
 * name: the backend asked for, or NULL for auto. backends: NULL-terminated,
 * in order of preference. Returns the chosen one with its plan, or NULL
 * (the reason printed).
 */
const struct backend_ops *choose_backend(const char *name, const struct backend_ops *const *backends,
					 const struct backend_config *cfg,
					 struct backend_plan *plan);

#endif
