//! Execution (`text/template/exec.go`): walking the parsed templates over the data,
//! with Go's rules for fields of maps, missing keys, variables and their scopes,
//! `range` over maps in key order, `break`/`continue`, template calls, the evaluation
//! of commands and arguments, and the context of error messages (`template:
//! output:1:7: executing "output" at <.nope.x>: map has no entry for key "nope"`):
//! Go reports the last node it started to evaluate, so the evaluator notes nodes at
//! the same points Go's does.
//!
//! Go has no bound on work or output and allows 100000 nested template calls; here
//! [`MAX_TEMPLATE_DEPTH`], [`MAX_EXEC_NESTING`], [`MAX_STEPS`] and [`MAX_OUTPUT`] turn
//! a runaway template into an error instead of an exhausted stack, CPU or memory.

use std::collections::HashMap;

use super::funcs::{self, Builtin, Param};
use super::parse::{Action, Branch, Command, List, Node, Operand, Pipe, TemplateCall, Variable};
use super::printf;
use super::value::{Kind, Val};
use crate::go_fmt;

/// Nested `{{template}}` calls (Go: 100000).
pub(crate) const MAX_TEMPLATE_DEPTH: usize = 100;
/// Nested bodies and pipelines being executed, across template calls.
pub(crate) const MAX_EXEC_NESTING: usize = 500;
/// Actions, commands and loop iterations executed for one object.
pub(crate) const MAX_STEPS: u64 = 10_000_000;
/// Bytes of output for one object.
pub(crate) const MAX_OUTPUT: usize = 64 << 20;

/// The work and output allowed for one execution; [`Limits::DEFAULT`] in use, smaller
/// in tests.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub steps: u64,
    pub output: usize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        steps: MAX_STEPS,
        output: MAX_OUTPUT,
    };
}

/// Why execution stopped early: an error (Go's full message) or a `{{break}}` /
/// `{{continue}}` on its way to the enclosing `{{range}}`.
pub(crate) enum Stop {
    Error(String),
    Break,
    Continue,
}

type R<T> = Result<T, Stop>;

