//! `raidlab._core`: the Python binding of `raidlab-core`.
//!
//! Conversions only — every decision is made in the core (simulation, validation) or in the
//! Python package (files, CLI, plots). Each function:
//!
//! 1. releases the GIL (`Python::detach`) while the core works; a run or bench re-attaches
//!    only to call the progress callback and to let Python handle Ctrl-C;
//! 2. runs the core under `catch_unwind`, so a panic in the core (a bug, or a `todo!()` stub)
//!    becomes `raidlab.exceptions.SimulationError` instead of killing or poisoning Python;
//! 3. maps every `raidlab_core::Error` variant to its own class in `raidlab.exceptions`.
//!
//! The typed signatures are in `python/raidlab/_core.pyi`; `tests/test_core_stub.py` checks
//! that the stub and this module agree.

use std::any::Any;
use std::backtrace::{Backtrace, BacktraceStatus};
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::Once;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyMemoryView};
use pyo3::IntoPyObjectExt;
use raidlab_core::api::{self, ColumnData, Progress, RunOutput};
use raidlab_core::results::parquet::{self as parquet_file, Values};
use raidlab_core::Error;

/// The Python module that defines the exception classes (pure Python, so they can carry
/// attributes, be pickled and be documented like any other class).
const EXCEPTIONS_MODULE: &str = "raidlab.exceptions";

// ---------------------------------------------------------------------------------------------
// Panics
// ---------------------------------------------------------------------------------------------

thread_local! {
    /// True while this thread is inside a core call started by this module.
    static IN_CORE: Cell<bool> = const { Cell::new(false) };
    /// The last panic caught inside a core call on this thread.
    static LAST_PANIC: RefCell<Option<PanicReport>> = const { RefCell::new(None) };
}

/// What the panic hook learned about a panic inside a core call.
struct PanicReport {
    /// Message and location: `not yet implemented (at crates/raidlab-core/src/api.rs:72:5)`.
    text: String,
    /// The Rust backtrace, when `RUST_BACKTRACE` asks for one.
    backtrace: Option<String>,
}

/// Install (once) a panic hook that, inside core calls, records the panic's message, location
/// and (if `RUST_BACKTRACE` is set) backtrace for the `SimulationError`, instead of printing the
/// standard report over the user's terminal. Panics elsewhere go to the previous hook.
fn install_panic_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !IN_CORE.with(Cell::get) {
                previous(info);
                return;
            }
            let message = payload_message(info.payload());
            let text = match info.location() {
                Some(location) => format!("{message} (at {location})"),
                None => message,
            };
            let backtrace = Backtrace::capture();
            let backtrace =
                (backtrace.status() == BacktraceStatus::Captured).then(|| backtrace.to_string());
            LAST_PANIC.with(|last| *last.borrow_mut() = Some(PanicReport { text, backtrace }));
        }));
    });
}

fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "panic with a non-text payload".to_string()
    }
}

/// What a guarded core call produced.
enum CoreOutcome<T> {
    Done(raidlab_core::Result<T>),
    /// The core panicked.
    Panicked(PanicReport),
}

