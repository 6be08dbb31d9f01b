//! One YAML document read as kubectl reads it: go-yaml v2 (YAML 1.1 scalars) into Go
//! values, then sigs.k8s.io/yaml's conversion of those values to JSON.
//!
//! No Rust crate resolves scalars the way go-yaml v2 does (`0400` is 256, `yes`/`on`/`y`
//! are booleans, `1_000` is 1000, `0x1F` is 31, timestamps stay strings, `.inf` is a
//! float that JSON then refuses), nor applies its mapping rules (a repeated key: the last
//! one wins; `<<` merges in document order), nor converts non-string keys as
//! sigs.k8s.io/yaml does. serde-saphyr comes close but not exactly (its YAML 1.1 mode
//! still differs on `0o17`, `08`, `y`, repeated keys in structs, key conversion), so
//! the events come from granit-parser (the parser under serde-saphyr, already in the
//! tree) and the resolution below is a hand-written port of go-yaml v2's `resolve.go`
//! and `decode.go` (mapping, merge) and of sigs.k8s.io/yaml's
//! `convertToJSONableObject`. Error texts are theirs, `yaml: line N: …` included.
//!
//! It sits at the bottom of the crate because two layers read YAML the way kubectl
//! does: the resource Builder's manifests (`resource::decode`) and the kubeconfig
//! files (`flags::config`; client-go reads them with the same go-yaml).
//!
//! Writing is here too: [`emit`] writes an object as kubectl's `-o yaml` does
//! (go-yaml v2's emitter, sharing this resolver to decide what must be quoted), with
//! map keys in go-yaml's order ([`key_order`]); [`kyaml`] writes kubectl's `-o kyaml`.

use std::collections::HashMap;
use std::rc::Rc;

pub mod emit;
mod key_order;
pub mod kyaml;
pub mod text;

use granit_parser::{ErrorKind, Event, Parser, ScalarStyle, ScanError};
use serde_json::Value;

/// A parse failure: go-yaml's text (without the `error converting YAML to JSON: `
/// prefix) and the 1-based line inside the document where it was found, if known.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlError {
    pub message: String,
    pub line: Option<usize>,
}

impl YamlError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            line: None,
        }
    }
}

/// Bounds on one document: the deepest nesting, and how many nodes alias expansion may
/// produce (see `decode::yaml_budget`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_depth: usize,
    pub max_nodes: usize,
    /// Scalar bytes, aliases expanded.
    pub max_bytes: usize,
}

/// A node as the parser produced it; aliases share the anchored node.
#[derive(Debug)]
enum Node {
    Scalar {
        value: String,
        plain: bool,
        tag: Option<String>,
    },
    Seq(Vec<Rc<Node>>),
    Map(Vec<(Rc<Node>, Rc<Node>)>),
    Alias(Rc<Node>),
}

/// A Go value as go-yaml v2 decodes into `interface{}`.
#[derive(Debug, Clone, PartialEq)]
pub enum GoValue {
    Nil,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    Seq(Vec<GoValue>),
    /// Entries in first-insertion order; a repeated key replaced the value in place.
    Map(Vec<(GoValue, GoValue)>),
}

/// Reads the first document of `text` into JSON, as `yaml.Unmarshal` then `json.Marshal`
/// do in sigs.k8s.io/yaml. An empty document is `null`.
pub fn to_json(text: &str, limits: Limits) -> Result<Value, YamlError> {
    let root = parse(text, limits)?;
    let Some(root) = root else {
        return Ok(Value::Null);
    };
    let mut decoder = Decoder {
        nodes: 0,
        bytes: 0,
        limits,
        depth: 0,
    };
    let go = decoder.value(&root)?;
    to_jsonable(go)
}

const LONG_TAG: &str = "tag:yaml.org,2002:";

