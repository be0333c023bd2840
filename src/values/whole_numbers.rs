//! Resolved values read into the typed model in place, with every whole number an
//! integer.
//!
//! Helm reads values files into `float64` numbers, so resolved values hold `2.0` where
//! the model has a `u32`. [`WholeNumbers`] is a deserializer over `&Value` that reads a
//! float with no fraction (below 9e15 in size) as that integer, and everything else
//! exactly as `serde_json`'s own `&Value` deserializer does: the same visits, the same
//! errors, word for word. Reading through it gives what reading a copy made by
//! [`integral_numbers`](super::integral_numbers) gives, without the copy (a deep copy of
//! every preset's values was about a tenth of a 400-workload `generate`).

use serde::de::{
    DeserializeSeed, EnumAccess, Error as _, Expected, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use serde_json::{Error, Map, Number, Value};

/// `value` as the typed model reads it: a whole float is an integer
/// ([`integral_numbers`](super::integral_numbers)), everything else as it is.
#[derive(Debug, Clone, Copy)]
pub struct WholeNumbers<'a>(pub &'a Value);

/// Whether a float is read as an integer: no fraction, and small enough that the
/// integer is exact.
fn whole(f: f64) -> Option<i64> {
    (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
}

/// `n` as [`integral_numbers`](super::integral_numbers) leaves it: its integer when it
/// is a whole float. (An integer is left as it is; read through `f64` it would come
/// back the same, since every integer below 9e15 is exact in `f64`.)
pub fn whole_number(n: &Number) -> Number {
    match n.as_f64() {
        Some(f) if n.is_f64() => whole(f).map_or_else(|| n.clone(), Number::from),
        _ => n.clone(),
    }
}

/// The `u64` of a whole number (`2` and `2.0` alike), as `Value::as_u64` reads the
/// whole-number copy.
pub fn whole_u64(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => whole_number(n).as_u64(),
        _ => None,
    }
}

/// Visits a number as `serde_json` visits its representation (a non-negative integer
/// as `u64`, a negative one as `i64`, a float as `f64`), a whole float as its integer.
fn visit_number<'de, V: Visitor<'de>>(n: &Number, visitor: V) -> Result<V::Value, Error> {
    let n = whole_number(n);
    if let Some(u) = n.as_u64() {
        visitor.visit_u64(u)
    } else if let Some(i) = n.as_i64() {
        visitor.visit_i64(i)
    } else {
        visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// What an error says the value was, as `serde_json` words it.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match whole_number(n) {
            n if n.is_u64() => Unexpected::Unsigned(n.as_u64().unwrap_or(0)),
            n if n.is_i64() => Unexpected::Signed(n.as_i64().unwrap_or(0)),
            n => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

fn invalid_type(value: &Value, expected: &dyn Expected) -> Error {
    Error::invalid_type(unexpected(value), expected)
}

fn visit_array<'de, V: Visitor<'de>>(items: &'de [Value], visitor: V) -> Result<V::Value, Error> {
    let mut seq = Items(items.iter());
    let out = visitor.visit_seq(&mut seq)?;
    match seq.0.len() {
        0 => Ok(out),
        _ => Err(Error::invalid_length(
            items.len(),
            &"fewer elements in array",
        )),
    }
}

fn visit_object<'de, V: Visitor<'de>>(
    map: &'de Map<String, Value>,
    visitor: V,
) -> Result<V::Value, Error> {
    let mut entries = Entries {
        iter: map.iter(),
        value: None,
    };
    let out = visitor.visit_map(&mut entries)?;
    match entries.iter.len() {
        0 => Ok(out),
        _ => Err(Error::invalid_length(map.len(), &"fewer elements in map")),
    }
}

impl<'de> serde::Deserializer<'de> for WholeNumbers<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => visit_number(n, visitor),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(map) => visit_object(map, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let (variant, value) = match self.0 {
            Value::Object(map) => {
                let mut entries = map.iter();
                match (entries.next(), entries.next()) {
                    (Some((variant, value)), None) => (variant, Some(value)),
                    _ => {
                        return Err(Error::invalid_value(
                            Unexpected::Map,
                            &"map with a single key",
                        ))
                    }
                }
            }
            Value::String(variant) => (variant, None),
            other => return Err(invalid_type(other, &"string or map")),
        };
        visitor.visit_enum(Variant { variant, value })
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Bool(b) => visitor.visit_bool(*b),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_borrowed_str(s),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visit_array(items, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(map) => visit_object(map, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(map) => visit_object(map, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_number(visitor)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_number(visitor)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_number(visitor)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_number(visitor)
    }
    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_number(visitor)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_number(visitor)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_number(visitor)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_number(visitor)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_number(visitor)
    }
    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_number(visitor)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_number(visitor)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_number(visitor)
    }
}

impl WholeNumbers<'_> {
    /// A number, visited as its (whole) representation; anything else is refused.
    fn deserialize_number<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error>
    where
        Self: 'de,
    {
        match self.0 {
            Value::Number(n) => visit_number(n, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }
}

/// The items of an array, each read through [`WholeNumbers`].
struct Items<'de>(std::slice::Iter<'de, Value>);

impl<'de> SeqAccess<'de> for Items<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|item| seed.deserialize(WholeNumbers(item)))
            .transpose()
    }

    /// The items left, so a `Vec` is allocated once at its size.
    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// The entries of an object: keys as borrowed strings, values through [`WholeNumbers`].
