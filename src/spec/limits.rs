//! Size limits on what shipshape reads: a spec or values file is at most
//! [`MAX_INPUT_BYTES`] long, and at most [`MAX_EXPANDED_BYTES`] of text once every
//! alias (`*name`) is replaced by what its anchor (`&name`) holds. Both are far beyond
//! any chart's values, and small enough that a hostile file cannot make shipshape
//! read until memory runs out or write gigabytes of manifests.

use serde_saphyr::granit_parser::{Event, Parser};

/// The most bytes read from a spec or values file: 8 MiB.
pub const MAX_INPUT_BYTES: usize = 8 * 1024 * 1024;

/// The most text (keys and scalars, counted in bytes) a spec or values file may hold
/// once its aliases are expanded: 8 MiB, as much as an alias-free file may hold.
pub const MAX_EXPANDED_BYTES: u64 = 8 * 1024 * 1024;

/// A size in words: `8 MiB`, `1.5 MiB`, `256 KiB`, `812 bytes`.
pub fn human_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB {
        trimmed(bytes as f64 / MIB as f64, "MiB")
    } else if bytes >= KIB {
        trimmed(bytes as f64 / KIB as f64, "KiB")
    } else {
        format!("{bytes} bytes")
    }
}

fn trimmed(value: f64, unit: &str) -> String {
    let text = format!("{value:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text} {unit}")
}

/// A file whose aliases expand beyond [`MAX_EXPANDED_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpansionTooLarge {
    /// Where the alias that crossed the limit is (1-based).
    pub line: u64,
    pub column: u64,
    /// What the message says.
    pub message: String,
}

/// Checks that `text`, with every alias expanded, holds at most `limit` bytes of keys
/// and scalars. One pass over the parser's events, linear in the input: each anchor's
/// expanded size is recorded when it closes, and an alias adds it. A syntax error
/// ends the check quietly (the deserializer reports it, with its position).
pub fn check_expanded_size(text: &str, limit: u64) -> Result<(), ExpansionTooLarge> {
    // A text that cannot expand past the limit needs no pass of the parser (it was a
    // third of reading a spec): one without `*` has no alias, and one whose aliases are
    // few has a bound below the limit.
    if !text.as_bytes().contains(&b'*') || expansion_bound(text) <= limit {
        return Ok(());
    }
    check_expanded_size_by_parsing(text, limit)
}

/// An upper bound of the bytes of keys and scalars `text` holds with its aliases
/// expanded, from two counts of bytes: `n`, the `*`s (at least the aliases, each
/// written `*name`), and `k`, the `&`s (at least the anchors, each `&name`). The text's
/// own keys and scalars hold at most `b = 2 * len` bytes (an escape such as `\L` is two
/// bytes that stand for three). An anchored node holds at most `b` bytes of its own and
/// at most `n` aliases, each of a node closed before it; so the `j`-th anchored node to
/// close holds at most `b * (1 + n)^(j - 1)`, and the whole text at most
/// `b * (1 + n)^k`. Without an anchor that is `b`, and without an alias, too (and
/// nothing is checked then: the pass refuses only a text with an alias).
pub fn expansion_bound(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let aliases = bytes.iter().filter(|&&b| b == b'*').count() as u64;
    if aliases == 0 {
        return (bytes.len() as u64).saturating_mul(2);
    }
    let anchors = bytes.iter().filter(|&&b| b == b'&').count();
    let growth = (1 + aliases).saturating_pow(u32::try_from(anchors).unwrap_or(u32::MAX));
    (bytes.len() as u64)
        .saturating_mul(2)
        .saturating_mul(growth)
}

