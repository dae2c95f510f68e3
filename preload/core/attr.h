/* attr.h — compiler attributes every preload file uses: the one export marker (everything
 * else is hidden by -fvisibility=hidden) and branch hints. No functions live here. */
#ifndef VT_PRELOAD_ATTR_H
#define VT_PRELOAD_ATTR_H

#define VT__EXPORT __attribute__((visibility("default")))
#define VT__LIKELY(x) __builtin_expect(!!(x), 1)
#define VT__UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif
