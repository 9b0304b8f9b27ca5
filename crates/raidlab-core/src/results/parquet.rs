//! Flat tables of named, typed columns written as Parquet files by the `parquet` crate.
//!
//! A run's tables (`timeseries.parquet`, `drives.parquet`, …) and a sweep's
//! `summary.parquet` are written here, so that `raidlab run` and `raidlab sweep` need neither
//! pandas nor pyarrow to save what they made. The files are Parquet in its plainest form:
//!
//! * one row group; a column is `REQUIRED` (no nulls: a missing float is NaN) or `OPTIONAL`
//!   (a sweep's summary table: a null where a run has no value);
//! * `INT64` for integers, `DOUBLE` for floats, `BOOLEAN` for truth values, `BYTE_ARRAY`
//!   annotated as UTF-8 text for text;
//! * `PLAIN` encoding (no dictionaries), no compression, version-1 data pages;
//! * each data page's CRC-32 in its header, so that readers which verify it (raidlab's own,
//!   with `page_checksum_verification=True`) see a damaged file as an error, not as wrong values.
//!
//! The `parquet` crate encodes the values, the levels, the statistics and the file metadata.
//! It writes no page checksums (its page headers leave the field out), so the pages of each
//! column chunk go through [`ChecksummedPages`], which writes each page's header itself, with
//! the checksum, into a buffer that the crate then splices into the file
//! (`SerializedRowGroupWriter::append_column`), offsets adjusted.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use ::parquet::basic::{Encoding, LogicalType, PageType, Repetition, Type as PhysicalType};
use ::parquet::column::page::{CompressedPage, Page, PageWriteSpec, PageWriter};
use ::parquet::column::writer::{get_column_writer, ColumnWriter};
use ::parquet::data_type::ByteArray;
use ::parquet::errors::{ParquetError, Result as ParquetResult};
use ::parquet::file::properties::{EnabledStatistics, WriterProperties, WriterPropertiesPtr};
use ::parquet::file::writer::SerializedFileWriter;
use ::parquet::schema::types::{ColumnDescPtr, SchemaDescriptor, Type};

use crate::error::{Error, Result};

/// The values of a column. For a nullable column, only the values present, in row order.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::I64(values) => values.len(),
            Values::F64(values) => values.len(),
            Values::Bool(values) => values.len(),
            Values::Str(values) => values.len(),
        }
    }

    fn physical_type(&self) -> PhysicalType {
        match self {
            Values::I64(_) => PhysicalType::INT64,
            Values::F64(_) => PhysicalType::DOUBLE,
            Values::Bool(_) => PhysicalType::BOOLEAN,
            Values::Str(_) => PhysicalType::BYTE_ARRAY,
        }
    }
}

/// A named column of a table to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub values: Values,
    /// `None`: a required column, one value per row. `Some(present)`: a nullable column, one
    /// flag per row, `false` for a null; `values` holds the rows flagged `true`.
    pub present: Option<Vec<bool>>,
}

impl Column {
    /// A column without nulls.
    pub fn required(name: impl Into<String>, values: Values) -> Self {
        Column { name: name.into(), values, present: None }
    }

    /// A nullable column: `present` has one flag per row; `values` the rows flagged `true`.
    pub fn nullable(name: impl Into<String>, values: Values, present: Vec<bool>) -> Self {
        Column { name: name.into(), values, present: Some(present) }
    }

    fn rows(&self) -> usize {
        self.present.as_ref().map_or(self.values.len(), Vec::len)
    }
}

impl From<&crate::api::Column> for Column {
    fn from(column: &crate::api::Column) -> Self {
        use crate::api::ColumnData;
        let values = match &column.data {
            ColumnData::F64(values) => Values::F64(values.clone()),
            ColumnData::I64(values) => Values::I64(values.clone()),
            ColumnData::Str(values) => Values::Str(values.clone()),
        };
        Column::required(&column.name, values)
    }
}

/// Write `columns` (all with the same number of rows) as a Parquet file at `path`, replacing
/// any file there. A failure is [`Error::Io`] naming `path`, and leaves no file behind.
pub fn write_table(path: &Path, columns: &[Column]) -> Result<()> {
    let result = check(columns).and_then(|()| {
        let file = File::create(path)?;
        let mut out = BufWriter::new(file);
        write_to(&mut out, columns).map_err(parquet_to_io)?;
        out.flush()
    });
    result.map_err(|source| {
        let _ = std::fs::remove_file(path);
        Error::io(path, source)
    })
}