/// [`check_expanded_size`] by the pass of the parser, whatever [`expansion_bound`] says.
fn check_expanded_size_by_parsing(text: &str, limit: u64) -> Result<(), ExpansionTooLarge> {
    let mut sizes: std::collections::HashMap<usize, u64> = std::collections::HashMap::new();
    // Open collections: (anchor id or 0, expanded bytes so far).
    let mut open: Vec<(usize, u64)> = Vec::new();
    let mut total: u64 = 0;
    let mut aliased = false;
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else {
            return Ok(());
        };
        let (anchor, added) = match event {
            Event::Scalar(value, _, anchor, _) => (anchor, value.len() as u64),
            Event::Alias(id) => {
                aliased = true;
                (0, sizes.get(&id).copied().unwrap_or(0))
            }
            Event::SequenceStart(_, anchor, _) | Event::MappingStart(_, anchor, _) => {
                open.push((anchor, 0));
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match open.pop() {
                Some((anchor, size)) => {
                    if anchor != 0 {
                        sizes.insert(anchor, size);
                    }
                    if let Some(parent) = open.last_mut() {
                        parent.1 = parent.1.saturating_add(size);
                    }
                    continue;
                }
                None => return Ok(()),
            },
            _ => continue,
        };
        if anchor != 0 {
            sizes.insert(anchor, added);
        }
        if let Some(parent) = open.last_mut() {
            parent.1 = parent.1.saturating_add(added);
        }
        total = total.saturating_add(added);
        if aliased && total > limit {
            return Err(ExpansionTooLarge {
                line: span.start.line() as u64,
                column: span.start.col() as u64 + 1,
                message: format!(
                    "with its aliases (`*name`) expanded, this file holds more than {} of text, the most shipshape reads",
                    human_size(limit)
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_words() {
        assert_eq!(human_size(8 * 1024 * 1024), "8 MiB");
        assert_eq!(human_size(1024 * 1024 + 512 * 1024), "1.5 MiB");
        assert_eq!(human_size(256 * 1024), "256 KiB");
        assert_eq!(human_size(1023), "1023 bytes");
    }

    #[test]
    fn aliases_count_as_often_as_they_are_used() {
        let text = "a: &x [aaaa, bbbb]\nb: *x\nc: *x\n";
        // 3 keys of 1 byte + 3 times 8 bytes = 27
        assert!(check_expanded_size(text, 27).is_ok());
        let err = check_expanded_size(text, 26).unwrap_err();
        assert_eq!((err.line, err.column), (3, 4));
        assert!(err.message.contains("26 bytes"), "{}", err.message);
    }

    #[test]
    fn an_anchored_scalar_counts_as_often_as_it_is_used() {
        let text = "a: &x xxxxxxxx\nb: *x\nc: *x\n";
        // 3 keys of 1 byte + 3 times 8 bytes = 27
        assert!(check_expanded_size(text, 27).is_ok());
        let err = check_expanded_size(text, 26).unwrap_err();
        assert_eq!((err.line, err.column), (3, 4));
    }

    #[test]
    fn nested_anchors_multiply() {
        // A billion laughs in miniature: each level doubles.
        let mut text = String::from("l0: &l0 [xxxxxxxx]\n");
        for i in 1..40 {
            text.push_str(&format!("l{i}: &l{i} [*l{p}, *l{p}]\n", p = i - 1));
        }
        let err = check_expanded_size(&text, MAX_EXPANDED_BYTES).unwrap_err();
        assert!(err.message.contains("8 MiB"), "{}", err.message);
    }

    #[test]
    fn a_large_file_without_aliases_is_left_to_the_input_limit() {
        let text = format!("a: {}\n", "x".repeat(100));
        assert!(check_expanded_size(&text, 10).is_ok());
    }

    /// A `*` that starts no alias (in a quoted scalar, a comment) changes nothing, and
    /// an alias after one still counts.
    #[test]
    fn a_star_in_text_is_not_an_alias() {
        let text = format!("a: '*{}' # *\n", "x".repeat(100));
        assert!(check_expanded_size(&text, 10).is_ok());
        // 3 keys, `*` and `xxxx` twice: 12 bytes.
        let text = "a: '*'\nb: &x [xxxx]\nc: *x\n";
        assert!(check_expanded_size(text, 12).is_ok());
        assert!(check_expanded_size(text, 11).is_err());
    }

    /// The bound is `2 * len * (1 + stars)^ampersands`, saturating.
    #[test]
    fn the_bound_counts_stars_and_ampersands() {
        assert_eq!(expansion_bound(""), 0);
        assert_eq!(expansion_bound("a: b\n"), 10);
        assert_eq!(expansion_bound("a: &x b\n"), 16);
        let cases: [(&str, u64); 3] = [
            ("a: &x b\nc: *x\n", 2),
            ("a: &x b\nc: *x\nd: *x\n", 3),
            ("a: &x b\nc: &y [*x, *x]\n", 3 * 3),
        ];
        for (text, growth) in cases {
            assert_eq!(
                expansion_bound(text),
                2 * text.len() as u64 * growth,
                "{text}"
            );
        }
        let bomb = format!("{}{}", "&".repeat(64), "*".repeat(64));
        assert_eq!(expansion_bound(&bomb), u64::MAX);
    }

    /// Below the bound, the check refuses nothing the pass would; at it, nothing.
    #[test]
    fn a_text_within_its_bound_is_not_parsed() {
        let text = "a: &x [xxxx]\nb: *x\n";
        // The pass counts 2 keys and `xxxx` twice: 10 bytes.
        assert!(check_expanded_size_by_parsing(text, 9).is_err());
        let bound = expansion_bound(text);
        assert!(check_expanded_size(text, bound).is_ok());
        assert!(check_expanded_size(text, bound - 1).is_ok());
        assert!(check_expanded_size(text, 9).is_err());
    }

    /// A text of anchors nested in anchors, each aliased from those that close after
    /// it, in every shape up to four levels: what the pass counts never exceeds the
    /// bound, so skipping the pass below it refuses nothing the pass would.
    #[test]
    fn the_pass_never_counts_past_the_bound() {
        fn shapes(depth: usize, next: &mut usize, out: &mut String, defined: &mut Vec<usize>) {
            let id = *next;
            *next += 1;
            out.push_str(&format!("&a{id} ["));
            out.push_str("\"\\L\\L\", xy");
            for d in defined.iter() {
                out.push_str(&format!(", *a{d}"));
            }
            if depth > 0 {
                for _ in 0..2 {
                    out.push_str(", ");
                    shapes(depth - 1, next, out, defined);
                }
            }
            out.push(']');
            defined.push(id);
        }
        for depth in 0..4 {
            let (mut next, mut defined) = (0, Vec::new());
            let mut text = String::new();
            for key in 0..3 {
                text.push_str(&format!("k{key}: "));
                shapes(depth, &mut next, &mut text, &mut defined);
                text.push('\n');
            }
            let bound = expansion_bound(&text);
            assert!(
                check_expanded_size_by_parsing(&text, bound).is_ok(),
                "depth {depth}: {text}"
            );
        }
    }

    #[test]
    fn a_syntax_error_is_left_to_the_deserializer() {
        assert!(check_expanded_size("a: [\n", 0).is_ok());
    }
}
