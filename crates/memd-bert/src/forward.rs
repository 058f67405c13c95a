//! The BERT encoder's forward pass on the CPU: token ids in, the last hidden states out, for one
//! text or several stacked. No padding and no mask (each text runs at its own length, attention
//! stays within it), no tensor library:
//! the dense layers are [`crate::dense::Linear`], the rest (embeddings, attention, layer norm,
//! GELU) are plain loops over a few small buffers. Same arithmetic as Hugging Face's `BertModel`
//! (post-norm layers, exact-erf GELU), in f32 arithmetic over f16 weights.

use crate::BertError;
use crate::weights::{BertWeights, Norm};

/// The last hidden states of `ids` (`ids.len() × hidden`, row-major). Err when a text is longer
/// than the model's positions or names a token outside its vocabulary.
pub fn hidden_states(w: &BertWeights, ids: &[u32]) -> Result<Vec<f32>, BertError> {
    hidden_states_of_texts(w, &[ids]).map(|mut v| v.pop().unwrap_or_default())
}

/// The last hidden states of several texts, computed together: their token rows are stacked, so
/// every dense layer reads its weights once for all of them (a short text alone is bound by that
/// read), while attention stays within each text. The same figures as one text at a time, bit
/// for bit (each row's dot products run in the same order).
pub fn hidden_states_of_texts(w: &BertWeights, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, BertError> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA (checked above).
        return unsafe { states_avx2(w, texts) };
    }
    states(w, texts)
}

/// [`states`] compiled for AVX2: attention, layer norms and GELU in 8-wide vectors (the same
/// operations in the same order, so the same figures).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn states_avx2(w: &BertWeights, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, BertError> {
    states(w, texts)
}

