//! [`Linear`]: a dense layer `y = x·Wᵀ + b` for the CPU BERT forward ([`crate::forward`]).
//!
//! The weight keeps PyTorch's `[out][in]` layout, so each output is a dot product of two contiguous
//! rows, and is stored in half precision (f16): a short text's forward pass is bound by reading
//! the weights from memory, and half the bytes take half the time (the arithmetic stays f32). The
//! AVX2/FMA/F16C kernel (chosen at run time) computes a tile of 4 input rows × 3 outputs at a
//! time with the tile's three weight rows in L1 while it walks every input row: for the short
//! texts of a search query (a dozen tokens) the weights are read from memory once per layer, and
//! nothing is packed or allocated per call. Other CPUs run the portable loop.

use half::f16;

/// A dense layer: `out` outputs from `inp` inputs.
pub struct Linear {
    /// `[out][inp]`, row-major, f16.
    weight: Vec<f16>,
    bias: Vec<f32>,
    inp: usize,
    out: usize,
}

impl std::fmt::Debug for Linear {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Linear({} -> {})", self.inp, self.out)
    }
}

impl Linear {
    /// A layer from a `[out][inp]` weight and `out` biases; None when the sizes disagree.
    pub fn new(weight: &[f32], bias: Vec<f32>, inp: usize) -> Option<Self> {
        let out = bias.len();
        let weight = weight.iter().map(|w| f16::from_f32(*w)).collect::<Vec<_>>();
        (inp > 0 && weight.len() == out * inp).then_some(Self { weight, bias, inp, out })
    }

    /// Several layers of the same input stacked into one (their outputs side by side).
    pub fn stack(parts: Vec<Linear>) -> Option<Self> {
        let inp = parts.first()?.inp;
        if parts.iter().any(|p| p.inp != inp) {
            return None;
        }
        let (mut weight, mut bias) = (Vec::new(), Vec::new());
        for p in parts {
            weight.extend(p.weight);
            bias.extend(p.bias);
        }
        let out = bias.len();
        Some(Self { weight, bias, inp, out })
    }

    pub fn outputs(&self) -> usize {
        self.out
    }

    /// `rows` input rows (`x`, `rows × inp`) → `rows × out` outputs, replacing `y`'s contents.
    pub fn forward(&self, x: &[f32], rows: usize, y: &mut Vec<f32>) {
        assert_eq!(x.len(), rows * self.inp, "input of the wrong size");
        y.clear();
        y.resize(rows * self.out, 0.0);
        #[cfg(target_arch = "x86_64")]
        if self.inp % 8 == 0
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("f16c")
        {
            // SAFETY: the CPU has AVX2, FMA and F16C (checked above); the sizes were checked above and
            // `y` was sized to `rows × out`, which is all the kernel reads and writes.
            unsafe { avx2::forward(self, x, rows, y) };
            return;
        }
        self.forward_portable(x, rows, y);
    }

