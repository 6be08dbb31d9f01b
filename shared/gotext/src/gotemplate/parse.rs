//! The parser of Go's `text/template` (`text/template/parse/parse.go` and `node.go`):
//! the same grammar, the same three-token look-ahead, the same node positions and
//! the same error texts (`template: output:1: unexpected "}" in operand`), because
//! kubectl users see them verbatim.
//!
//! The one addition is [`MAX_NESTING`]: Go recurses without limit on `((((…))))` and
//! nested `{{if}}`s; here a hostile template gets an error instead of a stack overflow.

use std::collections::HashMap;
use std::fmt;

use super::lex::{Item, ItemType, lex};
use super::number::{self, Number};
use crate::go_fmt;

/// How deeply control structures (`if`, `range`, `with`, `block`) and parenthesised
/// pipelines may nest in one template. Real templates use a handful of levels.
pub(crate) const MAX_NESTING: usize = 100;

/// A parse error, in Go's words (`template: output:1: function "foo" not defined`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    message: String,
}

/// A list of nodes: a template body or the body of a control structure.
#[derive(Debug, Clone)]
pub(crate) struct List {
    pub nodes: Vec<Node>,
}

/// A node of a template body.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Text(String),
    Action(Action),
    If(Branch),
    Range(Branch),
    With(Branch),
    Template(TemplateCall),
    Break,
    Continue,
}

/// `{{pipeline}}`.
#[derive(Debug, Clone)]
pub(crate) struct Action {
    pub pos: usize,
    pub pipe: Pipe,
}

/// `{{if|range|with pipeline}} list {{else}} else_list {{end}}`.
#[derive(Debug, Clone)]
pub(crate) struct Branch {
    pub pos: usize,
    pub pipe: Pipe,
    pub list: List,
    pub else_list: Option<List>,
}

/// `{{template "name" pipeline}}` (also what `{{block}}` leaves in place).
#[derive(Debug, Clone)]
pub(crate) struct TemplateCall {
    pub pos: usize,
    pub name: String,
    pub pipe: Option<Pipe>,
}

/// `$x, $y := cmd | cmd`.
#[derive(Debug, Clone)]
pub(crate) struct Pipe {
    pub pos: usize,
    pub is_assign: bool,
    pub decl: Vec<Variable>,
    pub cmds: Vec<Command>,
}

/// One command of a pipeline: an operand and its arguments.
#[derive(Debug, Clone)]
pub(crate) struct Command {
    pub pos: usize,
    pub args: Vec<Operand>,
}

/// `$x` or `$x.field.chain`.
#[derive(Debug, Clone)]
pub(crate) struct Variable {
    pub pos: usize,
    pub ident: Vec<String>,
}

/// An operand (Go's `Node` types that may appear in a command).
#[derive(Debug, Clone)]
pub(crate) enum Operand {
    /// A function name.
    Identifier {
        pos: usize,
        name: String,
    },
    Dot {
        pos: usize,
    },
    Nil {
        pos: usize,
    },
    Variable(Variable),
    /// `.a.b.c`.
    Field {
        pos: usize,
        ident: Vec<String>,
    },
    /// `(pipeline).a.b`.
    Chain {
        pos: usize,
        node: Box<Operand>,
        fields: Vec<String>,
    },
    Bool {
        pos: usize,
        value: bool,
    },
    Number(Box<Number>),
    /// A quoted or raw string: its source text and its bytes (Go strings may hold
    /// bytes that are not UTF-8, such as `"\xff"`).
    String {
        pos: usize,
        quoted: String,
        text: Vec<u8>,
    },
    /// A parenthesised pipeline.
    Pipe(Box<Pipe>),
}

impl Operand {
    pub fn pos(&self) -> usize {
        match self {
            Operand::Identifier { pos, .. }
            | Operand::Dot { pos }
            | Operand::Nil { pos }
            | Operand::Field { pos, .. }
            | Operand::Chain { pos, .. }
            | Operand::Bool { pos, .. }
            | Operand::String { pos, .. } => *pos,
            Operand::Variable(v) => v.pos,
            Operand::Number(n) => n.pos,
            Operand::Pipe(p) => p.pos,
        }
    }
}

