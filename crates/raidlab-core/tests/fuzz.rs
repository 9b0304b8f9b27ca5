//! Property-based fuzzing of everything that reads user input: every trace reader (through a
//! replay and through `trace info`), the DiskSim spec parser and converter, and the
//! configuration loader.
//!
//! Inputs are real samples (the shared traces, the DiskSim drive files, the experiment
//! configurations) mutated by a few edits each (bytes flipped, replaced, inserted or deleted;
//! lines repeated or dropped; numbers swapped for extreme ones), plus random bytes. The
//! property: none panics, and each ends in records or in an error of the kind that names
//! the input (`file:line` for a trace or a spec, a key for a configuration). A trace replay's
//! records also keep their invariants (times never decrease, every request inside the array).
//! Hangs and unbounded allocations would show as a test that does not finish: every reader
//! bounds its lines (1 MiB) and files, and the cases are small.
//!
//! The default run tries [`DEFAULT_CASES`] inputs per target; `RAIDLAB_LONG_TESTS=1` tries
//! [`LONG_CASES`] (about a minute per million on this machine class, two cores).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, TestRunner};
use raidlab_core::error::Error;
use raidlab_core::workload::trace::{self, FoldMode, TraceConfig, TraceSource};
use raidlab_core::Config;

/// Inputs per target in the default run.
const DEFAULT_CASES: u32 = 3_000;
/// Inputs per target with `RAIDLAB_LONG_TESTS=1`.
const LONG_CASES: u32 = 1_000_000;

fn cases() -> u32 {
    match std::env::var("RAIDLAB_LONG_TESTS") {
        Ok(flag) if flag == "1" => LONG_CASES,
        _ => DEFAULT_CASES,
    }
}

fn runner() -> TestRunner {
    // A fixed seed: a failure found here is found again on the next run.
    let config = ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() };
    let algorithm = config.rng_algorithm;
    TestRunner::new_with_rng(config, proptest::test_runner::TestRng::deterministic_rng(algorithm))
}

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// The first `lines` lines of a (possibly compressed) sample.
fn sample_lines(path: &Path, lines: usize) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = Vec::new();
    if raw.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut text).unwrap();
    } else if raw.starts_with(b"BZh") {
        bzip2::read::MultiBzDecoder::new(&raw[..]).read_to_end(&mut text).unwrap();
    } else {
        text = raw;
    }
    let mut out = Vec::new();
    for line in text.split_inclusive(|&b| b == b'\n').take(lines) {
        out.extend_from_slice(line);
    }
    out
}

/// A trace format's name, a sample of it, and its column mapping (CSV only).
struct TraceSample {
    format: &'static str,
    text: Vec<u8>,
    csv: Option<&'static str>,
}

fn trace_samples() -> &'static [TraceSample] {
    static SAMPLES: OnceLock<Vec<TraceSample>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let traces = shared().join("traces");
        let synthetic = |line: &dyn Fn(u64) -> String| (0..40).map(line).collect::<String>().into_bytes();
        vec![
            TraceSample { format: "msr", text: sample_lines(&traces.join("msr-cambridge1-sample.csv"), 40), csv: None },
            TraceSample { format: "systor", text: sample_lines(&traces.join("systor17-traces-sample.csv.gz"), 40), csv: None },
            TraceSample {
                format: "tencent",
                text: sample_lines(&traces.join("tencent-cbs-cloud_storage-sample.bz2"), 40),
                csv: None,
            },
            TraceSample { format: "validate", text: sample_lines(&shared().join("diskspecs/atlas10k.trace"), 40), csv: None },
            TraceSample {
                format: "spc",
                text: synthetic(&|i| format!("{},{},{},{},{}.{:06}\n", i % 3, 303_567 + 977 * i, 512 * (1 + i % 9), ["r", "w"][i as usize % 2], i / 7, i * 31)),
                csv: None,
            },
            TraceSample {
                format: "disksim",
                text: synthetic(&|i| format!("{}.{:03} 0 {} {} {:x}\n", i * 3, i % 1000, 55_590 + 61 * i, 1 + i % 16, i % 2)),
                csv: None,
            },
            TraceSample {
                format: "csv",
                text: synthetic(&|i| format!("{};{};{};{}\n", i as f64 * 0.25, 4096 * i, 4096 + 512 * (i % 5), ["R", "W"][i as usize % 2])),
                csv: Some("time_column = 0\noffset_column = 1\nsize_column = 2\nop_column = 3\ndelimiter = \";\"\nread_values = [\"R\"]\nwrite_values = [\"W\"]"),
            },
        ]
    })
}

/// One edit of a sample.
#[derive(Debug, Clone)]
enum Edit {
    Flip { at: usize, bit: u8 },
    Replace { at: usize, byte: u8 },
    Insert { at: usize, bytes: Vec<u8> },
    Delete { at: usize, len: usize },
    RepeatLine { at: usize, times: u8 },
    /// A digit run replaced by an extreme number.
    Number { at: usize, which: usize },
}

