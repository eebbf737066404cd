/*
 * hwloc XML captures: checks before hwloc reads the text.  The conversion is shared with live
 * discovery (topo_hwloc.c); the NVLink matrix only captures carry is read in topo_hwloc_nvlink.c.
 *
 * hwloc answers a bad file with "invalid argument", and ignores some bad parts silently (an
 * unparsable bus id drops the device, a dangling index drops a row of a distance matrix), so the
 * text is first read with libxml2 and checked for what the conversion relies on; errors name the
 * file and line.
 */
#include "topo_hwloc.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#define MAX_MATRIX 4096 /* objects in one distance matrix: 72-GPU racks stay far below */

/* ---- well-formedness: libxml2's first error, with its line ------------------------------- */

typedef struct {
    int have, line;
    char msg[200];
} xml_error_t;

#if LIBXML_VERSION >= 21200
static void xml_error(void *data, const xmlError *e)
#else
static void xml_error(void *data, xmlErrorPtr e)
#endif
{
    xmlParserCtxtPtr ctxt = data;
    xml_error_t *fe = ctxt->_private;
    size_t n;
    if (!fe || fe->have || !e || e->level < XML_ERR_ERROR)
        return;
    fe->have = 1;
    /* Errors from outside the parser (a failed encoding conversion) carry no line. */
    fe->line = e->line > 0 ? e->line : ctxt->input ? ctxt->input->line : 1;
    snprintf(fe->msg, sizeof(fe->msg), "%s", e->message ? e->message : "error");
    n = strlen(fe->msg);
    while (n > 0 && isspace((unsigned char)fe->msg[n - 1]))
        fe->msg[--n] = '\0';
}

/* Whether line `line` is the last line of the text: an error there means a cut file. */
static int last_line(const char *text, size_t len, int line)
{
    size_t i;
    int lines = 1;
    for (i = 0; i < len; i++)
        if (text[i] == '\n' && i + 1 < len)
            lines++;
    return line >= lines;
}

/* ---- what the conversion relies on ------------------------------------------------------- */

typedef struct {
    unsigned long long gp;
    hwloc_obj_type_t type;
} gp_t;

typedef struct {
    const char *name;
    gp_t *gp; /* objects by gp_index, sorted */
    size_t ngp, gp_cap;
} tree_t;

static int cmp_gp(const void *a, const void *b)
{
    unsigned long long x = ((const gp_t *)a)->gp, y = ((const gp_t *)b)->gp;
    return x < y ? -1 : x > y;
}

static int parse_ull(const char *s, unsigned long long *out)
{
    char *end;
    if (!s || !isdigit((unsigned char)*s))
        return 0;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return !*end && errno == 0;
}

/* The PCI attributes hwloc would otherwise skip silently, taking the device with them. */
static acc_status_t check_pci_attrs(const tree_t *tr, xmlNodePtr n, int pcidev)
{
    xmlChar *bus = xmlGetProp(n, BAD_CAST "pci_busid"), *type = xmlGetProp(n, BAD_CAST "pci_type");
    xmlChar *speed = xmlGetProp(n, BAD_CAST "pci_link_speed");
    unsigned dom, b, d, f, cls, v1, v2, v3, v4, rev;
    char tail;
    acc_status_t st = ACC_OK;

    if (pcidev && (!bus || !type)) {
        st = acc_error_set(ACC_ERR_PARSE, "%s:%ld: PCIDev object without %s", tr->name,
                           xmlGetLineNo(n), bus ? "pci_type" : "pci_busid");
    } else if (bus && (sscanf((const char *)bus, "%x:%x:%x.%x%c", &dom, &b, &d, &f, &tail) != 4 ||
                       b > 0xff || d > 0x1f || f > 7)) {
        st = acc_error_set(ACC_ERR_PARSE,
                           "%s:%ld: pci_busid=\"%s\": expected a bus id such as "
                           "0000:18:00.0",
                           tr->name, xmlGetLineNo(n), bus);
    } else if (bus && dom > 0xffff) {
        st = acc_error_set(ACC_ERR_UNSUPPORTED,
                           "%s:%ld: pci_busid=\"%s\": a PCI domain wider "
                           "than 16 bits, which the hwloc acc uses drops",
                           tr->name, xmlGetLineNo(n), bus);
    } else if (type && sscanf((const char *)type, "%x [%x:%x] [%x:%x] %x%c", &cls, &v1, &v2, &v3,
                              &v4, &rev, &tail) != 6) {
        st = acc_error_set(ACC_ERR_PARSE,
                           "%s:%ld: pci_type=\"%s\": expected \"CLASS [VENDOR:"
                           "DEVICE] [SUBVENDOR:SUBDEVICE] REVISION\" in hex",
                           tr->name, xmlGetLineNo(n), type);
    } else if (speed) {
        char *end;
        double s = strtod((const char *)speed, &end);
        if (end == (char *)speed || *end || !(s >= 0) || !isfinite(s))
            st = acc_error_set(ACC_ERR_PARSE, "%s:%ld: pci_link_speed=\"%s\": expected GB/s",
                               tr->name, xmlGetLineNo(n), speed);
    }
    xmlFree(bus);
    xmlFree(type);
    xmlFree(speed);
    return st;
}

