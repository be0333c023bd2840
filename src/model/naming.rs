//! Object names and selector labels: Helm's `name`/`fullname` convention (the values
//! `nameOverride` and `fullnameOverride`) and the spec's `takeover` block, which sets a
//! workload's object name and selector labels to those of a hand-written chart.
//!
//! Names are described here once, as data ([`NamePattern`], [`NamePart`]):
//! `objects::common` turns them into the expressions both back ends print, and the
//! `names.unique` guard evaluates them for every release name length Helm accepts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Longest Kubernetes object name (a DNS label) and label value.
pub const MAX_NAME: usize = 63;

/// Longest release name Helm accepts.
pub const MAX_RELEASE_NAME: usize = 53;

/// The standard label holding the chart's name (`nameOverride` replaces it).
pub const NAME_LABEL: &str = "app.kubernetes.io/name";
/// The standard label holding the release name.
pub const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// The label holding the workload's name.
pub const COMPONENT_LABEL: &str = "app.kubernetes.io/component";

/// How a workload of a release made by a hand-written chart is named and selected, so
/// that `helm upgrade` with this chart patches its objects in place. A Deployment's
/// selector cannot change: `selectorLabels` must reproduce the old chart's exactly.
///
/// Templates are text with the placeholders `{release}` (the release name), `{name}`
/// (the chart's name, or `nameOverride`) and `{fullname}` (Helm's full name: the
/// release name, followed by `-{name}` unless it contains it; or `fullnameOverride`).
/// The result is cut to 63 characters, a trailing `-` removed, as hand-written
/// charts do.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WorkloadTakeover {
    /// The name of every object of the workload, e.g. `{fullname}` or
    /// `{release}-worker` (letters `a-z`, digits, `-`, `.` besides placeholders).
    /// Without it: `<fullname>-<workload>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The labels the workload's pods are selected by (Deployment `matchLabels`,
    /// Service, NetworkPolicy and PodDisruptionBudget selectors), each a template,
    /// e.g. `{app.kubernetes.io/name: "{name}", app.kubernetes.io/instance:
    /// "{release}"}`. The pods carry them besides the standard labels. Without it:
    /// the chart's selector labels and the workload's component.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub selector_labels: BTreeMap<String, String>,
}

/// One part of a name or label template.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NamePart {
    /// The release name.
    Release,
    /// The chart's name or `nameOverride`, cut to 63 characters.
    Name,
    /// Helm's full name (see [`NameInputs::fullname`]).
    Fullname,
    /// Text the spec wrote (checked: only name characters).
    Text(String),
}

/// How an object's name is made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NamePattern {
    /// `<fullname>-<suffix>`: the full name is cut so the suffix always fits in 63
    /// characters, so two objects with different suffixes keep different names for
    /// every release name. The chart's own objects are named so.
    Suffixed(String),
    /// A template of the spec's `takeover` block, cut to 63 characters as a whole.
    Template(Vec<NamePart>),
}

/// How many characters of the full name a suffixed name keeps.
pub fn kept_fullname_length(suffix: &str) -> usize {
    MAX_NAME.saturating_sub(suffix.len() + 1)
}

/// The release data names are made of.
#[derive(Clone, Debug)]
pub struct NameInputs<'a> {
    pub release: &'a str,
    pub chart: &'a str,
    pub name_override: &'a str,
    pub fullname_override: &'a str,
}

/// `trunc n` then `trimSuffix "-"`, as Sprig does (bytes; names are ASCII).
pub fn cut(s: &str, n: usize) -> String {
    let mut out = if s.len() > n { &s[..n] } else { s };
    if let Some(trimmed) = out.strip_suffix('-') {
        out = trimmed;
    }
    out.to_string()
}

