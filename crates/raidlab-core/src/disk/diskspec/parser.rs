//! DiskSim's parameter-file syntax (libparam, manual §3) parsed into a tree in which every
//! block, parameter and value keeps the file and line it came from.
//!
//! ```text
//! file       := { block | "source" FILE | instantiation | topology }
//! block      := TYPE NAME "{" [ param { "," param } [","] ] "}"
//! param      := KEY "=" value            KEY: any text up to "=", may contain spaces
//! value      := number | word | "\"" text "\"" | TYPE "{" … "}" | "[" [ value { "," value } ] "]"
//!             | "source" FILE            (a file holding one block: that block is the value)
//! instantiation := "instantiate" "[" NAME { "," NAME } "]" "as" TYPE
//! topology   := "topology" TYPE NAME "[" { TYPE NAME "[" … "]" [","] } "]"
//! ```
//!
//! `#` starts a comment that runs to the end of the line. `source` paths are resolved
//! against the directory of the file that names them; a file that (directly or not) sources
//! itself is an error, as is nesting deeper than libparam's 32 levels. Block types at the top
//! level must be among DiskSim's ([`KNOWN_BLOCKS`]); nested block types are checked by the
//! conversion that reads them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{readable, Error, Result};

/// Top-level block types of DiskSim 4 parameter files.
pub const KNOWN_BLOCKS: &[&str] = &[
    "disksim_global",
    "disksim_stats",
    "disksim_iosim",
    "disksim_iodriver",
    "disksim_bus",
    "disksim_ctlr",
    "disksim_disk",
    "disksim_simpledisk",
    "disksim_logorg",
    "disksim_syncset",
    "disksim_pf",
    "disksim_synthio",
    "disksim_cachemem",
    "disksim_cachedev",
    "dm_disk",
    "memsmodel_mems",
];

/// libparam's limit on nested `source` directives.
const MAX_SOURCE_DEPTH: usize = 32;

/// Most files one parse reads (the given one and every `source`, counting repeats): a
/// file may source another more than once, so without a bound a few short files sourcing
/// each other twice per level would be read 2^32 times.
const MAX_FILES_READ: usize = 1000;

/// Largest file read as a parameter file or seek curve. DiskSim's largest is well under
/// 1 MiB; the bound stops `source` of a device (`/dev/zero`) or a disk image from
/// exhausting memory.
const MAX_FILE_BYTES: u64 = 64 << 20;

/// Deepest nesting of blocks and lists inside one another (counted across `source`d
/// values), and of topology levels. DiskSim's files nest a few levels; the parser recurses
/// once per level, so a bound keeps a malformed or hostile file from overflowing the stack.
const MAX_NESTING: usize = 64;

/// Where something was written: a file and a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: Arc<PathBuf>,
    pub line: u64,
}

impl Location {
    /// An `Error::Spec` at this location.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::Spec { file: self.file.as_ref().clone(), line: self.line, message: message.into() }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// A parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer (decimal, or hexadecimal with `0x`).
    Int(i64),
    /// A number with a fraction or exponent.
    Float(f64),
    /// A word (identifier, file name) or a quoted string.
    Text(String),
    /// A nested block.
    Block(Block),
    /// A list.
    List(Vec<Node>),
}

/// A value and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub location: Location,
}

impl Node {
    /// The value as a number, if it is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self.value {
            Value::Int(i) => Some(i as f64),
            Value::Float(x) => Some(x),
            _ => None,
        }
    }

    /// A short rendering for messages: numbers and words as written, blocks and lists
    /// summarised.
    pub fn brief(&self) -> String {
        match &self.value {
            Value::Int(i) => i.to_string(),
            Value::Float(x) => readable(*x),
            Value::Text(t) => t.clone(),
            Value::Block(b) => format!("{} {{…}}", b.type_name),
            Value::List(items) if items.len() <= 6 => {
                let shown: Vec<String> = items.iter().map(|n| n.brief()).collect();
                format!("[{}]", shown.join(", "))
            }
            Value::List(items) => format!("[{} values]", items.len()),
        }
    }
}

/// `key = value` inside a block.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub key: String,
    pub value: Node,
    /// Where the key was written.
    pub location: Location,
}

/// `TYPE [NAME] { params }`.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub type_name: String,
    /// The name of a top-level block; nested blocks have none.
    pub name: Option<String>,
    pub params: Vec<Param>,
    /// Where the block opened.
    pub location: Location,
}