/* Only attributes from `allowed` (a NULL-terminated list), and `required` among them. */
static acc_status_t check_attrs(const tree_t *tr, xmlNodePtr n, const char *const *allowed,
                                const char *required)
{
    xmlAttrPtr a;
    int found = !required;
    for (a = n->properties; a; a = a->next) {
        const char *const *k;
        for (k = allowed; *k && xmlStrcmp(a->name, BAD_CAST * k) != 0; k++)
            ;
        if (!*k)
            return acc_error_set(ACC_ERR_PARSE, "%s:%ld: <%s> has an unexpected attribute %s",
                                 tr->name, xmlGetLineNo(n), (const char *)n->name,
                                 (const char *)a->name);
        found |= required && xmlStrcmp(a->name, BAD_CAST required) == 0;
    }
    if (!found)
        return acc_error_set(ACC_ERR_PARSE, "%s:%ld: <%s> without its %s attribute", tr->name,
                             xmlGetLineNo(n), (const char *)n->name, required);
    return ACC_OK;
}

/* hwloc 1.x's distance matrix: nbobjs x nbobjs <latency value=""/>. */
static acc_status_t check_v1_distances(const tree_t *tr, xmlNodePtr d, const char *const *attrs)
{
    static const char *const latency_attrs[] = {"value", NULL};
    xmlChar *nb = xmlGetProp(d, BAD_CAST "nbobjs");
    unsigned long long n = 0, count = 0;
    acc_status_t st = check_attrs(tr, d, attrs, "nbobjs");
    xmlNodePtr c;

    if (st == ACC_OK && (!parse_ull((const char *)nb, &n) || n < 1 || n > MAX_MATRIX))
        st = acc_error_set(ACC_ERR_PARSE, "%s:%ld: <distances nbobjs=\"%s\">: expected 1 to %d",
                           tr->name, xmlGetLineNo(d), (const char *)nb, MAX_MATRIX);
    for (c = d->children; c && st == ACC_OK; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (xmlStrcmp(c->name, BAD_CAST "latency") != 0)
            st = acc_error_set(ACC_ERR_PARSE, "%s:%ld: unexpected <%s> inside <distances>",
                               tr->name, xmlGetLineNo(c), (const char *)c->name);
        else
            st = check_attrs(tr, c, latency_attrs, "value");
        count++;
    }
    if (st == ACC_OK && count != n * n)
        st = acc_error_set(ACC_ERR_PARSE,
                           "%s:%ld: <distances> of %llu objects holds %llu "
                           "latencies",
                           tr->name, xmlGetLineNo(d), n, count);
    xmlFree(nb);
    return st;
}

/* What hwloc 2 accepts inside an <object>: anything else makes it give up on the file, and
 * hwloc 2.9 leaks the half-built object when it does. */
