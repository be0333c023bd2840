//! The capacity figure of one preset, as SVG text: per budget a stacked bar with one
//! segment per workload and the reservations, a line at the budget (and a dashed one
//! at the limit when a reserve is kept below it), and a legend with every segment's
//! name and number.
//!
//! Written by hand so that it is deterministic (fixed decimals, no clock, no ids from
//! a counter), self-contained (a generic `sans-serif` font, no scripts, no external
//! references) and readable where GitHub shows it: as an image in Markdown, on a
//! white background of its own.

use crate::capacity::breakdown::BudgetUse;
use std::borrow::Cow;
use std::fmt::Write;

/// Width of the figure.
const WIDTH: f64 = 720.0;
/// Left and right margin.
const MARGIN: f64 = 20.0;
/// Height of a bar.
const BAR: f64 = 22.0;
/// Estimated width of one character at the legend's 12 px (generous, so that labels
/// never overlap whatever sans-serif font the viewer has).
const CHAR: f64 = 7.2;

/// Workload colours (Okabe-Ito, distinguishable with colour blindness), by the
/// workload's position in the spec; reservations are hatched grey.
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
];
const BUDGET_COLOUR: &str = "#C00000";
const TEXT_COLOUR: &str = "#1A1A1A";

/// `s` with `&`, `<`, `>` and `"` escaped for XML text and attributes; borrowed when
/// it has none of them, as most labels have not.
fn esc(s: &str) -> Cow<'_, str> {
    if !s.contains(['&', '<', '>', '"']) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;"),
    )
}

/// Backticks mark names in labels; the figure prints them plain.
fn plain(s: &str) -> Cow<'_, str> {
    if s.contains('`') {
        Cow::Owned(s.replace('`', ""))
    } else {
        Cow::Borrowed(s)
    }
}

/// `v` with one decimal, as `{v:.1}` writes it, written where it is formatted (most
/// figures are coordinates, several per segment).
fn num(v: f64) -> Num {
    Num(v)
}

/// [`num`]'s value, displayed with one decimal.
struct Num(f64);

impl std::fmt::Display for Num {
    /// A whole number (most coordinates) is written from its integer: `{:.1}` of one
    /// takes Rust's slowest float path.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match whole(self.0) {
            Some(n) => write!(f, "{n}.0"),
            None => write!(f, "{:.1}", self.0),
        }
    }
}

/// `v` as an integer when `{:.1}` of it is that integer and `.0`: a whole number below
/// 10^15 in magnitude, but not minus zero (which `{:.1}` writes `-0.0`).
fn whole(v: f64) -> Option<i64> {
    (v.fract() == 0.0 && v.abs() < 1e15 && !(v == 0.0 && v.is_sign_negative())).then_some(v as i64)
}

/// What the header line of a budget says.
fn header(budget: &BudgetUse) -> String {
    let what = format!("{} {}", plain(&budget.label), budget.unit);
    match (budget.budget, budget.limit) {
        (Some(b), Some(limit)) => {
            let of = if budget.reserve > 0 {
                format!("budget {b} (limit {limit} - reserve {})", budget.reserve)
            } else {
                format!("budget {b}")
            };
            let status = if budget.peak > b {
                format!("exceeded by {}", budget.peak - b)
            } else {
                format!("{} spare", b - budget.peak)
            };
            format!("{what}: peak {} of {of}, {status}", budget.peak)
        }
        _ => format!(
            "{what}: peak {}, no limit declared (not checked)",
            budget.peak
        ),
    }
}

/// One drawn piece of a bar: its legend text, fill and value.
struct Segment {
    text: String,
    fill: String,
    value: u64,
}

fn segments(budget: &BudgetUse) -> Vec<Segment> {
    let mut out: Vec<Segment> = budget
        .workloads
        .iter()
        .enumerate()
        .filter(|(_, p)| p.value > 0)
        .map(|(i, p)| Segment {
            text: format!("{} {}", p.name, p.value),
            fill: PALETTE[i % PALETTE.len()].to_string(),
            value: p.value,
        })
        .collect();
    out.extend(budget.reservations.iter().map(|p| Segment {
        text: if p.name == "reserved" {
            format!("reserved {}", p.value)
        } else {
            format!("{} {} (reserved)", p.name, p.value)
        },
        fill: "url(#reserved)".to_string(),
        value: p.value,
    }));
    out
}

