/*
** model_pass.c -- the reference GPT's forward and backward passes
** (model.h). Each layer's forward sits beside its backward under the same
** name (encoder, attn_input, attention, attn_output, mlp, head); the two
** passes that run them come after, then the readout the lenses use.
**
** Shapes in comments: B batch, T context, N = B*T rows (the actual b*t of
** the last forward), d width, H heads, hd = d/H, V vocabulary, L layers.
** How the work is split over the model's pool: docs/architecture.md, 'The
** passes on the pool'.
*/
#include <math.h>
#include <string.h>

#include "core/kernels.h"
#include "core/linalg.h"
#include "core/model_impl.h"
#include "core/step.h"

/* ---- helpers for stages */

/* What a stage works on: the model, the layer, and for model_readout its
** rows. */
typedef struct Stage {
  Model *m;
  int l;                     /* layer */
  const float *in;           /* model_readout: the hidden states */
  float *out, *scratch;      /* model_readout(_backward) */
  const float *dlogits;
  int n;                     /* rows of model_readout */
} Stage;

/* Part 'part' of [0,n) cut at multiples of 'block': a stage's rows go in
** whole blocks of ROWS, a weight gradient's in multiples of 16 (the
** width of OpenBLAS's kernels). */
static void part_blocks(int n, int block, int parts, int part, int *x0, int *x1) {
  int b0, b1;
  pool_split((n + block - 1) / block, parts, part, &b0, &b1);
  *x0 = b0 * block;
  *x1 = b1 * block < n ? b1 * block : n;
}

/* Part 'part' of dW[o,i] = dout[n,o]^T inp[n,i] and db[o] = colsum(dout).
** The wider side of dW is split, so that each thread packs only its share
** of the larger operand and the whole of the smaller one. */
static void weight_grad_part(const Model *m, float *dw, float *db, const float *dout, const float *inp,
                             int n, int i, int o, int part, int parts) {
  int x0, x1;
  if (i > o) {
    part_blocks(i, 16, parts, part, &x0, &x1);
    if (x0 < x1) linalg_mm_dw(dw + x0, i, dout, o, inp + x0, i, n, x1 - x0, o, 0.0f);
  } else {
    part_blocks(o, 16, parts, part, &x0, &x1);
    if (x0 < x1) linalg_mm_dw(dw + (size_t)x0 * i, i, dout + x0, o, inp, i, n, i, x1 - x0, 0.0f);
  }
  part_blocks(o, 16, parts, part, &x0, &x1);
  if (db && x0 < x1) linalg_colsum(db + x0, dout + x0, o, n, x1 - x0, m->a.ones);
}

/* Sum the LayerNorm gradient partials of the row blocks into dw, db [d]. */
static void layernorm_reduce(const Model *m, float *dw, float *db, int n) {
  int d = m->cfg.dim, nb = (n + ROWS - 1) / ROWS;
  memset(dw, 0, (size_t)d * sizeof(float));
  memset(db, 0, (size_t)d * sizeof(float));
  for (int b = 0; b < nb; b++) {
    const float *p = m->a.ln_part + (size_t)b * 2 * d;
    for (int j = 0; j < d; j++) {
      dw[j] += p[j];
      db[j] += p[d + j];
    }
  }
}

/* LayerNorm backward on rows [r0,r1), block by block so that each block's
** weight/bias partials land in its own slot of 'ln_part'. */
static void layernorm_backward_rows(const Model *m, float *dinp, const float *dout, const float *inp,
                                    const float *mean, const float *rstd, const float *w, int r0, int r1,
                                    int accumulate) {
  int d = m->cfg.dim;
  for (int b0 = r0; b0 < r1; b0 += ROWS) {
    int rows = r1 - b0 < ROWS ? r1 - b0 : ROWS;
    float *part = m->a.ln_part + (size_t)(b0 / ROWS) * 2 * d;
    memset(part, 0, 2 * (size_t)d * sizeof(float));
    size_t o = (size_t)b0 * d;
    kern_layernorm_backward(dinp + o, part, part + d, dout + o, inp + o, mean + b0, rstd + b0, w, rows, d,
                            accumulate);
  }
}

/* Through a Linear that a LayerNorm feeds (c_fc after ln_2, c_attn after
** ln_1), for the rows of this part: dln [N,d] = dwide . W, dx += LN'(dln);
** dW [wide,d] = dwide^T . ln, db = colsum(dwide). */
typedef struct {
  int w, b, ln_w;             /* the Linear's weight and bias, the LayerNorm's weight */
  int wide;                   /* the Linear's output width: 3d or 4d */
  const float *dwide;         /* its output's gradient [N,wide] */
  const float *ln_in, *mean, *rstd, *ln_out; /* the LayerNorm's input, statistics, output */
} NormedLinear;

