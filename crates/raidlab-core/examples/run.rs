//! `cargo run --release --example run -- CONFIG.toml`: run a config, print the summary JSON.
fn main() {
    let path = std::env::args().nth(1).expect("usage: run CONFIG.toml");
    let text = std::fs::read_to_string(&path).expect("readable config");
    let base = std::path::Path::new(&path).parent().unwrap_or(std::path::Path::new("."));
    match raidlab_core::api::run_toml(&text, base, None) {
        Ok(out) => println!("{}", serde_json::to_string_pretty(&out.summary).unwrap()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
