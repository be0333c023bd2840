//! Where a values path is written in a values file: its line and column, and the
//! scalar as written when it is unquoted (for the YAML 1.1 hint: `no` is `false`).
//! One pass over the parser's events.

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};

/// A values path's place in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// 1-based line and column of the key (or of the list item).
    pub line: u64,
    pub column: u64,
    /// The value as written, when it is an unquoted scalar.
    pub plain: Option<String>,
}

enum Frame {
    /// A mapping: the key of the value being read, `None` while a key is expected.
    Map(Option<String>),
    /// A sequence: the index of the next item.
    Seq(usize),
}

fn segments(stack: &[Frame]) -> Vec<String> {
    stack
        .iter()
        .map(|f| match f {
            Frame::Map(key) => key.clone().unwrap_or_default(),
            Frame::Seq(i) => i.to_string(),
        })
        .collect()
}

/// Where `path` (keys and list indices) is written in `text`; `None` when it is not,
/// or the text does not parse.
pub fn locate(text: &str, path: &[String]) -> Option<Located> {
    let mut stack: Vec<Frame> = Vec::new();
    // The place of the matched key, waiting for its value.
    let mut found: Option<(u64, u64)> = None;
    for event in Parser::new_from_str(text) {
        let (event, span) = event.ok()?;
        let here = (span.start.line() as u64, span.start.col() as u64 + 1);
        // A key of a mapping.
        if let Some(Frame::Map(key @ None)) = stack.last_mut() {
            match event {
                Event::Scalar(value, ..) => {
                    *key = Some(value.into_owned());
                    if segments(&stack) == path {
                        found = Some(here);
                    }
                    continue;
                }
                Event::MappingEnd => {
                    stack.pop();
                    value_done(&mut stack);
                    continue;
                }
                Event::SequenceStart(..) | Event::MappingStart(..) | Event::Alias(_) => {
                    return None;
                }
                _ => continue,
            }
        }
        let is_item = matches!(stack.last(), Some(Frame::Seq(_)));
        if is_item && found.is_none() && segments(&stack) == path {
            found = Some(here);
        }
        match event {
            Event::Scalar(value, style, ..) => {
                if let Some((line, column)) = found {
                    let plain = (style == ScalarStyle::Plain).then(|| value.into_owned());
                    return Some(Located {
                        line,
                        column,
                        plain,
                    });
                }
                value_done(&mut stack);
            }
            Event::Alias(_) => {
                if let Some((line, column)) = found {
                    return Some(Located {
                        line,
                        column,
                        plain: None,
                    });
                }
                value_done(&mut stack);
            }
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                if let Some((line, column)) = found {
                    return Some(Located {
                        line,
                        column,
                        plain: None,
                    });
                }
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Frame::Seq(0)
                } else {
                    Frame::Map(None)
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                stack.pop();
                value_done(&mut stack);
            }
            _ => {}
        }
    }
    None
}

/// A value of the innermost collection is read: the next key, or the next item.
fn value_done(stack: &mut [Frame]) {
    match stack.last_mut() {
        Some(Frame::Map(key)) => *key = None,
        Some(Frame::Seq(i)) => *i += 1,
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, path: &str) -> Option<Located> {
        let path: Vec<String> = path.split('.').map(str::to_string).collect();
        locate(text, &path)
    }

    #[test]
    fn keys_and_items_are_found_with_their_plain_scalars() {
        let text = "a:\n  b: no\n  c: 'no'\nlist:\n  - x\n  - {d: 0755}\n";
        assert_eq!(
            at(text, "a.b"),
            Some(Located {
                line: 2,
                column: 3,
                plain: Some("no".into())
            })
        );
        assert_eq!(at(text, "a.c").unwrap().plain, None);
        assert_eq!(at(text, "a").unwrap().line, 1);
        assert_eq!(
            at(text, "list.1.d"),
            Some(Located {
                line: 6,
                column: 6,
                plain: Some("0755".into())
            })
        );
        assert_eq!(at(text, "list.1").unwrap().line, 6);
        assert_eq!(at(text, "a.x"), None);
    }
}
