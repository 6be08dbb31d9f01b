//! Go's `fmt` (`Sprint`, `Sprintln`, `Sprintf`) over template values: the verbs,
//! flags, widths and precisions of `fmt/print.go` and `fmt/format.go`, including
//! Go's way of reporting misuse inside the output (`%!d(float64=3)`,
//! `%!s(MISSING)`, `%!(EXTRA int=1)`), since `printf` in a kubectl template is fed
//! `float64`s where users expect integers and those texts are what they then see.
//!
//! Widths and precisions above 1e6 are refused as in Go (`%!(BADWIDTH)`), which also
//! bounds what one verb can allocate.

use super::value::Kind;
use crate::go_fmt;

const LDIGITS: &[u8; 17] = b"0123456789abcdefx";
const UDIGITS: &[u8; 17] = b"0123456789ABCDEFX";

#[derive(Default, Clone, Copy)]
struct Flags {
    wid_present: bool,
    prec_present: bool,
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    plus_v: bool,
    sharp_v: bool,
    wid: usize,
    prec: usize,
}

#[derive(Default)]
struct Pp {
    buf: Vec<u8>,
    f: Flags,
    reordered: bool,
    good_arg_num: bool,
}

/// `fmt.Sprint`: operands in `%v`, a space between two operands when neither is a
/// string.
pub(crate) fn sprint(args: &[Kind<'_>]) -> Vec<u8> {
    let mut p = Pp::default();
    let mut prev_string = false;
    for (i, arg) in args.iter().enumerate() {
        let is_string = matches!(arg, Kind::Str(_));
        if i > 0 && !is_string && !prev_string {
            p.buf.push(b' ');
        }
        p.print_arg(arg, 'v');
        prev_string = is_string;
    }
    p.buf
}

/// `fmt.Sprintln`: operands in `%v` separated by spaces, and a newline.
pub(crate) fn sprintln(args: &[Kind<'_>]) -> Vec<u8> {
    let mut p = Pp::default();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            p.buf.push(b' ');
        }
        p.print_arg(arg, 'v');
    }
    p.buf.push(b'\n');
    p.buf
}

