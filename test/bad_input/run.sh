#!/usr/bin/env bash
# Bad-input tests: tvmcc must reject broken models and bad command lines
# cleanly. Model and user errors: exit 1, exactly one line of output that
# names the file (and the node, tensor or field where there is one), and the
# -o directory must not exist afterwards. Usage errors: exit 2.
#
#   test/bad_input/run.sh        (models are generated into build/bad_input/)
#
# Environment override: TVMCC. Prints PASS/FAIL per case and, last,
# "N passed, N failed"; exits 1 if any case failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}
dir="$root/build/bad_input"
pass=0 failed=0

if [ ! -x "$TVMCC" ]; then
    echo "bad_input: $TVMCC not built (run make)"
    echo "0 passed, 1 failed"
    exit 1
fi
rm -rf "$dir" && mkdir -p "$dir"
if ! "$PYTHON" "$here/make_models.py" "$dir"; then
    echo "bad_input: make_models.py failed"
    echo "0 passed, 1 failed"
    exit 1
fi

# check NAME WANT_RC MODEL_OR_ARGS... -- NEEDLE...
# Runs tvmcc with the arguments before "--" (plus -o OUTDIR unless the
# arguments already have -o), then checks the exit status, that the output
# is one line containing every needle (case-insensitive), and that the
# output directory was not created.
check() {
    local name=$1 want=$2 out="$dir/out_$1" args=() needles=() a rc msg why="" lines
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    needles=("$@")
    case " ${args[*]} " in
        *" -o "*) out=$(printf '%s\n' "${args[@]}" | sed -n '/^-o$/{n;p;}') ;;
        *) args+=(-o "$out") ;;
    esac
    rm -rf "$out"
    msg=$(cd "$dir" && timeout 30 "$TVMCC" "${args[@]}" 2>&1)
    rc=$?
    lines=$(printf '%s' "$msg" | grep -c '')
    [ "$rc" = "$want" ] || why="exit $rc, want $want"
    if [ -z "$why" ] && [ "$want" = 1 ] && [ "$lines" != 1 ]; then
        why="$lines lines of output, want 1"
    fi
    if [ -z "$why" ] && [ "$lines" = 0 ]; then
        why="no message"
    fi
    for a in "${needles[@]}"; do
        [ -n "$why" ] && break
        printf '%s' "$msg" | grep -qiF -- "$a" || why="message does not mention '$a'"
    done
    if [ -z "$why" ] && [ -e "$out" ] && [ "$out" != /proc/x ]; then
        why="output directory $out exists"
    fi
    if [ -z "$why" ]; then
        echo "PASS $name"
        pass=$((pass + 1))
    else
        echo "FAIL $name: $why"
        printf '%s\n' "$msg" | head -5 | sed 's/^/    | /'
        failed=$((failed + 1))
    fi
}

# Paths are relative to build/bad_input so messages can be matched on them.
check not_onnx        1 not_onnx.onnx       -- not_onnx.onnx
check truncated       1 truncated.onnx      -- truncated.onnx
check unknown_ops     1 unknown_ops.onnx    -- unknown_ops.onnx FrobnicateXyz WibbleQux
check dangling_input  1 dangling_input.onnx -- dangling_input.onnx w_missing
check type_mismatch   1 type_mismatch.onnx  -- type_mismatch.onnx add_mixed
check dynamic_dim     1 dynamic_dim.onnx    -- dynamic_dim.onnx xdyn --input-shape
check runtime_if_bad_branch 1 runtime_if_bad_branch.onnx -- runtime_if_bad_branch.onnx \
    conv_rank3 "weight rank 3" "else branch of If 'if_runtime_bad'" "only known at run time"
# --input-value: every error names the input
check value_unknown_input 1 input_values.onnx --input-value nosuch=1 -- input_values.onnx \
    "--input-value" "no graph input 'nosuch'"
check value_initializer 1 add_big_ok.onnx --input-value w_big=1 -- "w_big" initializer
check value_form        1 input_values.onnx --input-value sr -- "--input-value" "'sr'" NAME=V0
check value_count       1 input_values.onnx --input-value u8=1,2,3 -- "'u8'" "2 elements" \
    "3 values"
