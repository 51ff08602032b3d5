/*
 * libFuzzer (and AFL++ via its libFuzzer driver) harness for the ONNX
 * reader: the input bytes are a serialized ModelProto given to
 * onnx_load_buffer. Any input must give a Graph or an error through Diag,
 * never a crash, a sanitizer report, a hang or unbounded memory. The parse
 * budget and the arena budget are lowered so that "too big" is an error
 * here, well before libFuzzer's memory limit.
 *
 *   make fuzz FUZZ_SECONDS=60
 */
#include <stddef.h>
#include <stdint.h>

#include "../../frontend/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Arena a;
    Diag d;
    Graph *g;
    onnx_set_parse_budget((size_t)256 << 20);
    arena_init(&a, (size_t)512 << 20);
    diag_init(&d, "fuzz.onnx");
    d.quiet = 1;
    g = onnx_load_buffer(&a, data, size, "fuzz.onnx", &d);
    if (g && graph_verify(g, &d) && !d.errors)
        die("verifier failed without reporting");
    arena_free(&a);
    return 0;
}