static acc_status_t check_object_children(const tree_t *tr, xmlNodePtr n, hwloc_obj_type_t ty,
                                          int root, int v2)
{
    static const char *const info_attrs[] = {"name", "value", NULL};
    static const char *const page_attrs[] = {"size", "count", NULL};
    static const char *const dist_attrs[] = {"nbobjs", "relative_depth", "latency_base", NULL};
    xmlNodePtr c;
    acc_status_t st = ACC_OK;

    for (c = n->children; c && st == ACC_OK; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, BAD_CAST "object") == 0 ||
            xmlStrcmp(c->name, BAD_CAST "userdata") == 0)
            continue;
        if (xmlStrcmp(c->name, BAD_CAST "info") == 0)
            st = check_attrs(tr, c, info_attrs, "name");
        else if (xmlStrcmp(c->name, BAD_CAST "page_type") == 0 &&
                 (ty == HWLOC_OBJ_NUMANODE || root))
            st = check_attrs(tr, c, page_attrs, NULL);
        else if (!v2 && xmlStrcmp(c->name, BAD_CAST "distances") == 0)
            st = check_v1_distances(tr, c, dist_attrs);
        else
            st = acc_error_set(ACC_ERR_PARSE, "%s:%ld: unexpected <%s> inside a %s <object>",
                               tr->name, xmlGetLineNo(c), (const char *)c->name,
                               hwloc_obj_type_string(ty));
    }
    return st;
}

/* hwloc's bitmap syntax: comma-separated 32-bit words "0x0000ffff", empty words for zero ones
 * (",,"), and "0xf...f" first for an infinite set.  Checked here because hwloc_bitmap_sscanf()
 * reads past the end of an empty string. */
static int is_bitmap(const char *s)
{
    int words = 0;
    if (strncmp(s, "0xf...f", 7) == 0) {
        s += 7;
        if (!*s)
            return 1;
        if (*s++ != ',')
            return 0;
    }
    for (;;) {
        size_t n = 0;
        if (s[0] == '0' && s[1] == 'x') {
            for (s += 2; isxdigit((unsigned char)*s); s++)
                n++;
            if (n < 1 || n > 8)
                return 0;
        } else if (words == 0) {
            return 0; /* the first word is never empty */
        }
        words++;
        if (!*s)
            return 1;
        if (*s++ != ',')
            return 0;
    }
}

/* Read set `attr` of object n into b; 0 if absent or malformed (with the error set). */
static int read_set(const tree_t *tr, xmlNodePtr n, const char *attr, hwloc_bitmap_t b,
                    acc_status_t *st)
{
    xmlChar *v = xmlGetProp(n, BAD_CAST attr);
    int ok = v && is_bitmap((const char *)v) && hwloc_bitmap_sscanf(b, (const char *)v) == 0;
    if (!v)
        *st = acc_error_set(ACC_ERR_PARSE, "%s:%ld: <object> without its %s attribute", tr->name,
                            xmlGetLineNo(n), attr);
    else if (!ok)
        *st = acc_error_set(ACC_ERR_PARSE,
                            "%s:%ld: %s=\"%s\" is not an hwloc bitmap such as "
                            "0x0000ffff,0xffffffff",
                            tr->name, xmlGetLineNo(n), attr, v);
    xmlFree(v);
    return ok;
}

/* CPU and memory objects carry their sets, each within its complete set and within its parent's:
 * hwloc 2.9 dereferences a missing set and crashes on some inconsistent ones. */
