//! [`Linear`]: a dense layer `y = x·Wᵀ + b` for the CPU BERT forward ([`crate::forward`]), in one
//! of two [`Kernel`]s, chosen per CPU at load:
//!
//! | kernel | weights | arithmetic | fast path | file |
//! |---|---|---|---|---|
//! | [`Kernel::Int8`] | 8-bit per output | 8-bit inputs per row, 32-bit sums | AVX-512 VNNI | [`crate::dense_int8`] |
//! | [`Kernel::F16`] | f16 | f32 | AVX2/FMA/F16C | [`crate::dense_f16`] |
//!
//! Each has a portable loop for other CPUs. [`Kernel::best`] takes the integer kernel where it runs
//! natively: four times the multiply-adds a second on this machine, its sentence vectors at a
//! cosine of 0.996 or more to the f16 kernel's (docs/decisions.md, "Dense layers in 8-bit
//! integers").

use crate::dense_f16::F16Weights;
use crate::dense_int8::Int8Weights;

/// How a layer's weights are stored and multiplied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// f16 weights, f32 arithmetic.
    F16,
    /// 8-bit integer weights and inputs, 32-bit integer sums.
    Int8,
}

impl Kernel {
    /// The integer kernel where the CPU runs it natively (AVX-512 VNNI), else f16.
    pub fn best() -> Self {
        if crate::dense_int8::native() { Kernel::Int8 } else { Kernel::F16 }
    }

    /// The kernel's name, as status and logs show it.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::F16 => "f16",
            Kernel::Int8 => "int8",
        }
    }
}

/// A dense layer: `out` outputs from `inp` inputs (each kernel keeps the biases as it reads them).
pub struct Linear {
    weights: Weights,
    inp: usize,
    out: usize,
}

enum Weights {
    F16(F16Weights),
    Int8(Int8Weights),
}

impl std::fmt::Debug for Linear {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Linear({} -> {}, {})", self.inp, self.out, self.kernel().name())
    }
}

impl Linear {
    /// A layer from a `[out][inp]` weight and `out` biases for `kernel` (its portable loop where the
    /// CPU lacks the fast one); None when the sizes disagree.
    pub fn with_kernel(weight: &[f32], bias: Vec<f32>, inp: usize, kernel: Kernel) -> Option<Self> {
        let out = bias.len();
        if inp == 0 || weight.len() != out * inp {
            return None;
        }
        let weights = match kernel {
            Kernel::F16 => Weights::F16(F16Weights::new(weight, bias, inp)),
            Kernel::Int8 => Weights::Int8(Int8Weights::new(weight, &bias, inp)),
        };
        Some(Self { weights, inp, out })
    }

    pub fn kernel(&self) -> Kernel {
        match self.weights {
            Weights::F16(_) => Kernel::F16,
            Weights::Int8(_) => Kernel::Int8,
        }
    }

    /// The weight of output `o` from input `k`, as stored.
    #[cfg(test)]
    fn weight_at(&self, o: usize, k: usize) -> f32 {
        match &self.weights {
            Weights::F16(w) => w.weight_at(o, k),
            Weights::Int8(w) => w.weight_at(o, k),
        }
    }

    /// `rows` input rows (`x`, `rows × inp`) → `rows × out` outputs, replacing `y`'s contents.
    pub fn forward(&self, x: &[f32], rows: usize, y: &mut Vec<f32>) {
        assert_eq!(x.len(), rows * self.inp, "input of the wrong size");
        y.clear();
        y.resize(rows * self.out, 0.0);
        match &self.weights {
            Weights::F16(w) => w.forward(x, rows, y),
            Weights::Int8(w) => w.forward(x, rows, y),
        }
    }

    #[cfg(test)]
    fn forward_portable(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        match &self.weights {
            Weights::F16(w) => w.forward_portable(x, rows, y),
            Weights::Int8(w) => w.forward_portable(x, rows, y),
        }
    }
}

/// The register tiles of a blocked kernel (both kernels), in the order they run: the rows in
/// blocks of at most `row_block`, each block walking all `panels` panels (so a panel's weights are
/// read once per block), a block's rows cut into tiles of at most `tile_rows`. Yields each tile's
/// first row, panel and height.
pub(crate) fn tiles(rows: usize, row_block: usize, tile_rows: usize, panels: usize) -> impl Iterator<Item = (usize, usize, usize)> {
    let blocks = even_parts(rows, row_block).scan(0, |next, block| {
        let first = *next;
        *next += block;
        Some((first, block))
    });
    blocks.flat_map(move |(first, block)| {
        (0..panels).flat_map(move |p| {
            even_parts(block, tile_rows).scan(first, move |next, height| {
                let row = *next;
                *next += height;
                Some((row, p, height))
            })
        })
    })
}

