//! PyO3 glue: the private extension module `qcnsim._core`.
//!
//! This crate only converts between Python and the pure-Rust core (`qcnsim_core::api`):
//!
//! * `validate(text, overrides) -> str` — the resolved scenario as JSON text (validated on a
//!   thread of its own while the caller looks for signals: Ctrl-C and SIGTERM interrupt it);
//! * `run(text, overrides, seed, progress) -> dict` — validates as `validate` does, then runs
//!   with the GIL released; the progress callback re-attaches, checks for signals (Ctrl-C
//!   cancels the run and raises `KeyboardInterrupt`) and calls the Python callback;
//! * `fluid(text, overrides) -> dict` — the scenario's fluid model (same dict as `run`; signals
//!   checked as in `run`);
//! * `ScenarioError` (a `ValueError`) with `args == (message, path, value, allowed)` and the
//!   attributes `message`, `path`, `value`, `allowed`.
//!
//! Numeric table columns cross the boundary as little-endian `bytes` so that Python can wrap them
//! with `numpy.frombuffer` without a per-element conversion. No panic crosses the FFI boundary:
//! every call into the core runs under `catch_unwind` and a panic becomes a `RuntimeError`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use qcnsim_core::api::{self, ColumnData, RunError, RunOutput};

create_exception!(
    qcnsim._core,
    ScenarioError,
    PyValueError,
    "A scenario that cannot be run. args = (message, path, value, allowed)."
);

fn scenario_error(py: Python<'_>, e: &api::ScenarioError) -> PyErr {
    let msg = e.to_string();
    let err = ScenarioError::new_err((
        msg.clone(),
        e.path.clone(),
        e.value.clone(),
        e.allowed.clone(),
    ));
    // Attributes for convenience; failures here are not worth masking the real error.
    let inst = err.value(py);
    let _ = inst.setattr("message", msg);
    let _ = inst.setattr("path", e.path.clone());
    let _ = inst.setattr("value", e.value.clone());
    let _ = inst.setattr("allowed", e.allowed.clone());
    err
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

fn internal_error(payload: &(dyn std::any::Any + Send)) -> PyErr {
    PyRuntimeError::new_err(format!(
        "internal error: {}; this is a bug in qcnsim, please report it with the scenario file",
        panic_message(payload)
    ))
}

/// The version of the Rust core (same as the Python package's).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Run `f` (validation: reading, generating, routing a scenario) on a thread of its own while
/// this one, the GIL released, looks for signals every 0.1 s: Ctrl-C or SIGTERM (a Python
/// handler) raise at once, and the abandoned work's result is dropped when it ends (its thread
/// is not stopped; a `qcnsim` command exits). A panic in `f` is caught there.
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    f: impl FnOnce() -> T + Send + 'static,
) -> PyResult<std::thread::Result<T>> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let (tx, rx) = channel();
    std::thread::Builder::new()
        .name("qcnsim-validate".into())
        // as much stack as a main thread may have (deeply nested scenario text)
        .stack_size(64 << 20)
        .spawn(move || {
            let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start a thread: {e}")))?;
    let mut rx = rx;
    loop {
        let (got, back) = py.detach(move || {
            let got = rx.recv_timeout(std::time::Duration::from_millis(100));
            (got, rx)
        });
        rx = back;
        match got {
            Ok(r) => return Ok(r),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "validation thread ended without a result",
                ))
            }
        }
    }
}

/// Check a scenario (TOML text plus `path=value` overrides) and return it resolved, with every
/// default filled in, as JSON text. Raises `ScenarioError`.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new()))]
fn validate(py: Python<'_>, text: &str, overrides: Vec<String>) -> PyResult<String> {
    let text = text.to_owned();
    let res = interruptible(py, move || api::validate(&text, &overrides))?;
    match res {
        Ok(Ok(json)) => Ok(json),
        Ok(Err(e)) => Err(scenario_error(py, &e)),
        Err(payload) => Err(internal_error(&*payload)),
    }
}

