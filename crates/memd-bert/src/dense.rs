//! [`Linear`]: a dense layer `y = x·Wᵀ + b` for the CPU BERT forward ([`crate::forward`]).
//!
//! The weight is stored in half precision (f16): a short text's forward pass is bound by reading
//! the weights from memory, and half the bytes take half the time (the arithmetic stays f32). It
//! is packed once, at load, in panels of 16 outputs: for each input `k`, the 16 weights of the
//! panel's outputs side by side. The AVX2/FMA/F16C kernel (chosen at run time) keeps a tile of
//! up to 6 input rows × 16 outputs in registers and walks `k`, one broadcast input times two
//! vectors of weights per row — no horizontal sums, nothing packed or allocated per call. Rows go
//! in blocks of 24, each block reading every panel once: for the dozen tokens of a search query
//! the weights are read from memory once per layer. Blocks, and the tiles of a block, are the
//! fewest and most even the rows allow (each tile walks the whole panel). Other CPUs run the
//! portable loop.

use half::f16;

/// Outputs per panel (two AVX vectors).
const PANEL: usize = 16;
/// Input rows per block (the weights are streamed once per block).
const ROW_BLOCK: usize = 24;
/// Input rows per register tile at most. A block's rows are cut into the fewest tiles, as even as
/// possible: each tile walks the whole panel, and a tile of one or two rows waits on its FMA
/// chains (4 cycles each) instead of filling both FMA units, so 15 rows run as 5 + 5 + 5, not
/// 6 + 6 + 2 + 1 (measured: 15 tokens 6.1–7.9 → 4.9–5.0 ms, docs/decisions.md).
const TILE_ROWS: usize = 6;