impl NameInputs<'_> {
    /// `default .Chart.Name .Values.nameOverride`, before cutting.
    fn raw_name(&self) -> &str {
        if self.name_override.is_empty() {
            self.chart
        } else {
            self.name_override
        }
    }

    /// The chart's name or `nameOverride`, cut to 63 characters.
    pub fn name(&self) -> String {
        cut(self.raw_name(), MAX_NAME)
    }

    /// `helm create`'s full name: `fullnameOverride`; else the release name when it
    /// contains the chart's name (or `nameOverride`), else `<release>-<name>`; cut to
    /// 63 characters.
    pub fn fullname(&self) -> String {
        if !self.fullname_override.is_empty() {
            return cut(self.fullname_override, MAX_NAME);
        }
        let name = self.raw_name();
        if self.release.contains(name) {
            cut(self.release, MAX_NAME)
        } else {
            cut(&format!("{}-{name}", self.release), MAX_NAME)
        }
    }

    fn part(&self, part: &NamePart) -> String {
        match part {
            NamePart::Release => self.release.to_string(),
            NamePart::Name => self.name(),
            NamePart::Fullname => self.fullname(),
            NamePart::Text(t) => t.clone(),
        }
    }

    /// A template's text, cut to 63 characters.
    pub fn template(&self, parts: &[NamePart]) -> String {
        let text: String = parts.iter().map(|p| self.part(p)).collect();
        cut(&text, MAX_NAME)
    }
}

impl NamePattern {
    /// The name for these release data.
    pub fn evaluate(&self, inputs: &NameInputs<'_>) -> String {
        match self {
            NamePattern::Suffixed(suffix) => format!(
                "{}-{suffix}",
                cut(&inputs.fullname(), kept_fullname_length(suffix))
            ),
            NamePattern::Template(parts) => inputs.template(parts),
        }
    }

    /// How the spec writes it: `{fullname}-api`.
    pub fn describe(&self) -> String {
        match self {
            NamePattern::Suffixed(suffix) => format!("{{fullname}}-{suffix}"),
            NamePattern::Template(parts) => describe_template(parts),
        }
    }
}

/// A template as the spec writes it.
pub fn describe_template(parts: &[NamePart]) -> String {
    parts
        .iter()
        .map(|p| match p {
            NamePart::Release => "{release}".to_string(),
            NamePart::Name => "{name}".to_string(),
            NamePart::Fullname => "{fullname}".to_string(),
            NamePart::Text(t) => t.clone(),
        })
        .collect()
}

/// Parses a template. Names allow `a-z`, `0-9`, `-` and `.` between placeholders;
/// label values (`label`) also `A-Z` and `_`.
pub fn parse_template(text: &str, label: bool) -> Result<Vec<NamePart>, String> {
    let mut parts = Vec::new();
    let mut rest = text;
    let mut literal = String::new();
    while let Some(c) = rest.chars().next() {
        if c == '{' {
            let end = rest
                .find('}')
                .ok_or_else(|| format!("`{text}` opens a placeholder it does not close"))?;
            let part = match &rest[1..end] {
                "release" => NamePart::Release,
                "name" => NamePart::Name,
                "fullname" => NamePart::Fullname,
                other => {
                    return Err(format!(
                        "`{{{other}}}` is not a placeholder (`{{release}}`, `{{name}}`, `{{fullname}}`)"
                    ))
                }
            };
            if !literal.is_empty() {
                parts.push(NamePart::Text(std::mem::take(&mut literal)));
            }
            parts.push(part);
            rest = &rest[end + 1..];
            continue;
        }
        let allowed = c.is_ascii_lowercase()
            || c.is_ascii_digit()
            || matches!(c, '-' | '.')
            || (label && (c.is_ascii_uppercase() || c == '_'));
        if !allowed {
            return Err(format!(
                "`{text}` holds `{c}`, which cannot be part of a {}",
                if label {
                    "label value"
                } else {
                    "Kubernetes name"
                }
            ));
        }
        literal.push(c);
        rest = &rest[c.len_utf8()..];
    }
    if !literal.is_empty() {
        parts.push(NamePart::Text(literal));
    }
    if parts.is_empty() {
        return Err("the template is empty".into());
    }
    Ok(parts)
}

/// Whether `key` is a Kubernetes label key (`[prefix/]name`).
pub fn is_label_key(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let name_ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    let prefix_ok = prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|l| {
                !l.is_empty()
                    && l.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                    && l.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                    && l.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            })
    });
    name_ok && prefix_ok
}

/// A label's value as a template.
pub type LabelTemplates = BTreeMap<String, Vec<NamePart>>;