check value_count_scalar 1 input_values.onnx --input-value sr=1,2 -- "'sr'" "1 element" "shape []"
check value_not_int     1 input_values.onnx --input-value sr=16k -- "'sr'" "'16k'" "not an int64"
check value_float_for_int 1 input_values.onnx --input-value sr=1.5 -- "'sr'" "'1.5'" "int64"
check value_not_bool    1 input_values.onnx --input-value flag=yes,0 -- "'flag'" "'yes'" bool
check value_not_float   1 input_values.onnx --input-value f=1.0,abc -- "'f'" "'abc'" float32
check value_empty_item  1 input_values.onnx --input-value f=1.0, -- "'f'" "value 1 ''" float32
check value_uint8_range 1 input_values.onnx --input-value u8=1,256 -- "'u8'" "'256'" \
    "out of range for uint8"
check value_uint8_negative 1 input_values.onnx --input-value u8=-1,0 -- "'u8'" "'-1'" \
    "out of range for uint8"
check value_int8_range  1 input_values.onnx --input-value i8=-129 -- "'i8'" "out of range for int8"
check value_int64_range 1 input_values.onnx --input-value sr=9223372036854775808 -- "'sr'" \
    "out of range for int64"
check value_float16_range 1 input_values.onnx --input-value h=70000 -- "'h'" \
    "out of range for float16"
check value_float32_range 1 input_values.onnx --input-value f=1e39,0 -- "'f'" \
    "out of range for float32"
check value_twice       1 input_values.onnx --input-value sr=1 --input-value sr=2 -- "'sr'" twice
check value_string      1 input_values.onnx --input-value s=abc -- "'s'" string
check value_dynamic     1 dynamic_dim.onnx --input-value xdyn=1,2,3,4 -- "'xdyn'" --input-shape
check gradient_op     1 gradient_softmax.onnx -- gradient_softmax.onnx grad_soft "'soft'" Softmax differentiate
check gradient_input  1 gradient_other_input.onnx -- gradient_other_input.onnx grad_other "xs[0]" "not 'x'"
# com.microsoft QOperator ops: arity, scalar parameters, types, attributes
check qop_arity       1 qop_arity.onnx -- qop_arity.onnx qadd_short "input count" "7 to 8"
check qop_scale_vector 1 qop_scale_vector.onnx -- qop_scale_vector.onnx qadd_vecscale \
    "input[1]" "must be a scalar"
check qop_float_input 1 qop_float_input.onnx -- qop_float_input.onnx qmul_float "input[0]" \
    "int8 or uint8"
check qop_default_domain 1 qop_default_domain.onnx -- qop_default_domain.onnx QLinearAdd \
    qadd_onnx unsupported
check qop_zp_type     1 qop_zp_type.onnx -- qop_zp_type.onnx qgap_zptype "input[2]" int8 uint8
check qop_concat_arity 1 qop_concat_arity.onnx -- qop_concat_arity.onnx qconcat_pair \
    "input count" triple
check qop_softmax_opset 1 qop_softmax_opset.onnx -- qop_softmax_opset.onnx qsoftmax_noopset \
    opset "required attribute"
check qop_avgpool_nhwc 1 qop_avgpool_nhwc.onnx -- qop_avgpool_nhwc.onnx qavgpool_nhwc \
    channels_last
check qop_gemm_bscale 1 qop_gemm_bscale.onnx -- qop_gemm_bscale.onnx qgemm_bscale "input[4]" \
    "per column"
check qop_gemm_yzp    1 qop_gemm_yzp.onnx -- qop_gemm_yzp.onnx qgemm_noyzp "input[8]" y_zero_point
check qop_matmul_bscale 1 qop_matmul_bscale.onnx -- qop_matmul_bscale.onnx qmatmul_bscale \
    "input[4]"
check opset_too_new   1 opset26.onnx -- opset26.onnx opset_import "opset 26" "1 to 25"
check seq_no_length   1 seq_input.onnx -- seq_input.onnx "'seq_in'" "--sequence-length seq_in="
check seq_bad_length  1 seq_input.onnx --sequence-length seq_in=two -- --sequence-length \
    "'seq_in=two'" "from 0 to"
check seq_not_seq     1 seq_input.onnx --sequence-length seq_in=2 --sequence-length t_in=2 -- \
    "'t_in'" "not a sequence"
check seq_elem_shape  1 seq_input.onnx --sequence-length seq_in=2 --input-shape 'seq_in[1]=4,3' \
    -- "'seq_in[1]'" "dimension 0" "is 2 in the model, not 4"
check seq_elem_range  1 seq_input.onnx --sequence-length seq_in=2 --input-shape 'seq_in[2]=2,3' \
    -- "'seq_in'" "2 elements" "seq_in[1]"
check seq_whole_shape 1 seq_input.onnx --sequence-length seq_in=2 --input-shape 'seq_in=2,3' \
    -- "'seq_in' is a sequence input" "seq_in[K]"
