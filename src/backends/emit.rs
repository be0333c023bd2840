//! Emit: the two back ends over one layout.
//!
//! The same walker lays out every [`Document`] as block YAML. In Helm mode leaves
//! become `{{ ... | toJson }}` and conditions become `{{- if ... }}` blocks; in render
//! mode leaves are evaluated and printed with Go's JSON encoding, and conditions
//! decide what is printed. Because the text around the leaves is shared, the native
//! render prints what `helm template` prints for the same values.

use crate::expr::gojson::{to_go_json, write_go_json, write_go_string};
use crate::expr::{go_string, truthy, EvalContext, EvalError, Expr, ValuePath};
use crate::objects::tree::{Document, Key, ListPart, MapPart, Node};
use serde_json::Value;
use std::collections::BTreeMap;

/// Which back end the walker serves.
enum Mode<'a> {
    /// Print Go template text.
    Helm,
    /// Evaluate against values.
    Render(&'a EvalContext<'a>),
}

/// The Go template text of one document (the content of `templates/<file>`).
pub fn helm_template_text(doc: &Document) -> String {
    let mut out = Out::default();
    let mode = Mode::Helm;
    // Helm mode never evaluates, so it cannot fail.
    let _ = emit_document(doc, &mode, &mut out);
    out.text
}

/// The rendered text of one document for the given values, or `None` when the
/// document's condition is false (Helm drops the empty output too).
pub fn render_document_text(
    doc: &Document,
    ctx: &EvalContext<'_>,
) -> Result<Option<String>, EvalError> {
    let mut text = String::new();
    Ok(render_document_into(doc, ctx, "", &mut text)?.then_some(text))
}

/// Appends `header` and the rendered text of one document to `text` (one buffer for a
/// whole render); `false`, appending nothing, when the document's condition is false.
pub fn render_document_into(
    doc: &Document,
    ctx: &EvalContext<'_>,
    header: &str,
    text: &mut String,
) -> Result<bool, EvalError> {
    if let Some(cond) = &doc.when {
        if !truthy(&*cond.evaluate_borrowed(ctx)?) {
            return Ok(false);
        }
    }
    let mut out = Out {
        text: std::mem::take(text),
    };
    out.text.push_str(header);
    let result = emit_node_root(&doc.root, &Mode::Render(ctx), &mut out);
    *text = out.text;
    result.map(|()| true)
}

/// The text being written: every line goes straight into it, leaves included.
#[derive(Default)]
struct Out {
    text: String,
}

impl Out {
    /// Starts a line: `indent` spaces.
    fn indent(&mut self, indent: usize) {
        self.text.extend(std::iter::repeat_n(' ', indent));
    }

    fn line(&mut self, indent: usize, text: &str) {
        self.indent(indent);
        self.text.push_str(text);
        self.text.push('\n');
    }
}

fn emit_document(doc: &Document, mode: &Mode<'_>, out: &mut Out) -> Result<(), EvalError> {
    match &doc.when {
        Some(cond) => {
            out.line(0, &format!("{{{{- if {} }}}}", cond.to_go()));
            emit_node_root(&doc.root, mode, out)?;
            out.line(0, "{{- end }}");
        }
        None => emit_node_root(&doc.root, mode, out)?,
    }
    Ok(())
}

fn emit_node_root(node: &Node, mode: &Mode<'_>, out: &mut Out) -> Result<(), EvalError> {
    match node {
        Node::Map(parts) => emit_map(parts, 0, mode, out),
        Node::List(parts) => emit_list(parts, 0, mode, out),
        Node::Leaf(e) => {
            write_leaf(e, mode, &mut out.text)?;
            out.text.push('\n');
            Ok(())
        }
    }
}