/// Builds the node tree of the first document.
fn parse(text: &str, limits: Limits) -> Result<Option<Rc<Node>>, YamlError> {
    let mut options = granit_parser::Options::default();
    options.emit_unresolved_aliases = true;
    options.emit_comments = false;
    let mut parser = Parser::new_from_str_with_options(text, options);
    // Open collections: the items so far (a mapping's keys and values alternate).
    let mut stack: Vec<(bool, usize, Vec<Rc<Node>>)> = Vec::new();
    let mut anchors: HashMap<usize, Rc<Node>> = HashMap::new();
    let mut root = None;
    while let Some(event) = parser.next_event() {
        let event = match event {
            // A directive after a complete document ends it: go-yaml reads no further.
            Err(e)
                if root.is_some()
                    && matches!(e.kind(), ErrorKind::MissingDocumentEndBeforeDirective) =>
            {
                break;
            }
            other => other,
        };
        let (event, _span) = event.map_err(|e| scan_error(text, e, limits.max_depth))?;
        let (node, anchor) = match event {
            Event::DocumentStart(..) => continue,
            // Only the first document of a chunk counts, as in `yaml.Unmarshal`.
            Event::DocumentEnd | Event::StreamEnd => break,
            Event::Scalar(value, style, anchor, tag) => {
                let tag = tag.map(|t| full_tag(t.handle(), t.suffix()));
                let node = Node::Scalar {
                    value: value.into_owned(),
                    plain: style == ScalarStyle::Plain,
                    tag,
                };
                (Rc::new(node), anchor)
            }
            Event::SequenceStart(_, anchor, _) | Event::MappingStart(_, anchor, _) => {
                let is_map = matches!(event, Event::MappingStart(..));
                if stack.len() >= limits.max_depth {
                    return Err(YamlError::new(format!(
                        "exceeded max depth of {}",
                        limits.max_depth
                    )));
                }
                stack.push((is_map, anchor, Vec::new()));
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some((is_map, anchor, items)) = stack.pop() else {
                    continue;
                };
                let node = if is_map {
                    let mut pairs = Vec::with_capacity(items.len() / 2);
                    let mut it = items.into_iter();
                    while let (Some(k), Some(v)) = (it.next(), it.next()) {
                        pairs.push((k, v));
                    }
                    Node::Map(pairs)
                } else {
                    Node::Seq(items)
                };
                (Rc::new(node), anchor)
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some(target) => (Rc::new(Node::Alias(target.clone())), 0),
                None => return Err(YamlError::new("unknown anchor referenced")),
            },
            Event::UnresolvedAlias(name) => {
                return Err(YamlError::new(format!(
                    "unknown anchor '{name}' referenced"
                )));
            }
            _ => continue,
        };
        if anchor != 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            Some((_, _, items)) => items.push(node),
            None => root = Some(node),
        }
    }
    Ok(root)
}

fn full_tag(handle: &str, suffix: &str) -> String {
    format!("{handle}{suffix}")
}

/// go-yaml's `parser.fail`: a scanner error names the line of its problem, a parser
/// error the line before it (libyaml's 0-based mark printed as it is).
fn scan_error(text: &str, e: ScanError, max_depth: usize) -> YamlError {
    use ErrorKind as K;
    let line = e.marker().line();
    let message = match e.kind() {
        K::RecursionLimitExceeded => format!("exceeded max depth of {max_depth}"),
        K::UnclosedFlowCollection { .. }
        | K::UnexpectedEofFlowSequence
        | K::UnexpectedEofFlowMapping
        | K::UnexpectedEofImplicitFlowMapping => unclosed_flow_collection(text, &e),
        K::TabInPlainScalar => return tab_in_plain_scalar(text, &e, line),
        // libyaml notices the missing ':' on the line after the key.
        K::SimpleKeyExpected => format!("line {}: could not find expected ':'", line + 1),
        kind => match go_yaml_words(kind) {
            Some((message, scanner)) => at_mark(message, scanner, line),
            // granit's own words where go-yaml's are not known: an honest message.
            None => format!("line {line}: {}", e.info()),
        },
    };
    YamlError {
        message,
        line: Some(line),
    }
}

/// An unclosed flow collection runs to the end of the stream, where libyaml reports
/// it (a parser error: the 0-based line of the end); granit points at the bracket.
/// With nothing after the bracket, a node was expected.
fn unclosed_flow_collection(text: &str, e: &ScanError) -> String {
    use ErrorKind as K;
    let after = e
        .marker()
        .byte_offset()
        .and_then(|at| text.get(at + 1..))
        .unwrap_or_default();
    let empty = after
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
    let message = match e.kind() {
        _ if empty => "did not find expected node content",
        K::UnclosedFlowCollection { open: '[' } | K::UnexpectedEofFlowSequence => {
            "did not find expected ',' or ']'"
        }
        _ => "did not find expected ',' or '}'",
    };
    let end = text.matches('\n').count();
    if end == 0 {
        message.to_string()
    } else {
        format!("line {end}: {message}")
    }
}