impl Block {
    /// `TYPE NAME` or `TYPE`, for messages.
    pub fn title(&self) -> String {
        match &self.name {
            Some(name) => format!("{} {name}", self.type_name),
            None => self.type_name.clone(),
        }
    }
}

/// `instantiate [ names ] as TYPE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Instantiation {
    pub names: Vec<String>,
    /// The block the instances are copies of.
    pub block: String,
    pub location: Location,
}

/// One component of a `topology` statement and what hangs below it.
#[derive(Debug, Clone, PartialEq)]
pub struct TopologyNode {
    pub type_name: String,
    pub name: String,
    pub children: Vec<TopologyNode>,
    pub location: Location,
}

/// Everything a parameter file and the files it sources say, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpecTree {
    pub blocks: Vec<Block>,
    pub instantiations: Vec<Instantiation>,
    pub topologies: Vec<TopologyNode>,
    /// Every file read, the given one first.
    pub files: Vec<PathBuf>,
}

/// Parse `path` and every file it sources.
pub fn parse_file(path: &Path) -> Result<SpecTree> {
    let text = read_bounded(path).map_err(|e| Error::io(path, e))?;
    parse_bytes(&text, path)
}

/// The bytes of a regular file of at most [`MAX_FILE_BYTES`].
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::{Error as IoError, ErrorKind};
    let metadata = std::fs::metadata(path)?;
    if metadata.is_dir() {
        return Err(IoError::new(ErrorKind::InvalidInput, "is a directory, not a file"));
    }
    if !metadata.is_file() {
        return Err(IoError::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(IoError::new(
            ErrorKind::InvalidInput,
            format!("{} bytes; a DiskSim file is at most {} MiB", metadata.len(), MAX_FILE_BYTES >> 20),
        ));
    }
    std::fs::read(path)
}

/// Parse `text` as if read from `file` (`source` paths are resolved against its directory).
pub fn parse_str(text: &str, file: &Path) -> Result<SpecTree> {
    parse_bytes(text.as_bytes(), file)
}

