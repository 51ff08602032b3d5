/*
 * qemu_api.h: the part of QEMU's TCG plugin interface that m4est.c uses,
 * declared by hand because qemu-plugin.h is not installed with Debian's
 * qemu-system-arm. Written for plugin API version 1 (QEMU 5.2 .. 8.1; the
 * Debian 12 package is 7.2), where:
 *
 *   - a plugin exports `int qemu_plugin_version` and
 *     `int qemu_plugin_install(qemu_plugin_id_t, const qemu_info_t *, int,
 *     char **)`, returning 0 on success;
 *   - qemu_plugin_id_t is a uint64_t;
 *   - the first enumerators of enum qemu_plugin_cb_flags and of enum
 *     qemu_plugin_op are QEMU_PLUGIN_CB_NO_REGS and
 *     QEMU_PLUGIN_INLINE_ADD_U64, both 0, the only ones used here;
 *   - qemu_plugin_insn_disas returns a string the caller releases with
 *     glib's g_free (resolved from the QEMU process when the plugin loads).
 *
 * qemu_info_t is only passed through, so it stays an incomplete type.
 */
#ifndef M4EST_QEMU_API_H
#define M4EST_QEMU_API_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
char *qemu_plugin_insn_disas(const struct qemu_plugin_insn *insn);

void g_free(void *mem);

#endif
