//! The YAML reader's messages in the project's words: no Rust type or function names
//! (`use Option<String>`, `use from_str_multiple`), and its resource budgets as the
//! limit that was reached instead of a Rust value (`Nodes { nodes: 250001 }`).

/// The reader's message in words, or `None` when it is already plain.
pub fn reader_words(message: &str) -> Option<String> {
    if let Some(breach) = message.strip_prefix("budget breached: ") {
        return Some(budget_words(breach));
    }
    if message.starts_with("alias replay") || message.starts_with("alias expansion") {
        return Some(
            "the file's aliases (`*name`) expand too much: more than the YAML reader replays"
                .into(),
        );
    }
    if message.starts_with("multiple YAML documents detected") {
        return Some(
            "the file holds more than one YAML document (a `---` line); it must hold one".into(),
        );
    }
    if message.starts_with("cannot deserialize null into string") {
        return Some("expected a string, found nothing (`~`, `null` or an empty value)".into());
    }
    if message.starts_with("invalid char: cannot deserialize null") {
        return Some("expected one character, found nothing".into());
    }
    if message.starts_with("internal ") || message.contains("Option<") {
        return Some(format!(
            "the YAML reader failed here ({})",
            message.split(';').next().unwrap_or(message)
        ));
    }
    None
}

/// `Nodes { nodes: 250001 }` as the limit it broke.
fn budget_words(breach: &str) -> String {
    let budget = serde_saphyr::budget::Budget::default();
    let variant = breach.split([' ', '{']).next().unwrap_or(breach);
    let (limit, what) = match variant {
        "Events" => (budget.max_events.to_string(), "YAML events"),
        "Aliases" => (budget.max_aliases.to_string(), "aliases (`*name`)"),
        "Anchors" => (budget.max_anchors.to_string(), "anchors (`&name`)"),
        "Depth" => (budget.max_depth.to_string(), "levels of nesting"),
        "Documents" => (budget.max_documents.to_string(), "YAML documents"),
        "Nodes" => (
            budget.max_nodes.to_string(),
            "values (keys, scalars, lists and mappings)",
        ),
        "ScalarBytes" => (
            crate::spec::limits::human_size(budget.max_total_scalar_bytes as u64),
            "of text",
        ),
        "MergeKeys" => (budget.max_merge_keys.to_string(), "merge keys (`<<`)"),
        "AliasAnchorRatio" => (
            budget.alias_anchor_ratio_multiplier.to_string(),
            "aliases per anchor",
        ),
        _ => {
            return "the file is too large or too deeply nested for the YAML reader".into();
        }
    };
    format!("the file holds more than {limit} {what}, the most shipshape reads")
}

/// serde-saphyr prints `error: line L column C: message at line L, column C`; keep
/// the message, in the project's own words where serde's are terse.
pub fn plain_message(rendered: &str) -> String {
    let first = rendered.lines().next().unwrap_or(rendered);
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let message = match first.split_once(": ") {
        Some((head, rest)) if head.starts_with("line ") => rest,
        _ => first,
    };
    let message = match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    };
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        let key = rest.split(',').next().unwrap_or(rest);
        return format!("duplicate key `{key}`: a key may appear once in a mapping");
    }
    match message {
        "invalid u32" | "invalid u16" | "invalid u64" => {
            "expected a whole number, 0 or more".to_string()
        }
        "invalid i64" | "invalid i32" => "expected a whole number".to_string(),
        "invalid boolean" => "expected `true` or `false`".to_string(),
        other => reader_words(other).unwrap_or_else(|| other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_are_said_as_limits() {
        assert_eq!(
            reader_words("budget breached: Nodes { nodes: 250001 }").unwrap(),
            "the file holds more than 250000 values (keys, scalars, lists and mappings), the most shipshape reads"
        );
        assert_eq!(
            reader_words("budget breached: Depth { depth: 65 }").unwrap(),
            "the file holds more than 64 levels of nesting, the most shipshape reads"
        );
        assert!(reader_words("budget breached: Whatever")
            .unwrap()
            .starts_with("the file is too large"));
    }

    #[test]
    fn no_rust_names_reach_users() {
        for raw in [
            "cannot deserialize null into string; use Option<String>",
            "multiple YAML documents detected; use from_str_multiple or from_str_multiple_with_options",
            "invalid char: cannot deserialize null; use Option<char>",
            "alias replay limit exceeded: total_replayed_events=1000001 > 1000000",
        ] {
            let words = reader_words(raw).unwrap();
            for internal in ["Option<", "from_str", "_events", "deserialize"] {
                assert!(!words.contains(internal), "{words}");
            }
        }
        assert_eq!(reader_words("unknown field `a`"), None);
    }
}