fn parse_bytes(text: &[u8], file: &Path) -> Result<SpecTree> {
    let mut tree = SpecTree::default();
    let mut stack = vec![canonical(file)];
    let mut files = vec![file.to_path_buf()];
    Parser::new(text, file, &mut stack, &mut files, 0).file(&mut tree)?;
    tree.files = files;
    Ok(tree)
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn is_special(b: u8) -> bool {
    matches!(b, b'{' | b'}' | b'[' | b']' | b',' | b'=' | b'#' | b'"')
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    line: u64,
    file: Arc<PathBuf>,
    /// Canonical paths of the files being parsed, outermost first (include-cycle guard).
    stack: &'a mut Vec<PathBuf>,
    files: &'a mut Vec<PathBuf>,
    /// Blocks, lists and topology levels open around the current position.
    nesting: usize,
}

impl<'a> Parser<'a> {
    fn new(
        text: &'a [u8],
        file: &Path,
        stack: &'a mut Vec<PathBuf>,
        files: &'a mut Vec<PathBuf>,
        nesting: usize,
    ) -> Self {
        Parser { text, pos: 0, line: 1, file: Arc::new(file.to_path_buf()), stack, files, nesting }
    }

    /// Run `parse` one nesting level deeper (a block, list or topology level opened at
    /// `opened`), or fail when that is deeper than [`MAX_NESTING`].
    fn nested<T>(&mut self, opened: &Location, parse: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.nesting >= MAX_NESTING {
            return Err(opened.error(format!("blocks, lists or topology levels nested deeper than {MAX_NESTING}")));
        }
        self.nesting += 1;
        let result = parse(self);
        self.nesting -= 1;
        result
    }

    fn here(&self) -> Location {
        Location { file: self.file.clone(), line: self.line }
    }

    fn error(&self, message: impl Into<String>) -> Error {
        self.here().error(message)
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        if b == b'\n' {
            self.line += 1;
        }
        Some(b)
    }

    /// Skip white space and comments.
    fn skip(&mut self) {
        while let Some(b) = self.peek() {
            if b == b'#' {
                while let Some(c) = self.peek() {
                    if c == b'\n' {
                        break;
                    }
                    self.pos += 1;
                }
            } else if b.is_ascii_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    /// Next byte after white space and comments, not consumed.
    fn next_significant(&mut self) -> Option<u8> {
        self.skip();
        self.peek()
    }

    fn describe(b: Option<u8>) -> String {
        match b {
            None => "the end of the file".to_string(),
            Some(b) => format!("`{}`", b as char),
        }
    }

    /// A word: a run of bytes that are neither white space nor special.
    fn word(&mut self, what: &str) -> Result<String> {
        self.skip();
        let start = self.pos;
        while let Some(b) = self.peek() {
            if b.is_ascii_whitespace() || is_special(b) {
                break;
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error(format!("expected {what}, found {}", Self::describe(self.peek()))));
        }
        Ok(String::from_utf8_lossy(&self.text[start..self.pos]).into_owned())
    }

    fn expect(&mut self, byte: u8, context: &str) -> Result<()> {
        match self.next_significant() {
            Some(b) if b == byte => {
                self.bump();
                Ok(())
            }
            other => Err(self.error(format!("expected `{}` {context}, found {}", byte as char, Self::describe(other)))),
        }
    }

    /// The whole file: blocks, sources, instantiations, topologies.
    fn file(&mut self, tree: &mut SpecTree) -> Result<()> {
        loop {
            if self.next_significant().is_none() {
                return Ok(());
            }
            let at = self.here();
            let word = self.word("a block, `source`, `instantiate` or `topology`")?;
            match word.as_str() {
                "source" => {
                    let included = self.include(&at)?;
                    tree.blocks.extend(included.blocks);
                    tree.instantiations.extend(included.instantiations);
                    tree.topologies.extend(included.topologies);
                }
                "instantiate" => tree.instantiations.push(self.instantiation(at)?),
                "topology" => tree.topologies.push(self.topology_node(at)?),
                type_name => {
                    if !KNOWN_BLOCKS.contains(&type_name) {
                        return Err(at.error(format!(
                            "unknown block `{type_name}`; DiskSim's top-level blocks are {}",
                            KNOWN_BLOCKS.join(", ")
                        )));
                    }
                    let name = self.word(&format!("a name for the `{type_name}` block"))?;
                    self.expect(b'{', &format!("to open block `{type_name} {name}`"))?;
                    let params = self.params(&format!("{type_name} {name}"), &at)?;
                    tree.blocks.push(Block { type_name: type_name.to_string(), name: Some(name), params, location: at });
                }
            }
        }
    }

    /// `source FILE` (the word `source` already read at `at`): parse the named file.
    fn include(&mut self, at: &Location) -> Result<SpecTree> {
        let name = self.word("a file name after `source`")?;
        let base = self.file.parent().unwrap_or(Path::new(""));
        let path = base.join(&name);
        if self.files.len() >= MAX_FILES_READ {
            return Err(at.error(format!("more than {MAX_FILES_READ} files read through `source`")));
        }
        let text = read_bounded(&path)
            .map_err(|e| at.error(format!("cannot read source file `{name}` ({}): {e}", path.display())))?;
        let key = canonical(&path);
        if self.stack.contains(&key) {
            let chain: Vec<String> = self.stack.iter().chain([&key]).map(|p| p.display().to_string()).collect();
            return Err(at.error(format!("`source {name}` makes a cycle: {}", chain.join(" → "))));
        }
        if self.stack.len() >= MAX_SOURCE_DEPTH {
            return Err(at.error(format!("`source` nested deeper than {MAX_SOURCE_DEPTH} files")));
        }
        self.stack.push(key);
        self.files.push(path.clone());
        let mut tree = SpecTree::default();
        let result = Parser::new(&text, &path, self.stack, self.files, self.nesting).file(&mut tree);
        self.stack.pop();
        result.map(|()| tree)
    }

    /// `key = value, …` up to the closing `}` of a block opened at `opened`.
    fn params(&mut self, title: &str, opened: &Location) -> Result<Vec<Param>> {
        let mut params = Vec::new();
        loop {
            match self.next_significant() {
                None => {
                    return Err(opened.error(format!(
                        "block `{title}` opened here is never closed (`}}` missing before the end of {})",
                        self.file.display()
                    )))
                }
                Some(b'}') => {
                    self.bump();
                    return Ok(params);
                }
                Some(_) => {}
            }
            let location = self.here();
            let key = self.key(title)?;
            let value = self.value(&format!("`{key}`"))?;
            params.push(Param { key, value, location });
            match self.next_significant() {
                Some(b',') => {
                    self.bump();
                }
                Some(b'}') | None => {}
                other => {
                    return Err(self.error(format!(
                        "expected `,` or `}}` after the value of `{}` in `{title}`, found {}",
                        params.last().map_or("", |p| p.key.as_str()),
                        Self::describe(other)
                    )))
                }
            }
        }
    }

    /// A parameter name: the text up to `=` on the same line, trimmed.
    fn key(&mut self, title: &str) -> Result<String> {
        let start = self.pos;
        while let Some(b) = self.peek() {
            if b == b'=' {
                let key = String::from_utf8_lossy(&self.text[start..self.pos]).trim().to_string();
                self.bump();
                if key.is_empty() {
                    return Err(self.error(format!("a parameter of `{title}` has no name before `=`")));
                }
                return Ok(key);
            }
            if b == b'\n' || is_special(b) {
                break;
            }
            self.pos += 1;
        }
        let text = String::from_utf8_lossy(&self.text[start..self.pos]).trim().to_string();
        Err(self.error(format!(
            "expected `name = value` in `{title}`, found `{text}` followed by {}",
            Self::describe(self.peek())
        )))
    }

    /// One value; `what` names it for errors.
    fn value(&mut self, what: &str) -> Result<Node> {
        let location = match self.next_significant() {
            None => return Err(self.error(format!("expected a value for {what}, found the end of the file"))),
            Some(_) => self.here(),
        };
        let value = match self.peek() {
            Some(b'[') => {
                self.bump();
                Value::List(self.nested(&location, |p| p.list(what, &location))?)
            }
            Some(b'"') => {
                self.bump();
                let start = self.pos;
                while let Some(b) = self.peek() {
                    if b == b'"' || b == b'\n' {
                        break;
                    }
                    self.pos += 1;
                }
                if self.peek() != Some(b'"') {
                    return Err(location.error(format!("unterminated string for {what}")));
                }
                let text = String::from_utf8_lossy(&self.text[start..self.pos]).into_owned();
                self.bump();
                Value::Text(text)
            }
            Some(b) if is_special(b) => {
                return Err(self.error(format!("expected a value for {what}, found `{}`", b as char)))
            }
            _ => {
                let word = self.word("a value")?;
                if word == "source" {
                    let included = self.include(&location)?;
                    let mut blocks = included.blocks;
                    if blocks.len() != 1 || !included.instantiations.is_empty() || !included.topologies.is_empty() {
                        return Err(location.error(format!(
                            "a `source` used as the value of {what} must hold exactly one block; it holds {}",
                            blocks.len()
                        )));
                    }
                    Value::Block(blocks.remove(0))
                } else if self.next_significant() == Some(b'{') {
                    self.bump();
                    let params = self.nested(&location, |p| p.params(&word, &location))?;
                    Value::Block(Block { type_name: word, name: None, params, location: location.clone() })
                } else if word.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+' || c == '.') {
                    number(&word).ok_or_else(|| location.error(format!("bad number `{word}` for {what}")))?
                } else {
                    Value::Text(word)
                }
            }
        };
        Ok(Node { value, location })
    }

    /// List items up to `]` (the `[` already read, at `opened`).
    fn list(&mut self, what: &str, opened: &Location) -> Result<Vec<Node>> {
        let mut items = Vec::new();
        loop {
            match self.next_significant() {
                None | Some(b'}') => {
                    return Err(opened.error(format!("list for {what} opened here is never closed (`]` missing)")))
                }
                Some(b']') => {
                    self.bump();
                    return Ok(items);
                }
                _ => {}
            }
            items.push(self.value(what)?);
            match self.next_significant() {
                Some(b',') => {
                    self.bump();
                }
                Some(b']') | Some(b'}') | None => {}
                other => {
                    return Err(self.error(format!(
                        "expected `,` or `]` in the list for {what}, found {}",
                        Self::describe(other)
                    )))
                }
            }
        }
    }

    /// `instantiate [ names ] as TYPE` (the keyword already read at `at`).
    fn instantiation(&mut self, at: Location) -> Result<Instantiation> {
        self.expect(b'[', "after `instantiate`")?;
        let items = self.list("`instantiate`", &at)?;
        let names = items
            .into_iter()
            .map(|n| match n.value {
                Value::Text(t) => Ok(t),
                _ => Err(n.location.error("`instantiate` lists component names")),
            })
            .collect::<Result<Vec<_>>>()?;
        let as_word = self.word("`as` after the instance list")?;
        if as_word != "as" {
            return Err(self.error(format!("expected `as` after the instance list, found `{as_word}`")));
        }
        let block = self.word("a block name after `as`")?;
        Ok(Instantiation { names, block, location: at })
    }

    /// `TYPE NAME [ children ]` of a topology (after the `topology` keyword, or inside one).
    fn topology_node(&mut self, at: Location) -> Result<TopologyNode> {
        let location = if self.next_significant().is_some() { self.here() } else { at.clone() };
        let type_name = self.word("a component type in the topology")?;
        let name = self.word("a component name in the topology")?;
        self.expect(b'[', &format!("after `{type_name} {name}` in the topology"))?;
        let opened = self.here();
        let mut children = Vec::new();
        loop {
            match self.next_significant() {
                None => {
                    return Err(opened.error(format!(
                        "the topology below `{type_name} {name}` is never closed (`]` missing)"
                    )))
                }
                Some(b']') => {
                    self.bump();
                    break;
                }
                Some(b',') => {
                    self.bump();
                }
                _ => {
                    let here = self.here();
                    children.push(self.nested(&here, |p| p.topology_node(here.clone()))?);
                }
            }
        }
        Ok(TopologyNode { type_name, name, children, location })
    }
}

/// A number as libparam reads it: decimal or `0x` integers, else a float.
fn number(word: &str) -> Option<Value> {
    let (negative, digits) = match word.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, word.strip_prefix('+').unwrap_or(word)),
    };
    if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        let v = i64::from_str_radix(hex, 16).ok()?;
        return Some(Value::Int(if negative { -v } else { v }));
    }
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        return word.parse::<i64>().ok().map(Value::Int);
    }
    let x: f64 = word.parse().ok()?;
    x.is_finite().then_some(Value::Float(x))
}