static void normed_linear_backward(Model *m, int l, const NormedLinear *nl, int part, int parts) {
  int n = m->b * m->t, d = m->cfg.dim, r0, r1;
  float *P = m->a.params;
  part_blocks(n, ROWS, parts, part, &r0, &r1);
  if (r0 < r1) {
    size_t o = (size_t)r0 * d;
    linalg_mm_dinp(m->a.dln + o, d, nl->dwide + (size_t)r0 * nl->wide, nl->wide, layer_ptr(m, P, l, nl->w), d,
                   r1 - r0, d, nl->wide, 0.0f);
    layernorm_backward_rows(m, m->a.dresid, m->a.dln, nl->ln_in, nl->mean, nl->rstd, layer_ptr(m, P, l, nl->ln_w),
                            r0, r1, 1);
  }
  weight_grad_part(m, layer_ptr(m, m->a.grads, l, nl->w), layer_ptr(m, m->a.grads, l, nl->b), nl->dwide,
                   nl->ln_out, n, d, nl->wide, part, parts);
}

/* ---- the layers, each forward beside its backward
**
** A forward works on rows [r0,r1) (or (batch, head) pairs), so that the
** forward pass can run several layers on a thread's rows in one stage; a
** backward is a stage's part: its rows of the input gradient and its share
** of the weight gradient. The gradient flowing down the residual stream is
** 'dresid' [N,d]: each backward reads it (and adds to it where a
** LayerNorm's input is the stream). */

/* The embeddings: x[r,:] = wte[token r] + wpe[r mod t]   x [N,d] */
static void encoder_forward(Model *m, int r0, int r1) {
  int d = m->cfg.dim, t = m->t;
  const float *wte = tensor_ptr(m, m->a.params, T_WTE), *wpe = tensor_ptr(m, m->a.params, T_WPE);
  for (int r = r0; r < r1; r++)
    kern_rows_init(m->a.resid + (size_t)r * d, wte + (size_t)m->a.inputs[r] * d, wpe + (size_t)(r % t) * d,
                   1, d);
}

/* dwpe[t] = sum over b of dx0[b,t]; G_in = scatter-add of dx0 [N,d] (the
** lookup-output gradient) into the rows of the tokens. On the calling
** thread: rows of one token would collide. */
static void encoder_backward(Model *m) {
  const ModelConfig *c = &m->cfg;
  int d = c->dim, t = m->t, n = m->b * m->t;
  float *gin = tensor_ptr(m, m->a.grads, T_WTE), *gpe = tensor_ptr(m, m->a.grads, T_WPE);
  const float *dx = m->a.dresid;
  memset(gin, 0, (size_t)c->vocab * d * sizeof(float));
  memset(gpe, 0, (size_t)c->ctx * d * sizeof(float));
  for (int r = 0; r < n; r++) {
    kern_axpby(gpe + (size_t)(r % t) * d, dx + (size_t)r * d, (size_t)d, 1.0f, 1.0f);
    kern_axpby(gin + (size_t)m->a.inputs[r] * d, dx + (size_t)r * d, (size_t)d, 1.0f, 1.0f);
  }
}

/* Attention's input, ln_1 and c_attn of layer l on rows [r0,r1):
** ln1 [N,d] = LN(x), qkv [N,3d] = ln1 . W_qkv^T + b_qkv */
static void attn_input_forward(Model *m, int l, int r0, int r1) {
  const ModelConfig *c = &m->cfg;
  size_t N = (size_t)c->batch * c->ctx, d = c->dim;
  int n = r1 - r0;
  float *x = m->a.resid + l * N * d + r0 * d;
  float *ln1 = m->a.ln1 + l * N * d + r0 * d, *qkv = m->a.qkv + (l * N + r0) * 3 * d;
  kern_layernorm_forward(ln1, m->a.ln1_mean + l * N + r0, m->a.ln1_rstd + l * N + r0, x,
                         layer_ptr(m, m->a.params, l, LN1_W), layer_ptr(m, m->a.params, l, LN1_B), n, (int)d);
  kern_rows_init(qkv, NULL, layer_ptr(m, m->a.params, l, QKV_B), n, 3 * (int)d);
  linalg_mm_fwd(qkv, 3 * (int)d, ln1, (int)d, layer_ptr(m, m->a.params, l, QKV_W), (int)d, n, (int)d,
                3 * (int)d, 1.0f);
}

