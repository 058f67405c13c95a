//! The forward pass alone: p50 / p10 of `hidden_states` on fixed token ids of 8 to 128 tokens, one
//! thread, weights warm, on each dense kernel the CPU runs natively (the integer one first where it
//! does) (a guide to the kernel; the search figures come from memd's
//! `cargo bench --bench hybrid`). Needs the model: `MEMD_TEST_MODEL_DIR=<dir> cargo bench -p memd-bert`.

use std::time::Instant;

fn main() {
    let Some(dir) = std::env::var_os("MEMD_TEST_MODEL_DIR") else {
        eprintln!("skipped: MEMD_TEST_MODEL_DIR is not set");
        return;
    };
    let mut kernels = vec![memd_bert::Kernel::best()];
    if kernels[0] != memd_bert::Kernel::F16 {
        kernels.push(memd_bert::Kernel::F16);
    }
    for kernel in kernels {
        let started = Instant::now();
        let w = memd_bert::BertWeights::load_with(std::path::Path::new(&dir), kernel).expect("model");
        println!("{} kernel: load {:.0} ms", kernel.name(), started.elapsed().as_secs_f64() * 1e3);
        run(&w);
    }
}

fn run(w: &memd_bert::BertWeights) {
    for n in [8usize, 12, 24, 64, 128] {
        // [CLS], n - 2 ordinary word pieces, [SEP].
        let ids: Vec<u32> = std::iter::once(101)
            .chain((0..n - 2).map(|i| 2000 + i as u32 * 37))
            .chain(std::iter::once(102))
            .collect();
        let mut times: Vec<f64> = (0..if n > 64 { 30 } else { 100 })
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(memd_bert::hidden_states(w, &ids).expect("forward"));
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let p50 = times[times.len() / 2];
        // ≈ 2 × 10.6 M multiply-adds per token for all-MiniLM-L6-v2's dense layers.
        let gflops = 2.0 * n as f64 * 10.6e6 / (p50 / 1e3) / 1e9;
        println!(
            "{n:>3} tokens: p50 {p50:.2} ms, p10 {:.2} ms ({gflops:.0} GFLOP/s)",
            times[times.len() / 10]
        );
    }
}