fn le_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    vals: &[T],
    to_le: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, vals.len() * N, |buf| {
        for (chunk, v) in buf.chunks_exact_mut(N).zip(vals.iter()) {
            chunk.copy_from_slice(&to_le(*v));
        }
        Ok(())
    })
}

fn output_to_dict<'py>(py: Python<'py>, out: &RunOutput) -> PyResult<Bound<'py, PyDict>> {
    let tables = PyDict::new(py);
    for table in &out.tables {
        let cols = PyList::empty(py);
        for col in &table.columns {
            let (kind, payload): (&str, Bound<'py, PyAny>) = match &col.data {
                ColumnData::I64(v) => ("i64", le_bytes(py, v, i64::to_le_bytes)?.into_any()),
                ColumnData::F64(v) => ("f64", le_bytes(py, v, f64::to_le_bytes)?.into_any()),
                ColumnData::Bool(v) => ("bool", le_bytes(py, v, |b: bool| [b as u8])?.into_any()),
                ColumnData::Str(v) => ("str", PyList::new(py, v.iter())?.into_any()),
                ColumnData::Cat { codes, values } => (
                    "cat",
                    PyTuple::new(
                        py,
                        [
                            le_bytes(py, codes, u32::to_le_bytes)?.into_any(),
                            PyList::new(py, values.iter())?.into_any(),
                        ],
                    )?
                    .into_any(),
                ),
            };
            let item = PyTuple::new(
                py,
                [
                    col.name.as_str().into_pyobject(py)?.into_any(),
                    kind.into_pyobject(py)?.into_any(),
                    payload,
                ],
            )?;
            cols.append(item)?;
        }
        tables.set_item(&table.name, cols)?;
    }
    let d = PyDict::new(py);
    d.set_item("tables", tables)?;
    d.set_item("resolved", &out.resolved_json)?;
    d.set_item("seed", out.seed)?;
    d.set_item("events", out.events)?;
    d.set_item("sim_time_ps", out.sim_time_ps)?;
    d.set_item("wall_s", out.wall_s)?;
    d.set_item("frames_forwarded", out.frames_forwarded)?;
    Ok(d)
}

/// Run a scenario with the GIL released. `progress(fraction)` is called about every 0.2 s of
/// wall time. Ctrl-C cancels the run and raises `KeyboardInterrupt`; an exception raised by the
/// callback cancels the run and propagates.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new(), seed = None, progress = None))]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<String>,
    seed: Option<u64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    load_and_solve(
        py,
        text,
        overrides,
        seed,
        progress,
        "run",
        api::run_scenario,
    )
}

/// What a solver of a loaded scenario is: the packet run or the fluid model, reporting progress.
type Solver = fn(
    &qcnsim_core::scenario::Scenario,
    &mut dyn FnMut(f64) -> bool,
) -> Result<RunOutput, RunError>;

/// Load the scenario on a thread Ctrl-C and SIGTERM can leave (`interruptible`), then `solve`
/// it with the GIL released; the progress callback re-attaches, checks for signals (a signal
/// cancels and raises) and calls `progress`. `what` names the work in a cancellation message.
fn load_and_solve<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<String>,
    seed: Option<u64>,
    progress: Option<Py<PyAny>>,
    what: &str,
    solve: Solver,
) -> PyResult<Bound<'py, PyDict>> {
    let text = text.to_owned();
    let sc = match interruptible(py, move || api::load_for_run(&text, &overrides, seed))? {
        Ok(Ok(sc)) => sc,
        Ok(Err(e)) => return Err(scenario_error(py, &e)),
        Err(payload) => return Err(internal_error(&*payload)),
    };
    let mut pending: Option<PyErr> = None;
    let result = {
        let pending = &mut pending;
        let progress = &progress;
        py.detach(move || {
            let mut cb = |frac: f64| -> bool {
                Python::attach(|py| {
                    if let Err(e) = py.check_signals() {
                        *pending = Some(e);
                        return false;
                    }
                    if let Some(f) = progress {
                        if let Err(e) = f.call1(py, (frac,)) {
                            *pending = Some(e);
                            return false;
                        }
                    }
                    true
                })
            };
            catch_unwind(AssertUnwindSafe(|| solve(&sc, &mut cb)))
        })
    };
    match result {
        Ok(Ok(out)) => {
            // A signal that arrived after the last progress call still counts.
            if let Some(e) = pending.take() {
                return Err(e);
            }
            py.check_signals()?;
            output_to_dict(py, &out)
        }
        Ok(Err(RunError::Scenario(e))) => Err(scenario_error(py, &e)),
        Ok(Err(RunError::Cancelled)) => match pending.take() {
            Some(e) => Err(e),
            None => {
                py.check_signals()?;
                Err(PyRuntimeError::new_err(format!("{what} cancelled")))
            }
        },
        Err(payload) => Err(internal_error(&*payload)),
    }
}