const EXTREMES: &[&str] = &[
    "0", "-1", "18446744073709551615", "18446744073709551616", "99999999999999999999999999", "1e308", "1e400",
    "NaN", "inf", "-0", "4294967296", "9223372036854775807", "0.0000000000001", "1.5", "",
];

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0..8u8).prop_map(|(at, bit)| Edit::Flip { at, bit }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Edit::Replace { at, byte }),
        (any::<usize>(), proptest::collection::vec(prop_oneof![Just(b','), Just(b'\n'), Just(b' '), Just(b'.'), any::<u8>()], 1..12))
            .prop_map(|(at, bytes)| Edit::Insert { at, bytes }),
        (any::<usize>(), 1..64usize).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), 1..5u8).prop_map(|(at, times)| Edit::RepeatLine { at, times }),
        (any::<usize>(), 0..EXTREMES.len()).prop_map(|(at, which)| Edit::Number { at, which }),
    ]
}

fn apply(text: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut out = text.to_vec();
    for edit in edits {
        let n = out.len().max(1);
        match edit {
            Edit::Flip { at, bit } => {
                if let Some(b) = out.get_mut(at % n) {
                    *b ^= 1 << bit;
                }
            }
            Edit::Replace { at, byte } => {
                if let Some(b) = out.get_mut(at % n) {
                    *b = *byte;
                }
            }
            Edit::Insert { at, bytes } => {
                let at = at % (out.len() + 1);
                out.splice(at..at, bytes.iter().copied());
            }
            Edit::Delete { at, len } => {
                let at = at % n;
                let end = (at + len).min(out.len());
                if at < end {
                    out.drain(at..end);
                }
            }
            Edit::RepeatLine { at, times } => {
                let lines: Vec<&[u8]> = out.split_inclusive(|&b| b == b'\n').collect();
                if lines.is_empty() {
                    continue;
                }
                let line = lines[at % lines.len()].to_vec();
                let mut repeated = out.clone();
                for _ in 0..*times {
                    repeated.extend_from_slice(&line);
                }
                out = repeated;
            }
            Edit::Number { at, which } => {
                let start = at % n;
                let Some(first) = out[start.min(out.len())..].iter().position(u8::is_ascii_digit) else { continue };
                let first = start + first;
                let end = first + out[first..].iter().take_while(|b| b.is_ascii_digit()).count();
                out.splice(first..end, EXTREMES[*which].bytes());
            }
        }
    }
    out
}

/// A trace input: a mutated sample of one format, or random bytes offered to it.
fn trace_input() -> impl Strategy<Value = (usize, Vec<u8>)> {
    let formats = trace_samples().len();
    prop_oneof![
        9 => (0..formats, proptest::collection::vec(edit(), 0..6))
            .prop_map(|(format, edits)| (format, apply(&trace_samples()[format].text, &edits))),
        1 => (0..formats, proptest::collection::vec(any::<u8>(), 0..300)),
    ]
}

/// The error names the trace: its file and a line, or a configuration key, or the file for an
/// I/O error.
fn names_the_trace(err: &Error, path: &Path) -> bool {
    match err {
        Error::Trace { file, line, .. } => file == path && *line >= 1,
        Error::Config { key, .. } => key.starts_with("workload.trace") || key.starts_with("trace"),
        Error::Io { file, .. } => file == path,
        _ => false,
    }
}

fn trace_config(path: &Path, sample: &TraceSample, auto: bool, fold: FoldMode) -> TraceConfig {
    let csv = sample.csv.map(|mapping| format!("\n[csv]\n{mapping}")).unwrap_or_default();
    let format = if auto && sample.csv.is_none() { "auto" } else { sample.format };
    let mut cfg: TraceConfig =
        toml::from_str(&format!("path = {:?}\nformat = \"{format}\"{csv}", path.display().to_string())).unwrap();
    cfg.fold = fold;
    cfg
}

/// A file of this thread's own, rewritten for each case.
fn scratch(name: &str) -> PathBuf {
    let thread = format!("{:?}", std::thread::current().id()).replace(|c: char| !c.is_ascii_alphanumeric(), "");
    std::env::temp_dir().join(format!("raidlab-fuzz-{}-{thread}-{name}", std::process::id()))
}

