//! Template lines a reviewer can read: a Go template action longer than the line
//! limit is broken across lines at its arguments, Lisp style. Go templates (Go 1.16
//! and later, so every Helm 3 and Helm 4) allow newlines inside an action, and
//! whitespace between arguments prints nothing, so the rendered output is unchanged.

/// No template line is longer than this many characters.
pub const MAX_LINE: usize = 200;

/// Lines are broken to fit this width where the tokens allow.
const TARGET: usize = 100;

/// One term of an action: a word (identifier, reference, literal, `|`) or a
/// parenthesised call with the length of its flat text ([`Term::call`]), which the
/// layout asks of every call at every level it nests in.
#[derive(Debug, Clone, PartialEq)]
enum Term<'a> {
    Word(&'a str),
    Call(usize, Vec<Term<'a>>),
}

impl<'a> Term<'a> {
    /// The call of `terms`, with the length of its flat text: the parentheses, the
    /// terms and one space between each two.
    fn call(terms: Vec<Term<'a>>) -> Self {
        let len =
            2 + terms.iter().map(Term::flat_len).sum::<usize>() + terms.len().saturating_sub(1);
        Term::Call(len, terms)
    }

    /// Appends the term on one line: words separated by one space.
    fn write_flat(&self, out: &mut String) {
        match self {
            Term::Word(w) => out.push_str(w),
            Term::Call(_, terms) => {
                out.push('(');
                for (i, t) in terms.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    t.write_flat(out);
                }
                out.push(')');
            }
        }
    }

    /// The length in bytes of [`Term::write_flat`]'s text, without writing it.
    fn flat_len(&self) -> usize {
        match self {
            Term::Word(w) => w.len(),
            Term::Call(len, _) => *len,
        }
    }
}

/// Splits an action's pipeline into terms; `None` if it does not tokenize (then the
/// line is left as it is). Words are slices of `text`. Whitespace is what
/// [`char::is_whitespace`] calls so; the text is read a byte at a time, and a character
/// of more than one byte is decoded only to ask whether it is whitespace (no byte of
/// one is a quote, a parenthesis or a backslash).
fn parse_terms(text: &str) -> Option<Vec<Term<'_>>> {
    let bytes = text.as_bytes();
    let mut stack: Vec<Vec<Term<'_>>> = vec![Vec::new()];
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => {
                stack.push(Vec::new());
                i += 1;
            }
            b')' => {
                let call = stack.pop()?;
                stack.last_mut()?.push(Term::call(call));
                i += 1;
            }
            quote @ (b'"' | b'`' | b'\'') => {
                let end = quoted_end(bytes, i + 1, quote)?;
                stack.last_mut()?.push(Term::Word(&text[i..end]));
                i = end;
            }
            _ => match whitespace_len(text, i) {
                Some(len) => i += len,
                None => {
                    let end = word_end(text, i);
                    stack.last_mut()?.push(Term::Word(&text[i..end]));
                    i = end;
                }
            },
        }
    }
    if stack.len() != 1 {
        return None;
    }
    stack.pop()
}

/// The index just past the `quote` closing a literal whose text starts at `from`;
/// a backslash escapes the next character except in a raw (backquoted) string.
/// `None` when the literal is not closed.
fn quoted_end(bytes: &[u8], from: usize, quote: u8) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'\\' && quote != b'`' {
            i += 2;
        } else if bytes[i] == quote {
            return Some(i + 1);
        } else {
            i += 1;
        }
    }
    None
}

/// The length of the whitespace character at byte `at` of `text` (a character's
/// start), or `None` when it is not whitespace.
fn whitespace_len(text: &str, at: usize) -> Option<usize> {
    let byte = text.as_bytes()[at];
    if byte.is_ascii() {
        return is_ascii_whitespace(byte).then_some(1);
    }
    let c = text[at..].chars().next()?;
    c.is_whitespace().then_some(c.len_utf8())
}