/* Stage: through c_attn and ln_1 (the normed Linear's backward):
** dqkv [N,3d] -> dx += LN_1'(dqkv . W_qkv); dW_qkv, db_qkv. */
static void attn_input_backward(void *arg, int part, int parts) {
  Stage *s = arg;
  Model *m = s->m;
  int l = s->l, d = m->cfg.dim;
  size_t N = (size_t)m->cfg.batch * m->cfg.ctx;
  NormedLinear qkv = {QKV_W, QKV_B, LN1_W, 3 * d, m->a.dqkv, m->a.resid + l * N * d, m->a.ln1_mean + l * N,
                      m->a.ln1_rstd + l * N, m->a.ln1 + l * N * d};
  normed_linear_backward(m, l, &qkv, part, parts);
}

/* The shapes attention works in, for layer l: the sequence length, the
** width, the heads and their width, the score scale, and where the layer's
** q, k, v and attention weights start. */
typedef struct {
  int t, d, H, hd;
  float scale;
  size_t N;
  const float *qkv;
  float *att;
} AttnShape;

static AttnShape attn_shape(const Model *m, int l) {
  const ModelConfig *c = &m->cfg;
  AttnShape s = {m->t, c->dim, c->heads, c->dim / c->heads, 0, (size_t)c->batch * c->ctx, NULL, NULL};
  s.scale = 1.0f / sqrtf((float)s.hd);
  s.qkv = m->a.qkv + l * s.N * 3 * s.d;
  s.att = m->a.att + l * (size_t)c->batch * s.H * c->ctx * c->ctx;
  return s;
}

/* The causal attention of layer l for (batch, head) pairs [u0,u1):
** att [b,h,t,t] = softmax(q k^T / sqrt(hd)) (causal), atty [N,d] = att . v.
** Query rows go in blocks of ATT_ROWS: a block only looks at the keys up to
** its last row, which skips most of the masked upper triangle. */
static void attention_forward(Model *m, int l, int u0, int u1) {
  AttnShape s = attn_shape(m, l);
  int t = s.t, d = s.d, hd = s.hd;
  for (int u = u0; u < u1; u++) {
    int b = u / s.H, h = u % s.H;
    const float *q = s.qkv + (size_t)b * t * 3 * d + h * hd, *k = q + d, *v = q + 2 * d;
    float *att = s.att + (size_t)u * t * t;
    float *y = m->a.atty + l * s.N * d + (size_t)b * t * d + h * hd;
    for (int r0 = 0; r0 < t; r0 += ATT_ROWS) {
      int rows = t - r0 < ATT_ROWS ? t - r0 : ATT_ROWS, keys = r0 + rows;
      float *a = att + (size_t)r0 * t;
      linalg_gemm(0, 1, rows, keys, hd, s.scale, q + (size_t)r0 * 3 * d, 3 * d, k, 3 * d, 0.0f, a, t);
      kern_causal_softmax(att, t, r0, keys, keys);
      linalg_gemm(0, 0, rows, hd, keys, 1.0f, a, t, v, 3 * d, 0.0f, y + (size_t)r0 * d, d);
    }
  }
}

/* Attention backward for (batch, head) pairs [u0,u1), block by block as
** in the forward pass: dP = dy v^T, dv = P^T dy, dS = softmax'(dP),
** dq = dS k / sqrt(hd), dk = dS^T q / sqrt(hd), into dqkv [N,3d]. The last
** block sees every key and writes dk and dv; the others add to them. */
static void attention_backward(Model *m, int l, int u0, int u1) {
  AttnShape s = attn_shape(m, l);
  int t = s.t, d = s.d, hd = s.hd;
  float scale = s.scale;
  for (int u = u0; u < u1; u++) {
    int b = u / s.H, h = u % s.H;
    size_t qo = (size_t)b * t * 3 * d + h * hd;
    const float *q = s.qkv + qo, *k = q + d, *v = q + 2 * d;
    float *dq = m->a.dqkv + qo, *dk = dq + d, *dv = dq + 2 * d;
    const float *att = s.att + (size_t)u * t * t;
    float *datt = m->a.datt + (size_t)u * t * t;
    const float *dy = m->a.datty + (size_t)b * t * d + h * hd;
    for (int r0 = (t - 1) / ATT_ROWS * ATT_ROWS; r0 >= 0; r0 -= ATT_ROWS) {
      int rows = t - r0 < ATT_ROWS ? t - r0 : ATT_ROWS, keys = r0 + rows;
      float beta = keys == t ? 0.0f : 1.0f;
      const float *a = att + (size_t)r0 * t, *dyr = dy + (size_t)r0 * d;
      float *da = datt + (size_t)r0 * t;
      linalg_gemm(0, 1, rows, keys, hd, 1.0f, dyr, d, v, 3 * d, 0.0f, da, t);
      linalg_gemm(1, 0, keys, hd, rows, 1.0f, a, t, dyr, d, beta, dv, 3 * d);
      kern_causal_softmax_backward(datt, att, t, r0, keys, keys);
      linalg_gemm(0, 0, rows, hd, keys, scale, da, t, k, 3 * d, 0.0f, dq + (size_t)r0 * 3 * d, 3 * d);
      linalg_gemm(1, 0, keys, hd, rows, scale, da, t, q + (size_t)r0 * 3 * d, 3 * d, beta, dk, 3 * d);
    }
  }
}