#[inline(always)]
fn states(w: &BertWeights, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, BertError> {
    let h = w.config.hidden_size;
    let vocab = w.vocab();
    let eps = w.config.layer_norm_eps as f32;
    let mut spans = Vec::with_capacity(texts.len());
    let mut n = 0;
    for ids in texts {
        if ids.len() > w.config.max_position_embeddings {
            return Err(BertError::Input(format!(
                "{} tokens, the model has {} positions",
                ids.len(),
                w.config.max_position_embeddings
            )));
        }
        spans.push(n..n + ids.len());
        n += ids.len();
    }
    let mut x = vec![0f32; n * h];
    for (ids, span) in texts.iter().zip(&spans) {
        for (t, &id) in ids.iter().enumerate() {
            let id = id as usize;
            if id >= vocab {
                return Err(BertError::Input(format!("token id {id} outside the vocabulary of {vocab}")));
            }
            let at = span.start + t;
            let row = &mut x[at * h..(at + 1) * h];
            let word = &w.words[id * h..(id + 1) * h];
            let pos = &w.positions[t * h..(t + 1) * h];
            for (i, v) in row.iter_mut().enumerate() {
                *v = word[i].to_f32() + pos[i] + w.segment[i];
            }
        }
    }
    if n > 0 {
        layer_norm(&mut x, h, &w.embed_norm, eps);
        let (mut qkv, mut ctx, mut tmp, mut inter) = (Vec::new(), vec![0f32; n * h], Vec::new(), Vec::new());
        for layer in &w.layers {
            layer.qkv.forward(&x, n, &mut qkv);
            for span in &spans {
                let qkv_rows = &qkv[span.start * 3 * h..span.end * 3 * h];
                attention(
                    qkv_rows,
                    span.len(),
                    h,
                    w.config.num_attention_heads,
                    &mut ctx[span.start * h..span.end * h],
                );
            }
            layer.attn_out.forward(&ctx, n, &mut tmp);
            add_assign(&mut tmp, &x);
            layer_norm(&mut tmp, h, &layer.attn_norm, eps);
            std::mem::swap(&mut x, &mut tmp);
            layer.up.forward(&x, n, &mut inter);
            inter.iter_mut().for_each(|v| *v = gelu(*v));
            layer.down.forward(&inter, n, &mut tmp);
            add_assign(&mut tmp, &x);
            layer_norm(&mut tmp, h, &layer.out_norm, eps);
            std::mem::swap(&mut x, &mut tmp);
        }
    }
    Ok(spans.into_iter().map(|s| x[s.start * h..s.end * h].to_vec()).collect())
}

/// Scaled dot-product self-attention of every head: `qkv` rows are `[q | k | v]` (`3 × hidden`),
/// `ctx` gets `n × hidden`. Each head's keys are first laid out transposed (`d × n`), so a query's
/// scores are `d` multiply-adds over 16 keys at a time held in registers ([`scores_of`]), instead
/// of `n` short dot products each ending in a horizontal sum.
#[inline(always)]
fn attention(qkv: &[f32], n: usize, h: usize, heads: usize, ctx: &mut [f32]) {
    let d = h / heads;
    let scale = 1.0 / (d as f32).sqrt();
    let stride = 3 * h;
    let (mut scores, mut keys, mut q) = (vec![0f32; n], vec![0f32; d * n], vec![0f32; d]);
    for head in 0..heads {
        let off = head * d;
        for j in 0..n {
            for (c, k) in qkv[j * stride + h + off..j * stride + h + off + d].iter().enumerate() {
                keys[c * n + j] = *k;
            }
        }
        for i in 0..n {
            for (qs, qv) in q.iter_mut().zip(&qkv[i * stride + off..i * stride + off + d]) {
                *qs = qv * scale;
            }
            scores_of(&q, &keys, n, &mut scores);
            softmax(&mut scores);
            let out = &mut ctx[i * h + off..i * h + off + d];
            let values = |j: usize| &qkv[j * stride + 2 * h + off..j * stride + 2 * h + off + d];
            match d {
                // MiniLM's heads: the sums stay in four registers.
                32 => weighted_sum::<32>(&scores, values, out),
                _ => {
                    out.fill(0.0);
                    for (j, p) in scores.iter().enumerate() {
                        out.iter_mut().zip(values(j)).for_each(|(o, v)| *o = p.mul_add(*v, *o));
                    }
                }
            }
        }
    }
}

/// `scores[j] = Σ_c q[c] · keys[c·n + j]`: 64 keys at a time, then 16, their sums in registers
/// while `c` walks the query (each score written once, not read and written back per dimension;
/// 64 keys are eight independent chains of multiply-adds, enough to hide their latency).
#[inline(always)]
fn scores_of(q: &[f32], keys: &[f32], n: usize, scores: &mut [f32]) {
    let mut j0 = 0;
    j0 = scores_by::<64>(q, keys, n, j0, scores);
    j0 = scores_by::<16>(q, keys, n, j0, scores);
    for (j, sc) in scores.iter_mut().enumerate().skip(j0) {
        *sc = q.iter().enumerate().fold(0.0, |s, (c, qc)| qc.mul_add(keys[c * n + j], s));
    }
}

/// [`scores_of`]'s blocks of `W` keys from `j0` while whole ones remain; returns where they end.
#[inline(always)]
fn scores_by<const W: usize>(q: &[f32], keys: &[f32], n: usize, mut j0: usize, scores: &mut [f32]) -> usize {
    while j0 + W <= n {
        let mut acc = [0f32; W];
        for (c, qc) in q.iter().enumerate() {
            let k: &[f32; W] = keys[c * n + j0..c * n + j0 + W].try_into().expect("a block of keys");
            for (a, kv) in acc.iter_mut().zip(k) {
                *a = qc.mul_add(*kv, *a);
            }
        }
        scores[j0..j0 + W].copy_from_slice(&acc);
        j0 += W;
    }
    j0
}

/// `out = Σⱼ pⱼ · values(j)` for `D`-wide rows, the sum held in a local array (registers).
#[inline(always)]
fn weighted_sum<'a, const D: usize>(p: &[f32], values: impl Fn(usize) -> &'a [f32], out: &mut [f32]) {
    let mut acc = [0f32; D];
    for (j, pj) in p.iter().enumerate() {
        let v: &[f32; D] = values(j).try_into().expect("a head's width");
        for (a, vv) in acc.iter_mut().zip(v) {
            *a = pj.mul_add(*vv, *a);
        }
    }
    out.copy_from_slice(&acc);
}

/// Lanes of the partial sums and maxima below: a float sum in one chain neither vectorises nor
/// overlaps its additions.
const LANES: usize = 16;

/// `Σ x`, in [`LANES`] partial sums.
#[inline(always)]
fn sum_of(x: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        acc.iter_mut().zip(c).for_each(|(a, v)| *a += v);
    }
    acc.iter().sum::<f32>() + rest
}