/// The title of a preset's figure.
#[must_use]
pub fn figure_title(chart: &str, preset: &str) -> String {
    format!("{chart}: capacity of preset `{preset}`")
}

/// The SVG figure of one preset's budgets. `title` names the chart and preset.
#[must_use]
pub fn capacity_svg(title: &str, budgets: &[BudgetUse]) -> String {
    let shown: Vec<&BudgetUse> = budgets.iter().filter(|b| b.is_used()).collect();
    let mut body = String::new();
    let mut y = 30.0;
    let _ = writeln!(
        body,
        r#"  <text x="{}" y="{}" font-size="16" font-weight="bold">{}</text>"#,
        num(MARGIN),
        num(y),
        esc(&plain(title))
    );
    y += 20.0;
    let _ = writeln!(
        body,
        r##"  <text x="{}" y="{}" font-size="12" fill="#555555">Peak across a rollout, per workload; the red line is the budget (limit - reserve).</text>"##,
        num(MARGIN),
        num(y),
    );
    y += 16.0;
    if shown.is_empty() {
        y += 20.0;
        let _ = writeln!(
            body,
            r#"  <text x="{}" y="{}" font-size="13">No connection budget is declared.</text>"#,
            num(MARGIN),
            num(y)
        );
        y += 10.0;
    }
    let span = WIDTH - 2.0 * MARGIN;
    for budget in &shown {
        y += 24.0;
        let exceeded = budget.budget.is_some_and(|b| budget.peak > b);
        let colour = if exceeded { BUDGET_COLOUR } else { TEXT_COLOUR };
        let _ = writeln!(
            body,
            r#"  <text x="{}" y="{}" font-size="13" font-weight="bold" fill="{colour}">{}</text>"#,
            num(MARGIN),
            num(y),
            esc(&header(budget))
        );
        y += 10.0;
        let full = budget
            .peak
            .max(budget.limit.unwrap_or(0))
            .max(budget.budget.unwrap_or(0))
            .max(1) as f64;
        // A little room after the largest figure, so a line at the end stays visible.
        let scale = span / (full * 1.04);
        let _ = writeln!(
            body,
            r##"  <rect x="{}" y="{}" width="{}" height="{}" fill="#EEEEEE"/>"##,
            num(MARGIN),
            num(y),
            num(span),
            num(BAR)
        );
        let segs = segments(budget);
        let mut x = MARGIN;
        for s in &segs {
            let w = s.value as f64 * scale;
            let _ = writeln!(
                body,
                r##"  <rect x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#FFFFFF" stroke-width="0.5"><title>{}</title></rect>"##,
                num(x),
                num(y),
                num(w),
                num(BAR),
                s.fill,
                esc(&s.text)
            );
            x += w;
        }
        if let (Some(limit), true) = (budget.limit, budget.reserve > 0) {
            let lx = MARGIN + limit as f64 * scale;
            // A white halo keeps the line visible over any segment.
            for (stroke, width, dash) in [
                ("#FFFFFF", "4", ""),
                ("#555555", "1.5", r#" stroke-dasharray="4 3""#),
            ] {
                let _ = writeln!(
                    body,
                    r#"  <line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}" stroke-width="{width}"{dash}/>"#,
                    num(lx),
                    num(y - 4.0),
                    num(lx),
                    num(y + BAR + 4.0)
                );
            }
        }
        if let Some(b) = budget.budget {
            let bx = MARGIN + b as f64 * scale;
            for (stroke, width) in [("#FFFFFF", "5.5"), (BUDGET_COLOUR, "2.5")] {
                let _ = writeln!(
                    body,
                    r#"  <line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}" stroke-width="{width}"/>"#,
                    num(bx),
                    num(y - 6.0),
                    num(bx),
                    num(y + BAR + 6.0)
                );
            }
        }
        y += BAR + 8.0;
        // The legend: a swatch and "name number" per segment, wrapped to the width.
        let mut lx = MARGIN;
        y += 12.0;
        for s in &segs {
            let w = 16.0 + s.text.chars().count() as f64 * CHAR + 14.0;
            if lx > MARGIN && lx + w > WIDTH - MARGIN {
                lx = MARGIN;
                y += 18.0;
            }
            let _ = writeln!(
                body,
                r##"  <rect x="{}" y="{}" width="11" height="11" fill="{}" stroke="#777777" stroke-width="0.5"/>"##,
                num(lx),
                num(y - 10.0),
                s.fill
            );
            let _ = writeln!(
                body,
                r#"  <text x="{}" y="{}" font-size="12">{}</text>"#,
                num(lx + 16.0),
                num(y),
                esc(&s.text)
            );
            lx += w;
        }
        if segs.is_empty() {
            let _ = writeln!(
                body,
                r##"  <text x="{}" y="{}" font-size="12" fill="#555555">nothing uses it</text>"##,
                num(MARGIN),
                num(y)
            );
        }
        y += 8.0;
    }
    let height = (y + 16.0).ceil();
    let description: Vec<String> = shown.iter().map(|b| header(b)).collect();
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-labelledby="title desc" font-family="sans-serif" fill="{TEXT_COLOUR}">
  <title id="title">{title}</title>
  <desc id="desc">{desc}</desc>
  <defs>
    <pattern id="reserved" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)">
      <rect width="6" height="6" fill="#C8C8C8"/>
      <line x1="0" y1="0" x2="0" y2="6" stroke="#7A7A7A" stroke-width="2"/>
    </pattern>
  </defs>
  <rect width="{w}" height="{h}" fill="#FFFFFF"/>
{body}</svg>
"##,
        w = WIDTH as u64,
        h = height as u64,
        title = esc(&plain(title)),
        desc = esc(&description.join("; ")),
    )
}

