//! The functions a kubectl template can call: Go's builtins (`text/template/funcs.go`)
//! and the two kubectl adds (`exists`, `base64decode`, from cli-runtime's
//! `template.go`), each with Go's parameter types, because those decide which
//! arguments are accepted and how errors read (`error calling len: len of type
//! float64`).

use std::borrow::Cow;

use super::printf;
use super::value::{Kind, Val};
use crate::go_fmt;

/// How an argument is converted before the call: Go functions take `reflect.Value`
/// (the value as is, possibly invalid), `interface{}` (an invalid value becomes a nil
/// interface) or `string` (anything else is an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    Value,
    Any,
    Str,
}

type Call = for<'a> fn(Vec<Val<'a>>, &str) -> Result<Val<'a>, String>;

/// A function: its fixed parameters, the type of its variadic ones, its body.
pub(crate) struct Builtin {
    pub name: &'static str,
    pub fixed: &'static [Param],
    pub variadic: Option<Param>,
    pub call: Call,
}

use Param::{Any, Str, Value};

static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "and",
        fixed: &[Value],
        variadic: Some(Value),
        call: short_circuit,
    },
    Builtin {
        name: "or",
        fixed: &[Value],
        variadic: Some(Value),
        call: short_circuit,
    },
    Builtin {
        name: "not",
        fixed: &[Value],
        variadic: None,
        call: not,
    },
    Builtin {
        name: "len",
        fixed: &[Value],
        variadic: None,
        call: length,
    },
    Builtin {
        name: "index",
        fixed: &[Value],
        variadic: Some(Value),
        call: index,
    },
    Builtin {
        name: "slice",
        fixed: &[Value],
        variadic: Some(Value),
        call: slice,
    },
    Builtin {
        name: "call",
        fixed: &[Value],
        variadic: Some(Value),
        call,
    },
    Builtin {
        name: "print",
        fixed: &[],
        variadic: Some(Any),
        call: print,
    },
    Builtin {
        name: "printf",
        fixed: &[Str],
        variadic: Some(Any),
        call: printf,
    },
    Builtin {
        name: "println",
        fixed: &[],
        variadic: Some(Any),
        call: println,
    },
    Builtin {
        name: "html",
        fixed: &[],
        variadic: Some(Any),
        call: html,
    },
    Builtin {
        name: "js",
        fixed: &[],
        variadic: Some(Any),
        call: js,
    },
    Builtin {
        name: "urlquery",
        fixed: &[],
        variadic: Some(Any),
        call: urlquery,
    },
    Builtin {
        name: "eq",
        fixed: &[Value],
        variadic: Some(Value),
        call: eq,
    },
    Builtin {
        name: "ne",
        fixed: &[Value, Value],
        variadic: None,
        call: ne,
    },
    Builtin {
        name: "lt",
        fixed: &[Value, Value],
        variadic: None,
        call: lt,
    },
    Builtin {
        name: "le",
        fixed: &[Value, Value],
        variadic: None,
        call: le,
    },
    Builtin {
        name: "gt",
        fixed: &[Value, Value],
        variadic: None,
        call: gt,
    },
    Builtin {
        name: "ge",
        fixed: &[Value, Value],
        variadic: None,
        call: ge,
    },
    // kubectl's additions.
    Builtin {
        name: "exists",
        fixed: &[Any],
        variadic: Some(Any),
        call: exists,
    },
    Builtin {
        name: "base64decode",
        fixed: &[Str],
        variadic: None,
        call: base64decode,
    },
];

/// The function called `name`, if any.
pub(crate) fn lookup(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Whether templates may call `name` (checked while parsing, as Go does).
pub(crate) fn is_defined(name: &str) -> bool {
    lookup(name).is_some()
}

fn arg<'v, 'a>(args: &'v [Val<'a>], i: usize) -> &'v Val<'a> {
    args.get(i).unwrap_or(&Val::INVALID)
}

/// Go's `indirectInterface`: the value inside an interface; a nil one is invalid.
fn indirect_interface(v: Val<'_>) -> Val<'_> {
    v.unboxed()
}

fn truth(v: &Val<'_>) -> bool {
    v.kind.truth()
}

/// `and` and `or` short-circuit, so the evaluator implements them.
fn short_circuit<'a>(_: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    Err("unreachable".into())
}