/// Whether an ASCII byte is a character [`char::is_whitespace`] takes: tab, line
/// feed, vertical tab, form feed, carriage return and space.
fn is_ascii_whitespace(byte: u8) -> bool {
    matches!(byte, b'\t'..=b'\r' | b' ')
}

/// The index where the word starting at `from` ends: at whitespace, a parenthesis,
/// a quote, or the end of `text`.
fn word_end(text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        let byte = bytes[i];
        if byte.is_ascii() {
            if matches!(byte, b'(' | b')' | b'"' | b'`' | b'\'') || is_ascii_whitespace(byte) {
                return i;
            }
            i += 1;
        } else {
            match whitespace_len(text, i) {
                Some(_) => return i,
                None => i += text[i..].chars().next().map_or(1, char::len_utf8),
            }
        }
    }
    i
}

/// Lays out the terms of an action's pipeline on one line (`if`, `toString`, `|`
/// and the like stay together); a call too long for the line is broken inside, and
/// a word that does not fit starts a new line.
fn layout_terms(terms: &[Term], column: usize, indent: usize, out: &mut String) -> usize {
    let mut col = column;
    for (i, term) in terms.iter().enumerate() {
        if i > 0 {
            let word_too_long = matches!(term, Term::Word(w) if col + 1 + w.len() > TARGET);
            if word_too_long && col > indent + 2 {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', indent + 2));
                col = indent + 2;
            } else {
                out.push(' ');
                col += 1;
            }
        }
        col = layout_term(term, col, indent, out);
    }
    col
}

/// Lays out one term; returns the column after it. A call that does not fit keeps
/// its head (and a first word argument) on the line and puts every further argument
/// on its own line, two spaces deeper than the line it started on.
fn layout_term(term: &Term, column: usize, indent: usize, out: &mut String) -> usize {
    let flat_len = term.flat_len();
    let Term::Call(_, terms) = term else {
        term.write_flat(out);
        return column + flat_len;
    };
    if column + flat_len <= TARGET || terms.len() < 2 {
        term.write_flat(out);
        return column + flat_len;
    }
    out.push('(');
    terms[0].write_flat(out);
    let mut col = column + 1 + terms[0].flat_len();
    let mut rest = &terms[1..];
    if let Some(first @ Term::Word(word)) = rest.first() {
        if col + 1 + word.len() <= TARGET {
            out.push(' ');
            col = layout_term(first, col + 1, indent, out);
            rest = &rest[1..];
        }
    }
    let inner = indent + 2;
    for term in rest {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', inner));
        col = layout_term(term, inner, inner, out);
    }
    out.push(')');
    col + 1
}

/// Every line of a template longer than [`MAX_LINE`] with its actions broken across
/// lines (text outside actions is never touched). A text with no line longer than
/// [`MAX_LINE`] bytes, as most templates are, is handed back as it is, not copied;
/// otherwise the text between long lines is copied in runs, not line by line.
pub fn wrap_long_lines(text: String) -> String {
    let mut out: Option<String> = None;
    // `text[..copied]` is in `out`; the next line to look at starts at `from`.
    let (mut copied, mut from) = (0, 0);
    while let Some((start, end)) = next_line_over_limit(text.as_bytes(), from) {
        from = end + 1;
        let body = &text[start..end];
        // A line of more than MAX_LINE bytes may still have at most MAX_LINE characters.
        if body.chars().count() <= MAX_LINE {
            continue;
        }
        let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
        out.push_str(&text[copied..start]);
        out.push_str(&wrap_line(body));
        copied = end;
    }
    match out {
        None => text,
        Some(mut out) => {
            out.push_str(&text[copied..]);
            out
        }
    }
}