struct Entries<'de> {
    iter: serde_json::map::Iter<'de>,
    value: Option<&'de Value>,
}

impl<'de> MapAccess<'de> for Entries<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.iter.next() {
            Some((key, value)) => {
                self.value = Some(value);
                let key = serde::de::value::BorrowedStrDeserializer::<Error>::new(key);
                seed.deserialize(key).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(WholeNumbers(value)),
            None => Err(Error::custom("value is missing")),
        }
    }

    /// The entries left.
    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// An enum written as a string (a unit variant) or a one-key map (a variant and its
/// content).
struct Variant<'de> {
    variant: &'de String,
    value: Option<&'de Value>,
}

impl<'de> EnumAccess<'de> for Variant<'de> {
    type Error = Error;
    type Variant = Content<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Content<'de>), Error> {
        let variant: serde::de::value::StrDeserializer<'_, Error> =
            self.variant.as_str().into_deserializer();
        Ok((seed.deserialize(variant)?, Content(self.value)))
    }
}

/// A variant's content: none for a unit variant.
struct Content<'de>(Option<&'de Value>);

impl<'de> VariantAccess<'de> for Content<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            Some(value) => serde::Deserialize::deserialize(WholeNumbers(value)),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.0 {
            Some(value) => seed.deserialize(WholeNumbers(value)),
            None => Err(Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Some(Value::Array(items)) => match items.is_empty() {
                true => visitor.visit_unit(),
                false => visit_array(items, visitor),
            },
            Some(other) => Err(invalid_type(other, &"tuple variant")),
            None => Err(Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Some(Value::Object(map)) => visit_object(map, visitor),
            Some(other) => Err(invalid_type(other, &"struct variant")),
            None => Err(Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        ApiValues, BundledValues, DependencyCapacity, JobsValues, MigrateValues, PoolValues,
        PostgresPooler, Scheduling, SharedStoreValues, StartupSettings, WorkerValues,
    };
    use serde::de::DeserializeOwned;
    use serde_json::json;
    use std::fmt::Debug;

    /// What reading `value` as `T` gives: the value, or the error's words.
    fn read<T: DeserializeOwned + Debug>(value: Result<T, Error>) -> String {
        match value {
            Ok(v) => format!("ok {v:?}"),
            Err(e) => format!("error {e}"),
        }
    }

    /// `T` read through [`WholeNumbers`] equals `T` read from the whole-number copy,
    /// error words included.
    fn same_as_the_copy<T: DeserializeOwned + Debug>(value: &Value) {
        let copy = super::super::integral_numbers(value);
        assert_eq!(
            read::<T>(T::deserialize(WholeNumbers(value))),
            read::<T>(T::deserialize(&copy)),
            "{}: {value}",
            std::any::type_name::<T>()
        );
    }

    /// Every type the guards read, on `value` and on each of its parts.
    fn every_type_as_the_copy(value: &Value) {
        same_as_the_copy::<ApiValues>(value);
        same_as_the_copy::<JobsValues>(value);
        same_as_the_copy::<PoolValues>(value);
        same_as_the_copy::<WorkerValues>(value);
        same_as_the_copy::<MigrateValues>(value);
        same_as_the_copy::<DependencyCapacity>(value);
        same_as_the_copy::<Scheduling>(value);
        same_as_the_copy::<PostgresPooler>(value);
        same_as_the_copy::<StartupSettings>(value);
        same_as_the_copy::<BundledValues>(value);
        same_as_the_copy::<std::collections::BTreeMap<String, SharedStoreValues>>(value);
        same_as_the_copy::<Value>(value);
        same_as_the_copy::<Option<u32>>(value);
        same_as_the_copy::<Vec<i64>>(value);
        same_as_the_copy::<(u8, String)>(value);
        same_as_the_copy::<bool>(value);
        same_as_the_copy::<f64>(value);
        same_as_the_copy::<String>(value);
        same_as_the_copy::<()>(value);
    }

    fn example_values() -> Vec<Value> {
        let mut out = Vec::new();
        for example in crate::spec::testing::EXAMPLES {
            let spec = crate::spec::testing::example(example);
            let defaults = crate::values::default_values_map(&spec);
            let presets = crate::values::presets::declared_presets(&spec);
            out.push(Value::Object(defaults.clone()));
            for name in presets.keys() {
                out.push(
                    crate::values::presets::resolve_preset_over(&defaults, &presets, Some(name))
                        .unwrap(),
                );
            }
        }
        out
    }

    /// Every part of every example's plans, read as every type the guards read, gives
    /// what the whole-number copy gives.
    #[test]
    fn the_examples_read_as_their_whole_number_copy() {
        fn each_part(value: &Value, f: &mut dyn FnMut(&Value)) {
            f(value);
            match value {
                Value::Array(items) => items.iter().for_each(|v| each_part(v, f)),
                Value::Object(map) => map.values().for_each(|v| each_part(v, f)),
                _ => {}
            }
        }
        let values = example_values();
        assert!(values.len() > 10, "every plan of the three examples");
        let mut parts = 0;
        for plan in &values {
            each_part(plan, &mut |part| {
                parts += 1;
                if part.is_object() || part.is_array() || parts % 7 == 0 {
                    every_type_as_the_copy(part);
                }
            });
        }
        assert!(parts > 1000, "{parts} parts");
    }

    /// Numbers at the edges of "whole": fractions, negative zero, the 9e15 limit, the
    /// largest integers, and numbers where a string, a map or an enum belongs.
    #[test]
    fn numbers_at_the_edges_read_as_their_whole_number_copy() {
        let numbers = [
            json!(0),
            json!(-0.0),
            json!(2.0),
            json!(2.5),
            json!(-3.0),
            json!(-3.5),
            json!(4294967295.0),
            json!(4294967296.0),
            json!(8999999999999999.0),
            json!(9000000000000000.0),
            json!(-8999999999999999.0),
            json!(1e300),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(2147483647.0),
            json!(2147483648.0),
        ];
        for n in &numbers {
            every_type_as_the_copy(n);
            every_type_as_the_copy(&json!([n, "x"]));
            every_type_as_the_copy(&json!({"replicaCount": n, "enabled": true}));
            every_type_as_the_copy(&json!({"maxSurge": n, "maxUnavailable": n}));
            every_type_as_the_copy(&json!({"a": {"size": n}}));
            assert_eq!(
                whole_u64(n),
                super::super::integral_numbers(n).as_u64(),
                "{n}"
            );
        }
        for other in [
            json!(null),
            json!(true),
            json!("2"),
            json!([]),
            json!({}),
            json!({"a": 1, "b": 2}),
            json!({"redis": 1}),
            json!({"redis": null}),
            json!({"redis": [1]}),
            json!({"redis": {"a": 1}}),
            json!("redis"),
            json!([1, 2, 3]),
        ] {
            every_type_as_the_copy(&other);
            assert_eq!(whole_u64(&other), None);
        }
    }

    /// A list is read into a `Vec` allocated once at its length, and a map's entries
    /// are counted as they are read: the sizes the reader is told are the ones left.
    #[test]
    fn lists_and_maps_tell_their_sizes() {
        for n in [0usize, 1, 5, 9] {
            let list = Value::Array((0..n).map(|i| json!(i as f64)).collect());
            let read: Vec<u32> = serde::Deserialize::deserialize(WholeNumbers(&list)).unwrap();
            assert_eq!(read.len(), n);
            assert_eq!(read.capacity(), n, "{list}");
        }
        struct Sizes(Vec<Option<usize>>);
        impl<'de> serde::Deserialize<'de> for Sizes {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = Sizes;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a map")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Sizes, A::Error> {
                        let mut sizes = vec![map.size_hint()];
                        while map.next_entry::<String, serde::de::IgnoredAny>()?.is_some() {
                            sizes.push(map.size_hint());
                        }
                        Ok(Sizes(sizes))
                    }
                }
                d.deserialize_map(V)
            }
        }
        let map = json!({"a": 1, "b": 2.0, "c": "x"});
        let Sizes(sizes) = serde::Deserialize::deserialize(WholeNumbers(&map)).unwrap();
        assert_eq!(sizes, [Some(3), Some(2), Some(1), Some(0)]);
    }

    /// Enum variants in every form, through a type that has each kind.
    #[test]
    fn enum_variants_read_as_their_whole_number_copy() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        enum Every {
            Unit,
            Newtype(u32),
            Tuple(u8, u8),
            Struct { n: u16 },
        }
        for value in [
            json!("Unit"),
            json!({"Unit": null}),
            json!({"Unit": 1}),
            json!({"Newtype": 3.0}),
            json!({"Newtype": 3.5}),
            json!("Newtype"),
            json!({"Tuple": [1.0, 2]}),
            json!({"Tuple": []}),
            json!({"Tuple": 1}),
            json!("Tuple"),
            json!({"Struct": {"n": 7.0}}),
            json!({"Struct": [7]}),
            json!({"Struct": 7}),
            json!("Struct"),
            json!({"Nope": 1}),
            json!({}),
            json!({"Unit": null, "Newtype": 1}),
            json!(4),
        ] {
            same_as_the_copy::<Every>(&value);
            same_as_the_copy::<Vec<Every>>(&json!([value]));
        }
    }
}
