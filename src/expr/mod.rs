//! Typed expressions over values: the leaves and conditions of the object tree.
//!
//! Each expression has two meanings that must agree: [`Expr::to_go`] prints it as a
//! Go template pipeline for the Helm back end, and [`Expr::evaluate`] computes it
//! natively for the render back end, with Go template and Sprig semantics (truthiness,
//! `and`/`or` returning an operand, `int` truncation, `default` treating zero values as
//! empty). The equivalence tests run real Helm against the native result.

mod context;
mod go_text;
pub mod gojson;
mod semantics;

pub use context::{EvalContext, NamedTexts, SmolStr, ValuePath};
pub use go_text::go_string;
use go_text::{go_ref, is_go_identifier, write_go_literal, write_go_ref};

use semantics::{expect_string, merge_over};
pub use semantics::{sha256_hex, sprig_empty, sprig_int, truthy};

use crate::expr::gojson::to_go_json;
use serde_json::Value;
use std::borrow::Cow;

/// Integer comparison operators (`gt (int a) (int b)` and friends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Gt,
    Ge,
    Lt,
    Le,
    Eq,
    Ne,
}

impl CmpOp {
    fn go_name(self) -> &'static str {
        match self {
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
        }
    }

    fn apply(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
        }
    }
}

/// Built-in objects of a Helm render other than `.Values`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    ReleaseName,
    ReleaseNamespace,
    ReleaseService,
    ChartName,
    ChartVersion,
    ChartAppVersion,
}

impl Builtin {
    fn go(self) -> &'static str {
        match self {
            Builtin::ReleaseName => "$.Release.Name",
            Builtin::ReleaseNamespace => "$.Release.Namespace",
            Builtin::ReleaseService => "$.Release.Service",
            Builtin::ChartName => "$.Chart.Name",
            Builtin::ChartVersion => "$.Chart.Version",
            Builtin::ChartAppVersion => "$.Chart.AppVersion",
        }
    }
}

