//! Self-attention for [`crate::forward`]: scaled dot-product attention of every head, its
//! softmax (a vectorising `eˣ`), and the lane-wise sums and maxima the layer norms use too. All
//! `#[inline(always)]`, so that they compile inside the forward pass's AVX2 copy.

/// Scaled dot-product self-attention of every head: `qkv` rows are `[q | k | v]` (`3 × hidden`),
/// `ctx` gets `n × hidden`. Each head's keys are first laid out transposed (`d × n`), so a query's
/// scores are `d` multiply-adds over 64 keys at a time held in registers ([`scores_of`]), instead
/// of `n` short dot products each ending in a horizontal sum.
#[inline(always)]
pub(crate) fn attention(qkv: &[f32], n: usize, h: usize, heads: usize, ctx: &mut [f32]) {
    let d = h / heads;
    let scale = 1.0 / (d as f32).sqrt();
    let stride = 3 * h;
    let (mut scores, mut scores2, mut keys, mut q) = (vec![0f32; n], vec![0f32; n], vec![0f32; d * n], vec![0f32; d]);
    for head in 0..heads {
        let off = head * d;
        for j in 0..n {
            for (c, k) in qkv[j * stride + h + off..j * stride + h + off + d].iter().enumerate() {
                keys[c * n + j] = *k;
            }
        }
        let values = |j: usize| &qkv[j * stride + 2 * h + off..j * stride + 2 * h + off + d];
        let query = |i: usize| &qkv[i * stride + off..i * stride + off + d];
        let mut i = 0;
        while i < n {
            if d == 32 && i + 1 < n {
                // MiniLM's heads, two queries at a time: two independent sets of four registers,
                // each row of values read once for both.
                probabilities(query(i), scale, &keys, n, &mut q, &mut scores);
                probabilities(query(i + 1), scale, &keys, n, &mut q, &mut scores2);
                let (first, second) = ctx[i * h..(i + 2) * h].split_at_mut(h);
                weighted_sums::<32>(&scores, &scores2, values, &mut first[off..off + d], &mut second[off..off + d]);
                i += 2;
                continue;
            }
            probabilities(query(i), scale, &keys, n, &mut q, &mut scores);
            let out = &mut ctx[i * h + off..i * h + off + d];
            out.fill(0.0);
            for (j, p) in scores.iter().enumerate() {
                out.iter_mut().zip(values(j)).for_each(|(o, v)| *o = p.mul_add(*v, *o));
            }
            i += 1;
        }
    }
}

/// A query's attention weights over the `n` keys: its scores ([`scores_of`], the query scaled
/// into `q` first), then their softmax, into `scores`.
#[inline(always)]
fn probabilities(query: &[f32], scale: f32, keys: &[f32], n: usize, q: &mut [f32], scores: &mut [f32]) {
    for (qs, qv) in q.iter_mut().zip(query) {
        *qs = qv * scale;
    }
    scores_of(q, keys, n, scores);
    softmax(scores);
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

/// `a = Σⱼ pⱼ · values(j)` and `b = Σⱼ p′ⱼ · values(j)` for `D`-wide rows, both sums held in
/// local arrays (registers): two independent chains of multiply-adds per lane, where one query
/// alone waits on its chain's latency. Each sum runs in `j` order, as one query's would.
#[inline(always)]
fn weighted_sums<'a, const D: usize>(p: &[f32], p2: &[f32], values: impl Fn(usize) -> &'a [f32], a: &mut [f32], b: &mut [f32]) {
    let (mut acc, mut acc2) = ([0f32; D], [0f32; D]);
    for (j, (pj, pj2)) in p.iter().zip(p2).enumerate() {
        let v: &[f32; D] = values(j).try_into().expect("a head's width");
        for c in 0..D {
            acc[c] = pj.mul_add(v[c], acc[c]);
            acc2[c] = pj2.mul_add(v[c], acc2[c]);
        }
    }
    a.copy_from_slice(&acc);
    b.copy_from_slice(&acc2);
}

/// Lanes of the partial sums and maxima below: a float sum in one chain neither vectorises nor
/// overlaps its additions.
const LANES: usize = 16;

/// `Σ x`, in [`LANES`] partial sums.
#[inline(always)]
pub(crate) fn sum_of(x: &[f32]) -> f32 {
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
pub(crate) fn squares_about(x: &[f32], mean: f32) -> f32 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dense::tests::Numbers;

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

    /// The two weighted sums of values equal plain ones.
    #[test]
    fn weighted_sums_equal_plain_ones() {
        let mut r = Numbers(4);
        for n in [1, 2, 7, 12] {
            let (p, p2, v) = (r.take(n), r.take(n), r.take(32 * n));
            let (mut a, mut b) = (vec![0f32; 32], vec![0f32; 32]);
            weighted_sums::<32>(&p, &p2, |j| &v[j * 32..(j + 1) * 32], &mut a, &mut b);
            for c in 0..32 {
                let want: f32 = (0..n).map(|j| p[j] * v[j * 32 + c]).sum();
                let want2: f32 = (0..n).map(|j| p2[j] * v[j * 32 + c]).sum();
                assert!((a[c] - want).abs() < 1e-5 && (b[c] - want2).abs() < 1e-5, "n {n} lane {c}");
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