/// The selector labels of a workload: the takeover's, or the chart's (`name`,
/// `instance`) and the component.
pub fn selector_templates(takeover: Option<&WorkloadTakeover>, workload: &str) -> LabelTemplates {
    match takeover.filter(|t| !t.selector_labels.is_empty()) {
        Some(t) => t
            .selector_labels
            .iter()
            .map(|(k, v)| (k.clone(), parse_template(v, true).unwrap_or_default()))
            .collect(),
        None => BTreeMap::from([
            (NAME_LABEL.to_string(), vec![NamePart::Name]),
            (INSTANCE_LABEL.to_string(), vec![NamePart::Release]),
            (
                COMPONENT_LABEL.to_string(),
                vec![NamePart::Text(workload.to_string())],
            ),
        ]),
    }
}

/// The selector-relevant labels a workload's pods carry: the standard `name`,
/// `instance` and component labels, with the takeover's selector labels over them.
pub fn pod_label_templates(takeover: Option<&WorkloadTakeover>, workload: &str) -> LabelTemplates {
    let mut labels = selector_templates(None, workload);
    labels.extend(selector_templates(takeover, workload));
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs<'a>(release: &'a str, name: &'a str, full: &'a str) -> NameInputs<'a> {
        NameInputs {
            release,
            chart: "shop",
            name_override: name,
            fullname_override: full,
        }
    }

    #[test]
    fn fullname_follows_helm_create() {
        assert_eq!(inputs("prod", "", "").fullname(), "prod-shop");
        assert_eq!(inputs("shop-prod", "", "").fullname(), "shop-prod");
        assert_eq!(inputs("prod", "store", "").fullname(), "prod-store");
        assert_eq!(inputs("prod", "", "legacy").fullname(), "legacy");
        assert_eq!(inputs("prod", "store", "").name(), "store");
        assert_eq!(inputs("prod", "", "").name(), "shop");
        // 58 characters then `-shop`: cut to 63, a trailing `-` removed.
        let long = "a".repeat(58);
        assert_eq!(inputs(&long, "", "").fullname(), format!("{long}-shop"));
        let long = "a".repeat(59);
        assert_eq!(inputs(&long, "", "").fullname(), format!("{long}-sho"));
        let long = "a".repeat(62);
        assert_eq!(inputs(&long, "", "").fullname(), long);
    }

    #[test]
    fn a_suffixed_name_keeps_its_suffix() {
        let release = "r".repeat(MAX_RELEASE_NAME);
        let i = inputs(&release, "", "");
        let a1 = NamePattern::Suffixed("temporal-a1".into()).evaluate(&i);
        let a2 = NamePattern::Suffixed("temporal-a2".into()).evaluate(&i);
        assert_eq!(a1.len(), 63);
        assert!(a1.ends_with("-temporal-a1") && a2.ends_with("-temporal-a2"));
        assert_eq!(
            NamePattern::Suffixed("api".into()).evaluate(&inputs("prod", "", "")),
            "prod-shop-api"
        );
    }

    #[test]
    fn a_template_is_cut_as_a_whole() {
        let t = parse_template("{release}-temporal-a1", false).unwrap();
        // 52 + 12 = 64: the last character goes.
        let r52 = "r".repeat(52);
        assert_eq!(
            NamePattern::Template(t.clone()).evaluate(&inputs(&r52, "", "")),
            format!("{r52}-temporal-a")
        );
        let r51 = "r".repeat(51);
        assert_eq!(
            NamePattern::Template(t).evaluate(&inputs(&r51, "", "")),
            format!("{r51}-temporal-a1")
        );
    }

    #[test]
    fn templates_parse_placeholders_and_refuse_other_text() {
        assert_eq!(
            parse_template("{fullname}-web", false).unwrap(),
            [NamePart::Fullname, NamePart::Text("-web".into())]
        );
        assert_eq!(
            parse_template("App_1", true).unwrap(),
            [NamePart::Text("App_1".into())]
        );
        assert!(parse_template("App", false).is_err());
        assert!(parse_template("{{x}}", false).is_err());
        assert!(parse_template("{chart}", false).is_err());
        assert!(parse_template("{release", false).is_err());
        assert!(parse_template("a b", true).is_err());
        assert!(parse_template("", true).is_err());
    }

    #[test]
    fn label_keys() {
        assert!(is_label_key("app"));
        assert!(is_label_key("app.kubernetes.io/name"));
        assert!(!is_label_key("-app"));
        assert!(!is_label_key("a/b/c"));
        assert!(!is_label_key("Example.com/x"));
        assert!(!is_label_key(""));
    }
}