check opt_get_absent  1 opt_get.onnx --optional-absent opt_in -- get_opt "input[0]" \
    "--optional-absent opt_in" "no element"
check opt_read_absent 1 opt_read.onnx --optional-absent opt_in -- relu_opt "input[0]" \
    "absent optional"
check opt_not_opt     1 seq_input.onnx --sequence-length seq_in=2 --optional-absent t_in -- \
    "'t_in'" "not optional"
# the ONNX 1.20 element types: modes and shapes tvmcc refuses
check cast_e8m0_mode  1 cast_e8m0_mode.onnx -- cast_e8m0_mode.onnx cast_e8m0_sideways round_mode \
    sideways
check q_blocked_shape 1 q_blocked_shape.onnx -- q_blocked_shape.onnx q_blocked_shape "input[1]" \
    "block_size 2"
check dq_output_dtype 1 dq_output_dtype.onnx -- dq_output_dtype.onnx dq_int_out output_dtype
# transformer operators: opset, attributes, head counts
check gelu_old_opset  1 gelu_old_opset.onnx -- gelu_old_opset.onnx gelu_old opset 20
check gelu_approximate 1 gelu_approximate.onnx -- gelu_approximate.onnx gelu_fast approximate fast
check attention_heads 1 attention_heads.onnx -- attention_heads.onnx attn_gqa kv_num_heads \
    "do not divide"
check attention_3d_heads 1 attention_3d_heads.onnx -- attention_3d_heads.onnx attn_3d \
    q_num_heads 3-D
check rotary_odd_dim  1 rotary_odd_dim.onnx -- rotary_odd_dim.onnx rope_odd \
    rotary_embedding_dim even
# operators of opsets 18-20
check resize_policy   1 resize_policy.onnx -- resize_policy.onnx resize_policy \
    keep_aspect_ratio_policy "'fit'"
check resize_aa_nearest 1 resize_aa_nearest.onnx -- resize_aa_nearest antialias "linear or cubic"
check resize_axes_twice 1 resize_axes_twice.onnx -- resize_axes_twice axes repeated
check resize_sym18    1 resize_sym18.onnx -- resize_sym18 coordinate_transformation_mode \
    half_pixel_symmetric
check dft_axis3       1 dft_axis3.onnx -- dft_axis3 "input[2]" "out of range"
check gridsample_3d_old 1 gridsample_3d_old.onnx -- gridsample_3d_old "rank 5 from opset 20"
check affine_theta    1 affine_theta.onnx -- affine_theta theta "[N, 2, 3]"
check ccp_count       1 ccp_count.onnx -- ccp_count shape "2 entries"
check col2im_block    1 col2im_block.onnx -- col2im_block "not a multiple"
check deform_off      1 deform_off.onnx -- deform_off "input[2]" "dimension 1 is 6, expected 8"
check lppool_p0       1 lppool_p0.onnx -- lppool_p0 "p" "from 1 to 1000"
check regex_flags     1 regex_flags.onnx -- regex_flags.onnx regex_flags pattern "(?i)abc" \
    "not supported"
check split_undeclared 1 split_undeclared.onnx -- split_undeclared.onnx split_free declare
check tfidf_strings   1 tfidf_strings.onnx -- tfidf_strings.onnx tfidf_str "string tensor"
check cast_string_bool 1 cast_string_bool.onnx -- cast_string_bool.onnx cast_sb "to" bool
check label_types     1 label_types.onnx -- label_types.onnx label_types keys int64 string
check nonzero_undeclared 1 nonzero_undeclared.onnx -- nonzero_undeclared.onnx nonzero_free \
    "output[0]" declare
check string_relu     1 string_relu.onnx -- string_relu.onnx relu_str "input[0]" "string tensor"
check lpnorm_p        1 lpnorm_p.onnx -- lpnorm_p.onnx lpnorm_p3 'p: must be 1 or 2'
check groupnorm_groups 1 groupnorm_groups.onnx -- groupnorm_groups.onnx groupnorm_3of4 num_groups
check trees_post      1 trees_post.onnx -- trees_post.onnx trees_logistic post_transform
check missing_file    1 no_such_model.onnx  -- no_such_model.onnx
check unwritable_out  1 good.onnx -o /proc/x -- /proc/x
check unknown_option  2 good.onnx --frobnicate -- --frobnicate
check unknown_target  2 good.onnx -t no-such-cpu -- no-such-cpu cortex-m4 x86-64 aarch64
check no_model        2 --

echo "bad_input: $pass passed, $failed failed"
echo "$pass passed, $failed failed"
[ $failed = 0 ]