fn not<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    Ok(Val::new(Kind::Bool(!truth(arg(&args, 0)))))
}

fn length<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    let item = arg(&args, 0);
    let n = match &item.kind {
        Kind::Nil => return Err("len of nil pointer".into()),
        // Go calls `Type()` on the invalid value and reports the panic.
        Kind::Invalid => return Err("reflect: call of reflect.Value.Type on zero Value".into()),
        Kind::Map(m) => m.len(),
        Kind::List(l) => l.len(),
        Kind::Str(s) => s.len(),
        other => return Err(format!("len of type {}", other.type_name())),
    };
    Ok(Val::new(Kind::Int(n as i64)))
}

/// Go's `indexArg`: an integer index no larger than `cap`.
fn index_arg(index: &Val<'_>, cap: usize) -> Result<usize, String> {
    let x = match (&index.kind, index.boxed) {
        (Kind::Invalid, _) => return Err("cannot index slice/array with nil".into()),
        (Kind::Int(i) | Kind::Int64(i), false) => *i,
        (Kind::Uint8(u), false) => i64::from(*u),
        _ => {
            return Err(format!(
                "cannot index slice/array with type {}",
                index.type_name()
            ));
        }
    };
    if x < 0 || x as u64 > cap as u64 {
        return Err(format!("index out of range: {x}"));
    }
    Ok(x as usize)
}

fn index<'a>(mut args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    let indexes = args.split_off(1.min(args.len()));
    let mut item = indirect_interface(args.pop().unwrap_or(Val::INVALID));
    if !item.is_valid() {
        return Err("index of untyped nil".into());
    }
    for index in indexes {
        let index = indirect_interface(index);
        if item.kind == Kind::Nil {
            return Err("index of nil pointer".into());
        }
        item = match &item.kind {
            Kind::List(items) => {
                let x = index_arg(&index, items.len())?;
                let element = items.get(x).ok_or("reflect: slice index out of range")?;
                Val::element(element)
            }
            Kind::Str(s) => {
                let x = index_arg(&index, s.len())?;
                let byte = s.get(x).ok_or("reflect: string index out of range")?;
                Val::new(Kind::Uint8(*byte))
            }
            Kind::Map(m) => {
                let key = match &index.kind {
                    Kind::Str(k) => k.clone(),
                    Kind::Invalid => return Err("value is nil; should be of type string".into()),
                    other => {
                        return Err(format!(
                            "value has type {}; should be string",
                            other.type_name()
                        ));
                    }
                };
                // A missing key gives the zero value of the element type: a nil
                // interface.
                std::str::from_utf8(&key)
                    .ok()
                    .and_then(|k| m.get(k))
                    .map_or(
                        Val {
                            kind: Kind::Nil,
                            boxed: true,
                        },
                        Val::element,
                    )
            }
            other => return Err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

fn slice<'a>(mut args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    let indexes = args.split_off(1.min(args.len()));
    let item = indirect_interface(args.pop().unwrap_or(Val::INVALID));
    if !item.is_valid() {
        return Err("slice of untyped nil".into());
    }
    if indexes.len() > 3 {
        return Err(format!("too many slice indexes: {}", indexes.len()));
    }
    // The bound is the capacity in Go; a decoded slice's spare capacity is an
    // allocation detail, so here it is the length.
    let cap = match &item.kind {
        Kind::Str(s) => {
            if indexes.len() == 3 {
                return Err("cannot 3-index slice a string".into());
            }
            s.len()
        }
        Kind::List(l) => l.len(),
        other => return Err(format!("can't slice item of type {}", other.type_name())),
    };
    let mut idx = [0, cap, 0];
    for (i, index) in indexes.iter().enumerate() {
        idx[i] = index_arg(index, cap)?;
    }
    if idx[0] > idx[1] {
        return Err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(format!("invalid slice index: {} > {}", idx[1], idx[2]));
    }
    Ok(match item.kind {
        Kind::Str(Cow::Borrowed(s)) => Val::str(&s[idx[0]..idx[1]]),
        Kind::Str(Cow::Owned(s)) => Val::str(s[idx[0]..idx[1]].to_vec()),
        Kind::List(l) => Val::new(Kind::List(&l[idx[0]..idx[1]])),
        _ => Val::INVALID,
    })
}

/// `call` never finds a function in decoded JSON; its errors name the callee as Go
/// 1.23 does.
fn call<'a>(args: Vec<Val<'a>>, callee: &str) -> Result<Val<'a>, String> {
    let f = indirect_interface(arg(&args, 0).clone());
    if !f.is_valid() {
        return Err("call of nil".into());
    }
    Err(format!(
        "non-function {callee} of type {}",
        f.kind.type_name()
    ))
}

