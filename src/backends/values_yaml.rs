//! `values.yaml` with comments, and the README's values table, both walked from the
//! default values and the values schema's descriptions (the types' doc comments).

use crate::backends::emit::yaml_key;
use crate::contract::schema::resolve_ref;
use serde_json::Value;

/// One entry of the values tree as the documents list it.
struct Row<'a> {
    path: String,
    depth: usize,
    key: &'a str,
    description: String,
    value: &'a Value,
}

fn walk<'a>(
    root_schema: &'a Value,
    schema: &'a Value,
    value: &'a Value,
    path: &str,
    depth: usize,
    rows: &mut Vec<Row<'a>>,
) {
    let schema = resolve_ref(root_schema, schema);
    let Value::Object(map) = value else { return };
    for (key, child) in map {
        let declared = schema
            .get("properties")
            .and_then(|p| p.get(key))
            .unwrap_or(&Value::Null);
        let child_schema = resolve_ref(root_schema, declared);
        let description = declared
            .get("description")
            .or_else(|| child_schema.get("description"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let child_path = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        rows.push(Row {
            path: child_path.clone(),
            depth,
            key,
            description,
            value: child,
        });
        // Free-form maps (config, annotations, probes) are listed whole.
        let typed = child_schema.get("properties").is_some();
        if typed && matches!(child, Value::Object(m) if !m.is_empty()) {
            walk(
                root_schema,
                child_schema,
                child,
                &child_path,
                depth + 1,
                rows,
            );
        }
    }
}

fn scalar_text(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// A number as a YAML author writes it: integers without a fraction.
fn plain_json(v: &Value) -> String {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(plain_json).collect::<Vec<_>>().join(",")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!(
                    "{}:{}",
                    scalar_text(&Value::String(k.clone())),
                    plain_json(v)
                ))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => scalar_text(other),
    }
}

fn wrap_comment(text: &str, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && pad.len() + 2 + line.len() + 1 + word.len() > 90 {
            out.push_str(&format!("{pad}# {line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&format!("{pad}# {line}\n"));
    }
}

/// Prints `values.yaml`: every key with its description as a comment above it.
pub fn values_yaml(values: &Value, schema: &Value, header: &str) -> String {
    let mut rows = Vec::new();
    walk(schema, schema, values, "", 0, &mut rows);
    let mut out = String::new();
    for line in header.lines() {
        out.push_str(&format!("# {line}\n").replace("# \n", "#\n"));
    }
    for (i, row) in rows.iter().enumerate() {
        let indent = row.depth * 2;
        if row.depth == 0 && i > 0 {
            out.push('\n');
        }
        wrap_comment(&row.description, indent, &mut out);
        let key = yaml_key(row.key);
        let pad = " ".repeat(indent);
        let expanded = rows.get(i + 1).is_some_and(|next| next.depth > row.depth);
        match row.value {
            _ if expanded => out.push_str(&format!("{pad}{key}:\n")),
            Value::Object(m) if m.is_empty() => out.push_str(&format!("{pad}{key}: {{}}\n")),
            Value::Array(a) if a.is_empty() => out.push_str(&format!("{pad}{key}: []\n")),
            Value::Array(a) => {
                out.push_str(&format!("{pad}{key}:\n"));
                for item in a {
                    out.push_str(&format!("{pad}  - {}\n", plain_json(item)));
                }
            }
            v => out.push_str(&format!("{pad}{key}: {}\n", plain_json(v))),
        }
    }
    out
}

/// The README's values table: path, default and description of every value.
pub fn values_table(values: &Value, schema: &Value) -> String {
    let mut rows = Vec::new();
    walk(schema, schema, values, "", 0, &mut rows);
    let mut out = String::from("| Key | Default | Description |\n|---|---|---|\n");
    for (i, row) in rows.iter().enumerate() {
        let expanded = rows.get(i + 1).is_some_and(|next| next.depth > row.depth);
        if expanded {
            continue;
        }
        let default = plain_json(row.value).replace('|', "\\|");
        out.push_str(&format!(
            "| `{}` | `{}` | {} |\n",
            row.path,
            default,
            row.description.replace('|', "\\|").replace('\n', " ")
        ));
    }
    out
}