/// `Σ (x − mean)²`, in [`LANES`] partial sums.
#[inline(always)]
fn squares_about(x: &[f32], mean: f32) -> f32 {
    let mut acc = [0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest: f32 = chunks.remainder().iter().map(|v| (v - mean) * (v - mean)).sum();
    for c in chunks {
        acc.iter_mut().zip(c).for_each(|(a, v)| *a = (v - mean).mul_add(v - mean, *a));
    }
    acc.iter().sum::<f32>() + rest
}

/// The largest of `x` (−∞ when empty), in [`LANES`] partial maxima.
#[inline(always)]
fn max_of(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder().iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for c in chunks {
        acc.iter_mut().zip(c).for_each(|(a, v)| *a = if *v > *a { *v } else { *a });
    }
    acc.iter().copied().fold(rest, f32::max)
}

#[inline(always)]
fn softmax(s: &mut [f32]) {
    let max = max_of(s);
    // The exponentials in a loop of their own, so that it vectorises.
    s.iter_mut().for_each(|v| *v = exp_le_zero(*v - max));
    let inv = 1.0 / sum_of(s);
    s.iter_mut().for_each(|v| *v *= inv);
}

/// `eˣ` for `x ≤ 0` (softmax's shifted scores) as plain arithmetic that vectorises: `2ⁿ · eʳ`
/// with `n = ⌊x·log₂e + ½⌋`, `r` in [−ln2/2, ln2/2] and a degree-6 Taylor polynomial (relative
/// error within 4·10⁻⁷ of libm's `expf`, tested); 0 below −87 (past f32's normal range).
#[inline(always)]
fn exp_le_zero(x: f32) -> f32 {
    if x < -87.0 {
        return 0.0;
    }
    let n = (x * std::f32::consts::LOG2_E + 0.5).floor();
    // ln 2 in two parts, so that n · ln2 is exact enough for the reduction.
    let r = (x - n * 0.693_145_75) - n * 1.428_606_8e-6;
    let mut p = 1.0 / 720.0;
    for c in [1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0] {
        p = p * r + c;
    }
    // 2ⁿ from the bits of n + 127 (in 1..=254 here) read off the mantissa of 2²³ + n + 127: a
    // float-to-int cast would saturate lane by lane and keep the loop from vectorising.
    p * f32::from_bits(((n + 127.0 + 8_388_608.0).to_bits() & 0xff) << 23)
}

#[inline(always)]
fn add_assign(a: &mut [f32], b: &[f32]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

/// Normalises each `h`-wide row of `x` to zero mean and unit variance, then scales and shifts it.
#[inline(always)]
fn layer_norm(x: &mut [f32], h: usize, norm: &Norm, eps: f32) {
    for row in x.chunks_exact_mut(h) {
        let mean = sum_of(row) / h as f32;
        let var = squares_about(row, mean) / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
            *v = ((*v - mean) * inv).mul_add(*g, *b);
        }
    }
}

/// GELU with the exact error function (BERT's `gelu`), not the tanh approximation.
#[inline(always)]
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The error function as a rational polynomial on [-4, 4] (Eigen's float `erf`; a few ulp), ±1
/// outside.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = x2 * -2.726_142_3e-10 + 2.770_681_4e-8;
    p = p * x2 + -2.101_024e-6;
    p = p * x2 + -5.692_506_4e-5;
    p = p * x2 + -7.349_906_3e-4;
    p = p * x2 + -2.954_600_1e-3;
    p = p * x2 + -1.609_603_3e-2;
    p *= x;
    let mut q = x2 * -1.456_607_2e-5 + -2.133_740_6e-4;
    q = q * x2 + -1.682_827e-3;
    q = q * x2 + -7.373_329e-3;
    q = q * x2 + -1.426_474e-2;
    p / q
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::dense::Linear;
    use crate::dense::tests::Numbers;
    use crate::weights::{BertConfig, Layer};

    /// The model's parts from the tests' numbers.
    trait Parts {
        fn norm(&mut self, h: usize) -> Norm;
        fn linear(&mut self, out: usize, inp: usize) -> Linear;
    }

    impl Parts for Numbers {
        fn norm(&mut self, h: usize) -> Norm {
            Norm {
                gamma: self.take(h).iter().map(|g| 1.0 + g).collect(),
                beta: self.take(h),
            }
        }
        fn linear(&mut self, out: usize, inp: usize) -> Linear {
            Linear::new(&self.take(out * inp), self.take(out), inp).unwrap()
        }
    }

    /// A two-layer model of random weights (hidden 16, two heads, vocabulary 20).
    fn tiny_model() -> BertWeights {
        let mut r = Numbers(11);
        let (h, inter) = (16, 32);
        let embed_norm = r.norm(h);
        let mut layers = Vec::new();
        for _ in 0..2 {
            let qkv = r.linear(3 * h, h);
            let attn_out = r.linear(h, h);
            let attn_norm = r.norm(h);
            let (up, down) = (r.linear(inter, h), r.linear(h, inter));
            layers.push(Layer {
                qkv,
                attn_out,
                attn_norm,
                up,
                down,
                out_norm: r.norm(h),
            });
        }
        BertWeights {
            config: BertConfig {
                hidden_size: h,
                num_attention_heads: 2,
                num_hidden_layers: 2,
                intermediate_size: inter,
                max_position_embeddings: 8,
                layer_norm_eps: 1e-12,
                hidden_act: "gelu".into(),
            },
            words: r.take(20 * h).into_iter().map(half::f16::from_f32).collect(),
            positions: r.take(8 * h),
            segment: r.take(h),
            embed_norm,
            layers,
        }
    }

    /// Texts run together give each text's own hidden states, bit for bit: attention never looks
    /// across texts, and positions restart at each text.
    #[test]
    fn stacked_texts_equal_each_text_alone() {
        let m = tiny_model();
        let texts: [&[u32]; 4] = [&[1, 5, 7, 2], &[1, 2], &[], &[1, 9, 9, 9, 3, 4, 2]];
        let together = hidden_states_of_texts(&m, &texts).unwrap();
        for (ids, got) in texts.iter().zip(&together) {
            let alone = hidden_states(&m, ids).unwrap();
            assert_eq!(got.len(), ids.len() * 16);
            assert_eq!(got, &alone, "text {ids:?}");
            assert!(got.iter().all(|v| v.is_finite()));
        }
        // A token of a text does change that text's other states (attention is wired).
        let changed = hidden_states(&m, &[1, 6, 7, 2]).unwrap();
        assert_ne!(changed[..16], together[0][..16]);
    }

    #[test]
    fn inputs_the_model_cannot_take_are_errors() {
        let m = tiny_model();
        assert!(
            matches!(hidden_states(&m, &[1, 20]), Err(BertError::Input(_))),
            "token outside the vocabulary"
        );
        assert!(
            matches!(hidden_states(&m, &[1; 9]), Err(BertError::Input(_))),
            "longer than the positions"
        );
    }

    #[test]
    fn erf_matches_reference_values() {
        for (x, want) in [
            (0.0f32, 0.0f32),
            (0.1, 0.112_462_916),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (-1.5, -0.966_105_15),
            (2.0, 0.995_322_3),
            (3.0, 0.999_977_9),
            (6.0, 1.0),
        ] {
            assert!((erf(x) - want).abs() < 2e-6, "erf({x}) = {} not {want}", erf(x));
        }
    }

    #[test]
    fn exp_matches_the_library_below_zero() {
        for i in 0..=20_000 {
            let x = -(i as f32) * 0.005;
            let (got, want) = (exp_le_zero(x), x.exp());
            assert!((got - want).abs() <= want * 4e-7 + 1e-37, "e^{x}: {got} vs {want}");
        }
        assert_eq!(exp_le_zero(0.0), 1.0);
        assert_eq!(exp_le_zero(-100.0), 0.0);
    }

    /// The partial-lane sums, squares and maxima agree with plain folds, at every remainder.
    #[test]
    fn lane_folds_agree_with_plain_ones() {
        let x = Numbers(5).take(70);
        for n in [0, 1, 15, 16, 17, 33, 70] {
            let x = &x[..n];
            assert!((sum_of(x) - x.iter().sum::<f32>()).abs() < 1e-5, "sum of {n}");
            let plain: f32 = x.iter().map(|v| (v - 0.1) * (v - 0.1)).sum();
            assert!((squares_about(x, 0.1) - plain).abs() < 1e-5, "squares of {n}");
            assert_eq!(max_of(x), x.iter().copied().fold(f32::NEG_INFINITY, f32::max), "max of {n}");
        }
    }

    /// Scores over 16 keys at a time and the rest one by one equal plain dot products.
    #[test]
    fn scores_equal_dot_products() {
        let mut r = Numbers(3);
        for n in [1, 12, 16, 37] {
            let (q, keys) = (r.take(32), r.take(32 * n));
            let mut got = vec![0f32; n];
            scores_of(&q, &keys, n, &mut got);
            for (j, g) in got.iter().enumerate() {
                let want: f32 = (0..32).map(|c| q[c] * keys[c * n + j]).sum();
                assert!((g - want).abs() < 1e-5, "n {n} key {j}: {g} vs {want}");
            }
        }
    }

    /// The weighted sum of values equals a plain one.
    #[test]
    fn weighted_sums_equal_plain_ones() {
        let mut r = Numbers(4);
        for n in [1, 2, 7, 12] {
            let (p, v) = (r.take(n), r.take(32 * n));
            let mut got = vec![0f32; 32];
            weighted_sum::<32>(&p, |j| &v[j * 32..(j + 1) * 32], &mut got);
            for (c, g) in got.iter().enumerate() {
                let want: f32 = (0..n).map(|j| p[j] * v[j * 32 + c]).sum();
                assert!((g - want).abs() < 1e-5, "n {n} lane {c}: {g} vs {want}");
            }
        }
    }

    #[test]
    fn softmax_sums_to_one_and_survives_large_scores() {
        let mut s = vec![1000.0, 999.0, -1000.0];
        softmax(&mut s);
        assert!((s.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(s[0] > s[1] && s[2] == 0.0);
    }
}