/// libyaml stops at the tab itself: the first line after the scalar's start whose
/// indentation holds a tab.
fn tab_in_plain_scalar(text: &str, e: &ScanError, line: usize) -> YamlError {
    let start = e.marker().byte_offset().unwrap_or(0);
    let tab_line = text
        .get(start..)
        .unwrap_or_default()
        .split('\n')
        .skip(1)
        .position(|l| l.trim_start_matches(' ').starts_with('\t'))
        .map_or(line, |i| line + 1 + i);
    YamlError {
        message: format!("line {tab_line}: found a tab character that violates indentation"),
        line: Some(tab_line),
    }
}

/// go-yaml's message for an error granit reports at a mark, and whether libyaml's
/// scanner (not its parser) reports it; `None` where go-yaml's words are not known.
fn go_yaml_words(kind: &ErrorKind) -> Option<(&'static str, bool)> {
    use ErrorKind as K;
    Some(match kind {
        K::BlockEntryInFlowCollection => ("did not find expected node content", false),
        K::InvalidQuotedScalarHexEscape => ("did not find expected hexdecimal number", true),
        K::MisplacedFlowCollectionEnd
        | K::InvalidTrailingDoubleQuotedScalar
        | K::InvalidTrailingSingleQuotedScalar => ("did not find expected key", false),
        K::MismatchedFlowCollectionEnd { open: '[', .. } => {
            ("did not find expected ',' or ']'", false)
        }
        K::MismatchedFlowCollectionEnd { .. } => ("did not find expected ',' or '}'", false),
        K::UnexpectedCharacter { .. }
        | K::TabNotAllowed
        | K::TabInBlockIndentation
        | K::TabInIndentation
        | K::TabAtBlockScalarStart => ("found character that cannot start any token", true),
        K::InvalidSimpleKey | K::MappingValueNotAllowed => {
            ("mapping values are not allowed in this context", true)
        }
        K::UnclosedQuotedScalar | K::UnexpectedEof | K::InvalidQuotedScalarIndent => {
            ("found unexpected end of stream", true)
        }
        K::UnknownQuotedScalarEscape => ("found unknown escape character", true),
        K::ExpectedBlockMappingKey => ("did not find expected key", false),
        K::ExpectedBlockSequenceEntry => ("did not find expected '-' indicator", false),
        K::ExpectedFlowSequenceSeparator => ("did not find expected ',' or ']'", false),
        K::ExpectedFlowMappingSeparator => ("did not find expected ',' or '}'", false),
        K::ExpectedNodeContent => ("did not find expected node content", false),
        K::BlockSequenceEntryNotAllowed => (
            "block sequence entries are not allowed in this context",
            true,
        ),
        K::InvalidIndentation => ("did not find expected key", false),
        _ => return None,
    })
}

/// `message` at the mark's `line`: go-yaml prints no line for a mark on the first
/// line (its 0-based line 0), and a parser's mark is a line early.
fn at_mark(message: &str, scanner: bool, line: usize) -> String {
    let shown = match scanner {
        true if line <= 1 => 0,
        true => line,
        false => line.saturating_sub(1),
    };
    if shown == 0 {
        message.to_string()
    } else {
        format!("line {shown}: {message}")
    }
}

struct Decoder {
    nodes: usize,
    bytes: usize,
    limits: Limits,
    depth: usize,
}

const MERGE_TAG: &str = "tag:yaml.org,2002:merge";