static acc_status_t check_sets(const tree_t *tr, xmlNodePtr n, int check_parent)
{
    static const char *const sets[2][2] = {{"cpuset", "complete_cpuset"},
                                           {"nodeset", "complete_nodeset"}};
    hwloc_bitmap_t part = hwloc_bitmap_alloc(), whole = hwloc_bitmap_alloc();
    hwloc_bitmap_t up = hwloc_bitmap_alloc();
    acc_status_t st = ACC_OK;
    int k;

    if (!part || !whole || !up) {
        st = acc_error_set(ACC_ERR_NOMEM, "%s: out of memory", tr->name);
        goto out;
    }
    for (k = 0; k < 2; k++) {
        if (!read_set(tr, n, sets[k][0], part, &st) || !read_set(tr, n, sets[k][1], whole, &st))
            goto out;
        if (!hwloc_bitmap_isincluded(part, whole)) {
            st = acc_error_set(ACC_ERR_PARSE, "%s:%ld: %s is not within %s", tr->name,
                               xmlGetLineNo(n), sets[k][0], sets[k][1]);
            goto out;
        }
        if (check_parent && read_set(tr, n->parent, sets[k][1], up, &st) &&
            !hwloc_bitmap_isincluded(whole, up)) {
            st = acc_error_set(ACC_ERR_PARSE, "%s:%ld: %s is not within its parent's", tr->name,
                               xmlGetLineNo(n), sets[k][1]);
            goto out;
        }
        if (st != ACC_OK)
            goto out;
    }
out:
    hwloc_bitmap_free(part);
    hwloc_bitmap_free(whole);
    hwloc_bitmap_free(up);
    return st;
}

static acc_status_t check_object(tree_t *tr, xmlNodePtr n, int v2)
{
    xmlChar *type = xmlGetProp(n, BAD_CAST "type"), *gp = NULL;
    hwloc_obj_type_t ty;
    unsigned long long g;
    int root;
    acc_status_t st = ACC_OK;

    if (!type) {
        st = acc_error_set(ACC_ERR_PARSE, "%s:%ld: <object> without a type attribute", tr->name,
                           xmlGetLineNo(n));
        goto out;
    }
    if (!v2 && xmlStrcmp(type, BAD_CAST "System") == 0)
        ty = HWLOC_OBJ_MACHINE; /* hwloc 1.x names */
    else if (!v2 && xmlStrcmp(type, BAD_CAST "Cache") == 0)
        ty = HWLOC_OBJ_L2CACHE;
    else if (hwloc_type_sscanf((const char *)type, &ty, NULL, 0) < 0) {
        st = acc_error_set(ACC_ERR_PARSE, "%s:%ld: unknown hwloc object type \"%s\"", tr->name,
                           xmlGetLineNo(n), type);
        goto out;
    }
    root = n->parent == xmlDocGetRootElement(n->doc);
    /* Parents were checked before their children: a CPU or memory object's parent is one too. */
    if ((hwloc_obj_type_is_normal(ty) || hwloc_obj_type_is_memory(ty)) &&
        (st = check_sets(tr, n, !root)) != ACC_OK)
        goto out;
    if ((st = check_object_children(tr, n, ty, root, v2)) != ACC_OK)
        goto out;
    if (ty == HWLOC_OBJ_PCI_DEVICE || ty == HWLOC_OBJ_BRIDGE) {
        if ((st = check_pci_attrs(tr, n, ty == HWLOC_OBJ_PCI_DEVICE)) != ACC_OK)
            goto out;
    }
    gp = xmlGetProp(n, BAD_CAST "gp_index");
    if (gp && parse_ull((const char *)gp, &g)) {
        void *a = tr->gp;
        if (acc_array_reserve(&a, &tr->gp_cap, tr->ngp + 1, sizeof(gp_t)) != ACC_OK) {
            st = acc_error_set(ACC_ERR_NOMEM, "%s: out of memory", tr->name);
            goto out;
        }
        tr->gp = a;
        tr->gp[tr->ngp].gp = g;
        tr->gp[tr->ngp++].type = ty;
    }
out:
    xmlFree(gp);
    xmlFree(type);
    return st;
}

/* One index token of a distance matrix: "Type:gp_index" (heterogeneous), a gp_index of `type`,
 * or an os_index. */