/* Attention's output, c_proj and the residual of layer l on rows [r0,r1):
** mid [N,d] = x + atty . W_proj^T + b_proj */
static void attn_output_forward(Model *m, int l, int r0, int r1) {
  size_t N = (size_t)m->cfg.batch * m->cfg.ctx;
  int d = m->cfg.dim;
  const float *x = m->a.resid + (l * N + r0) * d, *atty = m->a.atty + (l * N + r0) * d;
  float *mid = m->a.resid_mid + (l * N + r0) * d;
  kern_rows_init(mid, x, layer_ptr(m, m->a.params, l, PROJ_B), r1 - r0, d);
  linalg_mm_fwd(mid, d, atty, d, layer_ptr(m, m->a.params, l, PROJ_W), d, r1 - r0, d, d, 1.0f);
}

/* Its backward comes in two halves, in two stages: the input's gradient
** needs only this part's rows of dx (the stream's gradient at 'mid'), the
** weight's needs every row.
** datty [N,d] = dx . W_proj, on rows [r0,r1) */
static void attn_output_backward_input(Model *m, int l, int r0, int r1) {
  int d = m->cfg.dim;
  size_t o = (size_t)r0 * d;
  linalg_mm_dinp(m->a.datty + o, d, m->a.dresid + o, d, layer_ptr(m, m->a.params, l, PROJ_W), d, r1 - r0, d, d,
                 0.0f);
}

/* dW_proj [d,d] = dx^T . atty, db_proj = colsum(dx): this part's share */
static void attn_output_backward_weight(Model *m, int l, int part, int parts) {
  int n = m->b * m->t, d = m->cfg.dim;
  size_t N = (size_t)m->cfg.batch * m->cfg.ctx;
  weight_grad_part(m, layer_ptr(m, m->a.grads, l, PROJ_W), layer_ptr(m, m->a.grads, l, PROJ_B), m->a.dresid,
                   m->a.atty + l * N * d, n, d, d, part, parts);
}

/* The MLP of layer l with its residual on rows [r0,r1):
** ln2 = LN(mid); h [N,4d] = ln2 . W_fc^T + b_fc; gelu = GELU(h),
** gelu_grad = GELU'(h); x' = mid + gelu . W_fcproj^T + b_fcproj */
static void mlp_forward(Model *m, int l, int r0, int r1) {
  const ModelConfig *c = &m->cfg;
  size_t N = (size_t)c->batch * c->ctx;
  int d = c->dim, n = r1 - r0;
  float *P = m->a.params;
  const float *mid = m->a.resid_mid + (l * N + r0) * d;
  float *ln2 = m->a.ln2 + (l * N + r0) * d;
  float *ggrad = m->a.gelu_grad + (l * N + r0) * 4 * d, *gelu = m->a.gelu + (l * N + r0) * 4 * d;
  float *xn = m->a.resid + ((l + 1) * N + r0) * d;
  kern_layernorm_forward(ln2, m->a.ln2_mean + l * N + r0, m->a.ln2_rstd + l * N + r0, mid,
                         layer_ptr(m, P, l, LN2_W), layer_ptr(m, P, l, LN2_B), n, d);
  linalg_mm_fwd(ggrad, 4 * d, ln2, d, layer_ptr(m, P, l, FC_W), d, n, d, 4 * d, 0.0f);
  kern_gelu_forward(gelu, ggrad, layer_ptr(m, P, l, FC_B), n, 4 * d);
  kern_rows_init(xn, mid, layer_ptr(m, P, l, FCPROJ_B), n, d);
  linalg_mm_fwd(xn, d, gelu, 4 * d, layer_ptr(m, P, l, FCPROJ_W), 4 * d, n, 4 * d, d, 1.0f);
}

