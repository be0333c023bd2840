//! User values coalesced over the chart's defaults as Helm does, and values that hold
//! the defaults' own objects and arrays where the coalesce would copy them whole
//! ([`SharingDefaults`]): those parts are not copied, and a check beside the defaults
//! does not check them again ([`super::ValuesSchema::check_with_copies`]).

use super::{numbers_as_floats, ValuesSource};
use serde_json::{Map, Value};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;

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

/// [`resolve_values_over`]'s values, whose objects and arrays the coalesce would copy
/// whole from the defaults are the defaults' own memory instead of copies: at 400
/// workloads a preset's values are the defaults but for a few keys, and copying them
/// (then freeing the copy) was about a tenth of `generate`'s CPU, five presets over.
/// Those places ([`SharingDefaults::copies`], keys from the root) are what
/// [`super::ValuesSchema::check_with_copies`] skips.
pub fn resolve_values_sharing_defaults<'d>(
    defaults: &'d Map<String, Value>,
    preset: Option<&Map<String, Value>>,
    sources: &[ValuesSource],
) -> SharingDefaults<'d> {
    let mut values = SharingDefaults {
        values: ManuallyDrop::new(Value::Object(user_values(preset, sources))),
        copies: Vec::new(),
        _defaults: PhantomData,
    };
    if let Value::Object(user) = &mut *values.values {
        coalesce_sharing_defaults(user, defaults, &mut Vec::new(), &mut values.copies);
    }
    values
}

/// Values coalesced over defaults of lifetime `'d`, holding the defaults' own objects
/// and arrays where the coalesce would copy them whole (at [`SharingDefaults::copies`]):
/// read-only (only `&Value` is handed out, and a `Value` has no interior mutability),
/// and those parts are never dropped, only the values' own.
pub struct SharingDefaults<'d> {
    /// The values; the parts at `copies` are bitwise copies of the defaults' parts,
    /// which own nothing (see `Drop`).
    values: ManuallyDrop<Value>,
    /// Where `values` holds the defaults' parts, keys from the root; no place is
    /// inside another.
    copies: Vec<Vec<&'d str>>,
    /// The defaults, borrowed (so unchanged and alive) as long as these values.
    _defaults: PhantomData<&'d Map<String, Value>>,
}

impl<'d> SharingDefaults<'d> {
    /// The places (keys from the root) where the values hold the defaults' own object
    /// or array: those a coalesce copies whole, each key the defaults have and the
    /// user's values lack, below the maps both have.
    pub fn copies(&self) -> &[Vec<&'d str>] {
        &self.copies
    }
}

impl std::ops::Deref for SharingDefaults<'_> {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.values
    }
}

impl std::fmt::Debug for SharingDefaults<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.values, f)
    }
}

impl Drop for SharingDefaults<'_> {
    fn drop(&mut self) {
        // The defaults' parts are taken out and forgotten: their memory is the
        // defaults'. What is left is the values' own.
        for place in &self.copies {
            let part = place
                .iter()
                .try_fold(&mut *self.values, |part, key| part.get_mut(*key));
            if let Some(part) = part {
                std::mem::forget(std::mem::take(part));
            }
        }
        // SAFETY: `values` is dropped once, here, and no longer holds any part of the
        // defaults (taken out above).
        unsafe { ManuallyDrop::drop(&mut self.values) }
    }
}

/// [`coalesce_with_defaults`], with each object and array of `defaults` the user's
/// values lack put in place as the defaults' own (a bitwise copy of its `Value`, which
/// shares the defaults' memory) instead of a copy, its place (after `at`) recorded in
/// `copies` before it is.
fn coalesce_sharing_defaults<'d>(
    user: &mut Map<String, Value>,
    defaults: &'d Map<String, Value>,
    at: &mut Vec<&'d str>,
    copies: &mut Vec<Vec<&'d str>>,
) {
    for (key, default) in defaults {
        match user.get_mut(key) {
            Some(Value::Null) => {
                user.remove(key);
            }
            Some(Value::Object(dst)) => {
                if let Value::Object(src) = default {
                    at.push(key);
                    coalesce_sharing_defaults(dst, src, at, copies);
                    at.pop();
                }
            }
            // Replaced.
            Some(_) => {}
            None if default.is_object() || default.is_array() => {
                let mut place = at.clone();
                place.push(key);
                copies.push(place);
                // SAFETY: the copy is reached only through a `SharingDefaults`, which
                // hands out `&Value` only (nothing mutates it), borrows the defaults for
                // as long as it lives (they outlive it, unchanged), and forgets the copy
                // instead of dropping it (its place is in `copies`, recorded above).
                user.insert(key.clone(), unsafe { std::ptr::read(default) });
            }
            None => {
                user.insert(key.clone(), default.clone());
            }
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

#[cfg(test)]
mod tests {
    use super::resolve_values_sharing_defaults;
    use crate::values::tests::obj;
    use serde_json::{json, Value};
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    /// The system's allocator, counting the bytes each thread frees: what dropping
    /// [`super::SharingDefaults`] frees is seen, on the test's own thread.
    struct CountingFrees;

    thread_local! {
        static FREED: Cell<usize> = const { Cell::new(0) };
    }

    // SAFETY: every call is passed on to `System` unchanged.
    unsafe impl GlobalAlloc for CountingFrees {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            unsafe { System.alloc(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            let _ = FREED.try_with(|freed| freed.set(freed.get() + layout.size()));
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    #[global_allocator]
    static ALLOCATOR: CountingFrees = CountingFrees;

    fn freed_on_this_thread() -> usize {
        FREED.with(Cell::get)
    }

    /// Dropped, the values free their own parts and none of the defaults' they hold:
    /// neither a leak nor the defaults' memory freed under them.
    #[test]
    fn dropping_shared_values_frees_their_own_parts_only() {
        let big: Vec<Value> = (0..4096).map(|n| json!(format!("item {n}"))).collect();
        let defaults = obj(json!({"big": big, "own": {"a": 1}, "s": "text"}));
        let preset = obj(json!({"own": {"b": [1, 2, 3]}}));
        let values = resolve_values_sharing_defaults(&defaults, Some(&preset), &[]);
        assert_eq!(values.copies(), [vec!["big"]]);
        let before = freed_on_this_thread();
        drop(values);
        let freed = freed_on_this_thread() - before;
        // The root's and `own`'s B-tree nodes, their keys, `b`'s list and the copied
        // string: about two kilobytes. `big` alone is 4,096 strings and a list of
        // 4,096 values (128 KiB).
        assert!(freed > 1024, "{freed} bytes freed");
        assert!(freed < 8 * 1024, "{freed} bytes freed");
        assert_eq!(defaults["big"][4095], json!("item 4095"));
    }

    /// Printed for debugging, the values are their `Value`.
    #[test]
    fn shared_values_print_as_their_value() {
        let defaults = obj(json!({"a": {"b": [1]}, "c": 2}));
        let values = resolve_values_sharing_defaults(&defaults, None, &[]);
        assert_eq!(format!("{values:?}"), format!("{:?}", *values));
        assert!(format!("{values:?}").contains("Array"));
    }
}