static acc_status_t check_index(const tree_t *tr, xmlNodePtr n, const char *tok, int hetero,
                                int by_gp, hwloc_obj_type_t type)
{
    const char *num = tok;
    gp_t key, *hit;
    char tname[32];

    if (hetero) {
        const char *colon = strchr(tok, ':');
        size_t len = colon ? (size_t)(colon - tok) : 0;
        if (!colon || len >= sizeof(tname))
            return acc_error_set(ACC_ERR_PARSE,
                                 "%s:%ld: distance index \"%s\": expected "
                                 "TYPE:GP_INDEX",
                                 tr->name, xmlGetLineNo(n), tok);
        memcpy(tname, tok, len);
        tname[len] = '\0';
        if (hwloc_type_sscanf(tname, &type, NULL, 0) < 0)
            return acc_error_set(ACC_ERR_PARSE,
                                 "%s:%ld: distance index \"%s\": unknown object "
                                 "type",
                                 tr->name, xmlGetLineNo(n), tok);
        num = colon + 1;
    }
    if (!parse_ull(num, &key.gp))
        return acc_error_set(ACC_ERR_PARSE, "%s:%ld: distance index \"%s\" is not a number",
                             tr->name, xmlGetLineNo(n), tok);
    if (!hetero && !by_gp)
        return ACC_OK;
    hit = bsearch(&key, tr->gp, tr->ngp, sizeof(gp_t), cmp_gp);
    if (!hit || hit->type != type)
        return acc_error_set(ACC_ERR_PARSE,
                             "%s:%ld: distance index \"%s\" names no %s object of "
                             "this file",
                             tr->name, xmlGetLineNo(n), tok, hwloc_obj_type_string(type));
    return ACC_OK;
}

/* hwloc reads exactly `length` characters of an <indexes> or <u64values> and refuses the whole
 * file when the text is longer or shorter: a matrix edited by hand trips on this. */
static acc_status_t check_length(const tree_t *tr, xmlNodePtr c, const char *text)
{
    xmlChar *attr = xmlGetProp(c, BAD_CAST "length");
    unsigned long long want;
    size_t have = text ? strlen(text) : 0;
    acc_status_t st = ACC_OK;

    if (attr && (!parse_ull((const char *)attr, &want) || want != have))
        st = acc_error_set(ACC_ERR_PARSE,
                           "%s:%ld: <%s length=\"%s\"> holds %zu characters; "
                           "hwloc needs the two to agree",
                           tr->name, xmlGetLineNo(c), (const char *)c->name, (const char *)attr,
                           have);
    xmlFree(attr);
    return st;
}

/* Count the whitespace-separated tokens of every child element named `elem`, checking each as an
 * index (what == 0) or a value (what == 1). */
static acc_status_t matrix_tokens(const tree_t *tr, xmlNodePtr d, const char *elem, int what,
                                  int hetero, int by_gp, hwloc_obj_type_t type,
                                  unsigned long long *count)
{
    xmlNodePtr c;
    acc_status_t st = ACC_OK;

    *count = 0;
    for (c = d->children; c && st == ACC_OK; c = c->next) {
        char *text, *save = NULL, *tok;
        if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, BAD_CAST elem) != 0)
            continue;
        text = (char *)xmlNodeGetContent(c);
        if ((st = check_length(tr, c, text)) != ACC_OK) {
            xmlFree(text);
            break;
        }
        for (tok = text ? strtok_r(text, " \t\r\n", &save) : NULL; tok && st == ACC_OK;
             tok = strtok_r(NULL, " \t\r\n", &save)) {
            unsigned long long v;
            (*count)++;
            if (what == 0)
                st = check_index(tr, c, tok, hetero, by_gp, type);
            else if (!parse_ull(tok, &v))
                st = acc_error_set(ACC_ERR_PARSE,
                                   "%s:%ld: distance value \"%s\" is not an "
                                   "unsigned integer",
                                   tr->name, xmlGetLineNo(c), tok);
        }
        xmlFree(text);
    }
    return st;
}

