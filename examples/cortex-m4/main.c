/*
 * main.c: runs the compiled model once on a fixed input and prints the
 * result over semihosting; the exit status is model_run's.
 *
 * The model's C comes from `tvmcc model.onnx -t arm -o out`; the build
 * (Makefile or CMakeLists.txt) adds out/ to the include path.
 */
#include <stdio.h>

#include "model.h"
#include "tvmrt.h"

/* The model's input and output are float32[1,1,8,8] and float32[1,10]. */
static float input[64];
static float output[10];

int main(void)
{
    const void *const inputs[MODEL_NUM_INPUTS] = { input };
    void *const outputs[MODEL_NUM_OUTPUTS] = { output };
    int i, rc;

    for (i = 0; i < 64; i++)
        input[i] = (float)((7 * i) % 16) / 8.0f - 1.0f;

    /* NULL workspace: the static arena in model.c (.bss, or .model_arena). */
    rc = model_run(inputs, outputs, NULL);
    printf("model_run: %d (%s), workspace %u bytes\n", rc, tvmrt_status_message(rc),
           (unsigned)MODEL_WORKSPACE_BYTES);
    for (i = 0; i < 10; i++)
        printf("y[%d] = %.6f\n", i, (double)output[i]);
    return rc;
}