/// A dense layer: `out` outputs from `inp` inputs.
pub struct Linear {
    /// `[panel][inp][16]`, f16, the last panel padded with zeros.
    packed: Vec<f16>,
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
        if inp == 0 || weight.len() != out * inp {
            return None;
        }
        let panels = out.div_ceil(PANEL);
        let mut packed = vec![f16::ZERO; panels * inp * PANEL];
        for (o, row) in weight.chunks_exact(inp).enumerate() {
            let (p, j) = (o / PANEL, o % PANEL);
            for (k, w) in row.iter().enumerate() {
                packed[(p * inp + k) * PANEL + j] = f16::from_f32(*w);
            }
        }
        Some(Self { packed, bias, inp, out })
    }

    /// The weight of output `o` from input `k`, as stored.
    fn weight_at(&self, o: usize, k: usize) -> f16 {
        self.packed[((o / PANEL) * self.inp + k) * PANEL + o % PANEL]
    }

    /// Several layers of the same input stacked into one (their outputs side by side).
    pub fn stack(parts: Vec<Linear>) -> Option<Self> {
        let inp = parts.first()?.inp;
        if parts.iter().any(|p| p.inp != inp) {
            return None;
        }
        let (mut weight, mut bias) = (Vec::new(), Vec::new());
        for p in &parts {
            for o in 0..p.out {
                weight.extend((0..inp).map(|k| p.weight_at(o, k).to_f32()));
            }
            bias.extend(&p.bias);
        }
        Self::new(&weight, bias, inp)
    }

    /// `rows` input rows (`x`, `rows × inp`) → `rows × out` outputs, replacing `y`'s contents.
    pub fn forward(&self, x: &[f32], rows: usize, y: &mut Vec<f32>) {
        assert_eq!(x.len(), rows * self.inp, "input of the wrong size");
        y.clear();
        y.resize(rows * self.out, 0.0);
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") && std::is_x86_feature_detected!("f16c") {
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
            for (p, panel) in self.packed.chunks_exact(self.inp * PANEL).enumerate() {
                let mut acc = [0f32; PANEL];
                for (xv, w) in xr.iter().zip(panel.chunks_exact(PANEL)) {
                    for (a, wv) in acc.iter_mut().zip(w) {
                        *a += xv * wv.to_f32();
                    }
                }
                for (j, a) in acc.iter().enumerate().take(self.out - p * PANEL) {
                    y[r * self.out + p * PANEL + j] = self.bias[p * PANEL + j] + a;
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Linear, PANEL, ROW_BLOCK, TILE_ROWS};
    use std::arch::x86_64::*;

    /// The blocked kernel. Safety: AVX2, FMA and F16C present, `x.len() == rows × inp`,
    /// `y.len() == rows × out`.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) unsafe fn forward(l: &Linear, x: &[f32], rows: usize, y: &mut [f32]) {
        let panels = l.out.div_ceil(PANEL);
        let mut r0 = 0;
        for block in even_parts(rows, ROW_BLOCK) {
            for p in 0..panels {
                let mut r = r0;
                for height in even_parts(block, TILE_ROWS) {
                    // SAFETY: rows r..r + height lie within this block (the tiles sum to its rows).
                    unsafe {
                        match height {
                            6 => tile::<6>(l, x, r, p, y),
                            5 => tile::<5>(l, x, r, p, y),
                            4 => tile::<4>(l, x, r, p, y),
                            3 => tile::<3>(l, x, r, p, y),
                            2 => tile::<2>(l, x, r, p, y),
                            _ => tile::<1>(l, x, r, p, y),
                        }
                    }
                    r += height;
                }
            }
            r0 += block;
        }
    }

    /// `n` split into the fewest parts of at most `max`, their sizes differing by one at most: the
    /// blocks of the rows, and the tiles of a block.
    pub(super) fn even_parts(n: usize, max: usize) -> impl Iterator<Item = usize> {
        let parts = n.div_ceil(max);
        (0..parts).map(move |t| n / parts + usize::from(t < n % parts))
    }

    /// Panel `p`'s outputs of input rows `r..r + R`.
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn tile<const R: usize>(l: &Linear, x: &[f32], r: usize, p: usize, y: &mut [f32]) {
        let k = l.inp;
        let xp = unsafe { x.as_ptr().add(r * k) };
        let wp: *const __m128i = unsafe { l.packed.as_ptr().add(p * k * PANEL).cast() };
        let mut acc = [[_mm256_setzero_ps(); 2]; R];
        for i in 0..k {
            let w0 = _mm256_cvtph_ps(unsafe { _mm_loadu_si128(wp.add(2 * i)) });
            let w1 = _mm256_cvtph_ps(unsafe { _mm_loadu_si128(wp.add(2 * i + 1)) });
            for (row, a) in acc.iter_mut().enumerate() {
                let xv = _mm256_set1_ps(unsafe { *xp.add(row * k + i) });
                a[0] = _mm256_fmadd_ps(xv, w0, a[0]);
                a[1] = _mm256_fmadd_ps(xv, w1, a[1]);
            }
        }
        let valid = (l.out - p * PANEL).min(PANEL);
        let base = p * PANEL;
        for (row, a) in acc.iter().enumerate() {
            let mut lanes = [0f32; PANEL];
            unsafe {
                _mm256_storeu_ps(lanes.as_mut_ptr(), a[0]);
                _mm256_storeu_ps(lanes.as_mut_ptr().add(8), a[1]);
            }
            let out = &mut y[(r + row) * l.out + base..(r + row) * l.out + base + valid];
            for (j, o) in out.iter_mut().enumerate() {
                *o = l.bias[base + j] + lanes[j];
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Deterministic numbers in [-0.5, 0.5) (the tests' weights and inputs).
    pub(crate) struct Numbers(pub u64);

    impl Numbers {
        pub(crate) fn take(&mut self, n: usize) -> Vec<f32> {
            (0..n)
                .map(|_| {
                    self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((self.0 >> 40) as f32 / (1u64 << 24) as f32) - 0.5
                })
                .collect()
        }
    }

    fn naive(l: &Linear, x: &[f32], rows: usize) -> Vec<f32> {
        let mut y = vec![0f32; rows * l.out];
        for r in 0..rows {
            for o in 0..l.out {
                let mut s = l.bias[o] as f64;
                for i in 0..l.inp {
                    s += x[r * l.inp + i] as f64 * l.weight_at(o, i).to_f64();
                }
                y[r * l.out + o] = s as f32;
            }
        }
        y
    }

    /// Every tile shape and remainder (rows past a block and not a multiple of 6, outputs not a
    /// multiple of a panel) agrees with a plain f64 loop, on the fast kernel and the portable one.
    #[test]
    fn the_kernels_agree_with_a_plain_loop() {
        let mut r = Numbers(7);
        for (inp, out, rows) in [
            (16, 7, 5),
            (384, 1152, 12),
            (40, 3, 1),
            (24, 8, 9),
            (12, 40, 31),
            (5, 17, 3),
            (7, 9, 2),
            (33, 20, 14),
            (64, 16, 15),
        ] {
            let w = r.take(inp * out);
            let l = Linear::new(&w, r.take(out), inp).unwrap();
            let x = r.take(rows * inp);
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

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_block_is_the_fewest_even_tiles() {
        let tile_rows = |rows| super::avx2::even_parts(rows, TILE_ROWS).collect::<Vec<_>>();
        assert_eq!(tile_rows(15), vec![5, 5, 5]);
        assert_eq!(tile_rows(13), vec![5, 4, 4]);
        assert_eq!(tile_rows(12), vec![6, 6]);
        assert_eq!(tile_rows(1), vec![1]);
        assert_eq!(tile_rows(0), Vec::<usize>::new());
        for rows in 1..=24 {
            let t = tile_rows(rows);
            assert_eq!(t.iter().sum::<usize>(), rows);
            assert_eq!(t.len(), rows.div_ceil(6));
            assert!(t.iter().all(|&r| (1..=6).contains(&r)));
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
