//! The evaluator: client-go's `JSONPath.FindResults`/`PrintResults` over
//! `serde_json::Value`, including the flat `{range}`…`{end}` state machine (nested
//! ranges, empty ranges, the "not in range" error) and the filter comparisons of
//! Go's `text/template` (`eq`, `lt`, … with their type errors).

use std::cmp::Ordering;

use serde_json::Value;

use super::parser::{Node, Param};
use crate::go_fmt;

/// One result of a path step: a value of the object, a literal of the template,
/// a byte of a string (`.*` on a string yields its bytes, as Go's reflection does),
/// or Go's invalid value (the input of an empty `range`).
#[derive(Debug, Clone)]
pub(crate) enum Val<'a> {
    Ref(&'a Value),
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Byte(u8),
    Invalid,
}

impl Val<'_> {
    /// Go's `template.Indirect(...)` reporting nil: JSON null or the invalid value.
    fn is_nil(&self) -> bool {
        matches!(self, Val::Ref(Value::Null) | Val::Invalid)
    }

    /// Go's `reflect.Type` name, for kubectl's "X is not array or slice".
    fn type_name(&self) -> &'static str {
        match self {
            Val::Ref(Value::Object(_)) => "map[string]interface {}",
            Val::Ref(Value::Array(_)) => "[]interface {}",
            Val::Ref(Value::String(_)) | Val::Str(_) => "string",
            Val::Ref(Value::Bool(_)) | Val::Bool(_) => "bool",
            Val::Ref(Value::Number(n)) if n.is_i64() || n.is_u64() => "int64",
            Val::Ref(Value::Number(_)) | Val::Float(_) => "float64",
            Val::Int(_) => "int",
            Val::Byte(_) => "uint8",
            Val::Ref(Value::Null) | Val::Invalid => "<nil>",
        }
    }

    /// `fmt.Print` of the value (kubectl's `evalToText`).
    pub(crate) fn text(&self) -> String {
        match self {
            Val::Ref(Value::Null) => "null".into(),
            Val::Ref(Value::Bool(b)) | Val::Bool(b) => b.to_string(),
            Val::Ref(Value::Number(n)) => go_fmt::number_v(n),
            Val::Ref(Value::String(s)) => s.clone(),
            Val::Ref(v) => go_fmt::json(v, None),
            Val::Str(s) => s.clone(),
            Val::Int(i) => i.to_string(),
            Val::Float(f) => go_fmt::float_v(*f),
            Val::Byte(b) => b.to_string(),
            Val::Invalid => "<no value>".into(),
        }
    }

    /// The value as JSON (for `jsonpath-as-json`).
    pub(crate) fn to_json(&self) -> Value {
        match self {
            Val::Ref(v) => (*v).clone(),
            Val::Str(s) => Value::String(s.clone()),
            Val::Int(i) => Value::from(*i),
            Val::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Val::Bool(b) => Value::Bool(*b),
            Val::Byte(b) => Value::from(*b),
            Val::Invalid => Value::Null,
        }
    }

    /// Whether kubectl prints it as JSON (maps and lists) rather than as text.
    pub(crate) fn is_container(&self) -> bool {
        matches!(self, Val::Ref(Value::Object(_) | Value::Array(_)))
    }
}

fn reborrow<'a>(v: &Val<'a>) -> Val<'a> {
    v.clone()
}

/// How deep `{range}` blocks may nest (client-go has no limit; real templates nest
/// two or three).
const MAX_RANGE_DEPTH: usize = 256;

/// The range state of client-go's `JSONPath` for one execution.
pub(crate) struct Eval<'t> {
    nodes: &'t [Node],
    allow_missing_keys: bool,
    begin_range: usize,
    in_range: usize,
    end_range: usize,
    last_end_node: Option<usize>,
}

/// A failed evaluation; the text is client-go's.
pub(crate) type EvalResult<T> = Result<T, String>;

impl<'t> Eval<'t> {
    pub(crate) fn new(nodes: &'t [Node], allow_missing_keys: bool) -> Self {
        Self {
            nodes,
            allow_missing_keys,
            begin_range: 0,
            in_range: 0,
            end_range: 0,
            last_end_node: None,
        }
    }