// Go's `String()` methods: error messages quote nodes in this form.

impl fmt::Display for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.nodes.iter().try_for_each(|n| write!(f, "{n}"))
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Text(text) => f.write_str(text),
            Node::Action(a) => write!(f, "{a}"),
            Node::If(b) => b.write("if", f),
            Node::Range(b) => b.write("range", f),
            Node::With(b) => b.write("with", f),
            Node::Template(t) => write!(f, "{t}"),
            Node::Break => f.write_str("{{break}}"),
            Node::Continue => f.write_str("{{continue}}"),
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{{{}}}}}", self.pipe)
    }
}

impl Branch {
    fn write(&self, keyword: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{{{keyword} {}}}}}{}", self.pipe, self.list)?;
        if let Some(else_list) = &self.else_list {
            write!(f, "{{{{else}}}}{else_list}")?;
        }
        f.write_str("{{end}}")
    }
}

impl fmt::Display for TemplateCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{{template {}", go_fmt::quote(&self.name))?;
        if let Some(pipe) = &self.pipe {
            write!(f, " {pipe}")?;
        }
        f.write_str("}}")
    }
}

impl fmt::Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            for (i, v) in self.decl.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{v}")?;
            }
            // Go prints `:=` for assignments too.
            f.write_str(" := ")?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, arg) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            match arg {
                Operand::Pipe(p) => write!(f, "({p})")?,
                other => write!(f, "{other}")?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for Variable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.ident.join("."))
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Identifier { name, .. } => f.write_str(name),
            Operand::Dot { .. } => f.write_str("."),
            Operand::Nil { .. } => f.write_str("nil"),
            Operand::Variable(v) => write!(f, "{v}"),
            Operand::Field { ident, .. } => ident.iter().try_for_each(|i| write!(f, ".{i}")),
            Operand::Chain { node, fields, .. } => {
                match node.as_ref() {
                    Operand::Pipe(p) => write!(f, "({p})")?,
                    other => write!(f, "{other}")?,
                }
                fields.iter().try_for_each(|i| write!(f, ".{i}"))
            }
            Operand::Bool { value, .. } => write!(f, "{value}"),
            Operand::Number(n) => f.write_str(&n.text),
            Operand::String { quoted, .. } => f.write_str(quoted),
            Operand::Pipe(p) => write!(f, "{p}"),
        }
    }
}

/// What `itemList` and `textOrAction` return: a node, or the `{{end}}` / `{{else}}`
/// that closes a list.
enum Parsed {
    Node(Node),
    End,
    Else,
}

impl fmt::Display for Parsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Parsed::Node(n) => write!(f, "{n}"),
            Parsed::End => f.write_str("{{end}}"),
            Parsed::Else => f.write_str("{{else}}"),
        }
    }
}

/// The per-tree parser state of Go's `Tree`: a `{{define}}` or `{{block}}` body gets
/// a fresh one (its own look-ahead buffer and variables) over the same lexer.
struct TreeState {
    name: String,
    token: [Item; 3],
    peek_count: usize,
    vars: Vec<String>,
    action_line: usize,
    range_depth: usize,
}

impl TreeState {
    fn new(name: String) -> Self {
        let zero = Item {
            typ: ItemType::Error,
            pos: 0,
            val: String::new(),
            line: 0,
        };
        Self {
            name,
            token: [zero.clone(), zero.clone(), zero],
            peek_count: 0,
            vars: vec!["$".to_string()],
            action_line: 0,
            range_depth: 0,
        }
    }
}

struct Parser {
    /// The name errors are reported under (`ParseName`: kubectl's "output").
    parse_name: String,
    items: Vec<Item>,
    next_item: usize,
    trees: HashMap<String, List>,
    st: TreeState,
    nesting: usize,
}

type PResult<T> = Result<T, ParseError>;