/* Its backward, in two stages as well. The first: through the MLP's
** c_proj and GELU.
** dgelu [N,4d] = dx . W_fcproj, dfch = dgelu * GELU'(h);
** dW_fcproj [d,4d] = dx^T . gelu, db_fcproj = colsum(dx) */
static void mlp_output_backward(void *arg, int part, int parts) {
  Stage *s = arg;
  Model *m = s->m;
  int l = s->l, n = m->b * m->t, d = m->cfg.dim, r0, r1;
  size_t N = (size_t)m->cfg.batch * m->cfg.ctx;
  const float *gelu = m->a.gelu + l * N * 4 * d, *ggrad = m->a.gelu_grad + l * N * 4 * d;
  part_blocks(n, ROWS, parts, part, &r0, &r1);
  if (r0 < r1) {
    float *dfch = m->a.dfch + (size_t)r0 * 4 * d;
    linalg_mm_dinp(dfch, 4 * d, m->a.dresid + (size_t)r0 * d, d, layer_ptr(m, m->a.params, l, FCPROJ_W), 4 * d,
                   r1 - r0, 4 * d, d, 0.0f);
    kern_mul(dfch, ggrad + (size_t)r0 * 4 * d, (size_t)(r1 - r0) * 4 * d);
  }
  weight_grad_part(m, layer_ptr(m, m->a.grads, l, FCPROJ_W), layer_ptr(m, m->a.grads, l, FCPROJ_B), m->a.dresid,
                   gelu, n, 4 * d, d, part, parts);
}

/* The second: through c_fc and ln_2 (the normed Linear's backward), which
** leaves dx at 'mid'. */
static void mlp_input_backward(Model *m, int l, int part, int parts) {
  int d = m->cfg.dim;
  size_t N = (size_t)m->cfg.batch * m->cfg.ctx;
  NormedLinear fc = {FC_W, FC_B, LN2_W, 4 * d, m->a.dfch, m->a.resid_mid + l * N * d, m->a.ln2_mean + l * N,
                     m->a.ln2_rstd + l * N, m->a.ln2 + l * N * d};
  normed_linear_backward(m, l, &fc, part, parts);
}

/* The head, ln_f, logits and the loss on rows [r0,r1):
** lnf [N,d] = LN(x_L); logits [N,V] = lnf . E_out^T; per row
** probs = softmax(logits), dlogits = (probs - onehot) / N, loss. */
static void head_forward(Model *m, int r0, int r1) {
  const ModelConfig *c = &m->cfg;
  size_t N = (size_t)c->batch * c->ctx;
  int d = c->dim, V = c->vocab, n = r1 - r0;
  const float *x = m->a.resid + ((size_t)c->layers * N + r0) * d;
  float *lnf = m->a.lnf + (size_t)r0 * d, *logits = m->a.probs + (size_t)r0 * V;
  kern_layernorm_forward(lnf, m->a.lnf_mean + r0, m->a.lnf_rstd + r0, x, tensor_ptr(m, m->a.params, t_lnf_w(c)),
                         tensor_ptr(m, m->a.params, t_lnf_w(c) + 1), n, d);
  linalg_mm_fwd(logits, V, lnf, d, tensor_ptr(m, m->a.params, t_lm_head(c)), d, n, d, V, 0.0f);
  if (!m->has_targets) return;
  float scale = 1.0f / (float)(m->grad_rows * m->t);
  for (int r = r0; r < r1; r++)
    m->a.row_loss[r] = kern_softmax_xent(m->a.probs + (size_t)r * V, m->a.dlogits + (size_t)r * V,
                                         m->a.targets[r], V, scale);
}

/* Stage: through the head.
** dlnf [N,d] = dlogits . E_out, dx_L = LN_f'(dlnf); G_out [V,d] = dlogits^T . lnf */
static void head_backward(void *arg, int part, int parts) {
  Model *m = ((Stage *)arg)->m;
  const ModelConfig *c = &m->cfg;
  int n = m->b * m->t, d = c->dim, V = c->vocab, r0, r1;
  part_blocks(n, ROWS, parts, part, &r0, &r1);
  if (r0 < r1) {
    float *dln = m->a.dln + (size_t)r0 * d;
    linalg_mm_dinp(dln, d, m->a.dlogits + (size_t)r0 * V, V, tensor_ptr(m, m->a.params, t_lm_head(c)), d,
                   r1 - r0, d, V, 0.0f);
    layernorm_backward_rows(m, m->a.dresid, m->a.dln, m->a.resid + (size_t)c->layers * c->batch * c->ctx * d,
                            m->a.lnf_mean, m->a.lnf_rstd, tensor_ptr(m, m->a.params, t_lnf_w(c)), r0, r1, 0);
  }
  weight_grad_part(m, tensor_ptr(m, m->a.grads, t_lm_head(c)), NULL, m->a.dlogits, m->a.lnf, n, d, V, part,
                   parts);
}

