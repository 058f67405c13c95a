fn main() {
    println!("cargo:rerun-if-changed=sqlite-vec.c");
    println!("cargo:rerun-if-changed=build.rs");
    // memd: upstream C, built quietly (its own warnings are not ours to fix).
    cc::Build::new().file("sqlite-vec.c").define("SQLITE_CORE", None).warnings(false).compile("sqlite_vec0");
}
