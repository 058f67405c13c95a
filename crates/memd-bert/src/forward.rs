//! The BERT encoder's forward pass on the CPU: token ids in, the last hidden states out, for one
//! text or several stacked. No padding and no mask (each text runs at its own length, attention
//! stays within it), no tensor library:
//! the dense layers are [`crate::dense::Linear`], attention is [`crate::attention`], the rest
//! (embeddings, layer norm, GELU) are plain loops over a few small buffers. Same arithmetic as
//! Hugging Face's `BertModel` (post-norm layers, exact-erf GELU), in f32 arithmetic between the
//! dense layers (whose kernel stores the weights in f16 or 8-bit integers).

use crate::BertError;
use crate::attention::{attention, squares_about, sum_of};
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
            Linear::with_kernel(&self.take(out * inp), self.take(out), inp, crate::Kernel::best()).unwrap()
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
}
