//! The dense layer's 8-bit integer kernel ([`crate::dense::Kernel::Int8`]), for CPUs with AVX-512
//! VNNI: `vpdpbusd` multiplies 64 unsigned bytes by 64 signed bytes and adds each four products
//! into a 32-bit sum, four times the multiply-adds an f32 FMA gives on this machine's Zen 4
//! (docs/decisions.md, "Dense layers in 8-bit integers").
//!
//! - **Weights**, at load: symmetric per output, `q = round(w / s)` with `s = max|w| / 127`.
//! - **Inputs**, at each call: per row over its range (zero included), `u = round(x / s) + z`
//!   with `s = (max − min) / 255` and the zero point `z = round(−min / s)`, unsigned because the
//!   instruction takes its first operand so. Each output's sum then holds `z · Σ q_w` too, which
//!   is subtracted in integers (exactly): `y = s · s_w · (Σ u·q_w − z · Σ q_w) + b`. The full
//!   range of a row, not ±max, is what the bytes cover: the GELU outputs the last layer of a block
//!   reads are ≥ −0.17, and a symmetric scale spent half its steps on values that never occur (the
//!   vectors' mean cosine to the f16 kernel's went from 0.9971 to 0.9984 with the zero point).
//! - **Layout**: panels of 32 outputs; for each group of 4 inputs, the 32 outputs' 4 weights side
//!   by side (two 64-byte vectors). Inputs are padded with zeros to a multiple of 4. A tile of up
//!   to 6 rows × 32 outputs stays in registers while it walks the panel, one broadcast of a row's
//!   4 bytes times two vectors of weights per row; rows go in blocks of 24 as in the f16 kernel.
//!
//! The portable loop computes the same integers and the same f32 epilogue (one `mul_add`), so the
//! two give the same figures bit for bit (tested); it also runs this kernel on other CPUs, slowly.

/// Outputs per panel (two 512-bit vectors of 32-bit sums).
const PANEL: usize = 32;
/// Inputs per 32-bit lane of `vpdpbusd`.
const QUAD: usize = 4;
/// Input rows per block (the weights are streamed once per block).
const ROW_BLOCK: usize = 24;
/// Input rows per register tile at most (12 accumulators, against the instruction's latency).
const TILE_ROWS: usize = 6;

/// Whether this CPU runs the integer kernel natively (AVX-512 F, BW, VL and VNNI).
pub(crate) fn native() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A layer's weights for the integer kernel: `out` outputs from `inp` inputs.
pub(crate) struct Int8Weights {
    /// `[panel][quad][32][4]`, the last panel's missing outputs and the padded inputs zero.
    q: Vec<i8>,
    /// Per output (padded to whole panels): the weight scale `s_w`.
    scale: Vec<f32>,
    /// Per output (padded): `Σ q_w`, which a row's zero point `z` times adds to its sum.
    sums: Vec<i32>,
    /// Per output (padded): the bias.
    bias: Vec<f32>,
    inp: usize,
    out: usize,
    quads: usize,
}

impl Int8Weights {
    /// Quantizes and packs a `[out][inp]` weight and its `out` biases (sizes checked by the caller).
    pub(crate) fn new(weight: &[f32], bias: &[f32], inp: usize) -> Self {
        let out = bias.len();
        let (panels, quads) = (out.div_ceil(PANEL), inp.div_ceil(QUAD));
        let mut q = vec![0i8; panels * quads * PANEL * QUAD];
        let (mut scale, mut sums, mut padded_bias) = (vec![1f32; panels * PANEL], vec![0i32; panels * PANEL], vec![0f32; panels * PANEL]);
        for (o, row) in weight.chunks_exact(inp).enumerate() {
            let max = row.iter().fold(0f32, |m, w| m.max(w.abs()));
            let s = if max > 0.0 { max / 127.0 } else { 1.0 };
            let (p, j) = (o / PANEL, o % PANEL);
            let mut sum = 0i32;
            for (k, w) in row.iter().enumerate() {
                let v = (w / s).round().clamp(-127.0, 127.0) as i8;
                q[((p * quads + k / QUAD) * PANEL + j) * QUAD + k % QUAD] = v;
                sum += i32::from(v);
            }
            (scale[o], sums[o], padded_bias[o]) = (s, sum, bias[o]);
        }
        Self {
            q,
            scale,
            sums,
            bias: padded_bias,
            inp,
            out,
            quads,
        }
    }