#[test]
fn trace_readers_end_in_records_or_an_error_naming_file_and_line() {
    let path = scratch("trace");
    let folds = [FoldMode::Modulo, FoldMode::Scale, FoldMode::Reject];
    runner()
        .run(&(trace_input(), any::<bool>(), 0..3usize, 1u64..(1 << 36)), |((format, bytes), auto, fold, capacity)| {
            std::fs::write(&path, &bytes).unwrap();
            let sample = &trace_samples()[format];
            let cfg = trace_config(&path, sample, auto, folds[fold]);
            // A replay: records in time order inside the array, or an error naming the trace.
            match TraceSource::open(&cfg, capacity, "workload.trace") {
                Ok(mut source) => {
                    let mut last = 0;
                    loop {
                        match source.next_record() {
                            Ok(Some(record)) => {
                                prop_assert!(record.arrival >= last, "time went back: {record:?}");
                                prop_assert!(record.lba + u64::from(record.sectors) <= capacity, "{record:?}");
                                prop_assert!(record.sectors >= 1);
                                last = record.arrival;
                            }
                            Ok(None) => break,
                            Err(err) => {
                                prop_assert!(names_the_trace(&err, &path), "{err}");
                                break;
                            }
                        }
                    }
                }
                Err(err) => prop_assert!(names_the_trace(&err, &path), "{err}"),
            }
            // trace info: the same.
            match trace::stats(&cfg) {
                Ok(stats) => {
                    prop_assert!((0.0..=1.0).contains(&stats.read_fraction));
                    prop_assert!(stats.locality_hot20.is_nan() || (0.0..=1.0 + 1e-9).contains(&stats.locality_hot20));
                }
                Err(err) => prop_assert!(names_the_trace(&err, &path), "{err}"),
            }
            Ok(())
        })
        .unwrap();
    let _ = std::fs::remove_file(&path);
}

/// The DiskSim files of the shared drives, each as (path, text).
fn spec_samples() -> &'static [(PathBuf, String)] {
    static SAMPLES: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let dir = shared().join("diskspecs");
        ["ibm18es.parv", "ibm18es.diskspecs", "atlas10k.diskspecs", "cheetah9LP.model", "hp_c2247a.diskspecs", "dec_rz26.parv"]
            .iter()
            .map(|name| {
                let path = dir.join(name);
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                (path, text)
            })
            .collect()
    })
}

#[test]
fn the_diskspec_parser_ends_in_a_drive_or_an_error_naming_file_and_line() {
    let samples = spec_samples();
    let input = prop_oneof![
        9 => (0..samples.len(), proptest::collection::vec(edit(), 0..6))
            .prop_map(|(i, edits)| (i, String::from_utf8_lossy(&apply(samples[i].1.as_bytes(), &edits)).into_owned())),
        1 => (0..samples.len(), "\\PC{0,300}"),
    ];
    runner()
        .run(&input, |(i, text)| {
            // Parsed as if it were the real file, so that its `source` lines find the others.
            let path = &samples[i].0;
            match raidlab_core::disk::diskspec::parser::parse_str(&text, path) {
                Ok(tree) => match raidlab_core::disk::diskspec::convert::convert(&tree, path) {
                    Ok(spec) => {
                        // What was accepted builds a drive, or says which parameter it cannot.
                        if let Err(err) = raidlab_core::disk::DriveModel::new(&spec.model, "drive.model") {
                            prop_assert!(matches!(err, Error::Config { .. } | Error::Spec { .. }), "{err}");
                        }
                    }
                    Err(err) => prop_assert!(matches!(err, Error::Spec { line, .. } if line >= 1) || matches!(err, Error::Io { .. }), "{err}"),
                },
                Err(err) => prop_assert!(matches!(err, Error::Spec { line, .. } if line >= 1) || matches!(err, Error::Io { .. }), "{err}"),
            }
            Ok(())
        })
        .unwrap();
}

/// The experiment configurations and the README's, as texts.
fn config_samples() -> &'static [String] {
    static SAMPLES: OnceLock<Vec<String>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let mut texts: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|e| e == "toml"))
            .map(|path| std::fs::read_to_string(path).unwrap())
            .collect();
        texts.sort();
        texts.push(
            "[array]\nlayout = \"raid1\"\ndrives = 4\n[workload]\nrequests = 10\n[workload.arrival]\nprocess = \"closed\"\noutstanding = 4\n\
             [[failures]]\ndrive = 1\nat_s = 2\n[rebuild]\nexecutor = \"sor\"\n"
                .to_string(),
        );
        texts
    })
}

#[test]
fn the_config_loader_ends_in_a_configuration_or_an_error_naming_a_key() {
    let samples = config_samples();
    let input = prop_oneof![
        9 => (0..samples.len(), proptest::collection::vec(edit(), 0..6))
            .prop_map(|(i, edits)| String::from_utf8_lossy(&apply(samples[i].as_bytes(), &edits)).into_owned()),
        1 => "\\PC{0,300}",
    ];
    runner()
        .run(&input, |text| {
            match Config::from_toml(&text, Path::new("/nonexistent-base")) {
                // Accepted: it resolves to a configuration that reads back as itself.
                Ok(config) => {
                    let resolved = config.to_toml();
                    let again = Config::from_toml(&resolved, Path::new("/nonexistent-base"));
                    prop_assert!(again.is_ok(), "{resolved}\n{:?}", again.err());
                }
                Err(err) => prop_assert!(matches!(&err, Error::Config { key, .. } if !key.is_empty()), "{err}"),
            }
            Ok(())
        })
        .unwrap();
}