/// An expression over values. Strings in [`Expr::Lit`] are the generator's own
/// constants; text from the spec or values only ever arrives through [`Expr::Ref`].
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A constant written by the generator (never user text).
    Lit(Value),
    /// A value reference: `.Values.a.b`.
    Ref(ValuePath),
    /// `.Release.Name`, `.Chart.Version`, ...
    Builtin(Builtin),
    /// Go truthiness negated: `not x`.
    Not(Box<Expr>),
    /// `and a b ...`: the first falsy operand, else the last.
    And(Vec<Expr>),
    /// `or a b ...`: the first truthy operand, else the last.
    Or(Vec<Expr>),
    /// Integer comparison after Sprig's `int`: `gt (int a) (int b)`.
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    /// String equality: `eq a b` (both sides must be strings).
    StrEq(Box<Expr>, Box<Expr>),
    /// `ternary then else (truth of cond)`.
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Sprig `default fallback value`: the fallback when the value is empty.
    Default(Box<Expr>, Box<Expr>),
    /// String concatenation of string operands: `print a b c`.
    Concat(Vec<Expr>),
    /// A Kubernetes name: `trunc N` (63 for a whole name) then `trimSuffix "-"`.
    DnsName(usize, Box<Expr>),
    /// Sprig `contains sub s`: whether the string `s` contains `sub`.
    Contains(Box<Expr>, Box<Expr>),
    /// `replace "+" "_"` on a string, as Helm's chart label does.
    ReplacePlus(Box<Expr>),
    /// `sha256sum (toJson x)`: the checksum of a value's Go JSON encoding.
    Sha256Json(Box<Expr>),
    /// `toJson x` as a string (for embedding a value tree as file text).
    JsonText(Box<Expr>),
    /// `toString (int x)`: an integer rendered as a decimal string.
    IntString(Box<Expr>),
    /// The current element of a `range` over a values list (Go's `.`).
    Item,
    /// Integer sum after Sprig's `int64` conversion: `add a b ...`.
    Add(Vec<Expr>),
    /// Integer product: `mul a b ...`.
    Mul(Vec<Expr>),
    /// Integer difference: `sub a b`.
    Sub(Box<Expr>, Box<Expr>),
    /// A list when the condition holds, else the empty list.
    ListIf(Box<Expr>, Box<Expr>),
    /// Lists concatenated and their string items joined: `join "," (concat a b)`.
    JoinLists(&'static str, Vec<Expr>),
    /// `trimSuffix "," x` on a string.
    TrimSuffix(&'static str, Box<Expr>),
    /// A map built from key/value pairs: `dict k1 v1 k2 v2` (a later key wins).
    Dict(Vec<(Expr, Expr)>),
    /// A copy of a map with one key set: `set (deepCopy m) k v`.
    WithKey(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A copy of the first map with the second merged over it: `mergeOverwrite
    /// (deepCopy base) over`. Key by key, two maps merge and anything else from `over`
    /// replaces (`false`, `0`, `""`, `null` and lists included), as Helm 3 and 4 do.
    MergeOver(Box<Expr>, Box<Expr>),
    /// Pods a rolling update may add for `max pods`, from a `maxSurge` that is a count
    /// or a percentage (rounded up, as Kubernetes rounds it).
    SurgePods(Box<Expr>, Box<Expr>),
    /// A named template of `_helpers.tpl` (`include "<name>" $`) whose text is the
    /// string `body` evaluates to. The render back end evaluates `body` in place.
    Named(String, std::sync::Arc<Expr>),
    /// `sha256sum x` of a string.
    Sha256(Box<Expr>),
    /// A key of the current element of a `range` (Go's `.key`).
    ItemField(String),
}

/// An expression failed to evaluate the way Go's template engine would fail.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cannot evaluate `{expression}`: {reason}")]
pub struct EvalError {
    pub expression: String,
    pub reason: String,
}

/// Shorthands used by the object builders.
pub fn lit<V: Into<Value>>(v: V) -> Expr {
    Expr::Lit(v.into())
}

/// The named template `name` (`include "<name>" $`) whose text `body` evaluates to.
pub fn named(name: String, body: Expr) -> Expr {
    Expr::Named(name, std::sync::Arc::new(body))
}

/// A value reference from a dotted path of keys.
pub fn val(path: &ValuePath) -> Expr {
    Expr::Ref(path.clone())
}

impl Expr {
    /// Every value the expression reads, in order of appearance.
    pub fn value_paths(&self) -> Vec<ValuePath> {
        let mut out = Vec::new();
        self.collect_paths(&mut out);
        out
    }

    fn collect_paths(&self, out: &mut Vec<ValuePath>) {
        if let Expr::Ref(p) = self {
            out.push(p.clone());
        }
        self.for_each_child(|child| child.collect_paths(out));
    }

    /// Calls `f` on each of the expression's operands, in order of appearance. A
    /// visit rather than a list: the walks over every expression of a chart
    /// (`_helpers.tpl`'s named templates, the values paths read) allocated a list
    /// for each expression with operands.
    pub(crate) fn for_each_child<'e>(&'e self, mut f: impl FnMut(&'e Expr)) {
        match self {
            Expr::Lit(_) | Expr::Ref(_) | Expr::Builtin(_) | Expr::Item | Expr::ItemField(_) => {}
            Expr::Not(a)
            | Expr::DnsName(_, a)
            | Expr::ReplacePlus(a)
            | Expr::Sha256Json(a)
            | Expr::JsonText(a)
            | Expr::IntString(a)
            | Expr::TrimSuffix(_, a)
            | Expr::Sha256(a) => f(a),
            Expr::Named(_, a) => f(a),
            Expr::And(items)
            | Expr::Or(items)
            | Expr::Concat(items)
            | Expr::Add(items)
            | Expr::Mul(items)
            | Expr::JoinLists(_, items) => items.iter().for_each(f),
            Expr::Cmp(_, a, b)
            | Expr::StrEq(a, b)
            | Expr::Default(a, b)
            | Expr::Contains(a, b)
            | Expr::Sub(a, b)
            | Expr::ListIf(a, b)
            | Expr::SurgePods(a, b)
            | Expr::MergeOver(a, b) => {
                f(a);
                f(b);
            }
            Expr::If(a, b, c) | Expr::WithKey(a, b, c) => {
                f(a);
                f(b);
                f(c);
            }
            Expr::Dict(pairs) => {
                for (k, v) in pairs {
                    f(k);
                    f(v);
                }
            }
        }
    }

    /// `gt (int self) (int other)` and the other comparisons.
    pub fn cmp(self, op: CmpOp, other: Expr) -> Expr {
        Expr::Cmp(op, Box::new(self), Box::new(other))
    }

    /// Prints the expression as a Go template pipeline operand (parenthesised
    /// where it is a call).
    pub fn to_go(&self) -> String {
        let mut out = String::new();
        self.write_go(&mut out);
        out
    }

    /// [`Expr::to_go`] appended to `out`: every operand is written into the one
    /// buffer, none into a string of its own.
    pub fn write_go(&self, out: &mut String) {
        // `(head a b ...)` with each operand written in turn.
        fn call(out: &mut String, head: &str, operands: &[&Expr]) {
            out.push('(');
            out.push_str(head);
            for e in operands {
                out.push(' ');
                e.write_go(out);
            }
            out.push(')');
        }
        fn call_all(out: &mut String, head: &str, operands: &[Expr]) {
            out.push('(');
            out.push_str(head);
            out.push(' ');
            write_joined(out, operands);
            out.push(')');
        }
        match self {
            Expr::Lit(v) => write_go_literal(out, v),
            Expr::Ref(path) => write_go_ref(out, path),
            Expr::Builtin(b) => out.push_str(b.go()),
            Expr::Not(e) => call(out, "not", &[&**e]),
            Expr::And(es) => call_all(out, "and", es),
            Expr::Or(es) => call_all(out, "or", es),
            Expr::Cmp(op, a, b) => {
                out.push('(');
                out.push_str(op.go_name());
                out.push_str(" (int ");
                a.write_go(out);
                out.push_str(") (int ");
                b.write_go(out);
                out.push_str("))");
            }
            Expr::StrEq(a, b) => call(out, "eq", &[&**a, &**b]),
            Expr::If(c, a, b) => {
                out.push_str("(ternary ");
                a.write_go(out);
                out.push(' ');
                b.write_go(out);
                out.push_str(" (not (not ");
                c.write_go(out);
                out.push_str(")))");
            }
            Expr::Default(d, v) => call(out, "default", &[&**d, &**v]),
            Expr::Concat(es) => call_all(out, "print", es),
            Expr::DnsName(n, e) => {
                out.push_str("(trimSuffix \"-\" (trunc ");
                out.push_str(&n.to_string());
                out.push(' ');
                e.write_go(out);
                out.push_str("))");
            }
            Expr::Contains(sub, s) => call(out, "contains", &[&**sub, &**s]),
            Expr::ReplacePlus(e) => call(out, "replace \"+\" \"_\"", &[&**e]),
            Expr::Sha256Json(e) => {
                out.push_str("(sha256sum (toJson ");
                e.write_go(out);
                out.push_str("))");
            }
            Expr::JsonText(e) => call(out, "toJson", &[&**e]),
            Expr::IntString(e) => {
                out.push_str("(toString (int ");
                e.write_go(out);
                out.push_str("))");
            }
            Expr::Item => out.push('.'),
            Expr::Add(es) => call_all(out, "add", es),
            Expr::Mul(es) => call_all(out, "mul", es),
            Expr::Sub(a, b) => call(out, "sub", &[&**a, &**b]),
            Expr::ListIf(c, l) => {
                out.push_str("(ternary ");
                l.write_go(out);
                out.push_str(" (list) (not (not ");
                c.write_go(out);
                out.push_str(")))");
            }
            Expr::JoinLists(sep, lists) => {
                out.push_str("(join ");
                out.push_str(&go_string(sep));
                out.push_str(" (concat ");
                write_joined(out, lists);
                out.push_str("))");
            }
            Expr::TrimSuffix(suffix, e) => {
                out.push_str("(trimSuffix ");
                out.push_str(&go_string(suffix));
                out.push(' ');
                e.write_go(out);
                out.push(')');
            }
            Expr::Dict(pairs) => {
                out.push_str("(dict");
                for (k, v) in pairs {
                    out.push(' ');
                    k.write_go(out);
                    out.push(' ');
                    v.write_go(out);
                }
                out.push(')');
            }
            Expr::WithKey(m, k, v) => {
                out.push_str("(set (deepCopy ");
                m.write_go(out);
                out.push_str(") ");
                k.write_go(out);
                out.push(' ');
                v.write_go(out);
                out.push(')');
            }
            Expr::MergeOver(base, over) => {
                out.push_str("(mergeOverwrite (deepCopy ");
                base.write_go(out);
                out.push_str(") ");
                over.write_go(out);
                out.push(')');
            }
            Expr::SurgePods(pods, surge) => {
                let (p, s) = (pods.to_go(), surge.to_go());
                out.push_str(&format!(
                    "(ternary (div (add (mul {p} (int (trimSuffix \"%\" (toString {s})))) 99) 100) (int {s}) (hasSuffix \"%\" (toString {s})))"
                ));
            }
            Expr::Named(name, _) => {
                out.push_str("(include ");
                out.push_str(&go_string(name));
                out.push_str(" $)");
            }
            Expr::Sha256(e) => call(out, "sha256sum", &[&**e]),
            Expr::ItemField(key) if is_go_identifier(key) => {
                out.push('.');
                out.push_str(key);
            }
            Expr::ItemField(key) => {
                out.push_str("(index . ");
                out.push_str(&go_string(key));
                out.push(')');
            }
        }
    }

    /// Evaluates the expression natively with Go template and Sprig semantics.
    pub fn evaluate(&self, ctx: &EvalContext<'_>) -> Result<Value, EvalError> {
        Ok(self.eval(ctx, Overflow::Wrap)?.into_owned())
    }

    /// Evaluates like [`Expr::evaluate`] without copying: a value reference, a constant
    /// or a range element comes back borrowed from the values or the expression.
    pub fn evaluate_borrowed<'a>(
        &'a self,
        ctx: &EvalContext<'a>,
    ) -> Result<Cow<'a, Value>, EvalError> {
        self.eval(ctx, Overflow::Wrap)
    }

    /// Evaluates like [`Expr::evaluate`], except that integer arithmetic (`add`, `mul`,
    /// `sub`, a surge's percentage) saturates at int64's bounds where Go wraps: the same
    /// value whenever Helm's arithmetic does not overflow, and the largest (or smallest)
    /// integer, never a wrapped one, where it would. The capacity report uses it, so
    /// absurd values give a huge peak and a finding.
    pub fn evaluate_saturating(&self, ctx: &EvalContext<'_>) -> Result<Value, EvalError> {
        Ok(self.eval(ctx, Overflow::Saturate)?.into_owned())
    }

    /// The integer (Sprig's `int`) of [`Expr::evaluate_saturating`], without copying.
    pub fn evaluate_saturating_int(&self, ctx: &EvalContext<'_>) -> Result<i64, EvalError> {
        Ok(sprig_int(&*self.eval(ctx, Overflow::Saturate)?))
    }

    /// Go truthiness of [`Expr::evaluate_saturating`], without copying.
    pub fn evaluate_saturating_truth(&self, ctx: &EvalContext<'_>) -> Result<bool, EvalError> {
        Ok(truthy(&*self.eval(ctx, Overflow::Saturate)?))
    }

    fn eval<'a>(
        &'a self,
        ctx: &EvalContext<'a>,
        arith: Overflow,
    ) -> Result<Cow<'a, Value>, EvalError> {
        let fail = |reason: String| EvalError {
            expression: self.to_go(),
            reason,
        };
        let int = |e: &'a Expr| -> Result<i64, EvalError> { Ok(sprig_int(&*e.eval(ctx, arith)?)) };
        let owned = |v: Value| Ok(Cow::Owned(v));
        match self {
            Expr::Lit(v) => Ok(Cow::Borrowed(v)),
            Expr::Ref(path) => match ctx.lookup_like_go(path).map_err(fail)? {
                Some(v) => Ok(Cow::Borrowed(v)),
                None => owned(Value::Null),
            },
            Expr::Builtin(b) => owned(Value::String(
                match b {
                    Builtin::ReleaseName => ctx.release_name,
                    Builtin::ReleaseNamespace => ctx.release_namespace,
                    Builtin::ReleaseService => "Helm",
                    Builtin::ChartName => ctx.chart_name,
                    Builtin::ChartVersion => ctx.chart_version,
                    Builtin::ChartAppVersion => ctx.chart_app_version,
                }
                .to_string(),
            )),
            Expr::Not(e) => owned(Value::Bool(!truthy(&*e.eval(ctx, arith)?))),
            Expr::And(es) => {
                let mut last = Cow::Owned(Value::Null);
                for e in es {
                    last = e.eval(ctx, arith)?;
                    if !truthy(&last) {
                        break;
                    }
                }
                Ok(last)
            }
            Expr::Or(es) => {
                let mut last = Cow::Owned(Value::Null);
                for e in es {
                    last = e.eval(ctx, arith)?;
                    if truthy(&last) {
                        break;
                    }
                }
                Ok(last)
            }
            Expr::Cmp(op, a, b) => {
                let a = int(a)?;
                let b = int(b)?;
                owned(Value::Bool(op.apply(a, b)))
            }
            Expr::StrEq(a, b) => match (&*a.eval(ctx, arith)?, &*b.eval(ctx, arith)?) {
                (Value::String(a), Value::String(b)) => owned(Value::Bool(a == b)),
                (a, b) => Err(fail(format!(
                    "incompatible types for comparison: {} and {}",
                    to_go_json(a),
                    to_go_json(b)
                ))),
            },
            Expr::If(c, a, b) => {
                // ternary evaluates both branches, as Go evaluates call arguments.
                let then = a.eval(ctx, arith)?;
                let otherwise = b.eval(ctx, arith)?;
                if truthy(&*c.eval(ctx, arith)?) {
                    Ok(then)
                } else {
                    Ok(otherwise)
                }
            }
            Expr::Default(d, v) => {
                let v = v.eval(ctx, arith)?;
                if sprig_empty(&v) {
                    d.eval(ctx, arith)
                } else {
                    Ok(v)
                }
            }
            Expr::Concat(es) => {
                let mut s = String::new();
                for e in es {
                    match &*e.eval(ctx, arith)? {
                        Value::String(part) => s.push_str(part),
                        other => {
                            return Err(fail(format!(
                                "expected a string, got {}",
                                to_go_json(other)
                            )))
                        }
                    }
                }
                owned(Value::String(s))
            }
            Expr::Contains(sub, s) => {
                let sub = expect_string(sub.eval(ctx, arith)?.into_owned()).map_err(fail)?;
                let s = expect_string(s.eval(ctx, arith)?.into_owned()).map_err(fail)?;
                owned(Value::Bool(s.contains(&sub)))
            }
            Expr::DnsName(n, e) => {
                let s = expect_string(e.eval(ctx, arith)?.into_owned()).map_err(fail)?;
                let mut cut = if s.len() > *n {
                    s.as_bytes()[..*n].to_vec()
                } else {
                    s.into_bytes()
                };
                if cut.last() == Some(&b'-') {
                    cut.pop();
                }
                owned(Value::String(String::from_utf8_lossy(&cut).into_owned()))
            }
            Expr::ReplacePlus(e) => owned(Value::String(
                expect_string(e.eval(ctx, arith)?.into_owned())
                    .map_err(fail)?
                    .replace('+', "_"),
            )),
            Expr::Sha256Json(e) => {
                let json = to_go_json(&*e.eval(ctx, arith)?);
                owned(Value::String(sha256_hex(json.as_bytes())))
            }
            Expr::JsonText(e) => owned(Value::String(to_go_json(&*e.eval(ctx, arith)?))),
            Expr::IntString(e) => owned(Value::String(int(e)?.to_string())),
            Expr::Item => ctx
                .item
                .map(Cow::Borrowed)
                .ok_or_else(|| fail("`.` outside a range".into())),
            Expr::Add(es) => {
                let mut sum: i64 = 0;
                for e in es {
                    sum = arith.add(sum, int(e)?);
                }
                owned(Value::Number(sum.into()))
            }
            Expr::Mul(es) => {
                let mut product: i64 = 1;
                for e in es {
                    product = arith.mul(product, int(e)?);
                }
                owned(Value::Number(product.into()))
            }
            Expr::Sub(a, b) => owned(Value::Number(arith.sub(int(a)?, int(b)?).into())),
            Expr::ListIf(c, l) => {
                let list = l.eval(ctx, arith)?;
                if truthy(&*c.eval(ctx, arith)?) {
                    Ok(list)
                } else {
                    owned(Value::Array(Vec::new()))
                }
            }
            Expr::JoinLists(sep, lists) => {
                let mut evaluated = Vec::with_capacity(lists.len());
                for l in lists {
                    let list = l.eval(ctx, arith)?;
                    if !list.is_array() {
                        return Err(fail(format!(
                            "cannot concat {} as a list",
                            to_go_json(&list)
                        )));
                    }
                    evaluated.push(list);
                }
                let mut parts: Vec<&str> = Vec::new();
                for v in evaluated
                    .iter()
                    .flat_map(|l| l.as_array().into_iter().flatten())
                {
                    match v {
                        Value::Null => {}
                        Value::String(s) => parts.push(s),
                        other => {
                            return Err(fail(format!(
                                "expected a string item, got {}",
                                to_go_json(other)
                            )))
                        }
                    }
                }
                owned(Value::String(parts.join(sep)))
            }
            Expr::Dict(pairs) => {
                let mut map = serde_json::Map::new();
                for (k, v) in pairs {
                    let key = expect_string(k.eval(ctx, arith)?.into_owned()).map_err(fail)?;
                    map.insert(key, v.eval(ctx, arith)?.into_owned());
                }
                owned(Value::Object(map))
            }
            Expr::MergeOver(base, over) => {
                match (
                    base.eval(ctx, arith)?.into_owned(),
                    over.eval(ctx, arith)?.into_owned(),
                ) {
                    (Value::Object(mut map), Value::Object(over)) => {
                        merge_over(&mut map, over);
                        owned(Value::Object(map))
                    }
                    (base, over) => Err(fail(format!(
                        "mergeOverwrite needs two maps, got {} and {}",
                        to_go_json(&base),
                        to_go_json(&over)
                    ))),
                }
            }
            Expr::WithKey(m, k, v) => match m.eval(ctx, arith)?.into_owned() {
                Value::Object(mut map) => {
                    let key = expect_string(k.eval(ctx, arith)?.into_owned()).map_err(fail)?;
                    map.insert(key, v.eval(ctx, arith)?.into_owned());
                    owned(Value::Object(map))
                }
                other => Err(fail(format!("set needs a map, got {}", to_go_json(&other)))),
            },
            Expr::TrimSuffix(suffix, e) => {
                let s = expect_string(e.eval(ctx, arith)?.into_owned()).map_err(fail)?;
                owned(Value::String(
                    s.strip_suffix(*suffix).unwrap_or(&s).to_string(),
                ))
            }
            Expr::SurgePods(pods, surge) => {
                let pods = int(pods)?;
                let surge = surge.eval(ctx, arith)?;
                let value = match &*surge {
                    Value::String(s) if s.ends_with('%') => {
                        let percent =
                            sprig_int(&Value::String(s.trim_end_matches('%').to_string()));
                        // Go's `div` truncates toward zero, as Rust's `/` does.
                        arith.add(arith.mul(pods, percent), 99) / 100
                    }
                    other => sprig_int(other),
                };
                owned(Value::Number(value.into()))
            }
            Expr::Named(name, body) => {
                let memo = ctx.named.as_deref().filter(|_| ctx.item.is_none());
                if let Some(text) = memo.and_then(|m| m.borrow().get(name).cloned()) {
                    return owned(Value::String(text));
                }
                let text =
                    expect_string(body.eval(ctx, Overflow::Wrap)?.into_owned()).map_err(fail)?;
                if let Some(memo) = memo {
                    memo.borrow_mut().insert(name.clone(), text.clone());
                }
                owned(Value::String(text))
            }
            Expr::ItemField(key) => match ctx.item {
                Some(Value::Object(map)) => {
                    Ok(map.get(key).map_or(Cow::Owned(Value::Null), Cow::Borrowed))
                }
                Some(other) => Err(fail(format!("field {key} of {}", to_go_json(other)))),
                None => Err(fail("`.` outside a range".into())),
            },
            Expr::Sha256(e) => {
                let text =
                    expect_string(e.eval(ctx, Overflow::Wrap)?.into_owned()).map_err(fail)?;
                owned(Value::String(sha256_hex(text.as_bytes())))
            }
        }
    }
}