static acc_status_t check_distances(const tree_t *tr, xmlNodePtr d, int hetero)
{
    xmlChar *nb = xmlGetProp(d, BAD_CAST "nbobjs"), *name = xmlGetProp(d, BAD_CAST "name");
    xmlChar *type = xmlGetProp(d, BAD_CAST "type"), *indexing = xmlGetProp(d, BAD_CAST "indexing");
    unsigned long long n = 0, nidx, nval;
    hwloc_obj_type_t ty = HWLOC_OBJ_MACHINE;
    const char *label = name ? (const char *)name : "unnamed";
    int by_gp = indexing && xmlStrcmp(indexing, BAD_CAST "gp") == 0;
    acc_status_t st = ACC_OK;

    if (!nb || !parse_ull((const char *)nb, &n) || n < 1 || n > MAX_MATRIX) {
        st =
            acc_error_set(ACC_ERR_PARSE,
                          "%s:%ld: distance matrix %s: nbobjs=\"%s\": expected "
                          "1 to %d objects",
                          tr->name, xmlGetLineNo(d), label, nb ? (const char *)nb : "", MAX_MATRIX);
        goto out;
    }
    if (!hetero && (!type || hwloc_type_sscanf((const char *)type, &ty, NULL, 0) < 0)) {
        st = acc_error_set(ACC_ERR_PARSE,
                           "%s:%ld: distance matrix %s: type=\"%s\" is not an "
                           "hwloc object type",
                           tr->name, xmlGetLineNo(d), label, type ? (const char *)type : "");
        goto out;
    }
    if ((st = matrix_tokens(tr, d, "indexes", 0, hetero, by_gp, ty, &nidx)) != ACC_OK ||
        (st = matrix_tokens(tr, d, "u64values", 1, hetero, by_gp, ty, &nval)) != ACC_OK)
        goto out;
    if (nidx != n || nval != n * n)
        st = acc_error_set(ACC_ERR_PARSE,
                           "%s:%ld: distance matrix %s of %llu objects lists %llu "
                           "indexes and %llu values (expected %llu and %llu)",
                           tr->name, xmlGetLineNo(d), label, n, nidx, nval, n, n * n);
out:
    xmlFree(nb);
    xmlFree(name);
    xmlFree(type);
    xmlFree(indexing);
    return st;
}

/* Root, version, objects and distance matrices, with line numbers. */
static acc_status_t check_tree(xmlDocPtr doc, const char *name)
{
    xmlNodePtr root = xmlDocGetRootElement(doc), n;
    xmlChar *ver = NULL;
    tree_t tr;
    acc_status_t st = ACC_OK;
    int objects = 0, v2 = 0;

    memset(&tr, 0, sizeof(tr));
    tr.name = name;
    if (!root || xmlStrcmp(root->name, BAD_CAST "topology") != 0)
        return acc_error_set(ACC_ERR_PARSE,
                             "%s:%ld: the root element is <%s>, not the <topology> "
                             "of an hwloc XML export",
                             name, root ? xmlGetLineNo(root) : 1L,
                             root ? (const char *)root->name : "");
    ver = xmlGetProp(root, BAD_CAST "version");
    if (ver) {
        char *end;
        long major = strtol((const char *)ver, &end, 10);
        if (end == (char *)ver || (*end && *end != '.')) {
            st = acc_error_set(ACC_ERR_PARSE,
                               "%s:%ld: <topology version=\"%s\">: expected a "
                               "version number such as 2.0",
                               name, xmlGetLineNo(root), ver);
            goto out;
        }
        if (major >= 3) {
            st = acc_error_set(ACC_ERR_UNSUPPORTED,
                               "%s:%ld: hwloc XML version %s comes from hwloc "
                               "3 or later, and the hwloc 2 that acc uses reads versions 1.x and "
                               "2.x only; export it again with `lstopo --of v2xml FILE` (or "
                               "--export-xml-flags v2)",
                               name, xmlGetLineNo(root), ver);
            goto out;
        }
        if (major < 2) {
            st = acc_error_set(ACC_ERR_PARSE,
                               "%s:%ld: <topology version=\"%s\">: hwloc writes "
                               "2.0 there, or no version at all (hwloc 1.x)",
                               name, xmlGetLineNo(root), ver);
            goto out;
        }
        v2 = 1;
    }
    /* Objects, iteratively: the depth of the input is the input's choice. */
    for (n = root->children; n;) {
        if (n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, BAD_CAST "object") == 0) {
            objects++;
            if ((st = check_object(&tr, n, v2)) != ACC_OK)
                goto out;
            if (n->children) {
                n = n->children;
                continue;
            }
        }
        while (n && !n->next && n->parent != root)
            n = n->parent;
        n = n ? n->next : NULL;
    }
    if (!objects) {
        st = acc_error_set(ACC_ERR_PARSE,
                           "%s:%ld: <topology> holds no <object>: not an hwloc "
                           "topology export",
                           name, xmlGetLineNo(root));
        goto out;
    }
    if (tr.ngp)
        qsort(tr.gp, tr.ngp, sizeof(gp_t), cmp_gp);
    for (n = root->children; n && st == ACC_OK; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        if (v2 && xmlStrcmp(n->name, BAD_CAST "distances2hetero") == 0)
            st = check_distances(&tr, n, 1);
        else if (v2 && xmlStrcmp(n->name, BAD_CAST "distances2") == 0)
            st = check_distances(&tr, n, 0);
        else if (xmlStrcmp(n->name, BAD_CAST "object") != 0 &&
                 (!v2 || (xmlStrcmp(n->name, BAD_CAST "support") != 0 &&
                          xmlStrcmp(n->name, BAD_CAST "memattr") != 0 &&
                          xmlStrcmp(n->name, BAD_CAST "cpukind") != 0)))
            st = acc_error_set(ACC_ERR_PARSE, "%s:%ld: unexpected <%s> inside <topology>", name,
                               xmlGetLineNo(n), (const char *)n->name);
    }