fn kinds<'a>(args: &[Val<'a>]) -> Vec<Kind<'a>> {
    args.iter().map(|a| a.clone().unboxed().kind).collect()
}

fn print<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    Ok(Val::str(printf::sprint(&kinds(&args))))
}

fn println<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    Ok(Val::str(printf::sprintln(&kinds(&args))))
}

fn printf<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    let format = match &arg(&args, 0).kind {
        Kind::Str(s) => s.clone(),
        _ => Cow::Borrowed(&b""[..]),
    };
    Ok(Val::str(printf::sprintf(
        &format,
        &kinds(args.get(1..).unwrap_or_default()),
    )))
}

/// Go's `evalArgs`: `fmt.Sprint` of the arguments, a nil one printed `<no value>`.
fn eval_args(args: &[Val<'_>]) -> Vec<u8> {
    if let [only] = args
        && let Kind::Str(s) = &only.kind
    {
        return s.to_vec();
    }
    let printable: Vec<Kind<'_>> = args
        .iter()
        .map(|a| match a.clone().unboxed().kind {
            Kind::Invalid => Kind::Str(Cow::Borrowed(&b"<no value>"[..])),
            k => k,
        })
        .collect();
    printf::sprint(&printable)
}

fn html<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    let mut out = Vec::new();
    for b in eval_args(&args) {
        match b {
            0 => out.extend_from_slice("\u{fffd}".as_bytes()),
            b'"' => out.extend_from_slice(b"&#34;"),
            b'\'' => out.extend_from_slice(b"&#39;"),
            b'&' => out.extend_from_slice(b"&amp;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b => out.push(b),
        }
    }
    Ok(Val::str(out))
}

fn js<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    let text = eval_args(&args);
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if c < 0x80 {
            match c {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\'' => out.extend_from_slice(b"\\'"),
                b'"' => out.extend_from_slice(b"\\\""),
                b'<' => out.extend_from_slice(b"\\u003C"),
                b'>' => out.extend_from_slice(b"\\u003E"),
                b'&' => out.extend_from_slice(b"\\u0026"),
                b'=' => out.extend_from_slice(b"\\u003D"),
                c if c < b' ' => out.extend_from_slice(format!("\\u00{c:02X}").as_bytes()),
                c => out.push(c),
            }
            i += 1;
            continue;
        }
        match go_fmt::runes(&text[i..]).next() {
            Some(Ok(r)) => {
                if go_fmt::is_print(r) {
                    out.extend_from_slice(&text[i..i + r.len_utf8()]);
                } else {
                    out.extend_from_slice(format!("\\u{:04X}", u32::from(r)).as_bytes());
                }
                i += r.len_utf8();
            }
            // A stray byte decodes as U+FFFD, which is printable: Go copies the byte.
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(Val::str(out))
}

fn urlquery<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    let mut out = Vec::new();
    for b in eval_args(&args) {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b),
            b' ' => out.push(b'+'),
            b => out.extend_from_slice(format!("%{b:02X}").as_bytes()),
        }
    }
    Ok(Val::str(out))
}

/// The comparable basic kinds of Go's `basicKind`.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Basic {
    Invalid,
    Bool,
    Complex,
    Int,
    Float,
    Str,
    Uint,
}

fn basic_kind(v: &Kind<'_>) -> Basic {
    match v {
        Kind::Bool(_) => Basic::Bool,
        Kind::Int(_) | Kind::Int64(_) => Basic::Int,
        Kind::Uint8(_) => Basic::Uint,
        Kind::Float(_) => Basic::Float,
        Kind::Complex(..) => Basic::Complex,
        Kind::Str(_) => Basic::Str,
        _ => Basic::Invalid,
    }
}

const BAD_COMPARISON_TYPE: &str = "invalid type for comparison";
const BAD_COMPARISON: &str = "incompatible types for comparison";