/// Run `f` (a core call) so that a panic is caught and described.
fn guarded<T>(f: impl FnOnce() -> raidlab_core::Result<T>) -> CoreOutcome<T> {
    let was_in_core = IN_CORE.with(|flag| flag.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    IN_CORE.with(|flag| flag.set(was_in_core));
    match result {
        Ok(done) => CoreOutcome::Done(done),
        Err(payload) => {
            let report = LAST_PANIC
                .with(|last| last.borrow_mut().take())
                .unwrap_or_else(|| PanicReport {
                    text: payload_message(payload.as_ref()),
                    backtrace: None,
                });
            CoreOutcome::Panicked(report)
        }
    }
}

/// While alive, panics on this thread are not attributed to the core.
struct OutsideCore {
    was_in_core: bool,
}

impl OutsideCore {
    fn enter() -> Self {
        OutsideCore {
            was_in_core: IN_CORE.with(|flag| flag.replace(false)),
        }
    }
}

impl Drop for OutsideCore {
    fn drop(&mut self) {
        IN_CORE.with(|flag| flag.set(self.was_in_core));
    }
}

/// Turn a guarded outcome into a Python result.
fn into_py_result<T>(py: Python<'_>, outcome: CoreOutcome<T>) -> PyResult<T> {
    match outcome {
        CoreOutcome::Done(Ok(value)) => Ok(value),
        CoreOutcome::Done(Err(error)) => Err(core_error_to_py(py, &error)),
        CoreOutcome::Panicked(report) => Err(exception(
            py,
            "SimulationError",
            format!(
                "raidlab-core panicked: {}. This is a bug in the simulator, not in your configuration.",
                report.text
            ),
            &[
                ("panicked", true.into_bound_py_any(py)),
                ("rust_backtrace", report.backtrace.into_bound_py_any(py)),
            ],
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// Instantiate `raidlab.exceptions.<class_name>(message, **kwargs)` as a `PyErr`. Falls back to
/// `RuntimeError` if the Python package cannot be imported (the binary used on its own).
fn exception(
    py: Python<'_>,
    class_name: &str,
    message: String,
    kwargs: &[(&str, PyResult<Bound<'_, PyAny>>)],
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = py.import(EXCEPTIONS_MODULE)?.getattr(class_name)?;
        let keywords = PyDict::new(py);
        for (name, value) in kwargs {
            match value {
                Ok(value) => keywords.set_item(*name, value)?,
                Err(error) => return Err(error.clone_ref(py)),
            }
        }
        Ok(PyErr::from_value(
            class.call((message.clone(),), Some(&keywords))?,
        ))
    };
    build().unwrap_or_else(|_| PyRuntimeError::new_err(format!("{class_name}: {message}")))
}

fn core_error_to_py(py: Python<'_>, error: &Error) -> PyErr {
    match error {
        Error::Config { key, message } => exception(
            py,
            "ConfigError",
            message.clone(),
            &[("key", key.into_bound_py_any(py))],
        ),
        Error::Trace {
            file,
            line,
            message,
        } => exception(
            py,
            "TraceError",
            message.clone(),
            &[
                ("file", file.display().to_string().into_bound_py_any(py)),
                ("line", line.into_bound_py_any(py)),
            ],
        ),
        Error::Spec {
            file,
            line,
            message,
        } => exception(
            py,
            "SpecError",
            message.clone(),
            &[
                ("file", file.display().to_string().into_bound_py_any(py)),
                ("line", line.into_bound_py_any(py)),
            ],
        ),
        Error::Io { file, source } => exception(
            py,
            "RaidlabIOError",
            source.to_string(),
            &[
                ("file", file.display().to_string().into_bound_py_any(py)),
                ("errno", source.raw_os_error().into_bound_py_any(py)),
            ],
        ),
        // Keep the core's framing ("simulation invariant violated: …").
        Error::Invariant(_) => exception(py, "SimulationError", error.to_string(), &[]),
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------------

/// `RunOutput` → `{"summary": str, "resolved_config": str, "config_hash": str,
/// "tables": {table: {column: memoryview | list[str]}}}`. A numeric column is a read-only
/// `memoryview` of format `"d"` (float64) or `"q"` (int64), in native byte order, over one
/// `bytes` copy of the core's vector. Why not NumPy arrays: importing NumPy took about a
/// third of a short `raidlab run`, which needs no array maths; pandas and NumPy take a
/// memoryview as it is (`pd.DataFrame`, `np.asarray`, without a copy), and the Parquet
/// writer writes its bytes.
fn run_output_to_py<'py>(py: Python<'py>, output: RunOutput) -> PyResult<Bound<'py, PyDict>> {
    let summary = serde_json::to_string(&output.summary)
        .map_err(|error| PyRuntimeError::new_err(format!("summary is not JSON: {error}")))?;
    let tables = PyDict::new(py);
    for table in output.tables {
        let columns = PyDict::new(py);
        for column in table.columns {
            match column.data {
                ColumnData::F64(values) => {
                    columns.set_item(column.name, typed_memoryview(py, &values, f64::to_ne_bytes, "d")?)?
                }
                ColumnData::I64(values) => {
                    columns.set_item(column.name, typed_memoryview(py, &values, i64::to_ne_bytes, "q")?)?
                }
                ColumnData::Str(values) => {
                    columns.set_item(column.name, PyList::new(py, values)?)?
                }
            }
        }
        tables.set_item(table.name, columns)?;
    }
    let result = PyDict::new(py);
    result.set_item("summary", summary)?;
    result.set_item("resolved_config", output.resolved_config)?;
    result.set_item("config_hash", output.config_hash)?;
    result.set_item("tables", tables)?;
    Ok(result)
}

/// `values` as a read-only `memoryview` of `format` (`"d"` or `"q"`, 8 bytes each) over a
/// `bytes` object holding them in native byte order.
fn typed_memoryview<'py, T: Copy>(
    py: Python<'py>,
    values: &[T],
    to_ne_bytes: fn(T) -> [u8; 8],
    format: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = PyBytes::new_with(py, values.len() * 8, |buffer| {
        for (slot, value) in buffer.chunks_exact_mut(8).zip(values) {
            slot.copy_from_slice(&to_ne_bytes(*value));
        }
        Ok(())
    })?;
    PyMemoryView::from(&bytes)?.call_method1("cast", (format,))
}

/// A JSON value as the equivalent Python object (dict, list, str, int, float, bool, None).
fn json_to_py<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    match value {
        Value::Null => Ok(py.None().into_bound(py)),
        Value::Bool(flag) => flag.into_bound_py_any(py),
        Value::Number(number) => {
            if let Some(integer) = number.as_i64() {
                integer.into_bound_py_any(py)
            } else if let Some(integer) = number.as_u64() {
                integer.into_bound_py_any(py)
            } else {
                number.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py)
            }
        }
        Value::String(text) => text.into_bound_py_any(py),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            Ok(list.into_any())
        }
        Value::Object(entries) => {
            let dict = PyDict::new(py);
            for (key, item) in entries {
                dict.set_item(key, json_to_py(py, item)?)?;
            }
            Ok(dict.into_any())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Progress and Ctrl-C
// ---------------------------------------------------------------------------------------------

/// The progress hook of a core call made without the GIL. Each time the core asks (about every
/// 100 ms), it re-attaches to Python to let it handle signals — a Ctrl-C would otherwise wait
/// for the whole call — and then asks `callback(fraction, completed_requests)`, if any.
/// A Python exception (`KeyboardInterrupt` from Ctrl-C, or one raised by the callback) cancels
/// the call and is left in `error` for the caller to raise; so does the callback returning
/// `False`, without an error.
fn python_progress<'a>(
    callback: Option<&'a Py<PyAny>>,
    error: &'a mut Option<PyErr>,
) -> impl FnMut(Progress) -> bool + 'a {
    move |step: Progress| -> bool {
        // Python code is not core code: its panics (in other extensions) report normally.
        let _outside_core = OutsideCore::enter();
        Python::attach(|py| {
            if let Err(signal_error) = py.check_signals() {
                *error = Some(signal_error);
                return false;
            }
            let Some(callback) = callback else {
                return true;
            };
            let answer = callback
                .call1(py, (step.fraction, step.completed_requests))
                .and_then(|answer| {
                    let answer = answer.bind(py);
                    Ok(answer.is_none() || answer.is_truthy()?)
                });
            answer.unwrap_or_else(|callback_error| {
                *error = Some(callback_error);
                false
            })
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------------------------

/// Run a simulation described by a TOML configuration.
///
/// `progress(fraction, completed_requests)` is called now and then while the run goes on;
/// returning `False` cancels the run (the summary then says `"cancelled": true`). An exception
/// raised by `progress` — or a Ctrl-C — stops the run and is re-raised.
#[pyfunction]
#[pyo3(signature = (config_toml, base_dir, progress=None))]
fn run<'py>(
    py: Python<'py>,
    config_toml: &str,
    base_dir: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut callback_error: Option<PyErr> = None;
    let outcome = py.detach(|| {
        let mut report = python_progress(progress.as_ref(), &mut callback_error);
        guarded(|| api::run_toml(config_toml, Path::new(base_dir), Some(&mut report)))
    });
    if let Some(error) = callback_error {
        return Err(error);
    }
    let output = into_py_result(py, outcome)?;
    run_output_to_py(py, output)
}

/// Parse and validate a configuration; returns `(resolved_toml, config_hash)`.
#[pyfunction]
fn resolve_config(py: Python<'_>, config_toml: &str, base_dir: &str) -> PyResult<(String, String)> {
    let outcome = py.detach(|| guarded(|| api::resolve_toml(config_toml, Path::new(base_dir))));
    into_py_result(py, outcome)
}

/// The JSON Schema of the configuration, generated from the core's Rust types.
#[pyfunction]
fn config_schema(py: Python<'_>) -> PyResult<String> {
    let outcome = py.detach(|| guarded(|| Ok(api::config_schema())));
    into_py_result(py, outcome)
}

/// Run the built-in benchmark `case` with `requests` user requests. A Ctrl-C stops the case
/// and raises `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(name = "bench")]
fn run_bench<'py>(py: Python<'py>, case: &str, requests: u64) -> PyResult<Bound<'py, PyAny>> {
    let mut signal_error: Option<PyErr> = None;
    let outcome = py.detach(|| {
        let mut report = python_progress(None, &mut signal_error);
        guarded(|| {
            let result = api::bench(case, requests, Some(&mut report))?;
            serde_json::to_value(&result)
                .map_err(|error| Error::Invariant(format!("bench result is not JSON: {error}")))
        })
    });
    if let Some(error) = signal_error {
        return Err(error);
    }
    let value = into_py_result(py, outcome)?;
    json_to_py(py, &value)
}

/// Names of the built-in benchmark cases.
#[pyfunction]
fn bench_cases(py: Python<'_>) -> PyResult<Vec<String>> {
    let outcome = guarded(|| {
        Ok(api::bench_cases()
            .iter()
            .map(|name| name.to_string())
            .collect())
    });
    into_py_result(py, outcome)
}

/// Names of the benchmark cases left out of the default set (they run for minutes).
#[pyfunction]
fn long_bench_cases(py: Python<'_>) -> PyResult<Vec<String>> {
    let outcome = guarded(|| Ok(api::long_bench_cases().iter().map(|name| name.to_string()).collect()));
    into_py_result(py, outcome)
}

/// Statistics of a trace described by a TOML table with the keys of `workload.trace`, as JSON.
/// A Ctrl-C stops the pass and raises `KeyboardInterrupt`.
#[pyfunction]
fn trace_info(py: Python<'_>, trace_toml: &str, base_dir: &str) -> PyResult<String> {
    let mut signal_error: Option<PyErr> = None;
    let outcome = py.detach(|| {
        let mut report = python_progress(None, &mut signal_error);
        guarded(|| api::trace_info_toml(trace_toml, Path::new(base_dir), Some(&mut report)))
    });
    if let Some(error) = signal_error {
        return Err(error);
    }
    match into_py_result(py, outcome)? {
        Some(json) => Ok(json),
        // Only a Python error stops the pass, and it was raised above.
        None => Err(PyRuntimeError::new_err("trace info stopped without a Python error")),
    }
}

/// Replay a DiskSim `validate` trace on one drive (`drive_toml`: the keys of a `[drive]`
/// table) and compare with the response times the real drive measured. Returns the same
/// shape as `run`; the summary and tables are those of `api::validate_toml`.
#[pyfunction]
fn validate<'py>(
    py: Python<'py>,
    drive_toml: &str,
    trace_path: &str,
    base_dir: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let outcome = py.detach(|| {
        guarded(|| api::validate_toml(drive_toml, Path::new(trace_path), Path::new(base_dir)))
    });
    let output = into_py_result(py, outcome)?;
    run_output_to_py(py, output)
}

/// The configured array's layout as the simulation builds it, as a dict (the fields of
/// `api::LayoutFacts`: name, members, capacity, bytes per member, fault tolerance, and the
/// exposure of members while one is failed). A configuration the core refuses raises
/// `ConfigError` naming the key.
#[pyfunction]
fn layout_facts<'py>(py: Python<'py>, config_toml: &str, base_dir: &str) -> PyResult<Bound<'py, PyAny>> {
    let outcome = py.detach(|| {
        guarded(|| {
            let facts = api::layout_facts(config_toml, Path::new(base_dir))?;
            serde_json::to_value(&facts)
                .map_err(|error| Error::Invariant(format!("layout facts are not JSON: {error}")))
        })
    });
    let value = into_py_result(py, outcome)?;
    json_to_py(py, &value)
}

/// The policy catalogue: one dict per registry (`family`, `title`, `config_key` or None,
/// `entries`: a list of `{"name", "doc"}` in registry order), read from the core's registry
/// tables (`raidlab_core::catalogue`).
#[pyfunction]
fn policy_catalogue(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let families = into_py_result(py, guarded(|| Ok(raidlab_core::catalogue::catalogue())))?;
    let listing = PyList::empty(py);
    for family in families {
        let entries = PyList::empty(py);
        for entry in &family.entries {
            let item = PyDict::new(py);
            item.set_item("name", entry.name)?;
            item.set_item("doc", entry.doc)?;
            entries.append(item)?;
        }
        let item = PyDict::new(py);
        item.set_item("family", family.name)?;
        item.set_item("title", family.title)?;
        item.set_item("config_key", family.config_key)?;
        item.set_item("entries", entries)?;
        listing.append(item)?;
    }
    Ok(listing)
}

/// Stream a trace through buffer caches (`raidlab_core::cache::sim`): `config_toml` has the
/// keys of `CacheSimConfig`; relative paths start from `base_dir`. The report as JSON.
/// `progress(fraction, requests)` as in `run`: returning `False`, raising, or a Ctrl-C
/// stops the pass (the exception, or `KeyboardInterrupt`, is raised; a miss stream being
/// written is removed).
#[pyfunction]
#[pyo3(signature = (config_toml, base_dir, progress=None))]
fn cache_simulate(py: Python<'_>, config_toml: &str, base_dir: &str, progress: Option<Py<PyAny>>) -> PyResult<Option<String>> {
    let mut callback_error: Option<PyErr> = None;
    let outcome = py.detach(|| {
        let mut report = python_progress(progress.as_ref(), &mut callback_error);
        guarded(|| raidlab_core::cache::sim::run_toml(config_toml, Path::new(base_dir), Some(&mut report)))
    });
    if let Some(error) = callback_error {
        return Err(error);
    }
    into_py_result(py, outcome)
}

/// Write a table as a Parquet file at `path` (`raidlab_core::results::parquet::write_table`;
/// GIL released while it writes). `columns`: `(name, kind, values)` in column order, `kind`
/// one of `int64`, `float64`, `bool`, `string`. `values`: a list (`None` for a null where
/// `nullable`), or, for `int64` and `float64` without `nullable`, `bytes` of 8-byte numbers in
/// native byte order (a memoryview's or a NumPy array's `tobytes()`). With `nullable`, every
/// column is nullable. A failure raises `RaidlabIOError` naming `path`.
#[pyfunction]
#[pyo3(signature = (path, columns, nullable=false))]
fn write_parquet(
    py: Python<'_>,
    path: &str,
    columns: Vec<(String, String, Bound<'_, PyAny>)>,
    nullable: bool,
) -> PyResult<()> {
    let columns = columns
        .into_iter()
        .map(|(name, kind, values)| parquet_column(name, &kind, &values, nullable))
        .collect::<PyResult<Vec<_>>>()?;
    let outcome = py.detach(|| guarded(|| parquet_file::write_table(Path::new(path), &columns)));
    into_py_result(py, outcome)
}

/// One column of `write_parquet` as the core's.
fn parquet_column(
    name: String,
    kind: &str,
    values: &Bound<'_, PyAny>,
    nullable: bool,
) -> PyResult<parquet_file::Column> {
    /// Values and their present flags from a list with `None` for nulls.
    fn split<T>(items: Vec<Option<T>>) -> (Vec<T>, Vec<bool>) {
        let present = items.iter().map(Option::is_some).collect();
        (items.into_iter().flatten().collect(), present)
    }
    if nullable {
        let (values, present) = match kind {
            "int64" => { let (v, p) = split(values.extract::<Vec<Option<i64>>>()?); (Values::I64(v), p) }
            "float64" => { let (v, p) = split(values.extract::<Vec<Option<f64>>>()?); (Values::F64(v), p) }
            "bool" => { let (v, p) = split(values.extract::<Vec<Option<bool>>>()?); (Values::Bool(v), p) }
            "string" => { let (v, p) = split(values.extract::<Vec<Option<String>>>()?); (Values::Str(v), p) }
            other => return Err(unknown_kind(&name, other)),
        };
        return Ok(parquet_file::Column::nullable(name, values, present));
    }
    let bytes = values.cast::<PyBytes>().ok().map(|bytes| bytes.as_bytes());
    let numbers = |bytes: &[u8]| -> PyResult<Vec<[u8; 8]>> {
        if bytes.len() % 8 != 0 {
            return Err(PyValueError::new_err(format!(
                "column {name:?}: {} bytes is not a whole number of 8-byte values",
                bytes.len()
            )));
        }
        Ok(bytes.chunks_exact(8).map(|chunk| chunk.try_into().expect("8 bytes")).collect())
    };
    let values = match (kind, bytes) {
        ("int64", Some(bytes)) => Values::I64(numbers(bytes)?.into_iter().map(i64::from_ne_bytes).collect()),
        ("float64", Some(bytes)) => Values::F64(numbers(bytes)?.into_iter().map(f64::from_ne_bytes).collect()),
        ("int64", None) => Values::I64(values.extract()?),
        ("float64", None) => Values::F64(values.extract()?),
        ("bool", _) => Values::Bool(values.extract()?),
        ("string", _) => Values::Str(values.extract()?),
        (other, _) => return Err(unknown_kind(&name, other)),
    };
    Ok(parquet_file::Column::required(name, values))
}

fn unknown_kind(name: &str, kind: &str) -> PyErr {
    PyValueError::new_err(format!(
        "column {name:?}: unknown kind {kind:?} (int64, float64, bool or string)"
    ))
}

/// Version of the binding and core (the Cargo workspace version).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Test hook: raise the Python exception that the core error (or panic) `kind` maps to, by
/// the same path real calls take. `kind` is `config`, `trace`, `spec`, `io`, `io_no_errno`,
/// `invariant` or `panic`. Lets `tests/test_exceptions.py` check the mapping of every variant
/// whatever the core can be made to fail with.
#[pyfunction]
fn _raise_for_test(py: Python<'_>, kind: &str) -> PyResult<()> {
    let kind = kind.to_string();
    let outcome = py.detach(move || {
        guarded(|| -> raidlab_core::Result<()> {
            Err(match kind.as_str() {
                "config" => Error::config("array.stripe_unit_kib", "expected a power of two"),
                "trace" => Error::trace("traces/bad.csv", 17, "expected 7 fields, found 3"),
                "spec" => Error::Spec {
                    file: "drives/odd.diskspecs".into(),
                    line: 42,
                    message: "unknown parameter `Spindle speed`".into(),
                },
                "io" => Error::io("traces/missing.csv", std::io::Error::from_raw_os_error(2)),
                "io_no_errno" => Error::io(
                    "traces/broken.csv.gz",
                    std::io::Error::new(std::io::ErrorKind::InvalidData, "corrupt gzip stream"),
                ),
                "invariant" => {
                    Error::Invariant("drive 3 completed an operation it never started".into())
                }
                "panic" => panic!("deliberate panic for the test"),
                other => Error::config("kind", format!("unknown test error kind `{other}`")),
            })
        })
    });
    into_py_result(py, outcome)
}

#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    module.add_function(wrap_pyfunction!(run, module)?)?;
    module.add_function(wrap_pyfunction!(resolve_config, module)?)?;
    module.add_function(wrap_pyfunction!(config_schema, module)?)?;
    module.add_function(wrap_pyfunction!(run_bench, module)?)?;
    module.add_function(wrap_pyfunction!(bench_cases, module)?)?;
    module.add_function(wrap_pyfunction!(long_bench_cases, module)?)?;
    module.add_function(wrap_pyfunction!(trace_info, module)?)?;
    module.add_function(wrap_pyfunction!(validate, module)?)?;
    module.add_function(wrap_pyfunction!(layout_facts, module)?)?;
    module.add_function(wrap_pyfunction!(version, module)?)?;
    module.add_function(wrap_pyfunction!(policy_catalogue, module)?)?;
    module.add_function(wrap_pyfunction!(cache_simulate, module)?)?;
    module.add_function(wrap_pyfunction!(write_parquet, module)?)?;
    module.add_function(wrap_pyfunction!(_raise_for_test, module)?)?;
    Ok(())
}