    /// The weight of output `o` from input `k`, as stored (dequantized).
    #[cfg(test)]
    pub(crate) fn weight_at(&self, o: usize, k: usize) -> f32 {
        let (p, j) = (o / PANEL, o % PANEL);
        f32::from(self.q[((p * self.quads + k / QUAD) * PANEL + j) * QUAD + k % QUAD]) * self.scale[o]
    }

    /// `y = x·Wᵀ + b` for `rows` rows; `x` is `rows × inp`, `y` already `rows × out`.
    pub(crate) fn forward(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if native() {
            // SAFETY: the CPU has AVX-512 F, BW, VL and VNNI (checked above); the caller sized `x` to
            // `rows × inp` and `y` to `rows × out`, which is all the kernel reads and writes.
            unsafe { vnni::forward(self, x, rows, y) };
            return;
        }
        self.forward_portable(x, rows, y);
    }

    pub(crate) fn forward_portable(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        let width = self.quads * QUAD;
        let (mut bytes, mut scales) = (vec![0u8; rows * width], vec![(0f32, 0i32); rows]);
        for r in 0..rows {
            scales[r] = quantize_row(&x[r * self.inp..(r + 1) * self.inp], &mut bytes[r * width..(r + 1) * width]);
        }
        for r in 0..rows {
            let (sx, z) = scales[r];
            let u = &bytes[r * width..(r + 1) * width];
            for o in 0..self.out {
                let (p, j) = (o / PANEL, o % PANEL);
                let mut sum = 0i32;
                for (qd, four) in u.chunks_exact(QUAD).enumerate() {
                    let at = ((p * self.quads + qd) * PANEL + j) * QUAD;
                    for (t, b) in four.iter().enumerate() {
                        sum += i32::from(*b) * i32::from(self.q[at + t]);
                    }
                }
                let sc = self.scale[o] * sx;
                y[r * self.out + o] = ((sum - z * self.sums[o]) as f32).mul_add(sc, self.bias[o]);
            }
        }
    }
}