    /// The results of every top-level node from `start`, ranges expanded.
    pub(crate) fn find_results<'a>(
        &mut self,
        data: Val<'a>,
        start: usize,
    ) -> EvalResult<Vec<Vec<Val<'a>>>> {
        let cur = vec![data];
        let mut full = Vec::new();
        let mut i = start;
        while i < self.nodes.len() {
            let node = &self.nodes[i];
            let results = self.walk(&cur, node)?;
            if self.end_range > 0 && self.end_range <= self.in_range {
                self.end_range -= 1;
                self.last_end_node = Some(i);
                break;
            }
            if self.begin_range > 0 {
                if self.in_range >= MAX_RANGE_DEPTH {
                    // Each open range is a recursion here (and in client-go); bound it
                    // so that a hostile template cannot exhaust the stack.
                    return Err(format!("more than {MAX_RANGE_DEPTH} nested ranges"));
                }
                self.begin_range -= 1;
                self.in_range += 1;
                if results.is_empty() {
                    // Still walk the body so that its `{end}` is found.
                    self.find_results(Val::Invalid, i + 1)?;
                } else {
                    for value in results {
                        full.extend(self.find_results(value, i + 1)?);
                    }
                }
                self.in_range -= 1;
                if let Some(end) = self.last_end_node.filter(|&end| end > i) {
                    i = end;
                }
                i += 1;
                continue;
            }
            full.push(results);
            i += 1;
        }
        Ok(full)
    }

    fn walk<'a>(&mut self, input: &[Val<'a>], node: &Node) -> EvalResult<Vec<Val<'a>>> {
        match node {
            Node::List(nodes) => self.list(input, nodes),
            Node::Text(text) => Ok(vec![Val::Str(text.clone())]),
            Node::Field(name) => self.field(input, name),
            Node::Array(params) => array(input, *params),
            Node::Filter { left, right, op } => self.filter(input, left, right, op),
            Node::Int(i) => Ok(input.iter().map(|_| Val::Int(*i)).collect()),
            Node::Float(f) => Ok(input.iter().map(|_| Val::Float(*f)).collect()),
            Node::Bool(b) => Ok(input.iter().map(|_| Val::Bool(*b)).collect()),
            Node::Wildcard => Ok(input
                .iter()
                .filter(|v| !v.is_nil())
                .flat_map(children_of)
                .collect()),
            Node::Recursive => {
                let mut out = Vec::new();
                recursive(input, &mut out);
                Ok(out)
            }
            Node::Union(alternatives) => {
                let mut out = Vec::new();
                for alternative in alternatives {
                    out.extend(self.list(input, alternative)?);
                }
                Ok(out)
            }
            Node::Identifier(name) => match name.as_str() {
                "range" => {
                    self.begin_range += 1;
                    Ok(input.iter().map(reborrow).collect())
                }
                "end" => {
                    if self.in_range > 0 {
                        self.end_range += 1;
                        Ok(Vec::new())
                    } else {
                        Err("not in range, nothing to end".into())
                    }
                }
                other => Err(format!("unrecognized identifier {other}")),
            },
        }
    }

    fn list<'a>(&mut self, input: &[Val<'a>], nodes: &[Node]) -> EvalResult<Vec<Val<'a>>> {
        let mut cur: Vec<Val<'a>> = input.iter().map(reborrow).collect();
        for node in nodes {
            cur = self.walk(&cur, node)?;
        }
        Ok(cur)
    }

    fn field<'a>(&mut self, input: &[Val<'a>], name: &str) -> EvalResult<Vec<Val<'a>>> {
        if input.is_empty() {
            return Ok(Vec::new());
        }
        let found: Vec<Val<'a>> = input
            .iter()
            .filter_map(|v| match v {
                Val::Ref(Value::Object(map)) => map.get(name).map(Val::Ref),
                _ => None,
            })
            .collect();
        if found.is_empty() && !self.allow_missing_keys {
            return Err(format!("{name} is not found"));
        }
        Ok(found)
    }

    fn filter<'a>(
        &mut self,
        input: &[Val<'a>],
        left: &[Node],
        right: &[Node],
        op: &str,
    ) -> EvalResult<Vec<Val<'a>>> {
        let mut out = Vec::new();
        for value in input {
            let Val::Ref(Value::Array(items)) = value else {
                let shown = match value {
                    Val::Ref(v) => go_fmt::plain_v(v),
                    Val::Invalid => "<invalid reflect.Value>".to_string(),
                    other => other.text(),
                };
                return Err(format!(
                    "{shown} is not array or slice and cannot be filtered"
                ));
            };
            for item in items {
                let here = [Val::Ref(item)];
                let lefts = self.list(&here, left);
                if op == "exists" {
                    if lefts.is_ok_and(|l| !l.is_empty()) {
                        out.push(Val::Ref(item));
                    }
                    continue;
                }
                let lefts = lefts?;
                let l = match lefts.as_slice() {
                    [] => continue,
                    [one] => one.clone(),
                    _ => return Err("can only compare one element at a time".into()),
                };
                let rights = self.list(&here, right)?;
                let r = match rights.as_slice() {
                    [] => continue,
                    [one] => one.clone(),
                    _ => return Err("can only compare one element at a time".into()),
                };
                let pass = match op {
                    "<" => less(&l, &r)?,
                    ">" => !(less(&l, &r)? || equal(&l, &r)?),
                    "==" => equal(&l, &r)?,
                    "!=" => !equal(&l, &r)?,
                    "<=" => less(&l, &r)? || equal(&l, &r)?,
                    ">=" => !less(&l, &r)?,
                    other => return Err(format!("unrecognized filter operator {other}")),
                };
                if pass {
                    out.push(Val::Ref(item));
                }
            }
        }
        Ok(out)
    }
}