/// Parses `text` as template `name`: the map from template name to body, holding
/// `name` itself and every `{{define}}` / `{{block}}`.
pub(crate) fn parse(name: &str, text: &str) -> PResult<HashMap<String, List>> {
    let mut p = Parser {
        parse_name: name.to_string(),
        items: lex(text),
        next_item: 0,
        trees: HashMap::new(),
        st: TreeState::new(name.to_string()),
        nesting: 0,
    };
    let root = p.parse_top()?;
    p.add(root)?;
    Ok(p.trees)
}

impl Parser {
    fn lex_next(&mut self) -> Item {
        let item = self
            .items
            .get(self.next_item)
            .or_else(|| self.items.last())
            .cloned();
        if self.next_item < self.items.len() {
            self.next_item += 1;
        }
        item.unwrap_or(Item {
            typ: ItemType::Eof,
            pos: 0,
            val: String::new(),
            line: 1,
        })
    }

    fn next(&mut self) -> Item {
        if self.st.peek_count > 0 {
            self.st.peek_count -= 1;
        } else {
            self.st.token[0] = self.lex_next();
        }
        self.st.token[self.st.peek_count].clone()
    }

    fn backup(&mut self) {
        self.st.peek_count += 1;
    }

    fn backup2(&mut self, t1: Item) {
        self.st.token[1] = t1;
        self.st.peek_count = 2;
    }

    fn backup3(&mut self, t2: Item, t1: Item) {
        self.st.token[1] = t1;
        self.st.token[2] = t2;
        self.st.peek_count = 3;
    }

    fn peek(&mut self) -> Item {
        if self.st.peek_count > 0 {
            return self.st.token[self.st.peek_count - 1].clone();
        }
        self.st.peek_count = 1;
        self.st.token[0] = self.lex_next();
        self.st.token[0].clone()
    }