/// The columns make a table: one number of rows, a nullable column's values one per flag set.
fn check(columns: &[Column]) -> io::Result<()> {
    let invalid = |message: String| Err(io::Error::new(io::ErrorKind::InvalidInput, message));
    for column in columns {
        if let Some(present) = &column.present {
            let flagged = present.iter().filter(|&&flag| flag).count();
            if flagged != column.values.len() {
                return invalid(format!(
                    "column {:?} has {} values for {flagged} rows that are not null",
                    column.name,
                    column.values.len()
                ));
            }
        }
    }
    let mut rows: Vec<usize> = columns.iter().map(Column::rows).collect();
    rows.sort_unstable();
    rows.dedup();
    if rows.len() > 1 {
        return invalid(format!("columns of different lengths: {rows:?}"));
    }
    Ok(())
}

fn parquet_to_io(error: ParquetError) -> io::Error {
    match error {
        ParquetError::External(inner) => match inner.downcast::<io::Error>() {
            Ok(error) => *error,
            Err(inner) => io::Error::other(inner),
        },
        other => io::Error::other(other),
    }
}

fn properties() -> WriterPropertiesPtr {
    Arc::new(
        WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_encoding(Encoding::PLAIN)
            // Minimum and maximum per column chunk (DuckDB and polars skip with them); no
            // page index.
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_max_row_group_row_count(None)
            .build(),
    )
}

fn schema(columns: &[Column]) -> ParquetResult<Arc<Type>> {
    let mut fields = Vec::with_capacity(columns.len());
    for column in columns {
        let repetition = if column.present.is_some() { Repetition::OPTIONAL } else { Repetition::REQUIRED };
        let mut field = Type::primitive_type_builder(&column.name, column.values.physical_type())
            .with_repetition(repetition);
        if let Values::Str(_) = column.values {
            field = field.with_logical_type(Some(LogicalType::String));
        }
        fields.push(Arc::new(field.build()?));
    }
    Ok(Arc::new(Type::group_type_builder("schema").with_fields(fields).build()?))
}

/// The file itself, into `out`.
fn write_to<W: Write + Send>(out: W, columns: &[Column]) -> ParquetResult<()> {
    let schema = schema(columns)?;
    let descriptor = SchemaDescriptor::new(schema.clone());
    let properties = properties();
    let mut file = SerializedFileWriter::new(out, schema, properties.clone())?;
    let mut row_group = file.next_row_group()?;
    for (index, column) in columns.iter().enumerate() {
        let mut chunk = Vec::new();
        let closed = write_chunk(descriptor.column(index), properties.clone(), column, &mut chunk)?;
        row_group.append_column(&bytes::Bytes::from(chunk), closed)?;
    }
    row_group.close()?;
    file.close()?;
    Ok(())
}

/// One column chunk, its pages checksummed, into `chunk`.
fn write_chunk(
    descriptor: ColumnDescPtr,
    properties: WriterPropertiesPtr,
    column: &Column,
    chunk: &mut Vec<u8>,
) -> ParquetResult<::parquet::column::writer::ColumnCloseResult> {
    let levels: Option<Vec<i16>> =
        column.present.as_ref().map(|present| present.iter().map(|&flag| i16::from(flag)).collect());
    let levels = levels.as_deref();
    let mut writer = get_column_writer(descriptor, properties, Box::new(ChecksummedPages { out: chunk }));
    match (&mut writer, &column.values) {
        (ColumnWriter::Int64ColumnWriter(typed), Values::I64(values)) => {
            typed.write_batch(values, levels, None)?;
        }
        (ColumnWriter::DoubleColumnWriter(typed), Values::F64(values)) => {
            typed.write_batch(values, levels, None)?;
        }
        (ColumnWriter::BoolColumnWriter(typed), Values::Bool(values)) => {
            typed.write_batch(values, levels, None)?;
        }
        (ColumnWriter::ByteArrayColumnWriter(typed), Values::Str(values)) => {
            let values: Vec<ByteArray> = values.iter().map(|text| ByteArray::from(text.as_str())).collect();
            typed.write_batch(&values, levels, None)?;
        }
        _ => return Err(ParquetError::General(format!("column {:?}: writer of another type", column.name))),
    }
    writer.close()
}

/// A page writer that writes each page with its CRC-32 in the page header (the `crc` field of
/// `PageHeader` in the Parquet format's `parquet.thrift`: of the page's bytes as written,
/// after the header), into a buffer that starts the column chunk.
///
/// Only version-1 data pages are written (no dictionaries, writer version 1.0): any other
/// page is an error.
struct ChecksummedPages<'a> {
    out: &'a mut Vec<u8>,
}