/// `n` split into the fewest parts of at most `max`, their sizes differing by one at most: the
/// blocks of the rows, and the tiles of a block.
pub(crate) fn even_parts(n: usize, max: usize) -> impl Iterator<Item = usize> {
    let parts = n.div_ceil(max);
    (0..parts).map(move |t| n / parts + usize::from(t < n % parts))
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

    /// `x·Wᵀ + b` in f64 over the weights as stored.
    fn naive(l: &Linear, bias: &[f32], x: &[f32], rows: usize) -> Vec<f32> {
        let mut y = vec![0f32; rows * l.out];
        for r in 0..rows {
            for o in 0..l.out {
                let mut s = bias[o] as f64;
                for i in 0..l.inp {
                    s += x[r * l.inp + i] as f64 * l.weight_at(o, i) as f64;
                }
                y[r * l.out + o] = s as f32;
            }
        }
        y
    }

    /// Sizes covering every tile shape and remainder: rows past a block and not a multiple of 6,
    /// outputs not a multiple of a panel, inputs not a multiple of 4.
    const SHAPES: [(usize, usize, usize); 10] = [
        (16, 7, 5),
        (384, 1152, 12),
        (40, 3, 1),
        (24, 8, 9),
        (12, 40, 31),
        (5, 17, 3),
        (7, 9, 2),
        (33, 20, 14),
        (64, 16, 15),
        (1536, 48, 25),
    ];

    /// The f16 kernel, fast and portable, agrees with a plain f64 loop.
    #[test]
    fn the_f16_kernels_agree_with_a_plain_loop() {
        let mut r = Numbers(7);
        for (inp, out, rows) in SHAPES {
            let (w, bias) = (r.take(inp * out), r.take(out));
            let l = Linear::with_kernel(&w, bias.clone(), inp, Kernel::F16).unwrap();
            let x = r.take(rows * inp);
            let want = naive(&l, &bias, &x, rows);
            let mut fast = Vec::new();
            l.forward(&x, rows, &mut fast);
            let mut portable = vec![0f32; rows * out];
            l.forward_portable(&x, rows, &mut portable);
            for (i, w) in want.iter().enumerate() {
                assert!((fast[i] - w).abs() < 2e-4, "fast {inp}x{out} at {i}: {} vs {w}", fast[i]);
                assert!((portable[i] - w).abs() < 2e-4, "portable {inp}x{out} at {i}");
            }
        }
    }

    /// The integer kernel gives the portable loop's figures bit for bit, and both are within the
    /// rounding of 8-bit weights and inputs of the exact product: for each output, half a step of
    /// the inputs times Σ|w|, plus half a step of the weights times Σ|x|, plus their product.
    #[test]
    fn the_int8_kernels_agree_with_each_other_and_within_their_rounding() {
        let mut r = Numbers(9);
        for (inp, out, rows) in SHAPES {
            let mut w = r.take(inp * out);
            // One large weight and one large input, as real layers have: the scales follow them.
            w[0] = 3.0;
            let bias = r.take(out);
            let l = Linear::with_kernel(&w, bias.clone(), inp, Kernel::Int8).unwrap();
            let mut x = r.take(rows * inp);
            x[inp / 2] = -4.0;
            let mut fast = Vec::new();
            l.forward(&x, rows, &mut fast);
            let mut portable = vec![0f32; rows * out];
            l.forward_portable(&x, rows, &mut portable);
            assert_eq!(fast, portable, "{inp}x{out}x{rows}: the vector kernel and the loop differ");
            for row in 0..rows {
                let xr = &x[row * inp..(row + 1) * inp];
                let sx = xr.iter().fold(0f32, |m, v| m.max(v.abs())) as f64 / 127.0;
                for o in 0..out {
                    let wo = &w[o * inp..(o + 1) * inp];
                    let sw = wo.iter().fold(0f32, |m, v| m.max(v.abs())) as f64 / 127.0;
                    let exact: f64 = bias[o] as f64 + xr.iter().zip(wo).map(|(a, b)| *a as f64 * *b as f64).sum::<f64>();
                    let sum_w: f64 = wo.iter().map(|v| v.abs() as f64).sum();
                    let sum_x: f64 = xr.iter().map(|v| v.abs() as f64).sum();
                    let bound = 0.5 * sx * sum_w + 0.5 * sw * sum_x + 0.25 * sx * sw * inp as f64 + 1e-4;
                    let got = fast[row * out + o] as f64;
                    assert!(
                        (got - exact).abs() <= bound,
                        "{inp}x{out} row {row} out {o}: {got} vs {exact} (bound {bound})"
                    );
                }
            }
        }
    }

    /// Rows of zeros (a scale of 0) give the biases, not NaN.
    #[test]
    fn zero_inputs_give_the_biases() {
        for kernel in [Kernel::F16, Kernel::Int8] {
            let l = Linear::with_kernel(&[0.5; 12], vec![1.0, -2.0, 0.25], 4, kernel).unwrap();
            let mut y = Vec::new();
            l.forward(&[0.0; 8], 2, &mut y);
            assert_eq!(y, vec![1.0, -2.0, 0.25, 1.0, -2.0, 0.25], "{kernel:?}");
        }
    }

    #[test]
    fn a_block_is_the_fewest_even_tiles() {
        let tile_rows = |rows| even_parts(rows, 6).collect::<Vec<_>>();
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

    /// Every row meets every panel once, in tiles of at most the tile height.
    #[test]
    fn the_tiles_cover_each_row_of_each_panel_once() {
        for (rows, panels) in [(0, 3), (1, 2), (25, 3), (48, 1), (53, 4)] {
            let mut seen = vec![0u8; rows * panels];
            for (row, p, height) in tiles(rows, 24, 6, panels) {
                assert!((1..=6).contains(&height), "{rows} rows: a tile of {height}");
                for r in row..row + height {
                    seen[r * panels + p] += 1;
                }
            }
            assert!(seen.iter().all(|&n| n == 1), "{rows} rows × {panels} panels: {seen:?}");
        }
    }

    #[test]
    fn mismatched_sizes_are_refused() {
        for kernel in [Kernel::F16, Kernel::Int8] {
            assert!(Linear::with_kernel(&[0.0; 10], vec![0.0; 3], 4, kernel).is_none());
            assert!(Linear::with_kernel(&[], vec![], 0, kernel).is_none());
        }
    }
}