    fn next_non_space(&mut self) -> Item {
        loop {
            let token = self.next();
            if token.typ != ItemType::Space {
                return token;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item {
        let token = self.next_non_space();
        self.backup();
        token
    }

    fn errorf<T>(&self, message: impl fmt::Display) -> PResult<T> {
        Err(ParseError {
            message: format!(
                "template: {}:{}: {message}",
                self.parse_name, self.st.token[0].line
            ),
        })
    }

    fn expect(&mut self, expected: ItemType, context: &str) -> PResult<Item> {
        let token = self.next_non_space();
        if token.typ != expected {
            return self.unexpected(&token, context);
        }
        Ok(token)
    }

    fn unexpected<T>(&self, token: &Item, context: &str) -> PResult<T> {
        if token.typ == ItemType::Error {
            let mut extra = String::new();
            if self.st.action_line != 0 && self.st.action_line != token.line {
                extra = format!(
                    " in action started at {}:{}",
                    self.parse_name, self.st.action_line
                );
                if token.val.ends_with(" action") {
                    // Avoid "unclosed action in action started at …".
                    extra = extra.split_off(" in action".len());
                }
            }
            return self.errorf(format_args!("{}{extra}", token.describe()));
        }
        self.errorf(format_args!("unexpected {} in {context}", token.describe()))
    }

    fn enter(&mut self) -> PResult<()> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return self.errorf(format_args!(
                "exceeded maximum nesting depth ({MAX_NESTING})"
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nesting = self.nesting.saturating_sub(1);
    }

    /// `Tree.add`: records the current tree, refusing a second non-empty definition.
    fn add(&mut self, root: List) -> PResult<()> {
        let name = self.st.name.clone();
        match self.trees.get(&name) {
            Some(existing) if !is_empty_tree(existing) => {
                if !is_empty_tree(&root) {
                    return self.errorf(format_args!(
                        "template: multiple definition of template {}",
                        go_fmt::quote(&name)
                    ));
                }
            }
            _ => {
                self.trees.insert(name, root);
            }
        }
        Ok(())
    }

    /// `Tree.parse`: the top level, which may also hold `{{define}}`s.
    fn parse_top(&mut self) -> PResult<List> {
        let mut root = List { nodes: Vec::new() };
        self.peek();
        while self.peek().typ != ItemType::Eof {
            if self.peek().typ == ItemType::LeftDelim {
                let delim = self.next();
                if self.next_non_space().typ == ItemType::Define {
                    let outer =
                        std::mem::replace(&mut self.st, TreeState::new("definition".into()));
                    let result = self.parse_definition();
                    self.st = outer;
                    result?;
                    continue;
                }
                self.backup2(delim);
            }
            match self.text_or_action()? {
                Parsed::Node(n) => root.nodes.push(n),
                other => return self.errorf(format_args!("unexpected {other}")),
            }
        }
        Ok(root)
    }

    /// `{{define "name"}} … {{end}}`, the keyword already read; runs on a fresh tree.
    fn parse_definition(&mut self) -> PResult<()> {
        const CONTEXT: &str = "define clause";
        let name = self.next_non_space();
        if name.typ != ItemType::String && name.typ != ItemType::RawString {
            return self.unexpected(&name, CONTEXT);
        }
        match unquote(&name.val) {
            Ok(n) => self.st.name = String::from_utf8_lossy(&n).into_owned(),
            Err(e) => return self.errorf(e),
        }
        self.expect(ItemType::RightDelim, CONTEXT)?;
        self.enter()?;
        let (root, end) = self.item_list()?;
        self.leave();
        if !matches!(end, Parsed::End) {
            return self.errorf(format_args!("unexpected {end} in {CONTEXT}"));
        }
        self.add(root)
    }

    /// `itemList`: nodes up to an `{{end}}` or `{{else}}`, which is returned apart.
    fn item_list(&mut self) -> PResult<(List, Parsed)> {
        let mut list = List { nodes: Vec::new() };
        while self.peek_non_space().typ != ItemType::Eof {
            match self.text_or_action()? {
                Parsed::Node(n) => list.nodes.push(n),
                end => return Ok((list, end)),
            }
        }
        self.errorf("unexpected EOF")
    }

    fn text_or_action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.typ {
            ItemType::Text => Ok(Parsed::Node(Node::Text(token.val))),
            ItemType::LeftDelim => {
                self.st.action_line = token.line;
                let result = self.action();
                self.st.action_line = 0;
                result
            }
            _ => self.unexpected(&token, "input"),
        }
    }

    fn action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.typ {
            ItemType::Block => return self.block_control().map(Parsed::Node),
            ItemType::Break | ItemType::Continue => {
                let (name, node) = if token.typ == ItemType::Break {
                    ("break", Node::Break)
                } else {
                    ("continue", Node::Continue)
                };
                let next = self.next_non_space();
                if next.typ != ItemType::RightDelim {
                    return self.unexpected(&next, &format!("{{{{{name}}}}}"));
                }
                if self.st.range_depth == 0 {
                    return self.errorf(format_args!("{{{{{name}}}}} outside {{{{range}}}}"));
                }
                return Ok(Parsed::Node(node));
            }
            ItemType::Else => return self.else_control(),
            ItemType::End => {
                self.expect(ItemType::RightDelim, "end")?;
                return Ok(Parsed::End);
            }
            ItemType::If => return self.control("if").map(|b| Parsed::Node(Node::If(b))),
            ItemType::Range => return self.control("range").map(|b| Parsed::Node(Node::Range(b))),
            ItemType::Template => return self.template_control().map(Parsed::Node),
            ItemType::With => return self.control("with").map(|b| Parsed::Node(Node::With(b))),
            _ => {}
        }
        self.backup();
        let token = self.peek();
        let pipe = self.pipeline("command", ItemType::RightDelim)?;
        Ok(Parsed::Node(Node::Action(Action {
            pos: token.pos,
            pipe,
        })))
    }

    /// `{{else}}`, or the `else` of `{{else if …}}` / `{{else with …}}` (Go 1.23),
    /// which leaves the `if` / `with` to be read next.
    fn else_control(&mut self) -> PResult<Parsed> {
        let peek = self.peek_non_space();
        if peek.typ == ItemType::If || peek.typ == ItemType::With {
            return Ok(Parsed::Else);
        }
        self.expect(ItemType::RightDelim, "else")?;
        Ok(Parsed::Else)
    }

    /// `parseControl` for `if`, `range` and `with`.
    fn control(&mut self, context: &str) -> PResult<Branch> {
        self.enter()?;
        let vars = self.st.vars.len();
        let pipe = self.pipeline(context, ItemType::RightDelim)?;
        if context == "range" {
            self.st.range_depth += 1;
        }
        let (list, next) = self.item_list()?;
        if context == "range" {
            self.st.range_depth -= 1;
        }
        let mut else_list = None;
        if let Parsed::Else = next {
            let follows = self.peek().typ;
            if context == "if" && follows == ItemType::If {
                // {{if a}}_{{else if b}}_{{end}} is {{if a}}_{{else}}{{if b}}_{{end}}{{end}}.
                self.next();
                let inner = self.control("if")?;
                else_list = Some(List {
                    nodes: vec![Node::If(inner)],
                });
            } else if context == "with" && follows == ItemType::With {
                self.next();
                let inner = self.control("with")?;
                else_list = Some(List {
                    nodes: vec![Node::With(inner)],
                });
            } else {
                let (list, next) = self.item_list()?;
                if !matches!(next, Parsed::End) {
                    return self.errorf(format_args!("expected end; found {next}"));
                }
                else_list = Some(list);
            }
        }
        self.st.vars.truncate(vars);
        self.leave();
        Ok(Branch {
            pos: pipe.pos,
            pipe,
            list,
            else_list,
        })
    }

    /// `{{block "name" pipeline}} … {{end}}`: defines the template and calls it.
    fn block_control(&mut self) -> PResult<Node> {
        const CONTEXT: &str = "block clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, CONTEXT)?;
        let pipe = self.pipeline(CONTEXT, ItemType::RightDelim)?;
        self.enter()?;
        let outer = std::mem::replace(&mut self.st, TreeState::new(name.clone()));
        let body = self.item_list();
        let (root, end) = match body {
            Ok(parsed) => parsed,
            Err(e) => {
                self.st = outer;
                return Err(e);
            }
        };
        if !matches!(end, Parsed::End) {
            // Go reports this with the enclosing tree's position.
            self.st = outer;
            return self.errorf(format_args!("unexpected {end} in {CONTEXT}"));
        }
        let added = self.add(root);
        self.st = outer;
        added?;
        self.leave();
        Ok(Node::Template(TemplateCall {
            pos: token.pos,
            name,
            pipe: Some(pipe),
        }))
    }

    fn template_control(&mut self) -> PResult<Node> {
        const CONTEXT: &str = "template clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, CONTEXT)?;
        let mut pipe = None;
        if self.next_non_space().typ != ItemType::RightDelim {
            self.backup();
            pipe = Some(self.pipeline(CONTEXT, ItemType::RightDelim)?);
        }
        Ok(Node::Template(TemplateCall {
            pos: token.pos,
            name,
            pipe,
        }))
    }

    fn template_name(&mut self, token: &Item, context: &str) -> PResult<String> {
        match token.typ {
            ItemType::String | ItemType::RawString => match unquote(&token.val) {
                Ok(name) => Ok(String::from_utf8_lossy(&name).into_owned()),
                Err(e) => self.errorf(e),
            },
            _ => self.unexpected(token, context),
        }
    }

    /// `pipeline`: optional declarations, then commands separated by `|`, up to `end`.
    fn pipeline(&mut self, context: &str, end: ItemType) -> PResult<Pipe> {
        let token = self.peek_non_space();
        let mut pipe = Pipe {
            pos: token.pos,
            is_assign: false,
            decl: Vec::new(),
            cmds: Vec::new(),
        };
        // Declarations: `$x :=`, `$x =`, and `$i, $e :=` in a range.
        loop {
            let v = self.peek_non_space();
            if v.typ != ItemType::Variable {
                break;
            }
            self.next();
            // Spaces are tokens, so "$x foo" needs three tokens of look-ahead to tell
            // an argument from a declaration.
            let after_variable = self.peek();
            let next = self.peek_non_space();
            if next.typ == ItemType::Assign || next.typ == ItemType::Declare {
                pipe.is_assign = next.typ == ItemType::Assign;
                self.next_non_space();
                pipe.decl.push(new_variable(v.pos, &v.val));
                self.st.vars.push(v.val);
                break;
            }
            if next.typ == ItemType::Char && next.val == "," {
                self.next_non_space();
                pipe.decl.push(new_variable(v.pos, &v.val));
                self.st.vars.push(v.val);
                if context == "range" && pipe.decl.len() < 2 {
                    match self.peek_non_space().typ {
                        ItemType::Variable | ItemType::RightDelim | ItemType::RightParen => {
                            continue;
                        }
                        _ => return self.errorf("range can only initialize variables"),
                    }
                }
                return self.errorf(format_args!("too many declarations in {context}"));
            }
            if after_variable.typ == ItemType::Space {
                self.backup3(v, after_variable);
            } else {
                self.backup2(v);
            }
            break;
        }
        loop {
            let token = self.next_non_space();
            match token.typ {
                t if t == end => {
                    self.check_pipeline(&pipe, context)?;
                    return Ok(pipe);
                }
                ItemType::Bool
                | ItemType::CharConstant
                | ItemType::Complex
                | ItemType::Dot
                | ItemType::Field
                | ItemType::Identifier
                | ItemType::Number
                | ItemType::Nil
                | ItemType::RawString
                | ItemType::String
                | ItemType::Variable
                | ItemType::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                }
                _ => return self.unexpected(&token, context),
            }
        }
    }

    fn check_pipeline(&self, pipe: &Pipe, context: &str) -> PResult<()> {
        if pipe.cmds.is_empty() {
            return self.errorf(format_args!("missing value for {context}"));
        }
        // Only the first command of a pipeline may start with a constant.
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                c.args.first(),
                Some(
                    Operand::Bool { .. }
                        | Operand::Dot { .. }
                        | Operand::Nil { .. }
                        | Operand::Number(_)
                        | Operand::String { .. }
                )
            ) {
                return self.errorf(format_args!(
                    "non executable command in pipeline stage {}",
                    i + 1
                ));
            }
        }
        Ok(())
    }

    fn command(&mut self) -> PResult<Command> {
        let pos = self.peek_non_space().pos;
        let mut cmd = Command {
            pos,
            args: Vec::new(),
        };
        loop {
            self.peek_non_space();
            if let Some(operand) = self.operand()? {
                cmd.args.push(operand);
            }
            let token = self.next();
            match token.typ {
                ItemType::Space => continue,
                ItemType::RightDelim | ItemType::RightParen => self.backup(),
                ItemType::Pipe => {}
                _ => return self.unexpected(&token, "operand"),
            }
            break;
        }
        if cmd.args.is_empty() {
            return self.errorf("empty command");
        }
        Ok(cmd)
    }

    /// `operand`: a term and the fields that follow it without space.
    fn operand(&mut self) -> PResult<Option<Operand>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().typ != ItemType::Field {
            return Ok(Some(node));
        }
        let pos = self.peek().pos;
        let mut fields = Vec::new();
        while self.peek().typ == ItemType::Field {
            let field = self.next().val;
            fields.push(field.get(1..).unwrap_or_default().to_string());
        }
        Ok(Some(match node {
            // `.a.b` and `$x.a` stay fields and variables, positioned at the chain.
            Operand::Field { mut ident, .. } => {
                ident.extend(fields);
                Operand::Field { pos, ident }
            }
            Operand::Variable(Variable { mut ident, .. }) => {
                ident.extend(fields);
                Operand::Variable(Variable { pos, ident })
            }
            Operand::Bool { .. }
            | Operand::String { .. }
            | Operand::Number(_)
            | Operand::Nil { .. }
            | Operand::Dot { .. } => {
                return self.errorf(format_args!(
                    "unexpected . after term {}",
                    go_fmt::quote(&node.to_string())
                ));
            }
            other => Operand::Chain {
                pos,
                node: Box::new(other),
                fields,
            },
        }))
    }

    fn term(&mut self) -> PResult<Option<Operand>> {
        let token = self.next_non_space();
        let pos = token.pos;
        Ok(Some(match token.typ {
            ItemType::Identifier => {
                if !super::funcs::is_defined(&token.val) {
                    return self.errorf(format_args!(
                        "function {} not defined",
                        go_fmt::quote(&token.val)
                    ));
                }
                Operand::Identifier {
                    pos,
                    name: token.val,
                }
            }
            ItemType::Dot => Operand::Dot { pos },
            ItemType::Nil => Operand::Nil { pos },
            ItemType::Variable => {
                let v = new_variable(pos, &token.val);
                if !self.st.vars.iter().any(|name| *name == v.ident[0]) {
                    return self.errorf(format_args!(
                        "undefined variable {}",
                        go_fmt::quote(&v.ident[0])
                    ));
                }
                Operand::Variable(v)
            }
            ItemType::Field => Operand::Field {
                pos,
                ident: token
                    .val
                    .get(1..)
                    .unwrap_or_default()
                    .split('.')
                    .map(str::to_string)
                    .collect(),
            },
            ItemType::Bool => Operand::Bool {
                pos,
                value: token.val == "true",
            },
            ItemType::CharConstant | ItemType::Complex | ItemType::Number => {
                match number::parse(pos, &token.val, token.typ) {
                    Ok(n) => Operand::Number(Box::new(n)),
                    Err(e) => return self.errorf(e),
                }
            }
            ItemType::LeftParen => {
                self.enter()?;
                let pipe = self.pipeline("parenthesized pipeline", ItemType::RightParen)?;
                self.leave();
                Operand::Pipe(Box::new(pipe))
            }
            ItemType::String | ItemType::RawString => match unquote(&token.val) {
                Ok(text) => Operand::String {
                    pos,
                    quoted: token.val,
                    text,
                },
                Err(e) => return self.errorf(e),
            },
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }
}

fn new_variable(pos: usize, name: &str) -> Variable {
    Variable {
        pos,
        ident: name.split('.').map(str::to_string).collect(),
    }
}

/// Go's `parse.IsEmptyTree`: nothing but white space.
fn is_empty_tree(list: &List) -> bool {
    list.nodes.iter().all(|n| match n {
        Node::Text(t) => t.trim().is_empty(),
        _ => false,
    })
}

/// `strconv.Unquote` of a string token: `"…"` with Go's escapes, or `` `…` `` raw
/// (carriage returns dropped). The only error is Go's `invalid syntax`.
pub(crate) fn unquote(s: &str) -> Result<Vec<u8>, &'static str> {
    const SYNTAX: &str = "invalid syntax";
    let bytes = s.as_bytes();
    if bytes.len() < 2 {
        return Err(SYNTAX);
    }
    let quote = bytes[0];
    if bytes[bytes.len() - 1] != quote {
        return Err(SYNTAX);
    }
    let inner = &s[1..s.len() - 1];
    match quote {
        b'`' => {
            if inner.contains('`') {
                return Err(SYNTAX);
            }
            Ok(inner.bytes().filter(|b| *b != b'\r').collect())
        }
        b'"' => {
            let mut out = Vec::with_capacity(inner.len());
            let mut rest = inner;
            while !rest.is_empty() {
                let (value, multibyte, tail) = number::unquote_char(rest, '"').ok_or(SYNTAX)?;
                rest = tail;
                if value < 0x80 || !multibyte {
                    out.push(value as u8);
                } else if let Some(c) = char::from_u32(value) {
                    let mut buf = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
            Ok(out)
        }
        _ => Err(SYNTAX),
    }
}