impl PageWriter for ChecksummedPages<'_> {
    fn write_page(&mut self, page: CompressedPage) -> ParquetResult<PageWriteSpec> {
        let Page::DataPage { num_values, encoding, def_level_encoding, rep_level_encoding, .. } =
            page.compressed_page()
        else {
            return Err(ParquetError::General(format!("unexpected {:?} page", page.page_type())));
        };
        let data = page.data();
        let size = |bytes: usize| {
            i32::try_from(bytes).map_err(|_| ParquetError::General(format!("a page of {bytes} bytes")))
        };
        let start = self.out.len();
        // PageHeader, in Thrift's compact protocol: each field's header is (id delta << 4 | type).
        let mut header = thrift::Struct::new(self.out);
        header.i32(1, thrift_page_type(page.page_type())?);
        header.i32(2, size(page.uncompressed_size())?);
        header.i32(3, size(page.compressed_size())?);
        header.i32(4, crc32fast::hash(data) as i32);
        header.begin_struct(5);
        {
            // DataPageHeader
            let mut data_header = thrift::Struct::new(header.out());
            data_header.i32(1, size(*num_values as usize)?);
            data_header.i32(2, thrift_encoding(*encoding)?);
            data_header.i32(3, thrift_encoding(*def_level_encoding)?);
            data_header.i32(4, thrift_encoding(*rep_level_encoding)?);
            data_header.end();
        }
        header.end();
        let header_size = self.out.len() - start;
        self.out.extend_from_slice(data);
        let mut spec = PageWriteSpec::new();
        spec.page_type = page.page_type();
        spec.uncompressed_size = page.uncompressed_size() + header_size;
        spec.compressed_size = page.compressed_size() + header_size;
        spec.num_values = page.num_values();
        spec.offset = start as u64;
        spec.bytes_written = (self.out.len() - start) as u64;
        Ok(spec)
    }

    fn close(&mut self) -> ParquetResult<()> {
        Ok(())
    }
}

fn thrift_page_type(page_type: PageType) -> ParquetResult<i32> {
    match page_type {
        PageType::DATA_PAGE => Ok(0),
        other => Err(ParquetError::General(format!("unexpected {other:?} page"))),
    }
}

fn thrift_encoding(encoding: Encoding) -> ParquetResult<i32> {
    match encoding {
        Encoding::PLAIN => Ok(0),
        Encoding::RLE => Ok(3),
        other => Err(ParquetError::General(format!("unexpected {other:?} encoding"))),
    }
}

/// The little of Thrift's compact protocol a page header needs: structs of `i32` fields and
/// one nested struct, fields in increasing id order.
mod thrift {
    const I32: u8 = 5;
    const STRUCT: u8 = 12;