fn int_of(v: &Kind<'_>) -> i64 {
    match v {
        Kind::Int(i) | Kind::Int64(i) => *i,
        Kind::Uint8(u) => i64::from(*u),
        _ => 0,
    }
}

fn eq<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    let mut it = args.into_iter();
    let arg1 = indirect_interface(it.next().unwrap_or(Val::INVALID)).kind;
    let rest: Vec<Kind<'a>> = it.map(|a| indirect_interface(a).kind).collect();
    if rest.is_empty() {
        return Err("missing argument for comparison".into());
    }
    let k1 = basic_kind(&arg1);
    for arg in &rest {
        let k2 = basic_kind(arg);
        let truth = if k1 != k2 {
            match (k1, k2) {
                // Integers compare across signedness.
                (Basic::Int, Basic::Uint) | (Basic::Uint, Basic::Int) => {
                    int_of(&arg1) == int_of(arg)
                }
                _ => {
                    if arg1 != Kind::Invalid && *arg != Kind::Invalid {
                        return Err(BAD_COMPARISON.into());
                    }
                    false
                }
            }
        } else {
            match (&arg1, arg) {
                (Kind::Bool(a), Kind::Bool(b)) => a == b,
                (Kind::Complex(a, b), Kind::Complex(c, d)) => a == c && b == d,
                (Kind::Float(a), Kind::Float(b)) => a == b,
                (Kind::Int(a) | Kind::Int64(a), Kind::Int(b) | Kind::Int64(b)) => a == b,
                (Kind::Uint8(a), Kind::Uint8(b)) => a == b,
                (Kind::Str(a), Kind::Str(b)) => a == b,
                _ => {
                    let same_kind = std::mem::discriminant(&arg1) == std::mem::discriminant(arg);
                    if !same_kind && arg1 != Kind::Invalid && *arg != Kind::Invalid {
                        let text = printf::sprintf(
                            b"non-comparable types %s: %v, %s: %v",
                            &[
                                arg1.clone(),
                                Kind::Str(arg1.type_name().as_bytes().into()),
                                Kind::Str(arg.type_name().as_bytes().into()),
                                arg.clone(),
                            ],
                        );
                        return Err(String::from_utf8_lossy(&text).into_owned());
                    }
                    if arg1 == Kind::Invalid || *arg == Kind::Invalid {
                        (arg1 == Kind::Invalid) == (*arg == Kind::Invalid)
                    } else {
                        // Maps and slices are not comparable in Go.
                        let text = printf::sprintf(
                            b"non-comparable type %s: %v",
                            &[arg.clone(), Kind::Str(arg.type_name().as_bytes().into())],
                        );
                        return Err(String::from_utf8_lossy(&text).into_owned());
                    }
                }
            }
        };
        if truth {
            return Ok(Val::new(Kind::Bool(true)));
        }
    }
    Ok(Val::new(Kind::Bool(false)))
}

fn ne<'a>(args: Vec<Val<'a>>, x: &str) -> Result<Val<'a>, String> {
    let equal = truth(&eq(args, x)?);
    Ok(Val::new(Kind::Bool(!equal)))
}

fn less(args: &[Val<'_>]) -> Result<bool, String> {
    let a = indirect_interface(arg(args, 0).clone()).kind;
    let b = indirect_interface(arg(args, 1).clone()).kind;
    let (k1, k2) = (basic_kind(&a), basic_kind(&b));
    if k1 == Basic::Invalid || k2 == Basic::Invalid {
        return Err(BAD_COMPARISON_TYPE.into());
    }
    if k1 != k2 {
        return match (k1, k2) {
            (Basic::Int, Basic::Uint) | (Basic::Uint, Basic::Int) => Ok(int_of(&a) < int_of(&b)),
            _ => Err(BAD_COMPARISON.into()),
        };
    }
    match (&a, &b) {
        (Kind::Float(x), Kind::Float(y)) => Ok(x < y),
        (Kind::Int(x) | Kind::Int64(x), Kind::Int(y) | Kind::Int64(y)) => Ok(x < y),
        (Kind::Uint8(x), Kind::Uint8(y)) => Ok(x < y),
        (Kind::Str(x), Kind::Str(y)) => Ok(x < y),
        _ => Err(BAD_COMPARISON_TYPE.into()),
    }
}

fn lt<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    Ok(Val::new(Kind::Bool(less(&args)?)))
}