/// The first line of `text` starting at or after `from` (a line's start) that is
/// longer than [`MAX_LINE`] bytes, as the range of its bytes without the newline.
/// Such a line is a run of more than `MAX_LINE` bytes with no newline, so the search
/// looks at windows of `MAX_LINE + 1` bytes: a window with a newline has no long line
/// before its last newline, and the next window starts after it. Every window skips
/// at least one whole line, most of them several.
fn next_line_over_limit(text: &[u8], mut from: usize) -> Option<(usize, usize)> {
    loop {
        let window = text.get(from..from + MAX_LINE + 1)?;
        // `memchr` compares many bytes at once; a byte at a time was most of the time
        // taken to find the long lines of a 400-workload chart's templates.
        match memchr::memrchr(b'\n', window) {
            Some(last) => from += last + 1,
            None => {
                let end = memchr::memchr(b'\n', &text[from..]).map_or(text.len(), |n| from + n);
                return Some((from, end));
            }
        }
    }
}

/// One long line, its actions broken.
fn wrap_line(line: &str) -> String {
    let indent = line.len() - line.trim_start().len();
    // Broken lines only add newlines and indents: at least the line's length.
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find("{{") {
        let (before, from) = rest.split_at(open);
        out.push_str(before);
        let Some(close) = action_end(from) else {
            out.push_str(from);
            return out;
        };
        let action = &from[..close + 2];
        out.push_str(&wrap_action(action, indent, column_of(&out)));
        rest = &from[close + 2..];
    }
    out.push_str(rest);
    out
}

/// The column where the next character would go.
fn column_of(text: &str) -> usize {
    text.rsplit('\n').next().map_or(0, |l| l.chars().count())
}

/// The index of the `}}` closing the action at the start of `from` (string literals
/// may hold braces).
fn action_end(from: &str) -> Option<usize> {
    let bytes = from.as_bytes();
    let mut i = 2;
    let mut quote: Option<u8> = None;
    while i + 1 < bytes.len() {
        match quote {
            Some(q) => {
                if bytes[i] == b'\\' && q != b'`' {
                    i += 1;
                } else if bytes[i] == q {
                    quote = None;
                }
            }
            None => {
                if matches!(bytes[i], b'"' | b'`' | b'\'') {
                    quote = Some(bytes[i]);
                } else if bytes[i] == b'}' && bytes[i + 1] == b'}' {
                    return Some(i);
                }
            }
        }
        i += 1;
    }
    None
}

