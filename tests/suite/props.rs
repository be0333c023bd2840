//! Property tests of the two parsers of user input, the values file reader and the
//! `--set` reader: arbitrary input never panics, and the time they take grows no faster
//! than the input (an input 16 times longer takes far less than 16 squared times as
//! long).

use proptest::prelude::*;
use shipshape::values::{parse_set_args, parse_values_yaml};
use std::time::{Duration, Instant};

/// Characters that steer both parsers: YAML indicators, `--set` separators, digits.
const ALPHABET: &str = "a0. ,={}[]:-#&*!|>'\"\n\t?%@`~\\";

fn fragment() -> impl Strategy<Value = String> {
    let chars: Vec<char> = ALPHABET.chars().collect();
    prop::collection::vec(prop::sample::select(chars), 1..12).prop_map(|v| v.into_iter().collect())
}

/// How long one call of `f` takes.
fn elapsed(f: &dyn Fn()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

/// `text` repeated up to about `size` bytes.
fn repeated(text: &str, size: usize) -> String {
    text.repeat(size / text.len() + 1)
}

/// Time of `parse` on `fragment` repeated to 256 KiB, against 16 KiB: at most 48
/// times longer (linear gives about 16, quadratic about 256), plus 30 ms of slack.
/// Each size is timed seven times, alternately, and the fastest of each counts, so a
/// busy machine slows both sides alike instead of failing the check.
fn assert_linear(fragment: &str, parse: &dyn Fn(&str)) {
    let small = repeated(fragment, 16 << 10);
    let large = repeated(fragment, 256 << 10);
    let (mut t_small, mut t_large) = (Duration::MAX, Duration::MAX);
    for _ in 0..7 {
        t_small = t_small.min(elapsed(&|| parse(&small)));
        t_large = t_large.min(elapsed(&|| parse(&large)));
    }
    assert!(
        t_large <= t_small * 48 + Duration::from_millis(30),
        "{fragment:?}: 16 KiB in {t_small:?}, 256 KiB in {t_large:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn values_files_never_panic(text in "(?s).{0,300}", pieces in prop::collection::vec(fragment(), 0..30)) {
        let _ = parse_values_yaml(&text, "v.yaml");
        let _ = parse_values_yaml(&pieces.concat(), "v.yaml");
    }

    #[test]
    fn set_arguments_never_panic(args in prop::collection::vec("(?s).{0,80}", 0..4), pieces in prop::collection::vec(fragment(), 0..30)) {
        let _ = parse_set_args(&args);
        let _ = parse_set_args(&[pieces.concat()]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn values_files_take_linear_time(piece in fragment()) {
        assert_linear(&piece, &|text| {
            let _ = parse_values_yaml(text, "v.yaml");
        });
    }

    #[test]
    fn set_arguments_take_linear_time(piece in fragment()) {
        assert_linear(&piece, &|text| {
            let _ = parse_set_args(&[text.to_string()]);
        });
    }
}

#[test]
fn known_worst_cases_take_linear_time() {
    // Deep nesting, long keys, many pairs, long lists, aliases.
    for piece in [
        "[",
        "{",
        "a.",
        "a=1,",
        "a.b.c=1,",
        "{a,",
        "- ",
        "a: &x [1]\nb: *x\n",
    ] {
        assert_linear(piece, &|text| {
            let _ = parse_values_yaml(text, "v.yaml");
        });
        assert_linear(piece, &|text| {
            let _ = parse_set_args(&[text.to_string()]);
        });
    }
    let deep = format!("config.{}a=1", "a.".repeat(40_000));
    let err = parse_set_args(&[deep]).unwrap_err().to_string();
    assert!(err.contains("values nest at most 64 levels deep"), "{err}");
}

#[test]
#[should_panic(expected = "256 KiB in")]
fn the_linear_time_check_catches_quadratic_time() {
    // n x n/2048 steps: 16 times the input, 256 times the time.
    assert_linear("ab", &|text| {
        let bytes = text.as_bytes();
        let mut sum = 0u64;
        for &a in bytes {
            for &b in &bytes[..bytes.len() / 2048] {
                sum = sum.wrapping_add(u64::from(a ^ b));
            }
        }
        std::hint::black_box(sum);
    });
}