/// One row's inputs as unsigned bytes `u = round(x / s) + z` over the row's range (zero
/// included), and its scale `s` and zero point `z`: the same arithmetic as the vector quantizer
/// (`x · (255 / (max − min))` rounded half to even).
fn quantize_row(x: &[f32], out: &mut [u8]) -> (f32, i32) {
    let (lo, hi) = x.iter().fold((0f32, 0f32), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    let (s, inv) = scale_of(lo, hi);
    let z = (-lo * inv).round_ties_even() as i32;
    for (o, v) in out.iter_mut().zip(x) {
        *o = ((v * inv).round_ties_even() as i32 + z).clamp(0, 255) as u8;
    }
    (s, z)
}

/// The step and its inverse for a row whose values span `lo..=hi` (`lo ≤ 0 ≤ hi`).
fn scale_of(lo: f32, hi: f32) -> (f32, f32) {
    let range = hi - lo;
    if range > 0.0 { (range / 255.0, 255.0 / range) } else { (1.0, 1.0) }
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use super::{Int8Weights, PANEL, QUAD, ROW_BLOCK, TILE_ROWS};
    use crate::dense::tiles;
    use std::arch::x86_64::*;

    /// The blocked kernel. Safety: AVX-512 F, BW, VL and VNNI present, `x.len() == rows × inp`,
    /// `y.len() == rows × out`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni")]
    pub(super) unsafe fn forward(l: &Int8Weights, x: &[f32], rows: usize, y: &mut [f32]) {
        let width = l.quads * QUAD;
        let (mut bytes, mut scales) = (vec![0u8; rows * width], vec![(0f32, 0i32); rows]);
        for r in 0..rows {
            scales[r] = quantize_row(&x[r * l.inp..(r + 1) * l.inp], &mut bytes[r * width..(r + 1) * width]);
        }
        for (r, p, height) in tiles(rows, ROW_BLOCK, TILE_ROWS, l.out.div_ceil(PANEL)) {
            // SAFETY: rows r..r + height lie within `rows` (the tiles of a block sum to its rows).
            unsafe {
                match height {
                    6 => tile::<6>(l, &bytes, &scales, r, p, y),
                    5 => tile::<5>(l, &bytes, &scales, r, p, y),
                    4 => tile::<4>(l, &bytes, &scales, r, p, y),
                    3 => tile::<3>(l, &bytes, &scales, r, p, y),
                    2 => tile::<2>(l, &bytes, &scales, r, p, y),
                    _ => tile::<1>(l, &bytes, &scales, r, p, y),
                }
            }
        }
    }

    /// [`super::quantize_row`] in 16-wide vectors (`vcvtps2dq` rounds half to even, as the
    /// portable `round_ties_even`).
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni")]
    fn quantize_row(x: &[f32], out: &mut [u8]) -> (f32, i32) {
        let (mut lov, mut hiv) = (_mm512_setzero_ps(), _mm512_setzero_ps());
        for c in x.chunks(16) {
            // SAFETY: the mask covers the chunk's own elements only (the rest read as 0).
            let v = unsafe { _mm512_maskz_loadu_ps(mask(c.len()), c.as_ptr()) };
            (lov, hiv) = (_mm512_min_ps(lov, v), _mm512_max_ps(hiv, v));
        }
        let (lo, hi) = (_mm512_reduce_min_ps(lov), _mm512_reduce_max_ps(hiv));
        let (s, inv) = super::scale_of(lo, hi);
        let z = (-lo * inv).round_ties_even() as i32;
        let (inv, zv, top) = (_mm512_set1_ps(inv), _mm512_set1_epi32(z), _mm512_set1_epi32(255));
        for (c, o) in x.chunks(16).zip(out.chunks_mut(16)) {
            let m = mask(c.len());
            // SAFETY: the mask covers the chunk's own elements, and `out` is at least as long as `x`.
            unsafe {
                let v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, c.as_ptr()), inv);
                let u = _mm512_add_epi32(_mm512_cvtps_epi32(v), zv);
                let u = _mm512_min_epi32(_mm512_max_epi32(u, _mm512_setzero_si512()), top);
                _mm_mask_storeu_epi8(o.as_mut_ptr().cast(), m, _mm512_cvtepi32_epi8(u));
            }
        }
        (s, z)
    }

    /// The lanes of a chunk of `n ≤ 16` elements.
    fn mask(n: usize) -> u16 {
        if n >= 16 { u16::MAX } else { (1u16 << n) - 1 }
    }

    /// Panel `p`'s outputs of rows `r..r + R` (their bytes in `u`, their scales in `sx`).
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni")]
    #[inline]
    unsafe fn tile<const R: usize>(l: &Int8Weights, u: &[u8], sx: &[(f32, i32)], r: usize, p: usize, y: &mut [f32]) {
        let quads = l.quads;
        let up = unsafe { u.as_ptr().add(r * quads * QUAD) };
        let wp: *const __m512i = unsafe { l.q.as_ptr().add(p * quads * PANEL * QUAD).cast() };
        let mut acc = [[_mm512_setzero_si512(); 2]; R];
        for i in 0..quads {
            let (w0, w1) = unsafe { (_mm512_loadu_si512(wp.add(2 * i)), _mm512_loadu_si512(wp.add(2 * i + 1))) };
            for (row, a) in acc.iter_mut().enumerate() {
                let four = unsafe { up.add((row * quads + i) * QUAD).cast::<i32>().read_unaligned() };
                let xv = _mm512_set1_epi32(four);
                a[0] = _mm512_dpbusd_epi32(a[0], xv, w0);
                a[1] = _mm512_dpbusd_epi32(a[1], xv, w1);
            }
        }
        let base = p * PANEL;
        for half in 0..2 {
            let at = base + 16 * half;
            let valid = l.out.saturating_sub(at).min(16);
            if valid == 0 {
                continue;
            }
            // SAFETY: scale, sums and bias are padded to whole panels.
            let (sw, sums, b) = unsafe {
                (
                    _mm512_loadu_ps(l.scale.as_ptr().add(at)),
                    _mm512_loadu_si512(l.sums.as_ptr().add(at).cast()),
                    _mm512_loadu_ps(l.bias.as_ptr().add(at)),
                )
            };
            for (row, a) in acc.iter().enumerate() {
                let (s, z) = sx[r + row];
                let sum = _mm512_cvtepi32_ps(_mm512_sub_epi32(a[half], _mm512_mullo_epi32(_mm512_set1_epi32(z), sums)));
                let v = _mm512_fmadd_ps(sum, _mm512_mul_ps(sw, _mm512_set1_ps(s)), b);
                let dst = &mut y[(r + row) * l.out + at..(r + row) * l.out + at + valid];
                // SAFETY: the mask covers `dst`'s `valid` elements only.
                unsafe { _mm512_mask_storeu_ps(dst.as_mut_ptr(), mask(valid), v) };
            }
        }
    }
}
