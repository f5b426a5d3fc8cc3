/*
 * mhc/mhc.h — mHC (multi-stream hyper-connection) stream operators, with the seed's C entry
 * points. All tensors are contiguous, row-major; B = batch, S = seq_len, D = dim, N = num_streams.
 *
 *   mhc_post:  output[b*N + s, t, d] = input[b, t, d] * h_post[s]      input [B,S,D] -> [B*N,S,D]
 *   mhc_pre:   output[b, t, d] = sum_s input[b*N + s, t, d] * h_pre[s]  input [B*N,S,D] -> [B,S,D]
 *   mhc_post_backward: grad_input = mhc_pre(grad_out, h_post),
 *              grad_h_post[s] = sum_{b,t,d} grad_out[b*N + s, t, d] * input[b, t, d]  (fp32 [N])
 *
 * Element types: _fp32 (activations and h fp32), _fp16 (activations and h fp16), _bf16
 * (activations bf16, h fp32, as the seed's bf16 path). Precision: post fp32 is one IEEE multiply
 * (bit-exact); post fp16 is the correctly rounded product; post bf16 is bf16_rne(float(x) * h).
 * pre and backward accumulate in fp32 (grad_h: blocked partials combined in a fixed order), so
 * results are bit-identical for any thread count.
 *
 * blockDim: 0 chooses the number of cores automatically, otherwise at most that many are used.
 * stream: an aclrtStream; NULL runs synchronously, otherwise the call is queued in order and
 * completes by aclrtSynchronizeStream. Bad arguments (NULL pointers, negative sizes,
 * num_streams <= 0, sizes whose products overflow) write nothing and leave a message for
 * aclGetRecentErrMsg(); zero-size work succeeds and writes nothing.
 */
#ifndef ACLNN_PORTABLE_MHC_MHC_H_
#define ACLNN_PORTABLE_MHC_MHC_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACL_FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

ACL_FUNC_VISIBILITY void mhc_post_do_fp32(uint32_t blockDim, void* stream, uint8_t* input,
    uint8_t* h_post, uint8_t* output, int64_t batch, int64_t seq_len, int64_t dim,
    int64_t num_streams);
ACL_FUNC_VISIBILITY void mhc_post_do_fp16(uint32_t blockDim, void* stream, uint8_t* input,
    uint8_t* h_post, uint8_t* output, int64_t batch, int64_t seq_len, int64_t dim,
    int64_t num_streams);
ACL_FUNC_VISIBILITY void mhc_post_do_bf16(uint32_t blockDim, void* stream, uint8_t* input,
    uint8_t* h_post, uint8_t* output, int64_t batch, int64_t seq_len, int64_t dim,
    int64_t num_streams);
ACL_FUNC_VISIBILITY void mhc_pre_do_fp32(uint32_t blockDim, void* stream, uint8_t* input,
    uint8_t* h_pre, uint8_t* output, int64_t batch, int64_t seq_len, int64_t dim,
    int64_t num_streams);
ACL_FUNC_VISIBILITY void mhc_pre_do_fp16(uint32_t blockDim, void* stream, uint8_t* input,
    uint8_t* h_pre, uint8_t* output, int64_t batch, int64_t seq_len, int64_t dim,
    int64_t num_streams);
ACL_FUNC_VISIBILITY void mhc_pre_do_bf16(uint32_t blockDim, void* stream, uint8_t* input,
    uint8_t* h_pre, uint8_t* output, int64_t batch, int64_t seq_len, int64_t dim,
    int64_t num_streams);
ACL_FUNC_VISIBILITY void mhc_post_backward_do_fp32(uint32_t blockDim, void* stream,
    uint8_t* grad_out, uint8_t* input, uint8_t* h_post, uint8_t* grad_input,
    uint8_t* grad_h_post, int64_t batch, int64_t seq_len, int64_t dim, int64_t num_streams);
ACL_FUNC_VISIBILITY void mhc_post_backward_do_fp16(uint32_t blockDim, void* stream,
    uint8_t* grad_out, uint8_t* input, uint8_t* h_post, uint8_t* grad_input,
    uint8_t* grad_h_post, int64_t batch, int64_t seq_len, int64_t dim, int64_t num_streams);
ACL_FUNC_VISIBILITY void mhc_post_backward_do_bf16(uint32_t blockDim, void* stream,
    uint8_t* grad_out, uint8_t* input, uint8_t* h_post, uint8_t* grad_input,
    uint8_t* grad_h_post, int64_t batch, int64_t seq_len, int64_t dim, int64_t num_streams);

#ifdef __cplusplus
}
#endif

#endif /* ACLNN_PORTABLE_MHC_MHC_H_ */