/// The points of an extracted seek curve file.
#[derive(Debug, Clone, PartialEq)]
pub struct SeekCurveFile {
    /// `(distance in cylinders, ms)`, as listed.
    pub points: Vec<(u32, f64)>,
    /// Set when the number of rows differs from the declared count.
    pub note: Option<String>,
}

/// A DiskSim extracted seek curve (`Full seek curve`): a first line `Seek distances
/// measured: <n>` and `<n>` lines `distance, ms` (a third column, a standard deviation, is
/// allowed and ignored). `named_at` is where the file was named, for a missing file.
pub fn parse_seek_file(path: &Path, named_at: &Location) -> Result<SeekCurveFile> {
    let bytes = read_bounded(path)
        .map_err(|e| named_at.error(format!("cannot read seek curve `{}`: {e}", path.display())))?;
    let text = String::from_utf8(bytes)
        .map_err(|e| named_at.error(format!("cannot read seek curve `{}`: not UTF-8 text: {e}", path.display())))?;
    let at = |line: usize, message: String| Error::Spec { file: path.to_path_buf(), line: line as u64, message };
    let mut lines = text.lines().enumerate();
    let declared = loop {
        match lines.next() {
            None => return Err(at(1, "empty seek curve: expected `Seek distances measured: <n>`".into())),
            Some((_, l)) if l.trim().is_empty() => continue,
            Some((i, l)) => {
                let count = l
                    .trim()
                    .strip_prefix("Seek distances measured:")
                    .and_then(|n| n.trim().parse::<usize>().ok());
                break count.ok_or_else(|| at(i + 1, format!("expected `Seek distances measured: <n>`, found `{}`", l.trim())))?;
            }
        }
    };
    // Not preallocated from `declared`: the count is whatever the file says.
    let mut points: Vec<(u32, f64)> = Vec::new();
    for (i, line) in lines {
        let fields: Vec<&str> = line.split([',', ' ', '\t']).filter(|f| !f.is_empty()).collect();
        if fields.is_empty() {
            continue;
        }
        if fields.len() < 2 || fields.len() > 3 {
            return Err(at(i + 1, format!("expected `distance, ms`, found `{}`", line.trim())));
        }
        let distance = fields[0]
            .parse::<u32>()
            .map_err(|_| at(i + 1, format!("bad number `{}`: a seek distance is a whole number of cylinders", fields[0])))?;
        let ms = fields[1]
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| at(i + 1, format!("bad number `{}` for a seek time in ms", fields[1])))?;
        // Checked here as well as by the seek model, so that the message names this line.
        if ms < 0.0 {
            return Err(at(i + 1, format!("seek time {} ms is negative", readable(ms))));
        }
        if let Some(&(previous, _)) = points.last() {
            if distance <= previous {
                return Err(at(
                    i + 1,
                    format!("distance {distance} follows {previous}: distances must be in strictly increasing order"),
                ));
            }
        }
        points.push((distance, ms));
    }
    let note = (points.len() != declared).then(|| {
        format!("{}:1: the seek curve declares {declared} points but lists {}; all listed points are used", path.display(), points.len())
    });
    Ok(SeekCurveFile { points, note })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system temp dir for one test.
    pub(crate) fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("raidlab-diskspec-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn spec_error(result: Result<SpecTree>) -> (PathBuf, u64, String) {
        match result {
            Err(Error::Spec { file, line, message }) => (file, line, message),
            other => panic!("expected a spec error, got {other:?}"),
        }
    }

    const SAMPLE: &str = "# a comment\n\
disksim_disk Disk-A.1 {\n\
   Per-request overhead time = 0.25,   # trailing comment\n\
   Max queue length = 0x10,\n\
   Scheduler = disksim_ioqueue {\n\
      Scheduling policy = 1\n\
   },\n\
   Sizes  = [ exponential, -1.5e-1, 8 ],\n\
   Name = \"with spaces\",\n\
}\n\
instantiate [ disk0, disk1 ] as Disk-A.1\n\
topology disksim_iodriver driver0 [\n\
   disksim_bus bus0 [ disksim_disk disk0 [] ]\n\
]\n";

    #[test]
    fn blocks_lists_numbers_words_and_statements_parse_with_their_lines() {
        let tree = parse_str(SAMPLE, Path::new("/x/sample.parv")).unwrap();
        assert_eq!(tree.blocks.len(), 1);
        let b = &tree.blocks[0];
        assert_eq!(b.title(), "disksim_disk Disk-A.1");
        assert_eq!(b.location.line, 2);
        let keys: Vec<&str> = b.params.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["Per-request overhead time", "Max queue length", "Scheduler", "Sizes", "Name"]);
        assert_eq!(b.params[0].value.value, Value::Float(0.25));
        assert_eq!(b.params[1].value.value, Value::Int(16));
        assert_eq!(b.params[1].location.line, 4);
        match &b.params[2].value.value {
            Value::Block(inner) => {
                assert_eq!(inner.type_name, "disksim_ioqueue");
                assert_eq!(inner.params[0].value.value, Value::Int(1));
                assert_eq!(inner.params[0].location.line, 6);
            }
            other => panic!("{other:?}"),
        }
        match &b.params[3].value.value {
            Value::List(items) => {
                assert_eq!(items[0].value, Value::Text("exponential".into()));
                assert_eq!(items[1].value, Value::Float(-0.15));
                assert_eq!(items[2].value, Value::Int(8));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(b.params[4].value.value, Value::Text("with spaces".into()));
        assert_eq!(tree.instantiations[0].names, ["disk0", "disk1"]);
        assert_eq!(tree.instantiations[0].block, "Disk-A.1");
        let top = &tree.topologies[0];
        assert_eq!((top.type_name.as_str(), top.name.as_str(), top.location.line), ("disksim_iodriver", "driver0", 12));
        assert_eq!(top.children[0].children[0].name, "disk0");
    }

    #[test]
    fn source_includes_resolve_against_the_including_file() {
        let dir = scratch("include");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("top.parv"), "source sub/disk.diskspecs\n").unwrap();
        std::fs::write(dir.join("sub/disk.diskspecs"), "disksim_disk D {\n Model = source d.model\n}\n").unwrap();
        std::fs::write(dir.join("sub/d.model"), "\n\ndm_disk M { Block count = 5 }\n").unwrap();
        let tree = parse_file(&dir.join("top.parv")).unwrap();
        assert_eq!(tree.files.len(), 3);
        let model = match &tree.blocks[0].params[0].value.value {
            Value::Block(b) => b,
            other => panic!("{other:?}"),
        };
        assert_eq!(model.title(), "dm_disk M");
        assert_eq!(*model.location.file, dir.join("sub").join("d.model"));
        assert_eq!(model.params[0].location.line, 3);
    }

    #[test]
    fn malformed_files_give_spec_errors_with_file_and_line() {
        let dir = scratch("malformed");
        let f = dir.join("bad.parv");
        let err = |text: &str| spec_error(parse_str(text, &f));
        let (file, line, message) = err("disksim_disk D {\n a = 1\n}\n\ndisksim_flux F {\n}\n");
        assert_eq!((file, line), (f.clone(), 5));
        assert!(message.contains("unknown block `disksim_flux`"), "{message}");
        let (_, line, message) = err("dm_disk M {\n Number of cylinders = 12x4,\n}\n");
        assert_eq!(line, 2);
        assert!(message.contains("bad number `12x4`"), "{message}");
        let (_, line, message) = err("# head\ndm_disk M {\n a = 1,\n b = [ 1, 2 ],\n");
        assert_eq!(line, 2);
        assert!(message.contains("never closed"), "{message}");
        let (_, line, message) = err("dm_disk M {\n a = [ 1, 2 \n}\n");
        assert_eq!(line, 2);
        assert!(message.contains("expected `,` or `]`") || message.contains("never closed"), "{message}");
        let (_, line, message) = err("dm_disk M {\n a = 1\n b = 2\n}\n");
        assert_eq!(line, 3);
        assert!(message.contains("expected `,` or `}`"), "{message}");
        let (_, line, message) = err("dm_disk M {\n just words\n}\n");
        assert_eq!(line, 2);
        assert!(message.contains("expected `name = value`"), "{message}");
        let (_, line, _) = err("\ninstantiate [ a ] with B\n");
        assert_eq!(line, 2);
        let (_, line, message) = err("topology disksim_iodriver d [\n disksim_bus b [\n");
        assert_eq!(line, 2);
        assert!(message.contains("never closed"), "{message}");
    }

    #[test]
    fn a_missing_source_file_names_the_including_file_and_line() {
        let dir = scratch("missing");
        std::fs::write(dir.join("a.diskspecs"), "\ndisksim_disk D {\n  Model = source nowhere.model,\n}\n").unwrap();
        std::fs::write(dir.join("top.parv"), "# top\nsource a.diskspecs\n").unwrap();
        let (file, line, message) = spec_error(parse_file(&dir.join("top.parv")));
        assert_eq!((file, line), (dir.join("a.diskspecs"), 3));
        assert!(message.contains("cannot read source file `nowhere.model`"), "{message}");
        let (file, line, _) = spec_error(parse_str("source gone.parv\n", &dir.join("x.parv")));
        assert_eq!((file, line), (dir.join("x.parv"), 1));
    }

    #[test]
    fn sourcing_a_device_a_directory_or_too_many_files_is_an_error() {
        let dir = scratch("bounded");
        for (target, expected) in [("/dev/zero", "not a regular file"), (".", "is a directory")] {
            std::fs::write(dir.join("top.parv"), format!("# top\nsource {target}\n")).unwrap();
            let (file, line, message) = spec_error(parse_file(&dir.join("top.parv")));
            assert_eq!((file, line), (dir.join("top.parv"), 2));
            assert!(message.contains(expected), "{message}");
        }
        // Each level sources the next twice: 2^25 reads without a bound on files read.
        for level in 0..25 {
            std::fs::write(dir.join(format!("f{level}.parv")), format!("source f{0}.parv\nsource f{0}.parv\n", level + 1))
                .unwrap();
        }
        std::fs::write(dir.join("f25.parv"), "dm_disk M { }\n").unwrap();
        let (_, _, message) = spec_error(parse_file(&dir.join("f0.parv")));
        assert!(message.contains("more than 1000 files"), "{message}");
        let named = Location { file: Arc::new(dir.join("m.model")), line: 4 };
        match parse_seek_file(Path::new("/dev/zero"), &named) {
            Err(Error::Spec { line: 4, message, .. }) => assert!(message.contains("not a regular file"), "{message}"),
            other => panic!("expected a spec error, got {other:?}"),
        }
    }

    #[test]
    fn include_cycles_are_errors() {
        let dir = scratch("cycle");
        std::fs::write(dir.join("a.parv"), "source b.parv\n").unwrap();
        std::fs::write(dir.join("b.parv"), "\n\nsource a.parv\n").unwrap();
        let (file, line, message) = spec_error(parse_file(&dir.join("a.parv")));
        assert_eq!((file, line), (dir.join("b.parv"), 3));
        assert!(message.contains("cycle"), "{message}");
        // A file may be sourced twice when it is not its own ancestor.
        std::fs::write(dir.join("c.parv"), "source d.parv\nsource d.parv\n").unwrap();
        std::fs::write(dir.join("d.parv"), "dm_disk M { }\n").unwrap();
        assert_eq!(parse_file(&dir.join("c.parv")).unwrap().blocks.len(), 2);
    }

    #[test]
    fn nesting_deeper_than_the_limit_is_an_error_not_a_stack_overflow() {
        let f = Path::new("/x/deep.parv");
        let deep = 100_000;
        let blocks = |levels: usize| format!("dm_disk D {{\n a = {}1{}\n}}\n", "x { b = ".repeat(levels), " }".repeat(levels));
        for (text, line) in [
            (blocks(deep), 2),
            (format!("dm_disk D {{\n a = {}{}\n}}\n", "[".repeat(deep), "]".repeat(deep)), 2),
            (format!("topology {}{}\n", "disksim_bus b [ ".repeat(deep), "]".repeat(deep)), 1),
        ] {
            let (file, at, message) = spec_error(parse_str(&text, f));
            assert_eq!((file.as_path(), at), (f, line));
            assert!(message.contains("nested deeper than 64"), "{message}");
        }
        parse_str(&blocks(MAX_NESTING), f).unwrap();
    }

    #[test]
    fn every_shared_disksim_file_parses() {
        let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/diskspecs"));
        let mut parsed = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if ["parv", "diskspecs", "model"].contains(&ext) {
                let tree = parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
                assert!(!tree.blocks.is_empty(), "{}", path.display());
                parsed += 1;
            }
        }
        assert_eq!(parsed, 10 + 11 + 11);
    }

    #[test]
    fn seek_files_parse_and_report_bad_rows() {
        let dir = scratch("seek");
        let named = Location { file: Arc::new(dir.join("m.model")), line: 7 };
        std::fs::write(dir.join("ok.seek"), "Seek distances measured: 3\n1,\t1.5\n10, 2.0, 0.1\n\n100 4.25\n").unwrap();
        let curve = parse_seek_file(&dir.join("ok.seek"), &named).unwrap();
        assert_eq!(curve.points, [(1, 1.5), (10, 2.0), (100, 4.25)]);
        assert!(curve.note.is_none());
        std::fs::write(dir.join("bad.seek"), "Seek distances measured: 2\n1, 1.5\n2, fast\n").unwrap();
        let (file, line, message) = spec_error(parse_seek_file(&dir.join("bad.seek"), &named).map(|_| SpecTree::default()));
        assert_eq!((file, line), (dir.join("bad.seek"), 3));
        assert!(message.contains("bad number `fast`"));
        let (file, line, _) = spec_error(parse_seek_file(&dir.join("none.seek"), &named).map(|_| SpecTree::default()));
        assert_eq!((file, line), (dir.join("m.model"), 7));
        for (rows, line, expected) in [
            ("1, -1.5\n2, 2.0\n", 2, "negative"),
            ("1, 1.5\n20, 2.0\n\n10, 3.0\n", 5, "strictly increasing"),
            ("1, 1.5\n1, 2.0\n", 3, "strictly increasing"),
        ] {
            std::fs::write(dir.join("bad.seek"), format!("Seek distances measured: 3\n{rows}")).unwrap();
            let (file, at, message) = spec_error(parse_seek_file(&dir.join("bad.seek"), &named).map(|_| SpecTree::default()));
            assert_eq!((file, at), (dir.join("bad.seek"), line), "{rows}");
            assert!(message.contains(expected), "{message}");
        }
    }

    #[test]
    fn a_huge_declared_seek_point_count_is_only_a_note() {
        let dir = scratch("seek-count");
        let named = Location { file: Arc::new(dir.join("m.model")), line: 7 };
        std::fs::write(dir.join("huge.seek"), "Seek distances measured: 99999999999999999\n1, 1.5\n10, 2.0\n").unwrap();
        let curve = parse_seek_file(&dir.join("huge.seek"), &named).unwrap();
        assert_eq!(curve.points, [(1, 1.5), (10, 2.0)]);
        assert!(curve.note.unwrap().contains("declares 99999999999999999 points but lists 2"));
    }
}