fn recursive<'a>(input: &[Val<'a>], out: &mut Vec<Val<'a>>) {
    for value in input {
        if value.is_nil() {
            continue;
        }
        let children = children_of(value);
        if !children.is_empty() {
            out.push(value.clone());
            recursive(&children, out);
        }
    }
}

/// The children Go's reflection iterates: map values (sorted by key here; Go's
/// order is random), list items, string bytes.
fn children_of<'a>(value: &Val<'a>) -> Vec<Val<'a>> {
    match value {
        Val::Ref(Value::Object(map)) => map.values().map(Val::Ref).collect(),
        Val::Ref(Value::Array(items)) => items.iter().map(Val::Ref).collect(),
        Val::Ref(Value::String(s)) => s.bytes().map(Val::Byte).collect(),
        Val::Str(s) => s.bytes().map(Val::Byte).collect(),
        _ => Vec::new(),
    }
}

fn array<'a>(input: &[Val<'a>], params: [Param; 3]) -> EvalResult<Vec<Val<'a>>> {
    let mut out = Vec::new();
    for value in input {
        if value.is_nil() {
            continue;
        }
        let Val::Ref(Value::Array(items)) = value else {
            return Err(format!("{} is not array or slice", value.type_name()));
        };
        let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
        let mut p = params;
        if !p[0].known {
            p[0].value = 0;
        }
        if p[0].value < 0 {
            p[0].value = p[0].value.saturating_add(len);
        }
        if !p[1].known {
            p[1].value = len;
        }
        if p[1].value < 0 || (p[1].value == 0 && p[1].derived) {
            p[1].value = p[1].value.saturating_add(len);
        }
        if p[1].value == p[0].value {
            // Zero elements asked for: client-go returns what it has so far.
            return Ok(out);
        }
        if p[0].value >= len || p[0].value < 0 {
            return Err(format!(
                "array index out of bounds: index {}, length {len}",
                p[0].value
            ));
        }
        if p[1].value > len || p[1].value < 0 {
            return Err(format!(
                "array index out of bounds: index {}, length {len}",
                p[1].value.saturating_sub(1)
            ));
        }
        if p[0].value > p[1].value {
            return Err(format!(
                "starting index {} is greater than ending index {}",
                p[0].value, p[1].value
            ));
        }
        let step = if p[2].known {
            if p[2].value <= 0 {
                return Err("step must be > 0".into());
            }
            usize::try_from(p[2].value).unwrap_or(usize::MAX)
        } else {
            1
        };
        // Both bounds are within 0..=len here.
        let (from, to) = (p[0].value as usize, p[1].value as usize);
        out.extend(items[from..to].iter().step_by(step).map(Val::Ref));
    }
    Ok(out)
}

/// Go's `text/template` basic kinds, for the filter comparisons.
enum Kind {
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
}

fn kind(v: &Val<'_>) -> EvalResult<Kind> {
    Ok(match v {
        Val::Ref(Value::Bool(b)) | Val::Bool(b) => Kind::Bool(*b),
        Val::Ref(Value::Number(n)) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Kind::Int(i128::from(i)),
            (None, Some(u)) => Kind::Int(i128::from(u)),
            _ => Kind::Float(n.as_f64().unwrap_or(0.0)),
        },
        Val::Int(i) => Kind::Int(i128::from(*i)),
        Val::Byte(b) => Kind::Int(i128::from(*b)),
        Val::Float(f) => Kind::Float(*f),
        Val::Ref(Value::String(s)) => Kind::Str(s.clone()),
        Val::Str(s) => Kind::Str(s.clone()),
        _ => return Err("invalid type for comparison".into()),
    })
}

fn equal(l: &Val<'_>, r: &Val<'_>) -> EvalResult<bool> {
    Ok(match (kind(l)?, kind(r)?) {
        (Kind::Bool(a), Kind::Bool(b)) => a == b,
        (Kind::Int(a), Kind::Int(b)) => a == b,
        (Kind::Float(a), Kind::Float(b)) => a == b,
        (Kind::Str(a), Kind::Str(b)) => a == b,
        _ => return Err("incompatible types for comparison".into()),
    })
}

fn less(l: &Val<'_>, r: &Val<'_>) -> EvalResult<bool> {
    Ok(match (kind(l)?, kind(r)?) {
        (Kind::Bool(_), Kind::Bool(_)) => return Err("invalid type for comparison".into()),
        (Kind::Int(a), Kind::Int(b)) => a < b,
        (Kind::Float(a), Kind::Float(b)) => a.partial_cmp(&b) == Some(Ordering::Less),
        (Kind::Str(a), Kind::Str(b)) => a < b,
        _ => return Err("incompatible types for comparison".into()),
    })
}