/// How integer arithmetic treats an int64 overflow: Go (and so Helm) wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Overflow {
    Wrap,
    Saturate,
}

impl Overflow {
    fn add(self, a: i64, b: i64) -> i64 {
        match self {
            Overflow::Wrap => a.wrapping_add(b),
            Overflow::Saturate => a.saturating_add(b),
        }
    }

    fn sub(self, a: i64, b: i64) -> i64 {
        match self {
            Overflow::Wrap => a.wrapping_sub(b),
            Overflow::Saturate => a.saturating_sub(b),
        }
    }

    fn mul(self, a: i64, b: i64) -> i64 {
        match self {
            Overflow::Wrap => a.wrapping_mul(b),
            Overflow::Saturate => a.saturating_mul(b),
        }
    }
}

/// The operands' Go text, separated by single spaces.
fn write_joined(out: &mut String, es: &[Expr]) {
    for (i, e) in es.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        e.write_go(out);
    }
}

#[cfg(test)]
mod tests {

    /// Every kind of expression prints its Go text: operands in order, one space
    /// apart, each call in its parentheses, references with dots or `index`.
    #[test]
    fn every_expression_prints_its_go_text() {
        let a = || Box::new(val(&ValuePath::new(["a"])));
        let odd = || Box::new(val(&ValuePath::new(["workloads", "pool-1", "x y"])));
        let cases: Vec<(Expr, &str)> = vec![
            (lit(Value::Null), "nil"),
            (lit(true), "true"),
            (lit(false), "false"),
            (lit(3), "3"),
            (lit(2.5), "2.5"),
            (lit("a\"b"), r#""a\"b""#),
            (lit(json!([1])), r#"(fromJson "[1]")"#),
            (*a(), "$.Values.a"),
            (*odd(), r#"(index $.Values "workloads" "pool-1" "x y")"#),
            (val(&ValuePath::new(["_a1", "B_2"])), "$.Values._a1.B_2"),
            (val(&ValuePath::new(["é"])), r#"(index $.Values "é")"#),
            (
                val(&ValuePath::new(["aé", "1a"])),
                r#"(index $.Values "aé" "1a")"#,
            ),
            (val(&ValuePath::new([""])), r#"(index $.Values "")"#),
            (Expr::Builtin(Builtin::ReleaseName), "$.Release.Name"),
            (Expr::Not(a()), "(not $.Values.a)"),
            (
                Expr::And(vec![*a(), *odd()]),
                r#"(and $.Values.a (index $.Values "workloads" "pool-1" "x y"))"#,
            ),
            (Expr::Or(vec![]), "(or )"),
            (
                Expr::Cmp(CmpOp::Ge, a(), Box::new(lit(1))),
                "(ge (int $.Values.a) (int 1))",
            ),
            (
                Expr::StrEq(a(), Box::new(lit("x"))),
                r#"(eq $.Values.a "x")"#,
            ),
            (
                Expr::If(a(), Box::new(lit(1)), Box::new(lit(0))),
                "(ternary 1 0 (not (not $.Values.a)))",
            ),
            (
                Expr::Default(Box::new(lit(2)), a()),
                "(default 2 $.Values.a)",
            ),
            (
                Expr::Concat(vec![lit("x"), *a()]),
                r#"(print "x" $.Values.a)"#,
            ),
            (
                Expr::DnsName(63, a()),
                r#"(trimSuffix "-" (trunc 63 $.Values.a))"#,
            ),
            (
                Expr::Contains(Box::new(lit("x")), a()),
                r#"(contains "x" $.Values.a)"#,
            ),
            (Expr::ReplacePlus(a()), r#"(replace "+" "_" $.Values.a)"#),
            (Expr::Sha256Json(a()), "(sha256sum (toJson $.Values.a))"),
            (Expr::JsonText(a()), "(toJson $.Values.a)"),
            (Expr::IntString(a()), "(toString (int $.Values.a))"),
            (Expr::Item, "."),
            (
                Expr::Add(vec![*a(), lit(1), lit(2)]),
                "(add $.Values.a 1 2)",
            ),
            (Expr::Mul(vec![*a()]), "(mul $.Values.a)"),
            (Expr::Sub(a(), Box::new(lit(1))), "(sub $.Values.a 1)"),
            (
                Expr::ListIf(a(), Box::new(lit("l"))),
                r#"(ternary "l" (list) (not (not $.Values.a)))"#,
            ),
            (
                Expr::JoinLists(",", vec![*a(), Expr::Item]),
                r#"(join "," (concat $.Values.a .))"#,
            ),
            (Expr::TrimSuffix("-", a()), r#"(trimSuffix "-" $.Values.a)"#),
            (Expr::Dict(vec![]), "(dict)"),
            (
                Expr::Dict(vec![(lit("k"), *a()), (lit("j"), lit(1))]),
                r#"(dict "k" $.Values.a "j" 1)"#,
            ),
            (
                Expr::WithKey(a(), Box::new(lit("k")), Box::new(lit(1))),
                r#"(set (deepCopy $.Values.a) "k" 1)"#,
            ),
            (
                Expr::MergeOver(a(), Box::new(Expr::Item)),
                "(mergeOverwrite (deepCopy $.Values.a) .)",
            ),
            (
                Expr::SurgePods(Box::new(lit(4)), a()),
                r#"(ternary (div (add (mul 4 (int (trimSuffix "%" (toString $.Values.a)))) 99) 100) (int $.Values.a) (hasSuffix "%" (toString $.Values.a)))"#,
            ),
            (named("chart.x".into(), lit(1)), r#"(include "chart.x" $)"#),
            (Expr::Sha256(a()), "(sha256sum $.Values.a)"),
            (Expr::ItemField("name".into()), ".name"),
            (Expr::ItemField("a-b".into()), r#"(index . "a-b")"#),
        ];
        for (e, want) in cases {
            assert_eq!(e.to_go(), want, "{e:?}");
            let mut out = String::from("{{ ");
            e.write_go(&mut out);
            assert_eq!(out, format!("{{{{ {want}"), "{e:?}");
        }
    }
    use super::*;
    use serde_json::json;

    fn ctx(values: &Value) -> EvalContext<'_> {
        EvalContext {
            values,
            item: None,
            release_name: "rel",
            release_namespace: "ns",
            chart_name: "c",
            chart_version: "1.0.0+b",
            chart_app_version: "2",
            named: None,
            base: None,
        }
    }

    #[test]
    fn a_named_template_is_evaluated_once_per_context_outside_a_range() {
        let values = json!({"a": "first"});
        let template = named("c.a".into(), val(&ValuePath::new(["a"])));
        let text = |ctx: &EvalContext<'_>| template.evaluate(ctx).unwrap();
        // Without a memo, each inclusion evaluates the body.
        assert_eq!(text(&ctx(&values)), json!("first"));
        let memo: std::rc::Rc<NamedTexts> = std::rc::Rc::default();
        let with_memo = EvalContext {
            named: Some(memo.clone()),
            base: None,
            ..ctx(&values)
        };
        assert_eq!(text(&with_memo), json!("first"));
        assert_eq!(memo.borrow().get("c.a").map(String::as_str), Some("first"));
        // The text is reused: the body is not evaluated again.
        memo.borrow_mut().insert("c.a".into(), "kept".into());
        assert_eq!(text(&with_memo), json!("kept"));
        // Inside a range `.` is not the root: the body is evaluated, nothing stored.
        let item = json!({"x": 1});
        let in_range = EvalContext {
            item: Some(&item),
            ..with_memo.clone()
        };
        assert_eq!(text(&in_range), json!("first"));
        assert_eq!(memo.borrow().get("c.a").map(String::as_str), Some("kept"));
        // An error is not remembered.
        let failing = named("c.b".into(), val(&ValuePath::new(["missing", "deeper"])));
        assert!(failing.evaluate(&with_memo).is_err());
        assert!(!memo.borrow().contains_key("c.b"));
    }

    #[test]
    fn refs_print_dotted_or_indexed() {
        assert_eq!(val(&ValuePath::new(["a", "b"])).to_go(), "$.Values.a.b");
        assert_eq!(
            val(&ValuePath::new(["workloads", "batch-worker"])).to_go(),
            "(index $.Values \"workloads\" \"batch-worker\")"
        );
    }

    #[test]
    fn and_or_return_operands_and_int_truncates() {
        let values = json!({"n": 2.9, "s": "", "m": {"k": 1}});
        let c = ctx(&values);
        let n = val(&ValuePath::new(["n"]));
        let s = val(&ValuePath::new(["s"]));
        assert_eq!(
            Expr::Or(vec![s.clone(), n.clone()]).evaluate(&c).unwrap(),
            json!(2.9)
        );
        assert_eq!(
            Expr::And(vec![n.clone(), s.clone()]).evaluate(&c).unwrap(),
            json!("")
        );
        assert_eq!(
            n.clone().cmp(CmpOp::Gt, lit(2)).evaluate(&c).unwrap(),
            json!(false)
        );
        assert_eq!(
            Expr::IntString(Box::new(n)).evaluate(&c).unwrap(),
            json!("2")
        );
        assert_eq!(
            Expr::Default(Box::new(lit("d")), Box::new(s))
                .evaluate(&c)
                .unwrap(),
            json!("d")
        );
    }

    #[test]
    fn missing_parent_is_an_error_missing_leaf_is_nil() {
        let values = json!({"a": {}});
        let c = ctx(&values);
        assert_eq!(
            val(&ValuePath::new(["a", "b"])).evaluate(&c).unwrap(),
            Value::Null
        );
        assert!(val(&ValuePath::new(["a", "b", "c"])).evaluate(&c).is_err());
    }

    #[test]
    fn integer_arithmetic_wraps_like_go_and_saturates_on_request() {
        let values = json!({"big": i64::MAX, "small": i64::MIN});
        let c = ctx(&values);
        let big = val(&ValuePath::new(["big"]));
        let small = val(&ValuePath::new(["small"]));
        let cases = [
            (Expr::Add(vec![big.clone(), lit(1)]), i64::MIN, i64::MAX),
            (Expr::Mul(vec![big.clone(), lit(2)]), -2, i64::MAX),
            (Expr::Mul(vec![small.clone(), lit(2)]), 0, i64::MIN),
            (
                Expr::Sub(Box::new(small), Box::new(lit(1))),
                i64::MAX,
                i64::MIN,
            ),
            (
                Expr::Sub(Box::new(lit(-2)), Box::new(big)),
                i64::MAX,
                i64::MIN,
            ),
        ];
        for (e, wrapped, saturated) in cases {
            assert_eq!(e.evaluate(&c).unwrap(), json!(wrapped), "{}", e.to_go());
            assert_eq!(e.evaluate_saturating(&c).unwrap(), json!(saturated));
        }
        // Without an overflow both give Go's result.
        let e = Expr::Sub(
            Box::new(Expr::Mul(vec![lit(6), lit(7)])),
            Box::new(Expr::Add(vec![lit(1), lit(2)])),
        );
        assert_eq!(e.evaluate(&c).unwrap(), json!(39));
        assert_eq!(e.evaluate_saturating(&c).unwrap(), json!(39));
    }

    #[test]
    fn surge_pods_round_a_percentage_up_and_divide_like_go() {
        let values = json!({});
        let c = ctx(&values);
        let surge = |pods: i64, max_surge: Value| {
            Expr::SurgePods(Box::new(lit(pods)), Box::new(Expr::Lit(max_surge)))
        };
        for (pods, max_surge, expected) in [
            (3, json!("25%"), 1),
            (5, json!("25%"), 2),
            (4, json!("100%"), 4),
            (4, json!("0%"), 0),
            (3, json!(2), 2),
            (3, json!(0), 0),
            // Go's `div` truncates toward zero: (-200 + 99) / 100 is -1, not -2.
            (-2, json!("100%"), -1),
        ] {
            let e = surge(pods, max_surge.clone());
            assert_eq!(
                e.evaluate(&c).unwrap(),
                json!(expected),
                "{pods} {max_surge}"
            );
            assert_eq!(e.evaluate_saturating(&c).unwrap(), json!(expected));
        }
        let e = surge(i64::MAX, json!("999%"));
        assert_eq!(e.evaluate_saturating(&c).unwrap(), json!(i64::MAX / 100));
        assert_ne!(e.evaluate(&c).unwrap(), json!(i64::MAX / 100));
    }

    #[test]
    fn chart_label_replaces_plus() {
        let values = json!({});
        let c = ctx(&values);
        let e = Expr::ReplacePlus(Box::new(Expr::Concat(vec![
            Expr::Builtin(Builtin::ChartName),
            lit("-"),
            Expr::Builtin(Builtin::ChartVersion),
        ])));
        assert_eq!(e.evaluate(&c).unwrap(), json!("c-1.0.0_b"));
    }
}