    pub(super) struct Struct<'a> {
        out: &'a mut Vec<u8>,
        last_id: i16,
    }

    impl<'a> Struct<'a> {
        pub(super) fn new(out: &'a mut Vec<u8>) -> Self {
            Struct { out, last_id: 0 }
        }

        pub(super) fn out(&mut self) -> &mut Vec<u8> {
            self.out
        }

        fn field(&mut self, id: i16, kind: u8) {
            let delta = id - self.last_id;
            debug_assert!((1..=15).contains(&delta), "fields in increasing id order, close together");
            self.out.push(((delta as u8) << 4) | kind);
            self.last_id = id;
        }

        pub(super) fn i32(&mut self, id: i16, value: i32) {
            self.field(id, I32);
            varint(self.out, ((value << 1) ^ (value >> 31)) as u32);
        }

        /// The header of a struct field; the nested struct follows, written into [`Self::out`].
        pub(super) fn begin_struct(&mut self, id: i16) {
            self.field(id, STRUCT);
        }

        pub(super) fn end(self) {
            self.out.push(0);
        }
    }

    fn varint(out: &mut Vec<u8>, mut value: u32) {
        while value >= 0x80 {
            out.push((value as u8 & 0x7F) | 0x80);
            value >>= 7;
        }
        out.push(value as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::parquet::file::reader::{FileReader, SerializedFileReader};
    use ::parquet::record::Field;

    fn temp_path(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("raidlab-parquet-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    /// The rows of the file at `path`, as the crate's own reader (which verifies page
    /// checksums) reads them.
    fn read_rows(path: &Path) -> Vec<Vec<(String, Field)>> {
        let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        reader
            .get_row_iter(None)
            .unwrap()
            .map(|row| row.unwrap().get_column_iter().map(|(name, field)| (name.clone(), field.clone())).collect())
            .collect()
    }

    #[test]
    fn required_columns_round_trip_with_their_types() {
        let path = temp_path("required.parquet");
        let columns = vec![
            Column::required("count", Values::I64(vec![0, 1, -2, i64::MAX])),
            Column::required("mean", Values::F64(vec![0.5, f64::NAN, -0.0, 1e300])),
            Column::required("kind", Values::Str(vec!["a".into(), "é".into(), String::new(), "z".into()])),
        ];
        write_table(&path, &columns).unwrap();
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let metadata = reader.metadata();
        assert_eq!(metadata.num_row_groups(), 1);
        let schema = metadata.file_metadata().schema_descr();
        let kinds: Vec<_> = schema.columns().iter().map(|column| column.physical_type()).collect();
        assert_eq!(kinds, [PhysicalType::INT64, PhysicalType::DOUBLE, PhysicalType::BYTE_ARRAY]);
        assert!(schema.columns().iter().all(|column| column.self_type().get_basic_info().repetition() == Repetition::REQUIRED));
        assert_eq!(schema.column(2).logical_type_ref(), Some(&LogicalType::String));
        for index in 0..3 {
            let chunk = metadata.row_group(0).column(index);
            assert_eq!(chunk.compression(), ::parquet::basic::Compression::UNCOMPRESSED);
            assert_eq!(chunk.num_values(), 4);
        }
        let rows = read_rows(&path);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[3][0], ("count".to_string(), Field::Long(i64::MAX)));
        assert_eq!(rows[2][0].1, Field::Long(-2));
        assert!(matches!(rows[1][1].1, Field::Double(x) if x.is_nan()));
        assert!(matches!(rows[2][1].1, Field::Double(x) if x == 0.0 && x.is_sign_negative()));
        assert_eq!(rows[1][2].1, Field::Str("é".into()));
        assert_eq!(rows[2][2].1, Field::Str(String::new()));
    }

    #[test]
    fn nullable_columns_keep_their_nulls_across_pages() {
        let path = temp_path("nullable.parquet");
        // More rows than a page holds (20,000), nulls in runs across the page boundaries.
        let rows = 45_000;
        let present: Vec<bool> = (0..rows).map(|row| row % 7 != 3 && !(19_990..20_010).contains(&row)).collect();
        let ints: Vec<i64> = (0..rows as i64).filter(|&row| present[row as usize]).collect();
        let columns = vec![
            Column::nullable("count", Values::I64(ints.clone()), present.clone()),
            Column::nullable("mean", Values::F64(ints.iter().map(|&x| x as f64 / 4.0).collect()), present.clone()),
            Column::nullable("flag", Values::Bool(ints.iter().map(|&x| x % 3 == 0).collect()), present.clone()),
            Column::nullable("text", Values::Str(ints.iter().map(|x| format!("row {x}")).collect()), present.clone()),
            Column::nullable("none", Values::Str(Vec::new()), vec![false; rows]),
        ];
        write_table(&path, &columns).unwrap();
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        assert!(schema.columns().iter().all(|column| column.self_type().get_basic_info().repetition() == Repetition::OPTIONAL));
        assert_eq!(reader.metadata().row_group(0).num_rows(), rows as i64);
        let read = read_rows(&path);
        assert_eq!(read.len(), rows);
        for (row, fields) in read.iter().enumerate() {
            if present[row] {
                let x = row as i64;
                assert_eq!(fields[0].1, Field::Long(x));
                assert_eq!(fields[1].1, Field::Double(x as f64 / 4.0));
                assert_eq!(fields[2].1, Field::Bool(x % 3 == 0));
                assert_eq!(fields[3].1, Field::Str(format!("row {x}")));
            } else {
                assert!(fields[..4].iter().all(|(_, field)| *field == Field::Null), "row {row}");
            }
            assert_eq!(fields[4].1, Field::Null);
        }
    }

    #[test]
    fn every_page_carries_its_checksum_and_damage_is_an_error() {
        let path = temp_path("checksums.parquet");
        let values: Vec<f64> = (0..50_000).map(|x| x as f64 + 0.25).collect();
        write_table(&path, &[Column::required("value", Values::F64(values.clone()))]).unwrap();
        let data = std::fs::read(&path).unwrap();
        // Walk the pages: each header has the crc field (id 4, i32) and it matches.
        let metadata = SerializedFileReader::new(File::open(&path).unwrap()).unwrap().metadata().clone();
        let chunk = metadata.row_group(0).column(0);
        let mut at = chunk.data_page_offset() as usize;
        let end = at + chunk.compressed_size() as usize;
        let mut pages = 0;
        while at < end {
            let (header_size, size, crc) = page_header(&data[at..]);
            let page = &data[at + header_size..at + header_size + size];
            assert_eq!(crc, Some(crc32fast::hash(page) as i32));
            at += header_size + size;
            pages += 1;
        }
        assert_eq!(at, end);
        assert!(pages >= 3, "{pages} pages");
        // Change a value inside a page: the crate's reader (crc feature) refuses the page.
        let mut damaged = data.clone();
        let needle = (values[30_000]).to_le_bytes();
        let where_ = damaged.windows(8).position(|window| window == needle).unwrap();
        damaged[where_..where_ + 8].copy_from_slice(&(-1.0f64).to_le_bytes());
        let bytes = bytes::Bytes::from(damaged);
        let reader = SerializedFileReader::new(bytes).unwrap();
        let error = reader.get_row_iter(None).unwrap().find_map(|row| row.err()).expect("an error");
        assert!(error.to_string().contains("CRC"), "{error}");
    }

    /// (header length, compressed page size, crc) of the page header at the start of `data`,
    /// read field by field (compact protocol, i32 fields and one struct).
    fn page_header(data: &[u8]) -> (usize, usize, Option<i32>) {
        fn varint(data: &[u8], at: &mut usize) -> u64 {
            let (mut value, mut shift) = (0u64, 0);
            loop {
                let byte = data[*at];
                *at += 1;
                value |= u64::from(byte & 0x7F) << shift;
                shift += 7;
                if byte & 0x80 == 0 {
                    return value;
                }
            }
        }
        fn skip_struct(data: &[u8], at: &mut usize) -> Vec<(u8, i64)> {
            let (mut fields, mut id) = (Vec::new(), 0u8);
            loop {
                let byte = data[*at];
                *at += 1;
                if byte == 0 {
                    return fields;
                }
                id += byte >> 4;
                match byte & 0x0F {
                    5 | 6 => {
                        let raw = varint(data, at) as i64;
                        fields.push((id, (raw >> 1) ^ -(raw & 1)));
                    }
                    12 => {
                        skip_struct(data, at);
                    }
                    other => panic!("unexpected field type {other}"),
                }
            }
        }
        let mut at = 0;
        let fields = skip_struct(data, &mut at);
        let get = |id| fields.iter().find(|(field, _)| *field == id).map(|(_, value)| *value);
        (at, get(3).unwrap() as usize, get(4).map(|crc| crc as i32))
    }

    #[test]
    fn an_empty_table_and_the_run_tables_write() {
        let path = temp_path("empty.parquet");
        let columns = vec![
            Column::required("time_s", Values::F64(Vec::new())),
            Column::required("kind", Values::Str(Vec::new())),
        ];
        write_table(&path, &columns).unwrap();
        assert!(read_rows(&path).is_empty());
        let table = crate::api::Table {
            name: "histogram".into(),
            columns: vec![
                crate::api::Column { name: "class".into(), data: crate::api::ColumnData::Str(vec!["read".into()]) },
                crate::api::Column { name: "count".into(), data: crate::api::ColumnData::I64(vec![3]) },
            ],
        };
        let columns: Vec<Column> = table.columns.iter().map(Column::from).collect();
        write_table(&path, &columns).unwrap();
        assert_eq!(read_rows(&path), vec![vec![("class".into(), Field::Str("read".into())), ("count".into(), Field::Long(3))]]);
    }

    #[test]
    fn a_failure_names_the_file_and_leaves_nothing() {
        let path = temp_path("uneven.parquet");
        let columns = vec![
            Column::required("a", Values::I64(vec![1, 2])),
            Column::required("b", Values::I64(vec![1])),
        ];
        let error = write_table(&path, &columns).unwrap_err();
        assert!(matches!(&error, Error::Io { file, .. } if file == &path), "{error}");
        assert!(error.to_string().contains("columns of different lengths: [1, 2]"), "{error}");
        assert!(!path.exists());
        let columns = vec![Column::nullable("a", Values::I64(vec![1, 2]), vec![true, false])];
        assert!(write_table(&path, &columns).unwrap_err().to_string().contains("2 values for 1 rows"));
        let missing = temp_path("no/such/dir/table.parquet");
        let error = write_table(&missing, &[]).unwrap_err();
        assert!(matches!(&error, Error::Io { file, source } if file == &missing && source.kind() == io::ErrorKind::NotFound));
    }
}