impl Decoder {
    /// Counts one node against the alias budget (go-yaml v2's "excessive aliasing").
    fn count(&mut self) -> Result<(), YamlError> {
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(YamlError::new("document contains excessive aliasing"));
        }
        Ok(())
    }

    fn value(&mut self, node: &Rc<Node>) -> Result<GoValue, YamlError> {
        self.count()?;
        match &**node {
            Node::Alias(target) => self.value(target),
            Node::Scalar { value, plain, tag } => {
                self.bytes += value.len();
                if self.bytes > self.limits.max_bytes {
                    return Err(YamlError::new("document contains excessive aliasing"));
                }
                scalar(value, *plain, tag.as_deref())
            }
            Node::Seq(items) => {
                self.enter()?;
                let out = items
                    .iter()
                    .map(|i| self.value(i))
                    .collect::<Result<_, _>>()?;
                self.depth -= 1;
                Ok(GoValue::Seq(out))
            }
            Node::Map(_) => {
                self.enter()?;
                let mut out = MapBuilder::default();
                self.mapping(node, &mut out)?;
                self.depth -= 1;
                Ok(GoValue::Map(out.entries))
            }
        }
    }

    fn enter(&mut self) -> Result<(), YamlError> {
        self.depth += 1;
        if self.depth > self.limits.max_depth {
            return Err(YamlError::new(format!(
                "exceeded max depth of {}",
                self.limits.max_depth
            )));
        }
        Ok(())
    }

    /// go-yaml v2's `decoder.mapping` into a `map[interface{}]interface{}`: entries are
    /// set in document order (a repeated key replaces the earlier value), a `<<` merges
    /// its map(s) at that point.
    fn mapping(&mut self, node: &Node, out: &mut MapBuilder) -> Result<(), YamlError> {
        let node = resolve_alias(node);
        let Node::Map(pairs) = node else {
            return Err(YamlError::new(MERGE_WANTS_MAP));
        };
        for (k, v) in pairs {
            if is_merge(k) {
                self.merge(v, out)?;
                continue;
            }
            let key = self.value(k)?;
            if matches!(key, GoValue::Map(_) | GoValue::Seq(_)) {
                return Err(YamlError::new(format!(
                    "invalid map key: {}",
                    go_syntax(&key, false)
                )));
            }
            let value = self.value(v)?;
            out.set(key, value);
        }
        Ok(())
    }

    /// go-yaml v2's `decoder.merge`: a map, an alias of a map, or a sequence of those
    /// (applied last to first, so earlier ones take precedence).
    fn merge(&mut self, node: &Rc<Node>, out: &mut MapBuilder) -> Result<(), YamlError> {
        self.count()?;
        match &**node {
            Node::Map(_) => self.mapping(node, out),
            Node::Alias(target) if matches!(resolve_alias(target), Node::Map(_)) => {
                self.mapping(target, out)
            }
            Node::Seq(items) => {
                for item in items.iter().rev() {
                    self.count()?;
                    if !matches!(resolve_alias(item), Node::Map(_)) {
                        return Err(YamlError::new(MERGE_WANTS_MAP));
                    }
                    self.mapping(item, out)?;
                }
                Ok(())
            }
            _ => Err(YamlError::new(MERGE_WANTS_MAP)),
        }
    }
}

/// A `map[interface{}]interface{}` being filled: entries in first-insertion order, a
/// repeated key replacing the value in place. String keys (nearly all) are found through
/// an index, so a mapping of many keys stays linear.
#[derive(Default)]
struct MapBuilder {
    entries: Vec<(GoValue, GoValue)>,
    strings: HashMap<String, usize>,
}

impl MapBuilder {
    fn set(&mut self, key: GoValue, value: GoValue) {
        let at = match &key {
            GoValue::Str(s) => self.strings.get(s).copied(),
            _ => self.entries.iter().position(|(k, _)| go_key_eq(k, &key)),
        };
        match at {
            Some(at) => self.entries[at].1 = value,
            None => {
                if let GoValue::Str(s) = &key {
                    self.strings.insert(s.clone(), self.entries.len());
                }
                self.entries.push((key, value));
            }
        }
    }
}

const MERGE_WANTS_MAP: &str = "map merge requires map or sequence of maps as the value";

fn resolve_alias(mut node: &Node) -> &Node {
    while let Node::Alias(target) = node {
        node = target;
    }
    node
}

/// go-yaml v2's `isMerge`: a plain `<<` or one tagged `!!merge`.
fn is_merge(node: &Node) -> bool {
    match resolve_alias(node) {
        Node::Scalar { value, plain, tag } => {
            value == "<<" && ((*plain && tag.is_none()) || tag.as_deref() == Some(MERGE_TAG))
        }
        _ => false,
    }
}

/// Go's `==` on interface values of the kinds a key can hold (NaN never equals itself).
fn go_key_eq(a: &GoValue, b: &GoValue) -> bool {
    match (a, b) {
        (GoValue::Float(x), GoValue::Float(y)) => x == y,
        _ => a == b,
    }
}

