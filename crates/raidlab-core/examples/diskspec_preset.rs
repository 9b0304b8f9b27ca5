//! `cargo run -p raidlab-core --example diskspec_preset -- NAME PATH/NAME.parv`: print the Rust
//! source of a built-in drive converted from a DiskSim parameter file (see
//! `src/disk/presets/disksim.rs`); redirect it to `src/disk/presets/<name>.rs`.
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name, path] = args.as_slice() else {
        eprintln!("usage: diskspec_preset NAME PATH.parv");
        std::process::exit(2);
    };
    let path = Path::new(path);
    let spec = raidlab_core::disk::diskspec::load(path).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1)
    });
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("?");
    match raidlab_core::disk::presets::disksim::preset_source(&spec, name, file) {
        Ok(source) => print!("{source}"),
        Err(e) => {
            eprintln!("error: cannot hold this drive as constants: {e}");
            std::process::exit(1);
        }
    }
}