/// Evaluates a condition (render) or opens an `if` block (Helm). Returns whether
/// the guarded content is to be emitted.
fn open_condition(
    when: &Option<Expr>,
    indent: usize,
    mode: &Mode<'_>,
    out: &mut Out,
) -> Result<bool, EvalError> {
    match (when, mode) {
        (None, _) => Ok(true),
        (Some(cond), Mode::Helm) => {
            out.line(indent, &format!("{{{{- if {} }}}}", cond.to_go()));
            Ok(true)
        }
        (Some(cond), Mode::Render(ctx)) => Ok(truthy(&*cond.evaluate_borrowed(ctx)?)),
    }
}

fn close_condition(when: &Option<Expr>, indent: usize, mode: &Mode<'_>, out: &mut Out) {
    if when.is_some() && matches!(mode, Mode::Helm) {
        out.line(indent, "{{- end }}");
    }
}

/// Appends a leaf's text to `out`: its Go template action (Helm) or its value's JSON
/// (render); static text no YAML 1.1 parser can misread is written plain in both.
fn write_leaf(e: &Expr, mode: &Mode<'_>, out: &mut String) -> Result<(), EvalError> {
    match (e, mode) {
        // Static text no YAML 1.1 parser can misread is written plain, in both modes.
        (Expr::Lit(Value::String(s)), _) if is_plain_text(s) => out.push_str(s),
        // A long constant is printed by the template in pieces, so no line is long.
        (Expr::Lit(Value::String(s)), Mode::Helm) if s.len() > LONG_TEXT => {
            out.push_str("{{ print");
            for piece in text_pieces(s) {
                out.push(' ');
                out.push_str(&go_string(piece));
            }
            out.push_str(" | toJson }}");
        }
        // Any other constant prints the same JSON text in both modes.
        (Expr::Lit(v), _) => write_go_json(out, v),
        (e, Mode::Helm) => {
            out.push_str("{{ ");
            write_go_unparenthesised(e, out);
            out.push_str(" | toJson }}");
        }
        (e, Mode::Render(ctx)) => write_go_json(out, &*e.evaluate_borrowed(ctx)?),
    }
    Ok(())
}

/// Constant strings longer than this are printed by the template in pieces.
const LONG_TEXT: usize = 100;

/// A long text cut after spaces into pieces of about 80 characters (their
/// concatenation is the text).
fn text_pieces(s: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut last_space = None;
    for (i, c) in s.char_indices() {
        if c == ' ' {
            last_space = Some(i + 1);
        }
        if i - start >= 80 {
            if let Some(cut) = last_space.filter(|cut| *cut > start) {
                pieces.push(&s[start..cut]);
                start = cut;
            }
        }
    }
    pieces.push(&s[start..]);
    pieces
}

/// Whether static text can be written as a plain YAML scalar that every YAML 1.1
/// and 1.2 parser reads back as the same string (no quotes needed).
pub fn is_plain_text(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '/')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-' | ','))
        && !yaml_1_1_word(s)
}

/// Whether YAML 1.1 reads the word as a boolean or null (`y`, `No`, `ON`, ...).
fn yaml_1_1_word(s: &str) -> bool {
    s.len() <= 5
        && ["y", "n", "yes", "no", "on", "off", "true", "false", "null"]
            .iter()
            .any(|w| s.eq_ignore_ascii_case(w))
}

/// [`strip_parens`] of the expression's Go text, written into `out` in place.
fn write_go_unparenthesised(e: &Expr, out: &mut String) {
    let start = out.len();
    e.write_go(out);
    let stripped = strip_parens(&out[start..]).len();
    if stripped != out.len() - start {
        out.pop();
        out.remove(start);
    }
}

/// `(f a b)` as the head of a pipeline reads better as `f a b`.
fn strip_parens(go: &str) -> &str {
    go.strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .filter(|inner| balanced(inner))
        .unwrap_or(go)
}