    fn forward_portable(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        for r in 0..rows {
            let xr = &x[r * self.inp..(r + 1) * self.inp];
            for (o, w) in self.weight.chunks_exact(self.inp).enumerate() {
                let mut lanes = [0f32; 8];
                for (xc, wc) in xr.chunks(8).zip(w.chunks(8)) {
                    for (l, (a, b)) in lanes.iter_mut().zip(xc.iter().zip(wc)) {
                        *l += a * b.to_f32();
                    }
                }
                y[r * self.out + o] = self.bias[o] + lanes.iter().sum::<f32>();
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Linear;
    use std::arch::x86_64::*;

    /// The tiled kernel. Safety: AVX2, FMA and F16C present, `l.inp % 8 == 0`, `x.len() == rows × inp`,
    /// `y.len() == rows × out`.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) unsafe fn forward(l: &Linear, x: &[f32], rows: usize, y: &mut [f32]) {
        let mut o = 0;
        while o + 2 <= l.out {
            unsafe { columns::<2>(l, x, rows, o, y) };
            o += 2;
        }
        if o < l.out {
            unsafe { columns::<1>(l, x, rows, o, y) };
        }
    }

    /// Outputs `o..o + C` of every row: six rows at a time, then four, two, one.
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn columns<const C: usize>(l: &Linear, x: &[f32], rows: usize, o: usize, y: &mut [f32]) {
        let mut r = 0;
        while r + 6 <= rows {
            unsafe { tile::<6, C>(l, x, r, o, y) };
            r += 6;
        }
        if r + 4 <= rows {
            unsafe { tile::<4, C>(l, x, r, o, y) };
            r += 4;
        }
        if r + 2 <= rows {
            unsafe { tile::<2, C>(l, x, r, o, y) };
            r += 2;
        }
        if r < rows {
            unsafe { tile::<1, C>(l, x, r, o, y) };
        }
    }

    /// Outputs `o..o + C` of input rows `r..r + R`.
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn tile<const R: usize, const C: usize>(l: &Linear, x: &[f32], r: usize, o: usize, y: &mut [f32]) {
        let k = l.inp;
        let xp = unsafe { x.as_ptr().add(r * k) };
        let wp = unsafe { l.weight.as_ptr().add(o * k) };
        let mut acc = [[_mm256_setzero_ps(); C]; R];
        let mut i = 0;
        while i < k {
            let mut w = [_mm256_setzero_ps(); C];
            for (c, wc) in w.iter_mut().enumerate() {
                *wc = _mm256_cvtph_ps(unsafe { _mm_loadu_si128(wp.add(c * k + i).cast()) });
            }
            for (row, acc_row) in acc.iter_mut().enumerate() {
                let xv = unsafe { _mm256_loadu_ps(xp.add(row * k + i)) };
                for (a, wc) in acc_row.iter_mut().zip(&w) {
                    *a = _mm256_fmadd_ps(xv, *wc, *a);
                }
            }
            i += 8;
        }
        for (row, acc_row) in acc.iter().enumerate() {
            for (c, a) in acc_row.iter().enumerate() {
                y[(r + row) * l.out + o + c] = l.bias[o + c] + hsum(*a);
            }
        }
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    fn hsum(v: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(l: &Linear, x: &[f32], rows: usize) -> Vec<f32> {
        let mut y = vec![0f32; rows * l.out];
        for r in 0..rows {
            for o in 0..l.out {
                let mut s = l.bias[o] as f64;
                for i in 0..l.inp {
                    s += x[r * l.inp + i] as f64 * l.weight[o * l.inp + i].to_f64();
                }
                y[r * l.out + o] = s as f32;
            }
        }
        y
    }

    /// Every tile shape and remainder (rows not a multiple of 4, outputs not of 3) agrees with a
    /// plain f64 loop, on the fast kernel and the portable one.
    #[test]
    fn the_kernels_agree_with_a_plain_loop() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        };
        for (inp, out, rows) in [(16, 7, 5), (384, 1152, 12), (40, 3, 1), (24, 8, 9)] {
            let w: Vec<f32> = (0..inp * out).map(|_| next()).collect();
            let l = Linear::new(&w, (0..out).map(|_| next()).collect(), inp).unwrap();
            let x: Vec<f32> = (0..rows * inp).map(|_| next()).collect();
            let want = naive(&l, &x, rows);
            let mut fast = Vec::new();
            l.forward(&x, rows, &mut fast);
            let mut portable = vec![0f32; rows * out];
            l.forward_portable(&x, rows, &mut portable);
            for (i, w) in want.iter().enumerate() {
                assert!((fast[i] - w).abs() < 1e-4, "fast {inp}x{out} at {i}: {} vs {w}", fast[i]);
                assert!((portable[i] - w).abs() < 1e-4, "portable {inp}x{out} at {i}");
            }
        }
    }

    #[test]
    fn mismatched_sizes_are_refused() {
        assert!(Linear::new(&[0.0; 10], vec![0.0; 3], 4).is_none());
        let a = Linear::new(&[0.0; 8], vec![0.0; 2], 4).unwrap();
        let b = Linear::new(&[0.0; 6], vec![0.0; 2], 3).unwrap();
        assert!(Linear::stack(vec![a, b]).is_none());
    }
}
