//! User values coalesced over the chart's defaults as Helm does, and the parts of the
//! result that are copies of the defaults' own: the objects and arrays the coalesce
//! copies whole, which a check beside the defaults does not check again
//! ([`super::ValuesSchema::check_with_copies`]).

use super::{numbers_as_floats, ValuesSource};
use serde_json::{Map, Value};

/// Merges `next` into `base` as Helm merges several `-f` files: maps merge deeply,
/// anything else (lists included) replaces.
pub fn merge_user_values(base: &mut Map<String, Value>, next: Map<String, Value>) {
    for (key, value) in next {
        match (base.get_mut(&key), value) {
            (Some(Value::Object(dst)), Value::Object(src)) => merge_user_values(dst, src),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// Coalesces user values over chart defaults as Helm does: user values win, maps
/// merge deeply, and a user `null` deletes a key the defaults have.
pub fn coalesce_with_defaults(user: &mut Map<String, Value>, defaults: &Map<String, Value>) {
    for (key, default) in defaults {
        match user.get_mut(key) {
            Some(Value::Null) => {
                user.remove(key);
            }
            Some(Value::Object(dst)) => {
                if let Value::Object(src) = default {
                    coalesce_with_defaults(dst, src);
                }
            }
            Some(_) => {}
            None => {
                user.insert(key.clone(), default.clone());
            }
        }
    }
}

/// The preset overlay (if any), then the user sources in order, merged: what
/// [`coalesce_with_defaults`] takes as the user's values.
pub(super) fn user_values(
    preset: Option<&Map<String, Value>>,
    sources: &[ValuesSource],
) -> Map<String, Value> {
    let mut user = Map::new();
    if let Some(preset) = preset {
        if let Value::Object(p) = numbers_as_floats(Value::Object(preset.clone())) {
            merge_user_values(&mut user, p);
        }
    }
    for source in sources {
        match source {
            ValuesSource::File { values, .. } => merge_user_values(&mut user, values.clone()),
            ValuesSource::Set(values) => merge_user_values(&mut user, values.clone()),
        }
    }
    user
}

/// [`resolve_values_over`], and the places where its values hold a copy of the
/// defaults' own part ([`copied_defaults`]), as keys from the root.
pub fn resolve_values_noting_copies<'d>(
    defaults: &'d Map<String, Value>,
    preset: Option<&Map<String, Value>>,
    sources: &[ValuesSource],
) -> (Value, Vec<Vec<&'d str>>) {
    let mut user = user_values(preset, sources);
    let mut copies = Vec::new();
    copied_defaults(&user, defaults, &mut Vec::new(), &mut copies);
    coalesce_with_defaults(&mut user, defaults);
    (Value::Object(user), copies)
}

/// The places (after `at`) where [`coalesce_with_defaults`] of `user` over `defaults`
/// copies an object or an array of the defaults whole: each key the defaults have
/// and `user` lacks, below the maps both have. Read from `user` before it is
/// coalesced, following the coalesce step by step.
fn copied_defaults<'d>(
    user: &Map<String, Value>,
    defaults: &'d Map<String, Value>,
    at: &mut Vec<&'d str>,
    copies: &mut Vec<Vec<&'d str>>,
) {
    for (key, default) in defaults {
        match user.get(key) {
            Some(Value::Object(dst)) => {
                if let Value::Object(src) = default {
                    at.push(key);
                    copied_defaults(dst, src, at, copies);
                    at.pop();
                }
            }
            // Deleted (`null`) or replaced.
            Some(_) => {}
            None if default.is_object() || default.is_array() => {
                let mut place = at.clone();
                place.push(key);
                copies.push(place);
            }
            None => {}
        }
    }
}

/// The parts of `values` at `places` (keys from the root), those it has.
pub fn parts_at<'v>(values: &'v Value, places: &[Vec<&str>]) -> Vec<&'v Value> {
    places
        .iter()
        .filter_map(|place| place.iter().try_fold(values, |part, key| part.get(*key)))
        .collect()
}