/// One action `{{- ... }}`, broken at its arguments.
fn wrap_action(action: &str, indent: usize, column: usize) -> String {
    let open = if action.starts_with("{{- ") {
        "{{- "
    } else {
        "{{ "
    };
    let close = if action.ends_with(" -}}") {
        " -}}"
    } else {
        " }}"
    };
    let Some(inner) = action
        .strip_prefix(open)
        .and_then(|a| a.strip_suffix(close))
    else {
        return action.to_string();
    };
    if inner.starts_with("/*") {
        return action.to_string();
    }
    let Some(terms) = parse_terms(inner) else {
        return action.to_string();
    };
    let mut out = String::with_capacity(action.len());
    out.push_str(open);
    layout_terms(&terms, column + open.len(), indent + 2, &mut out);
    out.push_str(close);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The terms of `text` as the first parser found them, a character at a time:
    /// the reference [`parse_terms`] is held to.
    fn terms_by_characters(text: &str) -> Option<Vec<Term<'_>>> {
        let mut stack: Vec<Vec<Term<'_>>> = vec![Vec::new()];
        let mut chars = text.char_indices().peekable();
        while let Some(&(start, c)) = chars.peek() {
            match c {
                c if c.is_whitespace() => {
                    chars.next();
                }
                '(' => {
                    stack.push(Vec::new());
                    chars.next();
                }
                ')' => {
                    let call = stack.pop()?;
                    stack.last_mut()?.push(Term::call(call));
                    chars.next();
                }
                '"' | '`' | '\'' => {
                    chars.next();
                    let mut end = None;
                    while let Some((i, d)) = chars.next() {
                        if d == '\\' && c != '`' {
                            chars.next();
                        } else if d == c {
                            end = Some(i + d.len_utf8());
                            break;
                        }
                    }
                    stack.last_mut()?.push(Term::Word(&text[start..end?]));
                }
                _ => {
                    let mut end = text.len();
                    while let Some(&(i, d)) = chars.peek() {
                        if d.is_whitespace() || matches!(d, '(' | ')' | '"' | '`' | '\'') {
                            end = i;
                            break;
                        }
                        chars.next();
                    }
                    stack.last_mut()?.push(Term::Word(&text[start..end]));
                }
            }
        }
        if stack.len() != 1 {
            return None;
        }
        stack.pop()
    }

    /// Read a byte at a time, an action splits into the terms a character at a time
    /// gives: on texts of quotes, escapes, parentheses, ASCII and other whitespace
    /// (vertical tab, no-break and ideographic spaces) and characters of two to four
    /// bytes, unclosed literals and unbalanced parentheses included.
    #[test]
    fn terms_read_by_bytes_are_the_terms_read_by_characters() {
        use proptest::prelude::*;
        let pieces = [
            "(",
            ")",
            "\"",
            "`",
            "'",
            "\\",
            " ",
            "\t",
            "\n",
            "\u{b}",
            "\u{c}",
            "\r",
            "\u{a0}",
            "\u{3000}",
            "\u{85}",
            "a",
            "include",
            "$.Values.x",
            "|",
            "é",
            "€",
            "\u{1f600}",
            "-",
            "}}",
        ];
        let texts = proptest::collection::vec(0..pieces.len(), 0..24)
            .prop_map(move |picks| picks.into_iter().map(|i| pieces[i]).collect::<String>());
        let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
            cases: 4000,
            ..proptest::test_runner::Config::default()
        });
        runner
            .run(&texts, |text| {
                prop_assert_eq!(parse_terms(&text), terms_by_characters(&text), "{:?}", text);
                Ok(())
            })
            .unwrap();
        for text in [
            "include \"x\" $",
            "printf \"%s\\\"\" `a\\` 'c'",
            "a\u{a0}b\u{3000}(c\u{b}d)",
            "\"open",
            "(a",
            "a)",
            "",
        ] {
            assert_eq!(parse_terms(text), terms_by_characters(text), "{text:?}");
        }
        assert_eq!(
            parse_terms("a\u{a0}b"),
            Some(vec![Term::Word("a"), Term::Word("b")])
        );
        assert_eq!(
            parse_terms("x\u{b}(y \"\\\"\")"),
            Some(vec![
                Term::Word("x"),
                Term::call(vec![Term::Word("y"), Term::Word("\"\\\"\"")])
            ])
        );
    }

    #[test]
    fn flat_len_is_the_length_of_the_flat_text() {
        for text in [
            "a",
            "(a)",
            "()",
            "(a (b c) \"d e\")",
            "x (y) (z (w v) u) \"é\"",
        ] {
            let terms = parse_terms(text).unwrap();
            let call = Term::call(terms);
            let mut flat = String::new();
            call.write_flat(&mut flat);
            assert_eq!(call.flat_len(), flat.len(), "{text}: {flat}");
        }
    }

    /// A pipeline of plain words past the target width goes on at the continuation
    /// column; a word longer than a whole line stays where it is.
    #[test]
    fn words_of_a_long_pipeline_continue_two_spaces_deeper() {
        let words: Vec<String> = (0..12)
            .map(|i| format!("$.Values.word{i:02}.abcdefghij"))
            .collect();
        let line = format!("  x: {{{{ list {} }}}}", words.join(" "));
        assert!(line.len() > MAX_LINE);
        let wrapped = wrap_long_lines(line.clone());
        let lines: Vec<&str> = wrapped.lines().collect();
        assert!(lines.len() >= 3, "{wrapped}");
        for l in &lines {
            assert!(l.len() <= TARGET, "{l}");
        }
        for l in &lines[1..] {
            assert!(l.starts_with("      $.Values.word"), "{wrapped}");
        }
        assert_eq!(
            wrapped.split_whitespace().collect::<Vec<_>>(),
            line.split_whitespace().collect::<Vec<_>>()
        );
    }

    /// A word too long for the line starts a new line only when that gains room: not
    /// when the line holds no more than the continuation indent already.
    #[test]
    fn a_word_longer_than_a_line_breaks_only_past_the_continuation_column() {
        let (long, tail) = ("w".repeat(150), "v".repeat(60));
        // `{{ f` ends at column 4, the continuation column (0 + 2 + 2): no break.
        let at = wrap_long_lines(format!("{{{{ f {long} {tail} }}}}"));
        assert!(at.starts_with(&format!("{{{{ f {long}\n")), "{at}");
        // `  {{ ab` ends at column 7, past the continuation column 6: break.
        let past = wrap_long_lines(format!("  {{{{ ab {long} {tail} }}}}"));
        assert!(
            past.starts_with(&format!("  {{{{ ab\n      {long}\n")),
            "{past}"
        );
    }

    /// Every line of a wrapped pipeline is as full as the target width allows: the
    /// next line's first word would not have fitted on it.
    #[test]
    fn a_wrapped_pipeline_fills_each_line_to_the_target() {
        // Words of 3 and 4 characters: a column counted wrong by up to 4 moves a break.
        for digits in [2, 3] {
            let words: Vec<String> = (0..100).map(|i| format!("w{i:0digits$}")).collect();
            let line = format!("  x: {{{{ list {} }}}}", words.join(" "));
            let wrapped = wrap_long_lines(line.clone());
            let lines: Vec<&str> = wrapped.lines().collect();
            assert!(lines.len() >= 4, "{wrapped}");
            for pair in lines.windows(2) {
                let next = pair[1].split_whitespace().next().unwrap();
                assert!(pair[0].len() <= TARGET, "{wrapped}");
                assert!(pair[0].len() + 1 + next.len() > TARGET, "{wrapped}");
                assert!(pair[1].starts_with("      w"), "{wrapped}");
            }
        }
    }

    /// A call with no arguments is written as it is, however far along the line.
    #[test]
    fn an_empty_call_past_the_target_is_kept() {
        let line = format!("{{{{ f {} () {} }}}}", "w".repeat(150), "v".repeat(60));
        let wrapped = wrap_long_lines(line.clone());
        assert!(
            wrapped.contains(&format!("{} ()\n", "w".repeat(150))),
            "{wrapped}"
        );
    }

    /// A line of [`MAX_LINE`] bytes is left alone, and the text handed back without a
    /// copy; one byte more and its action is broken.
    #[test]
    fn lines_break_past_the_limit_and_not_at_it() {
        let action = |width: usize| {
            let prefix = "  x: {{ list ";
            let words: Vec<String> = (0..60).map(|i| format!("$.Values.w{i:03}")).collect();
            let mut line = format!("{prefix}{} }}}}", words.join(" "));
            let cut = line.len() - width;
            line.replace_range(prefix.len()..prefix.len() + cut, "");
            line
        };
        for (width, breaks) in [(MAX_LINE, false), (MAX_LINE + 1, true)] {
            let line = action(width);
            assert_eq!(line.len(), width);
            let text = format!("first\n{line}\nlast\n");
            let handed = text.clone();
            let at = handed.as_ptr();
            let wrapped = wrap_long_lines(handed);
            assert_eq!(wrapped != text, breaks, "{width}: {wrapped}");
            assert_eq!(wrapped.as_ptr() == at, !breaks, "{width}");
            assert!(wrapped.lines().all(|l| l.len() <= MAX_LINE), "{wrapped}");
        }
    }

    #[test]
    fn short_lines_are_left_alone() {
        let text = "a: {{ $.Values.x | toJson }}\n";
        assert_eq!(wrap_long_lines(text.to_string()), text);
    }

    #[test]
    fn a_long_action_breaks_at_its_arguments_and_keeps_its_tokens() {
        let args: Vec<String> = (0..30).map(|i| format!("$.Values.item{i}")).collect();
        let line = format!(
            "    x: {{{{ toString (int (add {} (mul 2 \"a ) }}}}}} b\"))) | toJson }}}}",
            args.join(" ")
        );
        assert!(line.len() > MAX_LINE);
        let wrapped = wrap_long_lines(format!("{line}\n"));
        assert!(wrapped.lines().count() > 1, "{wrapped}");
        for l in wrapped.lines() {
            assert!(l.len() <= MAX_LINE, "{l}");
        }
        let tokens = |s: &str| {
            s.replace('(', " ( ")
                .replace(')', " ) ")
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(tokens(&wrapped), tokens(&line));
        assert!(
            wrapped.starts_with("    x: {{ toString (int\n"),
            "{wrapped}"
        );
    }

    #[test]
    fn text_outside_actions_and_unbalanced_actions_are_kept() {
        let long = "y".repeat(250);
        assert_eq!(wrap_long_lines(long.clone()), long);
        let broken = format!("{{{{ ({} }}}}", "z ".repeat(120));
        assert_eq!(wrap_long_lines(broken.clone()), broken);
    }

    /// The text [`wrap_long_lines`] must give: each line looked at on its own.
    fn wrapped_line_by_line(text: &str) -> String {
        let mut out = String::new();
        for line in text.split_inclusive('\n') {
            let body = line.strip_suffix('\n').unwrap_or(line);
            if body.chars().count() <= MAX_LINE {
                out.push_str(line);
                continue;
            }
            out.push_str(&wrap_line(body));
            if line.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }

    /// A line of `len` bytes of `kind`: plain text, an action of words, or text of
    /// two-byte characters (more bytes than characters).
    fn line_of(kind: u8, len: usize) -> String {
        match kind {
            0 => "p".repeat(len),
            1 => {
                let mut line = String::from("  k: {{ list");
                let mut i = 0;
                while line.len() + 3 < len {
                    line.push_str(&format!(" $.Values.w{}", i % 10));
                    i += 1;
                }
                line.push_str(" }}");
                line
            }
            _ => "é".repeat(len / 2),
        }
    }

    /// Lines at the limit, one byte past it, far past it, of many bytes but few
    /// characters, empty, first, last, with and without a final newline: the same text
    /// as looking at each line on its own, and the same allocation when nothing is long.
    #[test]
    fn long_lines_are_found_wherever_they_are() {
        use proptest::prelude::*;
        let lengths = prop_oneof![
            0usize..4,
            MAX_LINE - 2..MAX_LINE + 3,
            2 * MAX_LINE..2 * MAX_LINE + 2,
            10usize..80,
        ];
        let lines = proptest::collection::vec((0u8..3, lengths), 0..12);
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        runner
            .run(&(lines, any::<bool>()), |(lines, last_newline)| {
                let mut text = lines
                    .iter()
                    .map(|&(kind, len)| line_of(kind, len))
                    .collect::<Vec<_>>()
                    .join("\n");
                if last_newline {
                    text.push('\n');
                }
                let expected = wrapped_line_by_line(&text);
                let at = text.as_ptr();
                let unchanged = expected == text;
                let got = wrap_long_lines(text);
                prop_assert_eq!(&got, &expected);
                if unchanged && !got.lines().any(|l| l.len() > MAX_LINE) {
                    prop_assert_eq!(got.as_ptr(), at, "a text with no long line is not copied");
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn a_line_over_the_limit_is_found_by_its_bytes() {
        let at = |text: &str| next_line_over_limit(text.as_bytes(), 0);
        let limit = "a".repeat(MAX_LINE);
        assert_eq!(at(&limit), None);
        assert_eq!(at(&format!("{limit}\n{limit}\n")), None);
        let over = "b".repeat(MAX_LINE + 1);
        assert_eq!(at(&over), Some((0, MAX_LINE + 1)));
        let text = format!("x\n{limit}\n{over}\ny");
        let start = 2 + MAX_LINE + 1;
        assert_eq!(at(&text), Some((start, start + MAX_LINE + 1)));
        assert_eq!(
            next_line_over_limit(text.as_bytes(), start + MAX_LINE + 2),
            None
        );
        assert_eq!(at(""), None);
    }
}