/* ---- the forward pass */

/* Stage: the embeddings, then layer 0's attention input. */
static void first_stage(void *arg, int part, int parts) {
  Stage *s = arg;
  int r0, r1;
  part_blocks(s->m->b * s->m->t, ROWS, parts, part, &r0, &r1);
  if (r0 >= r1) return;
  encoder_forward(s->m, r0, r1);
  attn_input_forward(s->m, 0, r0, r1);
}

static void attention_stage(void *arg, int u0, int u1, int w) {
  Stage *s = arg;
  attention_forward(s->m, s->l, u0, u1);
}

/* Stage: the rest of block l, all row-local, then the next block's
** attention input or the head. */
static void rows_stage(void *arg, int part, int parts) {
  Stage *s = arg;
  Model *m = s->m;
  int r0, r1;
  part_blocks(m->b * m->t, ROWS, parts, part, &r0, &r1);
  if (r0 >= r1) return;
  attn_output_forward(m, s->l, r0, r1);
  mlp_forward(m, s->l, r0, r1);
  if (s->l + 1 < m->cfg.layers) attn_input_forward(m, s->l + 1, r0, r1);
  else head_forward(m, r0, r1);
}

float model_forward(Model *m, const int32_t *inputs, const int32_t *targets, int b, int t) {
  return model_forward_part(m, inputs, targets, b, t, b);
}

float model_forward_part(Model *m, const int32_t *inputs, const int32_t *targets, int b, int t, int batch_rows) {
  const ModelConfig *c = &m->cfg;
  m->has_targets = 0;
  if (b < 1 || b > c->batch || t < 1 || t > c->ctx || batch_rows < b) return NAN;
  size_t n = (size_t)b * t;
  for (size_t i = 0; i < n; i++) {
    if (inputs[i] < 0 || inputs[i] >= c->vocab) return NAN;
    if (targets && (targets[i] < 0 || targets[i] >= c->vocab)) return NAN;
  }
  memcpy(m->a.inputs, inputs, n * sizeof(int32_t));
  if (targets) memcpy(m->a.targets, targets, n * sizeof(int32_t));
  m->b = b;
  m->t = t;
  m->grad_rows = batch_rows;
  m->has_targets = targets != NULL;
  Stage s = {.m = m};
  pool_run(m->pool, first_stage, &s);
  for (int l = 0; l < c->layers; l++) {
    s.l = l;
    pool_for(m->pool, b * c->heads, attention_stage, &s);
    pool_run(m->pool, rows_stage, &s);
  }
  if (!targets) return 0.0f;
  double loss = 0.0;
  for (size_t i = 0; i < n; i++) loss += m->a.row_loss[i];
  return (float)(loss / (double)n);
}

/* ---- the backward pass */

/* Stage: the MLP's input half, then attention output's input gradient,
** on the same rows. */
static void mlp_input_stage(void *arg, int part, int parts) {
  Stage *s = arg;
  int r0, r1;
  mlp_input_backward(s->m, s->l, part, parts);
  part_blocks(s->m->b * s->m->t, ROWS, parts, part, &r0, &r1);
  if (r0 < r1) attn_output_backward_input(s->m, s->l, r0, r1);
}

/* Stage: attention over this part's (batch, head) pairs, and c_proj's
** weight gradient. */
static void attention_backward_stage(void *arg, int part, int parts) {
  Stage *s = arg;
  int u0, u1;
  pool_split(s->m->b * s->m->cfg.heads, parts, part, &u0, &u1);
  attention_backward(s->m, s->l, u0, u1);
  attn_output_backward_weight(s->m, s->l, part, parts);
}

/* Stage: per-row L2/L1 sums of G_in [V,d], dx0 [N,d] and G_out [V,d], into
** 'stat' (sum of squares, sum of absolutes, non-zero) by global row. */
static void stats_stage(void *arg, int r0, int r1, int w) {
  Model *m = ((Stage *)arg)->m;
  const ModelConfig *c = &m->cfg;
  int V = c->vocab, n = m->b * m->t, rows = 2 * V + n;
  size_t d = (size_t)c->dim;
  double *sq = m->a.stat, *ab = sq + rows, *nz = ab + rows;
  for (int r = r0; r < r1; r++) {
    const float *x;
    if (r < V) x = tensor_ptr(m, m->a.grads, T_WTE) + r * d;
    else if (r < V + n) x = m->a.dresid + (size_t)(r - V) * d;
    else x = tensor_ptr(m, m->a.grads, t_lm_head(c)) + (size_t)(r - V - n) * d;
    nz[r] = kern_norms(x, d, &sq[r], &ab[r]);
  }
}

