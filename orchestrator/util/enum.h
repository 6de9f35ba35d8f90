/* Enum <-> name tables, one per enum, as libvirt's VIR_ENUM_DECL and
 * VIR_ENUM_IMPL: the header says KLAB_ENUM_DECL(type), the .c file
 * KLAB_ENUM_IMPL(type, last, names...), one name per value below last in
 * order (the build fails otherwise; NULL for a value without a name).
 * They give
 *   const char *type_to_string(int v)    the name; NULL outside the table
 *   int type_from_string(const char *s)  the value; -1 for a name the table
 *                                        lacks; NULL: the value named NULL
 *                                        (or -1) */
#ifndef KLAB_ENUM_H
#define KLAB_ENUM_H

#include <string.h>

#include "util/alloc.h"

#define KLAB_ENUM_DECL(type)                         \
	const char *type##_to_string(int v);         \
	int type##_from_string(const char *name)

#define KLAB_ENUM_IMPL(type, last, ...)                                                     \
	static const char *const type##_names[] = { __VA_ARGS__ };                          \
	_Static_assert(ARRAY_SIZE(type##_names) == (last), "one name per value of " #type); \
	const char *type##_to_string(int v)                                                 \
	{                                                                                   \
		return enum_name(type##_names, (int)(last), v);                             \
	}                                                                                   \
	int type##_from_string(const char *name)                                            \
	{                                                                                   \
		return enum_value(type##_names, (int)(last), name);                         \
	}

static inline const char *enum_name(const char *const *names, int n, int v)
{
	return v >= 0 && v < n ? names[v] : NULL;
}

static inline int enum_value(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (name ? names[i] && !strcmp(names[i], name) : !names[i])
			return i;
	return -1;
}

#endif
