// SPDX-License-Identifier: GPL-2.0-only
/*
 * insnprof: a QEMU TCG plugin that counts the guest instructions executed
 * from every translated block, by the block's start address.
 *
 * Every block gets one inline counter (an add of 1 at the block's entry,
 * no helper call), so the guest runs at close to its usual TCG speed.  At
 * QEMU's exit (isa-debug-exit included) it writes one line per address:
 *
 *	<vaddr hex> <instructions per execution> <executions>
 *
 * sorted by address, to the file named by out=PATH.  A block that QEMU
 * translated again with a different length (icount I/O, a changed page)
 * gives one line per length.  The counts include blocks the guest left
 * early (an exception, an interrupt under icount), so they are an upper
 * bound by a few blocks' worth.
 *
 * Load it with:  -plugin path/to/insnprof.so,out=/tmp/profile.txt
 * harness/boot/insnprof.py turns the file into instructions per kernel symbol.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct block {
	uint64_t vaddr;
	uint64_t n_insns;
	uint64_t execs;		/* incremented by code QEMU emits inline */
};

/*
 * Open addressing on (vaddr, n_insns); the table holds pointers so that
 * the counters QEMU's generated code adds to never move when it grows.
 */
static struct block **table;
static size_t table_size = 1 << 16;
static size_t table_used;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static char *out_path;

static size_t slot_of(uint64_t vaddr, uint64_t n)
{
	uint64_t h = (vaddr ^ (n << 48)) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 16) & (table_size - 1);
}

static struct block **find_slot(struct block **t, uint64_t vaddr, uint64_t n)
{
	size_t i = slot_of(vaddr, n);

	while (t[i] && (t[i]->vaddr != vaddr || t[i]->n_insns != n))
		i = (i + 1) & (table_size - 1);
	return &t[i];
}

static int grow(void)
{
	struct block **old = table;
	size_t old_size = table_size, i;

	table = calloc(old_size * 2, sizeof(*table));
	if (!table) {
		table = old;
		return -1;
	}
	table_size = old_size * 2;
	for (i = 0; i < old_size; i++)
		if (old[i])
			*find_slot(table, old[i]->vaddr, old[i]->n_insns) = old[i];
	free(old);
	return 0;
}

static struct block *lookup(uint64_t vaddr, uint64_t n)
{
	struct block **slot, *b;

	if (2 * (table_used + 1) > table_size && grow())
		return NULL;
	slot = find_slot(table, vaddr, n);
	if (*slot)
		return *slot;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->vaddr = vaddr;
	b->n_insns = n;
	*slot = b;
	table_used++;
	return b;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b;

	(void)id;
	pthread_mutex_lock(&table_lock);
	b = lookup(qemu_plugin_tb_vaddr(tb), qemu_plugin_tb_n_insns(tb));
	pthread_mutex_unlock(&table_lock);
	if (b)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &b->execs, 1);
}

static int by_vaddr(const void *a, const void *b)
{
	const struct block *x = *(struct block *const *)a;
	const struct block *y = *(struct block *const *)b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return x->n_insns < y->n_insns ? -1 : x->n_insns > y->n_insns;
}

static void write_profile(qemu_plugin_id_t id, void *userdata)
{
	struct block **list;
	size_t i, n = 0;
	char msg[256];
	FILE *f;

	(void)id;
	(void)userdata;
	list = malloc((table_used + 1) * sizeof(*list));
	f = fopen(out_path, "w");
	if (!list || !f) {
		snprintf(msg, sizeof(msg), "insnprof: cannot write %s: %s\n",
			 out_path, strerror(errno));
		qemu_plugin_outs(msg);
		free(list);
		if (f)
			fclose(f);
		return;
	}
	for (i = 0; i < table_size; i++)
		if (table[i] && table[i]->execs)
			list[n++] = table[i];
	qsort(list, n, sizeof(*list), by_vaddr);
	for (i = 0; i < n; i++)
		fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
			list[i]->vaddr, list[i]->n_insns, list[i]->execs);
	free(list);
	if (fclose(f)) {
		snprintf(msg, sizeof(msg), "insnprof: writing %s: %s\n",
			 out_path, strerror(errno));
		qemu_plugin_outs(msg);
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4) && argv[i][4]) {
			out_path = strdup(argv[i] + 4);
		} else {
			fprintf(stderr, "insnprof: unknown argument '%s' (takes out=PATH)\n",
				argv[i]);
			return -1;
		}
	}
	if (!out_path) {
		fprintf(stderr, "insnprof: needs out=PATH\n");
		return -1;
	}
	table = calloc(table_size, sizeof(*table));
	if (!table)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, write_profile, NULL);
	return 0;
}