/// The Go value of one scalar: go-yaml v2's `decoder.scalar` into `interface{}`.
fn scalar(value: &str, plain: bool, tag: Option<&str>) -> Result<GoValue, YamlError> {
    // The non-specific `!` and application tags leave the text as it is.
    let tag = match tag {
        None => "",
        Some(t) if t.starts_with(LONG_TAG) => t,
        Some(_) => return Ok(GoValue::Str(value.to_string())),
    };
    if tag.is_empty() && !plain {
        return Ok(GoValue::Str(value.to_string()));
    }
    let short = tag.strip_prefix(LONG_TAG).unwrap_or_default();
    match short {
        "" | "str" | "bool" | "int" | "float" | "null" | "timestamp" => {}
        "binary" => {
            use base64::Engine as _;
            let clean: String = value.chars().filter(|c| !c.is_whitespace()).collect();
            return base64::engine::general_purpose::STANDARD
                .decode(clean)
                .map(|bytes| GoValue::Str(String::from_utf8_lossy(&bytes).into_owned()))
                .map_err(|_| YamlError::new("!!binary value contains invalid base64 data"));
        }
        _ => return Ok(GoValue::Str(value.to_string())),
    }
    let (rtag, out) = resolve(value, short);
    if short.is_empty() || short == rtag || short == "str" {
        return Ok(out);
    }
    // A `!!float` accepts an integer (go-yaml converts int and int64, not uint64).
    if let ("float", "int", GoValue::Int(i)) = (short, rtag, &out) {
        return Ok(GoValue::Float(*i as f64));
    }
    Err(YamlError::new(format!(
        "cannot decode !!{rtag} `{value}` as a !!{short}"
    )))
}

/// go-yaml v2's `resolve`: the tag (short form) and value a plain scalar stands for.
fn resolve(text: &str, tag: &str) -> (&'static str, GoValue) {
    let str_value = || ("str", GoValue::Str(text.to_string()));
    if tag == "str" {
        return str_value();
    }
    let hint = match text.bytes().next() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => return str_value(),
    };
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return ("bool", GoValue::Bool(true));
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return ("bool", GoValue::Bool(false));
        }
        "" | "~" | "null" | "Null" | "NULL" => return ("null", GoValue::Nil),
        ".nan" | ".NaN" | ".NAN" => return ("float", GoValue::Float(f64::NAN)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return ("float", GoValue::Float(f64::INFINITY));
        }
        "-.inf" | "-.Inf" | "-.INF" => return ("float", GoValue::Float(f64::NEG_INFINITY)),
        "<<" => return ("merge", GoValue::Str(text.to_string())),
        _ => {}
    }
    match hint {
        b'.' => {
            // Not the pattern below: `strconv.ParseFloat` itself, which also takes
            // `_` between digits (`.5_5`).
            if let Some(f) = gotext::gotemplate::number::parse_float(text) {
                return ("float", GoValue::Float(f));
            }
        }
        b'D' | b'S' => {
            // A timestamp decodes into `interface{}` as its text.
            if (tag.is_empty() || tag == "timestamp") && is_timestamp(text) {
                return ("timestamp", GoValue::Str(text.to_string()));
            }
            let plain: String = text.chars().filter(|&c| c != '_').collect();
            if let Some(i) = parse_go_int(&plain) {
                return ("int", GoValue::Int(i));
            }
            if let Some(u) = parse_go_uint(&plain) {
                return ("int", GoValue::Uint(u));
            }
            if let Some(f) = parse_float(&plain) {
                return ("float", GoValue::Float(f));
            }
        }
        _ => {}
    }
    str_value()
}

/// go-yaml v2's `parseTimestamp`: four digits and `-`, then `time.Parse` with
/// `2006-1-2T15:4:5.999999999Z07:00` (`t` too), `2006-1-2 15:4:5.999999999` or
/// `2006-1-2`, as Go's `time.Parse` reads those layouts: one- or two-digit fields in
/// range, any number of fraction digits after `.` or `,`, a run of spaces for the
/// layout's one space, and a zone of `Z` or `±hh:mm` with at most 24 hours and 60
/// minutes.
fn is_timestamp(s: &str) -> bool {
    /// `getnum(value, false)`: one digit, or two.
    fn number(s: &[u8]) -> Option<(u32, &[u8])> {
        match s {
            [a, b, rest @ ..] if a.is_ascii_digit() && b.is_ascii_digit() => {
                Some((u32::from(a - b'0') * 10 + u32::from(b - b'0'), rest))
            }
            [a, rest @ ..] if a.is_ascii_digit() => Some((u32::from(a - b'0'), rest)),
            _ => None,
        }
    }
    /// `15:4:5.999999999`, the rest after it.
    fn clock(s: &[u8]) -> Option<&[u8]> {
        let (hour, rest) = number(s)?;
        let (minute, rest) = number(rest.strip_prefix(b":")?)?;
        let (second, mut rest) = number(rest.strip_prefix(b":")?)?;
        if hour >= 24 || minute >= 60 || second >= 60 {
            return None;
        }
        if let [b'.' | b',', d, ..] = rest
            && d.is_ascii_digit()
        {
            let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            rest = &rest[1 + digits..];
        }
        Some(rest)
    }
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let date = || -> Option<&[u8]> {
        let year: u32 = s[..4].parse().ok()?;
        let (month, rest) = number(&b[5..])?;
        let (day, rest) = number(rest.strip_prefix(b"-")?)?;
        let days = days_in_month(year, month)?;
        (1..=days).contains(&day).then_some(rest)
    };
    let Some(rest) = date() else { return false };
    match rest {
        [] => true,
        [b'T' | b't', rest @ ..] => match clock(rest) {
            Some(b"Z") => true,
            Some([sign, h1, h2, b':', m1, m2]) => {
                let digits = [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit());
                let hours =
                    u32::from(h1.wrapping_sub(b'0')) * 10 + u32::from(h2.wrapping_sub(b'0'));
                let minutes =
                    u32::from(m1.wrapping_sub(b'0')) * 10 + u32::from(m2.wrapping_sub(b'0'));
                matches!(sign, b'+' | b'-') && digits && hours <= 24 && minutes <= 60
            }
            _ => false,
        },
        [b' ', ..] => {
            let rest = &rest[rest.iter().take_while(|c| **c == b' ').count()..];
            clock(rest).is_some_and(<[u8]>::is_empty)
        }
        _ => false,
    }
}