/* The per-row sums of G_in, dx0 and G_out into 'gs'. Under a Reducer
** G_in and G_out are already the whole batch's; dx0 holds this rank's
** rows only, so its two sums are summed across ranks, and with them the
** hooks' '*aux' (may be NULL), each rank's share. */
static int grad_stats(Model *m, GradStats *gs, const Reducer *red, double *aux, Err *err) {
  int V = m->cfg.vocab, n = m->b * m->t, rows = 2 * V + n;
  Stage s = {.m = m};
  pool_for(m->pool, rows, stats_stage, &s);
  const double *sq = m->a.stat, *ab = sq + rows, *nz = ab + rows;
  double acc[3][2] = {{0}}, touched = 0.0;
  for (int r = 0; r < rows; r++) {
    int which = r < V ? 0 : r < V + n ? 1 : 2;
    acc[which][0] += sq[r];
    acc[which][1] += ab[r];
    if (r < V) touched += nz[r];
  }
  if (red) {
    static const char what[] = "the gradient statistics";
    SumKey key = {reduce_hash(0, what, sizeof what), 0, what, 0};
    double sums[3] = {acc[1][0], acc[1][1], aux ? *aux : 0.0};
    if (red->sum(red->ctx, &key, sums, 3, err) < 0) return -1;
    acc[1][0] = sums[0], acc[1][1] = sums[1];
    if (aux) *aux = sums[2];
  }
  gs->in_l2 = sqrt(acc[0][0]);
  gs->in_l1 = acc[0][1];
  gs->in_act_l2 = sqrt(acc[1][0]);
  gs->in_act_l1 = acc[1][1];
  gs->out_l2 = sqrt(acc[2][0]);
  gs->out_l1 = acc[2][1];
  gs->rows_touched = touched / (double)V;
  return 0;
}

/* Hand the gradient of tensors [first, last) to the Reducer: the backward
** is done with them. */
static int reduce_tensors(Model *m, const Reducer *red, int first, int last, Err *err) {
  if (!red) return 0;
  size_t from = m->tensors[first].offset;
  size_t to = last < m->n_tensors ? m->tensors[last].offset : m->n_floats;
  return red->start(red->ctx, m->a.grads + from, to - from, err);
}

/* The positions whose 'on_hidden' runs: bit p for position p. */
static uint64_t hidden_mask(const StepHooks *hooks) {
  return hooks && hooks->on_hidden ? hooks->hidden_positions : 0;
}

/* Hand 'on_hidden' the gradient at residual position 'p', complete in
** 'dresid', with the stream there; what it reports adds to '*aux'. */
static int hidden_hook(Model *m, const StepHooks *hooks, int p, long step, double *aux, Err *err) {
  int n = m->b * m->t, d = m->cfg.dim;
  double mine = 0.0;
  if (err) err->msg[0] = '\0';
  if (hooks->on_hidden(hooks->ctx, m, p, model_residual(m, p), m->a.dresid, n, d, step, &mine, err) < 0) {
    if (err && !err->msg[0]) err_set(err, "the hook at residual position %d failed at step %ld", p, step);
    return -1;
  }
  if (aux) *aux += mine;
  return 0;
}

/* A hook failed mid-backward: the sums already started are waited for, so
** that none is left in flight into the next step. */
static int hook_failed(const Reducer *red) {
  Err ignored;
  if (red) red->wait(red->ctx, &ignored);
  return BACKWARD_HOOK;
}

/* Whether position 'p' is among the hooks' (one test of a mask: no hooks
** cost nothing more). */
static int wants(uint64_t mask, int p) { return p < 64 && (mask >> p & 1); }