/// The node Go would name in an error (`s.at(node)`).
#[derive(Clone, Copy)]
enum At<'a> {
    Action(&'a Action),
    Branch(&'static str, &'a Branch),
    Template(&'a TemplateCall),
    Pipe(&'a Pipe),
    Command(&'a Command),
    Operand(&'a Operand),
    Variable(&'a Variable),
}

impl At<'_> {
    fn pos(&self) -> usize {
        match self {
            At::Action(a) => a.pos,
            At::Branch(_, b) => b.pos,
            At::Template(t) => t.pos,
            At::Pipe(p) => p.pos,
            At::Command(c) => c.pos,
            At::Operand(o) => o.pos(),
            At::Variable(v) => v.pos,
        }
    }

    fn context(&self) -> String {
        match self {
            At::Action(a) => a.to_string(),
            At::Branch(kind, b) => {
                let node = match *kind {
                    "if" => Node::If((*b).clone()),
                    "range" => Node::Range((*b).clone()),
                    _ => Node::With((*b).clone()),
                };
                node.to_string()
            }
            At::Template(t) => t.to_string(),
            At::Pipe(p) => p.to_string(),
            At::Command(c) => c.to_string(),
            At::Operand(o) => o.to_string(),
            At::Variable(v) => v.to_string(),
        }
    }
}

/// The state of one execution (`state` in Go).
pub(crate) struct Exec<'a> {
    trees: &'a HashMap<String, List>,
    text: &'a str,
    parse_name: &'a str,
    name: &'a str,
    node: Option<At<'a>>,
    vars: Vec<(&'a str, Val<'a>)>,
    depth: usize,
    nesting: usize,
    steps: u64,
    limits: Limits,
    missing_key_error: bool,
    pub out: Vec<u8>,
}

impl<'a> Exec<'a> {
    pub fn new(
        trees: &'a HashMap<String, List>,
        text: &'a str,
        name: &'a str,
        missing_key_error: bool,
        limits: Limits,
    ) -> Self {
        Self {
            trees,
            text,
            parse_name: name,
            name,
            node: None,
            vars: Vec::new(),
            depth: 0,
            nesting: 0,
            steps: 0,
            limits,
            missing_key_error,
            out: Vec::new(),
        }
    }

    /// Runs the template `name` on `data`; the error is Go's message.
    pub fn run(&mut self, data: Val<'a>) -> Result<(), String> {
        let Some(root) = self.trees.get(self.name) else {
            return Err(format!(
                "template: {0}: {1} is an incomplete or empty template",
                self.name,
                go_fmt::quote(self.name)
            ));
        };
        self.vars.push(("$", data.clone()));
        match self.walk_list(&data, root) {
            Ok(()) | Err(Stop::Break | Stop::Continue) => Ok(()),
            Err(Stop::Error(message)) => Err(message),
        }
    }

    fn at(&mut self, node: At<'a>) {
        self.node = Some(node);
    }

    /// `state.errorf`: the message with the location and text of the current node.
    fn errorf<T>(&self, message: impl std::fmt::Display) -> R<T> {
        let name = go_fmt::quote(self.name);
        let Some(node) = self.node else {
            return Err(Stop::Error(format!("template: {}: {message}", self.name)));
        };
        let pos = node.pos().min(self.text.len());
        let before = self.text.get(..pos).unwrap_or_default();
        let (line, col) = match before.rfind('\n') {
            None => (1, pos),
            Some(nl) => (1 + before.matches('\n').count(), pos - nl - 1),
        };
        Err(Stop::Error(format!(
            "template: {}:{line}:{col}: executing {name} at <{}>: {message}",
            self.parse_name,
            node.context()
        )))
    }

    fn tick(&mut self) -> R<()> {
        self.charge(1)
    }

    /// Counts `steps` of work: one per action, command and iteration, and one per
    /// 256 bytes a function returns (a `printf` with a huge width is real work even
    /// when its result is never printed).
    fn charge(&mut self, steps: u64) -> R<()> {
        self.steps = self.steps.saturating_add(steps);
        if self.steps > self.limits.steps {
            return self.errorf(format_args!(
                "exceeded maximum number of steps ({})",
                self.limits.steps
            ));
        }
        Ok(())
    }

    fn nest(&mut self) -> R<()> {
        self.nesting += 1;
        if self.nesting > MAX_EXEC_NESTING {
            return self.errorf(format_args!(
                "exceeded maximum nesting depth ({MAX_EXEC_NESTING})"
            ));
        }
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> R<()> {
        if self.out.len() + bytes.len() > self.limits.output {
            return self.errorf(format_args!(
                "exceeded maximum output size ({} bytes)",
                self.limits.output
            ));
        }
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    fn walk_list(&mut self, dot: &Val<'a>, list: &'a List) -> R<()> {
        self.nest()?;
        // `{{break}}` and `{{continue}}` leave through here too: always unwind.
        let result = list.nodes.iter().try_for_each(|node| self.walk(dot, node));
        self.nesting -= 1;
        result
    }

    fn walk(&mut self, dot: &Val<'a>, node: &'a Node) -> R<()> {
        self.tick()?;
        match node {
            Node::Action(action) => {
                self.at(At::Action(action));
                // Variables persist until the enclosing {{end}}; a declaration
                // prints nothing.
                let val = self.eval_pipeline(dot, &action.pipe)?;
                if action.pipe.decl.is_empty() {
                    self.at(At::Action(action));
                    self.print_value(&val)?;
                }
                Ok(())
            }
            Node::Break => Err(Stop::Break),
            Node::Continue => Err(Stop::Continue),
            Node::If(branch) => {
                self.at(At::Branch("if", branch));
                self.walk_if_or_with(false, dot, branch)
            }
            Node::With(branch) => {
                self.at(At::Branch("with", branch));
                self.walk_if_or_with(true, dot, branch)
            }
            Node::Range(branch) => self.walk_range(dot, branch),
            Node::Template(call) => self.walk_template(dot, call),
            Node::Text(text) => self.write(text.as_bytes()),
        }
    }

    fn walk_if_or_with(&mut self, with: bool, dot: &Val<'a>, b: &'a Branch) -> R<()> {
        let mark = self.vars.len();
        let result = self.if_or_with(with, dot, b);
        self.vars.truncate(mark);
        result
    }

    fn if_or_with(&mut self, with: bool, dot: &Val<'a>, b: &'a Branch) -> R<()> {
        let val = self.eval_pipeline(dot, &b.pipe)?;
        if val.kind.truth() {
            if with {
                self.walk_list(&val, &b.list)
            } else {
                self.walk_list(dot, &b.list)
            }
        } else if let Some(else_list) = &b.else_list {
            self.walk_list(dot, else_list)
        } else {
            Ok(())
        }
    }

    fn walk_range(&mut self, dot: &Val<'a>, r: &'a Branch) -> R<()> {
        self.at(At::Branch("range", r));
        let mark = self.vars.len();
        let result = self.range(dot, r);
        self.vars.truncate(mark);
        match result {
            Err(Stop::Break) => Ok(()),
            other => other,
        }
    }

    fn range(&mut self, dot: &Val<'a>, r: &'a Branch) -> R<()> {
        let val = self.eval_pipeline(dot, &r.pipe)?;
        // The top of the stack before any variables of the body are pushed.
        let mark = self.vars.len();
        match &val.kind {
            Kind::List(items) if !items.is_empty() => {
                for (i, item) in items.iter().enumerate() {
                    self.iteration(r, mark, Val::new(Kind::Int(i as i64)), Val::element(item))?;
                }
                return Ok(());
            }
            Kind::Map(map) if !map.is_empty() => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                for key in keys {
                    if let Some(v) = map.get(key) {
                        self.iteration(r, mark, Val::str(key.as_bytes()), Val::element(v))?;
                    }
                }
                return Ok(());
            }
            // An empty collection or no value: the {{else}}.
            Kind::List(_) | Kind::Map(_) | Kind::Invalid => {}
            other => {
                let text = printf::sprint(std::slice::from_ref(other));
                return self.errorf(format_args!(
                    "range can't iterate over {}",
                    String::from_utf8_lossy(&text)
                ));
            }
        }
        match &r.else_list {
            Some(else_list) => self.walk_list(dot, else_list),
            None => Ok(()),
        }
    }

    fn iteration(&mut self, r: &'a Branch, mark: usize, index: Val<'a>, elem: Val<'a>) -> R<()> {
        self.tick()?;
        let decl = r.pipe.decl.len();
        let top = self.vars.len();
        // The last declared variable gets the element, the one before it the index.
        if decl > 0
            && let Some(slot) = top.checked_sub(1).and_then(|i| self.vars.get_mut(i))
        {
            slot.1 = elem.clone();
        }
        if decl > 1
            && let Some(slot) = top.checked_sub(2).and_then(|i| self.vars.get_mut(i))
        {
            slot.1 = index;
        }
        let result = self.walk_list(&elem, &r.list);
        self.vars.truncate(mark);
        match result {
            Err(Stop::Continue) => Ok(()),
            other => other,
        }
    }

    fn walk_template(&mut self, dot: &Val<'a>, call: &'a TemplateCall) -> R<()> {
        self.at(At::Template(call));
        let Some((name, tree)) = self.trees.get_key_value(&call.name) else {
            return self.errorf(format_args!(
                "template {} not defined",
                go_fmt::quote(&call.name)
            ));
        };
        if self.depth == MAX_TEMPLATE_DEPTH {
            return self.errorf(format_args!(
                "exceeded maximum template depth ({MAX_TEMPLATE_DEPTH})"
            ));
        }
        let dot = match &call.pipe {
            Some(pipe) => self.eval_pipeline(dot, pipe)?,
            None => Val::INVALID,
        };
        // No dynamic scoping: the template sees only `$`, set to its data.
        let saved_vars = std::mem::replace(&mut self.vars, vec![("$", dot.clone())]);
        let saved_name = std::mem::replace(&mut self.name, name.as_str());
        let saved_node = self.node;
        self.depth += 1;
        let result = self.walk_list(&dot, tree);
        self.depth -= 1;
        self.vars = saved_vars;
        self.name = saved_name;
        self.node = saved_node;
        result
    }

    fn print_value(&mut self, val: &Val<'a>) -> R<()> {
        match &val.kind {
            Kind::Invalid => self.write(b"<no value>"),
            Kind::Str(s) => {
                let s = s.clone();
                self.write(&s)
            }
            other => {
                let text = printf::sprint(std::slice::from_ref(other));
                self.write(&text)
            }
        }
    }

    fn eval_pipeline(&mut self, dot: &Val<'a>, pipe: &'a Pipe) -> R<Val<'a>> {
        self.nest()?;
        self.at(At::Pipe(pipe));
        let mut value: Option<Val<'a>> = None;
        for cmd in &pipe.cmds {
            let v = self.eval_command(dot, cmd, value.take())?;
            // An interface{} result is replaced by what it holds.
            value = Some(v.unboxed());
        }
        let value = value.unwrap_or(Val::INVALID);
        for var in &pipe.decl {
            let name = var.ident[0].as_str();
            if pipe.is_assign {
                self.set_var(name, value.clone())?;
            } else {
                self.vars.push((name, value.clone()));
            }
        }
        self.nesting -= 1;
        Ok(value)
    }

    fn set_var(&mut self, name: &str, value: Val<'a>) -> R<()> {
        match self.vars.iter_mut().rev().find(|(n, _)| *n == name) {
            Some(slot) => {
                slot.1 = value;
                Ok(())
            }
            None => self.errorf(format_args!("undefined variable: {name}")),
        }
    }

    fn var_value(&self, name: &str) -> R<Val<'a>> {
        match self.vars.iter().rev().find(|(n, _)| *n == name) {
            Some((_, v)) => Ok(v.clone()),
            None => self.errorf(format_args!("undefined variable: {name}")),
        }
    }

    fn not_a_function(&self, args: &[Operand], final_: &Option<Val<'a>>) -> R<()> {
        if (args.len() > 1 || final_.is_some())
            && let Some(first) = args.first()
        {
            return self.errorf(format_args!("can't give argument to non-function {first}"));
        }
        Ok(())
    }

    fn eval_command(
        &mut self,
        dot: &Val<'a>,
        cmd: &'a Command,
        final_: Option<Val<'a>>,
    ) -> R<Val<'a>> {
        self.tick()?;
        let Some(first) = cmd.args.first() else {
            return self.errorf("empty command");
        };
        match first {
            Operand::Field { .. } => return self.eval_field_node(dot, first, &cmd.args, final_),
            Operand::Chain { .. } => return self.eval_chain_node(dot, first, &cmd.args, final_),
            Operand::Identifier { name, .. } => {
                return self.eval_function(
                    dot,
                    first,
                    name,
                    At::Command(cmd),
                    Some(&cmd.args),
                    final_,
                );
            }
            Operand::Pipe(pipe) => {
                // Parenthesised: the arguments are all inside.
                self.not_a_function(&cmd.args, &final_)?;
                return self.eval_pipeline(dot, pipe);
            }
            Operand::Variable(v) => return self.eval_variable_node(dot, v, &cmd.args, final_),
            _ => {}
        }
        self.at(At::Operand(first));
        self.not_a_function(&cmd.args, &final_)?;
        match first {
            Operand::Bool { value, .. } => Ok(Val::new(Kind::Bool(*value))),
            Operand::Dot { .. } => Ok(dot.clone()),
            Operand::Nil { .. } => self.errorf("nil is not a command"),
            Operand::Number(n) => self.ideal_constant(first, n),
            Operand::String { text, .. } => Ok(Val::str(text.as_slice())),
            _ => self.errorf(format_args!(
                "can't evaluate command {}",
                go_fmt::quote(&first.to_string())
            )),
        }
    }

    /// Go's `idealConstant`: a number constant's type from its syntax.
    fn ideal_constant(&mut self, node: &'a Operand, n: &super::number::Number) -> R<Val<'a>> {
        self.at(At::Operand(node));
        let text = &n.text;
        let hex_int = text.len() > 2
            && text.starts_with('0')
            && matches!(text.as_bytes()[1], b'x' | b'X')
            && !text.contains(['p', 'P']);
        let rune_int = text.starts_with('\'');
        if n.is_complex {
            return Ok(Val::new(Kind::Complex(n.complex.0, n.complex.1)));
        }
        if n.is_float && !hex_int && !rune_int && text.contains(['.', 'e', 'E', 'p', 'P']) {
            return Ok(Val::new(Kind::Float(n.float64)));
        }
        if n.is_int {
            return Ok(Val::new(Kind::Int(n.int64)));
        }
        if n.is_uint {
            return self.errorf(format_args!("{text} overflows int"));
        }
        Ok(Val::INVALID)
    }

    fn eval_field_node(
        &mut self,
        dot: &Val<'a>,
        field: &'a Operand,
        args: &'a [Operand],
        final_: Option<Val<'a>>,
    ) -> R<Val<'a>> {
        self.at(At::Operand(field));
        let Operand::Field { ident, .. } = field else {
            return Ok(Val::INVALID);
        };
        self.eval_field_chain(dot, dot.clone(), ident, args, final_)
    }

    fn eval_chain_node(
        &mut self,
        dot: &Val<'a>,
        chain: &'a Operand,
        args: &'a [Operand],
        final_: Option<Val<'a>>,
    ) -> R<Val<'a>> {
        self.at(At::Operand(chain));
        let Operand::Chain { node, fields, .. } = chain else {
            return Ok(Val::INVALID);
        };
        if fields.is_empty() {
            return self.errorf("internal error: no fields in evalChainNode");
        }
        if let Operand::Nil { .. } = node.as_ref() {
            return self.errorf(format_args!("indirection through explicit nil in {chain}"));
        }
        // (pipe).Field1.Field2: the pipeline first, then the fields.
        let receiver = self.eval_arg(dot, None, node)?;
        self.eval_field_chain(dot, receiver, fields, args, final_)
    }

    fn eval_variable_node(
        &mut self,
        dot: &Val<'a>,
        variable: &'a Variable,
        args: &'a [Operand],
        final_: Option<Val<'a>>,
    ) -> R<Val<'a>> {
        self.at(At::Variable(variable));
        let value = self.var_value(&variable.ident[0])?;
        if variable.ident.len() == 1 {
            self.not_a_function(args, &final_)?;
            return Ok(value);
        }
        self.eval_field_chain(dot, value, &variable.ident[1..], args, final_)
    }

    fn eval_field_chain(
        &mut self,
        dot: &Val<'a>,
        receiver: Val<'a>,
        ident: &'a [String],
        args: &'a [Operand],
        final_: Option<Val<'a>>,
    ) -> R<Val<'a>> {
        let Some((last, init)) = ident.split_last() else {
            return Ok(receiver);
        };
        let mut receiver = receiver;
        for name in init {
            receiver = self.eval_field(dot, name, &[], None, receiver)?;
        }
        self.eval_field(dot, last, args, final_, receiver)
    }

    /// `.name` of `receiver`: a map entry, or Go's error for anything else.
    fn eval_field(
        &mut self,
        _dot: &Val<'a>,
        name: &str,
        args: &[Operand],
        final_: Option<Val<'a>>,
        receiver: Val<'a>,
    ) -> R<Val<'a>> {
        if !receiver.is_valid() {
            if self.missing_key_error {
                // Go treats an invalid value as a missing map key here.
                return self.errorf(format_args!(
                    "nil data; no entry for key {}",
                    go_fmt::quote(name)
                ));
            }
            return Ok(Val::INVALID);
        }
        let typ = receiver.type_name();
        if receiver.kind == Kind::Nil {
            return self.errorf(format_args!("nil pointer evaluating {typ}.{name}"));
        }
        let has_args = args.len() > 1 || final_.is_some();
        if let Kind::Map(map) = receiver.kind {
            if has_args {
                return self.errorf(format_args!("{name} is not a method but has arguments"));
            }
            return match map.get(name) {
                Some(v) => Ok(Val::element(v)),
                None if self.missing_key_error => self.errorf(format_args!(
                    "map has no entry for key {}",
                    go_fmt::quote(name)
                )),
                None => Ok(Val::INVALID),
            };
        }
        self.errorf(format_args!("can't evaluate field {name} in type {typ}"))
    }

    fn eval_function(
        &mut self,
        dot: &Val<'a>,
        node: &'a Operand,
        name: &'a str,
        cmd: At<'a>,
        args: Option<&'a [Operand]>,
        final_: Option<Val<'a>>,
    ) -> R<Val<'a>> {
        self.at(At::Operand(node));
        let Some(function) = funcs::lookup(name) else {
            return self.errorf(format_args!(
                "{} is not a defined function",
                go_fmt::quote(name)
            ));
        };
        self.eval_call(dot, function, cmd, name, args, final_)
    }

    /// Go's `evalCall`: argument count and types, `and`/`or` short-circuit, the call,
    /// and `error calling NAME: …` for the function's error.
    fn eval_call(
        &mut self,
        dot: &Val<'a>,
        f: &'static Builtin,
        node: At<'a>,
        name: &str,
        args: Option<&'a [Operand]>,
        final_: Option<Val<'a>>,
    ) -> R<Val<'a>> {
        // The first of `args` is the function itself.
        let args: &'a [Operand] = args.and_then(|a| a.get(1..)).unwrap_or(&[]);
        let num_in = args.len() + usize::from(final_.is_some());
        let fixed = f.fixed.len();
        if f.variadic.is_some() {
            if num_in < fixed {
                return self.errorf(format_args!(
                    "wrong number of args for {name}: want at least {fixed} got {}",
                    args.len()
                ));
            }
        } else if num_in != fixed {
            return self.errorf(format_args!(
                "wrong number of args for {name}: want {fixed} got {num_in}"
            ));
        }
        let param = |i: usize| {
            f.fixed
                .get(i)
                .copied()
                .or(f.variadic)
                .unwrap_or(Param::Value)
        };
        if name == "and" || name == "or" {
            let mut v = Val::INVALID;
            for arg in args {
                v = self.eval_arg(dot, Some(Param::Value), arg)?;
                if v.kind.truth() == (name == "or") {
                    return Ok(v);
                }
            }
            if let Some(last) = final_ {
                v = self.validate_type(last, Some(Param::Value))?;
            }
            return Ok(v);
        }
        if name == "call" && args.is_empty() {
            // Go 1.23 reads the callee's name from the first argument even when it
            // comes from the pipeline; kubectl catches the panic.
            return Err(Stop::Error(
                "caught panic: runtime error: index out of range [0] with length 0".into(),
            ));
        }
        let callee = match (args.first(), &final_) {
            (Some(first), _) => first.to_string(),
            (None, _) => String::new(),
        };
        let mut argv = Vec::with_capacity(num_in);
        for (i, arg) in args.iter().enumerate() {
            argv.push(self.eval_arg(dot, Some(param(i)), arg)?);
        }
        if let Some(last) = final_ {
            let p = if f.variadic.is_some() && num_in > fixed {
                f.variadic.unwrap_or(Param::Value)
            } else {
                param(num_in - 1)
            };
            argv.push(self.validate_type(last, Some(p))?);
        }
        match (f.call)(argv, &callee) {
            Ok(v) => {
                if let Kind::Str(s) = &v.kind {
                    self.charge(s.len() as u64 / 256)?;
                }
                Ok(v)
            }
            Err(e) => {
                self.at(node);
                self.errorf(format_args!("error calling {name}: {e}"))
            }
        }
    }

    /// Go's `validateType`: `value` as an argument of type `param` (`None`: untyped).
    fn validate_type(&self, value: Val<'a>, param: Option<Param>) -> R<Val<'a>> {
        match param {
            None | Some(Param::Value) => Ok(value),
            Some(Param::Any) => Ok(if value.is_valid() {
                value
            } else {
                Val::new(Kind::Nil)
            }),
            Some(Param::Str) => match (&value.kind, value.boxed) {
                (Kind::Invalid, _) => self.errorf("invalid value; expected string"),
                (Kind::Str(_), _) => Ok(Val::new(value.kind)),
                (Kind::Nil, _) => {
                    self.errorf("wrong type for value; expected string; got interface {}")
                }
                (other, _) => self.errorf(format_args!(
                    "wrong type for value; expected string; got {}",
                    other.type_name()
                )),
            },
        }
    }

    /// Go's `evalArg`: an argument evaluated for a parameter of type `param`.
    fn eval_arg(&mut self, dot: &Val<'a>, param: Option<Param>, n: &'a Operand) -> R<Val<'a>> {
        self.at(At::Operand(n));
        let value = match n {
            Operand::Dot { .. } => dot.clone(),
            Operand::Nil { .. } => {
                return match param {
                    None | Some(Param::Value) => Ok(Val::INVALID),
                    Some(Param::Any) => Ok(Val::new(Kind::Nil)),
                    Some(Param::Str) => self.errorf("cannot assign nil to string"),
                };
            }
            Operand::Field { .. } => self.eval_field_node(dot, n, std::slice::from_ref(n), None)?,
            Operand::Variable(v) => self.eval_variable_node(dot, v, &[], None)?,
            Operand::Pipe(p) => self.eval_pipeline(dot, p)?,
            Operand::Identifier { name, .. } => {
                self.eval_function(dot, n, name, At::Operand(n), None, None)?
            }
            Operand::Chain { .. } => self.eval_chain_node(dot, n, &[], None)?,
            Operand::Bool { value, .. } => {
                if param == Some(Param::Str) {
                    return self.errorf(format_args!("expected string; found {n}"));
                }
                return Ok(Val::new(Kind::Bool(*value)));
            }
            Operand::Number(num) => {
                if param == Some(Param::Str) {
                    return self.errorf(format_args!("expected string; found {n}"));
                }
                return self.ideal_constant(n, num);
            }
            Operand::String { text, .. } => return Ok(Val::str(text.as_slice())),
        };
        self.validate_type(value, param)
    }
}
