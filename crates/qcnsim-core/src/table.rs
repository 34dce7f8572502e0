//! Output tables: what a run (packet or fluid) hands back, column by column. The bottom of the
//! crate: it imports nothing from it, and every layer that produces results builds these
//! (re-exported by [`crate::api`] for the Python bindings).

#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
    /// Strings from a small set: row `i` is `values[codes[i]]`. Long per-sample tables (one
    /// row per flow and sample) name their entity this way, without a string per row.
    Cat {
        codes: Vec<u32>,
        values: Vec<String>,
    },
}

impl ColumnData {
    pub fn len(&self) -> usize {
        match self {
            ColumnData::I64(v) => v.len(),
            ColumnData::F64(v) => v.len(),
            ColumnData::Bool(v) => v.len(),
            ColumnData::Str(v) => v.len(),
            ColumnData::Cat { codes, .. } => codes.len(),
        }
    }

    /// The string of row `i` of a string column (`Str` or `Cat`).
    pub fn str_at(&self, i: usize) -> Option<&str> {
        match self {
            ColumnData::Str(v) => v.get(i).map(|s| s.as_str()),
            ColumnData::Cat { codes, values } => codes
                .get(i)
                .and_then(|&c| values.get(c as usize))
                .map(|s| s.as_str()),
            _ => None,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub data: ColumnData,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
}

impl Table {
    pub fn new(name: &str) -> Self {
        Table {
            name: name.to_string(),
            columns: Vec::new(),
        }
    }
    pub fn col(mut self, name: &str, data: ColumnData) -> Self {
        self.columns.push(Column {
            name: name.to_string(),
            data,
        });
        self
    }
    /// Append columns, in their order.
    pub fn cols(mut self, cols: Vec<(&str, ColumnData)>) -> Self {
        for (name, data) in cols {
            self = self.col(name, data);
        }
        self
    }
    pub fn column(&self, name: &str) -> Option<&ColumnData> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.data)
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map(|c| c.data.len()).unwrap_or(0)
    }
}

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub tables: Vec<Table>,
    /// The resolved scenario (all defaults filled in), as JSON text.
    pub resolved_json: String,
    pub seed: u64,
    /// Events processed by the engine.
    pub events: u64,
    /// Simulated time covered, picoseconds.
    pub sim_time_ps: u64,
    /// Wall-clock seconds spent in the event loop.
    pub wall_s: f64,
    /// Data frames forwarded by switches (for the benchmark's frames/s figure).
    pub frames_forwarded: u64,
}

impl RunOutput {
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
}
