//! The crate's top-level modules import one another without a circle: a module that imports
//! another is never imported back by it, directly or through others. The imports are read from
//! the source (every `crate::NAME` outside comments and test modules), not from the compiler.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// For each top-level module, the top-level modules its code names.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let tops: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|name| name != "lib")
        .collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let top = relative.iter().next().unwrap().to_string_lossy().trim_end_matches(".rs").to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        // Test modules may reach anywhere; comments name modules without importing them.
        let code = text.split("#[cfg(test)]").next().unwrap();
        for line in code.lines() {
            let line = line.split("//").next().unwrap();
            for (at, _) in line.match_indices("crate::") {
                let name: String = line[at + 7..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if name != top && tops.contains(&name) {
                    graph.entry(top.clone()).or_default().insert(name);
                }
            }
        }
    }
    graph
}

/// Whether `to` is reachable from `from`.
fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let (mut seen, mut stack) = (BTreeSet::new(), vec![from.to_string()]);
    while let Some(node) = stack.pop() {
        for next in graph.get(&node).into_iter().flatten() {
            if next == to {
                return true;
            }
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    false
}

#[test]
fn the_top_level_modules_import_one_another_without_a_circle() {
    let graph = module_graph();
    assert!(graph.get("engine").is_some_and(|e| e.contains("array")), "the graph was not read: {graph:?}");
    let mut circles = Vec::new();
    for (module, imports) in &graph {
        for other in imports {
            if reaches(&graph, other, module) {
                circles.push(format!("{module} -> {other}"));
            }
        }
    }
    assert!(circles.is_empty(), "imports on a circle: {}", circles.join(", "));
}