int model_backward_hooked(Model *m, GradStats *gs, const Reducer *red, const StepHooks *hooks, long step,
                          double *aux, Err *err) {
  const ModelConfig *c = &m->cfg;
  GradStats zero = {0};
  if (gs) *gs = zero;
  if (!m->has_targets) return 0;
  int n = m->b * m->t;
  uint64_t mask = hidden_mask(hooks);
  Stage s = {.m = m};
  pool_run(m->pool, head_backward, &s);
  layernorm_reduce(m, tensor_ptr(m, m->a.grads, t_lnf_w(c)), tensor_ptr(m, m->a.grads, t_lnf_w(c) + 1), n);
  if (reduce_tensors(m, red, t_lnf_w(c), m->n_tensors, err) < 0) return BACKWARD_RANKS;
  if (wants(mask, c->layers) && hidden_hook(m, hooks, c->layers, step, aux, err) < 0) return hook_failed(red);
  for (int l = c->layers - 1; l >= 0; l--) {
    s.l = l;
    pool_run(m->pool, mlp_output_backward, &s);
    if (red && red->poll(red->ctx, err) < 0) return BACKWARD_RANKS;
    pool_run(m->pool, mlp_input_stage, &s);
    layernorm_reduce(m, layer_ptr(m, m->a.grads, l, LN2_W), layer_ptr(m, m->a.grads, l, LN2_B), n);
    if (red && red->poll(red->ctx, err) < 0) return BACKWARD_RANKS;
    pool_run(m->pool, attention_backward_stage, &s);
    if (red && red->poll(red->ctx, err) < 0) return BACKWARD_RANKS;
    pool_run(m->pool, attn_input_backward, &s);
    layernorm_reduce(m, layer_ptr(m, m->a.grads, l, LN1_W), layer_ptr(m, m->a.grads, l, LN1_B), n);
    int first = T_LAYER0 + l * LAYER_TENSORS;
    if (reduce_tensors(m, red, first, first + LAYER_TENSORS, err) < 0) return BACKWARD_RANKS;
    if (wants(mask, l) && hidden_hook(m, hooks, l, step, aux, err) < 0) return hook_failed(red);
  }
  encoder_backward(m);
  if (reduce_tensors(m, red, 0, T_LAYER0, err) < 0) return BACKWARD_RANKS;
  if (red && red->wait(red->ctx, err) < 0) return BACKWARD_RANKS;
  if (gs && grad_stats(m, gs, red, aux, err) < 0) return BACKWARD_RANKS;
  return 0;
}

int model_backward_reduced(Model *m, GradStats *gs, const Reducer *red, Err *err) {
  return model_backward_hooked(m, gs, red, NULL, 0, NULL, err) < 0 ? -1 : 0;
}

void model_backward(Model *m, GradStats *gs) { model_backward_reduced(m, gs, NULL, NULL); }

/* ---- reading out hidden states (the lenses) */

/* A readout stage on the rows of this part: forward, ln_f then the head
** (h -> logits), or, when the stage carries dlogits, its backward to the
** hidden states (dlogits -> dh) through the same two. */
static void readout_stage(void *arg, int part, int parts) {
  Stage *s = arg;
  Model *m = s->m;
  const ModelConfig *c = &m->cfg;
  int d = c->dim, V = c->vocab, r0, r1;
  part_blocks(s->n, ROWS, parts, part, &r0, &r1);
  if (r0 >= r1) return;
  const float *ln_w = tensor_ptr(m, m->a.params, t_lnf_w(c)), *head = tensor_ptr(m, m->a.params, t_lm_head(c));
  const float *in = s->in + (size_t)r0 * d;
  float *ln = s->scratch + (size_t)r0 * d;
  if (!s->dlogits) {
    kern_layernorm_forward(ln, NULL, NULL, in, ln_w, tensor_ptr(m, m->a.params, t_lnf_w(c) + 1), r1 - r0, d);
    linalg_mm_fwd(s->out + (size_t)r0 * V, V, ln, d, head, d, r1 - r0, d, V, 0.0f);
  } else {
    linalg_mm_dinp(ln, d, s->dlogits + (size_t)r0 * V, V, head, d, r1 - r0, d, V, 0.0f);
    kern_layernorm_backward(s->out + (size_t)r0 * d, NULL, NULL, ln, in, NULL, NULL, ln_w, r1 - r0, d, 0);
  }
}

void model_readout(const Model *m, const float *h, int n, float *logits, float *scratch) {
  Stage s = {.m = (Model *)m, .in = h, .out = logits, .scratch = scratch, .n = n};
  if (n > 0) pool_run(m->pool, readout_stage, &s);
}

void model_readout_backward(const Model *m, const float *h, const float *dlogits, int n, float *dh,
                            float *scratch) {
  Stage s = {.m = (Model *)m, .in = h, .out = dh, .scratch = scratch, .dlogits = dlogits, .n = n};
  if (n > 0) pool_run(m->pool, readout_stage, &s);
}