/// The days of `month` (1–12) in `year` of the Gregorian calendar, as Go's `daysIn`.
pub fn days_in_month(year: u32, month: u32) -> Option<u32> {
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    Some(match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return None,
    })
}

/// go-yaml's `yamlStyleFloat` (`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
/// then `strconv.ParseFloat`, which fails on overflow.
fn parse_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return None;
        }
    } else {
        if digits(&mut i) == 0 {
            return None;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Sign and base prefix as `strconv.ParseInt(s, 0, 64)` reads them (`0x`, `0o`, `0b`,
/// a bare leading `0` for octal).
fn go_int_parts(s: &str) -> Option<(bool, u32, &str)> {
    let (neg, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = rest.get(..2).map(str::to_ascii_lowercase);
    let (base, digits) = match lower.as_deref() {
        Some("0x") => (16, &rest[2..]),
        Some("0o") => (8, &rest[2..]),
        Some("0b") => (2, &rest[2..]),
        _ if rest.len() > 1 && rest.starts_with('0') => (8, &rest[1..]),
        _ => (10, rest),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(base)) {
        return None;
    }
    Some((neg, base, digits))
}

fn parse_go_int(s: &str) -> Option<i64> {
    let (neg, base, digits) = go_int_parts(s)?;
    let magnitude = u64::from_str_radix(digits, base).ok()?;
    if neg {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// `strconv.ParseUint(s, 0, 64)`: no sign.
fn parse_go_uint(s: &str) -> Option<u64> {
    if s.starts_with(['+', '-']) {
        return None;
    }
    let (_, base, digits) = go_int_parts(s)?;
    u64::from_str_radix(digits, base).ok()
}

/// sigs.k8s.io/yaml's `convertToJSONableObject` (keys to strings) and `json.Marshal`.
fn to_jsonable(value: GoValue) -> Result<Value, YamlError> {
    Ok(match value {
        GoValue::Nil => Value::Null,
        GoValue::Bool(b) => Value::Bool(b),
        GoValue::Int(i) => Value::from(i),
        GoValue::Uint(u) => Value::from(u),
        GoValue::Float(f) => json_float(f)?,
        GoValue::Str(s) => Value::String(s),
        GoValue::Seq(items) => Value::Array(
            items
                .into_iter()
                .map(to_jsonable)
                .collect::<Result<_, _>>()?,
        ),
        GoValue::Map(entries) => {
            let mut out = serde_json::Map::new();
            for (k, v) in entries {
                let key = match &k {
                    GoValue::Str(s) => s.clone(),
                    GoValue::Int(i) => i.to_string(),
                    GoValue::Bool(b) => b.to_string(),
                    GoValue::Float(f) => format_float32_key(*f),
                    GoValue::Nil => {
                        return Err(YamlError::new(format!(
                            "unsupported map key of type: %!s(<nil>), key: <nil>, value: {}",
                            go_syntax(&v, false)
                        )));
                    }
                    other => {
                        return Err(YamlError::new(format!(
                            "unsupported map key of type: {}, key: {}, value: {}",
                            go_type(other),
                            go_syntax(other, false),
                            go_syntax(&v, false)
                        )));
                    }
                };
                out.insert(key, to_jsonable(v)?);
            }
            Value::Object(out)
        }
    })
}

/// `json.Marshal` of a float64: NaN and infinities are refused; an integral value is
/// written without a fraction (Go prints `1000`, never `1000.0`), which serde_json
/// only does for integers.
fn json_float(f: f64) -> Result<Value, YamlError> {
    if f.is_nan() {
        return Err(YamlError::new("json: unsupported value: NaN"));
    }
    if f.is_infinite() {
        let sign = if f > 0.0 { "+" } else { "-" };
        return Err(YamlError::new(format!(
            "json: unsupported value: {sign}Inf"
        )));
    }
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        return Ok(Value::from(f as i64));
    }
    Ok(serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number))
}

/// `strconv.FormatFloat(f, 'g', -1, 32)` with go-yaml's spellings of the specials.
fn format_float32_key(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    let f = f as f32;
    go_g(&format!("{f}"), &format!("{f:e}"), 6)
}

/// Go's shortest `%g` from Rust's shortest round-trip forms (`plain`, and `sci` as
/// `{:e}` writes it): exponent form when the exponent is below -4 or at least
/// `threshold` (6 for `FormatFloat(…, 'g', -1, …)`, 21 for `%v`), with a signed
/// two-digit exponent.
fn go_g(plain: &str, sci: &str, threshold: i32) -> String {
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= threshold {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        plain.to_string()
    }
}

fn go_type(v: &GoValue) -> &'static str {
    match v {
        GoValue::Nil => "<nil>",
        GoValue::Bool(_) => "bool",
        GoValue::Int(_) => "int",
        GoValue::Uint(_) => "uint64",
        GoValue::Float(_) => "float64",
        GoValue::Str(_) => "string",
        GoValue::Seq(_) => "[]interface {}",
        GoValue::Map(_) => "map[interface {}]interface {}",
    }
}

/// Go's `%#v` of a value go-yaml produced (what its "invalid map key" error prints);
/// `boxed` when the value sits in an `interface{}` slot of a container, where a nil is
/// printed as `interface {}(nil)`.
pub(crate) fn go_syntax(v: &GoValue, boxed: bool) -> String {
    match v {
        GoValue::Nil if boxed => "interface {}(nil)".into(),
        GoValue::Nil => "<nil>".into(),
        GoValue::Bool(b) => b.to_string(),
        GoValue::Int(i) => i.to_string(),
        GoValue::Uint(u) => format!("0x{u:x}"),
        GoValue::Float(f) if f.is_nan() => "NaN".into(),
        GoValue::Float(f) if f.is_infinite() => if *f > 0.0 { "+Inf" } else { "-Inf" }.into(),
        GoValue::Float(f) => go_g(&format!("{f}"), &format!("{f:e}"), 21),
        GoValue::Str(s) => gotext::go_fmt::quote(s),
        GoValue::Seq(items) => {
            let inner: Vec<String> = items.iter().map(|i| go_syntax(i, true)).collect();
            format!("[]interface {{}}{{{}}}", inner.join(", "))
        }
        GoValue::Map(entries) => {
            // fmt prints map entries sorted by key.
            let mut sorted: Vec<&(GoValue, GoValue)> = entries.iter().collect();
            sorted.sort_by(|a, b| key_order(&a.0, &b.0));
            let inner: Vec<String> = sorted
                .iter()
                .map(|(k, v)| format!("{}:{}", go_syntax(k, true), go_syntax(v, true)))
                .collect();
            format!("map[interface {{}}]interface {{}}{{{}}}", inner.join(", "))
        }
    }
}

/// fmt's order of interface keys: nil first, then by kind, then by value.
fn key_order(a: &GoValue, b: &GoValue) -> std::cmp::Ordering {
    fn rank(v: &GoValue) -> u8 {
        match v {
            GoValue::Nil => 0,
            GoValue::Bool(_) => 1,
            GoValue::Int(_) => 2,
            GoValue::Uint(_) => 3,
            GoValue::Float(_) => 4,
            GoValue::Str(_) => 5,
            GoValue::Seq(_) | GoValue::Map(_) => 6,
        }
    }
    match (a, b) {
        (GoValue::Bool(x), GoValue::Bool(y)) => x.cmp(y),
        (GoValue::Int(x), GoValue::Int(y)) => x.cmp(y),
        (GoValue::Uint(x), GoValue::Uint(y)) => x.cmp(y),
        (GoValue::Float(x), GoValue::Float(y)) => x.total_cmp(y),
        (GoValue::Str(x), GoValue::Str(y)) => x.cmp(y),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// go-yaml prefixes its own errors with `yaml: `; the JSON conversion's are bare.
pub fn yaml_reason(e: &YamlError) -> String {
    if e.message.starts_with("json: ") || e.message.starts_with("unsupported map key") {
        e.message.clone()
    } else {
        format!("yaml: {}", e.message)
    }
}

/// One `---` document of a stream, read as go-yaml v2 reads it.
pub struct YamlDocument<'a> {
    /// The 1-based line of the stream where the document starts.
    pub line: usize,
    /// The document's text.
    pub body: &'a str,
    /// Its JSON value, or go-yaml's error (its line counted inside the document).
    pub value: Result<Value, YamlError>,
}

/// The documents of a YAML stream in order, blank and `null` ones skipped; a
/// separator line that carries text is `Err((line, text))` (kubectl's reader refuses
/// the stream there). The one reading of YAML streams: manifests and kubeconfig files.
pub fn documents(text: &str) -> impl Iterator<Item = Result<YamlDocument<'_>, (usize, &str)>> {
    split_yaml(text).into_iter().filter_map(|part| match part {
        Ok((line, body)) => document(line, body).map(Ok),
        Err(separator) => Some(Err(separator)),
    })
}

/// One part of a split stream (its first line and text) read as a document; `None`
/// when it is blank or `null`, which [`documents`] skips. For a reader that splits a
/// stream itself, line by line with [`separator`], without holding all of its text.
pub fn document(line: usize, body: &str) -> Option<YamlDocument<'_>> {
    if is_blank_yaml(body) {
        return None;
    }
    let value = to_json(body, yaml_limits(body.len()));
    if matches!(value, Ok(Value::Null)) {
        return None;
    }
    Some(YamlDocument { line, body, value })
}

/// Whether `line` (with or without its line break) separates documents: `None` for
/// a line of a document, `Some(Ok(()))` for a separator, `Some(Err(text))` for a
/// separator line that carries text (see [`split_yaml`]).
pub fn separator(line: &str) -> Option<Result<(), &str>> {
    let rest = line.strip_prefix("---")?.trim();
    if !rest.is_empty() && !rest.starts_with('#') {
        return Some(Err(rest));
    }
    Some(Ok(()))
}

/// A document (its first line and text), or the line and text of a separator line that
/// carries something other than a comment.
pub type Part<'a> = Result<(usize, &'a str), (usize, &'a str)>;

/// Splits at lines that start with `---` followed only by whitespace or a comment,
/// kubectl's `YAMLReader` rule (other text after `---` is an error there, and the
/// document before it is lost). Returns each
/// document with the 1-based line it starts on.
pub(crate) fn split_yaml(text: &str) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut start_line = 1;
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if let Some(separator) = separator(line) {
            if let Err(rest) = separator {
                // The reader fails before it hands out the document it was reading.
                parts.push(Err((i + 1, rest)));
                return parts;
            }
            parts.push(Ok((start_line, &text[start..offset])));
            start = offset + line.len();
            start_line = i + 2;
        }
        offset += line.len();
    }
    parts.push(Ok((start_line, &text[start..])));
    parts
}