#[cfg(test)]
mod tests {

    /// `num` writes what `{:.1}` writes: whole numbers, halves and ties, signs, zeros,
    /// the edges of the whole-number path, and what is not a number.
    #[test]
    fn num_writes_what_the_format_writes() {
        let mut cases = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.05,
            0.15,
            0.25,
            2.25,
            2.35,
            20.0,
            22.0,
            742.0,
            7.2,
            123.456,
            -3.75,
            1e15,
            -1e15,
            1e15 - 1.0,
            1e15 + 2.0,
            9.007e15,
            1e300,
            -1e300,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        cases.extend((0..2000).map(|i| f64::from(i) * 0.05 - 17.0));
        cases.extend((0..200).map(|i| f64::from(i) * 7.2 + 20.0));
        for v in cases {
            assert_eq!(num(v).to_string(), format!("{v:.1}"), "{v:e}");
        }
    }

    /// The integer path takes whole numbers below 10^15 in magnitude, zero but not minus
    /// zero; fractions, larger numbers and what is not a number go to the float path.
    #[test]
    fn whole_numbers_below_ten_to_the_fifteen_take_the_integer_path() {
        assert_eq!(whole(0.0), Some(0));
        assert_eq!(whole(-0.0), None);
        assert_eq!(whole(-1.0), Some(-1));
        assert_eq!(whole(742.0), Some(742));
        assert_eq!(whole(1e15 - 1.0), Some(999_999_999_999_999));
        assert_eq!(whole(-(1e15 - 1.0)), Some(-999_999_999_999_999));
        assert_eq!(whole(1e15), None);
        assert_eq!(whole(-1e15), None);
        assert_eq!(whole(0.5), None);
        assert_eq!(whole(-2.25), None);
        assert_eq!(whole(f64::INFINITY), None);
        assert_eq!(whole(f64::NAN), None);
    }
    use super::*;
    use crate::capacity::breakdown::Part;

