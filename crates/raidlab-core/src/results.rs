//! Result files: the result tables of a run, and a sweep's summary table, as Parquet
//! ([`parquet`]). The Python package decides what goes in them and where; the core writes them.

pub mod parquet;