/// Blank lines, comments and a `...` end marker only.
pub fn is_blank_yaml(body: &str) -> bool {
    body.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "..."
    })
}

/// The deepest nesting of mappings and sequences a YAML document may have: serde_json's
/// limit for JSON documents. go-yaml allows 10,000, but every stage that walks a value
/// recurses, and a thread's stack holds far fewer levels (a few hundred overflow a
/// 2 MiB stack in a debug build); a CRD's deepest schema is a few dozen levels.
pub const MAX_YAML_DEPTH: usize = 128;

/// A floor of the alias budget, for small documents: a few aliases of a big anchor
/// are legitimate.
const MIN_YAML_NODES: usize = 100_000;
const MIN_YAML_EXPANDED_BYTES: usize = 16 << 20;

/// The bounds of one YAML document of `len` bytes. The node budget grows with the
/// text itself: a document without aliases can never reach it (it has fewer nodes
/// than bytes), so only alias expansion does, and what expansion can add is a small
/// multiple of the input (or the floor above). Memory stays proportional to the
/// input, and an alias bomb fails early with go-yaml's message.
pub fn yaml_limits(len: usize) -> Limits {
    Limits {
        max_depth: MAX_YAML_DEPTH,
        max_nodes: MIN_YAML_NODES.max(len.saturating_mul(2)),
        max_bytes: MIN_YAML_EXPANDED_BYTES.max(len.saturating_mul(4)),
    }
}

#[cfg(test)]
mod tests;