fn balanced(s: &str) -> bool {
    let mut depth = 0i32;
    let mut in_string = false;
    let mut escaped = false;
    // Bytes, not characters: every byte this looks for is ASCII, and no byte of a
    // multi-byte UTF-8 character is.
    for c in s.bytes().map(char::from) {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// Appends a key's text: a static key as [`yaml_key`] writes it, a dynamic one as its
/// leaf.
fn write_key(key: &Key, mode: &Mode<'_>, out: &mut String) -> Result<(), EvalError> {
    match key {
        Key::Static(k) => write_yaml_key(out, k),
        Key::Dynamic(e) => write_leaf(e, mode, out)?,
    }
    Ok(())
}

/// A key the generator writes: plain when no YAML 1.1 parser can misread it,
/// JSON-quoted otherwise.
pub fn yaml_key(k: &str) -> String {
    let mut out = String::new();
    write_yaml_key(&mut out, k);
    out
}

/// Writes `k` as a mapping key: plain when it is a word YAML reads as that string,
/// quoted otherwise. Checked byte by byte: every byte of a non-ASCII character is
/// outside the plain set, as the character is.
fn write_yaml_key(out: &mut String, k: &str) {
    let plain = k
        .as_bytes()
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-'))
        && !yaml_1_1_word(k);
    if plain {
        out.push_str(k);
    } else {
        write_go_string(out, k);
    }
}

fn emit_map(
    parts: &[MapPart],
    indent: usize,
    mode: &Mode<'_>,
    out: &mut Out,
) -> Result<(), EvalError> {
    for part in parts {
        match part {
            MapPart::Entry { key, value, when } => {
                if open_condition(when, indent, mode, out)? {
                    emit_keyed(key, value, indent, mode, out)?;
                }
                close_condition(when, indent, mode, out);
            }
            MapPart::EntriesOf(path) => emit_entries_of(path, indent, mode, out)?,
            MapPart::Named { template, parts } => match mode {
                Mode::Helm => out.line(
                    indent,
                    &format!(
                        "{{{{- include {} $ | nindent {indent} }}}}",
                        go_string(template)
                    ),
                ),
                Mode::Render(_) => emit_map(parts, indent, mode, out)?,
            },
        }
    }
    Ok(())
}

/// `key: value` on one line, or `key:` and the value's lines below it.
fn emit_keyed(
    key: &Key,
    value: &Node,
    indent: usize,
    mode: &Mode<'_>,
    out: &mut Out,
) -> Result<(), EvalError> {
    out.indent(indent);
    write_key(key, mode, &mut out.text)?;
    match value {
        Node::Leaf(e) => {
            out.text.push_str(": ");
            write_leaf(e, mode, &mut out.text)?;
            out.text.push('\n');
        }
        Node::Map(parts) if parts.is_empty() => out.text.push_str(": {}\n"),
        Node::List(parts) if parts.is_empty() => out.text.push_str(": []\n"),
        Node::Map(parts) => {
            out.text.push_str(":\n");
            emit_map(parts, indent + 2, mode, out)?;
        }
        Node::List(parts) => {
            out.text.push_str(":\n");
            emit_list(parts, indent + 2, mode, out)?;
        }
    }
    Ok(())
}

fn emit_entries_of(
    path: &ValuePath,
    indent: usize,
    mode: &Mode<'_>,
    out: &mut Out,
) -> Result<(), EvalError> {
    match mode {
        Mode::Helm => {
            out.line(
                indent,
                &format!(
                    "{{{{- range $key, $value := {} }}}}",
                    Expr::Ref(path.clone()).to_go()
                ),
            );
            out.line(indent, "{{ $key | toJson }}: {{ $value | toJson }}");
            out.line(indent, "{{- end }}");
        }
        Mode::Render(ctx) => match ctx.lookup(path)? {
            Some(Value::Object(map)) => {
                for (k, v) in map {
                    out.indent(indent);
                    write_go_string(&mut out.text, k);
                    out.text.push_str(": ");
                    write_go_json(&mut out.text, v);
                    out.text.push('\n');
                }
            }
            None | Some(Value::Null) => {}
            Some(other) => {
                return Err(EvalError {
                    expression: Expr::Ref(path.clone()).to_go(),
                    reason: format!("range over a map, got {}", to_go_json(other)),
                })
            }
        },
    }
    Ok(())
}

fn emit_list(
    parts: &[ListPart],
    indent: usize,
    mode: &Mode<'_>,
    out: &mut Out,
) -> Result<(), EvalError> {
    for part in parts {
        match part {
            ListPart::Item { value, when } => {
                if open_condition(when, indent, mode, out)? {
                    emit_item(value, indent, mode, out)?;
                }
                close_condition(when, indent, mode, out);
            }
            ListPart::Each { list, item } => match mode {
                Mode::Helm => {
                    out.line(
                        indent,
                        &format!("{{{{- range {} }}}}", Expr::Ref(list.clone()).to_go()),
                    );
                    emit_item(item, indent, mode, out)?;
                    out.line(indent, "{{- end }}");
                }
                Mode::Render(ctx) => match ctx.lookup(list)? {
                    Some(Value::Array(elements)) => {
                        for element in elements {
                            let inner = EvalContext {
                                item: Some(element),
                                ..(*ctx).clone()
                            };
                            emit_item(item, indent, &Mode::Render(&inner), out)?;
                        }
                    }
                    None | Some(Value::Null) => {}
                    Some(other) => {
                        return Err(EvalError {
                            expression: Expr::Ref(list.clone()).to_go(),
                            reason: format!("range over a list, got {}", to_go_json(other)),
                        })
                    }
                },
            },
            ListPart::ItemsOf(path) => match mode {
                Mode::Helm => {
                    out.line(
                        indent,
                        &format!("{{{{- range {} }}}}", Expr::Ref(path.clone()).to_go()),
                    );
                    out.line(indent, "- {{ . | toJson }}");
                    out.line(indent, "{{- end }}");
                }
                Mode::Render(ctx) => match ctx.lookup(path)? {
                    Some(Value::Array(items)) => {
                        for item in items {
                            out.indent(indent);
                            out.text.push_str("- ");
                            write_go_json(&mut out.text, item);
                            out.text.push('\n');
                        }
                    }
                    None | Some(Value::Null) => {}
                    Some(other) => {
                        return Err(EvalError {
                            expression: Expr::Ref(path.clone()).to_go(),
                            reason: format!("range over a list, got {}", to_go_json(other)),
                        })
                    }
                },
            },
        }
    }
    Ok(())
}

fn emit_item(value: &Node, indent: usize, mode: &Mode<'_>, out: &mut Out) -> Result<(), EvalError> {
    match value {
        Node::Leaf(e) => {
            out.indent(indent);
            out.text.push_str("- ");
            write_leaf(e, mode, &mut out.text)?;
            out.text.push('\n');
        }
        Node::Map(parts) if parts.is_empty() => out.line(indent, "- {}"),
        Node::List(parts) if parts.is_empty() => out.line(indent, "- []"),
        Node::Map(parts) if matches!(parts.first(), Some(MapPart::Entry { when: None, .. })) => {
            // The first entry shares the dash's line: `- name: api`. It is written
            // `indent + 2` deep, and the dash takes the last two of those spaces.
            let start = out.text.len();
            emit_map(parts, indent + 2, mode, out)?;
            out.text
                .replace_range(start + indent..start + indent + 2, "- ");
        }
        Node::Map(parts) => {
            out.line(indent, "-");
            emit_map(parts, indent + 2, mode, out)?;
        }
        Node::List(parts) => {
            out.line(indent, "-");
            emit_list(parts, indent + 2, mode, out)?;
        }
    }
    Ok(())
}

/// A named template of `_helpers.tpl`: its body as entries or as one expression.
enum Definition<'a> {
    Entries(&'a [MapPart]),
    Text(&'a Expr),
}

/// The named templates a document uses that are not `known` yet, each found once:
/// the body of a name already found or known is not walked again, since the templates
/// it uses were found with it (a name has one body, or `_helpers.tpl` would define it
/// wrongly for one of its uses), and every document uses the chart's few named
/// templates many times.
struct CollectNamed<'a, 'k> {
    known: &'k BTreeMap<String, String>,
    found: BTreeMap<&'a str, Definition<'a>>,
}

impl<'a> CollectNamed<'a, '_> {
    fn has(&self, name: &str) -> bool {
        self.found.contains_key(name) || self.known.contains_key(name)
    }

    /// The named templates `e` uses, innermost first.
    fn in_expr(&mut self, e: &'a Expr) {
        if let Expr::Named(name, body) = e {
            if !self.has(name) {
                self.in_expr(body);
                self.found.insert(name, Definition::Text(body));
            }
            return;
        }
        e.for_each_child(|child| self.in_expr(child));
    }

    fn in_node(&mut self, node: &'a Node) {
        match node {
            Node::Leaf(e) => self.in_expr(e),
            Node::Map(parts) => self.in_parts(parts),
            Node::List(parts) => {
                for part in parts {
                    match part {
                        ListPart::Item { value, when } => {
                            when.iter().for_each(|w| self.in_expr(w));
                            self.in_node(value);
                        }
                        ListPart::Each { item, .. } => self.in_node(item),
                        ListPart::ItemsOf(_) => {}
                    }
                }
            }
        }
    }

    fn in_parts(&mut self, parts: &'a [MapPart]) {
        for part in parts {
            match part {
                MapPart::Entry { key, value, when } => {
                    if let Key::Dynamic(k) = key {
                        self.in_expr(k);
                    }
                    when.iter().for_each(|w| self.in_expr(w));
                    self.in_node(value);
                }
                MapPart::EntriesOf(_) => {}
                MapPart::Named { template, parts } => {
                    if !self.has(template) {
                        self.in_parts(parts);
                        self.found.insert(template, Definition::Entries(parts));
                    }
                }
            }
        }
    }
}

/// The named templates documents use, by name, each with the text of its body as
/// `_helpers.tpl` defines it: the first found in the documents' order and, within one
/// document, depth first. Collected one document at a time, right after its template
/// is written, while its nodes are still in the cache: a walk of every document
/// afterwards, for `_helpers.tpl` alone, was about 15 ms of the 400-workload
/// `generate`, most of it waiting on memory.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct NamedTemplates(BTreeMap<String, String>);

impl NamedTemplates {
    /// The named templates `docs` use.
    pub fn of_documents(docs: &[Document]) -> Self {
        let mut named = NamedTemplates::default();
        for doc in docs {
            named.add_used_by(doc);
        }
        named
    }

    /// Adds the named templates `doc` uses that are not known yet (a document after
    /// those already added).
    pub fn add_used_by(&mut self, doc: &Document) {
        let mut collect = CollectNamed {
            known: &self.0,
            found: BTreeMap::new(),
        };
        doc.when.iter().for_each(|w| collect.in_expr(w));
        collect.in_node(&doc.root);
        for (name, definition) in collect.found {
            self.0.insert(name.to_string(), definition_text(definition));
        }
    }

    /// Adds the named templates of `later`, collected from documents after this one's,
    /// that are not known yet.
    pub fn extend_with_later(&mut self, later: NamedTemplates) {
        for (name, body) in later.0 {
            self.0.entry(name).or_insert(body);
        }
    }

    /// `templates/_helpers.tpl`: every named template, in name order, each with the
    /// comment `describe` gives it.
    pub fn helpers_text(&self, describe: impl Fn(&str) -> String) -> String {
        let mut text = String::new();
        for (name, body) in &self.0 {
            text.push_str(&format!("{{{{/* {} */}}}}\n", describe(name)));
            text.push_str(&format!("{{{{- define {} -}}}}\n", go_string(name)));
            text.push_str(body);
            text.push_str("{{- end }}\n\n");
        }
        text.pop();
        text
    }
}

/// The body of a named template as `_helpers.tpl` defines it.
fn definition_text(definition: Definition<'_>) -> String {
    match definition {
        Definition::Entries(parts) => {
            let mut out = Out::default();
            // Helm mode never evaluates, so it cannot fail.
            let _ = emit_map(parts, 0, &Mode::Helm, &mut out);
            out.text
        }
        Definition::Text(body) => {
            let mut text = String::from("{{ ");
            write_go_unparenthesised(body, &mut text);
            text.push_str(" }}\n");
            text
        }
    }
}

/// The `kind` a document's root mapping declares, when it is a constant.
pub fn document_kind(doc: &Document) -> Option<&str> {
    match &doc.root {
        Node::Map(parts) => parts.iter().find_map(|p| match p {
            MapPart::Entry {
                key: Key::Static(k),
                value: Node::Leaf(Expr::Lit(Value::String(kind))),
                when: None,
            } if k == "kind" => Some(kind.as_str()),
            _ => None,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {

    /// A key is plain when YAML reads it as that string: a letter or `_` first, then
    /// letters, digits, `_`, `.`, `/` and `-`, and no YAML 1.1 word; any other
    /// character, a non-ASCII letter included, is quoted.
    #[test]
    fn keys_are_plain_only_when_yaml_reads_them_back() {
        for plain in ["a", "_x", "app.kubernetes.io/name", "max-surge_2", "Z9"] {
            assert_eq!(yaml_key(plain), plain);
        }
        for quoted in [
            "", "1a", "-a", ".a", "/a", "é", "aé", "éa", "a b", "a:b", "yes", "No", "null", "y",
        ] {
            assert_eq!(yaml_key(quoted), go_string(quoted), "{quoted}");
        }
    }

    /// The head call of a leaf loses its parentheses, written after what `out` holds;
    /// a reference, or text whose outer parentheses are not one pair, keeps them.
    #[test]
    fn a_leaf_is_written_without_its_outer_parentheses_in_place() {
        use crate::expr::{lit, val, ValuePath};
        let a = val(&ValuePath::new(["a"]));
        let cases = [
            (Expr::Add(vec![a.clone(), lit(1)]), "add $.Values.a 1"),
            (a.clone(), "$.Values.a"),
            (Expr::Not(Box::new(a.clone())), "not $.Values.a"),
            (
                Expr::Add(vec![Expr::Not(Box::new(a.clone())), lit(1)]),
                "add (not $.Values.a) 1",
            ),
            (
                Expr::Concat(vec![lit("(x"), lit("y)")]),
                "print \"(x\" \"y)\"",
            ),
            (
                Expr::Default(Box::new(lit("é(")), Box::new(a.clone())),
                "default \"é(\" $.Values.a",
            ),
        ];
        for (e, want) in cases {
            let mut out = String::from("x: ");
            write_go_unparenthesised(&e, &mut out);
            assert_eq!(out, format!("x: {want}"));
            assert_eq!(strip_parens(&e.to_go()), want);
        }
        // Two calls side by side are not one pair of parentheses, also when a string
        // (closed, or holding an escaped quote) comes before the first one closes.
        assert_eq!(strip_parens("(a) (b)"), "(a) (b)");
        assert_eq!(strip_parens("(a (b (c)) d)"), "a (b (c)) d");
        assert_eq!(strip_parens("(a \"x\") (b)"), "(a \"x\") (b)");
        assert_eq!(strip_parens("(a \"\\\"\") (b)"), "(a \"\\\"\") (b)");
        assert_eq!(strip_parens("(a \")\" b)"), "a \")\" b");
        assert_eq!(strip_parens("(a \"\\\"(\" b)"), "a \"\\\"(\" b");
    }
    use super::*;
    use crate::expr::{lit, val};
    use serde_json::json;

    fn doc() -> Document {
        let p = ValuePath::new(["a"]);
        Document {
            file: "x.yaml".into(),
            when: Some(val(&ValuePath::new(["on"]))),
            root: crate::manifest!({
                "kind": "ConfigMap",
                "a" if (val(&p)): (&p),
                "items": [
                    { "name": "x", "no": (lit(1)) },
                    ..(crate::objects::tree::items_of(&ValuePath::new(["extra"]))),
                ],
                "labels": { ..(crate::objects::tree::entries_of(&ValuePath::new(["labels"]))) },
            }),
        }
    }

    /// Every named template a document uses is collected once, with the body of its
    /// first use: one used inside another's body, used again, or known from an earlier
    /// document, and a named map of entries.
    #[test]
    fn each_named_template_is_collected_once_with_its_body() {
        use crate::expr::{lit, named, val, ValuePath};
        use crate::objects::tree::{Document, Node};
        let inner = || named("inner".into(), val(&ValuePath::new(["a"])));
        let outer = || named("outer".into(), Expr::Concat(vec![inner(), lit("-x")]));
        let entries = vec![MapPart::Entry {
            key: Key::Static("k".into()),
            value: Node::Leaf(inner()),
            when: None,
        }];
        let first = Document {
            file: "a.yaml".into(),
            when: Some(outer()),
            root: Node::Map(vec![
                MapPart::Entry {
                    key: Key::Static("x".into()),
                    value: Node::Leaf(Expr::Concat(vec![outer(), outer(), inner()])),
                    when: None,
                },
                MapPart::Named {
                    template: "entries".into(),
                    parts: entries,
                },
            ]),
        };
        let second = Document {
            file: "b.yaml".into(),
            when: None,
            root: Node::Map(vec![
                MapPart::Entry {
                    key: Key::Static("y".into()),
                    value: Node::Leaf(named("inner".into(), lit("another body"))),
                    when: None,
                },
                MapPart::Named {
                    template: "entries".into(),
                    parts: Vec::new(),
                },
            ]),
        };
        let named = NamedTemplates::of_documents(&[first.clone(), second.clone()]);
        let texts: Vec<(&str, &str)> = named
            .0
            .iter()
            .map(|(name, text)| (name.as_str(), text.as_str()))
            .collect();
        assert_eq!(
            texts,
            [
                ("entries", "k: {{ include \"inner\" $ | toJson }}\n"),
                ("inner", "{{ $.Values.a }}\n"),
                ("outer", "{{ print (include \"inner\" $) \"-x\" }}\n"),
            ]
        );
        // The second document alone has its own bodies.
        let alone = NamedTemplates::of_documents(&[second]);
        assert_eq!(alone.0["inner"], "{{ \"another body\" }}\n");
        assert_eq!(alone.0["entries"], "");
        let mut known = NamedTemplates::of_documents(std::slice::from_ref(&first));
        known.add_used_by(&first);
        assert_eq!(known, NamedTemplates::of_documents(&[first]));
    }

    #[test]
    fn helm_text_has_conditions_and_ranges() {
        let text = helm_template_text(&doc());
        assert_eq!(
            text,
            "{{- if $.Values.on }}\nkind: ConfigMap\n{{- if $.Values.a }}\na: {{ $.Values.a | toJson }}\n{{- end }}\nitems:\n  - name: x\n    \"no\": 1\n  {{- range $.Values.extra }}\n  - {{ . | toJson }}\n  {{- end }}\nlabels:\n  {{- range $key, $value := $.Values.labels }}\n  {{ $key | toJson }}: {{ $value | toJson }}\n  {{- end }}\n{{- end }}\n"
        );
    }

    #[test]
    fn render_evaluates_the_same_layout() {
        let values =
            json!({"on": true, "a": "<x>", "extra": [{"k": 1}], "labels": {"b": "2", "a": "1"}});
        let ctx = EvalContext {
            values: &values,
            item: None,
            release_name: "r",
            release_namespace: "n",
            chart_name: "c",
            chart_version: "1",
            chart_app_version: "1",
            named: None,
            base: None,
        };
        let text = render_document_text(&doc(), &ctx).unwrap().unwrap();
        assert_eq!(
            text,
            "kind: ConfigMap\na: \"\\u003cx\\u003e\"\nitems:\n  - name: x\n    \"no\": 1\n  - {\"k\":1}\nlabels:\n  \"a\": \"1\"\n  \"b\": \"2\"\n"
        );
        let off = json!({"on": false});
        let ctx = EvalContext {
            values: &off,
            ..ctx
        };
        assert_eq!(render_document_text(&doc(), &ctx).unwrap(), None);
    }
}