fn less_or_equal(args: Vec<Val<'_>>) -> Result<bool, String> {
    if less(&args)? {
        return Ok(true);
    }
    Ok(truth(&eq(args, "")?))
}

fn le<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    Ok(Val::new(Kind::Bool(less_or_equal(args)?)))
}

fn gt<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    Ok(Val::new(Kind::Bool(!less_or_equal(args)?)))
}

fn ge<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    Ok(Val::new(Kind::Bool(!less(&args)?)))
}

/// kubectl's `exists`: whether `index` with these arguments would find a value that
/// is not nil. (With no indexes, even a missing value "exists", as in kubectl.)
fn exists<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    let no = Ok(Val::new(Kind::Bool(false)));
    let mut it = args.into_iter();
    // `reflect.ValueOf` of the interface argument: nil becomes invalid.
    let mut v = it.next().unwrap_or(Val::INVALID).unboxed();
    for i in it {
        let index = i.unboxed().kind;
        if v.kind == Kind::Nil {
            return no;
        }
        v = match &v.kind {
            Kind::List(l) => match integer(&index).and_then(|x| l.get(x)) {
                Some(e) => Val::element(e),
                None => return no,
            },
            Kind::Str(s) => match integer(&index).and_then(|x| s.get(x)) {
                Some(b) => Val::new(Kind::Uint8(*b)),
                None => return no,
            },
            Kind::Map(m) => {
                let key: &[u8] = match &index {
                    // A nil key is the zero string.
                    Kind::Invalid => b"",
                    Kind::Str(k) => k,
                    _ => return no,
                };
                std::str::from_utf8(key).ok().and_then(|k| m.get(k)).map_or(
                    Val {
                        kind: Kind::Nil,
                        boxed: true,
                    },
                    Val::element,
                )
            }
            _ => return no,
        };
    }
    Ok(Val::new(Kind::Bool(v.kind != Kind::Nil)))
}

/// An integer index for `exists`, `None` for any other type or a negative value.
fn integer(index: &Kind<'_>) -> Option<usize> {
    match index {
        Kind::Int(i) | Kind::Int64(i) => usize::try_from(*i).ok(),
        Kind::Uint8(u) => Some(usize::from(*u)),
        _ => None,
    }
}

/// kubectl's `base64decode`: `base64.StdEncoding.DecodeString`, with Go's error.
fn base64decode<'a>(args: Vec<Val<'a>>, _: &str) -> Result<Val<'a>, String> {
    let input = match &arg(&args, 0).kind {
        Kind::Str(s) => s.clone(),
        _ => Cow::Borrowed(&b""[..]),
    };
    decode_base64(&input)
        .map(Val::str)
        .map_err(|at| format!("base64 decode failed: illegal base64 data at input byte {at}"))
}

fn decode_symbol(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Go's `Encoding.Decode` for the padded standard alphabet: newlines are skipped,
/// and an error gives the offset Go reports.
pub(crate) fn decode_base64(src: &[u8]) -> Result<Vec<u8>, usize> {
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    while si < src.len() {
        // Go's `decodeQuantum`.
        let mut dbuf = [0u8; 4];
        let mut dlen = 4;
        let mut j = 0;
        let mut trailing_garbage = None;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(si - j);
            }
            let c = src[si];
            si += 1;
            if let Some(v) = decode_symbol(c) {
                dbuf[j] = v;
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' {
                return Err(si - 1);
            }
            // Padding.
            match j {
                0 | 1 => return Err(si - 1),
                2 => {
                    while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                        si += 1;
                    }
                    if si == src.len() {
                        return Err(src.len());
                    }
                    if src[si] != b'=' {
                        return Err(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                si += 1;
            }
            if si < src.len() {
                trailing_garbage = Some(si);
            }
            dlen = j;
            break;
        }
        let val = u32::from(dbuf[0]) << 18
            | u32::from(dbuf[1]) << 12
            | u32::from(dbuf[2]) << 6
            | u32::from(dbuf[3]);
        let bytes = [(val >> 16) as u8, (val >> 8) as u8, val as u8];
        out.extend_from_slice(&bytes[..dlen - 1]);
        if let Some(at) = trailing_garbage {
            return Err(at);
        }
    }
    Ok(out)
}