/// Solve the scenario's fluid model (`[fluid]`; docs/models/fluid.md) with the GIL released:
/// a dict like `run`'s (tables, resolved, ...). Raises `ScenarioError`.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new()))]
fn fluid<'py>(py: Python<'py>, text: &str, overrides: Vec<String>) -> PyResult<Bound<'py, PyDict>> {
    // Ctrl-C and SIGTERM (a Python handler) stop the solver as they stop a run
    load_and_solve(
        py,
        text,
        overrides,
        None,
        None,
        "fluid solve",
        api::run_fluid_scenario,
    )
}

/// Every protocol parameter, from the one definition in `scenario/params.rs`: a list of
/// `(path, kind, default, source, help)` where `path` is `section.key` and `kind` states the
/// unit and the allowed range in words.
#[pyfunction]
fn params() -> Vec<(String, String, &'static str, &'static str, &'static str)> {
    qcnsim_core::scenario::params::PARAMS
        .iter()
        .map(|p| {
            (
                format!("{}.{}", p.section, p.key),
                qcnsim_core::scenario::params::kind_text(&p.kind, false),
                p.default,
                p.source,
                p.help,
            )
        })
        .collect()
}

/// How this extension was built: `{"core_version", "rustc", "git_commit", "git_dirty",
/// "profile"}`; the git fields are empty when it was not built from a git checkout.
#[pyfunction]
fn build_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("core_version", env!("CARGO_PKG_VERSION"))?;
    d.set_item("rustc", env!("QCNSIM_RUSTC_VERSION"))?;
    d.set_item("git_commit", env!("QCNSIM_GIT_COMMIT"))?;
    d.set_item("git_dirty", env!("QCNSIM_GIT_DIRTY") == "1")?;
    d.set_item("profile", env!("QCNSIM_PROFILE"))?;
    Ok(d)
}

/// A quantity string in SI base units: `"16KB"` -> `(16000.0, "B")`, `"10us"` -> `(1e-5, "s")`,
/// `"5Gbps"` -> `(5e9, "bps")`, parsed exactly as the scenario reader does; `None` for anything
/// else (a plain number, a name).
#[pyfunction]
fn si_value(s: &str) -> Option<(f64, &'static str)> {
    use qcnsim_core::units;
    if let Ok(t) = units::parse_time(s) {
        return Some((units::secs(t), "s"));
    }
    if let Ok(r) = units::parse_rate(s) {
        return Some((r, "bps"));
    }
    if let Ok(b) = units::parse_bytes(s) {
        return Some((units::u64_f64(b), "B"));
    }
    None
}

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/scenarios.rs"));
}

/// The reference scenarios compiled into the module: `{name: toml_text}` (from `scenarios/*.toml`
/// at build time).
#[pyfunction]
fn builtin_scenarios(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (name, text) in embedded::SCENARIOS {
        d.set_item(*name, *text)?;
    }
    Ok(d)
}

/// qcnsim._core: the Rust core of qcnsim (private; use the `qcnsim` package).
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(fluid, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(params, m)?)?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    m.add_function(wrap_pyfunction!(si_value, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    Ok(())
}