out:
    acc_mem_free(tr.gp);
    xmlFree(ver);
    return st;
}

static acc_status_t check_xml(const char *text, size_t len, const char *name)
{
    xmlParserCtxtPtr ctxt;
    xmlDocPtr doc = NULL;
    xml_error_t fe;
    xmlStructuredErrorFunc saved_handler;
    void *saved_context;
    acc_status_t st = ACC_OK;

    if (len > INT_MAX - 1)
        return acc_error_set(ACC_ERR_RANGE, "%s: %zu bytes is more than hwloc reads", name, len);
    memset(&fe, 0, sizeof(fe));
    ctxt = xmlNewParserCtxt();
    if (!ctxt)
        return acc_error_set(ACC_ERR_NOMEM, "%s: out of memory for the XML parser", name);
    /* Errors come to xml_error (with this context as its data), not to stderr. */
    ctxt->_private = &fe;
    ctxt->sax->serror = xml_error;
    /* Errors outside the parser's domain (encoding conversion) skip the context's handler and go
     * to this thread's structured one, else to stderr: route them here too for the parse. */
    saved_handler = xmlStructuredError;
    saved_context = xmlStructuredErrorContext;
    xmlSetStructuredErrorFunc(ctxt, xml_error);
    doc = xmlCtxtReadMemory(ctxt, text, (int)len, name, NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                XML_PARSE_BIG_LINES);
    xmlSetStructuredErrorFunc(saved_context, saved_handler);
    if (!doc || !ctxt->wellFormed) {
        if (!fe.have)
            st = acc_error_set(ACC_ERR_PARSE, "%s: malformed XML", name);
        else
            st = acc_error_set(ACC_ERR_PARSE, "%s:%d: malformed XML: %s%s", name, fe.line, fe.msg,
                               last_line(text, len, fe.line) ? " (the input ends there: is the "
                                                               "file cut short?)"
                                                             : "");
        goto out;
    }
    st = check_tree(doc, name);
out:
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    return st;
}

acc_status_t topo_import_hwloc_xml(acc_topo_t *t, const char *text, size_t len, const char *name)
{
    acc_status_t st = check_xml(text, len, name);
    if (st != ACC_OK)
        return st;
    return topo_hwloc_build(t, text, len, name, NULL, NULL);
}