    fn budget(peak_parts: &[(&str, u64)], reserved: u64, limit: u64, reserve: u64) -> BudgetUse {
        let workloads: Vec<Part> = peak_parts
            .iter()
            .map(|(n, v)| Part {
                name: n.to_string(),
                value: *v,
            })
            .collect();
        let peak = workloads.iter().map(|p| p.value).sum::<u64>() + reserved;
        BudgetUse {
            key: "postgres".into(),
            label: "PostgreSQL".into(),
            unit: "connections".into(),
            workloads,
            reservations: if reserved > 0 {
                vec![Part {
                    name: "operators".into(),
                    value: reserved,
                }]
            } else {
                vec![]
            },
            peak,
            limit: Some(limit),
            reserve,
            budget: Some(limit - reserve),
        }
    }

    #[test]
    fn one_segment_per_workload_and_reservation_and_a_budget_line() {
        let b = budget(&[("api", 114), ("off", 0), ("worker", 40)], 6, 200, 16);
        let svg = capacity_svg("app: preset `default`", &[b]);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.ends_with("</svg>\n"));
        // Three segments (the zero one is left out), each with its tooltip.
        assert_eq!(svg.matches("<title>").count(), 3);
        assert!(svg.contains("<title>api 114</title>"));
        assert!(svg.contains("<title>operators 6 (reserved)</title>"));
        assert!(!svg.contains("off 0"));
        // Scale 680 / (200 x 1.04): api is 114 x 3.269 = 372.7 wide; the budget line
        // at 20 + 184 x 3.269 = 621.5 and the dashed limit line at 673.8.
        assert!(svg.contains(r##"width="372.7" height="22.0" fill="#0072B2""##));
        assert!(svg.contains(r#"x1="621.5""#), "{svg}");
        assert!(svg.contains(r#"x1="673.8""#));
        assert!(svg.contains(
            "PostgreSQL connections: peak 160 of budget 184 (limit 200 - reserve 16), 24 spare"
        ));
        assert!(svg.contains("app: preset default"));
        for forbidden in ["<script", "href", "@import", "url(http", "font-face"] {
            assert!(!svg.contains(forbidden), "{forbidden}");
        }
    }

    #[test]
    fn an_exceeded_budget_is_red_and_says_by_how_much() {
        let svg = capacity_svg("x", &[budget(&[("api", 300)], 0, 200, 20)]);
        assert!(svg.contains(r##"fill="#C00000">PostgreSQL connections: peak 300 of budget 180 (limit 200 - reserve 20), exceeded by 120</text>"##));
    }

    #[test]
    fn names_are_escaped_and_the_output_is_the_same_every_time() {
        let b = budget(&[("a<b>&\"c", 5)], 0, 10, 0);
        let svg = capacity_svg("t & <t>", std::slice::from_ref(&b));
        assert!(svg.contains("a&lt;b&gt;&amp;&quot;c 5"));
        assert!(svg.contains("t &amp; &lt;t&gt;"));
        assert_eq!(svg, capacity_svg("t & <t>", &[b]));
    }

    #[test]
    fn a_long_legend_wraps_inside_the_figure() {
        let names: Vec<String> = (0..12).map(|i| format!("workload-number-{i}")).collect();
        let parts: Vec<(&str, u64)> = names.iter().map(|n| (n.as_str(), 10)).collect();
        let svg = capacity_svg("x", &[budget(&parts, 0, 200, 0)]);
        for line in svg.lines().filter(|l| l.contains("<text x=")) {
            let x: f64 = line.split('"').nth(1).unwrap().parse().unwrap();
            let text = line.split('>').nth(1).unwrap().split('<').next().unwrap();
            let end = x + text.chars().count() as f64 * CHAR;
            assert!(end <= WIDTH, "{line}: ends at {end}");
        }
    }

    #[test]
    fn no_budget_declared_says_so() {
        let mut b = budget(&[], 0, 0, 0);
        b.limit = Some(0);
        b.budget = Some(0);
        let svg = capacity_svg("x", &[b]);
        assert!(svg.contains("No connection budget is declared."));
    }
}
