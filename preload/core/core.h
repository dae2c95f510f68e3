/* core.h — kept only because writer.c (rewritten on its own branch) includes it: the config
 * and output declarations writer.c uses. Every other file includes the owner's header
 * (config.h, output.h, thread.h, card.h, device.h, record.h, call.h, ...); when writer.c
 * includes config.h and output.h itself, this file goes. */
#ifndef VT_PRELOAD_CORE_H
#define VT_PRELOAD_CORE_H

#include "config.h"
#include "output.h"
#include "vramtrace/trace_format.h"

#endif
