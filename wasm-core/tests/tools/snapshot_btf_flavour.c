/*
 * snapshot_btf_flavour.c - writes a copy of a kernel's BTF changed to the
 * layout of another SLUB era, so that the snapshot program's CO-RE branches
 * for kernels this machine does not run can be loaded, verified and run
 * here (SLABLAB_SNAPSHOT_BTF=FILE makes `slablab snapshot` relocate against
 * FILE; the kernel still verifies and runs the program).
 *
 *   snapshot_btf_flavour IN_BTF OUT_BTF ERA
 *
 *   6.17  no sheaves: kmem_cache.cpu_sheaves, .sheaf_capacity and
 *         kmem_cache_node.barn renamed away
 *   7.0   no per-CPU slab: kmem_cache.cpu_slab and .cpu_partial renamed away
 *   7.1   as 7.0, and kmem_cache.node[] becomes per_node[] of
 *         struct kmem_cache_per_node_ptrs { node; barn; }, the node's barn gone
 *
 * A renamed member is one the program's bpf_core_field_exists() does not
 * find, as on those kernels.  Offsets stay this kernel's, so on the 6.17
 * and 7.0 layouts the fields still present read true values.  7.1's
 * per_node[i] is laid over this kernel's node[2i], node[2i+1]: node 0's lists
 * read true values, its "barn" is node[1] (NULL with one node), so that run
 * proves the per_node branch loads, runs and finds the node, not the barn.
 * Exit status 0, or 1 with a message.
 */
#include <bpf/btf.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what)
{
    fprintf(stderr, "snapshot_btf_flavour: %s\n", what);
    return 1;
}

/* The member `name` of struct `type` (NULL when absent); valid until the BTF is next changed. */
static struct btf_member *member(struct btf *btf, const char *type, const char *name)
{
    int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
    if (id < 0)
        return NULL;
    const struct btf_type *t = btf__type_by_id(btf, id);
    struct btf_member *m = btf_members(t);
    for (unsigned i = 0; i < btf_vlen(t); i++, m++)
        if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
            return m;
    return NULL;
}

/* Renames type.name to name___absent, which no CO-RE access matches. */
static int hide(struct btf *btf, const char *type, const char *name)
{
    char gone[128];
    snprintf(gone, sizeof gone, "%s___absent", name);
    int off = btf__add_str(btf, gone); /* first: adding may move the types */
    struct btf_member *m = member(btf, type, name);
    if (off < 0 || !m)
        return -1;
    m->name_off = (unsigned)off;
    return 0;
}

static int per_node(struct btf *btf)
{
    int barn = btf__find_by_name_kind(btf, "node_barn", BTF_KIND_STRUCT);
    int node = btf__find_by_name_kind(btf, "kmem_cache_node", BTF_KIND_STRUCT);
    int u32 = btf__find_by_name_kind(btf, "unsigned int", BTF_KIND_INT);
    if (barn < 0 || node < 0 || u32 < 0)
        return -1;
    int barn_ptr = btf__add_ptr(btf, barn), node_ptr = btf__add_ptr(btf, node);
    int ptrs = btf__add_struct(btf, "kmem_cache_per_node_ptrs", 16);
    /* node first, so that per_node[i].node lands on this kernel's node[i]: the node lists read true. */
    if (barn_ptr < 0 || node_ptr < 0 || ptrs < 0 || btf__add_field(btf, "node", node_ptr, 0, 0) ||
        btf__add_field(btf, "barn", barn_ptr, 64, 0))
        return -1;
    int array = btf__add_array(btf, u32, ptrs, 512);
    int name = btf__add_str(btf, "per_node");
    struct btf_member *m = member(btf, "kmem_cache", "node");
    if (array < 0 || name < 0 || !m)
        return -1;
    m->name_off = (unsigned)name;
    m->type = (unsigned)array;
    return hide(btf, "kmem_cache_node", "barn");
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return fail("usage: snapshot_btf_flavour IN_BTF OUT_BTF (6.17|7.0|7.1)");
    struct btf *btf = btf__parse(argv[1], NULL);
    if (!btf)
        return fail("cannot read the input BTF");
    int rc = 0;
    if (!strcmp(argv[3], "6.17"))
        rc = hide(btf, "kmem_cache", "cpu_sheaves") || hide(btf, "kmem_cache", "sheaf_capacity") ||
             hide(btf, "kmem_cache_node", "barn");
    else if (!strcmp(argv[3], "7.0") || !strcmp(argv[3], "7.1"))
        rc = hide(btf, "kmem_cache", "cpu_slab") || hide(btf, "kmem_cache", "cpu_partial") ||
             (!strcmp(argv[3], "7.1") && per_node(btf));
    else
        return fail("the era must be 6.17, 7.0 or 7.1");
    if (rc)
        return fail("the input BTF lacks a type or member this era changes (is it a 6.18 kernel's?)");
    unsigned size = 0;
    const void *raw = btf__raw_data(btf, &size);
    FILE *f = fopen(argv[2], "wb");
    if (!raw || !f || fwrite(raw, 1, size, f) != size || fclose(f) != 0)
        return fail("cannot write the output BTF");
    btf__free(btf);
    return 0;
}