/// `fmt.Sprintf`.
pub(crate) fn sprintf(format: &[u8], args: &[Kind<'_>]) -> Vec<u8> {
    let mut p = Pp::default();
    p.do_printf(format, args);
    p.buf
}

fn too_large(x: usize) -> bool {
    x > 1_000_000
}

/// Go's `parsenum`: a decimal number at `start`, `None` when there is none or it is
/// too large; the position after it either way.
fn parse_num(s: &[u8], start: usize) -> (Option<usize>, usize) {
    let mut num = 0usize;
    let mut is_num = false;
    let mut i = start;
    while i < s.len() && s[i].is_ascii_digit() {
        if too_large(num) {
            return (None, s.len());
        }
        num = num * 10 + usize::from(s[i] - b'0');
        is_num = true;
        i += 1;
    }
    (is_num.then_some(num), i)
}

/// `%[n]`: the argument index and the width of the bracket, or `None` if malformed.
fn parse_arg_number(format: &[u8]) -> (Option<usize>, usize) {
    if format.len() < 3 {
        return (None, 1);
    }
    for i in 1..format.len() {
        if format[i] == b']' {
            let (width, newi) = parse_num(format, 1);
            return match width {
                Some(w) if newi == i => (Some(w.wrapping_sub(1)), i + 1),
                _ => (None, i + 1),
            };
        }
    }
    (None, 1)
}

fn is_nil(arg: &Kind<'_>) -> bool {
    matches!(arg, Kind::Invalid | Kind::Nil)
}

impl Pp {
    fn write_padding(&mut self, n: usize) {
        let pad = if self.f.zero { b'0' } else { b' ' };
        self.buf.extend(std::iter::repeat_n(pad, n));
    }

    fn pad(&mut self, b: &[u8]) {
        if !self.f.wid_present || self.f.wid == 0 {
            self.buf.extend_from_slice(b);
            return;
        }
        let width = self.f.wid.saturating_sub(go_fmt::rune_count(b));
        if self.f.minus {
            self.buf.extend_from_slice(b);
            self.write_padding(width);
        } else {
            self.write_padding(width);
            self.buf.extend_from_slice(b);
        }
    }

    fn pad_string(&mut self, s: &str) {
        self.pad(s.as_bytes());
    }

    /// `%!verb(type=value)`, printed with the flags in force, as Go does.
    fn bad_verb(&mut self, verb: char, subject: &Kind<'_>) {
        self.buf.extend_from_slice(b"%!");
        self.write_rune(verb);
        self.buf.push(b'(');
        if is_nil(subject) {
            self.buf.extend_from_slice(b"<nil>");
        } else {
            self.buf.extend_from_slice(subject.type_name().as_bytes());
            self.buf.push(b'=');
            self.print_arg(subject, 'v');
        }
        self.buf.push(b')');
    }

    fn write_rune(&mut self, c: char) {
        let mut tmp = [0; 4];
        self.buf
            .extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
    }

    fn print_arg(&mut self, arg: &Kind<'_>, verb: char) {
        if is_nil(arg) {
            match verb {
                'T' | 'v' => self.pad_string("<nil>"),
                _ => self.bad_verb(verb, arg),
            }
            return;
        }
        match verb {
            'T' => {
                self.fmt_s(arg.type_name().as_bytes());
                return;
            }
            'p' => {
                self.fmt_pointer(arg, verb);
                return;
            }
            _ => {}
        }
        match arg {
            Kind::Map(_) | Kind::List(_) if verb == 'w' => self.bad_verb(verb, arg),
            _ => self.print_value(arg, verb, 0),
        }
    }

    /// `printValue`: scalars as `printArg` does, maps and slices element by element
    /// with the same verb.
    fn print_value(&mut self, value: &Kind<'_>, verb: char, depth: usize) {
        match value {
            Kind::Invalid | Kind::Nil => {
                // A nil interface inside a map or slice.
                if self.f.sharp_v {
                    self.buf.extend_from_slice(b"interface {}(nil)");
                } else {
                    self.buf.extend_from_slice(b"<nil>");
                }
            }
            Kind::Bool(b) => self.fmt_bool(*b, verb, value),
            Kind::Int(i) | Kind::Int64(i) => self.fmt_integer(*i as u64, true, verb, value),
            Kind::Uint8(u) => self.fmt_integer(u64::from(*u), false, verb, value),
            Kind::Float(f) => self.fmt_float(*f, verb, value),
            Kind::Complex(re, im) => self.fmt_complex(*re, *im, verb, value),
            Kind::Str(s) => self.fmt_string(s, verb, value),
            Kind::Map(map) => {
                if self.f.sharp_v {
                    self.buf.extend_from_slice(b"map[string]interface {}{");
                } else {
                    self.buf.extend_from_slice(b"map[");
                }
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        if self.f.sharp_v {
                            self.buf.extend_from_slice(b", ");
                        } else {
                            self.buf.push(b' ');
                        }
                    }
                    let k = Kind::Str(key.as_bytes().into());
                    self.print_element(&k, verb, depth);
                    self.buf.push(b':');
                    if let Some(v) = map.get(key) {
                        let v = super::value::Val::element(v).kind;
                        self.print_element(&v, verb, depth);
                    }
                }
                self.buf.push(if self.f.sharp_v { b'}' } else { b']' });
            }
            Kind::List(items) => {
                if self.f.sharp_v {
                    self.buf.extend_from_slice(b"[]interface {}{");
                } else {
                    self.buf.push(b'[');
                }
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        if self.f.sharp_v {
                            self.buf.extend_from_slice(b", ");
                        } else {
                            self.buf.push(b' ');
                        }
                    }
                    let v = super::value::Val::element(item).kind;
                    self.print_element(&v, verb, depth);
                }
                self.buf.push(if self.f.sharp_v { b'}' } else { b']' });
            }
        }
    }

    /// An element of a map or slice: `%w` is refused there before anything else.
    fn print_element(&mut self, v: &Kind<'_>, verb: char, depth: usize) {
        if verb == 'w' && !is_nil(v) {
            self.bad_verb(verb, v);
            return;
        }
        self.print_value(v, verb, depth + 1);
    }

    fn fmt_pointer(&mut self, value: &Kind<'_>, verb: char) {
        let address = match value {
            Kind::Map(m) => std::ptr::from_ref(*m) as usize,
            Kind::List(l) => l.as_ptr() as usize,
            _ => {
                self.bad_verb(verb, value);
                return;
            }
        };
        let sharp = self.f.sharp;
        self.f.sharp = !sharp;
        self.fmt_integer_base(address as u64, 16, false, 'v', LDIGITS);
        self.f.sharp = sharp;
    }

    fn fmt_bool(&mut self, v: bool, verb: char, subject: &Kind<'_>) {
        match verb {
            't' | 'v' => self.pad_string(if v { "true" } else { "false" }),
            _ => self.bad_verb(verb, subject),
        }
    }

    fn fmt_integer(&mut self, v: u64, signed: bool, verb: char, subject: &Kind<'_>) {
        match verb {
            'v' if self.f.sharp_v && !signed => {
                let sharp = self.f.sharp;
                self.f.sharp = true;
                self.fmt_integer_base(v, 16, false, 'v', LDIGITS);
                self.f.sharp = sharp;
            }
            'v' | 'd' => self.fmt_integer_base(v, 10, signed, verb, LDIGITS),
            'b' => self.fmt_integer_base(v, 2, signed, verb, LDIGITS),
            'o' | 'O' => self.fmt_integer_base(v, 8, signed, verb, LDIGITS),
            'x' => self.fmt_integer_base(v, 16, signed, verb, LDIGITS),
            'X' => self.fmt_integer_base(v, 16, signed, verb, UDIGITS),
            'c' => {
                let c = u32::try_from(v)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{fffd}');
                let mut tmp = [0; 4];
                self.pad(c.encode_utf8(&mut tmp).as_bytes());
            }
            'q' => {
                let c = u32::try_from(v)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{fffd}');
                let quoted = go_fmt::quote_rune(c, self.f.plus);
                self.pad_string(&quoted);
            }
            'U' => self.fmt_unicode(v),
            _ => self.bad_verb(verb, subject),
        }
    }

    /// Go's `fmt.fmtInteger`.
    fn fmt_integer_base(&mut self, u: u64, base: u64, signed: bool, verb: char, digits: &[u8; 17]) {
        let negative = signed && (u as i64) < 0;
        let mut u = if negative {
            (u as i64).unsigned_abs()
        } else {
            u
        };
        let mut prec = 0usize;
        if self.f.prec_present {
            prec = self.f.prec;
            if prec == 0 && u == 0 {
                let zero = self.f.zero;
                self.f.zero = false;
                self.write_padding(self.f.wid);
                self.f.zero = zero;
                return;
            }
        } else if self.f.zero && self.f.wid_present {
            prec = self.f.wid;
            if negative || self.f.plus || self.f.space {
                prec = prec.saturating_sub(1);
            }
        }
        // Digits in reverse, then the prefix, then reversed into place.
        let mut out: Vec<u8> = Vec::with_capacity(prec.max(24));
        loop {
            out.push(digits[(u % base) as usize]);
            u /= base;
            if u == 0 {
                break;
            }
        }
        while out.len() < prec {
            out.push(b'0');
        }
        if self.f.sharp {
            match base {
                2 => out.extend_from_slice(b"b0"),
                8 if out.last() != Some(&b'0') => {
                    out.push(b'0');
                }
                16 => {
                    out.push(digits[16]);
                    out.push(b'0');
                }
                _ => {}
            }
        }
        if verb == 'O' {
            out.extend_from_slice(b"o0");
        }
        if negative {
            out.push(b'-');
        } else if self.f.plus {
            out.push(b'+');
        } else if self.f.space {
            out.push(b' ');
        }
        out.reverse();
        let zero = self.f.zero;
        self.f.zero = false;
        self.pad(&out);
        self.f.zero = zero;
    }

    /// `%U`: `U+0041`, with `%#U` also the character.
    fn fmt_unicode(&mut self, u: u64) {
        let prec = if self.f.prec_present && self.f.prec > 4 {
            self.f.prec
        } else {
            4
        };
        let mut s = format!("U+{u:0prec$X}");
        if self.f.sharp
            && let Some(c) = u32::try_from(u).ok().and_then(char::from_u32)
            && go_fmt::is_print(c)
        {
            s.push_str(&format!(" '{c}'"));
        }
        let zero = self.f.zero;
        self.f.zero = false;
        self.pad_string(&s);
        self.f.zero = zero;
    }

    fn fmt_float(&mut self, v: f64, verb: char, subject: &Kind<'_>) {
        match verb {
            'v' => self.fmt_float_with(v, 'g', -1),
            'b' | 'g' | 'G' | 'x' | 'X' => self.fmt_float_with(v, verb, -1),
            'f' | 'e' | 'E' => self.fmt_float_with(v, verb, 6),
            'F' => self.fmt_float_with(v, 'f', 6),
            _ => self.bad_verb(verb, subject),
        }
    }

    /// Go's `fmt.fmtFloat`: signs, `%#` decimal points and zeros, padding.
    fn fmt_float_with(&mut self, v: f64, verb: char, prec: i32) {
        let prec = if self.f.prec_present {
            i32::try_from(self.f.prec).unwrap_or(i32::MAX)
        } else {
            prec
        };
        let formatted = go_fmt::format_float(v, verb as u8, prec);
        let mut num: Vec<u8> = Vec::with_capacity(formatted.len() + 1);
        if formatted.starts_with(['-', '+']) {
            num.extend_from_slice(formatted.as_bytes());
        } else {
            num.push(b'+');
            num.extend_from_slice(formatted.as_bytes());
        }
        if self.f.space && num[0] == b'+' && !self.f.plus {
            num[0] = b' ';
        }
        if matches!(num.get(1), Some(b'I' | b'N')) {
            let zero = self.f.zero;
            self.f.zero = false;
            if num[1] == b'N' && !self.f.space && !self.f.plus {
                num.remove(0);
            }
            self.pad(&num);
            self.f.zero = zero;
            return;
        }
        if self.f.sharp && verb != 'b' {
            let mut digits: i64 = 0;
            if matches!(verb, 'v' | 'g' | 'G' | 'x') {
                digits = if prec == -1 { 6 } else { i64::from(prec) };
            }
            let mut tail: Vec<u8> = Vec::new();
            let mut has_decimal_point = false;
            let mut saw_nonzero = false;
            let mut i = 1;
            while i < num.len() {
                match num[i] {
                    b'.' => has_decimal_point = true,
                    b'p' | b'P' => {
                        tail.extend_from_slice(&num[i..]);
                        num.truncate(i);
                        break;
                    }
                    b'e' | b'E' if verb != 'x' && verb != 'X' => {
                        tail.extend_from_slice(&num[i..]);
                        num.truncate(i);
                        break;
                    }
                    c => {
                        if c != b'0' {
                            saw_nonzero = true;
                        }
                        if saw_nonzero {
                            digits -= 1;
                        }
                    }
                }
                i += 1;
            }
            if !has_decimal_point {
                if num.len() == 2 && num[1] == b'0' {
                    digits -= 1;
                }
                num.push(b'.');
            }
            while digits > 0 {
                num.push(b'0');
                digits -= 1;
            }
            num.extend_from_slice(&tail);
        }
        if self.f.plus || num[0] != b'+' {
            if self.f.zero && self.f.wid_present && self.f.wid > num.len() {
                self.buf.push(num[0]);
                self.write_padding(self.f.wid - num.len());
                self.buf.extend_from_slice(&num[1..]);
                return;
            }
            self.pad(&num);
            return;
        }
        self.pad(&num[1..]);
    }

    fn fmt_complex(&mut self, re: f64, im: f64, verb: char, subject: &Kind<'_>) {
        match verb {
            'v' | 'b' | 'g' | 'G' | 'x' | 'X' | 'f' | 'F' | 'e' | 'E' => {
                let plus = self.f.plus;
                self.buf.push(b'(');
                self.fmt_float(re, verb, subject);
                self.f.plus = true;
                self.fmt_float(im, verb, subject);
                self.buf.extend_from_slice(b"i)");
                self.f.plus = plus;
            }
            _ => self.bad_verb(verb, subject),
        }
    }

    fn fmt_string(&mut self, s: &[u8], verb: char, subject: &Kind<'_>) {
        match verb {
            'v' if self.f.sharp_v => self.fmt_q(s),
            'v' | 's' => self.fmt_s(s),
            'x' => self.fmt_sx(s, LDIGITS),
            'X' => self.fmt_sx(s, UDIGITS),
            'q' => self.fmt_q(s),
            _ => self.bad_verb(verb, subject),
        }
    }

    /// The string cut to the precision, counted in characters.
    fn truncate<'s>(&self, s: &'s [u8]) -> &'s [u8] {
        if !self.f.prec_present {
            return s;
        }
        let mut n = self.f.prec;
        let mut i = 0;
        for r in go_fmt::runes(s) {
            if n == 0 {
                return &s[..i];
            }
            n -= 1;
            i += r.map_or(1, char::len_utf8);
        }
        s
    }

    fn fmt_s(&mut self, s: &[u8]) {
        let s = self.truncate(s);
        self.pad(s);
    }

    /// `%x` of a string: hex of its bytes, `% x` spaced, `%#x` with `0x`.
    fn fmt_sx(&mut self, s: &[u8], digits: &[u8; 17]) {
        let mut length = s.len();
        if self.f.prec_present && self.f.prec < length {
            length = self.f.prec;
        }
        let mut width = 2 * length;
        if width > 0 {
            if self.f.space {
                if self.f.sharp {
                    width *= 2;
                }
                width += length - 1;
            } else if self.f.sharp {
                width += 2;
            }
        } else {
            if self.f.wid_present {
                self.write_padding(self.f.wid);
            }
            return;
        }
        if self.f.wid_present && self.f.wid > width && !self.f.minus {
            self.write_padding(self.f.wid - width);
        }
        if self.f.sharp {
            self.buf.push(b'0');
            self.buf.push(digits[16]);
        }
        for (i, c) in s.iter().take(length).enumerate() {
            if self.f.space && i > 0 {
                self.buf.push(b' ');
                if self.f.sharp {
                    self.buf.push(b'0');
                    self.buf.push(digits[16]);
                }
            }
            self.buf.push(digits[usize::from(c >> 4)]);
            self.buf.push(digits[usize::from(c & 0xf)]);
        }
        if self.f.wid_present && self.f.wid > width && self.f.minus {
            self.write_padding(self.f.wid - width);
        }
    }

    fn fmt_q(&mut self, s: &[u8]) {
        let s = self.truncate(s).to_vec();
        if self.f.sharp && go_fmt::can_backquote(&s) {
            let mut raw = Vec::with_capacity(s.len() + 2);
            raw.push(b'`');
            raw.extend_from_slice(&s);
            raw.push(b'`');
            self.pad(&raw);
            return;
        }
        let quoted = go_fmt::quote_bytes(&s, self.f.plus);
        self.pad_string(&quoted);
    }

    /// Go's `intFromArg`: a `*` width or precision.
    fn int_from_arg(&self, args: &[Kind<'_>], arg_num: usize) -> (Option<i64>, usize) {
        let Some(arg) = args.get(arg_num) else {
            return (None, arg_num);
        };
        let num = match arg {
            Kind::Int(i) | Kind::Int64(i) => Some(*i),
            Kind::Uint8(u) => Some(i64::from(*u)),
            _ => None,
        };
        let num = num.filter(|n| n.unsigned_abs() <= 1_000_000);
        (num, arg_num + 1)
    }

    fn arg_number(
        &mut self,
        arg_num: usize,
        format: &[u8],
        i: usize,
        num_args: usize,
    ) -> (usize, usize, bool) {
        if format.len() <= i || format[i] != b'[' {
            return (arg_num, i, false);
        }
        self.reordered = true;
        let (index, wid) = parse_arg_number(&format[i..]);
        match index {
            Some(index) if index < num_args => (index, i + wid, true),
            found => {
                self.good_arg_num = false;
                (arg_num, i + wid, found.is_some())
            }
        }
    }

    /// Go's `doPrintf`: the format's text, and each directive (flags, argument index,
    /// width, precision, verb) applied to its argument; then the arguments left over.
    fn do_printf(&mut self, format: &[u8], args: &[Kind<'_>]) {
        let end = format.len();
        let mut arg_num = 0usize;
        let mut after_index;
        self.reordered = false;
        let mut i = 0;
        while i < end {
            self.good_arg_num = true;
            let last = i;
            while i < end && format[i] != b'%' {
                i += 1;
            }
            if i > last {
                self.buf.extend_from_slice(&format[last..i]);
            }
            if i >= end {
                break;
            }
            i += 1;
            self.f = Flags::default();
            let printed;
            (i, printed) = self.flags(format, i, args, arg_num);
            if printed {
                arg_num += 1;
                continue;
            }
            (arg_num, i, after_index) = self.arg_number(arg_num, format, i, args.len());
            (arg_num, i, after_index) = self.width(format, i, args, arg_num, after_index);
            if i + 1 < end && format[i] == b'.' {
                (arg_num, i, after_index) =
                    self.precision(format, i + 1, args, arg_num, after_index);
            }
            if !after_index {
                (arg_num, i, _) = self.arg_number(arg_num, format, i, args.len());
            }
            if i >= end {
                self.buf.extend_from_slice(b"%!(NOVERB)");
                break;
            }
            let (verb, size) = match go_fmt::runes(&format[i..]).next() {
                Some(Ok(c)) => (c, c.len_utf8()),
                _ => ('\u{fffd}', 1),
            };
            i += size;
            arg_num = self.verb(verb, args, arg_num);
        }
        if !self.reordered && arg_num < args.len() {
            self.extra(&args[arg_num..]);
        }
    }

    /// A directive's flags from `i` on, with Go's fast path for a verb right after them:
    /// the index after them, and whether that verb was printed already.
    fn flags(
        &mut self,
        format: &[u8],
        mut i: usize,
        args: &[Kind<'_>],
        arg_num: usize,
    ) -> (usize, bool) {
        while i < format.len() {
            let c = format[i];
            match c {
                b'#' => self.f.sharp = true,
                b'0' => self.f.zero = !self.f.minus,
                b'+' => self.f.plus = true,
                b'-' => {
                    self.f.minus = true;
                    self.f.zero = false;
                }
                b' ' => self.f.space = true,
                _ => {
                    if c.is_ascii_lowercase() && arg_num < args.len() {
                        self.print_verb(&args[arg_num], char::from(c));
                        return (i + 1, true);
                    }
                    break;
                }
            }
            i += 1;
        }
        (i, false)
    }

    /// A directive's width at `i`: `*` takes it from the next argument, else digits (which
    /// make an argument index just before them bad). Returns the argument number, the
    /// index after the width and whether an argument index is in effect.
    fn width(
        &mut self,
        format: &[u8],
        mut i: usize,
        args: &[Kind<'_>],
        mut arg_num: usize,
        mut after_index: bool,
    ) -> (usize, usize, bool) {
        if i < format.len() && format[i] == b'*' {
            i += 1;
            let (wid, next) = self.int_from_arg(args, arg_num);
            arg_num = next;
            match wid {
                Some(w) => {
                    self.f.wid_present = true;
                    self.f.wid = w.unsigned_abs() as usize;
                    if w < 0 {
                        self.f.minus = true;
                        self.f.zero = false;
                    }
                }
                None => {
                    self.f.wid_present = false;
                    self.f.wid = 0;
                    self.buf.extend_from_slice(b"%!(BADWIDTH)");
                }
            }
            after_index = false;
        } else {
            let (wid, next) = parse_num(format, i);
            i = next;
            self.f.wid_present = wid.is_some();
            self.f.wid = wid.unwrap_or(0);
            if after_index && self.f.wid_present {
                self.good_arg_num = false;
            }
        }
        (arg_num, i, after_index)
    }

    /// A directive's precision at `i`, just after its `.`: an argument index, then `*`
    /// (from the next argument) or digits. Returns what [`Pp::width`] returns.
    fn precision(
        &mut self,
        format: &[u8],
        mut i: usize,
        args: &[Kind<'_>],
        mut arg_num: usize,
        after_index: bool,
    ) -> (usize, usize, bool) {
        if after_index {
            self.good_arg_num = false;
        }
        let after_index;
        (arg_num, i, after_index) = self.arg_number(arg_num, format, i, args.len());
        if i < format.len() && format[i] == b'*' {
            let (prec, next) = self.int_from_arg(args, arg_num);
            match prec {
                Some(p) if p >= 0 => {
                    self.f.prec_present = true;
                    self.f.prec = p as usize;
                }
                Some(_) => {
                    // A negative precision means none.
                    self.f.prec_present = false;
                    self.f.prec = 0;
                }
                None => {
                    self.f.prec_present = false;
                    self.f.prec = 0;
                }
            }
            if !self.f.prec_present {
                self.buf.extend_from_slice(b"%!(BADPREC)");
            }
            return (next, i + 1, false);
        }
        let (prec, next) = parse_num(format, i);
        self.f.prec_present = true;
        self.f.prec = prec.unwrap_or(0);
        (arg_num, next, after_index)
    }

    /// A directive's verb, applied to argument `arg_num` (or its error when the index
    /// was bad or the arguments ran out); returns the next argument's number.
    fn verb(&mut self, verb: char, args: &[Kind<'_>], arg_num: usize) -> usize {
        match verb {
            '%' => self.buf.push(b'%'),
            _ if !self.good_arg_num => {
                self.buf.extend_from_slice(b"%!");
                self.write_rune(verb);
                self.buf.extend_from_slice(b"(BADINDEX)");
            }
            _ if arg_num >= args.len() => {
                self.buf.extend_from_slice(b"%!");
                self.write_rune(verb);
                self.buf.extend_from_slice(b"(MISSING)");
            }
            _ => {
                self.print_verb(&args[arg_num], verb);
                return arg_num + 1;
            }
        }
        arg_num
    }

    /// `print_arg`, with `%v`'s `#` and `+` flags turned into its `#v` and `+v` forms.
    fn print_verb(&mut self, arg: &Kind<'_>, verb: char) {
        if verb == 'v' {
            self.f.sharp_v = self.f.sharp;
            self.f.sharp = false;
            self.f.plus_v = self.f.plus;
            self.f.plus = false;
        }
        self.print_arg(arg, verb);
    }

    /// `%!(EXTRA type=value, …)` for the arguments no verb used.
    fn extra(&mut self, extra: &[Kind<'_>]) {
        self.f = Flags::default();
        self.buf.extend_from_slice(b"%!(EXTRA ");
        for (i, arg) in extra.iter().enumerate() {
            if i > 0 {
                self.buf.extend_from_slice(b", ");
            }
            if is_nil(arg) {
                self.buf.extend_from_slice(b"<nil>");
            } else {
                self.buf.extend_from_slice(arg.type_name().as_bytes());
                self.buf.push(b'=');
                self.print_arg(arg, 'v');
            }
        }
        self.buf.push(b')');
    }
}
