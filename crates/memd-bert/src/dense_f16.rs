//! The dense layer's f16 kernel ([`crate::dense::Kernel::F16`]): weights in half precision, the
//! arithmetic in f32.
//!
//! A short text's forward pass is bound by reading the weights from memory, and half the bytes
//! take half the time. They are packed once, at load, in panels of 16 outputs: for each input `k`,
//! the 16 weights of the panel's outputs side by side. The AVX2/FMA/F16C kernel (chosen at run
//! time) keeps a tile of up to 6 input rows × 16 outputs in registers and walks `k`, one broadcast
//! input times two vectors of weights per row — no horizontal sums, nothing packed or allocated
//! per call. Rows go in blocks of 24, each block reading every panel once: for the dozen tokens of
//! a search query the weights are read from memory once per layer. Blocks, and the tiles of a
//! block, are the fewest and most even the rows allow (each tile walks the whole panel). Other
//! CPUs run the portable loop.

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

/// A layer's weights for the f16 kernel: `out` outputs from `inp` inputs.
pub(crate) struct F16Weights {
    /// `[panel][inp][16]`, f16, the last panel padded with zeros.
    packed: Vec<f16>,
    bias: Vec<f32>,
    inp: usize,
    out: usize,
}

impl F16Weights {
    /// Packs a `[out][inp]` weight and its `out` biases (sizes checked by the caller).
    pub(crate) fn new(weight: &[f32], bias: Vec<f32>, inp: usize) -> Self {
        let out = bias.len();
        let panels = out.div_ceil(PANEL);
        let mut packed = vec![f16::ZERO; panels * inp * PANEL];
        for (o, row) in weight.chunks_exact(inp).enumerate() {
            let (p, j) = (o / PANEL, o % PANEL);
            for (k, w) in row.iter().enumerate() {
                packed[(p * inp + k) * PANEL + j] = f16::from_f32(*w);
            }
        }
        Self { packed, bias, inp, out }
    }

    /// The weight of output `o` from input `k`, as stored.
    #[cfg(test)]
    pub(crate) fn weight_at(&self, o: usize, k: usize) -> f32 {
        self.packed[((o / PANEL) * self.inp + k) * PANEL + o % PANEL].to_f32()
    }

    /// `y = x·Wᵀ + b` for `rows` rows; `x` is `rows × inp`, `y` already `rows × out`.
    pub(crate) fn forward(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") && std::is_x86_feature_detected!("f16c") {
            // SAFETY: the CPU has AVX2, FMA and F16C (checked above); the caller sized `x` to
            // `rows × inp` and `y` to `rows × out`, which is all the kernel reads and writes.
            unsafe { avx2::forward(self, x, rows, y) };
            return;
        }
        self.forward_portable(x, rows, y);
    }

    pub(crate) fn forward_portable(&self, x: &[f32], rows: usize, y: &mut [f32]) {
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
    use super::{F16Weights, PANEL, ROW_BLOCK, TILE_ROWS};
    use crate::dense::tiles;
    use std::arch::x86_64::*;

    /// The blocked kernel. Safety: AVX2, FMA and F16C present, `x.len() == rows × inp`,
    /// `y.len() == rows × out`.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) unsafe fn forward(l: &F16Weights, x: &[f32], rows: usize, y: &mut [f32]) {
        for (r, p, height) in tiles(rows, ROW_BLOCK, TILE_ROWS, l.out.div_ceil(PANEL)) {
            // SAFETY: rows r..r + height lie within `rows` (the tiles of a block sum to its rows).
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
        }
    }

    /// Panel `p`'s outputs of input rows `r..r + R`.
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn tile<const R: usize>(l: &F16Weights, x: &[f32], r: usize, p: usize, y: &mut [f32]) {
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
